/*
 * test_gpu.c: gemm_tuned on a real GPU against a float64 CPU reference.
 * Without a CUDA device every case reports "skipped: no CUDA device". Built twice: test_gpu
 * runs the default cases, test_gpu_sweep (GT_TEST_SWEEP) the sweeps over every candidate.
 * Cases: all four op pairs on odd shapes; leading dimensions above the minimum;
 * NaN in C with beta == 0; alpha == 0; k == 0; user buffers untouched by tuning;
 * a second process finds the winner in the cache without tuning; threads; the tuning
 * memory limit forcing the fallback; bad arguments launch nothing.
 * Double precision (gemm_tuned_d, cases gpu_f64_*): all four op pairs on odd shapes with
 * non-trivial alpha and beta, odd leading dimensions, NaN in C with beta == 0, k == 0
 * and alpha == 0 (exact), a misaligned double rejected with nothing written, and one
 * shape as f32 and f64 in one process (two keys, two kernels, both right).
 * Split-K: three shapes with split-K configurations pinned through the cache (one reduced
 * in two levels), alternating on one stream (one shared workspace), each result right and
 * repeated calls bit-identical.
 * One set of problem helpers (prob_*) serves both element types.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cu.h"
#include "db.h"
#include "call.h"
#include "devctx.h"
#include "dispatch.h"
#include "gemmtune.h"
#include "kcfg.h"
#include "layers.h"
#include "measure.h"
#include "kern.h"
#include "gpu_probe.h"
#include "kernel_sources.h"
#include "plan.h"
#include "tap.h"

static int gpu_state;
static char no_gpu_reason[200];

/* No GPU: skipped; a GPU that failed to set up: failed (gpu_probe.h). */
#define NEED_GPU()                                                                  \
    do {                                                                            \
        if (gpu_state == GPU_NONE) TAP_SKIP("skipped: no CUDA device (%s)", no_gpu_reason); \
        TAP_CHECK(gpu_state == GPU_READY, "GPU set-up failed: %s", no_gpu_reason);   \
        if (gpu_state != GPU_READY) return;                                         \
    } while (0)

/* ===== helpers ===== */

static unsigned long long rng = 88172645463325252ull;
static float frand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

static double drand_full(void) {
    /* 53 random bits in [-1, 1): products and sums are not exact in double, so the kernel's
     * own rounding shows, and any rounding to float would show far above the tolerance. */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(long long)((rng >> 11) - (1ull << 52)) / (double)(1ull << 52);
}

/* One problem of either element type (gemm_tuned: GT_DT_F32, gemm_tuned_d: GT_DT_F64;
 * GT_DT_F32_3XTF32, fp32 data through gemm_tuned_ex, is treated as f32 throughout).
 * Host arrays hold elements of that type, es bytes each, exactly as the device does: what
 * is uploaded and what is compared byte for byte (untouched padding, unchanged A and B)
 * are the very bits, NaN payloads included. elem() and set_elem() read and write them as
 * double, which holds a float exactly. Scalars are doubles; the f32 cases only use values
 * that are floats, so passing them as float changes nothing. */
typedef struct {
    int dt;                   /* GT_DT_F32, GT_DT_F64 or GT_DT_F32_3XTF32 */
    size_t es;                /* bytes per element: 4 or 8 */
    int opa, opb;
    long long m, n, k, lda, ldb, ldc;
    double alpha, beta;
    void *A, *B, *C0, *C;     /* host */
    CUdeviceptr dA, dB, dC;
} prob;

static double elem(const prob *p, const void *a, size_t i) {
    return p->es == 4 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

static void set_elem(const prob *p, void *a, size_t i, double v) {
    if (p->es == 4) ((float *)a)[i] = (float)v;
    else ((double *)a)[i] = v;
}

/* v rounded once to p's element type: the value an exact check expects from one multiply
 * in that type (a product of two floats is exact in double, so rounding it to float gives
 * the float product bit for bit). */
static double round_elem(const prob *p, double v) { return p->es == 4 ? (double)(float)v : v; }

/* Random data of p's type: 24-bit values for f32 (as gemm_tuned's cases always had), 53-bit
 * values for f64 (see drand_full). */
static double rand_elem(const prob *p) { return p->dt != GT_DT_F64 ? frand() : drand_full(); }

static void prob_init(prob *p, int dt, int opa, int opb, long long m, long long n, long long k,
                      long long pad_a, long long pad_b, long long pad_c, double alpha,
                      double beta) {
    memset(p, 0, sizeof *p);
    p->dt = dt, p->es = (size_t)gt_dtype_in_size(dt);
    p->opa = opa, p->opb = opb, p->m = m, p->n = n, p->k = k;
    p->alpha = alpha, p->beta = beta;
    long long ar = opa ? k : m, ac = opa ? m : k, br = opb ? n : k, bc = opb ? k : n;
    /* BLAS minimum: max(1, rows) (rows can be k == 0). */
    p->lda = (ar > 1 ? ar : 1) + pad_a, p->ldb = (br > 1 ? br : 1) + pad_b;
    p->ldc = (m > 1 ? m : 1) + pad_c;
    size_t na = (size_t)(p->lda * ac), nb = (size_t)(p->ldb * bc), nc = (size_t)(p->ldc * n);
    /* At least one element each: k == 0 leaves A or B empty, and malloc(0) may be NULL.
     * calloc so that the spare element is defined when it is uploaded. */
    size_t es = p->es;
    p->A = calloc(na + 1, es), p->B = calloc(nb + 1, es);
    p->C0 = malloc(nc * es), p->C = malloc(nc * es);
    for (size_t i = 0; i < na; i++) set_elem(p, p->A, i, rand_elem(p));
    for (size_t i = 0; i < nb; i++) set_elem(p, p->B, i, rand_elem(p));
    for (size_t i = 0; i < nc; i++) set_elem(p, p->C0, i, rand_elem(p));
    gt_cu.mem_alloc(&p->dA, (na + 1) * es);
    gt_cu.mem_alloc(&p->dB, (nb + 1) * es);
    gt_cu.mem_alloc(&p->dC, nc * es);
    gt_cu.memcpy_htod(p->dA, p->A, (na + 1) * es);
    gt_cu.memcpy_htod(p->dB, p->B, (nb + 1) * es);
    gt_cu.memcpy_htod(p->dC, p->C0, nc * es);
}

static size_t c_elems(const prob *p) { return (size_t)(p->ldc * p->n); }
static size_t c_bytes(const prob *p) { return c_elems(p) * p->es; }

static void prob_free(prob *p) {
    free(p->A), free(p->B), free(p->C0), free(p->C);
    gt_cu.mem_free(p->dA), gt_cu.mem_free(p->dB), gt_cu.mem_free(p->dC);
}

/* Writes C0 to the device C again (after a run changed it, or C0 was changed). */
static void prob_reset_c(prob *p) { gt_cu.memcpy_htod(p->dC, p->C0, c_bytes(p)); }

/* Reads the device C into p->C. */
static void prob_fetch_c(prob *p, CUdeviceptr dC) { gt_cu.memcpy_dtoh(p->C, dC, c_bytes(p)); }

/* Enqueues p's GEMM into the device matrix C (p->dC or another of its size) on stream,
 * through the entry point of p's type; nothing waits for it. */
static gt_status prob_launch(const prob *p, CUdeviceptr C, void *stream) {
    gt_op oa = p->opa ? GT_OP_T : GT_OP_N, ob = p->opb ? GT_OP_T : GT_OP_N;
    if (p->dt == GT_DT_F32_3XTF32) {
        const float a = (float)p->alpha, b = (float)p->beta;
        return gemm_tuned_ex(oa, ob, p->m, p->n, p->k, &a, (const void *)(uintptr_t)p->dA,
                             GT_R_32F, p->lda, (const void *)(uintptr_t)p->dB, GT_R_32F, p->ldb,
                             &b, (void *)(uintptr_t)C, GT_R_32F, p->ldc,
                             GT_COMPUTE_32F_EMULATED_3XTF32, stream);
    }
    if (p->dt == GT_DT_F32)
        return gemm_tuned(oa, ob, p->m, p->n, p->k, (float)p->alpha,
                          (const float *)(uintptr_t)p->dA, p->lda,
                          (const float *)(uintptr_t)p->dB, p->ldb, (float)p->beta,
                          (float *)(uintptr_t)C, p->ldc, stream);
    return gemm_tuned_d(oa, ob, p->m, p->n, p->k, p->alpha, (const double *)(uintptr_t)p->dA,
                        p->lda, (const double *)(uintptr_t)p->dB, p->ldb, p->beta,
                        (double *)(uintptr_t)C, p->ldc, stream);
}

static gt_status prob_run(prob *p, void *stream) {
    gt_status s = prob_launch(p, p->dC, stream);
    gt_cu.ctx_synchronize();
    prob_fetch_c(p, p->dC);
    return s;
}

/* An array of p's type as doubles (malloc'd; at least one element), so that the
 * reference's inner loop reads plain doubles whatever the type. */
static double *as_doubles(const prob *p, const void *a, size_t count) {
    double *d = malloc((count ? count : 1) * sizeof *d);
    for (size_t i = 0; i < count; i++) d[i] = elem(p, a, i);
    return d;
}

/* Relative Frobenius error of C against alpha*op(A)*op(B) + beta*C0 summed in double;
 * padding rows of C (beyond m) must be untouched, bit for bit. +inf on any non-finite
 * output. */
static double prob_error(const prob *p) {
    long long ac = p->opa ? p->m : p->k, bc = p->opb ? p->k : p->n;
    double *A = as_doubles(p, p->A, (size_t)(p->lda * ac));
    double *B = as_doubles(p, p->B, (size_t)(p->ldb * bc));
    double d2 = 0, r2 = 0;
    int bad = 0; /* a non-finite output or a changed padding element */
    for (long long j = 0; j < p->n && !bad; j++) {
        for (long long i = 0; i < p->m; i++) {
            double sum = 0;
            for (long long l = 0; l < p->k; l++) {
                double a = p->opa ? A[l + i * p->lda] : A[i + l * p->lda];
                double b = p->opb ? B[j + l * p->ldb] : B[l + j * p->ldb];
                sum += a * b;
            }
            size_t c = (size_t)(i + j * p->ldc);
            double ref = p->alpha * sum + (p->beta == 0.0 ? 0.0 : p->beta * elem(p, p->C0, c));
            double v = elem(p, p->C, c);
            if (!isfinite(v)) {
                bad = 1;
                break;
            }
            d2 += (v - ref) * (v - ref);
            r2 += ref * ref;
        }
        for (long long i = p->m; i < p->ldc && !bad; i++) {
            size_t off = (size_t)(i + j * p->ldc) * p->es;
            if (memcmp((const char *)p->C + off, (const char *)p->C0 + off, p->es) != 0) bad = 1;
        }
    }
    free(A), free(B);
    if (bad) return INFINITY;
    return r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
}

static double tol(long long k) { return 1e-6 * sqrt((double)(k > 0 ? k : 1)) + 2e-6; }

/* The library's f64 rule (tuner/verify.h): about 1e-12 for these K; a kernel that rounds
 * anything to float is off by ~1e-7. */
static double tol_d(long long k) { return 1e-13 * sqrt((double)(k > 0 ? k : 1)) + 2e-13; }

/* The tolerance of p's type. */
static double prob_tol(const prob *p) { return p->dt != GT_DT_F64 ? tol(p->k) : tol_d(p->k); }

/* ===== cases ===== */

static const long long shapes[][3] = {{1, 1, 1},     {17, 33, 65},  {1000, 1000, 1000},
                                      {4097, 129, 257}, {64, 64, 64}, {129, 1, 7},
                                      {3, 300, 2},   {255, 257, 31}};

static void gpu_all_ops_odd_shapes(void) {
    NEED_GPU();
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int op = 0; op < 4; op++) {
            prob p;
            double beta = (s + op) % 2 ? 0.0 : -0.5;
            prob_init(&p, GT_DT_F32, op & 1, op >> 1, shapes[s][0], shapes[s][1], shapes[s][2],
                      0, 0, 0, 1.5, beta);
            gt_status st = prob_run(&p, NULL);
            double e = prob_error(&p);
            TAP_CHECK(st == GT_SUCCESS, "%lldx%lldx%lld op %d: %s", shapes[s][0], shapes[s][1],
                      shapes[s][2], op, gt_last_error());
            TAP_CHECK(e <= tol(p.k), "%lldx%lldx%lld:%c%c beta %g: rel err %.3g > %.3g",
                      shapes[s][0], shapes[s][1], shapes[s][2], op & 1 ? 'T' : 'N',
                      op >> 1 ? 'T' : 'N', beta, e, tol(p.k));
            printf("# %lldx%lldx%lld:%c%c beta=%g rel err %.3g\n", shapes[s][0], shapes[s][1],
                   shapes[s][2], op & 1 ? 'T' : 'N', op >> 1 ? 'T' : 'N', beta, e);
            prob_free(&p);
        }
}

