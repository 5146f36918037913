/*
 * test_multigpu.c: gemm_tuned on two GPUs of one host at once (suite 'multigpu', apart from
 * the default run: tools/gpu_run.sh multigpu runs it).
 * Without a CUDA device the cases report "skipped: no CUDA device" (gpu_probe.h); with one
 * device, "skipped: needs 2 GPUs".
 *   multigpu_two_threads: thread d makes device d's primary context current
 *     (cuDevicePrimaryCtxRetain, cuCtxSetCurrent) and, on two streams of its own, calls
 *     gemm_tuned for a new shape (which tunes) and a second new shape, then both shapes
 *     again on both streams. Every result is graded against the test's float64 CPU
 *     reference (prob.h, grade.h): a kernel launched on the other device would fault on
 *     device d's pointers or compute something else. Afterwards each context holds its own
 *     plan of each key (gt_plan_find with each context).
 *   multigpu_stream_context_wins: with one device's context current, a call on a stream of
 *     the other device, with that device's buffers, runs there (the stream's context, as
 *     the README states), right, and leaves the caller's current context as it was.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call.h"
#include "cu.h"
#include "devctx.h"
#include "gemmtune.h"
#include "gpu_probe.h"
#include "grade.h"
#include "plan.h"
#include "prob.h"
#include "tap.h"

/* No GPU: skipped; a GPU that failed to set up: failed (gpu_probe.h). */
GPU_TEST_STATE();

static int device_count(void) {
    int n = 0;
    if (gt_cu.device_get_count(&n) != CUDA_SUCCESS) n = 0;
    return n;
}

/* The opening of every case: a GPU, and a second one. */
#define NEED_TWO_GPUS()                                                                    \
    do {                                                                                   \
        NEED_GPU();                                                                        \
        if (device_count() < 2) TAP_SKIP("skipped: needs 2 GPUs (%d found)", device_count()); \
    } while (0)

enum { NDEV = 2, NSHAPES = 2, NOUT = 3 };

/* Two shapes no other test uses (new to this run's cache): different ops, beta != 0 and
 * beta == 0. */
static const struct {
    int opa, opb;
    long long m, n, k;
    double alpha, beta;
} shapes[NSHAPES] = {{0, 1, 301, 203, 157, 1.0, 0.5}, {1, 0, 129, 250, 333, -0.75, 0.0}};

/* Device d's primary context (retained; the test keeps it to the end). */
static CUresult primary_context(int d, CUcontext *ctx) {
    CUdevice dev;
    CUresult r = gt_cu.device_get(&dev, d);
    if (r == CUDA_SUCCESS) r = gt_cu.primary_ctx_retain(ctx, dev);
    return r;
}

/* One device's work: its problems (made by main in its context), outputs, the keys of its
 * calls and what the calls returned. out[s][0] is shape s's first call (shape 0 on stream
 * a, shape 1 on stream b), out[s][1] and out[s][2] its later calls on a and on b. */
typedef struct {
    int dev;
    CUcontext ctx;
    prob p[NSHAPES];
    gr_ref ref[NSHAPES];
    CUdeviceptr out[NSHAPES][NOUT];
    gt_key key[NSHAPES];
    CUresult setup, sync;
    gt_status st[NSHAPES][NOUT];
    char err[256];
} gpu_work;

static void work_init(gpu_work *w, int d) {
    memset(w, 0, sizeof *w);
    w->dev = d;
    w->setup = primary_context(d, &w->ctx);
    if (w->setup == CUDA_SUCCESS) w->setup = gt_cu.ctx_set_current(w->ctx);
    if (w->setup != CUDA_SUCCESS) return;
    for (int s = 0; s < NSHAPES; s++) {
        prob_init(&w->p[s], GT_DT_F32, shapes[s].opa, shapes[s].opb, shapes[s].m, shapes[s].n,
                  shapes[s].k, 0, 0, 0, shapes[s].alpha, shapes[s].beta);
        prob_reference(&w->p[s], &w->ref[s]);
        for (int o = 0; o < NOUT; o++) {
            gt_cu.mem_alloc(&w->out[s][o], c_bytes(&w->p[s]));
            gt_cu.memcpy_htod(w->out[s][o], w->p[s].C0, c_bytes(&w->p[s]));
        }
    }
}

