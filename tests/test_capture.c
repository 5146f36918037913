/*
 * test_capture.c: gemm_tuned, gemm_tuned_d and gemm_tuned_ex on streams under CUDA Graph
 * capture, beside other streams and threads, with an application workspace
 * (gt_set_workspace), and on many short-lived streams (gemmtune.h, the comment above
 * gt_set_workspace; issue 24).
 * Without a CUDA device every case reports "skipped: no CUDA device" (gpu_probe.h).
 *
 * Each capture records the application's own work around the library's call on a new
 * non-blocking stream: C = C0 (a device copy), the GEMM with beta != 0 (so it reads C),
 * then D = C. A graph that lost the GEMM, ran it out of order or ran it before the capture
 * leaves C0 in D; D is zeroed before every replay, so a replay that does nothing leaves
 * zeros. Every result (each replay's D, each eager call's C) is graded element by element
 * against the test's own float64 CPU reference (prob.h, grade.h).
 *   capture_cached_splitk     per capture mode (global, thread-local, relaxed): an f32 shape
 *                             whose split-K configuration is pinned through the cache, first
 *                             met inside the capture: the call succeeds, the capture ends
 *                             valid, 100 replays are right; one call counted as captured,
 *                             nothing tuned or deferred, the plan the pinned one.
 *   capture_cached_wgmma      the same for bf16 WGMMA configurations (a cluster of two, a
 *                             split-K one, a plain one) through gemm_tuned_ex (sm_90 only).
 *   capture_new_shape         per capture mode, a shape in no cache (f32, f64, f32): counted
 *                             captured and deferred, not tuned inside the capture; replays
 *                             right; the first call outside capture tunes it, the next does
 *                             not; the graph still replays right afterwards.
 *   capture_new_shape_async   the same with background tuning: the worker tunes the shape
 *                             after the capture (async_tunes goes up); replays right before
 *                             and after.
 *   capture_graphs_beside_eager_calls  two graphs of one split-K shape replayed on two
 *                             streams while eager calls of the shape run on the stream the
 *                             graphs were captured on: no workspace is shared among them.
 *   capture_from_another_thread  a global capture begun by one thread, the call made on the
 *                             capturing stream by a second, while a third tunes a new shape
 *                             on its own stream: the capture stays valid, all results right.
 *   capture_set_workspace     gt_set_workspace's argument errors change nothing; with a
 *                             workspace set, eager and captured split-K calls use it and are
 *                             right; given back, it is left alone; one too small is not used
 *                             (one warning) and calls stay right.
 *   capture_staged            bf16 9 x 65536 x 4096 NT with lda = ldc = 9 (2-byte class)
 *                             beside a 16-byte aligned 512 MiB B, beta != 0 (C copied in
 *                             and back): the call stages A and C (src/stage.h; counted
 *                             staged) eagerly and under capture, and every result and
 *                             replay is right.
 *   many_streams_bounded      200 streams made, used for one split-K call each and destroyed:
 *                             every result right, and device memory bounded by the library's
 *                             table of 64 stream workspaces.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cu.h"
#include "devctx.h"
#include "gemmtune.h"
#include "gpu_probe.h"
#include "grade.h"
#include "kcfg.h"
#include "log.h"
#include "plan.h"
#include "prob.h"
#include "tap.h"

/* No GPU: skipped; a GPU that failed to set up: failed (gpu_probe.h). */
GPU_TEST_STATE();

enum { REPLAYS = 100 };

static const CUstreamCaptureMode capture_modes[3] = {
    CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
    CU_STREAM_CAPTURE_MODE_RELAXED};
static const char *const capture_mode_names[3] = {"global", "thread-local", "relaxed"};

/* The split-K configuration test_gpu's gpu_splitk_shapes_one_stream pins for 64x96x4099:NT
 * (tiles 64 x 32, 4 splits, 16-byte vectors): legal for every K used with it here. */
static const char *const splitk_cfg = "f0_64x32x16_w32x16_t4x4_s3_v4_k4_r1";

/* ===== helpers ===== */

/* A failing driver call is a failure of the case, named with the caller's line; 1 when
 * the call succeeded. */
#define CU_CHECK(call) cu_check((call), #call, __LINE__)
static int cu_check(CUresult r, const char *what, int line) {
    if (r == CUDA_SUCCESS) return 1;
    const char *name = "?";
    gt_cu.get_error_name(r, &name);
    TAP_CHECK(r == CUDA_SUCCESS, "line %d: %s: %s (%d)", line, what, name, (int)r);
    return 0;
}

static CUdeviceptr dev_alloc(size_t bytes) {
    CUdeviceptr p = 0;
    CU_CHECK(gt_cu.mem_alloc(&p, bytes));
    return p;
}

static CUstream new_stream(void) {
    CUstream s = NULL;
    CU_CHECK(gt_cu.stream_create(&s, CU_STREAM_NON_BLOCKING));
    return s;
}

static unsigned long long diff(uint64_t after, uint64_t before) {
    return (unsigned long long)(after - before);
}

/* What these cases need of the driver and device beyond capture itself:
 * cuGraphInstantiateWithFlags (CUDA 11.4) to replay a graph, and stream-ordered allocation
 * (CUDA 11.2 and a device with memory pools) for the workspace a captured split-K kernel
 * owns. NULL when all are there, else what is missing. */
static const char *graphs_missing(void) {
    if (!gt_cu.graph_instantiate) return "cuGraphInstantiateWithFlags (CUDA 11.4)";
    if (!gt_cu.mem_alloc_async || !gt_cu.mem_free_async) return "cuMemAllocAsync (CUDA 11.2)";
    CUdevice dev;
    int pools = 0;
    if (gt_cu.ctx_get_device(&dev) == CUDA_SUCCESS)
        gt_cu.device_get_attribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev);
    if (!pools) return "memory pools on this device (stream-ordered allocation)";
    return NULL;
}

/* The opening of every case: a GPU (NEED_GPU), what graphs_missing names (else skipped),
 * and the current context's state in dc (a failure to get it fails the case). */
#define NEED_GRAPHS(dc)                                                          \
    do {                                                                         \
        NEED_GPU();                                                              \
        const char *missing_ = graphs_missing();                                 \
        if (missing_) TAP_SKIP("skipped: no %s", missing_);                      \
        if (current_devctx(&(dc)) != GT_SUCCESS) {                               \
            TAP_CHECK(0, "context state: %s", gt_last_error());                  \
            return;                                                              \
        }                                                                        \
    } while (0)

/* One problem to capture: A, B and C0 (job.p; p.dC holds C0 on the device and is never
 * written), its reference, the GEMM's C and D, the application's copy of C after the GEMM. */