static void gpu_larger_leading_dimensions(void) {
    NEED_GPU();
    /* Odd pads: the alignment class drops to 4 bytes, so scalar paths are exercised. */
    const long long pads[][3] = {{3, 5, 7}, {4, 8, 12}, {1, 0, 0}};
    for (int q = 0; q < 3; q++)
        for (int op = 0; op < 4; op++) {
            prob p;
            prob_init(&p, GT_DT_F32, op & 1, op >> 1, 77, 45, 130, pads[q][0], pads[q][1],
                      pads[q][2], 1.0, 0.25);
            gt_status st = prob_run(&p, NULL);
            double e = prob_error(&p);
            TAP_CHECK(st == GT_SUCCESS && e <= tol(p.k), "pads %lld,%lld,%lld op %d: %s err %.3g",
                      pads[q][0], pads[q][1], pads[q][2], op, gt_status_string(st), e);
            prob_free(&p);
        }
}

static void gpu_nan_in_c_with_beta0(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F32, 0, 1, 300, 200, 100, 0, 0, 0, 1.0, 0.0);
    for (size_t i = 0; i < c_elems(&p); i++) set_elem(&p, p.C0, i, NAN);
    prob_reset_c(&p);
    gt_status st = prob_run(&p, NULL);
    double e = prob_error(&p);
    TAP_CHECK(st == GT_SUCCESS && e <= tol(p.k), "NaN leaked or wrong: err %.3g", e);
    prob_free(&p);
}

static void gpu_alpha_zero_scales_c(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F32, 0, 0, 123, 45, 67, 0, 0, 0, 0.0, 2.0);
    gt_status st = gemm_tuned(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 0.0f, NULL, p.lda, NULL, p.ldb,
                              2.0f, (float *)(uintptr_t)p.dC, p.ldc, NULL);
    gt_cu.ctx_synchronize();
    prob_fetch_c(&p, p.dC);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    int exact = 1;
    for (size_t i = 0; i < c_elems(&p); i++)
        exact &= elem(&p, p.C, i) == round_elem(&p, 2.0 * elem(&p, p.C0, i));
    TAP_CHECK(exact, "C != 2 * C0 with alpha == 0 (A and B were NULL: must not be read)");
    prob_free(&p);
}

static void gpu_k_zero(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F32, 1, 0, 50, 60, 0, 0, 0, 0, 1.0, 0.5);
    gt_status st = prob_run(&p, NULL);
    int exact = 1;
    for (size_t i = 0; i < c_elems(&p); i++)
        exact &= elem(&p, p.C, i) == round_elem(&p, 0.5 * elem(&p, p.C0, i));
    TAP_CHECK(st == GT_SUCCESS && exact, "k == 0 must give C = beta * C");
    /* beta == 0 and NaN in C: zeros. */
    for (size_t i = 0; i < c_elems(&p); i++) set_elem(&p, p.C0, i, NAN);
    prob_reset_c(&p);
    p.beta = 0.0;
    st = prob_run(&p, NULL);
    int zeros = 1;
    for (size_t i = 0; i < c_elems(&p); i++) zeros &= elem(&p, p.C, i) == 0.0;
    TAP_CHECK(st == GT_SUCCESS && zeros, "k == 0, beta == 0 must give zeros");
    prob_free(&p);
}

static void gpu_user_buffers_untouched_by_tuning(void) {
    NEED_GPU();
    /* A shape no other case uses, so this call tunes; beta = 1 makes any extra write of C
     * by tuning show in the result. */
    prob p;
    prob_init(&p, GT_DT_F32, 0, 1, 333, 222, 111, 2, 2, 0, 1.0, 1.0);
    gt_stats before, after;
    gt_get_stats(&before);
    gt_status st = prob_run(&p, NULL);
    gt_get_stats(&after);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    TAP_CHECK(after.tunes == before.tunes + 1, "expected this call to tune");
    /* NT: A is lda x k, B is ldb x k as stored. */
    size_t na = (size_t)(p.lda * p.k) * p.es, nb = (size_t)(p.ldb * p.k) * p.es;
    void *a = malloc(na), *b = malloc(nb);
    gt_cu.memcpy_dtoh(a, p.dA, na);
    gt_cu.memcpy_dtoh(b, p.dB, nb);
    TAP_CHECK(memcmp(a, p.A, na) == 0, "A changed");
    TAP_CHECK(memcmp(b, p.B, nb) == 0, "B changed");
    double e = prob_error(&p);
    TAP_CHECK(e <= tol(p.k), "C = A B + C0 wrong after tuning: err %.3g", e);
    free(a), free(b);
    prob_free(&p);
}

static void gpu_bad_argument_launches_nothing(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F32, 0, 0, 40, 40, 40, 0, 0, 0, 1.0, 0.0);
    gt_status st = gemm_tuned(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 1.0f, (const float *)(uintptr_t)p.dA,
                              p.lda, (const float *)(uintptr_t)p.dB, p.ldb, 0.0f,
                              (float *)(uintptr_t)p.dC, p.m - 1, NULL);
    gt_cu.ctx_synchronize();
    prob_fetch_c(&p, p.dC);
    TAP_CHECK(st == GT_INVALID_VALUE && gt_last_error_arg() == 13, "ldc < m: status %d arg %d", st,
              gt_last_error_arg());
    TAP_CHECK(memcmp(p.C, p.C0, c_bytes(&p)) == 0, "C written on error");
    prob_free(&p);
}

typedef struct {
    gt_status st;
    double err;
} thread_out;

static void *thread_body(void *arg) {
    thread_out *o = arg;
    CUcontext ctx;
    CUdevice dev;
    gt_cu.device_get(&dev, 0);
    gt_cu.primary_ctx_retain(&ctx, dev);
    gt_cu.ctx_set_current(ctx);
    prob p;
    prob_init(&p, GT_DT_F32, 1, 1, 211, 197, 89, 0, 0, 0, 1.0, 0.0);
    o->st = prob_run(&p, NULL);
    o->err = prob_error(&p);
    prob_free(&p);
    return NULL;
}

static void gpu_threads_same_new_shape(void) {
    NEED_GPU();
    gt_stats before, after;
    gt_get_stats(&before);
    pthread_t t[4];
    thread_out o[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, thread_body, &o[i]);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    gt_get_stats(&after);
    for (int i = 0; i < 4; i++)
        TAP_CHECK(o[i].st == GT_SUCCESS && o[i].err <= tol(89), "thread %d: %s err %.3g", i,
                  gt_status_string(o[i].st), o[i].err);
    TAP_CHECK(after.tunes - before.tunes <= 1, "the shape was tuned %llu times",
              (unsigned long long)(after.tunes - before.tunes));
}

