/*
 * gpu.c: the verbs that drive a GPU (gpu.h): info, tune (one device, several devices
 * with a worker thread each, a shard of a shape list) and run.
 *
 * tune and run go through the library as an application would (gt_dispatch_tune, the
 * public gemm_tuned entry points); run fills its buffers with the library's fill kernel
 * (gt_aux_fill), checks the result with its verifier (gt_verify) and times the call
 * with its timing (gt_measure), events per run and the median as the tuner times its
 * candidates. Owns the buffers, stream and threads it creates; reaches the cache only
 * through the library, and leaves cache files to cache.c. Includes parse.h of cli/,
 * nothing else of it.
 * tune, run take --dtype T, any data type of key.h (f32 by default); run calls
 * gemm_tuned for f32, gemm_tuned_d for f64 and gemm_tuned_ex for the others.
 * run --save DIR writes the problem it ran (meta.txt; A, B, C before and after the
 * first call, as raw bytes) so that a test can grade the result without the library.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "gpu.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call.h"
#include "cu.h"
#include "devctx.h"
#include "dispatch.h"
#include "env.h"
#include "gemmtune.h"
#include "kcfg.h"
#include "kernel_sources.h"
#include "layers.h"
#include "log.h"
#include "measure.h"
#include "plan.h"
#include "prebuild.h"
#include "rtc.h"
#include "space.h"
#include "tune.h"
#include "verify.h"

#include "parse.h"

/* ===== device ===== */

/* Loads the driver and enters device 0's context; prints why not. */
static int device_or_say(gt_devctx **dc) {
    gt_status s = gt_cu_load();
    CUcontext ctx;
    int pushed;
    if (s == GT_SUCCESS) s = gt_cu_enter(NULL, &ctx, &pushed);
    if (s == GT_SUCCESS) s = gt_devctx_get(ctx, dc);
    if (s != GT_SUCCESS) {
        fprintf(stderr, "gemmtune: %s: %s\n", gt_status_string(s), gt_last_error());
        return -1;
    }
    return 0;
}

/* The key that gemm_tuned (f32), gemm_tuned_d (f64) or gemm_tuned_ex (the other types)
 * builds for a tightly packed, cudaMalloc'd problem of data type dtype. */
static void shape_key(gt_devctx *dc, const cli_shape *sh, int dtype, double beta, gt_key *key) {
    const gt_gemm g = {dtype, sh->opa, sh->opb, sh->m, sh->n, sh->k, 1.0, beta, GT_PTR(256),
                       GT_PTR(256), GT_PTR(256), sh->opa ? sh->k : sh->m,
                       sh->opb ? sh->n : sh->k, sh->m, NULL};
    gt_call_key(dc, &g, key);
}

/* A shape as the tune verb prints it: "64x64x64:NN", with " f64", " bf16", ... appended
 * for a type other than f32, the default, which goes unnamed. */
static void shape_text(const gt_key *key, char *buf, size_t size) {
    int len = gt_key_shape(key, buf, size);
    if (key->dtype != GT_DT_F32 && len >= 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, " %s", gt_dtype_name(key->dtype));
}

static const char *source_name(int s) {
    switch (s) {
    case GT_SRC_FALLBACK: return "fallback";
    case GT_SRC_CACHE: return "cache";
    case GT_SRC_TUNED: return "tuned";
    case GT_SRC_NEAREST: return "nearest tuned shape";
    case GT_SRC_PENDING: return "pending: tuning in the background";
    default: return "?";
    }
}

/* ===== info ===== */

/* The entries of the built-in defaults per device and kernel source (info). */
#define MAX_GROUPS 32
typedef struct defaults_group {
    gt_key dev;            /* the device part of the key */
    long long entries;     /* of the current kernel source and library major */
    long long stale;       /* of another: ignored */
} defaults_group;

typedef struct defaults_groups {
    defaults_group g[MAX_GROUPS];
    int n;
    long long more;        /* entries of devices beyond MAX_GROUPS */
} defaults_groups;

static int count_default(const gt_key *key, const char *src_hash, int lib_major,
                         const gt_db_winner *w, void *user) {
    (void)w;
    defaults_groups *gs = user;
    int current = strcmp(src_hash, gt_kernel_source_hash) == 0 && lib_major == GT_VERSION_MAJOR;
    defaults_group *g = NULL;
    for (int i = 0; i < gs->n && !g; i++)
        if (strcmp(gs->g[i].dev.device, key->device) == 0 &&
            gs->g[i].dev.cc_major == key->cc_major && gs->g[i].dev.cc_minor == key->cc_minor &&
            gs->g[i].dev.sm_count == key->sm_count)
            g = &gs->g[i];
    if (!g && gs->n < MAX_GROUPS) {
        g = &gs->g[gs->n++];
        memset(g, 0, sizeof *g);
        g->dev = *key;
    }
    if (!g) gs->more++;
    else if (current) g->entries++;
    else g->stale++;
    return 0;
}

/* The built-in defaults (cache/layers.h): whether they are read, from which texts, and
 * how many entries for which devices. */
static void print_defaults_lines(void) {
    int files = 0, loaded = 0;
    int state = gt_layers_defaults(&files, &loaded);
    if (state == GT_DEFAULTS_OFF) {
        printf("built-in defaults: off (GEMMTUNE_DEFAULTS=0)\n");
        return;
    }
    if (state == GT_DEFAULTS_NONE) {
        printf("built-in defaults: none built in (data/defaults/ held no file at build time)\n");
        return;
    }
    printf("built-in defaults: %d of %d files loaded (", loaded, files);
    for (int i = 0; i < files; i++) printf("%s%s", i ? ", " : "", gt_layers_defaults_name(i));
    printf(")%s\n", state == GT_DEFAULTS_FAILED ? "; not usable" : "");
    if (state != GT_DEFAULTS_LOADED) return;
    defaults_groups gs;
    memset(&gs, 0, sizeof gs);
    if (gt_layers_defaults_list(count_default, &gs) != GT_SUCCESS) {
        printf("built-in defaults: not usable; bypassed\n");
        return;
    }
    if (gs.n == 0) printf("built-in defaults: no entries\n");
    for (int i = 0; i < gs.n; i++) {
        const defaults_group *g = &gs.g[i];
        printf("built-in defaults: %s, sm_%d%d, %d SMs: %lld entries", g->dev.device,
               g->dev.cc_major, g->dev.cc_minor, g->dev.sm_count, g->entries);
        if (g->stale)
            printf(", and %lld of another kernel source or library version (ignored until "
                   "the file is made again)", g->stale);
        printf("\n");
    }
    if (gs.more) printf("built-in defaults: %lld entries for further devices\n", gs.more);
}

