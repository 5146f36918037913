/*
 * test_cluster.c: the cache as a cluster uses it, on a real GPU (issue 3).
 * Without a CUDA device every case reports "skipped: no CUDA device" (gpu_probe.h).
 *
 * Every GPU call runs in a child process (this executable with --child or --async), so
 * each case sees what a new process of a job sees: its own plan table, its own stats,
 * the cache files and environment the case gives it. The parent never creates a CUDA
 * context; it forges and inspects cache files with the cache API and raw SQLite.
 *
 * Cases: binary cache (a process whose shapes are all cached does no NVRTC work; a
 * changed driver recompiles and keeps configurations; mode off uses no cache); shipped
 * read-only files (lookup order, no binary ever from them, every rank picks the same
 * kernel); tampered entries rejected; mode cached (the selector's choice, same on every
 * rank; the cost model's choice where no shape of the class is tuned); background tuning
 * (same values, winner picked up); bad cache
 * files (truncated, random bytes, newer schema, locked past the busy timeout,
 * unwritable directory, full): right result, success, one warning, good files intact;
 * read-only files as a user who cannot write them (a root run drops to "nobody");
 * eight processes tuning overlapping shapes into one cache; one kernel per key (eight
 * processes meeting one new shape at once: one tuning, one configuration everywhere; the
 * claiming tuner killed with SIGKILL: the others finish after its claim expires, with
 * one configuration and one tuning among them).
 *
 * No case depends on another having run: those that read a tuned cache copy the seed
 * (two shapes tuned by a child), which the first case builds and any other builds when
 * it is missing (NEED_SEED); a seed that cannot be built, a child that cannot set up the
 * GPU, is a failure with the reason, never a skip.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cu.h"
#include "db.h"
#include "call.h"
#include "devctx.h"
#include "files.h"
#include "gpu_probe.h"
#include "gemmtune.h"
#include "kernel_sources.h"
#include "plan.h"
#include "tap.h"

GPU_TEST_STATE();
static char root[64];
static char self[4096];
/* When set (a root test run), children drop to this user before exec, so that file
 * permissions apply to them; exe is then a copy of this program they can read. */
static uid_t child_uid;
static gid_t child_gid;
static char child_exe[4096];


/* ===================================================================================
 * Child side: run shapes through gemm_tuned and report
 * =================================================================================== */

typedef struct {
    int opa, opb;
    long long m, n, k;
} shape;

static int parse_shape(const char *s, shape *sh) {
    char a = 'N', b = 'N';
    if (sscanf(s, "%lldx%lldx%lld:%c%c", &sh->m, &sh->n, &sh->k, &a, &b) < 3) return -1;
    sh->opa = a == 'T', sh->opb = b == 'T';
    return 0;
}

static unsigned long long rng = 88172645463325252ull;
static float frand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

/* One problem of the shape with beta = 0 (so the key has beta0 = 1). */
typedef struct {
    shape s;
    float *A, *B, *C;
    CUdeviceptr dA, dB, dC;
} prob;

static void prob_init(prob *p, const shape *s) {
    p->s = *s;
    size_t na = (size_t)(s->m * s->k), nb = (size_t)(s->k * s->n), nc = (size_t)(s->m * s->n);
    p->A = malloc(na * 4), p->B = malloc(nb * 4), p->C = malloc(nc * 4);
    for (size_t i = 0; i < na; i++) p->A[i] = frand();
    for (size_t i = 0; i < nb; i++) p->B[i] = frand();
    gt_cu.mem_alloc(&p->dA, na * 4);
    gt_cu.mem_alloc(&p->dB, nb * 4);
    gt_cu.mem_alloc(&p->dC, nc * 4);
    gt_cu.memcpy_htod(p->dA, p->A, na * 4);
    gt_cu.memcpy_htod(p->dB, p->B, nb * 4);
}

static void prob_free(prob *p) {
    free(p->A), free(p->B), free(p->C);
    gt_cu.mem_free(p->dA), gt_cu.mem_free(p->dB), gt_cu.mem_free(p->dC);
}

static gt_status prob_run(prob *p) {
    const shape *s = &p->s;
    long long lda = s->opa ? s->k : s->m, ldb = s->opb ? s->n : s->k;
    gt_status st = gemm_tuned(s->opa ? GT_OP_T : GT_OP_N, s->opb ? GT_OP_T : GT_OP_N, s->m, s->n,
                              s->k, 1.0f, (const float *)(uintptr_t)p->dA, lda,
                              (const float *)(uintptr_t)p->dB, ldb, 0.0f,
                              (float *)(uintptr_t)p->dC, s->m, NULL);
    gt_cu.ctx_synchronize();
    gt_cu.memcpy_dtoh(p->C, p->dC, (size_t)(s->m * s->n) * 4);
    return st;
}

/* 1 when C matches the float64 product within the fp32 tolerance. */
static int prob_ok(const prob *p) {
    const shape *s = &p->s;
    long long lda = s->opa ? s->k : s->m, ldb = s->opb ? s->n : s->k;
    double d2 = 0, r2 = 0;
    for (long long j = 0; j < s->n; j++)
        for (long long i = 0; i < s->m; i++) {
            double sum = 0;
            for (long long l = 0; l < s->k; l++)
                sum += (double)(s->opa ? p->A[l + i * lda] : p->A[i + l * lda]) *
                       (double)(s->opb ? p->B[j + l * ldb] : p->B[l + j * ldb]);
            double v = p->C[i + j * s->m];
            if (!isfinite(v)) return 0;
            d2 += (v - sum) * (v - sum), r2 += sum * sum;
        }
    return sqrt(d2 / (r2 > 0 ? r2 : 1)) <= 1e-6 * sqrt((double)s->k) + 2e-6;
}

static const gt_plan *plan_of(CUcontext ctx, gt_devctx *dc, const prob *p) {
    const shape *s = &p->s;
    gt_key key;
    gt_gemm g = {GT_DT_F32, s->opa, s->opb, s->m, s->n, s->k, 1.0, 0.0, GT_PTR(p->dA),
                 GT_PTR(p->dB), GT_PTR(p->dC), s->opa ? s->k : s->m, s->opb ? s->n : s->k,
                 s->m, NULL};
    gt_call_key(dc, &g, &key);
    return gt_plan_find(ctx, &key);
}