static void gpu_memory_limit_forces_fallback(void) {
    NEED_GPU();
    gt_set_tune_memory_limit(1024); /* far too little for any tuning */
    gt_stats before, after;
    gt_get_stats(&before);
    prob p;
    prob_init(&p, GT_DT_F32, 1, 0, 150, 170, 190, 0, 0, 0, 1.0, 0.0);
    gt_status st = prob_run(&p, NULL);
    gt_get_stats(&after);
    gt_set_tune_memory_limit(0);
    TAP_CHECK(st == GT_SUCCESS, "call must succeed without tuning: %s", gt_last_error());
    TAP_CHECK(after.fallbacks == before.fallbacks + 1, "fallback not used");
    double e = prob_error(&p);
    TAP_CHECK(e <= tol(p.k), "fallback wrong: %.3g", e);
    prob_free(&p);
}

/* The library's state for the calling thread's current context (gt_devctx_get). */
static gt_status current_devctx(gt_devctx **dc) {
    CUcontext ctx;
    gt_cu.ctx_get_current(&ctx);
    return gt_devctx_get(ctx, dc);
}

/* Tunes p's key on the current context over the whole space (`gemmtune tune --force`),
 * with rep and *source as gt_dispatch_tune leaves them (rep zeroed first). */
static gt_status tune_prob(const prob *p, gt_tune_report *rep, int *source) {
    memset(rep, 0, sizeof *rep);
    gt_devctx *dc;
    gt_status st = current_devctx(&dc);
    if (st != GT_SUCCESS) return st;
    gt_key key;
    gt_gemm g = {p->dt, p->opa, p->opb, p->m, p->n, p->k, 1.0, p->beta, GT_PTR(p->dA),
                 GT_PTR(p->dB), GT_PTR(p->dC), p->lda, p->ldb, p->ldc, NULL};
    gt_call_key(dc, &g, &key);
    return gt_dispatch_tune(dc, &key, 1, rep, source);
}

static void gpu_failed_candidates_never_chosen(void) {
    NEED_GPU();
    /* Candidate 0 fails to compile, 1 fails to launch, and the fastest that runs computes
     * a wrong result: each must be recorded, none chosen, and the call still right. */
    setenv("GEMMTUNE_TEST_FAULT", "compile:0,launch:1,verify:0", 1);
    prob p;
    prob_init(&p, GT_DT_F32, 1, 0, 301, 203, 105, 0, 0, 0, 1.0, 0.0);
    gt_tune_report rep;
    int source = -1;
    gt_status st = tune_prob(&p, &rep, &source);
    unsetenv("GEMMTUNE_TEST_FAULT");
    TAP_CHECK(st == GT_SUCCESS && source == GT_SRC_TUNED, "tuning: %s", gt_last_error());
    int counts[GT_TR_NOT_TIMED + 1] = {0};
    char win[64], bad[64];
    gt_kcfg_format(&rep.winner, win, sizeof win);
    for (int i = 0; i < rep.ncands; i++) {
        counts[rep.cands[i].status]++;
        gt_kcfg_format(&rep.cands[i].cfg, bad, sizeof bad);
        if (rep.cands[i].status != GT_TR_OK)
            TAP_CHECK(strcmp(bad, win) != 0, "failed candidate %s (%s) chosen", bad,
                      gt_tune_result_name(rep.cands[i].status));
    }
    TAP_CHECK(counts[GT_TR_COMPILE_FAILED] == 1, "compile failures %d", counts[GT_TR_COMPILE_FAILED]);
    TAP_CHECK(counts[GT_TR_LAUNCH_FAILED] == 1, "launch failures %d", counts[GT_TR_LAUNCH_FAILED]);
    TAP_CHECK(counts[GT_TR_VERIFY_FAILED] == 1, "verify failures %d", counts[GT_TR_VERIFY_FAILED]);
    TAP_CHECK(rep.verify_failed == 1 && rep.rel_err <= tol(p.k), "winner rel err %.3g", rep.rel_err);
    gt_tune_report_free(&rep);
    st = prob_run(&p, NULL);
    double e = prob_error(&p);
    TAP_CHECK(st == GT_SUCCESS && e <= tol(p.k), "result with the winner: err %.3g", e);
    prob_free(&p);
}

/* A compile still under way when the budget is spent does not hold up the call: the
 * tuning returns with what was timed and the compile finishes in the background, where
 * gt_tune_wait_compiles (gt_release, exit) waits for it. Candidate 1's compile is made
 * to take 2 s more; the budget is 0.6 s. */
static void gpu_slow_compile_left_behind(void) {
    NEED_GPU();
    setenv("GEMMTUNE_TEST_FAULT", "slow:1", 1);
    setenv("GEMMTUNE_TUNE_BUDGET_S", "0.6", 1);
    prob p;
    prob_init(&p, GT_DT_F32, 0, 1, 97, 61, 33, 0, 0, 0, 1.0, 0.0);
    gt_tune_report rep;
    int source = -1;
    double t0 = gt_measure_now_s();
    gt_status st = tune_prob(&p, &rep, &source);
    double call_s = gt_measure_now_s() - t0;
    unsetenv("GEMMTUNE_TEST_FAULT");
    unsetenv("GEMMTUNE_TUNE_BUDGET_S");
    TAP_CHECK(st == GT_SUCCESS && source == GT_SRC_TUNED, "tuning: %s", gt_last_error());
    TAP_CHECK(call_s < 1.6, "the call took %.2f s with a 0.6 s budget", call_s);
    TAP_CHECK(rep.ncands > 1 && !rep.cands[1].compiled && rep.cands[1].status == GT_TR_NOT_TIMED,
              "the slow candidate: compiled %d, %s", rep.ncands > 1 ? rep.cands[1].compiled : -1,
              rep.ncands > 1 ? gt_tune_result_name(rep.cands[1].status) : "-");
    gt_tune_report_free(&rep);
    double t1 = gt_measure_now_s();
    gt_tune_wait_compiles();
    double wait_s = gt_measure_now_s() - t1;
    TAP_CHECK(wait_s > 0.5 && wait_s < 3.0, "waited %.2f s for the compile left running", wait_s);
    st = prob_run(&p, NULL);
    double e = prob_error(&p);
    TAP_CHECK(st == GT_SUCCESS && e <= tol(p.k), "result with the winner: err %.3g", e);
    prob_free(&p);
}

/* ===== double precision (gemm_tuned_d) ===== */

static void gpu_f64_all_ops_odd_shapes(void) {
    NEED_GPU();
    /* Odd sizes (no tile divides them), a one-column C, and odd padding on the last shape
     * (alignment class 8: one double). Scalars non-trivial, beta 0 on every other run. */
    static const struct {
        long long m, n, k, pad_a, pad_b, pad_c;
    } sh[] = {{67, 45, 129, 0, 0, 0}, {129, 1, 7, 0, 0, 0}, {255, 257, 31, 1, 3, 5}};
    for (size_t s = 0; s < sizeof sh / sizeof sh[0]; s++)
        for (int op = 0; op < 4; op++) {
            prob p;
            double beta = (s + op) % 2 ? 0.0 : -0.375, alpha = op % 2 ? -0.75 : 1.5;
            prob_init(&p, GT_DT_F64, op & 1, op >> 1, sh[s].m, sh[s].n, sh[s].k, sh[s].pad_a,
                      sh[s].pad_b, sh[s].pad_c, alpha, beta);
            gt_status st = prob_run(&p, NULL);
            double e = prob_error(&p);
            char name[96];
            snprintf(name, sizeof name, "%lldx%lldx%lld:%c%c pads %lld,%lld,%lld", sh[s].m,
                     sh[s].n, sh[s].k, op & 1 ? 'T' : 'N', op >> 1 ? 'T' : 'N', sh[s].pad_a,
                     sh[s].pad_b, sh[s].pad_c);
            TAP_CHECK(st == GT_SUCCESS, "%s: %s: %s", name, gt_status_string(st), gt_last_error());
            TAP_CHECK(e <= tol_d(p.k), "%s alpha %g beta %g: rel err %.3g > %.3g", name, alpha,
                      beta, e, tol_d(p.k));
            printf("# f64 %s alpha=%g beta=%g rel err %.3g\n", name, alpha, beta, e);
            prob_free(&p);
        }
}

static void gpu_f64_nan_in_c_with_beta0(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F64, 1, 0, 97, 61, 43, 0, 0, 0, -1.25, 0.0);
    for (size_t i = 0; i < c_elems(&p); i++) set_elem(&p, p.C0, i, NAN);
    prob_reset_c(&p);
    gt_status st = prob_run(&p, NULL);
    double e = prob_error(&p);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    TAP_CHECK(e <= tol_d(p.k), "NaN leaked or wrong: err %.3g", e);
    prob_free(&p);
}

static void gpu_f64_k_zero_and_alpha_zero(void) {
    NEED_GPU();
    /* k == 0: C = beta * C, exactly (one double multiply per element). */
    prob p;
    prob_init(&p, GT_DT_F64, 0, 1, 53, 29, 0, 0, 0, 0, 1.0, -0.3);
    gt_status st = prob_run(&p, NULL);
    int exact = 1;
    for (size_t i = 0; i < c_elems(&p); i++)
        exact &= elem(&p, p.C, i) == round_elem(&p, -0.3 * elem(&p, p.C0, i));
    TAP_CHECK(st == GT_SUCCESS && exact, "k == 0 must give C = beta * C in double: %s",
              gt_last_error());
    /* k == 0, beta == 0, NaN in C: zeros. */
    for (size_t i = 0; i < c_elems(&p); i++) set_elem(&p, p.C0, i, NAN);
    prob_reset_c(&p);
    p.beta = 0.0;
    st = prob_run(&p, NULL);
    int zeros = 1;
    for (size_t i = 0; i < c_elems(&p); i++) zeros &= elem(&p, p.C, i) == 0.0;
    TAP_CHECK(st == GT_SUCCESS && zeros, "k == 0, beta == 0 must give zeros");
    prob_free(&p);

    /* alpha == 0 with A and B NULL (never read): C = beta * C. beta = 1 + 2^-40 is not a
     * float: a path that narrowed it would round it to 1 and leave C as it was. */
    prob_init(&p, GT_DT_F64, 0, 0, 123, 45, 67, 0, 0, 0, 0.0, 1.0 + 0x1p-40);
    st = gemm_tuned_d(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 0.0, NULL, p.lda, NULL, p.ldb, p.beta,
                      (double *)(uintptr_t)p.dC, p.ldc, NULL);
    gt_cu.ctx_synchronize();
    prob_fetch_c(&p, p.dC);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    exact = 1;
    for (size_t i = 0; i < c_elems(&p); i++)
        exact &= elem(&p, p.C, i) == round_elem(&p, p.beta * elem(&p, p.C0, i));
    TAP_CHECK(exact, "C != beta * C0 in double with alpha == 0");
    /* alpha == 0 and beta == 1: nothing to do, C untouched, even with NULL A and B. */
    prob_reset_c(&p);
    st = gemm_tuned_d(GT_OP_T, GT_OP_N, p.m, p.n, p.k, 0.0, NULL, p.k, NULL, p.ldb, 1.0,
                      (double *)(uintptr_t)p.dC, p.ldc, NULL);
    gt_cu.ctx_synchronize();
    prob_fetch_c(&p, p.dC);
    TAP_CHECK(st == GT_SUCCESS && memcmp(p.C, p.C0, c_bytes(&p)) == 0,
              "alpha == 0, beta == 1 changed C: %s", gt_last_error());
    prob_free(&p);
}