/* Where the cache files are, the filesystem of the user cache's directory and the policy
 * taken there (cache/fs.h), and each file's state. */
static void print_cache_lines(void) {
    int open = 0;
    const char *named = "";
    const char *path = gt_layers_user_path(&open);
    const gt_fs_info *fs = gt_layers_user_fs(&named);
    const char *state = open ? "usable"
                             : "not usable; bypassed: tuning results are kept in this process only";
    if (*path && fs->per_host)
        printf("cache: %s (%s; this host's file beside %s)\n", path, state, named);
    else
        printf("cache: %s (%s)\n", *path ? path : "none", state);
    if (*named) {
        printf("cache filesystem: %s, %s (%s)\n", fs->type,
               fs->shared ? "network or parallel" : "local", fs->source);
        if (fs->per_host)
            printf("cache policy: one file per host (rollback journal, host-wide lock, no WAL); "
                   "the other hosts' files beside it are read as snapshots; gemmtune merge "
                   "combines them\n");
        else
            printf("cache policy: one file for this machine's processes (WAL journal)\n");
    }
    const char *hp;
    for (int i = 0; (hp = gt_layers_host_path(i, &open)); i++)
        printf("host cache %d: %s (%s)\n", i + 1, hp,
               open ? "usable, read-only snapshot" : "not usable; bypassed");
    int unread = gt_layers_hosts_unread();
    if (unread) printf("host caches not read: %d older files (merge them)\n", unread);
    const char *sp;
    for (int i = 0; (sp = gt_layers_shipped_path(i, &open)); i++)
        printf("shipped cache %d: %s (%s)\n", i + 1, sp,
               open ? "usable, read-only" : "not usable; bypassed");
    print_defaults_lines();
}

int cli_info(int argc, char **argv) {
    if (argc > 1) {
        if (strcmp(argv[1], "--help") == 0) return cli_usage(stdout, 0);
        fprintf(stderr, "gemmtune info: unexpected argument '%s'\n", argv[1]);
        return 2;
    }
    printf("gemmtune %s\n", GT_VERSION_STRING);
    printf("kernel source hash: %s\n", gt_kernel_source_hash);
    printf("NVRTC: %s\n", gt_rtc_version());
    print_cache_lines();
    static const char *modes[] = {"tune", "cached", "off"};
    printf("mode: %s%s\n", modes[gt_get_mode()], gt_dispatch_async() ? ", tuning in the background" : "");
    gt_status s = gt_cu_load();
    if (s != GT_SUCCESS) {
        printf("GPU: none: %s\n", gt_last_error());
        return 1;
    }
    printf("driver: %s\n", gt_cu_driver_version());
    int count = 0;
    gt_cu.device_get_count(&count);
    for (int i = 0; i < count; i++) {
        CUdevice dev;
        gt_cu_device d;
        if (gt_cu.device_get(&dev, i) != CUDA_SUCCESS || gt_cu_device_query(dev, &d) != GT_SUCCESS)
            continue;
        printf("GPU %d: %s, sm_%d%d, %d SMs, %.1f GiB, L2 %d MiB", i, d.name, d.cc_major,
               d.cc_minor, d.sm_count, d.total_mem / 1073741824.0, d.l2_bytes >> 20);
        /* The memory's peak, and the cost model's DRAM rate from it (space.h). */
        double rate = gt_space_dram_rate(d.mem_clock_khz, d.mem_bus_bits);
        if (rate > 0)
            printf(", memory %d MHz x %d bits (%.2f TB/s peak; the cost model's DRAM rate x %.2f)",
                   d.mem_clock_khz / 1000, d.mem_bus_bits,
                   2.0 * d.mem_clock_khz * 1e3 * (d.mem_bus_bits / 8.0) / 1e12, rate);
        printf("\n");
    }
    return 0;
}

/* ===== tune: sharding ===== */

/* Reads integer variable id into *out: 1 when set, 0 when unset, -1 (after a message)
 * when set but not a non-negative number. */
static int env_index(gt_env_id id, int *out) {
    const char *v = gt_env(id);
    const char *name = gt_env_vars[id].name;
    if (!v) return 0;
    if (cli_parse_index(v, out) != 0) {
        fprintf(stderr, "gemmtune tune: %s='%s' is not a non-negative number\n", name, v);
        return -1;
    }
    return 1;
}

/* This invocation's shard: --shard I/N (opt, may be NULL), else Slurm's job-array
 * variables, else its task variables, else 0/1. *from names where it came from ("" for
 * the default). 0, or 2 after a message naming the bad argument or variable. */