typedef struct {
    prob p;
    gr_ref ref;
    CUdeviceptr C, D;
    gt_key key;        /* the key of the call into C */
    char name[96];     /* "f32 64x96x4099:NT" */
} job;

static void job_init(job *j, gt_devctx *dc, int dt, int opa, int opb, long long m, long long n,
                     long long k, double alpha, double beta) {
    memset(j, 0, sizeof *j);
    prob_init(&j->p, dt, opa, opb, m, n, k, 0, 0, 0, alpha, beta);
    prob_reference(&j->p, &j->ref);
    j->C = dev_alloc(c_bytes(&j->p));
    j->D = dev_alloc(c_bytes(&j->p));
    /* Every buffer is a fresh allocation: the call into C has the key of a call into
     * p.dC, and of a call into any other fresh buffer of C's size. */
    const gt_gemm g = prob_gemm(&j->p, j->C);
    gt_call_key(dc, &g, &j->key);
    char shape[64];
    gt_key_shape(&j->key, shape, sizeof shape);
    snprintf(j->name, sizeof j->name, "%s %s", gt_dtype_name(dt), shape);
}

static void job_free(job *j) {
    gr_ref_free(&j->ref);
    gt_cu.mem_free(j->C);
    gt_cu.mem_free(j->D);
    prob_free(&j->p);
}

/* Pins cfg as j's cached winner (prob.h); 0, or -1 with the case failed. */
static int job_pin(job *j, gt_devctx *dc, const char *cfg) {
    char why[600];
    if (pin_config(dc, &j->key, cfg, why, sizeof why) == 0) return 0;
    TAP_CHECK(0, "%s: cannot pin %s: %s", j->name, cfg, why);
    return -1;
}

/* The GEMM alone on s, outside capture: C = C0, the call, then C graded. The worst
 * |C - ref| / bound (<= 1 when right; +inf when the call or a driver call failed). */
static double job_eager(job *j, CUstream s, gt_status *st, gr_result *res) {
    memset(res, 0, sizeof *res);
    *st = GT_INTERNAL;
    if (!CU_CHECK(gt_cu.memcpy_dtod_async(j->C, j->p.dC, c_bytes(&j->p), s))) return INFINITY;
    *st = prob_launch(&j->p, j->C, s);
    if (*st != GT_SUCCESS) {
        snprintf(res->text, sizeof res->text, "%s: %s", gt_status_string(*st), gt_last_error());
        return INFINITY;
    }
    if (!CU_CHECK(gt_cu.stream_synchronize(s))) return INFINITY;
    prob_fetch_c(&j->p, j->C);
    return prob_grade(&j->p, &j->ref, res);
}

/* A captured graph and its executable form. */
typedef struct {
    CUgraph graph;
    CUgraphExec exec;
} graph;

static void graph_free(graph *g) {
    if (g->exec) gt_cu.graph_exec_destroy(g->exec);
    if (g->graph) gt_cu.graph_destroy(g->graph);
    g->exec = NULL;
    g->graph = NULL;
}

/* Instantiates g->graph; 1 when g->exec is ready. */
static int graph_ready(graph *g, const char *label) {
    CUresult r = gt_cu.graph_instantiate(&g->exec, g->graph, 0);
    const char *name = "?";
    if (r != CUDA_SUCCESS) gt_cu.get_error_name(r, &name);
    TAP_CHECK(r == CUDA_SUCCESS, "%s: cuGraphInstantiateWithFlags: %s (%d)", label, name, (int)r);
    if (r != CUDA_SUCCESS) g->exec = NULL;
    return r == CUDA_SUCCESS;
}

/* Captures j on s in `mode`, the application's work around the call (C = C0; the GEMM;
 * D = C), and instantiates the graph. The call must succeed and the capture end valid with
 * a graph. 1 when g->exec is ready to replay. */
static int job_capture(job *j, CUstream s, CUstreamCaptureMode mode, graph *g, const char *label) {
    memset(g, 0, sizeof *g);
    if (!CU_CHECK(gt_cu.stream_begin_capture(s, mode))) return 0;
    const size_t bytes = c_bytes(&j->p);
    CUresult before = gt_cu.memcpy_dtod_async(j->C, j->p.dC, bytes, s);
    gt_status st = prob_launch(&j->p, j->C, s);
    char err[256];
    snprintf(err, sizeof err, "%s", st == GT_SUCCESS ? "" : gt_last_error());
    CUresult after = gt_cu.memcpy_dtod_async(j->D, j->C, bytes, s);
    CUresult end = gt_cu.stream_end_capture(s, &g->graph);
    const char *end_name = "?";
    if (end != CUDA_SUCCESS) gt_cu.get_error_name(end, &end_name);
    TAP_CHECK(before == CUDA_SUCCESS && after == CUDA_SUCCESS,
              "%s: the application's copies in the capture: %d, %d", label, (int)before,
              (int)after);
    TAP_CHECK(st == GT_SUCCESS, "%s: the call under capture: %s: %s", label,
              gt_status_string(st), err);
    TAP_CHECK(end == CUDA_SUCCESS && g->graph != NULL, "%s: cuStreamEndCapture: %s (%d)%s", label,
              end_name, (int)end, end == CUDA_SUCCESS ? ", no graph" : "");
    if (before != CUDA_SUCCESS || after != CUDA_SUCCESS || st != GT_SUCCESS ||
        end != CUDA_SUCCESS || !g->graph) {
        graph_free(g);
        return 0;
    }
    return graph_ready(g, label);
}

/* Replays g on s `times` times, D zeroed before each, and grades D after each. The number
 * of replays that were wrong; the first is reported. */
static int job_replays(job *j, graph *g, CUstream s, int times, const char *label) {
    const size_t bytes = c_bytes(&j->p);
    int wrong = 0;
    double worst = 0;
    for (int r = 0; r < times; r++) {
        if (!CU_CHECK(gt_cu.memset_d8_async(j->D, 0, bytes, s)) ||
            !CU_CHECK(gt_cu.graph_launch(g->exec, s)) || !CU_CHECK(gt_cu.stream_synchronize(s))) {
            TAP_CHECK(0, "%s: replay %d of %d failed", label, r + 1, times);
            return times - r;
        }
        prob_fetch_c(&j->p, j->D);
        gr_result res;
        double e = prob_grade(&j->p, &j->ref, &res);
        if (e > worst) worst = e;
        if (!(e <= 1.0) && !wrong++)
            TAP_CHECK(e <= 1.0, "%s: replay %d of %d wrong: %s", label, r + 1, times, res.text);
    }
    TAP_CHECK(wrong == 0, "%s: %d of %d replays wrong", label, wrong, times);
    printf("# %s: %d replays, worst |err| / bound %.3g\n", label, times, worst);
    return wrong;
}

