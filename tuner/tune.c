/*
 * tune.c: the tuner (tune.h). Owns, for the duration of one run, the compiled images,
 * the loaded candidate modules and the arena of scratch device memory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tune.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "cu.h"
#include "env.h"
#include "log.h"
#include "measure.h"
#include "modelfix.h"
#include "pool.h"
#include "load.h"
#include "rtc.h"
#include "verify.h"

#define MAX_ROT 8
#define MAX_REPS 25
#define MIN_REPS 3
/* Timing of one candidate aims at this much GPU time. */
#define TARGET_US_PER_CAND 20000.0
/* Wall-clock budget of compiling and timing one shape: candidates not compiled and
 * timed by then are dropped (best ranked first), so a cold shape costs about this. */
#define DEFAULT_BUDGET_S 1.5

static const char *result_names[] = {"ok", "compile_failed", "load_failed", "launch_failed",
                                     "verify_failed", "not_timed"};
const char *gt_tune_result_name(int status) {
    return status >= 0 && status <= GT_TR_NOT_TIMED ? result_names[status] : "?";
}

static _Atomic size_t api_mem_limit;

void gt_set_tune_memory_limit(size_t bytes) { api_mem_limit = bytes; }

void gt_tune_opts_default(gt_tune_opts *o) {
    if (!o->mem_limit) o->mem_limit = api_mem_limit;
    if (o->max_candidates <= 0) o->max_candidates = (int)gt_env_long(GT_ENV_TUNE_MAX_CANDIDATES, 32);
    if (o->budget_s <= 0) o->budget_s = gt_env_double(GT_ENV_TUNE_BUDGET_S, DEFAULT_BUDGET_S);
    if (o->threads <= 0) o->threads = (int)gt_env_long(GT_ENV_TUNE_THREADS, 0);
    if (!o->mem_limit) o->mem_limit = (size_t)gt_env_long(GT_ENV_TUNE_MEM_MB, 0) << 20;
    if (!o->verify_all) o->verify_all = gt_env_long(GT_ENV_TUNE_VERIFY_ALL, 0) == 1;
}

/* ===== fault injection (tests) ===== */

/* GEMMTUNE_TEST_FAULT="compile:I,launch:J,slow:L,<mutation>:K,..." (a test and diagnosis
 * aid, base/env.h) makes candidate I (rank order) fail to compile, candidate J fail to
 * launch (an invalid block size, a real launch error) and candidate L's compile take 2 s
 * longer, so tests can show that each failure is recorded and never chosen. The
 * mutations make the K-th candidate checked (fastest first) a wrong kernel, which the
 * verifier must reject (mutate() says how each is made):
 *   verify:K   alpha off by 1%
 *   corner:K   the last output, C(m-1, n-1), holds its neighbour's value
 *   droprow:K  the last row of tiles (a partial one where BM does not divide M) unwritten
 *   coarse:K   the inputs rounded to the next coarser type first (f32 to tf32, f64 to
 *              f32, tf32 to bf16, f16 to 8 significant bits, bf16 to 4)
 *   rerun:K    the second run of a verified kernel off by one bit (rerun_same), as a
 *              kernel whose result varies run to run gives
 * Read once per tuning run, on the calling thread (faults_read), into the run's copy:
 * compile threads may outlive the call, and getenv beside a test's unsetenv is a data
 * race. */
#define FAULTS_MAX 128
static void faults_read(char *spec) {
    const char *v = gt_env(GT_ENV_TEST_FAULT);
    snprintf(spec, FAULTS_MAX, "%s", v ? v : "");
}
static int fault(const char *spec, const char *what, int i) {
    size_t wl = strlen(what);
    for (const char *p = spec; p && *p;) {
        if (strncmp(p, what, wl) == 0 && p[wl] == ':' && atoi(p + wl + 1) == i) return 1;
        p = strchr(p, ',');
        if (p) p++;
    }
    return 0;
}

/* ===== compile ===== */

/* Compiling runs on a pool driven by its own thread while the tuning thread prepares the
 * arena and times each candidate as soon as it is compiled (the pool takes them in rank
 * order; timing takes the first finished in rank order), so tuning costs about the
 * longer of compiling and timing, not their sum.
 *
 * The job belongs to both threads and the last one out frees it: when the budget is
 * spent the tuning thread takes what has compiled and returns, and compiles still under
 * way (NVRTC cannot be interrupted; one took up to 0.6 s past the budget on the H100)
 * finish in the background into the job's own arrays, never into the caller's report.
 * gt_tune_wait_compiles() waits for those (gt_release, and at exit, before NVRTC's own
 * teardown). Under lock: done[i] (candidate i's compile has finished: images[i],
 * failed[i] and msg[i] are then final) and refs. */
typedef struct {
    gt_key key;           /* copies: the job may outlive the call */
    char faults[FAULTS_MAX];
    gt_kcfg *cfgs;
    int arch, n, threads;
    gt_rtc_result *images;
    unsigned char *done, *failed;
    char (*msg)[256];
    pthread_mutex_t lock;
    pthread_cond_t cond;
    _Atomic int stop;     /* set when the budget is spent: compiles not started are skipped */
    double deadline;      /* end of the budget (0: none) */
    double t0;            /* clock when tuning began (the compile timeline's zero) */
    double compile_max;   /* seconds of the longest compile finished so far */
    double last_done;     /* clock when the latest compile finished */
    int refs;             /* the tuning thread and the compiler thread */
} compile_job;

/* Compile threads of tuning runs that have returned, for gt_tune_wait_compiles. */
static pthread_mutex_t left_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t left_cond = PTHREAD_COND_INITIALIZER;
static int left_running;

static void job_free(compile_job *job) {
    for (int i = 0; i < job->n; i++) gt_rtc_result_free(&job->images[i]);
    free(job->images), free(job->done), free(job->failed), free(job->msg), free(job->cfgs);
    pthread_mutex_destroy(&job->lock);
    pthread_cond_destroy(&job->cond);
    free(job);
}

/* Drops one thread's reference; the last frees the job. */
static void job_release(compile_job *job) {
    pthread_mutex_lock(&job->lock);
    int last = --job->refs == 0;
    pthread_mutex_unlock(&job->lock);
    if (last) job_free(job);
}