static int pick_shard(const char *opt, int *si, int *sn, const char **from) {
    *si = 0, *sn = 1, *from = "";
    if (opt) {
        *from = "--shard";
        const char *slash = strchr(opt, '/');
        char left[32];
        if (!slash || slash == opt || (size_t)(slash - opt) >= sizeof left) goto bad_opt;
        snprintf(left, sizeof left, "%.*s", (int)(slash - opt), opt);
        if (cli_parse_index(left, si) != 0 || cli_parse_index(slash + 1, sn) != 0) goto bad_opt;
        if (*sn < 1) {
            fprintf(stderr, "gemmtune tune: --shard '%s': N must be at least 1\n", opt);
            return 2;
        }
        if (*si >= *sn) {
            fprintf(stderr, "gemmtune tune: --shard '%s': I must be below N (I is 0-based)\n",
                    opt);
            return 2;
        }
        return 0;
    bad_opt:
        fprintf(stderr, "gemmtune tune: --shard '%s': want I/N with 0 <= I < N, e.g. 0/4\n",
                opt);
        return 2;
    }
    int id = 0, count = 0, min = 0, rid, rcount, rmin;
    rid = env_index(GT_ENV_SLURM_ARRAY_TASK_ID, &id);
    rcount = env_index(GT_ENV_SLURM_ARRAY_TASK_COUNT, &count);
    if (rid > 0 && rcount > 0) {
        rmin = env_index(GT_ENV_SLURM_ARRAY_TASK_MIN, &min);
        if (rmin < 0) return 2;
        *from = "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT";
        if (count < 1 || id < min || id - min >= count) {
            fprintf(stderr,
                    "gemmtune tune: SLURM_ARRAY_TASK_ID=%d, SLURM_ARRAY_TASK_MIN=%d, "
                    "SLURM_ARRAY_TASK_COUNT=%d do not make a shard I/N with 0 <= I < N (use a "
                    "contiguous array such as --array=0-15, or give --shard)\n",
                    id, min, count);
            return 2;
        }
        *si = id - min, *sn = count;
        return 0;
    }
    if (rid < 0 || rcount < 0) return 2;
    int rank = 0, ntasks = 0;
    int rrank = env_index(GT_ENV_SLURM_PROCID, &rank), rntasks = env_index(GT_ENV_SLURM_NTASKS, &ntasks);
    if (rrank > 0 && rntasks > 0) {
        *from = "SLURM_PROCID/SLURM_NTASKS";
        if (ntasks < 1 || rank >= ntasks) {
            fprintf(stderr,
                    "gemmtune tune: SLURM_PROCID=%d, SLURM_NTASKS=%d do not make a shard I/N "
                    "with 0 <= I < N\n",
                    rank, ntasks);
            return 2;
        }
        *si = rank, *sn = ntasks;
        return 0;
    }
    if (rrank < 0 || rntasks < 0) return 2;
    return 0;
}

/* ===== tune: devices ===== */

#define MAX_DEVICES 64

/* "all" (*all = 1), or a comma-separated list of distinct device ordinals. 0, or 2 after
 * a message naming what is wrong. */
static int parse_devices(const char *s, int *all, int *ids, int *nids) {
    *all = 0, *nids = 0;
    if (strcmp(s, "all") == 0) {
        *all = 1;
        return 0;
    }
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        int id;
        if (len == 0 || len >= sizeof item) {
            fprintf(stderr, "gemmtune tune: --devices '%s': want all or a list such as 0,2,3\n",
                    s);
            return 2;
        }
        snprintf(item, sizeof item, "%.*s", (int)len, p);
        if (cli_parse_index(item, &id) != 0) {
            fprintf(stderr, "gemmtune tune: --devices '%s': '%s' is not a device number\n", s,
                    item);
            return 2;
        }
        for (int i = 0; i < *nids; i++)
            if (ids[i] == id) {
                fprintf(stderr, "gemmtune tune: --devices '%s': device %d is listed twice\n", s,
                        id);
                return 2;
            }
        if (*nids == MAX_DEVICES) {
            fprintf(stderr, "gemmtune tune: --devices '%s': more than %d devices\n", s,
                        MAX_DEVICES);
            return 2;
        }
        ids[(*nids)++] = id;
        if (!comma) return 0;
        p = comma + 1;
    }
}

/* One worker: one device, its share of the shapes. */
typedef struct tune_job {
    int ordinal;              /* device; -1: the current context or device 0 */
    const cli_shape *shapes;  /* all shapes of this invocation */
    int *which;               /* indices of this worker's shapes */
    int nwhich;
    int force;
    const gt_tune_opts *opts; /* --budget, --candidates, --exhaustive (zeros: defaults) */
    int dtype;                /* gt_dtype of every shape */
    int progress;             /* progress lines on stderr (one worker on a terminal) */
    int failures;             /* out */
    pthread_t thread;
} tune_job;

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

/* Tunes one shape on dc and prints its line (prefixed "GPU i: " for a listed device). */
static int tune_one(gt_devctx *dc, const tune_job *job, const cli_shape *sh, int nth) {
    gt_key key;
    shape_key(dc, sh, job->dtype, 0.0, &key);
    char text[96], prefix[24] = "", line[512];
    shape_text(&key, text, sizeof text);
    if (job->ordinal >= 0) snprintf(prefix, sizeof prefix, "GPU %d: ", job->ordinal);
    if (job->progress) fprintf(stderr, "[%d/%d] tuning %s ...", nth + 1, job->nwhich, text);
    gt_tune_report rep;
    memset(&rep, 0, sizeof rep);
    int source = -1, failed = 0;
    gt_status s = gt_dispatch_tune(dc, &key, job->force, job->opts, &rep, &source);
    if (job->progress) fprintf(stderr, "\r\033[K");
    if (s != GT_SUCCESS) {
        snprintf(line, sizeof line, "%s%-24s FAILED: %s: %s\n", prefix, text, gt_status_string(s),
                 gt_last_error());
        failed = 1;
    } else if (source == GT_SRC_TUNED) {
        char cfg[64];
        gt_kcfg_format(&rep.winner, cfg, sizeof cfg);
        snprintf(line, sizeof line,
                 "%s%-24s %-20s %10.1f us %8.2f TFLOP/s  tuned in %.2f s (compile %.2f s; "
                 "generated %d, pruned %d, ranked out %d, compiled %d, timed %d, screened %d%s)\n",
                 prefix, text, cfg, rep.time_us, rep.tflops, rep.seconds, rep.compile_seconds,
                 rep.space.generated, rep.space.pruned, rep.space.ranked_out, rep.compiled,
                 rep.timed, rep.screened, rep.held ? "; the best held" : "");
    } else {
        const gt_plan *p = gt_plan_find(dc->ctx, &key);
        char cfg[64] = "?";
        if (p) gt_kcfg_format(&p->kern.cfg, cfg, sizeof cfg);
        snprintf(line, sizeof line, "%s%-24s %-20s (%s%s%s)\n", prefix, text, cfg,
                 source_name(source), rep.skipped ? ": " : "", rep.skipped ? rep.why : "");
    }
    pthread_mutex_lock(&print_lock);
    fputs(line, stdout);
    fflush(stdout);
    pthread_mutex_unlock(&print_lock);
    gt_tune_report_free(&rep);
    return failed;
}