/* The plan of j's key must be `cfg` from the cache (the pinned winner): the captured call
 * ran it, and later calls do. */
static void check_pinned_plan(gt_devctx *dc, const job *j, const char *cfg, const char *label) {
    const gt_plan *pl = gt_plan_find(dc->ctx, &j->key);
    char text[GT_DB_CONFIG_MAX] = "-";
    if (pl) gt_kcfg_format(&pl->kern.cfg, text, sizeof text);
    TAP_CHECK(pl && pl->source == GT_SRC_CACHE && strcmp(text, cfg) == 0,
              "%s: the plan is %s (source %d), want the pinned %s from the cache", label, text,
              pl ? pl->source : -1, cfg);
}

/* ===== 1. cached shapes under capture, in each capture mode ===== */

/* One capture of a shape pinned in the cache, first met inside the capture (so the kernel
 * is loaded under capture, in relaxed mode): the call is captured, nothing is tuned or
 * deferred, the cache's entry is what runs, and every replay is right. */
static int capture_pinned(gt_devctx *dc, job *j, const char *cfg, CUstream s, int mode) {
    char label[160];
    snprintf(label, sizeof label, "%s, %s capture", j->name, capture_mode_names[mode]);
    if (job_pin(j, dc, cfg) != 0) return 0;
    gt_stats before, after;
    gt_get_stats(&before);
    graph g;
    int ready = job_capture(j, s, capture_modes[mode], &g, label);
    gt_get_stats(&after);
    TAP_CHECK(after.captured - before.captured == 1, "%s: captured +%llu, want 1", label,
              diff(after.captured, before.captured));
    TAP_CHECK(after.tunes == before.tunes && after.deferred == before.deferred,
              "%s: tunes +%llu, deferred +%llu under capture (want 0: the shape is cached)",
              label, diff(after.tunes, before.tunes), diff(after.deferred, before.deferred));
    TAP_CHECK(after.cache_hits - before.cache_hits == 1 && after.nearest == before.nearest &&
                  after.fallbacks == before.fallbacks,
              "%s: cache hits +%llu (want 1), nearest +%llu, fallbacks +%llu (want 0)", label,
              diff(after.cache_hits, before.cache_hits), diff(after.nearest, before.nearest),
              diff(after.fallbacks, before.fallbacks));
    check_pinned_plan(dc, j, cfg, label);
    if (ready) job_replays(j, &g, s, REPLAYS, label);
    graph_free(&g);
    return 1;
}

/* f32, split-K pinned: the workspace of the captured kernel is the graph's own. K differs
 * per mode so that each capture meets its shape first. */
static void capture_cached_splitk(void) {
    gt_devctx *dc = NULL;
    NEED_GRAPHS(dc);
    CUstream s = new_stream();
    for (int mode = 0; mode < 3; mode++) {
        job j;
        job_init(&j, dc, GT_DT_F32, 0, 1, 64, 96, 4099 + 2 * mode, 1.5, -0.5);
        if (capture_pinned(dc, &j, splitk_cfg, s, mode)) {
            const gt_plan *pl = gt_plan_find(dc->ctx, &j.key);
            TAP_CHECK(pl && pl->kern.cfg.split > 1 && pl->kern.ws_bytes > 0,
                      "%s: the plan is not a split-K kernel with a workspace", j.name);
        }
        job_free(&j);
    }
    gt_cu.stream_destroy(s);
}

/* bf16 WGMMA (sm_90), pinned through gemm_tuned_ex: thread-block clusters of two (launched
 * with cuLaunchKernelEx) in the global capture, split-K (a 5 MB workspace the graph owns)
 * in the thread-local one, a plain kernel in the relaxed one. */
static void capture_cached_wgmma(void) {
    gt_devctx *dc = NULL;
    NEED_GRAPHS(dc);
    if (dc->arch != 90) TAP_SKIP("skipped: WGMMA needs a 9.0 device (this one is sm_%d)", dc->arch);
    static const char *const cfgs[3] = {"f3_64x128x64_w64x64_t2x1_s4_v8_k1_r1",
                                        "f3_64x128x64_w64x64_t1x1_s4_v8_k2_r1",
                                        "f3_64x128x64_w64x64_t1x1_s4_v8_k1_r1"};
    CUstream s = new_stream();
    for (int mode = 0; mode < 3; mode++) {
        /* Leading dimensions 1000 and K, multiples of 8: TMA reads A and B in place. */
        job j;
        job_init(&j, dc, GT_DT_BF16, 0, 0, 1000, 517, 256 + 64 * mode, 1.5, -0.5);
        capture_pinned(dc, &j, cfgs[mode], s, mode);
        job_free(&j);
    }
    gt_cu.stream_destroy(s);
}

/* ===== 2. shapes in no cache under capture ===== */

/* A shape in no cache captured in `mode` (mode tune): it runs without tuning (what mode
 * cached would run), is counted captured and deferred, and the graph replays right. Then,
 * with async off, the first call outside capture tunes it and is right, the next is a plan
 * hit, and the graph, which keeps its kernel, still replays right. */
static void capture_new_one(gt_devctx *dc, job *j, CUstream s, int mode) {
    char label[160];
    snprintf(label, sizeof label, "%s (new), %s capture", j->name, capture_mode_names[mode]);
    gt_stats before, after;
    gt_get_stats(&before);
    graph g;
    int ready = job_capture(j, s, capture_modes[mode], &g, label);
    gt_get_stats(&after);
    TAP_CHECK(after.captured - before.captured == 1, "%s: captured +%llu, want 1", label,
              diff(after.captured, before.captured));
    TAP_CHECK(after.deferred - before.deferred == 1, "%s: deferred +%llu, want 1", label,
              diff(after.deferred, before.deferred));
    TAP_CHECK(after.tunes == before.tunes, "%s: tuned under capture (tunes +%llu)", label,
              diff(after.tunes, before.tunes));
    printf("# %s: under capture nearest +%llu, fallbacks +%llu\n", label,
           diff(after.nearest, before.nearest), diff(after.fallbacks, before.fallbacks));
    if (ready) job_replays(j, &g, s, REPLAYS, label);

    /* Outside capture: the first call tunes, the second finds the tuned plan. */
    for (int call = 0; call < 2; call++) {
        gt_status st;
        gr_result res;
        gt_get_stats(&before);
        double e = job_eager(j, s, &st, &res);
        gt_get_stats(&after);
        TAP_CHECK(st == GT_SUCCESS && e <= 1.0, "%s: call %d after the capture: %s", label,
                  call + 1, res.text);
        TAP_CHECK(after.tunes - before.tunes == (call == 0 ? 1u : 0u),
                  "%s: call %d after the capture: tunes +%llu, want %d", label, call + 1,
                  diff(after.tunes, before.tunes), call == 0);
    }
    const gt_plan *pl = gt_plan_find(dc->ctx, &j->key);
    TAP_CHECK(pl && pl->source == GT_SRC_TUNED,
              "%s: after the capture the plan's source is %d, want %d (tuned)", label,
              pl ? pl->source : -1, GT_SRC_TUNED);
    if (ready) {
        char again[192];
        snprintf(again, sizeof again, "%s, after the tuning", label);
        job_replays(j, &g, s, 10, again);
    }
    graph_free(&g);
}