static compile_job *job_new(const gt_key *key, const gt_tune_cand *cands, int n, int arch,
                            int threads, double t0, double deadline, const char *faults) {
    compile_job *job = calloc(1, sizeof *job);
    if (!job) return NULL;
    job->key = *key;
    snprintf(job->faults, sizeof job->faults, "%s", faults);
    job->n = n, job->arch = arch, job->threads = threads, job->deadline = deadline;
    job->t0 = t0;
    job->refs = 2;
    job->cfgs = calloc((size_t)n, sizeof *job->cfgs);
    job->images = calloc((size_t)n, sizeof *job->images);
    job->done = calloc((size_t)n, 1);
    job->failed = calloc((size_t)n, 1);
    job->msg = calloc((size_t)n, sizeof *job->msg);
    pthread_mutex_init(&job->lock, NULL);
    pthread_cond_init(&job->cond, NULL);
    if (!job->cfgs || !job->images || !job->done || !job->failed || !job->msg) {
        job_free(job);
        return NULL;
    }
    for (int i = 0; i < n; i++) job->cfgs[i] = cands[i].cfg;
    return job;
}

/* A compile that could end after the deadline, judged by the longest of those finished
 * so far, is not started: the tuning thread could not time it. Candidate 0 always
 * compiles (there must be a winner). */
static int compile_too_late(compile_job *job, int i) {
    if (i == 0 || job->deadline <= 0) return 0;
    pthread_mutex_lock(&job->lock);
    double longest = job->compile_max;
    pthread_mutex_unlock(&job->lock);
    return longest > 0 && gt_measure_now_s() + longest > job->deadline;
}

static void compile_one(int i, void *user) {
    compile_job *job = user;
    double start = gt_measure_now_s();
    gt_rtc_result res;
    memset(&res, 0, sizeof res);
    int failed = 0, cached = 0;
    char msg[256] = "";
    if (job->stop || compile_too_late(job, i)) {
        /* Beyond the budget: left NOT_TIMED, never compiled. */
        snprintf(msg, sizeof msg, "not compiled: the tuning budget was spent");
    } else if (fault(job->faults, "compile", i)) {
        failed = 1;
        snprintf(msg, sizeof msg, "injected compile fault");
    } else {
        /* The binary cache's cubin when it holds one (a winner tuned before), else NVRTC. */
        gt_program p;
        gt_kern_program(&job->cfgs[i], &job->key, &p);
        if (gt_load_image(&p, job->arch, 1, &res, &cached) != GT_SUCCESS) {
            failed = 1;
            snprintf(msg, sizeof msg, "%s", res.error);
        }
    }
    if (!failed && res.image && fault(job->faults, "slow", i)) {
        /* Tests: a compile that ends long after the budget. */
        struct timespec ts = {2, 0};
        nanosleep(&ts, NULL);
    }
    double end = gt_measure_now_s();
    if (res.image) {
        /* The compile timeline, for the budget's tuning (seconds after the budget began). */
        char text[64];
        gt_kcfg_format(&job->cfgs[i], text, sizeof text);
        gt_log(GT_LOG_DEBUG, "candidate %d %s %s: %.3f to %.3f s", i, text,
               cached ? "from the binary cache" : "compiled", start - job->t0, end - job->t0);
    }
    pthread_mutex_lock(&job->lock);
    job->images[i] = res;
    job->failed[i] = (unsigned char)failed;
    memcpy(job->msg[i], msg, sizeof msg);
    if (res.image && end - start > job->compile_max) job->compile_max = end - start;
    if (res.image || failed) job->last_done = end;
    job->done[i] = 1;
    pthread_cond_broadcast(&job->cond);
    pthread_mutex_unlock(&job->lock);
}

static void *compile_all(void *arg) {
    compile_job *job = arg;
    gt_pool_run(job->n, job->threads, compile_one, job);
    job_release(job);
    pthread_mutex_lock(&left_lock);
    left_running--;
    pthread_cond_broadcast(&left_cond);
    pthread_mutex_unlock(&left_lock);
    return NULL;
}

void gt_tune_wait_compiles(void) {
    pthread_mutex_lock(&left_lock);
    while (left_running > 0) pthread_cond_wait(&left_cond, &left_lock);
    pthread_mutex_unlock(&left_lock);
}

/* At exit, before NVRTC's own teardown. Exit handlers run in the reverse order of
 * their registration, and so do the destructors of NVRTC's statics that are built on
 * first use, inside its first compiles: the handler is registered when a run first
 * leaves compiles running (compile_leave), after that run's finished compiles, not
 * before the first compile of the process. */
static void wait_compiles_at_exit(void) { gt_tune_wait_compiles(); }
static pthread_once_t at_exit_once = PTHREAD_ONCE_INIT;
static void register_at_exit(void) { atexit(wait_compiles_at_exit); }

/* Starts the compiler thread (detached). When no thread can be started, compiles
 * everything on the calling thread first. */
static void compile_start(compile_job *job) {
    pthread_mutex_lock(&left_lock);
    left_running++;
    pthread_mutex_unlock(&left_lock);
    pthread_t t;
    pthread_attr_t attr;
    int ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&t, &attr, compile_all, job) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!ok) compile_all(job);
}

/* Moves candidate i's compile outcome into the report and the tuning thread's images
 * (once: a moved image is NULL in the job). Under job->lock, with done[i] set. */
static void collect(compile_job *job, int i, gt_tune_cand *cands, gt_rtc_result *images) {
    if (job->failed[i]) {
        cands[i].status = GT_TR_COMPILE_FAILED;
        snprintf(cands[i].message, sizeof cands[i].message, "%s", job->msg[i]);
    } else if (job->images[i].image) {
        cands[i].compiled = 1;
        images[i] = job->images[i];
        memset(&job->images[i], 0, sizeof job->images[i]);
    } else if (!cands[i].message[0]) {
        snprintf(cands[i].message, sizeof cands[i].message, "%s", job->msg[i]);
    }
}

/* The first candidate in rank order whose compile has finished and that is not yet
 * taken: waits until one is, or the clock passes deadline (CLOCK_MONOTONIC seconds; 0:
 * none). Marks it taken, collects it and returns its index; -1 when the deadline passed
 * first or every candidate is taken. Timing follows the compiles as they finish, so a
 * slow compile (a seed, a large tile) holds up nothing behind it. */