static void *tune_worker(void *arg) {
    tune_job *job = arg;
    gt_devctx *dc = NULL;
    gt_status s = job->ordinal >= 0 ? gt_devctx_for_device(job->ordinal, &dc) : GT_SUCCESS;
    /* A type this device cannot run: one line for all its shapes, none tuned. */
    if (s == GT_SUCCESS && dc) s = gt_devctx_supports(dc, job->dtype);
    if (s != GT_SUCCESS) {
        pthread_mutex_lock(&print_lock);
        printf("GPU %d: cannot use the device: %s: %s (%d shapes not tuned)\n", job->ordinal,
               gt_status_string(s), gt_last_error(), job->nwhich);
        fflush(stdout);
        pthread_mutex_unlock(&print_lock);
        job->failures = job->nwhich;
        return NULL;
    }
    for (int i = 0; i < job->nwhich; i++)
        job->failures += tune_one(dc, job, &job->shapes[job->which[i]], i);
    return NULL;
}

/* --devices: one worker thread per listed GPU. Devices of one model (name, compute
 * capability, SM count: one key) split the shapes round-robin; every model tunes all. */
static int tune_on_devices(const char *list, int all, int *ids, int nids, const cli_shape *shapes,
                           int n, int force, const gt_tune_opts *opts, int dtype) {
    int count = 0;
    gt_status s = gt_cu_load();
    CUresult r = CUDA_SUCCESS;
    if (s == GT_SUCCESS && (r = gt_cu.device_get_count(&count)) != CUDA_SUCCESS)
        s = gt_cu_fail(r, "cuDeviceGetCount");
    if (s == GT_SUCCESS && count < 1) s = gt_fail(GT_NO_DEVICE, "no CUDA device");
    if (s != GT_SUCCESS) {
        fprintf(stderr, "gemmtune: %s: %s\n", gt_status_string(s), gt_last_error());
        return 1;
    }
    if (all) {
        nids = count < MAX_DEVICES ? count : MAX_DEVICES;
        for (int i = 0; i < nids; i++) ids[i] = i;
    }
    for (int i = 0; i < nids; i++)
        if (ids[i] >= count) {
            fprintf(stderr, "gemmtune tune: --devices '%s': device %d does not exist (this node "
                            "has %d)\n", list, ids[i], count);
            return 2;
        }
    gt_cu_device dev[MAX_DEVICES];
    for (int i = 0; i < nids; i++) {
        CUdevice d;
        if ((r = gt_cu.device_get(&d, ids[i])) != CUDA_SUCCESS) s = gt_cu_fail(r, "cuDeviceGet");
        else s = gt_cu_device_query(d, &dev[i]);
        if (s != GT_SUCCESS) {
            fprintf(stderr, "gemmtune: GPU %d: %s: %s\n", ids[i], gt_status_string(s),
                    gt_last_error());
            return 1;
        }
    }
    tune_job jobs[MAX_DEVICES];
    memset(jobs, 0, sizeof jobs);
    int code = 0;
    for (int i = 0; i < nids; i++) {
        /* This device's place among the listed devices of its model. */
        int pos = 0, size = 0;
        for (int j = 0; j < nids; j++) {
            int same = strcmp(dev[i].name, dev[j].name) == 0 &&
                       dev[i].cc_major == dev[j].cc_major &&
                       dev[i].cc_minor == dev[j].cc_minor && dev[i].sm_count == dev[j].sm_count;
            if (same && j < i) pos++;
            size += same;
        }
        tune_job *job = &jobs[i];
        job->ordinal = ids[i], job->shapes = shapes, job->force = force, job->dtype = dtype;
        job->opts = opts;
        job->which = malloc(sizeof *job->which * (size_t)(n + 1));
        if (!job->which) {
            fprintf(stderr, "gemmtune tune: out of memory\n");
            code = 1;
            break;
        }
        for (int j = pos; j < n; j += size) job->which[job->nwhich++] = j;
        fprintf(stderr, "GPU %d: %s, sm_%d%d, %d SMs: %d of %d shapes\n", ids[i], dev[i].name,
                dev[i].cc_major, dev[i].cc_minor, dev[i].sm_count, job->nwhich, n);
    }
    int started = 0;
    for (; code == 0 && started < nids; started++)
        if (pthread_create(&jobs[started].thread, NULL, tune_worker, &jobs[started]) != 0) {
            fprintf(stderr, "gemmtune tune: cannot start a worker for GPU %d\n",
                    jobs[started].ordinal);
            code = 1;
            break;
        }
    int failures = 0;
    for (int i = 0; i < started; i++) {
        pthread_join(jobs[i].thread, NULL);
        failures += jobs[i].failures;
    }
    for (int i = 0; i < nids; i++) free(jobs[i].which);
    gt_release();
    return code ? code : failures ? 1 : 0;
}

/* ===== tune ===== */