/* Fresh shapes in every mode: f32 NT (its nearest tuned shape, if the f32 cases ran first,
 * is a split-K one), f64 NT through gemm_tuned_d, f32 TN. */
static void capture_new_shape(void) {
    gt_devctx *dc = NULL;
    NEED_GRAPHS(dc);
    static const struct {
        int dt, opa, opb;
        long long m, n, k;
    } sh[3] = {{GT_DT_F32, 0, 1, 72, 88, 2001},
               {GT_DT_F64, 0, 1, 72, 88, 2001},
               {GT_DT_F32, 1, 0, 100, 60, 1500}};
    CUstream s = new_stream();
    for (int mode = 0; mode < 3; mode++) {
        job j;
        job_init(&j, dc, sh[mode].dt, sh[mode].opa, sh[mode].opb, sh[mode].m, sh[mode].n,
                 sh[mode].k, 1.25, 0.75);
        capture_new_one(dc, &j, s, mode);
        job_free(&j);
    }
    gt_cu.stream_destroy(s);
}

/* Narrow small operands staged into aligned copies (src/stage.h), eagerly and under
 * capture: the copies in, the product and C's copy back are stream work, all captured. */
static void capture_staged(void) {
    gt_devctx *dc = NULL;
    NEED_GRAPHS(dc);
    if (dc->arch < 80) TAP_SKIP("skipped: bf16 needs sm_80 (this one is sm_%d)", dc->arch);
    CUstream s = new_stream();
    {
        job j;
        job_init(&j, dc, GT_DT_BF16, 0, 1, 9, 65536, 4096, 1.25, 0.75);
        TAP_CHECK(j.key.align == 2, "%s: class %d, want 2", j.name, j.key.align);
        gt_stats before, after;
        gt_get_stats(&before);
        gt_status st;
        gr_result res;
        double e = job_eager(&j, s, &st, &res);
        gt_get_stats(&after);
        TAP_CHECK(st == GT_SUCCESS && e <= 1.0, "%s beta %g, eager: %s", j.name, j.p.beta,
                  res.text);
        TAP_CHECK(after.staged - before.staged == 1, "%s beta %g: staged +%llu, want 1",
                  j.name, j.p.beta, diff(after.staged, before.staged));
        char label[160];
        snprintf(label, sizeof label, "%s beta %g, global capture", j.name, j.p.beta);
        graph g;
        gt_get_stats(&before);
        int ready = job_capture(&j, s, CU_STREAM_CAPTURE_MODE_GLOBAL, &g, label);
        gt_get_stats(&after);
        TAP_CHECK(after.staged - before.staged == 1 && after.captured - before.captured == 1,
                  "%s: staged +%llu, captured +%llu, want 1 and 1", label,
                  diff(after.staged, before.staged), diff(after.captured, before.captured));
        if (ready) job_replays(&j, &g, s, 3, label);
        graph_free(&g);
        job_free(&j);
    }
    gt_cu.stream_destroy(s);
}

/* Background tuning on: a new shape captured runs untuned and is queued for the worker,
 * which tunes it after the capture; the graph replays right before and after. */
static void capture_new_shape_async(void) {
    gt_devctx *dc = NULL;
    NEED_GRAPHS(dc);
    gt_set_tune_async(1);
    CUstream s = new_stream();
    job j;
    job_init(&j, dc, GT_DT_F32, 0, 1, 72, 88, 2011, 1.25, 0.75);
    const char *label = "f32 72x88x2011:NT (new, async), global capture";
    gt_stats before, after;
    gt_get_stats(&before);
    graph g;
    int ready = job_capture(&j, s, CU_STREAM_CAPTURE_MODE_GLOBAL, &g, label);
    gt_get_stats(&after);
    TAP_CHECK(after.captured - before.captured == 1 && after.deferred - before.deferred == 1,
              "%s: captured +%llu, deferred +%llu (want 1 each)", label,
              diff(after.captured, before.captured), diff(after.deferred, before.deferred));
    if (ready) job_replays(&j, &g, s, REPLAYS, label);
    /* The worker's tuning, which the capture queued: up to 30 s. */
    double t0 = tap_now_s();
    gt_stats now = after;
    while (now.async_tunes == before.async_tunes && tap_now_s() - t0 < 30.0) {
        usleep(20000);
        gt_get_stats(&now);
    }
    TAP_CHECK(now.async_tunes > before.async_tunes, "%s: no background tuning within 30 s", label);
    printf("# %s: tuned on the worker %.2f s after the capture\n", label, tap_now_s() - t0);
    if (ready) job_replays(&j, &g, s, REPLAYS, label);
    gt_status st;
    gr_result res;
    double e = job_eager(&j, s, &st, &res);
    TAP_CHECK(st == GT_SUCCESS && e <= 1.0, "%s: the call after the worker's tuning: %s", label,
              res.text);
    graph_free(&g);
    job_free(&j);
    gt_cu.stream_destroy(s);
    gt_set_tune_async(0);
}

/* ===== 3. graphs beside eager calls ===== */

/* Two graphs of the pinned split-K shape, both captured on stream Y, replayed REPLAYS times
 * each on streams X1 and X2 while eager calls of the same shape run on Y, all enqueued
 * without waiting so that they overlap on the GPU. A workspace shared between the graphs,
 * or between a graph and Y's own calls (whose workspace is Y's), mixes partial sums and
 * tile counters: the results show it. Each replay's D is copied out on its stream after
 * it; each eager call has its own C. */