static void gpu_f64_misaligned_launches_nothing(void) {
    NEED_GPU();
    /* A 4-byte offset is a valid float address but not a double's: position 12, C as
     * it was. */
    prob p;
    prob_init(&p, GT_DT_F64, 0, 0, 40, 40, 40, 0, 0, 0, 1.0, 0.0);
    gt_status st = gemm_tuned_d(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 1.0,
                                (const double *)(uintptr_t)p.dA, p.lda,
                                (const double *)(uintptr_t)p.dB, p.ldb, 0.0,
                                (double *)(uintptr_t)(p.dC + 4), p.ldc, NULL);
    gt_cu.ctx_synchronize();
    prob_fetch_c(&p, p.dC);
    TAP_CHECK(st == GT_INVALID_VALUE && gt_last_error_arg() == 12,
              "misaligned C: status %d arg %d (%s)", st, gt_last_error_arg(), gt_last_error());
    TAP_CHECK(memcmp(p.C, p.C0, c_bytes(&p)) == 0, "C written on error");
    prob_free(&p);
}

static void gpu_f32_and_f64_same_shape(void) {
    NEED_GPU();
    /* One shape and ops in both types, interleaved: two keys, two plans, two kernels. A
     * plan of one type run on the other's data would be off by O(1). */
    gt_stats before, after;
    gt_get_stats(&before);
    prob pf, pd;
    prob_init(&pf, GT_DT_F32, 0, 1, 71, 83, 59, 0, 0, 0, 1.25, 0.5);
    prob_init(&pd, GT_DT_F64, 0, 1, 71, 83, 59, 0, 0, 0, 1.25, 0.5);
    for (int round = 0; round < 2; round++) {
        prob_reset_c(&pf);
        prob_reset_c(&pd);
        gt_status sf = prob_run(&pf, NULL), sd = prob_run(&pd, NULL);
        double ef = prob_error(&pf), ed = prob_error(&pd);
        TAP_CHECK(sf == GT_SUCCESS && ef <= tol(pf.k), "round %d f32: %s err %.3g", round,
                  gt_status_string(sf), ef);
        TAP_CHECK(sd == GT_SUCCESS && ed <= tol_d(pd.k), "round %d f64: %s err %.3g", round,
                  gt_status_string(sd), ed);
    }
    gt_get_stats(&after);
    TAP_CHECK(after.tunes - before.tunes == 2, "tuned %llu times, want 2 (once per type)",
              (unsigned long long)(after.tunes - before.tunes));
    TAP_CHECK(after.plan_hits - before.plan_hits >= 2, "second round missed the plan table");
    prob_free(&pf);
    prob_free(&pd);
}

/* ===== DMMA kernels that spill are refused ===== */

/* gt_kern_load refuses a DMMA kernel with local memory (tuner/kern.c: every DMMA kernel
 * seen computing wrong results spilled). A warp tile of 64 x 64 doubles holds 128
 * accumulators, 256 registers: it must spill, and the test reads the function's local
 * size itself to show it does. 32 x 32 warp tiles (32 accumulators) do not spill and
 * must load. f64 300x200x40001 NT, both compiled for this device. */
static void gpu_dmma_spill_refused(void) {
    NEED_GPU();
    gt_devctx *dc;
    if (current_devctx(&dc) != GT_SUCCESS) {
        TAP_CHECK(0, "context state: %s", gt_last_error());
        return;
    }
    if (dc->arch < 80) TAP_SKIP("skipped: DMMA needs compute capability 8.0 (device %d)", dc->arch);
    gt_key key;
    const gt_gemm g = {GT_DT_F64, 0, 1, 300, 200, 40001, 1.0, 0.0, GT_PTR(4096), GT_PTR(8192),
                       GT_PTR(16384), 300, 200, 300, NULL};
    gt_call_key(dc, &g, &key);
    static const char *texts[2] = {"f1_64x64x16_w64x64_t8x8_s3_v2_k1_r1",
                                   "f1_64x64x16_w32x32_t4x4_s3_v2_k1_r1"};
    for (int i = 0; i < 2; i++) {
        gt_kcfg cfg;
        char why[256];
        if (gt_kcfg_parse(texts[i], &cfg, why, sizeof why) != 0) {
            TAP_CHECK(0, "%s: %s", texts[i], why);
            continue;
        }
        /* The local size as the driver reports it, read here, not by gt_kern_load. */
        gt_rtc_result res;
        gt_status s = gt_kern_compile(&cfg, &key, dc->arch, &res);
        TAP_CHECK(s == GT_SUCCESS, "%s: compile: %s", texts[i], gt_last_error());
        if (s != GT_SUCCESS) continue;
        CUmodule mod;
        CUfunction fn;
        int local = -1;
        if (gt_cu.module_load_data(&mod, res.image) == CUDA_SUCCESS) {
            if (gt_cu.module_get_function(&fn, mod, "gt_gemm") == CUDA_SUCCESS)
                gt_cu.func_get_attribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
            gt_cu.module_unload(mod);
        }
        gt_kern k;
        s = gt_kern_load(res.image, &cfg, &key, &k);
        gt_rtc_result_free(&res);
        printf("# %s: %d bytes of local memory, load %s\n", texts[i], local, gt_status_string(s));
        if (i == 0) {
            TAP_CHECK(local > 0, "%s: expected to spill, local size %d", texts[i], local);
            TAP_CHECK(s == GT_LAUNCH_FAILED && strstr(gt_last_error(), "spills"),
                      "%s spills %d bytes but loaded: %s", texts[i], local, gt_status_string(s));
        } else {
            TAP_CHECK(local == 0, "%s: expected no spill, local size %d", texts[i], local);
            TAP_CHECK(s == GT_SUCCESS && k.local == 0, "%s did not load: %s", texts[i], gt_last_error());
        }
        if (s == GT_SUCCESS) gt_kern_unload(&k);
    }
}

/* ===== split-K: three shapes on one stream ===== */

/* Makes the configuration `text` the plan of key, as a shipped or imported winner would be
 * (test_cli and test_cluster pin configurations the same way): stores it as key's winner in
 * this process's user cache (GEMMTUNE_CACHE, set in main). At key's first call the plan
 * table misses and the dispatcher reads the cache before it would tune, so the entry
 * written here is what that call runs. The dispatcher validates the entry against the
 * device with gt_kcfg_validate; it is checked here first with the same limits, so that a
 * configuration this device cannot run fails here, with its reason, instead of silently
 * turning into a tuning. 0 on success, else -1 with the reason in why. */
static int pin_config(gt_devctx *dc, const gt_key *key, const char *text, char *why,
                      size_t whysize) {
    gt_klimits lim;
    gt_kcfg cfg;
    gt_kern_limits(dc, &lim);
    if (gt_kcfg_validate(text, key, &lim, &cfg, why, whysize) != 0) return -1;
    int open = 0;
    const char *path = gt_layers_user_path(&open);
    if (!open) {
        snprintf(why, whysize, "the user cache '%s' is not open", path);
        return -1;
    }
    gt_db *db = NULL;
    char msg[512];
    if (gt_db_open(path, 0, 0, &db, msg, sizeof msg) != GT_SUCCESS) {
        snprintf(why, whysize, "%s", msg);
        return -1;
    }
    gt_db_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.config, sizeof w.config, "%s", text);
    w.time_us = 1.0, w.tuned_at = (int64_t)time(NULL);
    snprintf(w.libver, sizeof w.libver, "%s", GT_VERSION_STRING);
    gt_status s = gt_db_store(db, key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, NULL, 0);
    if (s != GT_SUCCESS) snprintf(why, whysize, "store in %s: %s", path, gt_db_errmsg(db));
    gt_db_close(db);
    return s == GT_SUCCESS ? 0 : -1;
}