int cli_tune(int argc, char **argv) {
    static const struct option longs[] = {
        {"file", required_argument, 0, 'f'},    {"force", no_argument, 0, 'F'},
        {"shard", required_argument, 0, 's'},   {"devices", required_argument, 0, 'd'},
        {"dry-run", no_argument, 0, 'n'},       {"help", no_argument, 0, 'h'},
        {"dtype", required_argument, 0, 't'},   {"budget", required_argument, 0, 'b'},
        {"candidates", required_argument, 0, 'c'}, {"exhaustive", no_argument, 0, 'x'},
        {0, 0, 0, 0}};
    const char *file = NULL, *shard = NULL, *devices = NULL;
    int force = 0, dry = 0, c, all_devices = 0, ids[MAX_DEVICES], nids = 0, dtype = GT_DT_F32;
    int exhaustive = 0;
    gt_tune_opts opts;
    memset(&opts, 0, sizeof opts);
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:h", longs, NULL)) != -1) {
        if (c == 'b') {
            if (cli_parse_finite(optarg, &opts.budget_s) != 0 || opts.budget_s <= 0) {
                fprintf(stderr, "gemmtune tune: --budget wants seconds above 0, not '%s'\n", optarg);
                return 2;
            }
        } else if (c == 'c') {
            if (cli_parse_index(optarg, &opts.max_candidates) != 0 || opts.max_candidates < 1) {
                fprintf(stderr, "gemmtune tune: --candidates wants a count of 1 or more, not '%s'\n",
                        optarg);
                return 2;
            }
        } else if (c == 'x') exhaustive = 1;
        else if (c == 'f') file = optarg;
        else if (c == 'F') force = 1;
        else if (c == 's') shard = optarg;
        else if (c == 'd') {
            devices = optarg;
            if (parse_devices(devices, &all_devices, ids, &nids) != 0) return 2;
        } else if (c == 't') {
            if (cli_parse_dtype("tune", optarg, &dtype)) return 2;
        } else if (c == 'n') dry = 1;
        else if (c == 'h') return cli_usage(stdout, 0);
        else return 2;
    }
    if (!file && argc - optind == 0) {
        fprintf(stderr, "gemmtune tune: give SHAPE... or --file FILE (see --help)\n");
        return 2;
    }
    if (exhaustive && opts.max_candidates) {
        fprintf(stderr, "gemmtune tune: --exhaustive times every candidate; --candidates limits them\n");
        return 2;
    }
    /* Exhaustive: every candidate the legal and prune rules keep, with no time budget unless
     * one is given. A count asked for is timed too, where the budget reaches it: neither
     * stops where the best has held. */
    if (exhaustive) {
        opts.max_candidates = GT_TUNE_ALL_CANDIDATES;
        if (opts.budget_s <= 0) opts.budget_s = 1e9;
    }
    opts.time_all = opts.max_candidates > 0;
    /* The list: command-line shapes, then the file's lines, in order. */
    cli_shape *all = NULL;
    int n = 0, cap = 0;
    for (int i = optind; i < argc; i++) {
        int r = cli_push_shapes(argv[i], &all, &n, &cap);
        if (r != 0) {
            if (r == -1)
                fprintf(stderr, "gemmtune tune: bad shape '%s' (want MxNxK or MxNxK:NT, one size "
                                "of them may be a range LO:HI)\n", argv[i]);
            free(all);
            return r == -1 ? 2 : 1;
        }
    }
    if (file && cli_read_shapes(file, &all, &n, &cap) != 0) {
        free(all);
        return 2;
    }
    int si, sn, code;
    const char *from;
    if ((code = pick_shard(shard, &si, &sn, &from)) != 0) {
        free(all);
        return code;
    }
    int mine = 0;
    for (int j = 0; j < n; j++)
        if (j % sn == si) all[mine++] = all[j];
    if (*from) fprintf(stderr, "shard %d/%d: %d of %d shapes (from %s)\n", si, sn, mine, n, from);
    n = mine;
    if (dry) {
        for (int j = 0; j < n; j++) {
            char text[96];
            cli_shape_format(&all[j], text, sizeof text);
            printf("%s\n", text);
        }
        free(all);
        return 0;
    }
    if (n == 0) {
        /* An empty shard is not an error: a long array may have more tasks than shapes. */
        free(all);
        return 0;
    }
    if (devices) {
        code = tune_on_devices(devices, all_devices, ids, nids, all, n, force, &opts, dtype);
        free(all);
        return code;
    }
    gt_devctx *dc;
    if (device_or_say(&dc) != 0) {
        free(all);
        return 1;
    }
    gt_status ds = gt_devctx_supports(dc, dtype);
    if (ds != GT_SUCCESS) {
        fprintf(stderr, "gemmtune tune: %s: %s (%d shapes not tuned)\n", gt_status_string(ds),
                gt_last_error(), n);
        free(all);
        gt_release();
        return 1;
    }
    tune_job job;
    memset(&job, 0, sizeof job);
    job.ordinal = -1, job.shapes = all, job.force = force, job.dtype = dtype, job.opts = &opts;
    job.progress = isatty(2);
    job.which = malloc(sizeof *job.which * (size_t)n);
    if (!job.which) {
        free(all);
        gt_release();
        return 1;
    }
    for (int j = 0; j < n; j++) job.which[job.nwhich++] = j;
    for (int i = 0; i < job.nwhich; i++) job.failures += tune_one(dc, &job, &all[job.which[i]], i);
    free(job.which);
    free(all);
    gt_release();
    return job.failures ? 1 : 0;
}

/* ===== run ===== */

/* One call of gemm_tuned (f32), gemm_tuned_d (f64) or gemm_tuned_ex (the others), by
 * g->dtype, on device buffers. alpha and beta are already of the compute type's
 * precision (cli_run rounds them to float for all but f64). */
static gt_status run_gemm(const gt_gemm *g) {
    gt_op opa = g->opa ? GT_OP_T : GT_OP_N, opb = g->opb ? GT_OP_T : GT_OP_N;
    if (g->dtype == GT_DT_F64)
        return gemm_tuned_d(opa, opb, g->m, g->n, g->k, g->alpha, g->A, g->lda, g->B, g->ldb,
                            g->beta, g->C, g->ldc, g->stream);
    if (g->dtype == GT_DT_F32)
        return gemm_tuned(opa, opb, g->m, g->n, g->k, (float)g->alpha, g->A, g->lda, g->B,
                          g->ldb, (float)g->beta, g->C, g->ldc, g->stream);
    /* Every type but f64 computes in float: its scalars are floats. f32 and f64 take
     * their typed entry points above, as an application of those types would. */
    const gt_ex_type *ex = &gt_ex_types[g->dtype];
    const float fa = (float)g->alpha, fb = (float)g->beta;
    return gemm_tuned_ex(opa, opb, g->m, g->n, g->k, &fa, g->A, ex->ab, g->lda, g->B, ex->ab,
                         g->ldb, &fb, g->C, ex->c, g->ldc, ex->compute, g->stream);
}

/* gt_measure's run: the call again, whatever its index. */
static gt_status run_again(void *user, int i) {
    (void)i;
    return run_gemm(user);
}

/* ===== run --save ===== */

/* The problem of one run, copied to the host after its first call: A and B in the input
 * type, C0 (C before the call) and C (after it) in the output type; na, nb, nc are bytes. */
typedef struct run_copy {
    void *A, *B, *C0, *C;
    size_t na, nb, nc;
} run_copy;

static void run_copy_free(run_copy *rc) {
    free(rc->A), free(rc->B), free(rc->C0), free(rc->C);
    memset(rc, 0, sizeof *rc);
}