static void capture_graphs_beside_eager_calls(void) {
    gt_devctx *dc = NULL;
    NEED_GRAPHS(dc);
    /* Three problems of one shape (so one key), each with its own data. */
    job jg[2], je;
    for (int i = 0; i < 2; i++) job_init(&jg[i], dc, GT_DT_F32, 0, 1, 64, 96, 4099, 1.5, -0.5);
    job_init(&je, dc, GT_DT_F32, 0, 1, 64, 96, 4099, 1.5, -0.5);
    const size_t bytes = c_bytes(&je.p);
    CUstream y = new_stream(), x[2] = {new_stream(), new_stream()};
    /* Outputs: REPLAYS of each graph's D, REPLAYS eager C's (each a multiple of 256 bytes
     * apart, so the eager calls keep the key's alignment class). */
    CUdeviceptr out[3];
    for (int i = 0; i < 3; i++) out[i] = dev_alloc(REPLAYS * bytes);
    graph g[2] = {{NULL, NULL}, {NULL, NULL}};
    int ready = job_pin(&je, dc, splitk_cfg) == 0;
    gt_stats before, after;
    gt_get_stats(&before);
    for (int i = 0; ready && i < 2; i++) {
        char label[160];
        snprintf(label, sizeof label, "%s, graph %d", jg[i].name, i + 1);
        ready = job_capture(&jg[i], y, CU_STREAM_CAPTURE_MODE_GLOBAL, &g[i], label);
    }
    gt_get_stats(&after);
    TAP_CHECK(!ready || after.captured - before.captured == 2, "captured +%llu, want 2",
              diff(after.captured, before.captured));
    const gt_plan *pl = gt_plan_find(dc->ctx, &je.key);
    TAP_CHECK(!ready || (pl && pl->kern.cfg.split > 1), "%s: the plan is not split-K", je.name);
    if (ready) {
        int failed = 0;
        for (int r = 0; r < REPLAYS && !failed; r++) {
            for (int i = 0; i < 2; i++) {
                const CUdeviceptr d = out[i] + r * bytes;
                failed |= !CU_CHECK(gt_cu.memset_d8_async(jg[i].D, 0, bytes, x[i])) ||
                          !CU_CHECK(gt_cu.graph_launch(g[i].exec, x[i])) ||
                          !CU_CHECK(gt_cu.memcpy_dtod_async(d, jg[i].D, bytes, x[i]));
            }
            CUdeviceptr c = out[2] + r * bytes;
            failed |= !CU_CHECK(gt_cu.memcpy_dtod_async(c, je.p.dC, bytes, y));
            gt_status st = prob_launch(&je.p, c, y);
            TAP_CHECK(st == GT_SUCCESS, "eager call %d on the capturing stream: %s: %s", r + 1,
                      gt_status_string(st), gt_last_error());
            failed |= st != GT_SUCCESS;
        }
        CU_CHECK(gt_cu.stream_synchronize(x[0]));
        CU_CHECK(gt_cu.stream_synchronize(x[1]));
        CU_CHECK(gt_cu.stream_synchronize(y));
        static const char *const what[3] = {"graph 1's replay", "graph 2's replay", "eager call"};
        for (int i = 0; i < 3 && !failed; i++) {
            job *j = i < 2 ? &jg[i] : &je;
            int wrong = 0;
            double worst = 0;
            for (int r = 0; r < REPLAYS; r++) {
                prob_fetch_c(&j->p, out[i] + r * bytes);
                gr_result res;
                double e = prob_grade(&j->p, &j->ref, &res);
                if (e > worst) worst = e;
                if (!(e <= 1.0) && !wrong++)
                    TAP_CHECK(e <= 1.0, "%s %d wrong: %s", what[i], r + 1, res.text);
            }
            TAP_CHECK(wrong == 0, "%d of %d of the %ss wrong", wrong, REPLAYS, what[i]);
            printf("# %s: %d, worst |err| / bound %.3g\n", what[i], REPLAYS, worst);
        }
    }
    for (int i = 0; i < 2; i++) graph_free(&g[i]);
    for (int i = 0; i < 3; i++) gt_cu.mem_free(out[i]);
    gt_cu.stream_destroy(y);
    gt_cu.stream_destroy(x[0]);
    gt_cu.stream_destroy(x[1]);
    for (int i = 0; i < 2; i++) job_free(&jg[i]);
    job_free(&je);
}

/* ===== 4. the capturing stream from another thread ===== */

/* A gate: threads wait on it until it is opened, once. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int open;
} gate;

static void gate_init(gate *g) {
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->open = 0;
}
static void gate_open(gate *g) {
    pthread_mutex_lock(&g->lock);
    g->open = 1;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}
static void gate_wait(gate *g) {
    pthread_mutex_lock(&g->lock);
    while (!g->open) pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
}
static void gate_destroy(gate *g) {
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->cond);
}

/* What the threads of capture_from_another_thread share and report. T1 captures j on s,
 * T2 makes j's call on s, T3 makes two calls of j3 (a new shape) on s3 into out3. */
typedef struct {
    CUcontext ctx;
    job *j, *j3;
    CUstream s, s3;
    CUdeviceptr out3[2];
    gate capturing, t3_called, ended;
    CUresult begin, before, after, end, sync3;
    gt_status st2, st3[2];
    char err2[256], err3[256];
    int t2_started;
    CUgraph graph;
    gt_stats at_begin, at_end;
} threads_case;

static void *t2_body(void *arg) {
    threads_case *c = arg;
    gt_cu.ctx_set_current(c->ctx);
    c->st2 = prob_launch(&c->j->p, c->j->C, c->s);
    if (c->st2 != GT_SUCCESS) snprintf(c->err2, sizeof c->err2, "%s", gt_last_error());
    return NULL;
}

/* T1: begins a global capture on s, lets T2 make the call on s (and waits for it), waits
 * until T3 has made its calls, then ends the capture. The gates open on every path, so no
 * thread waits forever. */
static void *t1_body(void *arg) {
    threads_case *c = arg;
    gt_cu.ctx_set_current(c->ctx);
    const size_t bytes = c_bytes(&c->j->p);
    gt_get_stats(&c->at_begin);
    c->begin = gt_cu.stream_begin_capture(c->s, CU_STREAM_CAPTURE_MODE_GLOBAL);
    if (c->begin != CUDA_SUCCESS) {
        gate_open(&c->capturing);
        gate_open(&c->ended);
        return NULL;
    }
    c->before = gt_cu.memcpy_dtod_async(c->j->C, c->j->p.dC, bytes, c->s);
    gate_open(&c->capturing);
    pthread_t t2;
    c->t2_started = pthread_create(&t2, NULL, t2_body, c) == 0;
    if (c->t2_started) pthread_join(t2, NULL);
    gate_wait(&c->t3_called);
    c->after = gt_cu.memcpy_dtod_async(c->j->D, c->j->C, bytes, c->s);
    c->end = gt_cu.stream_end_capture(c->s, &c->graph);
    gt_get_stats(&c->at_end);
    gate_open(&c->ended);
    return NULL;
}

/* T3: while T1's global capture is open, two calls of a new shape on its own stream (the
 * first tunes: it allocates, loads modules and synchronizes s3, all of which a global
 * capture forbids in any thread unless made in relaxed mode). Its own waiting for the
 * results comes after the capture ended. */