/* Enters device 0's context; on a failure says why on stderr (the parent shows it). */
static int child_enter(CUcontext *ctx, gt_devctx **dc) {
    int pushed;
    gt_status s = gt_cu_load();
    if (s == GT_SUCCESS) s = gt_cu_enter(NULL, ctx, &pushed);
    if (s == GT_SUCCESS) s = gt_devctx_get(*ctx, dc);
    if (s == GT_SUCCESS) return 0;
    fprintf(stderr, "child (uid %d): GPU set-up failed: %s: %s\n", (int)geteuid(),
            gt_status_string(s), gt_last_error());
    return -1;
}

static void print_stats(void) {
    gt_stats s;
    gt_get_stats(&s);
    printf("stats tunes=%llu cache_hits=%llu compiles=%llu cubin_hits=%llu nearest=%llu "
           "fallbacks=%llu rejected=%llu async=%llu\n",
           (unsigned long long)s.tunes, (unsigned long long)s.cache_hits,
           (unsigned long long)s.compiles, (unsigned long long)s.cubin_hits,
           (unsigned long long)s.nearest, (unsigned long long)s.fallbacks,
           (unsigned long long)s.rejected, (unsigned long long)s.async_tunes);
}

/* --child SHAPE...: one call per shape; a line per shape, then the counters. */
static int child_main(int argc, char **argv) {
    CUcontext ctx;
    gt_devctx *dc;
    if (child_enter(&ctx, &dc) != 0) return 3;
    for (int i = 0; i < argc; i++) {
        shape s;
        if (parse_shape(argv[i], &s) != 0) return 4;
        prob p;
        prob_init(&p, &s);
        gt_status st = prob_run(&p);
        const gt_plan *pl = plan_of(ctx, dc, &p);
        char cfg[64] = "-";
        if (pl) gt_kcfg_format(&pl->kern.cfg, cfg, sizeof cfg);
        printf("shape=%s status=%d ok=%d source=%d config=%s\n", argv[i], st, prob_ok(&p),
               pl ? pl->source : -1, cfg);
        prob_free(&p);
    }
    print_stats();
    gt_release();
    return 0;
}

/* --async SHAPE: background tuning; the first result (default kernel) and the result
 * once the winner is in place must be the same bits. */
static int async_main(const char *text) {
    CUcontext ctx;
    gt_devctx *dc;
    if (child_enter(&ctx, &dc) != 0) return 3;
    gt_set_tune_async(1);
    shape s;
    if (parse_shape(text, &s) != 0) return 4;
    prob p;
    prob_init(&p, &s);
    size_t bytes = (size_t)(s.m * s.n) * 4;
    gt_status st = prob_run(&p);
    const gt_plan *pl = plan_of(ctx, dc, &p);
    int first_source = pl ? pl->source : -1;
    int ok1 = prob_ok(&p);
    float *first = malloc(bytes);
    memcpy(first, p.C, bytes);
    int source = first_source, calls = 1;
    for (double waited = 0; source != GT_SRC_TUNED && waited < 120; waited += 0.05, calls++) {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
        if (prob_run(&p) != GT_SUCCESS) st = GT_INTERNAL;
        pl = plan_of(ctx, dc, &p);
        source = pl ? pl->source : -1;
    }
    gt_cu.memset_d8_async(p.dC, 0, bytes, NULL);
    gt_cu.ctx_synchronize();
    if (prob_run(&p) != GT_SUCCESS) st = GT_INTERNAL;
    int ok2 = prob_ok(&p);
    int same = memcmp(first, p.C, bytes) == 0;
    printf("async status=%d first_source=%d final_source=%d ok1=%d ok2=%d same=%d calls=%d\n", st,
           first_source, source, ok1, ok2, same, calls);
    print_stats();
    free(first);
    prob_free(&p);
    gt_release();
    return 0;
}

/* ===================================================================================
 * Parent side: children, files
 * =================================================================================== */

typedef struct {
    pid_t pid;
    char outf[300], errf[300];
    int code;
    char *out, *err;
} child;


/* Starts `self mode args...` with env ("NAME=VALUE", or "NAME" to unset) on top of the
 * defaults: small tuning budgets, warnings to stderr. */
static void spawn(child *c, const char *tag, const char *const *env, const char *mode,
                  const char *const *args) {
    static int seq;
    memset(c, 0, sizeof *c);
    snprintf(c->outf, sizeof c->outf, "%s/%s.%d.out", root, tag, seq);
    snprintf(c->errf, sizeof c->errf, "%s/%s.%d.err", root, tag, seq++);
    fflush(stdout);
    c->pid = fork();
    if (c->pid == 0) {
        int o = open(c->outf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(c->errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1), dup2(e, 2);
        setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "6", 1);
        setenv("GEMMTUNE_TUNE_BUDGET_S", "2", 1);
        setenv("GEMMTUNE_LOG", "warn", 1);
        unsetenv("GEMMTUNE_CACHE_PATH");
        unsetenv("GEMMTUNE_MODE");
        unsetenv("GEMMTUNE_TUNE_ASYNC");
        for (int i = 0; env && env[i]; i++) {
            char *eq = strchr(env[i], '=');
            if (eq) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
                setenv(name, eq + 1, 1);
            } else {
                unsetenv(env[i]);
            }
        }
        const char *exe = self;
        if (child_uid) {
            const char *call = setgroups(0, NULL) != 0 ? "setgroups"
                               : setgid(child_gid) != 0 ? "setgid"
                               : setuid(child_uid) != 0 ? "setuid"
                                                        : NULL;
            if (call) {
                fprintf(stderr, "child: cannot drop to uid %d: %s: %s\n", (int)child_uid, call,
                        strerror(errno));
                _exit(126);
            }
            exe = child_exe;
        }
        const char *argv[32] = {exe, mode};
        int n = 2;
        for (int i = 0; args && args[i] && n < 31; i++) argv[n++] = args[i];
        argv[n] = NULL;
        execv(exe, (char *const *)argv);
        _exit(127);
    }
}

static void reap(child *c) {
    int status = 0;
    waitpid(c->pid, &status, 0);
    c->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    c->out = slurp(c->outf);
    c->err = slurp(c->errf);
}