static int wait_next(compile_job *job, unsigned char *taken, double deadline,
                     gt_tune_cand *cands, gt_rtc_result *images) {
    pthread_mutex_lock(&job->lock);
    int next = -1;
    for (;;) {
        int any_left = 0;
        for (int i = 0; i < job->n && next < 0; i++) {
            if (taken[i]) continue;
            any_left = 1;
            if (job->done[i]) next = i;
        }
        if (next >= 0 || !any_left) break;
        if (deadline <= 0) {
            pthread_cond_wait(&job->cond, &job->lock);
            continue;
        }
        double left = deadline - gt_measure_now_s();
        if (left <= 0) break;
        /* The condition variable waits on CLOCK_REALTIME; only the interval matters. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + (left < 0.05 ? left : 0.05);
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&job->cond, &job->lock, &ts);
    }
    if (next >= 0) {
        taken[next] = 1;
        collect(job, next, cands, images);
    }
    pthread_mutex_unlock(&job->lock);
    return next;
}

/* Ends the tuning thread's part in the job: collects every compile that has finished
 * (before anything reorders cands and images: the job's arrays are in rank order) and
 * drops the reference; compiles still under way finish in the background. Returns how
 * many were still under way; *last_done: the clock when the latest collected one
 * finished. */
static int compile_leave(compile_job *job, gt_tune_cand *cands, gt_rtc_result *images,
                         double *last_done) {
    job->stop = 1;
    pthread_mutex_lock(&job->lock);
    int running = 0;
    for (int i = 0; i < job->n; i++) {
        if (job->done[i]) {
            collect(job, i, cands, images);
        } else {
            running++;
            snprintf(cands[i].message, sizeof cands[i].message,
                     "still compiling when the tuning budget was spent");
        }
    }
    *last_done = job->last_done;
    pthread_mutex_unlock(&job->lock);
    job_release(job);
    if (running) pthread_once(&at_exit_once, register_at_exit);
    return running;
}

/* ===== arena ===== */

/* Scratch of one tuning run: nrot input sets, the output, C0 (what C holds before each
 * checked run: random values when beta != 0, NaN when beta == 0, so that an output the
 * kernel fails to write cannot pass), and the split-K workspace (the largest any
 * candidate needs; zeroed when allocated, and every launch that completes leaves it
 * zeroed: kern.h). Leading dimensions of A and B are the problem's rounded up to the
 * alignment class, so that every candidate legal for the key is legal here; C's is one
 * class unit more, so that the verifier sees whether a kernel writes past row m. ca and
 * cb: copies of set 0 for the "coarse" mutation (test aid), else 0. Sizes in bytes;
 * elements of A and B take es bytes, of C esc (key.h). */
typedef struct {
    int nrot, es, esc;    /* bytes of an element of A and B, and of C */
    long long lda, ldb, ldc;
    CUdeviceptr a[MAX_ROT], b[MAX_ROT], c, c0, ws, ca, cb;
    size_t abytes, bbytes, cbytes, wsbytes;
} arena;

static long long round_up(long long x, long long to) { return (x + to - 1) / to * to; }

static void arena_free(arena *ar) {
    if (ar->ca) gt_cu.mem_free(ar->ca);
    if (ar->cb) gt_cu.mem_free(ar->cb);
    for (int i = 0; i < ar->nrot; i++) {
        if (ar->a[i]) gt_cu.mem_free(ar->a[i]);
        if (ar->b[i]) gt_cu.mem_free(ar->b[i]);
    }
    if (ar->c) gt_cu.mem_free(ar->c);
    if (ar->c0) gt_cu.mem_free(ar->c0);
    if (ar->ws) gt_cu.mem_free(ar->ws);
    memset(ar, 0, sizeof *ar);
}

void gt_tune_scratch(const gt_key *key, gt_scratch *out) {
    const long long es = gt_dtype_in_size(key->dtype), esc = gt_dtype_out_size(key->dtype);
    const long long vec = key->align >= es ? key->align / es : 1;
    const long long vecc = key->align >= esc ? key->align / esc : 1;
    const long long arows = key->opa ? key->k : key->m, acols = key->opa ? key->m : key->k;
    const long long brows = key->opb ? key->n : key->k, bcols = key->opb ? key->k : key->n;
    out->lda = round_up(arows, vec);
    out->ldb = round_up(brows, vec);
    out->ldc = round_up(key->m, vecc) + vecc;
    out->abytes = (size_t)(out->lda * acols) * (size_t)es;
    out->bbytes = (size_t)(out->ldb * bcols) * (size_t)es;
    out->cbytes = (size_t)(out->ldc * key->n) * (size_t)esc;
}

gt_status gt_tune_mem_fits(size_t need, size_t limit, const char *what, int *fits, char *why,
                           size_t why_size) {
    *fits = 0;
    size_t free_b = 0, total_b = 0;
    CUresult r = gt_cu.mem_get_info(&free_b, &total_b);
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuMemGetInfo");
    /* Leave the application some room: never take the last 5% of the device. */
    *fits = (!limit || need <= limit) && need + total_b / 20 <= free_b;
    if (!*fits)
        snprintf(why, why_size, "%s needs %.1f MiB of device memory; limit %.1f MiB, free %.1f MiB",
                 what, need / 1048576.0, limit / 1048576.0, free_b / 1048576.0);
    return GT_SUCCESS;
}

/* GT_SUCCESS with the arena, or GT_SUCCESS with rep->skipped when the device or the
 * limit cannot spare the memory; other statuses are driver failures. ws_bytes is the
 * largest workspace of the candidates; it counts against the limit like the rest. */
static gt_status arena_alloc(gt_devctx *dc, CUstream s, const gt_key *key, size_t limit,
                             size_t ws_bytes, arena *ar, gt_tune_report *rep) {
    memset(ar, 0, sizeof *ar);
    ar->es = gt_dtype_in_size(key->dtype);
    ar->esc = gt_dtype_out_size(key->dtype);
    gt_scratch sc;
    gt_tune_scratch(key, &sc);
    ar->lda = sc.lda, ar->ldb = sc.ldb, ar->ldc = sc.ldc;
    ar->abytes = sc.abytes, ar->bbytes = sc.bbytes, ar->cbytes = sc.cbytes;
    ar->wsbytes = ws_bytes;
    size_t l2 = (size_t)(dc->dev.l2_bytes > 0 ? dc->dev.l2_bytes : 0);
    size_t set = ar->abytes + ar->bbytes;
    size_t fixed = ar->cbytes * 2 + ws_bytes;
    /* The default makes room for the workspace too: a split-K candidate must not be the
     * reason a shape goes untuned. An explicit limit counts it like any other buffer. */
    if (!limit) limit = 2 * ar->cbytes + set + 2 * l2 + ws_bytes;
    /* Enough input sets that consecutive runs do not find their inputs in L2. */
    int nrot = 1 + (int)(2 * l2 / (set ? set : 1));
    if (nrot > MAX_ROT) nrot = MAX_ROT;
    while (nrot > 1 && fixed + (size_t)nrot * set > limit) nrot--;
    size_t need = fixed + (size_t)nrot * set;
    int fits;
    gt_status fs = gt_tune_mem_fits(need, limit, "tuning", &fits, rep->why, sizeof rep->why);
    if (fs != GT_SUCCESS) return fs;
    if (!fits) {
        rep->skipped = 1;
        return GT_SUCCESS;
    }
    ar->nrot = nrot;
    CUresult r = CUDA_SUCCESS;
    const char *what = "";
    for (int i = 0; i < nrot && r == CUDA_SUCCESS; i++) {
        r = gt_cu.mem_alloc(&ar->a[i], ar->abytes);
        if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&ar->b[i], ar->bbytes);
        what = "cuMemAlloc (tuning inputs)";
    }
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&ar->c, ar->cbytes), what = "cuMemAlloc (scratch C)";
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&ar->c0, ar->cbytes), what = "cuMemAlloc (scratch C0)";
    if (r == CUDA_SUCCESS && ws_bytes)
        r = gt_cu.mem_alloc(&ar->ws, ws_bytes), what = "cuMemAlloc (split-K workspace)";
    if (r == CUDA_SUCCESS && ws_bytes)
        r = gt_cu.memset_d8_async(ar->ws, 0, ws_bytes, s), what = "cuMemsetD8Async (workspace)";
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        /* Someone else took the memory since cuMemGetInfo: skip, as above. */
        arena_free(ar);
        rep->skipped = 1;
        snprintf(rep->why, sizeof rep->why, "tuning could not allocate %.1f MiB",
                 need / 1048576.0);
        return GT_SUCCESS;
    }
    if (r != CUDA_SUCCESS) {
        arena_free(ar);
        return gt_cu_fail(r, what);
    }
    gt_status st = GT_SUCCESS;
    const int in = gt_dtype_in(key->dtype), out = gt_dtype_out(key->dtype);
    const long long es = ar->es;
    for (int i = 0; i < nrot && st == GT_SUCCESS; i++) {
        st = gt_aux_fill(dc, s, in, ar->a[i], (long long)ar->abytes / es, 11 + 2 * i, 0, 0);
        if (st == GT_SUCCESS)
            st = gt_aux_fill(dc, s, in, ar->b[i], (long long)ar->bbytes / es, 12 + 2 * i, 0, 0);
    }
    if (st == GT_SUCCESS)
        st = gt_aux_fill(dc, s, out, ar->c0, (long long)ar->cbytes / ar->esc, 7, key->beta0, NAN);
    if (st != GT_SUCCESS) arena_free(ar);
    return st;
}