static void *t3_body(void *arg) {
    threads_case *c = arg;
    gt_cu.ctx_set_current(c->ctx);
    gate_wait(&c->capturing);
    for (int i = 0; i < 2; i++) {
        c->st3[i] = prob_launch(&c->j3->p, c->out3[i], c->s3);
        if (c->st3[i] != GT_SUCCESS && !c->err3[0])
            snprintf(c->err3, sizeof c->err3, "%s", gt_last_error());
    }
    gate_open(&c->t3_called);
    gate_wait(&c->ended);
    c->sync3 = gt_cu.stream_synchronize(c->s3);
    return NULL;
}

static void capture_from_another_thread(void) {
    gt_devctx *dc = NULL;
    NEED_GRAPHS(dc);
    job j, j3;
    job_init(&j, dc, GT_DT_F32, 0, 1, 64, 96, 4099, 1.5, -0.5);
    job_init(&j3, dc, GT_DT_F32, 1, 0, 160, 144, 600, 1.0, 0.75);
    threads_case c;
    memset(&c, 0, sizeof c);
    c.j = &j, c.j3 = &j3;
    c.s = new_stream(), c.s3 = new_stream();
    gt_cu.ctx_get_current(&c.ctx);
    const size_t bytes3 = c_bytes(&j3.p);
    for (int i = 0; i < 2; i++) {
        c.out3[i] = dev_alloc(bytes3);
        CU_CHECK(gt_cu.memcpy_dtod_async(c.out3[i], j3.p.dC, bytes3, c.s3));
    }
    CU_CHECK(gt_cu.stream_synchronize(c.s3));
    gate_init(&c.capturing);
    gate_init(&c.t3_called);
    gate_init(&c.ended);
    if (job_pin(&j, dc, splitk_cfg) == 0) {
        pthread_t t1, t3;
        int have3 = pthread_create(&t3, NULL, t3_body, &c) == 0;
        if (!have3) gate_open(&c.t3_called); /* T1 must not wait for a thread that never ran */
        int have1 = pthread_create(&t1, NULL, t1_body, &c) == 0;
        if (!have1) gate_open(&c.capturing), gate_open(&c.ended);
        if (have1) pthread_join(t1, NULL);
        if (have3) pthread_join(t3, NULL);
        TAP_CHECK(have1 && have3, "threads not started");
        TAP_CHECK(c.begin != CUDA_SUCCESS || c.t2_started, "T2 not started");
        const char *end_name = "?";
        if (c.end != CUDA_SUCCESS) gt_cu.get_error_name(c.end, &end_name);
        TAP_CHECK(c.begin == CUDA_SUCCESS && c.before == CUDA_SUCCESS && c.after == CUDA_SUCCESS,
                  "T1's capture: begin %d, copies %d, %d", (int)c.begin, (int)c.before,
                  (int)c.after);
        TAP_CHECK(c.st2 == GT_SUCCESS, "T2's call on the capturing stream: %s: %s",
                  gt_status_string(c.st2), c.err2);
        TAP_CHECK(c.st3[0] == GT_SUCCESS && c.st3[1] == GT_SUCCESS,
                  "T3's calls during the global capture: %s, %s: %s",
                  gt_status_string(c.st3[0]), gt_status_string(c.st3[1]), c.err3);
        TAP_CHECK(c.end == CUDA_SUCCESS && c.graph != NULL,
                  "T1's cuStreamEndCapture: %s (%d): the capture was invalidated", end_name,
                  (int)c.end);
        TAP_CHECK(c.sync3 == CUDA_SUCCESS, "T3's cuStreamSynchronize: %d", (int)c.sync3);
        if (c.begin == CUDA_SUCCESS && c.end == CUDA_SUCCESS) {
            /* Over the capture: T2's call captured, T3's shape tuned (not deferred: its
             * stream is not capturing). */
            TAP_CHECK(c.at_end.captured - c.at_begin.captured == 1,
                      "captured +%llu, want 1 (T2's call)",
                      diff(c.at_end.captured, c.at_begin.captured));
            TAP_CHECK(c.at_end.tunes - c.at_begin.tunes == 1 &&
                          c.at_end.deferred == c.at_begin.deferred,
                      "tunes +%llu, deferred +%llu during the capture (want 1 and 0: T3's shape)",
                      diff(c.at_end.tunes, c.at_begin.tunes),
                      diff(c.at_end.deferred, c.at_begin.deferred));
        }
        const gt_plan *pl = gt_plan_find(dc->ctx, &j3.key);
        TAP_CHECK(pl && pl->source == GT_SRC_TUNED, "%s: T3's plan's source is %d, want %d (tuned)",
                  j3.name, pl ? pl->source : -1, GT_SRC_TUNED);
        for (int i = 0; i < 2 && c.st3[i] == GT_SUCCESS && c.sync3 == CUDA_SUCCESS; i++) {
            prob_fetch_c(&j3.p, c.out3[i]);
            gr_result res;
            double e = prob_grade(&j3.p, &j3.ref, &res);
            TAP_CHECK(e <= 1.0, "T3's call %d (%s): %s", i + 1, j3.name, res.text);
        }
        graph g = {c.graph, NULL};
        if (g.graph && c.end == CUDA_SUCCESS && c.st2 == GT_SUCCESS &&
            graph_ready(&g, "T1's graph"))
            job_replays(&j, &g, c.s, REPLAYS, "T1's graph of T2's call");
        graph_free(&g);
    }
    gate_destroy(&c.capturing);
    gate_destroy(&c.t3_called);
    gate_destroy(&c.ended);
    for (int i = 0; i < 2; i++) gt_cu.mem_free(c.out3[i]);
    gt_cu.stream_destroy(c.s);
    gt_cu.stream_destroy(c.s3);
    job_free(&j);
    job_free(&j3);
}

/* ===== 5. gt_set_workspace ===== */

/* Warnings logged (capture_set_workspace counts them); every message also goes to stderr. */
static atomic_int warnings_seen;
static void count_warnings(int level, const char *message, void *user) {
    (void)user;
    if (level == GT_LOG_WARN) atomic_fetch_add(&warnings_seen, 1);
    fprintf(stderr, "gemmtune log %d: %s\n", level, message);
}

/* The level GEMMTUNE_LOG sets (gemmtune.h: off/error/warn/info/debug or 0..4), to restore
 * after the case raised it. */
static int env_log_level(void) {
    static const char *const names[] = {"off", "error", "warn", "info", "debug"};
    const char *v = getenv("GEMMTUNE_LOG");
    if (!v || !*v) return GT_LOG_OFF;
    if (v[0] >= '0' && v[0] <= '9') return atoi(v);
    if (strcasecmp(v, "warning") == 0) return GT_LOG_WARN;
    for (int i = 0; i < 5; i++)
        if (strcasecmp(v, names[i]) == 0) return i;
    return GT_LOG_OFF;
}