static void work_free(gpu_work *w) {
    if (w->setup != CUDA_SUCCESS) return;
    gt_cu.ctx_set_current(w->ctx);
    for (int s = 0; s < NSHAPES; s++) {
        for (int o = 0; o < NOUT; o++) gt_cu.mem_free(w->out[s][o]);
        gr_ref_free(&w->ref[s]);
        prob_free(&w->p[s]);
    }
}

/* Thread d: device d's context, two streams of its own, the calls, then the keys. */
static void *device_body(void *arg) {
    gpu_work *w = arg;
    CUcontext ctx;
    CUresult r = primary_context(w->dev, &ctx);
    if (r == CUDA_SUCCESS) r = gt_cu.ctx_set_current(ctx);
    CUstream st[2] = {NULL, NULL};
    for (int i = 0; i < 2 && r == CUDA_SUCCESS; i++)
        r = gt_cu.stream_create(&st[i], CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        w->sync = r;
        snprintf(w->err, sizeof w->err, "device %d: context or streams: CUresult %d", w->dev,
                 (int)r);
        return NULL;
    }
    /* First calls: shape 0 on a, shape 1 on b; each new to this context, so each tunes
     * (or, where the other thread stored the same key first, comes from the cache). */
    for (int s = 0; s < NSHAPES; s++)
        w->st[s][0] = prob_launch(&w->p[s], w->out[s][0], st[s]);
    /* Then both shapes on both streams. */
    for (int s = 0; s < NSHAPES; s++)
        for (int i = 0; i < 2; i++)
            w->st[s][1 + i] = prob_launch(&w->p[s], w->out[s][1 + i], st[i]);
    for (int s = 0; s < NSHAPES; s++)
        for (int o = 0; o < NOUT; o++)
            if (w->st[s][o] != GT_SUCCESS && !w->err[0])
                snprintf(w->err, sizeof w->err, "%s", gt_last_error());
    w->sync = gt_cu.stream_synchronize(st[0]);
    if (w->sync == CUDA_SUCCESS) w->sync = gt_cu.stream_synchronize(st[1]);
    gt_devctx *dc;
    if (gt_devctx_get(ctx, &dc) == GT_SUCCESS)
        for (int s = 0; s < NSHAPES; s++) {
            const gt_gemm g = prob_gemm(&w->p[s], w->out[s][0]);
            gt_call_key(dc, &g, &w->key[s]);
        }
    gt_cu.stream_destroy(st[0]);
    gt_cu.stream_destroy(st[1]);
    return NULL;
}

static void multigpu_two_threads(void) {
    NEED_TWO_GPUS();
    CUcontext current = NULL;
    gt_cu.ctx_get_current(&current);
    gpu_work w[NDEV];
    for (int d = 0; d < NDEV; d++) {
        work_init(&w[d], d);
        TAP_CHECK(w[d].setup == CUDA_SUCCESS, "device %d: its primary context: CUresult %d", d,
                  (int)w[d].setup);
    }
    gt_cu.ctx_set_current(current);
    if (w[0].setup == CUDA_SUCCESS && w[1].setup == CUDA_SUCCESS) {
        pthread_t t[NDEV];
        int started[NDEV];
        for (int d = 0; d < NDEV; d++)
            started[d] = pthread_create(&t[d], NULL, device_body, &w[d]) == 0;
        for (int d = 0; d < NDEV; d++)
            if (started[d]) pthread_join(t[d], NULL);
        for (int d = 0; d < NDEV; d++) {
            TAP_CHECK(started[d], "thread %d not started", d);
            if (!started[d]) continue;
            TAP_CHECK(w[d].sync == CUDA_SUCCESS, "device %d: CUresult %d: %s", d, (int)w[d].sync,
                      w[d].err);
            gt_cu.ctx_set_current(w[d].ctx);
            for (int s = 0; s < NSHAPES; s++)
                for (int o = 0; o < NOUT; o++) {
                    TAP_CHECK(w[d].st[s][o] == GT_SUCCESS, "device %d shape %d call %d: %s: %s", d,
                              s, o, gt_status_string(w[d].st[s][o]), w[d].err);
                    if (w[d].st[s][o] != GT_SUCCESS || w[d].sync != CUDA_SUCCESS) continue;
                    prob_fetch_c(&w[d].p[s], w[d].out[s][o]);
                    gr_result res;
                    double e = prob_grade(&w[d].p[s], &w[d].ref[s], &res);
                    TAP_CHECK(e <= 1.0, "device %d shape %d call %d: %s", d, s, o, res.text);
                }
            /* Each context has its own plan of each key. */
            for (int s = 0; s < NSHAPES; s++) {
                char text[256];
                gt_key_format(&w[d].key[s], text, sizeof text);
                const gt_plan *pl = gt_plan_find(w[d].ctx, &w[d].key[s]);
                TAP_CHECK(pl && pl->ctx == w[d].ctx, "device %d: no plan of %s in its context", d,
                          text);
                if (pl) printf("# device %d: %s: plan source %d\n", d, text, pl->source);
            }
        }
        for (int s = 0; s < NSHAPES; s++) {
            const gt_plan *p0 = gt_plan_find(w[0].ctx, &w[0].key[s]);
            const gt_plan *p1 = gt_plan_find(w[1].ctx, &w[1].key[s]);
            TAP_CHECK(!p0 || !p1 || p0 != p1, "shape %d: both contexts share one plan", s);
        }
    }
    for (int d = 0; d < NDEV; d++) work_free(&w[d]);
    gt_cu.ctx_set_current(current);
}