/* Zeroes the workspace again before a candidate's first launch. Every launch that
 * completes leaves it zeroed (kern.h), but a candidate that computes wrongly has broken
 * that promise too, and its leftovers (partials, tile counters) must not reach the next
 * candidate's timing or check (a stale tile counter could even make a kernel wait
 * forever). One memset per candidate, nothing beside its timing runs. */
static gt_status reset_workspace(CUstream s, arena *ar) {
    if (!ar->wsbytes) return GT_SUCCESS;
    CUresult r = gt_cu.memset_d8_async(ar->ws, 0, ar->wsbytes, s);
    return r == CUDA_SUCCESS ? GT_SUCCESS : gt_cu_fail(r, "cuMemsetD8Async (workspace)");
}

/* Resets the scratch output to C0 before a checked run. */
static gt_status reset_output(CUstream s, arena *ar) {
    CUresult r = gt_cu.memcpy_dtod_async(ar->c, ar->c0, ar->cbytes, s);
    return r == CUDA_SUCCESS ? GT_SUCCESS : gt_cu_fail(r, "cuMemcpyDtoDAsync (reset C)");
}

/* At most this many bytes of C, from its start, are compared between a verified kernel's
 * two runs (rerun_same): every tile of the first columns, on the host. */
#define RERUN_COMPARE_MAX ((size_t)64 << 20)

/* A verified kernel (its output in ar->c) runs once more from the same C, and the two
 * outputs must hold the same bits: every configuration sums in an order fixed by itself
 * (common.cuh), so a kernel whose result varies run to run is wrong at times, whatever
 * one check found (exact DMMA kernels of small warp tiles are such kernels on the H100
 * when they double-buffer their fragments: kernel_src/gemm_dmma.cu, FRAG_DB). *same is 0 when
 * they differ; the comparison is skipped (*same 1) where the host has no memory for it.
 * flip: the second output off by one bit (the "rerun" test fault). */
static gt_status rerun_same(CUstream s, arena *ar, const gt_kern *k, const gt_gemm *g, int flip,
                            int *same) {
    *same = 1;
    const size_t bytes = ar->cbytes < RERUN_COMPARE_MAX ? ar->cbytes : RERUN_COMPARE_MAX;
    unsigned char *h[2] = {malloc(bytes), malloc(bytes)};
    if (!h[0] || !h[1]) {
        free(h[0]), free(h[1]);
        gt_log(GT_LOG_DEBUG, "the second run's comparison skipped: no host memory for %zu bytes",
               2 * bytes);
        return GT_SUCCESS;
    }
    CUresult r = gt_cu.memcpy_dtoh_async(h[0], ar->c, bytes, s);
    gt_status st = r == CUDA_SUCCESS ? GT_SUCCESS : gt_cu_fail(r, "cuMemcpyDtoHAsync (first run)");
    if (st == GT_SUCCESS) st = reset_output(s, ar);
    if (st == GT_SUCCESS) st = reset_workspace(s, ar);
    if (st == GT_SUCCESS) st = gt_kern_launch(k, g, ar->ws);
    if (st == GT_SUCCESS) {
        r = gt_cu.memcpy_dtoh_async(h[1], ar->c, bytes, s);
        if (r == CUDA_SUCCESS) r = gt_cu.stream_synchronize(s);
        if (r != CUDA_SUCCESS) st = gt_cu_fail(r, "cuMemcpyDtoHAsync (second run)");
    }
    if (st == GT_SUCCESS) {
        if (flip) h[1][0] ^= 1;
        *same = memcmp(h[0], h[1], bytes) == 0;
    }
    free(h[0]), free(h[1]);
    return st;
}

/* The inputs of the "coarse" mutation (faults above): g reads copies of input set 0
 * rounded to coarse_bits significant bits, those of the next coarser type. */