static void gpu_splitk_shapes_one_stream(void) {
    NEED_GPU();
    /* Three split-K plans of different shapes, alternating on one stream, share that
     * stream's workspace (runtime/work.c). Its tile counters sit at its start
     * (kernel_src/common.cuh, splitk_reduce): every launch must leave them at zero, and
     * no plan's partial sums may land on them. Each shape gets a split-K
     * configuration pinned through the cache, so the test does not depend on what the
     * tuner would pick. Tile sizes, tile counts (3, 15 and 6), splits (4, 6 and 24), ops,
     * vector widths and beta all differ; odd K leaves the last split short. 24 splits
     * take the reduction's two levels (gt_kcfg_split_group: 4 groups of 6, each with its
     * counter after the tile counters). All need far less workspace (about 112, 354 and
     * 592 KiB) than the 1 MiB work.c allocates at least, so one buffer serves them all
     * from the first call on. */
    enum { ROUNDS = 4, NS = 3 };
    static const struct {
        int opa, opb;
        long long m, n, k;
        double alpha, beta;
        const char *cfg;
    } sh[NS] = {
        /* NT, leading dimensions 64, 96, 64 floats: alignment class 16, so vec 4; beta 0. */
        {0, 1, 64, 96, 4099, 1.5, 0.0, "f0_64x32x16_w32x16_t4x4_s3_v4_k4_r1"},
        /* NN, ldb = k = 3001: alignment class 4, so vec 1; beta != 0 reads C. */
        {0, 0, 200, 72, 3001, -0.75, -0.5, "f0_40x24x16_w20x24_t5x3_s2_v1_k6_r1"},
        /* TN, lda = k = 9001: vec 1; 24 splits of 563 K steps in two levels; beta != 0. */
        {1, 0, 96, 64, 9001, 1.25, 0.25, "f0_32x32x16_w32x32_t4x8_s3_v1_k24_r1"},
    };
    gt_devctx *dc;
    if (current_devctx(&dc) != GT_SUCCESS) {
        TAP_CHECK(0, "context state: %s", gt_last_error());
        return;
    }
    /* A stream of its own: its workspace is created by this case's first split-K call. */
    CUstream stream;
    CUresult cr = gt_cu.stream_create(&stream, 0);
    if (cr != CUDA_SUCCESS) {
        TAP_CHECK(0, "cuStreamCreate: CUresult %d", (int)cr);
        return;
    }

    prob p[NS];
    gt_key key[NS];
    char name[NS][64];
    CUdeviceptr out[NS][ROUNDS]; /* one C per call, so that no call waits for a read-back */
    void *first[NS];             /* round 0's result, which later rounds must equal */
    int pinned = 1;
    for (int s = 0; s < NS; s++) {
        prob_init(&p[s], GT_DT_F32, sh[s].opa, sh[s].opb, sh[s].m, sh[s].n, sh[s].k, 0, 0, 0,
                  sh[s].alpha, sh[s].beta);
        for (int r = 0; r < ROUNDS; r++) {
            gt_cu.mem_alloc(&out[s][r], c_bytes(&p[s]));
            gt_cu.memcpy_htod(out[s][r], p[s].C0, c_bytes(&p[s]));
        }
        first[s] = malloc(c_bytes(&p[s]));
        /* The key gemm_tuned builds for these calls (every output is a fresh allocation,
         * so all have the same alignment class). */
        const gt_gemm g = {GT_DT_F32, p[s].opa, p[s].opb, p[s].m, p[s].n, p[s].k, 1.0,
                           p[s].beta, GT_PTR(p[s].dA), GT_PTR(p[s].dB), GT_PTR(out[s][0]),
                           p[s].lda, p[s].ldb, p[s].ldc, NULL};
        gt_call_key(dc, &g, &key[s]);
        gt_key_shape(&key[s], name[s], sizeof name[s]);
        char why[600];
        if (pin_config(dc, &key[s], sh[s].cfg, why, sizeof why) != 0) {
            TAP_CHECK(0, "%s: cannot pin %s: %s", name[s], sh[s].cfg, why);
            pinned = 0;
        }
    }

    if (pinned) {
        /* X, Y, Z, X, Y, Z, ... all queued on the stream; nothing waits in between but what the
         * library does at each shape's first call (building the kernel, allocating the
         * workspace). */
        gt_stats before, after;
        gt_get_stats(&before);
        for (int r = 0; r < ROUNDS; r++)
            for (int s = 0; s < NS; s++) {
                gt_status st = prob_launch(&p[s], out[s][r], stream);
                TAP_CHECK(st == GT_SUCCESS, "round %d %s: %s: %s", r, name[s],
                          gt_status_string(st), gt_last_error());
            }
        cr = gt_cu.stream_synchronize(stream);
        TAP_CHECK(cr == CUDA_SUCCESS, "cuStreamSynchronize: CUresult %d", (int)cr);
        gt_get_stats(&after);

        /* The pinned entries were used: found in the cache once per shape, nothing tuned
         * or substituted, every later call a plan-table hit. */
        TAP_CHECK(after.cache_hits - before.cache_hits == NS && after.tunes == before.tunes &&
                      after.fallbacks == before.fallbacks && after.nearest == before.nearest &&
                      after.rejected == before.rejected,
                  "cache hits +%llu (want 3), tunes +%llu, fallbacks +%llu, nearest +%llu, "
                  "rejected +%llu (want 0 each)",
                  (unsigned long long)(after.cache_hits - before.cache_hits),
                  (unsigned long long)(after.tunes - before.tunes),
                  (unsigned long long)(after.fallbacks - before.fallbacks),
                  (unsigned long long)(after.nearest - before.nearest),
                  (unsigned long long)(after.rejected - before.rejected));
        TAP_CHECK(after.plan_hits - before.plan_hits == NS * (ROUNDS - 1),
                  "plan hits +%llu, want %d", (unsigned long long)(after.plan_hits - before.plan_hits),
                  NS * (ROUNDS - 1));
        /* The plan table's entry for each key is what every call of it launched (api.c
         * looks up the same key): the pinned configuration, split, with a workspace. */
        for (int s = 0; s < NS; s++) {
            const gt_plan *pl = gt_plan_find(dc->ctx, &key[s]);
            char text[GT_DB_CONFIG_MAX] = "-";
            if (pl) gt_kcfg_format(&pl->kern.cfg, text, sizeof text);
            TAP_CHECK(pl && pl->source == GT_SRC_CACHE && strcmp(text, sh[s].cfg) == 0,
                      "%s ran %s (source %d), want the pinned %s from the cache", name[s], text,
                      pl ? pl->source : -1, sh[s].cfg);
            TAP_CHECK(pl && pl->kern.cfg.split > 1 && pl->kern.ws_bytes > 0,
                      "%s: the plan is not a split-K kernel", name[s]);
            if (pl)
                printf("# %s: %s, split %d, %zu bytes of workspace\n", name[s], text,
                       pl->kern.cfg.split, pl->kern.ws_bytes);
        }

        /* Every result right; the same shape gives the same bits each time (the split-K
         * reduction adds the partials in an order fixed by the configuration, whichever
         * block comes last). */
        for (int s = 0; s < NS; s++)
            for (int r = 0; r < ROUNDS; r++) {
                prob_fetch_c(&p[s], out[s][r]);
                double e = prob_error(&p[s]);
                TAP_CHECK(e <= prob_tol(&p[s]), "round %d %s: rel err %.3g > %.3g", r, name[s], e,
                          prob_tol(&p[s]));
                if (r == 0) {
                    memcpy(first[s], p[s].C, c_bytes(&p[s]));
                    printf("# split-K %s alpha=%g beta=%g rel err %.3g\n", name[s], p[s].alpha,
                           p[s].beta, e);
                } else {
                    TAP_CHECK(memcmp(p[s].C, first[s], c_bytes(&p[s])) == 0,
                              "round %d %s: not bit-identical to round 0", r, name[s]);
                }
            }
    }

    for (int s = 0; s < NS; s++) {
        for (int r = 0; r < ROUNDS; r++) gt_cu.mem_free(out[s][r]);
        free(first[s]);
        prob_free(&p[s]);
    }
    gt_cu.stream_destroy(stream);
}

/* Child mode: one f32 call (tuned, or from the cache) of op(A) M x K, op(B) K x N, then
 * the counters the parent checks: tunings, cache hits, NVRTC compiles, status, result. */
static int child(int opb, long long m, long long n, long long k) {
    CUcontext ctx;
    int pushed;
    if (gt_cu_load() != GT_SUCCESS || gt_cu_enter(NULL, &ctx, &pushed) != GT_SUCCESS) return 3;
    prob p;
    prob_init(&p, GT_DT_F32, 0, opb, m, n, k, 0, 0, 0, 1.0, 0.0);
    gt_status st = prob_run(&p, NULL);
    double e = prob_error(&p);
    gt_stats s;
    gt_get_stats(&s);
    printf("tunes=%llu cache_hits=%llu compiles=%llu status=%d ok=%d\n",
           (unsigned long long)s.tunes, (unsigned long long)s.cache_hits,
           (unsigned long long)s.compiles, st, e <= tol(p.k));
    prob_free(&p);
    return 0;
}

/* The helper programs (fill, compare, reference) go into the user cache with the GEMM
 * kernels: a second process tuning another shape of the same type loads them instead of
 * compiling them. One candidate per tuning, so that both processes compile the same GEMM
 * kernels, and the first also f32's two helper programs (storage type, reference). */
static void gpu_helpers_from_binary_cache(void) {
    NEED_GPU();
    char dir[] = "/tmp/gt_gpu_XXXXXX";
    TAP_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    unsigned long long tunes[2] = {9, 9}, compiles[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "GEMMTUNE_CACHE=%s/cache.db GEMMTUNE_TUNE_MAX_CANDIDATES=1 /proc/%d/exe "
                 "--child-m %d", dir, (int)getpid(), 200 + i);
        FILE *f = popen(cmd, "r");
        int status = -1, ok = 0, got = 0;
        if (f) {
            got = fscanf(f, "tunes=%llu cache_hits=%*s compiles=%llu status=%d ok=%d",
                         &tunes[i], &compiles[i], &status, &ok);
            pclose(f);
        }
        TAP_CHECK(got == 4 && status == 0 && ok && tunes[i] == 1,
                  "process %d: read %d, status %d, ok %d, tunes %llu", i + 1, got, status, ok,
                  tunes[i]);
    }
    TAP_CHECK(compiles[1] >= 1 && compiles[0] == compiles[1] + 2,
              "compiles: first process %llu, second %llu (expected 2 fewer: the helper "
              "programs loaded from the cache)", compiles[0], compiles[1]);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    TAP_CHECK(system(rm) == 0, "cleanup");
}