static void child_free(child *c) {
    free(c->out), free(c->err);
    c->out = c->err = NULL;
}

static void run(child *c, const char *tag, const char *const *env, const char *const *shapes) {
    spawn(c, tag, env, "--child", shapes);
    reap(c);
    if (c->code != 0)
        printf("# child %s exited %d\n# stdout: %s\n# stderr: %s\n", tag, c->code, c->out, c->err);
}

static unsigned long long stat_of(const child *c, const char *name) {
    const char *line = strstr(c->out, "stats ");
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", name);
    const char *p = line ? strstr(line, pat) : NULL;
    return p ? strtoull(p + strlen(pat), NULL, 10) : ~0ull;
}

/* 1 when the child exited 0 and printed nshapes shape lines, each with status 0 and a
 * right result. */
static int all_ok(const child *c, int nshapes) {
    int n = 0;
    for (const char *p = c->out; (p = strstr(p, "shape=")); p++) {
        const char *end = strchr(p, '\n'), *hit = strstr(p, " status=0 ok=1 ");
        if (!hit || (end && hit > end)) return 0;
        n++;
    }
    return c->code == 0 && n == nshapes;
}

/* The config and source reported for shape (config "" when absent). */
static void shape_result(const child *c, const char *shape_text, char *cfg, size_t size,
                         int *source) {
    char pat[128];
    snprintf(pat, sizeof pat, "shape=%s ", shape_text);
    const char *p = strstr(c->out, pat);
    cfg[0] = 0;
    *source = -1;
    if (!p) return;
    const char *s = strstr(p, "source="), *q = strstr(p, "config=");
    if (s) *source = atoi(s + 7);
    if (q) sscanf(q + 7, "%63s", cfg);
    (void)size;
}


static int copy_file(const char *from, const char *to) {
    char cmd[2 * 4096 + 16];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    return system(cmd);
}