/* The device bytes [off, off + n) of p, read back after s is done. */
static unsigned char *read_back(CUdeviceptr p, size_t off, size_t n, CUstream s) {
    unsigned char *h = gr_alloc(n, 1);
    CU_CHECK(gt_cu.stream_synchronize(s));
    CU_CHECK(gt_cu.memcpy_dtoh(h, p + off, n));
    return h;
}

/* The number of bytes of [off, off + n) of p that are not `value`. */
static size_t bytes_not(CUdeviceptr p, size_t off, size_t n, unsigned char value, CUstream s) {
    unsigned char *h = read_back(p, off, n, s);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += h[i] != value;
    free(h);
    return count;
}

/* One eager call of j on s, graded; label names the moment. */
static void eager_right(job *j, CUstream s, const char *label) {
    gt_status st;
    gr_result res;
    double e = job_eager(j, s, &st, &res);
    TAP_CHECK(st == GT_SUCCESS && e <= 1.0, "%s: %s", label, res.text);
}

enum { WS_BYTES = 8 << 20, WS_MIN = GT_WORKSPACE_MIN_BYTES, WS_GUARD = 1 << 20 };
static const unsigned char ws_fill = 0xab;

/* Refused, with nothing changed: a pointer aligned to 128 bytes but not 256, fewer bytes
 * than GT_WORKSPACE_MIN_BYTES, a capturing stream (whose capture the refusal leaves valid).
 * ws holds ws_fill: a refused workspace that were used or zeroed would change it. */
static void workspace_refused(job *j, CUstream s, CUdeviceptr ws) {
    CU_CHECK(gt_cu.memset_d8_async(ws, ws_fill, WS_BYTES, s));
    gt_status st = gt_set_workspace(s, (void *)(uintptr_t)(ws + 128), WS_BYTES - 256);
    TAP_CHECK(st == GT_INVALID_VALUE, "a pointer not aligned to 256 bytes: %s",
              gt_status_string(st));
    st = gt_set_workspace(s, (void *)(uintptr_t)ws, WS_MIN - 1);
    TAP_CHECK(st == GT_INVALID_VALUE, "GT_WORKSPACE_MIN_BYTES - 1 bytes: %s",
              gt_status_string(st));
    if (CU_CHECK(gt_cu.stream_begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL))) {
        st = gt_set_workspace(s, (void *)(uintptr_t)ws, WS_BYTES);
        CUgraph empty = NULL;
        CUresult end = gt_cu.stream_end_capture(s, &empty);
        TAP_CHECK(st == GT_INVALID_VALUE, "a capturing stream: %s", gt_status_string(st));
        TAP_CHECK(end == CUDA_SUCCESS, "the capture around the refused call ended with %d",
                  (int)end);
        if (empty) gt_cu.graph_destroy(empty);
    }
    eager_right(j, s, "after the refused workspaces");
    size_t changed = bytes_not(ws, 0, WS_BYTES, ws_fill, s);
    TAP_CHECK(changed == 0, "a refused workspace was used or zeroed: %zu bytes changed", changed);
}

/* Set for s: the library zeroes its first GT_WORKSPACE_MIN_BYTES (split-K tile counters,
 * which every completed launch leaves zero) and the split-K partials go after them, in
 * eager calls and in a graph captured on s (which then allocates nothing of its own).
 * Given back (NULL), s's calls leave it alone. */
static void workspace_used(job *j, CUstream s, CUdeviceptr ws) {
    CU_CHECK(gt_cu.memset_d8_async(ws, ws_fill, WS_BYTES, s));
    gt_status st = gt_set_workspace(s, (void *)(uintptr_t)ws, WS_BYTES);
    TAP_CHECK(st == GT_SUCCESS, "gt_set_workspace: %s: %s", gt_status_string(st),
              gt_last_error());
    eager_right(j, s, "eager, with the workspace set");
    TAP_CHECK(bytes_not(ws, 0, WS_MIN, 0, s) == 0, "the tile counters are not zero after the call");
    TAP_CHECK(bytes_not(ws, WS_MIN, WS_BYTES - WS_MIN, ws_fill, s) > 0,
              "the eager split-K call did not use the workspace set for its stream");
    CU_CHECK(gt_cu.memset_d8_async(ws + WS_MIN, ws_fill, WS_BYTES - WS_MIN, s));
    graph g;
    const char *label = "captured with a workspace set";
    if (job_capture(j, s, CU_STREAM_CAPTURE_MODE_GLOBAL, &g, label)) {
        job_replays(j, &g, s, REPLAYS / 4, label);
        TAP_CHECK(bytes_not(ws, 0, WS_MIN, 0, s) == 0,
                  "the tile counters are not zero after the replays");
        TAP_CHECK(bytes_not(ws, WS_MIN, WS_BYTES - WS_MIN, ws_fill, s) > 0,
                  "the graph captured with a workspace set did not use it");
    }
    /* The graph uses the workspace: it goes before the workspace is given back. */
    graph_free(&g);
    eager_right(j, s, "eager after the replays");
    st = gt_set_workspace(s, NULL, 0);
    TAP_CHECK(st == GT_SUCCESS, "gt_set_workspace(NULL): %s: %s", gt_status_string(st),
              gt_last_error());
    CU_CHECK(gt_cu.memset_d8_async(ws, ws_fill, WS_BYTES, s));
    eager_right(j, s, "eager after the workspace was given back");
    size_t changed = bytes_not(ws, 0, WS_BYTES, ws_fill, s);
    TAP_CHECK(changed == 0, "a workspace given back was still used: %zu bytes changed", changed);
}

/* Too small (GT_WORKSPACE_MIN_BYTES: allowed, but less than the kernel needs): the
 * library's own workspace serves instead, eager and captured, with one warning for the
 * stream; the given bytes are zeroed and nothing after them (a guard of ws_fill) is
 * touched. */
