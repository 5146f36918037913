/*
 * cli.c: the gemmtune command.
 *
 *   gemmtune info                     GPU, driver, NVRTC, cache, kernel source hash
 *   gemmtune tune SHAPE... | --file F pre-warm the cache (tune what is missing)
 *   gemmtune list                     what the cache holds
 *   gemmtune run SHAPE                tune if needed, run on random data, check, time
 * SHAPE is MxNxK with optional ops, e.g. 4096x4096x4096 or 16x4096x4096:NT.
 * Exit status: 0 success, 1 failure (no GPU, a failed check), 2 bad usage.
 * The command may print; the library it drives never does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cu.h"
#include "db.h"
#include "devctx.h"
#include "dispatch.h"
#include "gemmtune.h"
#include "kcfg.h"
#include "kernel_sources.h"
#include "log.h"
#include "plan.h"
#include "rtc.h"
#include "tune.h"
#include "verify.h"

/* ===== shapes ===== */

typedef struct {
    long long m, n, k;
    int opa, opb;
} shape;

static int parse_op(char c, int *op) {
    if (c == 'N' || c == 'n') *op = 0;
    else if (c == 'T' || c == 't' || c == 'C' || c == 'c') *op = 1;
    else return -1;
    return 0;
}

/* "MxNxK" or "MxNxK:AB" with A, B in N/T. */
static int parse_shape(const char *s, shape *out) {
    char ops[3] = "NN";
    int used = 0;
    long long m, n, k;
    if (sscanf(s, "%lldx%lldx%lld%n", &m, &n, &k, &used) != 3) return -1;
    if (s[used] == ':') {
        if (strlen(s + used + 1) != 2) return -1;
        memcpy(ops, s + used + 1, 2);
    } else if (s[used]) {
        return -1;
    }
    if (m < 1 || n < 1 || k < 1 || m > 2147483647LL || n > 2147483647LL || k > 2147483647LL)
        return -1;
    if (parse_op(ops[0], &out->opa) || parse_op(ops[1], &out->opb)) return -1;
    out->m = m, out->n = n, out->k = k;
    return 0;
}

/* A shape file: '#' comments; each line "M N K [opA opB]" or "MxNxK[:AB]". */
static int read_shapes(const char *path, shape **out, int *count) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gemmtune: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[512];
    int n = 0, cap = 0, lineno = 0;
    shape *v = NULL;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char a[64], b[8] = "N", c[8] = "N";
        long long m, nn, k;
        shape sh;
        int got = sscanf(line, "%lld %lld %lld %7s %7s", &m, &nn, &k, b, c);
        if (got >= 3) {
            char text[128];
            snprintf(text, sizeof text, "%lldx%lldx%lld:%c%c", m, nn, k, b[0], c[0]);
            if (parse_shape(text, &sh) != 0 || (got == 4) || strlen(b) != 1 || strlen(c) != 1) {
                fprintf(stderr, "gemmtune: %s:%d: bad shape line\n", path, lineno);
                free(v), fclose(f);
                return -1;
            }
        } else if (sscanf(line, "%63s", a) == 1) {
            if (parse_shape(a, &sh) != 0) {
                fprintf(stderr, "gemmtune: %s:%d: bad shape '%s'\n", path, lineno, a);
                free(v), fclose(f);
                return -1;
            }
        } else {
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            shape *nv = realloc(v, sizeof *v * (size_t)cap);
            if (!nv) {
                free(v), fclose(f);
                return -1;
            }
            v = nv;
        }
        v[n++] = sh;
    }
    fclose(f);
    *out = v;
    *count = n;
    return 0;
}

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

/* The key gemm_tuned builds for a tightly packed, cudaMalloc'd problem. */
static void shape_key(gt_devctx *dc, const shape *sh, float beta, gt_key *key) {
    long long lda = sh->opa ? sh->k : sh->m, ldb = sh->opb ? sh->n : sh->k;
    gt_devctx_make_key(dc, sh->opa, sh->opb, sh->m, sh->n, sh->k, (void *)256, lda, (void *)256,
                       ldb, beta, (void *)256, sh->m, key);
}