static int run_child(const char *cache, unsigned long long *tunes, unsigned long long *hits,
                     int *ok) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "GEMMTUNE_CACHE=%s /proc/%d/exe --child", cache, (int)getpid());
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    int status = -1;
    int got = fscanf(f, "tunes=%llu cache_hits=%llu compiles=%*s status=%d ok=%d", tunes, hits,
                     &status, ok);
    pclose(f);
    return got == 4 && status == 0 ? 0 : -1;
}

static void gpu_second_process_hits_cache(void) {
    NEED_GPU();
    char dir[] = "/tmp/gt_gpu_XXXXXX";
    TAP_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char cache[256];
    snprintf(cache, sizeof cache, "%s/cache.db", dir);
    unsigned long long tunes = 9, hits = 9;
    int ok = 0;
    TAP_CHECK(run_child(cache, &tunes, &hits, &ok) == 0, "first process failed");
    TAP_CHECK(tunes == 1 && hits == 0 && ok, "first process: tunes=%llu hits=%llu ok=%d", tunes,
              hits, ok);
    TAP_CHECK(run_child(cache, &tunes, &hits, &ok) == 0, "second process failed");
    TAP_CHECK(tunes == 0 && hits == 1 && ok, "second process: tunes=%llu hits=%llu ok=%d", tunes,
              hits, ok);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    TAP_CHECK(system(rm) == 0, "cleanup");
}

/* ===== tensor-core types (gemm_tuned_ex) ===== */

/* The five types of gemm_tuned_ex that run on tensor cores, with the types its caller
 * passes and the part of the library's tolerance (tuner/verify.h) that does not grow with
 * K. */
static const struct {
    int dt;
    gt_datatype ab, c;
    gt_compute_type ct;
    double base;
} tc_types[] = {
    {GT_DT_TF32, GT_R_32F, GT_R_32F, GT_COMPUTE_32F_FAST_TF32, 4e-3},
    {GT_DT_F16, GT_R_16F, GT_R_16F, GT_COMPUTE_32F, 2e-3},
    {GT_DT_F16_F32, GT_R_16F, GT_R_32F, GT_COMPUTE_32F, 0.0},
    {GT_DT_BF16, GT_R_16BF, GT_R_16BF, GT_COMPUTE_32F, 1e-2},
    {GT_DT_BF16_F32, GT_R_16BF, GT_R_32F, GT_COMPUTE_32F, 0.0},
};
#define N_TC_TYPES (int)(sizeof tc_types / sizeof tc_types[0])

static double tc_tol(int t, long long k) {
    return tc_types[t].base + 1e-5 * sqrt((double)(k > 0 ? k : 1)) + 2e-5;
}

/* f16 <-> double for the values the tests use: inputs are odd multiples of 2^-8 in
 * (-1, 1) (exact in f16, bf16 and tf32, and never zero); outputs are decoded exactly,
 * subnormals included. */
static uint16_t f16_bits(double v) {
    uint16_t sign = v < 0 ? 0x8000 : 0;
    double a = fabs(v);
    int e;
    double f = frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    /* Normal: a = 1.m * 2^(e-1), biased exponent e - 1 + 15. Inputs are all normal. */
    unsigned mant = (unsigned)((f * 2.0 - 1.0) * 1024.0 + 0.5);
    return (uint16_t)(sign | (unsigned)(e - 1 + 15) << 10 | mant);
}
static double f16_value(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}
static double bf16_value(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t bf16_bits(double v) {
    float f = (float)v; /* exact for the inputs: the low 16 bits are zero */
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}
static int st_size(gt_datatype d) { return d == GT_R_32F ? 4 : d == GT_R_64F ? 8 : 2; }
static void st_put(gt_datatype d, void *a, size_t i, double v) {
    if (d == GT_R_32F) ((float *)a)[i] = (float)v;
    else if (d == GT_R_16F) ((uint16_t *)a)[i] = f16_bits(v);
    else ((uint16_t *)a)[i] = bf16_bits(v);
}
static double st_get(gt_datatype d, const void *a, size_t i) {
    if (d == GT_R_32F) return ((const float *)a)[i];
    if (d == GT_R_16F) return f16_value(((const uint16_t *)a)[i]);
    return bf16_value(((const uint16_t *)a)[i]);
}
static double rand_odd256(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(2 * (long long)((rng >> 40) % 256) - 255) / 256.0;
}

/* One call of tensor type t: random exact inputs, C = C0 before; returns the relative
 * Frobenius error against a double reference, +inf for a non-finite output or a changed
 * padding element of C (rows past m), and the call's status in *st. */
static double tc_run(int t, int opa, int opb, long long m, long long n, long long k,
                     long long pad_a, long long pad_b, long long pad_c, float alpha, float beta,
                     gt_status *st) {
    const gt_datatype ab = tc_types[t].ab, ct = tc_types[t].c;
    const size_t ea = (size_t)st_size(ab), ec = (size_t)st_size(ct);
    long long ar = opa ? k : m, ac = opa ? m : k, br = opb ? n : k, bc = opb ? k : n;
    long long lda = (ar > 1 ? ar : 1) + pad_a, ldb = (br > 1 ? br : 1) + pad_b;
    long long ldc = (m > 1 ? m : 1) + pad_c;
    size_t na = (size_t)(lda * ac), nb = (size_t)(ldb * bc), nc = (size_t)(ldc * n);
    void *A = calloc(na + 1, ea), *B = calloc(nb + 1, ea), *C0 = malloc(nc * ec), *C = malloc(nc * ec);
    for (size_t i = 0; i < na; i++) st_put(ab, A, i, rand_odd256());
    for (size_t i = 0; i < nb; i++) st_put(ab, B, i, rand_odd256());
    for (size_t i = 0; i < nc; i++) st_put(ct, C0, i, rand_odd256());
    CUdeviceptr dA, dB, dC;
    gt_cu.mem_alloc(&dA, (na + 1) * ea);
    gt_cu.mem_alloc(&dB, (nb + 1) * ea);
    gt_cu.mem_alloc(&dC, nc * ec);
    gt_cu.memcpy_htod(dA, A, (na + 1) * ea);
    gt_cu.memcpy_htod(dB, B, (nb + 1) * ea);
    gt_cu.memcpy_htod(dC, C0, nc * ec);
    *st = gemm_tuned_ex(opa ? GT_OP_T : GT_OP_N, opb ? GT_OP_T : GT_OP_N, m, n, k, &alpha,
                        (const void *)(uintptr_t)dA, ab, lda, (const void *)(uintptr_t)dB, ab, ldb,
                        &beta, (void *)(uintptr_t)dC, ct, ldc, tc_types[t].ct, NULL);
    gt_cu.ctx_synchronize();
    gt_cu.memcpy_dtoh(C, dC, nc * ec);
    double d2 = 0, r2 = 0;
    int bad = 0;
    for (long long j = 0; j < n && !bad; j++) {
        for (long long i = 0; i < m && !bad; i++) {
            double sum = 0;
            for (long long l = 0; l < k; l++)
                sum += st_get(ab, A, (size_t)(opa ? l + i * lda : i + l * lda)) *
                       st_get(ab, B, (size_t)(opb ? j + l * ldb : l + j * ldb));
            size_t c = (size_t)(i + j * ldc);
            double ref = alpha * sum + (beta == 0.0f ? 0.0 : beta * st_get(ct, C0, c));
            double v = st_get(ct, C, c);
            if (!isfinite(v)) {
                printf("# C(%lld, %lld) = %g, not finite\n", i, j, v);
                bad = 1;
            }
            d2 += (v - ref) * (v - ref);
            r2 += ref * ref;
        }
        for (long long i = m; i < ldc && !bad; i++) {
            size_t off = (size_t)(i + j * ldc) * ec;
            bad = memcmp((const char *)C + off, (const char *)C0 + off, ec) != 0;
            if (bad) printf("# padding row %lld of column %lld (ldc %lld, m %lld) changed\n", i, j, ldc, m);
        }
    }
    gt_cu.mem_free(dA), gt_cu.mem_free(dB), gt_cu.mem_free(dC);
    free(A), free(B), free(C0), free(C);
    if (bad) return INFINITY;
    return r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
}

/* On a device below sm_80 every tensor type is refused with GT_NOT_SUPPORTED, and C is
 * unchanged (checked through the padding-free error: C0 would not match the product). */
static int tc_supported(void) {
    CUdevice d;
    int major = 0;
    gt_cu.ctx_get_device(&d);
    gt_cu.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    return major >= 8;
}

static void gpu_tc_all_ops_odd_shapes(void) {
    NEED_GPU();
    /* Few candidates per shape: this case tunes 5 types x 24 shapes. */
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "6", 1);
    static const long long tshapes[][3] = {{17, 33, 65}, {255, 257, 31}, {129, 1, 7},
                                           {3, 300, 2},  {96, 200, 300}, {1000, 63, 130}};
    const int sup = tc_supported();
    for (int t = 0; t < N_TC_TYPES; t++)
        for (int s = 0; s < 6; s++)
            for (int op = 0; op < 4; op++) {
                gt_status st;
                float beta = (s + op) % 2 ? 0.0f : -0.5f;
                double e = tc_run(t, op & 1, op >> 1, tshapes[s][0], tshapes[s][1],
                                  tshapes[s][2], 0, 0, 0, 1.5f, beta, &st);
                const char *name = gt_dtype_name(tc_types[t].dt);
                if (!sup) {
                    TAP_CHECK(st == GT_NOT_SUPPORTED, "%s below sm_80: %s", name,
                              gt_status_string(st));
                    continue;
                }
                TAP_CHECK(st == GT_SUCCESS, "%s %lldx%lldx%lld op %d: %s", name, tshapes[s][0],
                          tshapes[s][1], tshapes[s][2], op, gt_last_error());
                TAP_CHECK(e <= tc_tol(t, tshapes[s][2]),
                          "%s %lldx%lldx%lld:%c%c beta %g: rel err %.3g > %.3g", name,
                          tshapes[s][0], tshapes[s][1], tshapes[s][2], op & 1 ? 'T' : 'N',
                          op >> 1 ? 'T' : 'N', beta, e, tc_tol(t, tshapes[s][2]));
                if (s == 4)
                    printf("# %s 96x200x300:%c%c beta=%g rel err %.3g\n", name, op & 1 ? 'T' : 'N',
                           op >> 1 ? 'T' : 'N', beta, e);
            }
    unsetenv("GEMMTUNE_TUNE_MAX_CANDIDATES");
}