static const int coarse_bits[GT_NDTYPES] = {
    [GT_DT_F32] = 11, [GT_DT_F64] = 24,     [GT_DT_TF32] = 8,      [GT_DT_F16] = 8,
    [GT_DT_F16_F32] = 8, [GT_DT_BF16] = 4, [GT_DT_BF16_F32] = 4, [GT_DT_F32_3XTF32] = 11,
};
static gt_status mutate_inputs(gt_devctx *dc, CUstream s, const gt_key *key, arena *ar,
                               gt_gemm *g) {
    CUresult r = CUDA_SUCCESS;
    if (!ar->ca) r = gt_cu.mem_alloc(&ar->ca, ar->abytes);
    if (r == CUDA_SUCCESS && !ar->cb) r = gt_cu.mem_alloc(&ar->cb, ar->bbytes);
    if (r == CUDA_SUCCESS) r = gt_cu.memcpy_dtod_async(ar->ca, ar->a[0], ar->abytes, s);
    if (r == CUDA_SUCCESS) r = gt_cu.memcpy_dtod_async(ar->cb, ar->b[0], ar->bbytes, s);
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "copying the inputs (test fault coarse)");
    const int in = gt_dtype_in(key->dtype), bits = coarse_bits[key->dtype];
    gt_status st = gt_aux_round(dc, s, in, ar->ca, (long long)ar->abytes / ar->es, bits);
    if (st == GT_SUCCESS) st = gt_aux_round(dc, s, in, ar->cb, (long long)ar->bbytes / ar->es, bits);
    g->A = GT_PTR(ar->ca), g->B = GT_PTR(ar->cb);
    return st;
}

/* The output of the "corner" mutation (corner != 0: C(m-1, n-1) takes the value of
 * C(m-2, n-1), or of C(m-1, n-2) in a single row, or C0's in a 1 x 1 problem) or of
 * "droprow" (the last row of BM-row tiles back to C0, as if never written). */
static gt_status mutate_output(gt_devctx *dc, CUstream s, const gt_key *key, const gt_kcfg *cfg,
                               arena *ar, int corner) {
    const int out = gt_dtype_out(key->dtype);
    const long long m = key->m, n = key->n;
    if (!corner)
        return gt_aux_copy(dc, s, out, ar->c, ar->c0, ar->ldc, (m - 1) / cfg->bm * cfg->bm, m, 0, n);
    const long long shift = m > 1 ? 1 : ar->ldc;
    CUdeviceptr src = m * n > 1 ? ar->c - (CUdeviceptr)(shift * ar->esc) : ar->c0;
    return gt_aux_copy(dc, s, out, ar->c, src, ar->ldc, m - 1, m, n - 1, n);
}

/* ===== time ===== */

/* Tuning uses alpha = 1 and, when beta != 0, beta = 1: the timing does not depend on the
 * values, and these keep repeated runs on the same C finite. */
/* The call of key on the arena's input set `set` and its output. */
static gt_gemm arena_call(const arena *ar, int set, const gt_key *key, CUstream s, double alpha,
                          double beta) {
    gt_gemm g = {key->dtype, key->opa, key->opb, key->m, key->n, key->k, alpha, beta,
                 GT_PTR(ar->a[set]), GT_PTR(ar->b[set]), GT_PTR(ar->c), ar->lda, ar->ldb,
                 ar->ldc, s};
    return g;
}

static gt_status launch(const gt_kern *k, CUstream s, arena *ar, int set, const gt_key *key) {
    gt_gemm g = arena_call(ar, set, key, s, 1.0, key->beta0 ? 0.0 : 1.0);
    return gt_kern_launch(k, &g, ar->ws);
}

/* gt_measure's run: one launch of the candidate on input set (first + i) % nrot. */
typedef struct rotating_launch {
    const gt_kern *k;
    CUstream s;
    arena *ar;
    const gt_key *key;
    int first;
} rotating_launch;

static gt_status launch_rotating(void *user, int i) {
    const rotating_launch *rl = user;
    return launch(rl->k, rl->s, rl->ar, (rl->first + i) % rl->ar->nrot, rl->key);
}

/* The candidate's median time: one warm-up launch on set 0 (first-launch costs stay
 * out), one timed launch on set 1 whose time sets the count of runs (MIN_REPS..MAX_REPS,
 * about TARGET_US_PER_CAND of GPU time), then that many timed launches on sets 2, 3, ...
 * (mod nrot, so that consecutive runs do not find their inputs in L2). Where the first
 * run is clearly slower than best_us (the best median so far; 0: none), a screening pass
 * of GT_TUNE_SCREEN_REPS runs first, whose median stands (*screened = 1) where it is
 * still clearly slower. ev: MAX_REPS + 1 events, enough for every run to sit between its
 * own pair without a wait. */
static gt_status time_one(const gt_kern *k, CUstream s, arena *ar, const gt_key *key,
                          CUevent *ev, double best_us, double *median_us, int *screened) {
    *screened = 0;
    gt_status st = reset_workspace(s, ar);
    if (st != GT_SUCCESS) return st;
    rotating_launch rl = {k, s, ar, key, 0};
    double first_us = 0;
    st = gt_measure(s, ev, MAX_REPS + 1, 1, 1, launch_rotating, &rl, NULL, &first_us);
    if (st != GT_SUCCESS) return st;
    double t[MAX_REPS];
    rl.first = 2;
    if (gt_tune_screens(first_us, best_us)) {
        st = gt_measure(s, ev, MAX_REPS + 1, 0, GT_TUNE_SCREEN_REPS, launch_rotating, &rl, t,
                        median_us);
        if (st != GT_SUCCESS) return st;
        if (gt_tune_screen_stands(*median_us, best_us)) {
            *screened = 1;
            return GT_SUCCESS;
        }
        rl.first += GT_TUNE_SCREEN_REPS;
    }
    int reps = first_us > 0 ? (int)(TARGET_US_PER_CAND / first_us) : MAX_REPS;
    if (reps > MAX_REPS) reps = MAX_REPS;
    if (reps < MIN_REPS) reps = MIN_REPS;
    return gt_measure(s, ev, MAX_REPS + 1, 0, reps, launch_rotating, &rl, t, median_us);
}

int gt_tune_screens(double first_us, double best_us) {
    return best_us > 0 && first_us > GT_TUNE_SCREEN_FIRST * best_us;
}

int gt_tune_screen_stands(double median_us, double best_us) {
    return best_us > 0 && median_us > GT_TUNE_SCREEN_KEEP * best_us;
}