static const char *source_name(int s) {
    return s == GT_SRC_CACHE ? "cache" : s == GT_SRC_TUNED ? "tuned" : "fallback";
}

/* ===== verbs ===== */

static int usage(FILE *f, int code) {
    char params[4096];
    gt_kcfg_help(params, sizeof params);
    fprintf(f,
            "usage: gemmtune [--cache FILE] VERB [options]\n"
            "  info                      GPU, driver, NVRTC, cache path, kernel source hash\n"
            "  tune SHAPE... | --file F  pre-warm the cache (--force: tune even if cached)\n"
            "  list                      what the cache holds\n"
            "  run SHAPE [--alpha A] [--beta B] [--reps N]\n"
            "                            tune if needed, run on random data, check, time\n"
            "SHAPE: MxNxK[:AB], ops A, B in N (as stored) or T (transposed); column-major.\n"
            "--cache FILE uses FILE as the cache (same as GEMMTUNE_CACHE).\n"
            "Environment: GEMMTUNE_CACHE, GEMMTUNE_LOG (off|error|warn|info|debug),\n"
            "  GEMMTUNE_TUNE_MAX_CANDIDATES, GEMMTUNE_TUNE_BUDGET_S, GEMMTUNE_TUNE_MEM_MB.\n\n%s",
            params);
    return code;
}

static int cmd_info(int argc, char **argv) {
    if (argc > 1) {
        if (strcmp(argv[1], "--help") == 0) return usage(stdout, 0);
        fprintf(stderr, "gemmtune info: unexpected argument '%s'\n", argv[1]);
        return 2;
    }
    printf("gemmtune %s\n", GT_VERSION_STRING);
    printf("kernel source hash: %s\n", gt_kernel_source_hash);
    printf("NVRTC: %s\n", gt_rtc_version());
    int open = 0;
    const char *path = gt_dispatch_cache_path(&open);
    printf("cache: %s (%s)\n", *path ? path : "none", open ? "usable" : "not usable; bypassed");
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
        printf("GPU %d: %s, sm_%d%d, %d SMs, %.1f GiB, L2 %d MiB\n", i, d.name, d.cc_major,
               d.cc_minor, d.sm_count, d.total_mem / 1073741824.0, d.l2_bytes >> 20);
    }
    return 0;
}