static long long raw_count(const char *path, const char *sql) {
    sqlite3 *c = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_open_v2(path, &c, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(c, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(c);
    return v;
}



/* The seed: S1 and S2 tuned into root/seed.db, the input of every case that reads a
 * tuned cache (each works on its own copy; the seed itself is never changed).
 * cluster_binary_cache builds it and checks how; a case that needs it and finds it
 * missing (cluster_binary_cache not run, or failed) builds it the same way (NEED_SEED),
 * and a seed that cannot be built fails that case with the reason. */
static const char *S1 = "515x99x77:NT", *S2 = "300x200x100:TN";
static char seed[300];
static char seed_cfg1[64], seed_cfg2[64];
static int seed_ready;

/* Tunes S1 and S2 into a new root/seed.db in a fresh process, *c (freed by the caller).
 * 0 when the seed is usable: the process succeeded with right results, tuned both
 * shapes, and the file holds their two winners (seed_cfg1, seed_cfg2); else -1 with the
 * reason in why. */
static int seed_build(child *c, char *why, size_t size) {
    seed_ready = 0;
    seed_cfg1[0] = seed_cfg2[0] = 0;
    snprintf(seed, sizeof seed, "%s/seed.db", root);
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; i++) {
        char path[320];
        snprintf(path, sizeof path, "%s%s", seed, suffix[i]);
        unlink(path);
    }
    char env_cache[400];
    snprintf(env_cache, sizeof env_cache, "GEMMTUNE_CACHE=%s", seed);
    const char *env[] = {env_cache, NULL};
    const char *shapes[] = {S1, S2, NULL};
    run(c, "seed", env, shapes);
    int s1, s2;
    shape_result(c, S1, seed_cfg1, sizeof seed_cfg1, &s1);
    shape_result(c, S2, seed_cfg2, sizeof seed_cfg2, &s2);
    long long winners = raw_count(seed, "SELECT count(*) FROM winners");
    if (!all_ok(c, 2))
        snprintf(why, size, "the process tuning %s and %s failed (exit %d)\nstdout: %s\nstderr: %s",
                 S1, S2, c->code, c->out, c->err);
    else if (s1 != GT_SRC_TUNED || s2 != GT_SRC_TUNED)
        snprintf(why, size, "%s and %s were not both tuned (sources %d, %d)\nstderr: %s", S1, S2,
                 s1, s2, c->err);
    else if (winners != 2)
        snprintf(why, size, "%s holds %lld winners, want 2\nstderr: %s", seed, winners, c->err);
    else
        seed_ready = 1;
    if (!seed_ready) seed_cfg1[0] = seed_cfg2[0] = 0;
    return seed_ready ? 0 : -1;
}

/* The seed, built now unless a case built it already; 0, else -1 with the reason. */
static int ensure_seed(char *why, size_t size) {
    if (seed_ready && access(seed, R_OK) == 0) return 0;
    printf("# building the seed cache (%s, %s) for this case\n", S1, S2);
    child c;
    int rc = seed_build(&c, why, size);
    child_free(&c);
    return rc;
}

/* A case that reads the seed: fails, with the reason, when it cannot be built. */
#define NEED_SEED()                                                                 \
    do {                                                                            \
        char why_[3000];                                                            \
        if (ensure_seed(why_, sizeof why_) != 0) {                                  \
            TAP_CHECK(0, "the seed cache cannot be built: %s", why_);               \
            return;                                                                 \
        }                                                                           \
    } while (0)

/* ===================================================================================
 * Cases
 * =================================================================================== */

static void cluster_binary_cache(void) {
    NEED_GPU();
    /* The first process tunes both shapes: the seed (seed_build). */
    child c;
    char why[3000];
    int built = seed_build(&c, why, sizeof why) == 0;
    TAP_CHECK(built, "the seed cache: %s", why);
    TAP_CHECK(stat_of(&c, "tunes") == 2, "first process: tunes %llu\n%s", stat_of(&c, "tunes"),
              c.out);
    child_free(&c);
    if (!built) return;
    TAP_CHECK(raw_count(seed, "SELECT count(*) FROM cubins") >= 2, "winners' cubins not stored");
    /* The rest runs on a copy, leaving the seed as built for the other cases. */
    char cache[300], env_cache[400];
    snprintf(cache, sizeof cache, "%s/binary.db", root);
    snprintf(env_cache, sizeof env_cache, "GEMMTUNE_CACHE=%s", cache);
    TAP_CHECK(copy_file(seed, cache) == 0, "copy");
    const char *env[] = {env_cache, NULL};
    const char *shapes[] = {S1, S2, NULL};
    int src;

    /* A new process whose shapes are all cached does no NVRTC work. */
    run(&c, "cached", env, shapes);
    TAP_CHECK(all_ok(&c, 2), "second process results\n%s", c.out);
    TAP_CHECK(stat_of(&c, "compiles") == 0 && stat_of(&c, "cubin_hits") == 2 &&
                  stat_of(&c, "tunes") == 0 && stat_of(&c, "cache_hits") == 2,
              "second process must compile nothing: %s", c.out);
    printf("# all cached: compiles=%llu cubin_hits=%llu\n", stat_of(&c, "compiles"),
           stat_of(&c, "cubin_hits"));
    child_free(&c);

    /* A changed driver (forged: the stored binaries say another version) recompiles and
     * keeps the configurations. */
    TAP_CHECK(raw_exec(cache, "UPDATE cubins SET driver = 'older-driver'") == SQLITE_OK, "forge");
    run(&c, "newdriver", env, shapes);
    char cfg[64];
    shape_result(&c, S1, cfg, sizeof cfg, &src);
    TAP_CHECK(all_ok(&c, 2) && stat_of(&c, "tunes") == 0 && stat_of(&c, "cache_hits") == 2 &&
                  stat_of(&c, "compiles") == 2 && stat_of(&c, "cubin_hits") == 0,
              "changed driver: %s", c.out);
    TAP_CHECK(strcmp(cfg, seed_cfg1) == 0 && src == GT_SRC_CACHE, "config kept: %s vs %s", cfg,
              seed_cfg1);
    child_free(&c);

    /* Mode off: the default kernel, no cache at all (the file is not even created). */
    char off_cache[400], env_off[420];
    snprintf(off_cache, sizeof off_cache, "%s/off.db", root);
    snprintf(env_off, sizeof env_off, "GEMMTUNE_CACHE=%s", off_cache);
    const char *envo[] = {env_off, "GEMMTUNE_MODE=off", NULL};
    run(&c, "off", envo, shapes);
    TAP_CHECK(all_ok(&c, 2) && stat_of(&c, "tunes") == 0 && stat_of(&c, "cache_hits") == 0 &&
                  stat_of(&c, "fallbacks") == 2,
              "mode off: %s", c.out);
    TAP_CHECK(access(off_cache, F_OK) != 0, "mode off created a cache file");
    child_free(&c);
}

static void cluster_shipped_file(void) {
    NEED_GPU();
    NEED_SEED();
    /* The shipped file keeps the seed's cubins on purpose: none may be used. */
    char shipped[300], missing[300];
    snprintf(shipped, sizeof shipped, "%s/shipped.db", root);
    snprintf(missing, sizeof missing, "%s/no-such-file.db", root);
    TAP_CHECK(copy_file(seed, shipped) == 0, "copy");
    chmod(shipped, 0444);
    char env_path[700];
    snprintf(env_path, sizeof env_path, "GEMMTUNE_CACHE_PATH=%s:%s", missing, shipped);
    const char *shapes[] = {S1, S2, NULL};

    enum { RANKS = 4 };
    child c[RANKS];
    char env_cache[RANKS][400];
    for (int r = 0; r < RANKS; r++) {
        snprintf(env_cache[r], sizeof env_cache[r], "GEMMTUNE_CACHE=%s/rank%d.db", root, r);
        const char *env[] = {env_cache[r], env_path, NULL};
        spawn(&c[r], "rank", env, "--child", shapes);
    }
    for (int r = 0; r < RANKS; r++) {
        reap(&c[r]);
        char cfg1[64], cfg2[64];
        int s1, s2;
        shape_result(&c[r], S1, cfg1, sizeof cfg1, &s1);
        shape_result(&c[r], S2, cfg2, sizeof cfg2, &s2);
        TAP_CHECK(all_ok(&c[r], 2) && stat_of(&c[r], "tunes") == 0 &&
                      stat_of(&c[r], "cache_hits") == 2,
                  "rank %d: %s", r, c[r].out);
        /* Compiled from the configuration: a binary never comes from a shipped file. */
        TAP_CHECK(stat_of(&c[r], "cubin_hits") == 0 && stat_of(&c[r], "compiles") == 2,
                  "rank %d used a shipped binary: %s", r, c[r].out);
        TAP_CHECK(strcmp(cfg1, seed_cfg1) == 0 && strcmp(cfg2, seed_cfg2) == 0,
                  "rank %d picked %s/%s, shipped %s/%s", r, cfg1, cfg2, seed_cfg1, seed_cfg2);
        /* The missing file on the path: one warning, nothing else. */
        TAP_CHECK(count_substr(c[r].err, "gemmtune warning") == 1 && strstr(c[r].err, missing),
                  "rank %d warnings: %s", r, c[r].err);
        child_free(&c[r]);
    }
    printf("# %d ranks, one shipped file: every rank ran %s and %s\n", RANKS, seed_cfg1, seed_cfg2);
}

static void cluster_tampered_entries(void) {
    NEED_GPU();
    NEED_SEED();
    char bad[300];
    snprintf(bad, sizeof bad, "%s/tampered.db", root);
    TAP_CHECK(copy_file(seed, bad) == 0, "copy");
    /* BM = 999 is outside the table; "_q3" is no parameter. */
    TAP_CHECK(raw_exec(bad, "UPDATE winners SET config = 'f0_999x64x8_w32x16_t4x4_s2_v1_k1_r1' "
                            "WHERE m = 515;"
                            "UPDATE winners SET config = 'f0_64x64x8_w32x16_t4x4_s2_v1_k1_r1_q3' "
                            "WHERE m = 300;") == SQLITE_OK,
              "forge");
    char env_path[400], env_cache[400];
    snprintf(env_path, sizeof env_path, "GEMMTUNE_CACHE_PATH=%s", bad);
    snprintf(env_cache, sizeof env_cache, "GEMMTUNE_CACHE=%s/tampered-user.db", root);
    const char *env[] = {env_cache, env_path, "GEMMTUNE_MODE=cached", NULL};
    const char *shapes[] = {S1, S2, NULL};
    child c;
    run(&c, "tampered", env, shapes);
    int s1, s2;
    char cfg1[64], cfg2[64];
    shape_result(&c, S1, cfg1, sizeof cfg1, &s1);
    shape_result(&c, S2, cfg2, sizeof cfg2, &s2);
    TAP_CHECK(all_ok(&c, 2) && stat_of(&c, "tunes") == 0, "results: %s", c.out);
    /* Rejected, never run: the shapes run the selector's choice from the file's intact
     * timings (or the default kernel), never the forged winners. */
    TAP_CHECK(stat_of(&c, "rejected") >= 2 && s1 != GT_SRC_CACHE && s2 != GT_SRC_CACHE &&
                  cfg1[0] && cfg2[0] && !strstr(cfg1, "999x") && !strstr(cfg2, "_q3"),
              "tampered entries must be rejected: %s", c.out);
    TAP_CHECK(strstr(c.err, "f0_999x64x8_w32x16_t4x4_s2_v1_k1_r1") && strstr(c.err, "_q3") &&
                  strstr(c.err, "rejected"),
              "rejections must be named: %s", c.err);
    child_free(&c);
}

static void cluster_cached_mode_nearest(void) {
    NEED_GPU();
    NEED_SEED();
    /* The seed shipped read-only: this case's own copy. */
    char shipped[300], env_path[400];
    snprintf(shipped, sizeof shipped, "%s/nearest-shipped.db", root);
    TAP_CHECK(copy_file(seed, shipped) == 0, "copy");
    chmod(shipped, 0444);
    snprintf(env_path, sizeof env_path, "GEMMTUNE_CACHE_PATH=%s", shipped);
    /* Same alignment class as S1 (an odd M and N: 4 bytes), a little larger. */
    const char *near = "517x101x80:NT", *none = "64x64x64:TT";
    const char *shapes[] = {near, none, NULL};
    enum { RANKS = 3 };
    child c[RANKS];
    char env_cache[RANKS][400];
    for (int r = 0; r < RANKS; r++) {
        snprintf(env_cache[r], sizeof env_cache[r], "GEMMTUNE_CACHE=%s/cached%d.db", root, r);
        const char *env[] = {env_cache[r], env_path, "GEMMTUNE_MODE=cached", NULL};
        spawn(&c[r], "cachedmode", env, "--child", shapes);
    }
    char none_cfg[RANKS][64];
    for (int r = 0; r < RANKS; r++) {
        reap(&c[r]);
        char cfg[64];
        int src, src2;
        shape_result(&c[r], near, cfg, sizeof cfg, &src);
        shape_result(&c[r], none, none_cfg[r], sizeof none_cfg[r], &src2);
        TAP_CHECK(all_ok(&c[r], 2) && stat_of(&c[r], "tunes") == 0, "rank %d: %s", r, c[r].out);
        /* The selector: the close tuned shape's measured winner, as a generic kernel
         * (its configuration with "_g1": one binary for every shape of the class). */
        char want[80];
        size_t l = strlen(seed_cfg1);
        snprintf(want, sizeof want, "%s%s", seed_cfg1,
                 l > 3 && strcmp(seed_cfg1 + l - 3, "_g1") == 0 ? "" : "_g1");
        TAP_CHECK(src == GT_SRC_NEAREST && strcmp(cfg, want) == 0,
                  "rank %d: %s should run %s's winner %s as %s, got %s (source %d)", r, near, S1,
                  seed_cfg1, want, cfg, src);
        /* No tuned shape of its class: the cost model's choice, not the default kernel, and
         * the same on every rank. */
        TAP_CHECK(src2 == GT_SRC_NEAREST && none_cfg[r][0], "rank %d: %s: source %d", r, none, src2);
        TAP_CHECK(r == 0 || strcmp(none_cfg[r], none_cfg[0]) == 0, "rank %d chose %s, rank 0 %s",
                  r, none_cfg[r], none_cfg[0]);
        child_free(&c[r]);
    }
}

static void cluster_async_tuning(void) {
    NEED_GPU();
    char env_cache[400];
    snprintf(env_cache, sizeof env_cache, "GEMMTUNE_CACHE=%s/async.db", root);
    const char *env[] = {env_cache, NULL};
    const char *args[] = {"611x203x97:NN", NULL};
    child c;
    spawn(&c, "async", env, "--async", args);
    reap(&c);
    printf("# %s", c.out);
    TAP_CHECK(c.code == 0 && strstr(c.out, "async status=0 "), "async child: %d %s %s", c.code,
              c.out, c.err);
    TAP_CHECK(strstr(c.out, "first_source=4 ") || strstr(c.out, "first_source=2 "),
              "first call must run the default kernel pending tuning: %s", c.out);
    TAP_CHECK(strstr(c.out, "final_source=2 "), "the winner was never picked up: %s", c.out);
    TAP_CHECK(strstr(c.out, "ok1=1 ok2=1 same=1"), "results must be identical: %s", c.out);
    TAP_CHECK(stat_of(&c, "async") == 1, "one background tuning: %s", c.out);
    child_free(&c);
}

/* A child on a bad cache file: success, right result, exactly one warning. */
static void expect_one_warning(const char *tag, const char *cache, const char *extra_env,
                               const char *shape_text) {
    char env_cache[800];
    snprintf(env_cache, sizeof env_cache, "GEMMTUNE_CACHE=%s", cache);
    const char *env[] = {env_cache, "GEMMTUNE_CACHE_TIMEOUT_MS=300", extra_env, NULL};
    const char *shapes[] = {shape_text, NULL};
    child c;
    run(&c, tag, env, shapes);
    TAP_CHECK(all_ok(&c, 1), "%s: call must succeed with the right result: %s", tag, c.out);
    TAP_CHECK(count_substr(c.err, "gemmtune warning") == 1, "%s: want one warning, got:\n%s", tag,
              c.err);
    printf("# %s: %s", tag, c.err);
    child_free(&c);
}

static void cluster_bad_cache_files(void) {
    NEED_GPU();
    NEED_SEED();
    char path[700];
    size_t n;
    unsigned char *before;

    /* Truncated: the first two pages of a good file. */
    snprintf(path, sizeof path, "%s/truncated.db", root);
    TAP_CHECK(copy_file(seed, path) == 0, "copy to %s", path);
    TAP_CHECK(truncate(path, 8192) == 0, "truncate");
    expect_one_warning("truncated", path, NULL, S1);

    /* Random bytes: refused, left as they were. */
    snprintf(path, sizeof path, "%s/random.db", root);
    unsigned char junk[65536];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(frand() * 127 + 128);
    FILE *f = fopen(path, "wb");
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    expect_one_warning("random", path, NULL, S1);
    TAP_CHECK(same_bytes(path, junk, sizeof junk), "random file changed");

    /* A newer schema: refused, untouched. */
    snprintf(path, sizeof path, "%s/newer.db", root);
    TAP_CHECK(copy_file(seed, path) == 0, "copy to %s", path);
    raw_exec(path, "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    before = read_all(path, &n);
    expect_one_warning("newer", path, NULL, S1);
    TAP_CHECK(same_bytes(path, before, n), "newer-schema file changed");
    free(before);

    /* Locked by another process beyond the busy timeout (300 ms here). */
    snprintf(path, sizeof path, "%s/locked.db", root);
    TAP_CHECK(copy_file(seed, path) == 0, "copy to %s", path);
    int pipefd[2];
    TAP_CHECK(pipe(pipefd) == 0, "pipe");
    pid_t holder = fork();
    if (holder == 0) {
        sqlite3 *c = NULL;
        sqlite3_open(path, &c);
        int rc = sqlite3_exec(c, "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; "
                                 "UPDATE meta SET value = value WHERE key = 'schema_version';",
                              NULL, NULL, NULL);
        char ok = rc == SQLITE_OK ? 'y' : 'n';
        if (write(pipefd[1], &ok, 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    char ready = 0;
    TAP_CHECK(read(pipefd[0], &ready, 1) == 1 && ready == 'y', "lock holder not ready");
    expect_one_warning("locked", path, NULL, "333x111x55:NN");
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    close(pipefd[0]), close(pipefd[1]);
    TAP_CHECK(raw_count(path, "SELECT count(*) FROM winners") == 2,
              "locked file lost its entries");

    /* A directory that cannot be written. Root ignores permissions, so there the path
     * runs through a regular file instead: the directory cannot be created at all. */
    if (geteuid() != 0) {
        char dir[300];
        snprintf(dir, sizeof dir, "%s/rodir", root);
        mkdir(dir, 0555);
        snprintf(path, sizeof path, "%s/cache.db", dir);
    } else {
        char file[300];
        snprintf(file, sizeof file, "%s/plainfile", root);
        FILE *pf = fopen(file, "w");
        if (pf) fclose(pf);
        snprintf(path, sizeof path, "%s/sub/cache.db", file);
        printf("# running as root: the unwritable directory is a path through a file\n");
    }
    expect_one_warning("rodir", path, NULL, S1);

    /* Full: the file may not grow past a cap one MiB above its size, and is filled to it
     * before the child runs. */
    snprintf(path, sizeof path, "%s/full.db", root);
    TAP_CHECK(copy_file(seed, path) == 0, "copy to %s", path);
    struct stat sb;
    char cap[32], cap_env[64];
    snprintf(cap, sizeof cap, "%lld", stat(path, &sb) == 0 ? (long long)(sb.st_size >> 20) + 1 : 1);
    snprintf(cap_env, sizeof cap_env, "GEMMTUNE_CACHE_MAX_MB=%s", cap);
    setenv("GEMMTUNE_CACHE_MAX_MB", cap, 1);
    gt_db *db = NULL;
    char msg[512];
    int filled = 0;
    if (gt_db_open(path, 0, 0, &db, msg, sizeof msg) == GT_SUCCESS) {
        gt_key key;
        memset(&key, 0, sizeof key);
        snprintf(key.device, sizeof key.device, "filler");
        key.cc_major = 9, key.sm_count = 1, key.align = 16, key.n = key.k = 8;
        gt_db_winner w;
        memset(&w, 0, sizeof w);
        snprintf(w.config, sizeof w.config, "f0_64x64x8_w32x16_t4x4_s2_v2_k1_r1");
        gt_db_timing t[40];
        memset(t, 0, sizeof t);
        for (int i = 0; i < 40; i++) {
            snprintf(t[i].config, sizeof t[i].config, "cfg%d", i);
            snprintf(t[i].status, sizeof t[i].status, "ok");
            memset(t[i].message, 'x', sizeof t[i].message - 1);
        }
        for (int i = 0; i < 10000; i++) {
            key.m = 1000 + i;
            if (gt_db_store(db, &key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, t, 40) !=
                GT_SUCCESS)
                break;
            filled++;
        }
        TAP_CHECK(strstr(gt_db_errmsg(db), "full"), "filler stopped for another reason: %s",
                  gt_db_errmsg(db));
        gt_db_close(db);
    }
    unsetenv("GEMMTUNE_CACHE_MAX_MB");
    TAP_CHECK(filled > 0, "could not fill: %s", msg);
    expect_one_warning("full", path, cap_env, "333x111x56:NN");
    /* The child's winner may fit where its cubin did not: at least the old entries. */
    TAP_CHECK(raw_count(path, "SELECT count(*) FROM winners") >= filled + 2,
              "full file must keep its %d entries: %lld", filled + 2,
              raw_count(path, "SELECT count(*) FROM winners"));
    sqlite3 *c = NULL;
    sqlite3_stmt *st = NULL;
    char check[64] = "";
    if (sqlite3_open_v2(path, &c, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(c, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        snprintf(check, sizeof check, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(c);
    TAP_CHECK(strcmp(check, "ok") == 0, "full file integrity: %s", check);
}

/* Whether this (root) process can drop to uid/gid as spawn does: 1; 0 when the same calls
 * fail with EPERM or EINVAL (no capability to change ids here, or the ids are not mapped
 * into this user namespace), the one case where a root run cannot test as another user;
 * -1 on anything else. The failing call and its error go to why. */
static int can_drop_to(uid_t uid, gid_t gid, char *why, size_t size) {
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(why, size, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        int msg[2] = {0, 0};
        if (setgroups(0, NULL) != 0) msg[0] = 1, msg[1] = errno;
        else if (setgid(gid) != 0) msg[0] = 2, msg[1] = errno;
        else if (setuid(uid) != 0) msg[0] = 3, msg[1] = errno;
        _exit(write(fd[1], msg, sizeof msg) == (ssize_t)sizeof msg ? 0 : 1);
    }
    close(fd[1]);
    int msg[2] = {-1, 0};
    ssize_t n = pid > 0 ? read(fd[0], msg, sizeof msg) : -1;
    close(fd[0]);
    if (pid > 0) waitpid(pid, NULL, 0);
    if (n != (ssize_t)sizeof msg || msg[0] < 0 || msg[0] > 3) {
        snprintf(why, size, "the probe process did not report (%s)",
                 pid > 0 ? "no answer" : strerror(errno));
        return -1;
    }
    if (msg[0] == 0) return 1;
    static const char *const calls[] = {"", "setgroups", "setgid", "setuid"};
    snprintf(why, size, "%s to uid %d gid %d: %s", calls[msg[0]], (int)uid, (int)gid,
             strerror(msg[1]));
    return msg[1] == EPERM || msg[1] == EINVAL ? 0 : -1;
}

/* Read-only files as a user who cannot write them: a shipped cache, root-owned 0444 in a
 * 0555 directory, is read (no -shm can be made beside it: the immutable path); a user
 * cache in a 0555 directory is bypassed with one warning. A root test run drops its
 * children to "nobody" so that the permissions hold; it skips only where there is no
 * such user, or where a probe shows that ids cannot be changed at all. A child that
 * cannot set up the GPU, or cannot drop, is a failure with its stderr. */
static void cluster_readonly_files(void) {
    NEED_GPU();
    struct passwd *pw = NULL;
    if (geteuid() == 0) {
        pw = getpwnam("nobody");
        if (!pw) TAP_SKIP("running as root and there is no user 'nobody' to drop to");
        char why[200];
        int can = can_drop_to(pw->pw_uid, pw->pw_gid, why, sizeof why);
        if (can == 0) TAP_SKIP("running as root where ids cannot be changed: %s", why);
        TAP_CHECK(can == 1, "cannot tell whether this root run can drop to 'nobody': %s", why);
        if (can != 1) return;
    }
    NEED_SEED();
    char ro[300], shipped[400], userdir[300];
    snprintf(ro, sizeof ro, "%s/ro", root);
    snprintf(shipped, sizeof shipped, "%s/shipped.db", ro);
    snprintf(userdir, sizeof userdir, "%s/home", root);
    mkdir(ro, 0755);
    chmod(ro, 0755);
    mkdir(userdir, 0777);
    chmod(userdir, 0777);
    unlink(shipped);
    TAP_CHECK(copy_file(seed, shipped) == 0, "copy");
    chmod(shipped, 0444);
    chmod(ro, 0555);
    if (pw) {
        snprintf(child_exe, sizeof child_exe, "%s/test_cluster", root);
        TAP_CHECK(copy_file(self, child_exe) == 0, "copy %s to %s", self, child_exe);
        chmod(child_exe, 0755);
        chmod(root, 0755);
        child_uid = pw->pw_uid, child_gid = pw->pw_gid;
    }
    char env_path[500], env_user[400], env_rouser[400];
    snprintf(env_path, sizeof env_path, "GEMMTUNE_CACHE_PATH=%s", shipped);
    snprintf(env_user, sizeof env_user, "GEMMTUNE_CACHE=%s/user.db", userdir);
    snprintf(env_rouser, sizeof env_rouser, "GEMMTUNE_CACHE=%s/user.db", ro);
    const char *shapes[] = {S1, S2, NULL};
    const char *env1[] = {env_user, env_path, "HOME=/nonexistent", NULL};
    int uid = (int)(child_uid ? child_uid : geteuid());
    child c;
    run(&c, "roshipped", env1, shapes);
    if (c.code == 3 || c.code == 126) {
        /* The child's own line says which: GPU set-up (3) or dropping privileges (126). */
        TAP_CHECK(0, "a child as uid %d could not %s (exit %d): %s", uid,
                  c.code == 3 ? "set up the GPU" : "drop privileges, though the probe could",
                  c.code, c.err);
        child_free(&c);
        goto done;
    }
    TAP_CHECK(all_ok(&c, 2) && stat_of(&c, "cache_hits") == 2 && stat_of(&c, "tunes") == 0,
              "read-only shipped file must be read: %s %s", c.out, c.err);
    TAP_CHECK(count_substr(c.err, "gemmtune warning") == 0, "no warning expected: %s", c.err);
    child_free(&c);
    const char *env2[] = {env_rouser, "HOME=/nonexistent", NULL};
    const char *one[] = {S1, NULL};
    run(&c, "rouser", env2, one);
    TAP_CHECK(all_ok(&c, 1), "user cache in a read-only directory: %s %s", c.out, c.err);
    TAP_CHECK(count_substr(c.err, "gemmtune warning") == 1, "want one warning: %s", c.err);
    printf("# as uid %d: %s", uid, c.err);
    child_free(&c);
done:
    child_uid = 0;
    chmod(ro, 0755);
}

static int winner_verified(const gt_key *key, const char *src_hash, int lib_major,
                           const gt_db_winner *w, void *user) {
    (void)src_hash, (void)lib_major, (void)key;
    struct {
        int n, bad;
        char path[300];
    } *acc = user;
    acc->n++;
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM timings WHERE m = %lld AND n = %lld AND k = %lld AND "
             "config = '%s' AND status = 'ok'",
             (long long)key->m, (long long)key->n, (long long)key->k, w->config);
    if (raw_count(acc->path, sql) != 1) acc->bad++;
    return 0;
}

static void cluster_eight_processes(void) {
    NEED_GPU();
    const char *P[] = {"96x80x72:NN", "200x64x40:NT", "72x300x56:TN", "128x128x32:TT"};
    char cache[300], env_cache[400];
    snprintf(cache, sizeof cache, "%s/shared.db", root);
    snprintf(env_cache, sizeof env_cache, "GEMMTUNE_CACHE=%s", cache);
    const char *env[] = {env_cache, NULL};
    child c[8];
    for (int i = 0; i < 8; i++) {
        const char *shapes[] = {P[i % 4], P[(i + 1) % 4], P[(i + 2) % 4], NULL};
        spawn(&c[i], "eight", env, "--child", shapes);
    }
    for (int i = 0; i < 8; i++) {
        reap(&c[i]);
        TAP_CHECK(all_ok(&c[i], 3), "process %d: %s %s", i, c[i].out, c[i].err);
        TAP_CHECK(!strstr(c[i].err, "locked") && !strstr(c[i].err, "bypassed"),
                  "process %d saw the cache fail: %s", i, c[i].err);
        child_free(&c[i]);
    }
    struct {
        int n, bad;
        char path[300];
    } acc = {0, 0, ""};
    snprintf(acc.path, sizeof acc.path, "%s", cache);
    gt_db *db = NULL;
    char msg[512];
    TAP_CHECK(gt_db_open(cache, 1, 0, &db, msg, sizeof msg) == GT_SUCCESS, "%s", msg);
    if (db) {
        gt_db_list(db, winner_verified, &acc);
        gt_db_close(db);
    }
    TAP_CHECK(acc.n == 4 && acc.bad == 0, "want 4 keys, each with one verified winner: %d keys, "
              "%d without an ok timing of the winner", acc.n, acc.bad);
}

/* "stats tunes=N" of a child's output (-1 when absent). */
static int child_tunes(const child *c) {
    const char *p = c->out ? strstr(c->out, "stats tunes=") : NULL;
    return p ? atoi(p + 12) : -1;
}

/* Reaps n children that each ran `shape` once; checks every one succeeded with the same
 * configuration and that `want_tunes` tunings happened among them. */
static void same_kernel_everywhere(child *c, int n, const char *shape, int want_tunes,
                                   const char *label) {
    char first[64] = "";
    int tunes = 0, same = 1;
    for (int i = 0; i < n; i++) {
        reap(&c[i]);
        TAP_CHECK(all_ok(&c[i], 1), "%s: process %d: %s %s", label, i, c[i].out, c[i].err);
        char cfg[64];
        int source;
        shape_result(&c[i], shape, cfg, sizeof cfg, &source);
        if (i == 0) snprintf(first, sizeof first, "%s", cfg);
        else if (strcmp(cfg, first) != 0) same = 0;
        TAP_CHECK(strcmp(cfg, first) == 0 && cfg[0], "%s: process %d runs '%s', process 0 '%s'",
                  label, i, cfg, first);
        tunes += child_tunes(&c[i]);
        child_free(&c[i]);
    }
    TAP_CHECK(tunes == want_tunes, "%s: %d tunings among %d processes, want %d", label, tunes, n,
              want_tunes);
    printf("# %s: %d processes on %s, %d tuning(s)\n", label, n, same ? first : "(differ)", tunes);
}

/* Rows of the claims table of the file at path (0 when it has none or cannot be read). */
static int claim_rows(const char *path) {
    sqlite3 *db = NULL;
    int n = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, "SELECT count(*) FROM claims", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return n;
}

static void cluster_one_kernel_per_key(void) {
    NEED_GPU();
    char cache[300], env_cache[400];
    snprintf(cache, sizeof cache, "%s/claims.db", root);
    snprintf(env_cache, sizeof env_cache, "GEMMTUNE_CACHE=%s", cache);
    /* Eight processes meet one new shape at once. */
    {
        const char *env[] = {env_cache, NULL};
        const char *shapes[] = {"136x72x88:NT", NULL};
        child c[8];
        for (int i = 0; i < 8; i++) spawn(&c[i], "claim", env, "--child", shapes);
        same_kernel_everywhere(c, 8, "136x72x88:NT", 1, "eight at once");
    }
    /* The claiming tuner (a long budget) killed while it tunes: seven others, started
     * meanwhile, wait for its claim to expire (4 s), then one tunes and the rest adopt. */
    {
        const char *slow_env[] = {env_cache, "GEMMTUNE_TUNE_CLAIM_S=4", "GEMMTUNE_TUNE_BUDGET_S=120",
                                  "GEMMTUNE_TUNE_MAX_CANDIDATES=400", NULL};
        const char *env[] = {env_cache, "GEMMTUNE_TUNE_CLAIM_S=4", NULL};
        const char *shapes[] = {"152x88x72:TN", NULL};
        child k;
        spawn(&k, "claimkill", slow_env, "--child", shapes);
        int claimed = 0;
        for (int w = 0; w < 600 && !(claimed = claim_rows(cache) > 0); w++) {
            struct timespec ts = {0, 50000000};
            nanosleep(&ts, NULL);
        }
        TAP_CHECK(claimed, "the slow tuner never claimed the key");
        child c[7];
        for (int i = 0; i < 7; i++) spawn(&c[i], "claimwait", env, "--child", shapes);
        struct timespec ts = {0, 500000000};
        nanosleep(&ts, NULL);
        kill(k.pid, SIGKILL);
        reap(&k);
        TAP_CHECK(k.code == 128 + SIGKILL, "the slow tuner ended with %d, not SIGKILL: %s", k.code,
                  k.err);
        child_free(&k);
        double t0 = (double)time(NULL);
        same_kernel_everywhere(c, 7, "152x88x72:TN", 1, "claimer killed");
        printf("# claimer killed: the others done %.0f s after the kill\n", (double)time(NULL) - t0);
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--child") == 0) return child_main(argc - 2, argv + 2);
    if (argc > 2 && strcmp(argv[1], "--async") == 0) return async_main(argv[2]);
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = 0;
    snprintf(root, sizeof root, "/tmp/gt_cluster_XXXXXX");
    if (!mkdtemp(root)) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    gpu_state = gpu_probe(no_gpu_reason, sizeof no_gpu_reason, 0);
    TAP_RUN(cluster_binary_cache);
    TAP_RUN(cluster_shipped_file);
    TAP_RUN(cluster_tampered_entries);
    TAP_RUN(cluster_cached_mode_nearest);
    TAP_RUN(cluster_async_tuning);
    TAP_RUN(cluster_bad_cache_files);
    TAP_RUN(cluster_readonly_files);
    TAP_RUN(cluster_eight_processes);
    TAP_RUN(cluster_one_kernel_per_key);
    char rm[256];
    snprintf(rm, sizeof rm, "chmod -R u+w %s; rm -rf %s", root, root);
    if (system(rm) != 0) printf("# could not remove %s\n", root);
    return tap_done();
}