/* Warnings of candidates that failed verification (the tuner logs each one). */
static int tc_verify_warnings;
static int tc_wgmma_verified;   /* WGMMA candidates ("f3_") that passed verification */
static int tc_cluster_verified; /* of them, clusters of 2 (TM 2: "_t2x") */
static int simt_packed_verified; /* SIMT f32 candidates with 16-byte vectors ("f0_", "_v4_") */
static int tc_wsplit_verified;  /* of them, split-K (not "_k1_") */
static void tc_log(int level, const char *message, void *user) {
    (void)user;
    if (level <= 2 && strstr(message, "failed verification")) tc_verify_warnings++;
    if (strstr(message, "candidate f3_") && strstr(message, " verified:")) {
        tc_wgmma_verified++;
        tc_cluster_verified += strstr(message, "_t2x") != NULL;
        tc_wsplit_verified += strstr(message, "_k1_") == NULL;
    }
    if (strstr(message, "candidate f0_") && strstr(message, "_v4_") && strstr(message, " verified:"))
        simt_packed_verified++;
}

/* A verify-all case: every candidate checked (at most `max` per shape), tc_log counting
 * the failures, at log level `level` (4 also brings the "verified" lines tc_log counts
 * by family); its end asserts that none failed and restores the defaults. */
static void tc_verify_all_begin(const char *max, int level) {
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", max, 1);
    setenv("GEMMTUNE_TUNE_VERIFY_ALL", "1", 1);
    tc_verify_warnings = 0;
    gt_set_log_callback(tc_log, NULL);
    gt_set_log_level(level);
}
static void tc_verify_all_end(void) {
    gt_set_log_callback(NULL, NULL);
    gt_set_log_level(2);
    TAP_CHECK(tc_verify_warnings == 0, "%d candidates failed verification", tc_verify_warnings);
    unsetenv("GEMMTUNE_TUNE_VERIFY_ALL");
    unsetenv("GEMMTUNE_TUNE_MAX_CANDIDATES");
}

/* Odd leading dimensions: 16-bit types fall to the 2-byte alignment class (copies through
 * registers), tf32 to 4 bytes; C's own class with its wider elements for the _f32 types.
 * Every candidate is checked (verify-all) and none may fail. */
static void gpu_tc_unaligned_every_candidate(void) {
    NEED_GPU();
    if (!tc_supported()) TAP_SKIP("skipped: device below sm_80");
    tc_verify_all_begin("8", 2);
    const long long pads[][3] = {{1, 3, 1}, {8, 8, 8}};
    for (int t = 0; t < N_TC_TYPES; t++)
        for (int q = 0; q < 2; q++)
            for (int op = 0; op < 4; op++) {
                gt_status st;
                gt_stats before, after;
                gt_get_stats(&before);
                double e = tc_run(t, op & 1, op >> 1, 77, 45 + q, 130, pads[q][0], pads[q][1],
                                  pads[q][2], 1.0f, 0.25f, &st);
                gt_get_stats(&after);
                TAP_CHECK(st == GT_SUCCESS && e <= tc_tol(t, 130),
                          "%s pads %lld,%lld,%lld op %d: %s err %.3g: %s",
                          gt_dtype_name(tc_types[t].dt), pads[q][0], pads[q][1], pads[q][2], op,
                          gt_status_string(st), e, gt_last_error());
                /* Tuned, not the fallback: the tensor family's own candidates ran. */
                TAP_CHECK(after.tunes == before.tunes + 1 && after.fallbacks == before.fallbacks,
                          "%s op %d: tunes %llu -> %llu, fallbacks %llu -> %llu",
                          gt_dtype_name(tc_types[t].dt), op, (unsigned long long)before.tunes,
                          (unsigned long long)after.tunes, (unsigned long long)before.fallbacks,
                          (unsigned long long)after.fallbacks);
            }
    tc_verify_all_end();
}

/* One NN case of gpu_wgmma_every_candidate: C within the type's tolerance, and *count
 * (one of tc_log's counters, zeroed first) above zero: candidates of the kind the case is
 * about (`kind`) were among those verified. pad: A's, B's and C's leading-dimension pads. */
static void wgmma_case(int t, long long m, long long n, long long k, const long long pad[3],
                       float alpha, float beta, int *count, const char *kind) {
    const char *dt = gt_dtype_name(tc_types[t].dt);
    gt_status st;
    *count = 0;
    double e = tc_run(t, 0, 0, m, n, k, pad[0], pad[1], pad[2], alpha, beta, &st);
    TAP_CHECK(st == GT_SUCCESS && e <= tc_tol(t, k), "%s %lldx%lldx%lld beta %g: %s err %.3g: %s", dt, m,
              n, k, beta, gt_status_string(st), e, gt_last_error());
    TAP_CHECK(*count > 0, "%s %lldx%lldx%lld beta %g: %d %s candidates verified", dt, m, n, k, beta,
              *count, kind);
}

/* The Hopper WGMMA family, on a 9.0 device: every op pair and tensor type, with leading
 * dimensions that TMA can read directly (multiples of 16 bytes) and odd ones (the
 * operands are copied to aligned memory first), odd M, N and K inside; every candidate
 * verified, none failing, and WGMMA candidates among those that passed (tf32 operands
 * stored without k contiguous are read from transposed copies). */
static void gpu_wgmma_every_candidate(void) {
    NEED_GPU();
    gt_cu_device d;
    CUdevice dev;
    if (gt_cu.ctx_get_device(&dev) != CUDA_SUCCESS || gt_cu_device_query(dev, &d) != GT_SUCCESS ||
        d.cc_major != 9 || d.cc_minor != 0)
        TAP_SKIP("skipped: WGMMA needs a 9.0 device");
    tc_verify_all_begin("8", 4);
    /* Pads of 8 keep 600 and 256 rows at multiples of 8 elements: TMA reads the operands
     * themselves. Pads of 1 and 3 make them odd: the cost model ranks WGMMA's (which copy
     * the operands first) below the first 8 on these small shapes, so whether any is
     * among them is not asserted; they must still all verify. */
    const long long pads[][3] = {{8, 8, 8}, {1, 3, 1}};
    for (int t = 0; t < N_TC_TYPES; t++)
        for (int q = 0; q < 2; q++)
            for (int op = 0; op < 4; op++) {
                int ta = op & 1, tb = op >> 1;
                gt_status st;
                tc_wgmma_verified = 0;
                /* Rows of A, B and C are 600 or 256 (m, k) in every op pair but B's N when
                 * transposed: n = 520 keeps that a multiple of 8 too. 64 x 64 tiles give
                 * 90 blocks or more, enough for the space to keep WGMMA ones. */
                long long m = 600, n = tb ? 520 : 517, k = 256;
                double e = tc_run(t, ta, tb, m, n, k, pads[q][0], pads[q][1], pads[q][2], 1.0f,
                                  0.25f, &st);
                TAP_CHECK(st == GT_SUCCESS && e <= tc_tol(t, k),
                          "%s pads %lld,%lld,%lld op %d: %s err %.3g: %s",
                          gt_dtype_name(tc_types[t].dt), pads[q][0], pads[q][1], pads[q][2], op,
                          gt_status_string(st), e, gt_last_error());
                /* tf32 with A or B needing a transposed copy (op pairs other than TN): each
                 * copy is a launch of its own, and on this small shape the model ranks them
                 * below MMA; the split-K and 1001 x 999 x 1003 cases below verify those. */
                int copies = tc_types[t].dt == GT_DT_TF32 && op != 1;
                TAP_CHECK(q == 1 || copies || tc_wgmma_verified > 0,
                          "%s op %d: %d WGMMA candidates verified", gt_dtype_name(tc_types[t].dt),
                          op, tc_wgmma_verified);
            }
    static const long long pad787[3] = {7, 8, 7}, pad484[3] = {4, 8, 4}, pad888[3] = {8, 8, 8},
                           pad000[3] = {0, 0, 0};
    /* beta 0 with 16-bit C in the 16-byte class. m = 1000: C stored through shared
     * memory by TMA, the last box of each column ending at row 1000, the padding after it
     * (ldc 1008) left as it was. m = 601 (ldc 608): from registers, 8 rows at a time (a
     * TMA store would write rows 601 to 607 with row 600's chunk), the last run partial. */
    for (int t = 0; t < N_TC_TYPES; t++)
        if (tc_types[t].dt == GT_DT_BF16 || tc_types[t].dt == GT_DT_F16) {
            wgmma_case(t, 1000, 517, 256, pad888, 1.5f, 0.0f, &tc_wgmma_verified, "WGMMA");
            wgmma_case(t, 601, 517, 256, pad787, 1.5f, 0.0f, &tc_wgmma_verified, "WGMMA");
        }
    /* Clusters of 2 blocks sharing B's tile (TMA multicast), ranked among the first 16 on
     * this shape: 1100 rows make an odd number of 128-row tiles, so the last cluster's
     * second block computes a tile past M and must store nothing (C's padding is checked).
     * beta 0 and not (16-byte and pairwise stores); 1096 rows with beta 0: TMA stores. */
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "16", 1);
    for (int t = 0; t < N_TC_TYPES; t++)
        if (tc_types[t].dt == GT_DT_BF16) {
            for (int b = 0; b < 2; b++)
                wgmma_case(t, 1100, 1000, 512, pad484, 1.0f, b ? 0.25f : 0.0f, &tc_cluster_verified,
                           "WGMMA cluster");
            wgmma_case(t, 1096, 1000, 512, pad888, 1.0f, 0.0f, &tc_cluster_verified, "WGMMA cluster");
        }
    /* Split-K: large K on few tiles, every split's partial summed by the last to arrive;
     * beta 0 and not. bf16 and f16_f32: 320 rows (3 tile rows of 128: clusters too);
     * tf32 NN: 640 x 640 x 16384, A's transposed copy after the partials in the
     * workspace (a shape where WGMMA's split-K ranks high: its copy costs). */
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "24", 1);
    for (int t = 0; t < N_TC_TYPES; t++) {
        const int dt = tc_types[t].dt, tf32 = dt == GT_DT_TF32;
        if (dt != GT_DT_BF16 && dt != GT_DT_F16_F32 && !tf32) continue;
        for (int b = 0; b < 2; b++)
            wgmma_case(t, tf32 ? 640 : 320, tf32 ? 640 : 256, tf32 ? 16384 : 8192, pad888, 1.0f,
                       b ? 0.25f : 0.0f, &tc_wsplit_verified, "WGMMA split-K");
    }
    /* The copies: a shape where they pay (odd leading dimensions, K 1003; tf32 NN: A
     * transposed, B copied), every one of 32 candidates verified, WGMMA's among them. */
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "32", 1);
    for (int t = 0; t < N_TC_TYPES; t++)
        if (tc_types[t].dt == GT_DT_BF16 || tc_types[t].dt == GT_DT_TF32)
            wgmma_case(t, 1001, 999, 1003, pad000, 1.0f, 0.25f, &tc_wgmma_verified, "WGMMA");
    tc_verify_all_end();
}