static int cmd_tune(int argc, char **argv) {
    static const struct option longs[] = {
        {"file", required_argument, 0, 'f'}, {"force", no_argument, 0, 'F'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *file = NULL;
    int force = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:h", longs, NULL)) != -1) {
        if (c == 'f') file = optarg;
        else if (c == 'F') force = 1;
        else if (c == 'h') return usage(stdout, 0);
        else return 2;
    }
    shape *shapes = NULL;
    int n = 0;
    if (file && read_shapes(file, &shapes, &n) != 0) return 2;
    int extra = argc - optind;
    if (!file && extra == 0) {
        fprintf(stderr, "gemmtune tune: give SHAPE... or --file FILE (see --help)\n");
        return 2;
    }
    shape *all = realloc(shapes, sizeof *all * (size_t)(n + extra + 1));
    if (!all) return 1;
    for (int i = optind; i < argc; i++)
        if (parse_shape(argv[i], &all[n++]) != 0) {
            fprintf(stderr, "gemmtune tune: bad shape '%s' (want MxNxK or MxNxK:NT)\n", argv[i]);
            free(all);
            return 2;
        }
    gt_devctx *dc;
    if (device_or_say(&dc) != 0) {
        free(all);
        return 1;
    }
    int tty = isatty(2), failures = 0;
    for (int i = 0; i < n; i++) {
        gt_key key;
        shape_key(dc, &all[i], 0.0f, &key);
        char text[96];
        gt_key_shape(&key, text, sizeof text);
        if (tty) fprintf(stderr, "[%d/%d] tuning %s ...", i + 1, n, text);
        gt_tune_report rep;
        memset(&rep, 0, sizeof rep);
        int source = -1;
        gt_status s = gt_dispatch_tune(dc, &key, force, &rep, &source);
        if (tty) fprintf(stderr, "\r\033[K");
        if (s != GT_SUCCESS) {
            printf("%-24s FAILED: %s: %s\n", text, gt_status_string(s), gt_last_error());
            failures++;
        } else if (source == GT_SRC_TUNED) {
            char cfg[64];
            gt_kcfg_format(&rep.winner, cfg, sizeof cfg);
            printf("%-24s %-20s %10.1f us %8.2f TFLOP/s  tuned in %.2f s (compile %.2f s; "
                   "generated %d, pruned %d, ranked out %d, compiled %d, timed %d)\n",
                   text, cfg, rep.time_us, rep.tflops, rep.seconds, rep.compile_seconds,
                   rep.space.generated, rep.space.pruned, rep.space.ranked_out, rep.compiled,
                   rep.timed);
        } else {
            const gt_plan *p = gt_plan_find(dc->ctx, &key);
            char cfg[64] = "?";
            if (p) gt_kcfg_format(&p->kern.cfg, cfg, sizeof cfg);
            printf("%-24s %-20s (%s%s%s)\n", text, cfg, source_name(source),
                   rep.skipped ? ": " : "", rep.skipped ? rep.why : "");
        }
        fflush(stdout);
        gt_tune_report_free(&rep);
    }
    free(all);
    gt_release();
    return failures ? 1 : 0;
}

static int print_winner(const gt_key *key, const char *src_hash, int lib_major,
                        const gt_db_winner *w, void *user) {
    (void)user;
    char shape_text[96], when[32];
    gt_key_shape(key, shape_text, sizeof shape_text);
    time_t t = (time_t)w->tuned_at;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", gmtime(&t));
    int current = strcmp(src_hash, gt_kernel_source_hash) == 0 && lib_major == GT_VERSION_MAJOR;
    printf("%-28s %-4s %-22s a%-2d b%d %-20s %10.1f us %8.2f TFLOP/s  %s%s\n", key->device,
           gt_dtype_name(key->dtype), shape_text, key->align, key->beta0, w->config, w->time_us,
           w->tflops, when, current ? "" : "  (old kernel source: ignored)");
    return 0;
}

static int cmd_list(int argc, char **argv) {
    if (argc > 1) {
        if (strcmp(argv[1], "--help") == 0) return usage(stdout, 0);
        fprintf(stderr, "gemmtune list: unexpected argument '%s'\n", argv[1]);
        return 2;
    }
    char path[4096], msg[512];
    if (gt_db_default_path(path, sizeof path) != GT_SUCCESS) {
        fprintf(stderr, "gemmtune list: no cache path (set GEMMTUNE_CACHE or HOME)\n");
        return 1;
    }
    if (access(path, F_OK) != 0) {
        printf("cache %s does not exist yet: nothing tuned\n", path);
        return 0;
    }
    gt_db *db;
    if (gt_db_open(path, 1, 0, &db, msg, sizeof msg) != GT_SUCCESS) {
        fprintf(stderr, "gemmtune list: %s\n", msg);
        return 1;
    }
    printf("cache %s\n", path);
    gt_status s = gt_db_list(db, print_winner, NULL);
    if (s != GT_SUCCESS) fprintf(stderr, "gemmtune list: %s\n", gt_db_errmsg(db));
    gt_db_close(db);
    return s == GT_SUCCESS ? 0 : 1;
}

static int cmd_run(int argc, char **argv) {
    static const struct option longs[] = {
        {"alpha", required_argument, 0, 'a'}, {"beta", required_argument, 0, 'b'},
        {"reps", required_argument, 0, 'r'},  {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    float alpha = 1.0f, beta = 0.0f;
    int reps = 20, c;
    char *end;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        if (c == 'a' || c == 'b') {
            float v = strtof(optarg, &end);
            if (*end || !isfinite(v)) {
                fprintf(stderr, "gemmtune run: --%s needs a number\n", c == 'a' ? "alpha" : "beta");
                return 2;
            }
            if (c == 'a') alpha = v; else beta = v;
        } else if (c == 'r') {
            reps = (int)strtol(optarg, &end, 10);
            if (*end || reps < 1 || reps > 10000) {
                fprintf(stderr, "gemmtune run: --reps needs 1..10000\n");
                return 2;
            }
        } else if (c == 'h') {
            return usage(stdout, 0);
        } else {
            return 2;
        }
    }
    shape sh;
    if (argc - optind != 1 || parse_shape(argv[optind], &sh) != 0) {
        fprintf(stderr, "gemmtune run: give one SHAPE, MxNxK or MxNxK:NT (see --help)\n");
        return 2;
    }
    gt_devctx *dc;
    if (device_or_say(&dc) != 0) return 1;
    long long lda = sh.opa ? sh.k : sh.m, ldb = sh.opb ? sh.n : sh.k, ldc = sh.m;
    size_t abytes = (size_t)(sh.m * sh.k) * 4, bbytes = (size_t)(sh.k * sh.n) * 4,
           cbytes = (size_t)(sh.m * sh.n) * 4;
    CUdeviceptr A = 0, B = 0, C = 0, C0 = 0;
    CUstream s = NULL;
    CUevent ev[2] = {0, 0};
    int code = 1;
    gt_status st = GT_SUCCESS;
    CUresult r = gt_cu.mem_alloc(&A, abytes);
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&B, bbytes);
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&C, cbytes);
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&C0, cbytes);
    if (r == CUDA_SUCCESS) r = gt_cu.stream_create(&s, CU_STREAM_NON_BLOCKING);
    if (r == CUDA_SUCCESS) r = gt_cu.event_create(&ev[0], 0);
    if (r == CUDA_SUCCESS) r = gt_cu.event_create(&ev[1], 0);
    if (r != CUDA_SUCCESS) {
        st = gt_cu_fail(r, "allocating the problem");
        goto fail;
    }
    if ((st = gt_aux_fill(dc, s, A, (long long)(abytes / 4), 101, 0, 0)) ||
        (st = gt_aux_fill(dc, s, B, (long long)(bbytes / 4), 102, 0, 0)) ||
        (st = gt_aux_fill(dc, s, C0, (long long)(cbytes / 4), 103, 0, 0)))
        goto fail;
    if ((r = gt_cu.memcpy_dtod_async(C, C0, cbytes, s)) || (r = gt_cu.stream_synchronize(s))) {
        st = gt_cu_fail(r, "preparing C");
        goto fail;
    }
    gt_stats before, after;
    gt_get_stats(&before);
    double t0 = gt_tune_now_s();
    st = gemm_tuned(sh.opa, sh.opb, sh.m, sh.n, sh.k, alpha, (const float *)(uintptr_t)A, lda,
                    (const float *)(uintptr_t)B, ldb, beta, (float *)(uintptr_t)C, ldc, s);
    if (st == GT_SUCCESS && (r = gt_cu.stream_synchronize(s))) st = gt_cu_fail(r, "first call");
    double first_s = gt_tune_now_s() - t0;
    gt_get_stats(&after);
    if (st != GT_SUCCESS) goto fail;

    gt_key key;
    gt_devctx_make_key(dc, sh.opa, sh.opb, sh.m, sh.n, sh.k, (void *)(uintptr_t)A, lda,
                       (void *)(uintptr_t)B, ldb, beta, (void *)(uintptr_t)C, ldc, &key);
    gt_verify_result vr;
    if ((st = gt_verify(dc, s, &key, alpha, beta, A, lda, B, ldb, C0, ldc, C, ldc, &vr))) goto fail;

    double *t = malloc(sizeof *t * (size_t)reps);
    if (!t) goto fail;
    for (int i = 0; i < 3 && st == GT_SUCCESS; i++)
        st = gemm_tuned(sh.opa, sh.opb, sh.m, sh.n, sh.k, alpha, (const float *)(uintptr_t)A,
                        lda, (const float *)(uintptr_t)B, ldb, beta, (float *)(uintptr_t)C, ldc, s);
    for (int i = 0; i < reps && st == GT_SUCCESS; i++) {
        float ms = 0;
        gt_cu.event_record(ev[0], s);
        st = gemm_tuned(sh.opa, sh.opb, sh.m, sh.n, sh.k, alpha, (const float *)(uintptr_t)A,
                        lda, (const float *)(uintptr_t)B, ldb, beta, (float *)(uintptr_t)C, ldc, s);
        gt_cu.event_record(ev[1], s);
        if ((r = gt_cu.event_synchronize(ev[1])) || (r = gt_cu.event_elapsed(&ms, ev[0], ev[1])))
            st = gt_cu_fail(r, "timing");
        t[i] = ms * 1e3;
    }
    if (st != GT_SUCCESS) {
        free(t);
        goto fail;
    }
    double med = gt_tune_median(t, reps);
    free(t);
    const gt_plan *p = gt_plan_find(dc->ctx, &key);
    char cfg[64] = "?", text[96];
    if (p) gt_kcfg_format(&p->kern.cfg, cfg, sizeof cfg);
    gt_key_shape(&key, text, sizeof text);
    const char *from = after.tunes > before.tunes && p && p->source == GT_SRC_TUNED
                           ? "tuned now"
                           : after.cache_hits > before.cache_hits ? "from the cache" : "fallback";
    printf("%s f32 alpha=%g beta=%g on %s\n", text, alpha, beta, dc->dev.name);
    printf("kernel: %s (%s; first call %.2f s)\n", cfg, from, first_s);
    printf("time: %.1f us median of %d, %.2f TFLOP/s\n", med, reps,
           2.0 * (double)sh.m * (double)sh.n * (double)sh.k / (med * 1e6));
    printf("check: relative error %.2e over %lld outputs (tolerance %.2e), %lld non-finite: %s\n",
           vr.rel_err, vr.checked, vr.tol, vr.nonfinite, vr.pass ? "PASS" : "FAIL");
    code = vr.pass ? 0 : 1;
    goto done;