int gt_tune_best_held(const gt_tune_cand *c, int n) {
    int timed = 0, left = 0;
    double best = 0, least = 0; /* the best time; the least time / estimate */
    for (int i = 0; i < n; i++) {
        if (c[i].status != GT_TR_OK) continue;
        if (!(c[i].time_us > 0) || !(c[i].est_us > 0)) return 0;
        timed++;
        if (best == 0 || c[i].time_us < best) best = c[i].time_us;
        const double r = c[i].time_us / c[i].est_us;
        if (least == 0 || r < least) least = r;
    }
    if (timed < GT_TUNE_HELD_MIN) return 0;
    for (int i = 0; i < n; i++) {
        if (c[i].status != GT_TR_NOT_TIMED) continue;
        if (c[i].seeded || !(c[i].est_us > 0) ||
            c[i].est_us * least * GT_TUNE_HELD_MARGIN <= best)
            return 0;
        left++;
    }
    return left > 0;
}

static int by_time(const void *a, const void *b) {
    const gt_tune_cand *x = a, *y = b;
    int xo = x->status == GT_TR_OK, yo = y->status == GT_TR_OK;
    if (xo != yo) return yo - xo;
    return x->time_us < y->time_us ? -1 : x->time_us > y->time_us;
}

/* Orders candidates timed-first by time, moving each loaded kernel and cubin with its
 * candidate. */
static int sort_by_time(gt_tune_cand *cands, gt_kern *kerns, gt_rtc_result *images, int n) {
    struct pair {
        gt_tune_cand c;
        gt_kern k;
        gt_rtc_result img;
    } *p = malloc(sizeof *p * (size_t)n);
    if (!p) return -1;
    for (int i = 0; i < n; i++) p[i].c = cands[i], p[i].k = kerns[i], p[i].img = images[i];
    qsort(p, (size_t)n, sizeof *p, by_time); /* the candidate is the pair's first member */
    for (int i = 0; i < n; i++) cands[i] = p[i].c, kerns[i] = p[i].k, images[i] = p[i].img;
    free(p);
    return 0;
}

/* ===== the run ===== */

int gt_tune_order(const gt_cand *space, int n, const gt_kcfg *seeds, int nseeds, int max,
                  gt_kcfg *out) {
    int k = 0;
    char *used = calloc((size_t)(n > 0 ? n : 1), 1);
    if (!used) return -1;
    for (int s = 0; s < nseeds && s < GT_TUNE_SEEDS && k < max; s++) {
        if (gt_kcfg_listed(out, k, &seeds[s])) continue;
        out[k++] = seeds[s];
        for (int i = 0; i < n; i++)
            if (gt_kcfg_listed(&space[i].cfg, 1, &seeds[s])) used[i] = 1;
    }
    /* Where space holds more than max: half of the places left in the model's order (at
     * most GT_TUNE_LEAD_SAME of one SIMT group), a quarter to groups not yet listed (each
     * group's best, in the model's order), the rest in the model's order again. */
    const int left = max - k, wider = n > max;
    const int lead = wider ? left - left / 2 : left, explore = wider ? left / 4 : 0;
    int i = 0;
    for (int taken = 0; i < n && k < max && taken < lead; i++) {
        if (used[i]) continue;
        if (wider && space[i].cfg.fam == GT_FAM_SIMT) {
            int same = 0;
            for (int q = 0; q < k; q++) same += gt_kcfg_same_group(&out[q], &space[i].cfg);
            if (same >= GT_TUNE_LEAD_SAME) continue; /* listed later, in the model's order */
        }
        out[k++] = space[i].cfg, used[i] = 1, taken++;
    }
    for (int j = i, taken = 0; j < n && k < max && taken < explore; j++) {
        if (used[j]) continue;
        int fresh = 1;
        for (int q = 0; q < k && fresh; q++) fresh = !gt_kcfg_same_group(&out[q], &space[j].cfg);
        if (fresh) out[k++] = space[j].cfg, used[j] = 1, taken++;
    }
    for (int j = 0; j < n && k < max; j++)
        if (!used[j]) out[k++] = space[j].cfg, used[j] = 1;
    free(used);
    return k;
}

int gt_tune_threads(int requested, long cpus, int helpers) {
    int threads = requested > 0 ? requested : cpus > 0 ? (int)cpus : 1;
    if (helpers && threads > 1 && (requested <= 0 || threads >= cpus)) threads--;
    return threads;
}