static void workspace_too_small(job *j, CUstream s, CUdeviceptr ws) {
    CU_CHECK(gt_cu.memset_d8_async(ws, ws_fill, WS_MIN + WS_GUARD, s));
    const int level = env_log_level();
    atomic_store(&warnings_seen, 0);
    gt_set_log_callback(count_warnings, NULL);
    gt_set_log_level(level > GT_LOG_WARN ? level : GT_LOG_WARN);
    gt_status st = gt_set_workspace(s, (void *)(uintptr_t)ws, WS_MIN);
    TAP_CHECK(st == GT_SUCCESS, "gt_set_workspace(%d bytes): %s: %s", WS_MIN,
              gt_status_string(st), gt_last_error());
    for (int i = 0; i < 3; i++) eager_right(j, s, "eager, with a workspace too small");
    graph g;
    const char *label = "captured with a workspace too small";
    if (job_capture(j, s, CU_STREAM_CAPTURE_MODE_GLOBAL, &g, label))
        job_replays(j, &g, s, 10, label);
    graph_free(&g);
    gt_set_log_callback(NULL, NULL);
    gt_set_log_level(level);
    TAP_CHECK(atomic_load(&warnings_seen) == 1,
              "%d warnings for a workspace too small, want 1 (once per stream)",
              atomic_load(&warnings_seen));
    TAP_CHECK(bytes_not(ws, 0, WS_MIN, 0, s) == 0, "a workspace set was not zeroed");
    size_t changed = bytes_not(ws, WS_MIN, WS_GUARD, ws_fill, s);
    TAP_CHECK(changed == 0, "%zu bytes written past a workspace too small", changed);
    st = gt_set_workspace(s, NULL, 0);
    TAP_CHECK(st == GT_SUCCESS, "gt_set_workspace(NULL): %s", gt_status_string(st));
}

static void capture_set_workspace(void) {
    gt_devctx *dc = NULL;
    NEED_GRAPHS(dc);
    job j;
    job_init(&j, dc, GT_DT_F32, 0, 1, 64, 96, 4099, 1.5, -0.5);
    CUstream s = new_stream(), s2 = new_stream();
    CUdeviceptr ws = dev_alloc(WS_BYTES), ws2 = dev_alloc(WS_MIN + WS_GUARD);
    if (job_pin(&j, dc, splitk_cfg) == 0) {
        /* The stream's first call makes the library's own workspace for it. */
        eager_right(&j, s, "before any workspace is set");
        workspace_refused(&j, s, ws);
        workspace_used(&j, s, ws);
        workspace_too_small(&j, s2, ws2);
    }
    gt_cu.stream_synchronize(s);
    gt_cu.stream_synchronize(s2);
    gt_cu.mem_free(ws);
    gt_cu.mem_free(ws2);
    gt_cu.stream_destroy(s);
    gt_cu.stream_destroy(s2);
    job_free(&j);
}

/* ===== 6. many streams ===== */

/* LIB_STREAM_SLOTS: the streams whose workspaces the library keeps at once (gemmtune's
 * per-stream table; the least recently used beyond it is freed). NSTREAMS streams are
 * made one after another, each used for one split-K call of a pinned shape (its
 * workspace about 4 MB, so that workspaces dominate any other growth) and destroyed. Each
 * result must be right, and the device memory in use after all of them must exceed that
 * after the first 10 by no more than the table can hold: LIB_STREAM_SLOTS workspaces of
 * at most 1.5 times the plan's need (or 1 MiB) plus 32 MiB for the driver's own. A
 * workspace kept per stream ever seen would take (NSTREAMS - 10) of them, three times as
 * much. */
enum { LIB_STREAM_SLOTS = 64, NSTREAMS = 200 };

static void many_streams_bounded(void) {
    NEED_GPU();
    gt_devctx *dc;
    if (current_devctx(&dc) != GT_SUCCESS) {
        TAP_CHECK(0, "context state: %s", gt_last_error());
        return;
    }
    job j;
    job_init(&j, dc, GT_DT_F32, 0, 0, 256, 512, 2048, 1.0, 0.5);
    if (job_pin(&j, dc, "f0_64x64x16_w32x32_t4x8_s3_v4_k8_r1") != 0) {
        job_free(&j);
        return;
    }
    size_t free10 = 0, free_end = 0, total = 0;
    int wrong = 0;
    double worst = 0;
    for (int i = 0; i < NSTREAMS; i++) {
        CUstream s = new_stream();
        if (!s) break;
        gt_status st;
        gr_result res;
        double e = job_eager(&j, s, &st, &res);
        if (e > worst) worst = e;
        if (!(st == GT_SUCCESS && e <= 1.0) && !wrong++)
            TAP_CHECK(0, "stream %d: %s", i + 1, res.text);
        CU_CHECK(gt_cu.stream_destroy(s));
        if (i == 9) {
            CU_CHECK(gt_cu.ctx_synchronize());
            CU_CHECK(gt_cu.mem_get_info(&free10, &total));
        }
    }
    CU_CHECK(gt_cu.ctx_synchronize());
    CU_CHECK(gt_cu.mem_get_info(&free_end, &total));
    TAP_CHECK(wrong == 0, "%d of %d streams' results wrong", wrong, NSTREAMS);
    const gt_plan *pl = gt_plan_find(dc->ctx, &j.key);
    TAP_CHECK(pl && pl->kern.ws_bytes > 0, "%s: the plan is not split-K", j.name);
    if (pl && pl->kern.ws_bytes > 0) {
        const size_t mib = (size_t)1 << 20, need = pl->kern.ws_bytes;
        const size_t per = need + need / 2 > mib ? need + need / 2 : mib;
        const size_t bound = LIB_STREAM_SLOTS * per + 32 * mib;
        const size_t grew = free10 > free_end ? free10 - free_end : 0;
        TAP_CHECK(grew <= bound,
                  "device memory in use grew by %zu MiB from stream 10 to stream %d, more than "
                  "%d workspaces of %zu KiB can hold (%zu MiB)",
                  grew / mib, NSTREAMS, LIB_STREAM_SLOTS, per >> 10, bound / mib);
        printf("# %d streams: %s right (worst |err| / bound %.3g); workspace %zu KiB; in use "
               "grew %zu MiB from stream 10 to %d (bound %zu MiB)\n",
               NSTREAMS, j.name, worst, need >> 10, grew / mib, NSTREAMS, bound / mib);
    }
    job_free(&j);
}

int main(void) {
    /* A cache of this run's own: shapes called new are in no cache, and pinned entries
     * are this run's. */
    char dir[] = "/tmp/gt_capture_XXXXXX", path[300] = "";
    if (mkdtemp(dir)) {
        snprintf(path, sizeof path, "%s/cache.db", dir);
        setenv("GEMMTUNE_CACHE", path, 1);
    }
    /* Few candidates per tuning: what these cases check is when a shape is tuned, not
     * what wins. */
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "4", 1);
    gt_set_mode(GT_MODE_TUNE);
    gt_set_tune_async(0);
    gpu_state = gpu_probe(no_gpu_reason, sizeof no_gpu_reason, 1);
    TAP_RUN(capture_cached_splitk);
    TAP_RUN(capture_cached_wgmma);
    TAP_RUN(capture_new_shape);
    TAP_RUN(capture_new_shape_async);
    TAP_RUN(capture_graphs_beside_eager_calls);
    TAP_RUN(capture_from_another_thread);
    TAP_RUN(capture_set_workspace);
    TAP_RUN(capture_staged);
    TAP_RUN(many_streams_bounded);
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