/* Copies the device buffers to *rc (C0 and C are of nc bytes). */
static gt_status run_copy_take(run_copy *rc, CUdeviceptr A, size_t na, CUdeviceptr B, size_t nb,
                               CUdeviceptr C0, CUdeviceptr C, size_t nc) {
    rc->na = na, rc->nb = nb, rc->nc = nc;
    rc->A = malloc(na), rc->B = malloc(nb), rc->C0 = malloc(nc), rc->C = malloc(nc);
    if (!rc->A || !rc->B || !rc->C0 || !rc->C)
        return gt_fail(GT_OUT_OF_MEMORY, "--save: %zu bytes of host memory",
                       na + nb + 2 * nc);
    CUresult r = gt_cu.memcpy_dtoh(rc->A, A, na);
    if (r == CUDA_SUCCESS) r = gt_cu.memcpy_dtoh(rc->B, B, nb);
    if (r == CUDA_SUCCESS) r = gt_cu.memcpy_dtoh(rc->C0, C0, nc);
    if (r == CUDA_SUCCESS) r = gt_cu.memcpy_dtoh(rc->C, C, nc);
    return r == CUDA_SUCCESS ? GT_SUCCESS : gt_cu_fail(r, "--save: copying the problem to the host");
}

/* 0 when dir is a writable directory, or can be made one (its parent is a writable
 * directory); else -1 after a message. Creates nothing: run checks this before it starts
 * and writes only once the run has succeeded. */
static int save_dir_usable(const char *dir) {
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "gemmtune run: --save %s: exists and is not a directory\n", dir);
            return -1;
        }
        if (access(dir, W_OK | X_OK) != 0) {
            fprintf(stderr, "gemmtune run: --save %s: cannot write in it: %s\n", dir,
                    strerror(errno));
            return -1;
        }
        return 0;
    }
    if (errno != ENOENT) {
        fprintf(stderr, "gemmtune run: --save %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char copy[4096];
    if (snprintf(copy, sizeof copy, "%s", dir) >= (int)sizeof copy) {
        fprintf(stderr, "gemmtune run: --save %s: path too long\n", dir);
        return -1;
    }
    const char *parent = dirname(copy), *why = NULL;
    if (stat(parent, &st) != 0) why = strerror(errno);
    else if (!S_ISDIR(st.st_mode)) why = "not a directory";
    else if (access(parent, W_OK | X_OK) != 0) why = strerror(errno);
    if (why) {
        fprintf(stderr, "gemmtune run: --save %s: cannot create it: %s: %s (only the last "
                        "component is created)\n", dir, parent, why);
        return -1;
    }
    return 0;
}

static const char *const save_files[] = {"meta.txt", "A.bin", "B.bin", "C0.bin", "C.bin"};
#define NSAVE_FILES (int)(sizeof save_files / sizeof save_files[0])

/* Writes n bytes to dir/name; 0, or -1 after a message. */
static int save_bytes(const char *dir, const char *name, const void *data, size_t n) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "gemmtune run: --save: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    int ok = fwrite(data, 1, n, f) == n;
    int err = errno;
    if (fclose(f) != 0 && ok) ok = 0, err = errno;
    if (!ok) fprintf(stderr, "gemmtune run: --save: cannot write %s: %s\n", path, strerror(err));
    return ok ? 0 : -1;
}

/* Writes the problem g ran to dir (created when missing, its parent must exist):
 * meta.txt, one field a line ("name value"), and the raw column-major elements of A, B,
 * C0 and C exactly as the device holds them (little-endian, as every CUDA host).
 * On a failure removes what it wrote and returns -1 after a message. */
static int save_problem(const char *dir, const gt_gemm *g, const run_copy *rc) {
    int made = 0;
    if (mkdir(dir, 0777) == 0) {
        made = 1;
    } else if (errno != EEXIST) {
        fprintf(stderr, "gemmtune run: --save %s: cannot create it: %s\n", dir, strerror(errno));
        return -1;
    }
    char meta[1024];
    int len = snprintf(meta, sizeof meta,
                       "dtype %s\nops %c%c\nm %lld\nn %lld\nk %lld\nalpha %.17g\nbeta %.17g\n"
                       "lda %lld\nldb %lld\nldc %lld\nab_type %s\nc_type %s\n",
                       gt_dtype_name(g->dtype), g->opa ? 'T' : 'N', g->opb ? 'T' : 'N',
                       (long long)g->m, (long long)g->n, (long long)g->k, g->alpha, g->beta,
                       (long long)g->lda, (long long)g->ldb, (long long)g->ldc,
                       gt_stype_name(gt_dtype_in(g->dtype)), gt_stype_name(gt_dtype_out(g->dtype)));
    const void *data[NSAVE_FILES] = {meta, rc->A, rc->B, rc->C0, rc->C};
    const size_t size[NSAVE_FILES] = {(size_t)len, rc->na, rc->nb, rc->nc, rc->nc};
    for (int i = 0; i < NSAVE_FILES; i++) {
        if (save_bytes(dir, save_files[i], data[i], size[i]) == 0) continue;
        for (int j = 0; j <= i; j++) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", dir, save_files[j]);
            unlink(path);
        }
        if (made) rmdir(dir);
        return -1;
    }
    return 0;
}

/* ===== prebuild ===== */