fail:
    fprintf(stderr, "gemmtune run: %s: %s\n", gt_status_string(st), gt_last_error());
done:
    if (ev[0]) gt_cu.event_destroy(ev[0]);
    if (ev[1]) gt_cu.event_destroy(ev[1]);
    if (s) gt_cu.stream_destroy(s);
    if (A) gt_cu.mem_free(A);
    if (B) gt_cu.mem_free(B);
    if (C) gt_cu.mem_free(C);
    if (C0) gt_cu.mem_free(C0);
    gt_release();
    return code;
}

int main(int argc, char **argv) {
    int i = 1;
    while (i < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return usage(stdout, 0);
        if (strcmp(argv[i], "--version") == 0) {
            printf("gemmtune %s\n", GT_VERSION_STRING);
            return 0;
        }
        if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc) {
            setenv("GEMMTUNE_CACHE", argv[i + 1], 1);
            i += 2;
            continue;
        }
        fprintf(stderr, "gemmtune: unknown option '%s' (see --help)\n", argv[i]);
        return 2;
    }
    if (i >= argc) return usage(stderr, 2);
    const char *verb = argv[i];
    argc -= i;
    argv += i;
    if (strcmp(verb, "info") == 0) return cmd_info(argc, argv);
    if (strcmp(verb, "tune") == 0) return cmd_tune(argc, argv);
    if (strcmp(verb, "list") == 0) return cmd_list(argc, argv);
    if (strcmp(verb, "run") == 0) return cmd_run(argc, argv);
    if (strcmp(verb, "help") == 0) return usage(stdout, 0);
    fprintf(stderr, "gemmtune: unknown verb '%s' (info, tune, list, run; see --help)\n", verb);
    return 2;
}