/* From device `from`'s context, a call on a stream of device `to` with device to's
 * buffers: it must run on device `to` (the stream's context) and leave `from`'s context
 * current. */
static void call_across(int from, int to) {
    gpu_work w;
    work_init(&w, to);
    TAP_CHECK(w.setup == CUDA_SUCCESS, "device %d: its primary context: CUresult %d", to,
              (int)w.setup);
    if (w.setup != CUDA_SUCCESS) return;
    CUstream s = NULL;
    CUresult r = gt_cu.stream_create(&s, CU_STREAM_NON_BLOCKING);
    TAP_CHECK(r == CUDA_SUCCESS, "device %d: cuStreamCreate: %d", to, (int)r);
    CUcontext from_ctx = NULL, now = NULL;
    if (r == CUDA_SUCCESS) r = primary_context(from, &from_ctx);
    if (r == CUDA_SUCCESS) r = gt_cu.ctx_set_current(from_ctx);
    TAP_CHECK(r == CUDA_SUCCESS, "device %d's context: %d", from, (int)r);
    if (r == CUDA_SUCCESS) {
        gt_status st = prob_launch(&w.p[0], w.out[0][0], s);
        gt_cu.ctx_get_current(&now);
        TAP_CHECK(st == GT_SUCCESS, "device %d's stream from device %d's context: %s: %s", to,
                  from, gt_status_string(st), gt_last_error());
        TAP_CHECK(now == from_ctx, "the call changed the current context");
        r = gt_cu.stream_synchronize(s);
        TAP_CHECK(r == CUDA_SUCCESS, "device %d's stream: %d", to, (int)r);
        gt_cu.ctx_set_current(w.ctx);
        if (st == GT_SUCCESS && r == CUDA_SUCCESS) {
            prob_fetch_c(&w.p[0], w.out[0][0]);
            gr_result res;
            double e = prob_grade(&w.p[0], &w.ref[0], &res);
            TAP_CHECK(e <= 1.0, "device %d's call from device %d's context: %s", to, from,
                      res.text);
        }
    }
    gt_cu.ctx_set_current(w.ctx);
    if (s) gt_cu.stream_destroy(s);
    work_free(&w);
}

static void multigpu_stream_context_wins(void) {
    NEED_TWO_GPUS();
    CUcontext current = NULL;
    gt_cu.ctx_get_current(&current);
    call_across(0, 1);
    call_across(1, 0);
    gt_cu.ctx_set_current(current);
}

int main(void) {
    /* A cache of this run's own, so that both shapes are new. */
    char dir[] = "/tmp/gt_multigpu_XXXXXX", path[300] = "";
    if (mkdtemp(dir)) {
        snprintf(path, sizeof path, "%s/cache.db", dir);
        setenv("GEMMTUNE_CACHE", path, 1);
    }
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "4", 1);
    gt_set_mode(GT_MODE_TUNE);
    gt_set_tune_async(0);
    gpu_state = gpu_probe(no_gpu_reason, sizeof no_gpu_reason, 0);
    TAP_RUN(multigpu_two_threads);
    TAP_RUN(multigpu_stream_context_wins);
    gt_release();
    if (path[0]) {
        static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
        for (int i = 0; i < 4; i++) {
            char f[320];
            snprintf(f, sizeof f, "%s%s", path, suffixes[i]);
            unlink(f);
        }
        rmdir(dir);
    }
    return tap_done();
}