/* SIMT f32 on odd leading dimensions (the 4-byte class): candidates with 16-byte vectors
 * read copies of A and B made first in the workspace (gt_kcfg_simt_packs), and access C
 * 4 bytes at a time. Every op pair, beta 0 and not, split-K among them (1000 x 999 in
 * tiles of 128 x 128 fills the SMs only split; the cost model ranks packed candidates
 * first on this shape); every candidate verified, none failing, and packed ones among
 * those that passed; C's padding untouched (prob_error). */
static void gpu_simt_packed_every_candidate(void) {
    NEED_GPU();
    tc_verify_all_begin("12", 4);
    /* Each leaves C (1005 or 1001 rows) and so the key in the 4-byte class. */
    const long long pads[][3] = {{1, 3, 5}, {3, 3, 1}};
    for (int q = 0; q < 2; q++)
        for (int op = q; op < 4; op += 2) {
            prob p;
            double beta = op < 2 ? 0.5 : 0.0;
            simt_packed_verified = 0;
            prob_init(&p, GT_DT_F32, op & 1, op >> 1, 1000, 999, 1001, pads[q][0], pads[q][1],
                      pads[q][2], 1.0, beta);
            gt_status st = prob_run(&p, NULL);
            double e = prob_error(&p);
            TAP_CHECK(st == GT_SUCCESS && e <= tol(p.k), "pads %lld,%lld,%lld op %d beta %g: %s err %.3g: %s",
                      pads[q][0], pads[q][1], pads[q][2], op, beta, gt_status_string(st), e,
                      gt_last_error());
            TAP_CHECK(simt_packed_verified > 0, "op %d: %d packed SIMT candidates verified", op,
                      simt_packed_verified);
            prob_free(&p);
        }
    tc_verify_all_end();
}

/* fp32 emulated on tf32 tensor cores (f32_3xtf32), with full 24-bit random inputs (the
 * low parts matter: one tf32 product alone is off by about 2^-11, far above fp32's
 * tolerance, which every result here must meet). Every op pair, beta 0 and not; leading
 * dimensions that TMA reads directly, odd ones (aligned copies first), odd M, N, K, and
 * split-K; every candidate verified, none failing, and on a 9.0 device WGMMA candidates
 * among those that passed where the model ranks them among the first 8 (want_wgmma: a
 * mask of op pairs, bit op). */
static void gpu_f32_3xtf32_every_candidate(void) {
    NEED_GPU();
    gt_cu_device d;
    CUdevice dev;
    int sm90 = gt_cu.ctx_get_device(&dev) == CUDA_SUCCESS && gt_cu_device_query(dev, &d) == GT_SUCCESS &&
               d.cc_major == 9 && d.cc_minor == 0;
    tc_verify_all_begin("8", 4);
    static const struct {
        long long m, n, k, pad[3];
        int ops, want_wgmma; /* masks of op pairs (bit op: 0 NN, 1 TN, 2 NT, 3 TT) */
    } cases[] = {
        {600, 520, 256, {8, 8, 8}, 15, 2},
        {1001, 999, 1003, {0, 0, 0}, 15, 3},
        {77, 46, 130, {1, 3, 1}, 15, 0},
        {384, 384, 8192, {8, 8, 8}, 3, 3},
    };
    for (int c = 0; c < 4; c++)
        for (int op = 0; op < 4; op++) {
            if (!(cases[c].ops >> op & 1)) continue;
            prob p;
            double beta = (c + op) % 2 ? 0.0 : 0.25;
            tc_wgmma_verified = 0;
            prob_init(&p, GT_DT_F32_3XTF32, op & 1, op >> 1, cases[c].m, cases[c].n, cases[c].k,
                      cases[c].pad[0], cases[c].pad[1], cases[c].pad[2], 1.5, beta);
            gt_status st = prob_run(&p, NULL);
            double e = prob_error(&p);
            TAP_CHECK(st == GT_SUCCESS && e <= tol(p.k),
                      "%lldx%lldx%lld op %d beta %g: %s err %.3g (fp32 tolerance %.3g): %s",
                      p.m, p.n, p.k, op, beta, gt_status_string(st), e, tol(p.k), gt_last_error());
            printf("# f32_3xtf32 %lldx%lldx%lld:%c%c beta %g: rel err %.3g, %d WGMMA verified\n",
                   p.m, p.n, p.k, op & 1 ? 'T' : 'N', op >> 1 ? 'T' : 'N', beta, e,
                   tc_wgmma_verified);
            TAP_CHECK(!sm90 || !(cases[c].want_wgmma >> op & 1) || tc_wgmma_verified > 0,
                      "%lldx%lldx%lld op %d: %d WGMMA candidates verified", p.m, p.n, p.k, op,
                      tc_wgmma_verified);
            prob_free(&p);
        }
    tc_verify_all_end();
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--child") == 0) return child(1, 515, 99, 77);
    if (argc > 2 && strcmp(argv[1], "--child-m") == 0) return child(0, atoll(argv[2]), 96, 80);
    /* A cache of this run's own, so that "this call tunes" holds on every run. */
    char dir[] = "/tmp/gt_gpu_cache_XXXXXX", path[300];
    if (mkdtemp(dir)) {
        snprintf(path, sizeof path, "%s/cache.db", dir);
        setenv("GEMMTUNE_CACHE", path, 1);
    }
    gpu_state = gpu_probe(no_gpu_reason, sizeof no_gpu_reason, 1);
    /* Cases that tune with every candidate timed and verified are the sweep suite
     * (test_gpu_sweep, built with GT_TEST_SWEEP), apart from the default GPU run. */
    static const struct {
        void (*fn)(void);
        const char *name;
        int sweep;
    } cases[] = {
        {gpu_all_ops_odd_shapes, "gpu_all_ops_odd_shapes", 0},
        {gpu_larger_leading_dimensions, "gpu_larger_leading_dimensions", 0},
        {gpu_nan_in_c_with_beta0, "gpu_nan_in_c_with_beta0", 0},
        {gpu_alpha_zero_scales_c, "gpu_alpha_zero_scales_c", 0},
        {gpu_k_zero, "gpu_k_zero", 0},
        {gpu_user_buffers_untouched_by_tuning, "gpu_user_buffers_untouched_by_tuning", 0},
        {gpu_bad_argument_launches_nothing, "gpu_bad_argument_launches_nothing", 0},
        {gpu_threads_same_new_shape, "gpu_threads_same_new_shape", 0},
        {gpu_memory_limit_forces_fallback, "gpu_memory_limit_forces_fallback", 0},
        {gpu_second_process_hits_cache, "gpu_second_process_hits_cache", 0},
        {gpu_helpers_from_binary_cache, "gpu_helpers_from_binary_cache", 0},
        {gpu_failed_candidates_never_chosen, "gpu_failed_candidates_never_chosen", 0},
        {gpu_slow_compile_left_behind, "gpu_slow_compile_left_behind", 0},
        {gpu_f64_all_ops_odd_shapes, "gpu_f64_all_ops_odd_shapes", 0},
        {gpu_f64_nan_in_c_with_beta0, "gpu_f64_nan_in_c_with_beta0", 0},
        {gpu_f64_k_zero_and_alpha_zero, "gpu_f64_k_zero_and_alpha_zero", 0},
        {gpu_f64_misaligned_launches_nothing, "gpu_f64_misaligned_launches_nothing", 0},
        {gpu_f32_and_f64_same_shape, "gpu_f32_and_f64_same_shape", 0},
        {gpu_splitk_shapes_one_stream, "gpu_splitk_shapes_one_stream", 0},
        {gpu_dmma_spill_refused, "gpu_dmma_spill_refused", 0},
        {gpu_simt_packed_every_candidate, "gpu_simt_packed_every_candidate", 1},
        {gpu_tc_all_ops_odd_shapes, "gpu_tc_all_ops_odd_shapes", 0},
        {gpu_tc_unaligned_every_candidate, "gpu_tc_unaligned_every_candidate", 1},
        {gpu_wgmma_every_candidate, "gpu_wgmma_every_candidate", 1},
        {gpu_f32_3xtf32_every_candidate, "gpu_f32_3xtf32_every_candidate", 1},
    };
#ifdef GT_TEST_SWEEP
    const int sweep = 1;
#else
    const int sweep = 0;
#endif
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (cases[i].sweep == sweep) tap_run(cases[i].fn, cases[i].name);
    gt_release();
    return tap_done();
}