gt_status gt_tune(gt_devctx *dc, const gt_key *key, const gt_tune_opts *opts_in, gt_kern *winner,
                  gt_tune_report *rep) {
    memset(rep, 0, sizeof *rep);
    memset(winner, 0, sizeof *winner);
    gt_tune_opts opts = *opts_in;
    gt_tune_opts_default(&opts);
    double t0 = gt_measure_now_s();
    gt_klimits lim;
    gt_kern_limits(dc, &lim);

    /* SPACE */
    /* The model's first 4 x max_candidates: gt_tune_order takes max_candidates of them. */
    const int pool = opts.max_candidates > GT_TUNE_ALL_CANDIDATES / 4 ? GT_TUNE_ALL_CANDIDATES
                                                                       : 4 * opts.max_candidates;
    gt_cand *space = NULL;
    int n = gt_space_build_fixed(key, &lim, pool, opts.same_order ? GT_SPACE_SAME_ORDER : 0,
                                 opts.fix, &space, &rep->space);
    if (n < 0) return gt_fail(GT_OUT_OF_MEMORY, "candidate space");
    if (n == 0) {
        free(space);
        return gt_fail(GT_NO_CANDIDATE, "no candidate passes the constraints");
    }
    /* Phase marks for the closing log line; 0 while a phase has not been reached. */
    double t_space = gt_measure_now_s(), t1 = 0, t_timed = 0, t_verified = 0, last_done = 0;
    int running = 0; /* compiles left under way when the tuning thread let go of them */
    /* The seeds first (the near-winners of the class's tuned shapes), where the rules
     * keep them for this key; then the model's order, widened by gt_tune_order. */
    gt_kcfg *order = malloc(sizeof *order * (size_t)n);
    gt_kcfg seeds[GT_TUNE_SEEDS];
    int nseeds = 0;
    for (int i = 0; i < opts.nseeds && nseeds < GT_TUNE_SEEDS; i++)
        if (gt_kcfg_check(&opts.seeds[i], key, &lim, GT_KC_LEGAL | GT_KC_PRUNE) == 0 &&
            (!opts.same_order || gt_kcfg_same_order(&opts.seeds[i], key)))
            seeds[nseeds++] = opts.seeds[i];
    int norder = order ? gt_tune_order(space, n, seeds, nseeds, opts.max_candidates, order) : -1;
    free(space);
    if (norder < 0) {
        free(order);
        return gt_fail(GT_OUT_OF_MEMORY, "tuning state");
    }
    /* The counts of what is timed: the pool's candidates not taken are ranked out too. */
    rep->space.ranked_out += n - norder;
    rep->space.kept = norder;
    /* The generic twin of the model's first (kcfg.h, GENERIC: the same kernel with M, N,
     * K as arguments) is second in the list, after the seeds' first or the model's first
     * itself: where compiling for the exact shape buys nothing measurable it may win, and
     * its binary then serves every shape of the class. It takes the place of the
     * last-ranked candidate when the list is full; not with fewer than 4 candidates (a
     * small budget keeps to the ranking). */
    const int twin = norder >= 4;
    const int total = twin && norder < opts.max_candidates ? norder + 1 : norder;
    gt_tune_cand *cands = calloc((size_t)total, sizeof *cands);
    gt_rtc_result *images = calloc((size_t)total, sizeof *images);
    gt_kern *kerns = calloc((size_t)total, sizeof *kerns);
    unsigned char *taken = calloc((size_t)total, 1); /* TIME: candidates collected */
    if (!cands || !images || !kerns || !taken) {
        free(cands), free(images), free(kerns), free(taken), free(order);
        return gt_fail(GT_OUT_OF_MEMORY, "tuning state");
    }
    rep->seeded = nseeds;
    /* The model's first: the first of the order that is not a seed (the seeds come first). */
    int first = 0;
    while (first < norder - 1 && gt_kcfg_listed(seeds, nseeds, &order[first])) first++;
    for (int i = 0, from = 0; i < total; i++) {
        if (twin && i == 1) {
            cands[i].cfg = order[first];
            cands[i].cfg.generic = 1;
        } else {
            cands[i].cfg = order[from++];
        }
    }
    free(order);
    n = total;
    size_t ws_bytes = 0; /* one workspace, as large as the largest candidate's */
    for (int i = 0; i < n; i++) {
        cands[i].status = GT_TR_NOT_TIMED;
        cands[i].time_us = -1;
        cands[i].est_us = gt_space_estimate_fixed_us(&cands[i].cfg, key, &lim, opts.fix);
        cands[i].seeded = !cands[i].cfg.generic && gt_kcfg_listed(seeds, nseeds, &cands[i].cfg);
        size_t w = gt_kcfg_workspace_bytes(&cands[i].cfg, key);
        if (w > ws_bytes) ws_bytes = w;
    }
    rep->cands = cands;
    rep->ncands = n;

    /* NVRTC's first use in the process, alone. */
    gt_rtc_warm(dc->arch);
    /* The helper kernels (fill, compare, the float64 reference) are compiled on first need
     * per context and data type, 0.4 to 0.65 s cold on the H100 machine, and nothing can
     * be timed before they fill the arena. They get a CPU of their own and the pool the
     * rest, so the candidates' compiles start at once: compiled first, the helpers would
     * take that much from every candidate's budget; beside a pool on every CPU, they take
     * up to 1.4 s. */
    const int threads = gt_tune_threads(opts.threads, sysconf(_SC_NPROCESSORS_ONLN),
                                        !gt_devctx_aux_ready(dc, key->dtype));

    /* COMPILE, in the background of ARENA and TIME */
    char faults[FAULTS_MAX];
    faults_read(faults);
    /* Injected faults and checks of every candidate mean every candidate reached. */
    const int time_all = opts.time_all || opts.verify_all || faults[0];
    compile_job *job = job_new(key, cands, n, dc->arch, threads, t0, t0 + opts.budget_s, faults);
    if (!job) {
        free(images), free(kerns), free(taken);
        return gt_fail(GT_OUT_OF_MEMORY, "tuning state");
    }
    compile_start(job);

    /* ARENA */
    CUstream s;
    arena ar;
    CUevent ev[MAX_REPS + 1] = {0};
    int nev = 0;
    gt_status st = gt_devctx_aux(dc, key->dtype);
    if (st == GT_SUCCESS) st = gt_devctx_tune_stream(dc, &s);
    if (st == GT_SUCCESS) st = arena_alloc(dc, s, key, opts.mem_limit, ws_bytes, &ar, rep);
    if (st != GT_SUCCESS || rep->skipped) goto out_images;
    for (; nev <= MAX_REPS; nev++) {
        CUresult r = gt_cu.event_create(&ev[nev], CU_EVENT_DEFAULT);
        if (r != CUDA_SUCCESS) {
            st = gt_cu_fail(r, "cuEventCreate");
            goto out_arena;
        }
    }

    /* TIME */
    t1 = gt_measure_now_s();
    double best_us = 0; /* the best median so far */
    for (int left = n; left > 0; left--) {
        /* The budget runs from the start of tuning; the first candidate that compiles
         * is timed whatever the clock says, so there is always a winner to check. */
        double deadline = rep->timed ? t0 + opts.budget_s : 0;
        const int i = wait_next(job, taken, deadline, cands, images);
        if (i < 0) break; /* the rest stay NOT_TIMED */
        if (cands[i].status == GT_TR_COMPILE_FAILED) continue;
        /* Skipped by the compiler as too late for the budget: stays NOT_TIMED, with the
         * compiler's message. */
        if (!images[i].image) continue;
        if (rep->timed && gt_measure_now_s() - t0 > opts.budget_s) break; /* stays NOT_TIMED */
        gt_status ls = gt_kern_load(images[i].image, &cands[i].cfg, key, &kerns[i]);
        if (ls != GT_SUCCESS) {
            cands[i].status = GT_TR_LOAD_FAILED;
            snprintf(cands[i].message, sizeof cands[i].message, "%s", gt_last_error());
            continue;
        }
        double us = 0;
        int screened = 0;
        if (fault(faults, "launch", i)) kerns[i].block[0] = 4096; /* beyond any device's limit */
        ls = time_one(&kerns[i], s, &ar, key, ev, best_us, &us, &screened);
        if (ls != GT_SUCCESS) {
            cands[i].status = GT_TR_LAUNCH_FAILED;
            snprintf(cands[i].message, sizeof cands[i].message, "%s", gt_last_error());
            gt_kern_unload(&kerns[i]);
            /* A fault poisons the context: nothing after it can run. */
            if (ls == GT_LAUNCH_FAILED && gt_cu.ctx_synchronize() != CUDA_SUCCESS) {
                st = gt_fail(GT_LAUNCH_FAILED, "candidate %d faulted: %s", i, cands[i].message);
                goto out_arena;
            }
            continue;
        }
        cands[i].status = GT_TR_OK;
        cands[i].time_us = us;
        cands[i].screened = screened;
        rep->timed++;
        rep->screened += screened;
        if (best_us == 0 || us < best_us) best_us = us;
        /* Every time, also of candidates that later fail verification (experiments). */
        char text[64];
        gt_kcfg_format(&cands[i].cfg, text, sizeof text);
        gt_log(GT_LOG_DEBUG, "candidate %s timed: %.1f us%s (estimate %.1f)", text, us,
               screened ? ", screened" : "", cands[i].est_us);
        if (!time_all && gt_tune_best_held(cands, n)) {
            rep->held = 1;
            break;
        }
    }
    t_timed = gt_measure_now_s();
    rep->time_seconds = t_timed - t1;
    /* Nothing more will be timed: compiles not started are skipped, those under way
     * are left to finish on their own. */
    running = compile_leave(job, cands, images, &last_done);
    job = NULL;
    if (rep->held)
        for (int i = 0; i < n; i++)
            if (cands[i].status == GT_TR_NOT_TIMED)
                snprintf(cands[i].message, sizeof cands[i].message,
                         "not timed: the best, %.1f us, held against its estimate of %.1f us",
                         best_us, cands[i].est_us);

    /* VERIFY, fastest first. */
    if (sort_by_time(cands, kerns, images, n) != 0) {
        st = gt_fail(GT_OUT_OF_MEMORY, "tuning state");
        goto out_arena;
    }
    int won = -1;
    for (int i = 0; i < n && cands[i].status == GT_TR_OK && (won < 0 || opts.verify_all); i++) {
        gt_verify_result vr;
        gt_status vs = reset_output(s, &ar);
        if (vs == GT_SUCCESS) vs = reset_workspace(s, &ar);
        /* The call the kernel is asked for, and the call it is checked against: the same,
         * unless a mutation is injected (faults above). */
        const double beta = key->beta0 ? 0.0 : -0.5;
        gt_gemm g = arena_call(&ar, 0, key, s, 0.75, beta), asked = g;
        if (fault(faults, "verify", i)) g.alpha = 0.75 * 1.01;
        if (vs == GT_SUCCESS && fault(faults, "coarse", i)) vs = mutate_inputs(dc, s, key, &ar, &g);
        if (vs == GT_SUCCESS) vs = gt_kern_launch(&kerns[i], &g, ar.ws);
        if (vs == GT_SUCCESS && fault(faults, "corner", i))
            vs = mutate_output(dc, s, key, &cands[i].cfg, &ar, 1);
        if (vs == GT_SUCCESS && fault(faults, "droprow", i))
            vs = mutate_output(dc, s, key, &cands[i].cfg, &ar, 0);
        if (vs == GT_SUCCESS) vs = gt_verify(dc, key, &asked, GT_PTR(ar.c0), ar.ldc, &vr);
        char text[64], how[200];
        gt_kcfg_format(&cands[i].cfg, text, sizeof text);
        if (vs == GT_SUCCESS) gt_verify_describe(&vr, how, sizeof how);
        int same = 1;
        if (vs == GT_SUCCESS && vr.pass)
            vs = rerun_same(s, &ar, &kerns[i], &g, fault(faults, "rerun", i), &same);
        if (vs == GT_SUCCESS && !same) {
            vr.pass = 0;
            snprintf(how, sizeof how, "a second run from the same C gave other bits");
        }
        if (vs != GT_SUCCESS || !vr.pass) {
            cands[i].status = GT_TR_VERIFY_FAILED;
            rep->verify_failed++;
            snprintf(cands[i].message, sizeof cands[i].message, "%s",
                     vs != GT_SUCCESS ? gt_last_error() : how);
            gt_log(GT_LOG_WARN, "candidate %s failed verification: %s", text, cands[i].message);
            if (vs == GT_LAUNCH_FAILED && gt_cu.ctx_synchronize() != CUDA_SUCCESS) {
                st = vs;
                goto out_arena;
            }
            continue;
        }
        gt_log(GT_LOG_DEBUG, "candidate %s verified: %.1f us, %s (%.3f s)", text,
               cands[i].time_us, how, vr.seconds);
        if (won < 0) {
            won = i;
            rep->rel_err = vr.rel_err;
        }
    }
    t_verified = gt_measure_now_s();
    if (won < 0) {
        st = gt_fail(GT_NO_CANDIDATE, "none of %d candidates compiled, ran and verified", n);
    } else {
        *winner = kerns[won];
        kerns[won].module = NULL;
        rep->winner = cands[won].cfg;
        /* The winner's cubin goes to the binary cache: hand it over, not a copy. */
        rep->winner_image = images[won].image;
        rep->winner_size = images[won].size;
        images[won].image = NULL;
        rep->time_us = cands[won].time_us;
        rep->tflops = 2.0 * (double)key->m * (double)key->n * (double)key->k / (rep->time_us * 1e6);
    }

out_arena:
    for (int i = 0; i < nev; i++) gt_cu.event_destroy(ev[i]);
    for (int i = 0; i < n; i++) gt_kern_unload(&kerns[i]);
    arena_free(&ar);
out_images:
    if (job) running = compile_leave(job, cands, images, &last_done);
    for (int i = 0; i < n; i++) {
        if (cands[i].status == GT_TR_COMPILE_FAILED) rep->compile_failed++;
        else if (cands[i].compiled) rep->compiled++;
    }
    rep->compile_seconds = last_done > t0 ? last_done - t0 : 0;
    for (int i = 0; i < n; i++) gt_rtc_result_free(&images[i]);
    free(images);
    free(kerns);
    free(taken);
    rep->seconds = gt_measure_now_s() - t0;
    /* Where a cold call's time goes (issue 4 asks for under 2 s): one line per run. */
    char ktext[200];
    gt_key_format(key, ktext, sizeof ktext);
    gt_log(GT_LOG_INFO,
           "%s: tuned in %.3f s: space %.3f, arena ready %.3f, timing ended %.3f, verified "
           "%.3f, last compile collected at %.3f, %d left compiling; compiled %d, timed %d of %d "
           "(%d screened)%s",
           ktext, rep->seconds, t_space - t0, t1 > 0 ? t1 - t0 : -1, t_timed > 0 ? t_timed - t0 : -1,
           t_verified > 0 ? t_verified - t0 : -1, rep->compile_seconds, running, rep->compiled,
           rep->timed, n, rep->screened, rep->held ? "; stopped where the best held" : "");
    return st;
}

void gt_tune_report_free(gt_tune_report *rep) {
    free(rep->winner_image);
    rep->winner_image = NULL;
    rep->winner_size = 0;
    free(rep->cands);
    rep->cands = NULL;
    rep->ncands = 0;
}