int cli_prebuild(int argc, char **argv) {
    static const struct option longs[] = {
        {"dtype", required_argument, 0, 't'}, {"ops", required_argument, 0, 'o'},
        {"threads", required_argument, 0, 'j'}, {"align", required_argument, 0, 'a'},
        {"beta", required_argument, 0, 'b'},    {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    /* Alignment classes (bytes) and beta kinds to build, as bit sets. */
    int aligns = 16 | 8 | 4 | 2 | 1, betas = 3; /* bit 0: beta == 0, bit 1: beta != 0 */
    int dtypes[GT_NDTYPES], ndt = 0, c;
    const char *ops = "NN,NT,TN,TT";
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        if (c == 't') {
            if (ndt == GT_NDTYPES || cli_parse_dtype("prebuild", optarg, &dtypes[ndt])) return 2;
            ndt++;
        } else if (c == 'o') {
            ops = optarg;
        } else if (c == 'j') {
            char *end;
            threads = strtol(optarg, &end, 10);
            if (*end || threads < 1 || threads > 64) {
                fprintf(stderr, "gemmtune prebuild: --threads wants 1 to 64, not '%s'\n", optarg);
                return 2;
            }
        } else if (c == 'a') {
            aligns = 0;
            for (char *p = optarg, *end; *p; p = *end ? end + 1 : end) {
                long v = strtol(p, &end, 10);
                if ((*end && *end != ',') || (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)) {
                    fprintf(stderr, "gemmtune prebuild: --align wants classes of 1, 2, 4, 8 or 16 bytes "
                                    "separated by commas, not '%s'\n", optarg);
                    return 2;
                }
                aligns |= (int)v;
            }
        } else if (c == 'b') {
            if (strcmp(optarg, "zero") == 0) betas = 1;
            else if (strcmp(optarg, "nonzero") == 0) betas = 2;
            else if (strcmp(optarg, "any") == 0) betas = 3;
            else {
                fprintf(stderr, "gemmtune prebuild: --beta wants zero, nonzero or any, not '%s'\n", optarg);
                return 2;
            }
        } else if (c == 'h') {
            return cli_usage(stdout, 0);
        } else {
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gemmtune prebuild: unexpected '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (ndt == 0) dtypes[ndt++] = GT_DT_F32;
    /* The op pairs: "AB" words separated by commas. */
    int pairs[4][2], npairs = 0;
    for (const char *p = ops; *p;) {
        if (npairs == 4 || (p[0] != 'N' && p[0] != 'T') || (p[1] != 'N' && p[1] != 'T') ||
            (p[2] != ',' && p[2] != 0)) {
            fprintf(stderr, "gemmtune prebuild: --ops wants op pairs like NN,NT,TN,TT, not '%s'\n", ops);
            return 2;
        }
        pairs[npairs][0] = p[0] == 'T', pairs[npairs][1] = p[1] == 'T', npairs++;
        p += p[2] ? 3 : 2;
    }
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    gt_devctx *dc;
    if (device_or_say(&dc) != 0) return 1;
    /* The binaries go to the user cache: without a writable one they would last only
     * as long as this command. */
    gt_layers_open();
    int open = 0;
    const char *user = gt_layers_user_path(&open);
    if (!open || gt_layers_in_memory()) {
        fprintf(stderr, "gemmtune prebuild: the user cache '%s' is not open for writing (see "
                        "the warning above, or set GEMMTUNE_CACHE); nothing would be kept\n", user);
        return 1;
    }
    int rc = 0;
    gt_prebuild_report total = {0};
    for (int t = 0; t < ndt; t++) {
        gt_status ds = gt_devctx_supports(dc, dtypes[t]);
        if (ds != GT_SUCCESS) {
            fprintf(stderr, "gemmtune prebuild: %s: %s\n", gt_status_string(ds), gt_last_error());
            rc = 1;
            continue;
        }
        /* Every class of the type asked for: op pair, alignment class from 16 bytes down
         * to one element, beta zero or not. */
        int es = gt_dtype_in_size(dtypes[t]);
        for (int o = 0; o < npairs; o++)
            for (int align = 16; align >= es; align /= 2)
                for (int beta0 = 1; beta0 >= 0; beta0--) {
                    if (!(aligns & align) || !(betas & (beta0 ? 1 : 2))) continue;
                    cli_shape sh = {.m = 1024, .n = 1024, .k = 1024, .opa = pairs[o][0], .opb = pairs[o][1]};
                    gt_key key;
                    shape_key(dc, &sh, dtypes[t], beta0 ? 0.0 : 1.0, &key);
                    key.align = align;
                    gt_prebuild_report rep;
                    gt_status s = gt_prebuild_class(dc, &key, (int)threads, &rep);
                    char cls[96];
                    gt_key_class(&key, cls, sizeof cls);
                    if (s != GT_SUCCESS) {
                        fprintf(stderr, "gemmtune prebuild: %s: %s: %s\n", cls, gt_status_string(s),
                                gt_last_error());
                        rc = 1;
                        continue;
                    }
                    printf("%-20s %3d configurations: %3d held, %3d built, %d refused, %d failed (%.1f s)\n",
                           cls, rep.configs, rep.held, rep.built, rep.refused, rep.failed, rep.seconds);
                    total.configs += rep.configs, total.held += rep.held;
                    total.built += rep.built, total.failed += rep.failed;
                    total.refused += rep.refused;
                    total.seconds += rep.seconds;
                    if (rep.failed) rc = 1;
                }
    }
    printf("total: %d configurations, %d held, %d built, %d refused, %d failed (%.1f s)\n",
           total.configs, total.held, total.built, total.refused, total.failed, total.seconds);
    return rc;
}

int cli_run(int argc, char **argv) {
    static const struct option longs[] = {
        {"alpha", required_argument, 0, 'a'}, {"beta", required_argument, 0, 'b'},
        {"reps", required_argument, 0, 'r'},  {"dtype", required_argument, 0, 't'},
        {"save", required_argument, 0, 's'},  {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    double alpha = 1.0, beta = 0.0;
    int reps = 20, c, dtype = GT_DT_F32;
    const char *save = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        if (c == 'a' || c == 'b') {
            double v;
            if (cli_parse_finite(optarg, &v) != 0) {
                fprintf(stderr, "gemmtune run: --%s needs a number\n", c == 'a' ? "alpha" : "beta");
                return 2;
            }
            if (c == 'a') alpha = v; else beta = v;
        } else if (c == 'r') {
            if (cli_parse_index(optarg, &reps) != 0 || reps < 1 || reps > 10000) {
                fprintf(stderr, "gemmtune run: --reps needs 1..10000\n");
                return 2;
            }
        } else if (c == 't') {
            if (cli_parse_dtype("run", optarg, &dtype)) return 2;
        } else if (c == 's') {
            if (!*optarg) {
                fprintf(stderr, "gemmtune run: --save needs a directory\n");
                return 2;
            }
            save = optarg;
        } else if (c == 'h') {
            return cli_usage(stdout, 0);
        } else {
            return 2;
        }
    }
    if (dtype != GT_DT_F64) {
        /* The scalars are the call's own type, float for every type but f64: what the
         * library receives is what the check uses. A value beyond float is a usage error,
         * not an infinity. */
        if (!isfinite((float)alpha) || !isfinite((float)beta)) {
            fprintf(stderr, "gemmtune run: --%s is beyond the range of f32%s%s%s\n",
                    isfinite((float)alpha) ? "beta" : "alpha",
                    dtype != GT_DT_F32 ? " (the scalars of " : "",
                    dtype != GT_DT_F32 ? gt_dtype_name(dtype) : "",
                    dtype != GT_DT_F32 ? " are f32)" : "");
            return 2;
        }
        alpha = (float)alpha, beta = (float)beta;
    }
    cli_shape sh;
    if (argc - optind != 1 || cli_parse_shape(argv[optind], &sh) != 0) {
        fprintf(stderr, "gemmtune run: give one SHAPE, MxNxK or MxNxK:NT (see --help)\n");
        return 2;
    }
    if (save && save_dir_usable(save) != 0) return 1;
    gt_devctx *dc;
    if (device_or_say(&dc) != 0) return 1;
    gt_status ds = gt_devctx_supports(dc, dtype);
    if (ds != GT_SUCCESS) {
        fprintf(stderr, "gemmtune run: %s: %s\n", gt_status_string(ds), gt_last_error());
        gt_release();
        return 1;
    }
    /* A and B hold the input type, C and C0 the output type (wider for f16_f32 and
     * bf16_f32). */
    const size_t ei = (size_t)gt_dtype_in_size(dtype), eo = (size_t)gt_dtype_out_size(dtype);
    long long lda = sh.opa ? sh.k : sh.m, ldb = sh.opb ? sh.n : sh.k, ldc = sh.m;
    long long na = sh.m * sh.k, nb = sh.k * sh.n, nc = sh.m * sh.n;
    CUdeviceptr A = 0, B = 0, C = 0, C0 = 0;
    CUstream s = NULL;
    run_copy saved;
    memset(&saved, 0, sizeof saved);
    int code = 1;
    gt_status st = GT_SUCCESS;
    CUresult r = gt_cu.mem_alloc(&A, (size_t)na * ei);
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&B, (size_t)nb * ei);
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&C, (size_t)nc * eo);
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&C0, (size_t)nc * eo);
    if (r == CUDA_SUCCESS) r = gt_cu.stream_create(&s, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        st = gt_cu_fail(r, "allocating the problem");
        goto fail;
    }
    if ((st = gt_aux_fill(dc, s, gt_dtype_in(dtype), A, na, 101, 0, 0)) ||
        (st = gt_aux_fill(dc, s, gt_dtype_in(dtype), B, nb, 102, 0, 0)) ||
        (st = gt_aux_fill(dc, s, gt_dtype_out(dtype), C0, nc, 103, 0, 0)))
        goto fail;
    if ((r = gt_cu.memcpy_dtod_async(C, C0, (size_t)nc * eo, s)) ||
        (r = gt_cu.stream_synchronize(s))) {
        st = gt_cu_fail(r, "preparing C");
        goto fail;
    }
    gt_gemm g = {dtype, sh.opa, sh.opb, sh.m, sh.n, sh.k, alpha, beta, GT_PTR(A), GT_PTR(B),
                 GT_PTR(C), lda, ldb, ldc, s};
    gt_stats before, after;
    gt_get_stats(&before);
    double t0 = gt_measure_now_s();
    st = run_gemm(&g);
    if (st == GT_SUCCESS && (r = gt_cu.stream_synchronize(s))) st = gt_cu_fail(r, "first call");
    double first_s = gt_measure_now_s() - t0;
    gt_get_stats(&after);
    if (st != GT_SUCCESS) goto fail;
    /* --save: the problem as it stood around the first call (later calls accumulate into
     * C when beta != 0). */
    if (save && (st = run_copy_take(&saved, A, (size_t)na * ei, B, (size_t)nb * ei, C0, C,
                                    (size_t)nc * eo)))
        goto fail;

    gt_key key;
    gt_call_key(dc, &g, &key);
    gt_verify_result vr;
    if ((st = gt_verify(dc, &key, &g, GT_PTR(C0), ldc, &vr))) goto fail;

    /* Three warm-up calls, then reps timed ones: the library's timing (measure.h). */
    double med = 0;
    if ((st = gt_measure(s, NULL, 0, 3, reps, run_again, &g, NULL, &med))) goto fail;
    const gt_plan *p = gt_plan_find(dc->ctx, &key);
    char cfg[64] = "?", text[96];
    if (p) gt_kcfg_format(&p->kern.cfg, cfg, sizeof cfg);
    gt_key_shape(&key, text, sizeof text);
    /* What the first call did, from the counters it moved, and what runs now. */
    char from[160];
    int src = p ? p->source : -1;
    if (after.tunes > before.tunes && src == GT_SRC_TUNED)
        snprintf(from, sizeof from, "tuned now");
    else if (after.cache_hits > before.cache_hits)
        snprintf(from, sizeof from, "from the cache, %s",
                 after.cubin_hits > before.cubin_hits ? "binary cached" : "compiled");
    else
        snprintf(from, sizeof from, "%s", source_name(src));
    printf("%s %s alpha=%g beta=%g on %s\n", text, gt_dtype_name(dtype), alpha, beta,
           dc->dev.name);
    printf("kernel: %s (%s; first call %.2f s)\n", cfg, from, first_s);
    printf("time: %.1f us median of %d, %.2f TFLOP/s\n", med, reps,
           2.0 * (double)sh.m * (double)sh.n * (double)sh.k / (med * 1e6));
    char said[512];
    gt_verify_describe(&vr, said, sizeof said);
    printf("check: %s: %s\n", said, vr.pass ? "PASS" : "FAIL");
    code = vr.pass ? 0 : 1;
    /* Saved whatever the check said: the saved problem is how the check is checked. */
    if (save) {
        if (save_problem(save, &g, &saved) != 0) code = 1;
        else printf("saved: %s (meta.txt, A.bin, B.bin, C0.bin, C.bin)\n", save);
    }
    goto done;
fail:
    fprintf(stderr, "gemmtune run: %s: %s\n", gt_status_string(st), gt_last_error());
done:
    if (s) gt_cu.stream_destroy(s);
    if (A) gt_cu.mem_free(A);
    if (B) gt_cu.mem_free(B);
    if (C) gt_cu.mem_free(C);
    if (C0) gt_cu.mem_free(C0);
    run_copy_free(&saved);
    gt_release();
    return code;
}
