/*
 * test_gpu.c: gemm_tuned on a real GPU against a float64 CPU reference.
 * Without a CUDA device every case reports "skipped: no CUDA device".
 * Cases: all four op pairs on odd shapes; leading dimensions above the minimum;
 * NaN in C with beta == 0; alpha == 0; k == 0; user buffers untouched by tuning;
 * a second process finds the winner in the cache without tuning; threads; the tuning
 * memory limit forcing the fallback; bad arguments launch nothing.
 * Double precision (gemm_tuned_d, cases gpu_f64_*): all four op pairs on odd shapes with
 * non-trivial alpha and beta, odd leading dimensions, NaN in C with beta == 0, k == 0
 * and alpha == 0 (exact), a misaligned double rejected with nothing written, and one
 * shape as f32 and f64 in one process (two keys, two kernels, both right).
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
#include <unistd.h>

#include "cu.h"
#include "devctx.h"
#include "dispatch.h"
#include "gemmtune.h"
#include "kcfg.h"
#include "tap.h"

static int have_gpu;
static char no_gpu_reason[200];

#define NEED_GPU()                                                            \
    do {                                                                      \
        if (!have_gpu) TAP_SKIP("skipped: no CUDA device (%s)", no_gpu_reason); \
    } while (0)

/* ===== helpers ===== */

static unsigned long long rng = 88172645463325252ull;
static float frand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

typedef struct {
    int opa, opb;
    long long m, n, k, lda, ldb, ldc;
    float alpha, beta;
    float *A, *B, *C0, *C;   /* host */
    CUdeviceptr dA, dB, dC;
} prob;

static void prob_init(prob *p, int opa, int opb, long long m, long long n, long long k,
                      long long pad_a, long long pad_b, long long pad_c, float alpha, float beta) {
    memset(p, 0, sizeof *p);
    p->opa = opa, p->opb = opb, p->m = m, p->n = n, p->k = k;
    p->alpha = alpha, p->beta = beta;
    long long ar = opa ? k : m, ac = opa ? m : k, br = opb ? n : k, bc = opb ? k : n;
    /* BLAS minimum: max(1, rows) (rows can be k == 0). */
    p->lda = (ar > 1 ? ar : 1) + pad_a, p->ldb = (br > 1 ? br : 1) + pad_b;
    p->ldc = (m > 1 ? m : 1) + pad_c;
    size_t na = (size_t)(p->lda * ac), nb = (size_t)(p->ldb * bc), nc = (size_t)(p->ldc * n);
    p->A = malloc(na * 4), p->B = malloc(nb * 4), p->C0 = malloc(nc * 4), p->C = malloc(nc * 4);
    for (size_t i = 0; i < na; i++) p->A[i] = frand();
    for (size_t i = 0; i < nb; i++) p->B[i] = frand();
    for (size_t i = 0; i < nc; i++) p->C0[i] = frand();
    gt_cu.mem_alloc(&p->dA, na * 4);
    gt_cu.mem_alloc(&p->dB, nb * 4);
    gt_cu.mem_alloc(&p->dC, nc * 4);
    gt_cu.memcpy_htod(p->dA, p->A, na * 4);
    gt_cu.memcpy_htod(p->dB, p->B, nb * 4);
    gt_cu.memcpy_htod(p->dC, p->C0, nc * 4);
}

static size_t c_elems(const prob *p) { return (size_t)(p->ldc * p->n); }

static void prob_free(prob *p) {
    free(p->A), free(p->B), free(p->C0), free(p->C);
    gt_cu.mem_free(p->dA), gt_cu.mem_free(p->dB), gt_cu.mem_free(p->dC);
}

static gt_status prob_run(prob *p, void *stream) {
    gt_status s = gemm_tuned(p->opa ? GT_OP_T : GT_OP_N, p->opb ? GT_OP_T : GT_OP_N, p->m, p->n,
                             p->k, p->alpha, (const float *)(uintptr_t)p->dA, p->lda,
                             (const float *)(uintptr_t)p->dB, p->ldb, p->beta,
                             (float *)(uintptr_t)p->dC, p->ldc, stream);
    gt_cu.ctx_synchronize();
    gt_cu.memcpy_dtoh(p->C, p->dC, c_elems(p) * 4);
    return s;
}

/* Relative Frobenius error of C against alpha*op(A)*op(B) + beta*C0 in float64; padding
 * rows of C (beyond m) must be untouched. Returns +inf on any non-finite output. */
static double prob_error(const prob *p) {
    double d2 = 0, r2 = 0;
    for (long long j = 0; j < p->n; j++) {
        for (long long i = 0; i < p->m; i++) {
            double sum = 0;
            for (long long l = 0; l < p->k; l++) {
                double a = p->opa ? p->A[l + i * p->lda] : p->A[i + l * p->lda];
                double b = p->opb ? p->B[j + l * p->ldb] : p->B[l + j * p->ldb];
                sum += a * b;
            }
            double ref = p->alpha * sum + (p->beta == 0.0f ? 0.0 : p->beta * (double)p->C0[i + j * p->ldc]);
            double v = p->C[i + j * p->ldc];
            if (!isfinite(v)) return INFINITY;
            d2 += (v - ref) * (v - ref);
            r2 += ref * ref;
        }
        for (long long i = p->m; i < p->ldc; i++)
            if (memcmp(&p->C[i + j * p->ldc], &p->C0[i + j * p->ldc], 4) != 0) return INFINITY;
    }
    return r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
}

static double tol(long long k) { return 1e-6 * sqrt((double)(k > 0 ? k : 1)) + 2e-6; }

/* ===== cases ===== */

static const long long shapes[][3] = {{1, 1, 1},     {17, 33, 65},  {1000, 1000, 1000},
                                      {4097, 129, 257}, {64, 64, 64}, {129, 1, 7},
                                      {3, 300, 2},   {255, 257, 31}};

static void gpu_all_ops_odd_shapes(void) {
    NEED_GPU();
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int op = 0; op < 4; op++) {
            prob p;
            float beta = (s + op) % 2 ? 0.0f : -0.5f;
            prob_init(&p, op & 1, op >> 1, shapes[s][0], shapes[s][1], shapes[s][2], 0, 0, 0,
                      1.5f, beta);
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
            prob_init(&p, op & 1, op >> 1, 77, 45, 130, pads[q][0], pads[q][1], pads[q][2], 1.0f,
                      0.25f);
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
    prob_init(&p, 0, 1, 300, 200, 100, 0, 0, 0, 1.0f, 0.0f);
    for (size_t i = 0; i < c_elems(&p); i++) p.C0[i] = NAN;
    gt_cu.memcpy_htod(p.dC, p.C0, c_elems(&p) * 4);
    gt_status st = prob_run(&p, NULL);
    double e = prob_error(&p);
    TAP_CHECK(st == GT_SUCCESS && e <= tol(p.k), "NaN leaked or wrong: err %.3g", e);
    prob_free(&p);
}

static void gpu_alpha_zero_scales_c(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, 0, 0, 123, 45, 67, 0, 0, 0, 0.0f, 2.0f);
    gt_status st = gemm_tuned(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 0.0f, NULL, p.lda, NULL, p.ldb,
                              2.0f, (float *)(uintptr_t)p.dC, p.ldc, NULL);
    gt_cu.ctx_synchronize();
    gt_cu.memcpy_dtoh(p.C, p.dC, c_elems(&p) * 4);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    int exact = 1;
    for (size_t i = 0; i < c_elems(&p); i++) exact &= p.C[i] == 2.0f * p.C0[i];
    TAP_CHECK(exact, "C != 2 * C0 with alpha == 0 (A and B were NULL: must not be read)");
    prob_free(&p);
}

static void gpu_k_zero(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, 1, 0, 50, 60, 0, 0, 0, 0, 1.0f, 0.5f);
    gt_status st = prob_run(&p, NULL);
    int exact = 1;
    for (size_t i = 0; i < c_elems(&p); i++) exact &= p.C[i] == 0.5f * p.C0[i];
    TAP_CHECK(st == GT_SUCCESS && exact, "k == 0 must give C = beta * C");
    /* beta == 0 and NaN in C: zeros. */
    for (size_t i = 0; i < c_elems(&p); i++) p.C0[i] = NAN;
    gt_cu.memcpy_htod(p.dC, p.C0, c_elems(&p) * 4);
    p.beta = 0.0f;
    st = prob_run(&p, NULL);
    int zeros = 1;
    for (size_t i = 0; i < c_elems(&p); i++) zeros &= p.C[i] == 0.0f;
    TAP_CHECK(st == GT_SUCCESS && zeros, "k == 0, beta == 0 must give zeros");
    prob_free(&p);
}

static void gpu_user_buffers_untouched_by_tuning(void) {
    NEED_GPU();
    /* A shape no other case uses, so this call tunes; beta = 1 makes any extra write of C
     * by tuning show in the result. */
    prob p;
    prob_init(&p, 0, 1, 333, 222, 111, 2, 2, 0, 1.0f, 1.0f);
    gt_stats before, after;
    gt_get_stats(&before);
    gt_status st = prob_run(&p, NULL);
    gt_get_stats(&after);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    TAP_CHECK(after.tunes == before.tunes + 1, "expected this call to tune");
    float *a = malloc((size_t)(p.lda * p.k) * 4), *b = malloc((size_t)(p.ldb * p.k) * 4);
    gt_cu.memcpy_dtoh(a, p.dA, (size_t)(p.lda * p.k) * 4);
    gt_cu.memcpy_dtoh(b, p.dB, (size_t)(p.ldb * p.k) * 4);
    TAP_CHECK(memcmp(a, p.A, (size_t)(p.lda * p.k) * 4) == 0, "A changed");
    TAP_CHECK(memcmp(b, p.B, (size_t)(p.ldb * p.k) * 4) == 0, "B changed");
    double e = prob_error(&p);
    TAP_CHECK(e <= tol(p.k), "C = A B + C0 wrong after tuning: err %.3g", e);
    free(a), free(b);
    prob_free(&p);
}

static void gpu_bad_argument_launches_nothing(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, 0, 0, 40, 40, 40, 0, 0, 0, 1.0f, 0.0f);
    gt_status st = gemm_tuned(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 1.0f, (const float *)(uintptr_t)p.dA,
                              p.lda, (const float *)(uintptr_t)p.dB, p.ldb, 0.0f,
                              (float *)(uintptr_t)p.dC, p.m - 1, NULL);
    gt_cu.ctx_synchronize();
    gt_cu.memcpy_dtoh(p.C, p.dC, c_elems(&p) * 4);
    TAP_CHECK(st == GT_INVALID_VALUE && gt_last_error_arg() == 13, "ldc < m: status %d arg %d", st,
              gt_last_error_arg());
    TAP_CHECK(memcmp(p.C, p.C0, c_elems(&p) * 4) == 0, "C written on error");
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
    prob_init(&p, 1, 1, 211, 197, 89, 0, 0, 0, 1.0f, 0.0f);
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
    prob_init(&p, 1, 0, 150, 170, 190, 0, 0, 0, 1.0f, 0.0f);
    gt_status st = prob_run(&p, NULL);
    gt_get_stats(&after);
    gt_set_tune_memory_limit(0);
    TAP_CHECK(st == GT_SUCCESS, "call must succeed without tuning: %s", gt_last_error());
    TAP_CHECK(after.fallbacks == before.fallbacks + 1, "fallback not used");
    double e = prob_error(&p);
    TAP_CHECK(e <= tol(p.k), "fallback wrong: %.3g", e);
    prob_free(&p);
}

static void gpu_failed_candidates_never_chosen(void) {
    NEED_GPU();
    /* Candidate 0 fails to compile, 1 fails to launch, and the fastest that runs computes
     * a wrong result: each must be recorded, none chosen, and the call still right. */
    setenv("GEMMTUNE_TEST_FAULT", "compile:0,launch:1,verify:0", 1);
    gt_devctx *dc;
    CUcontext ctx;
    gt_cu.ctx_get_current(&ctx);
    TAP_CHECK(gt_devctx_get(ctx, &dc) == GT_SUCCESS, "context state");
    prob p;
    prob_init(&p, 1, 0, 301, 203, 105, 0, 0, 0, 1.0f, 0.0f);
    gt_key key;
    gt_devctx_make_key(dc, GT_DT_F32, 1, 0, p.m, p.n, p.k, (void *)(uintptr_t)p.dA, p.lda,
                       (void *)(uintptr_t)p.dB, p.ldb, 0.0, (void *)(uintptr_t)p.dC, p.ldc, &key);
    gt_tune_report rep;
    memset(&rep, 0, sizeof rep);
    int source = -1;
    gt_status st = gt_dispatch_tune(dc, &key, 1, &rep, &source);
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

/* ===== double precision (gemm_tuned_d) ===== */

static double drand_full(void) {
    /* 53 random bits in [-1, 1): products and sums are not exact in double, so the kernel's
     * own rounding shows, and any rounding to float would show far above the tolerance. */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(long long)((rng >> 11) - (1ull << 52)) / (double)(1ull << 52);
}

typedef struct {
    int opa, opb;
    long long m, n, k, lda, ldb, ldc;
    double alpha, beta;
    double *A, *B, *C0, *C;   /* host */
    CUdeviceptr dA, dB, dC;
} probd;

static void probd_init(probd *p, int opa, int opb, long long m, long long n, long long k,
                       long long pad_a, long long pad_b, long long pad_c, double alpha,
                       double beta) {
    memset(p, 0, sizeof *p);
    p->opa = opa, p->opb = opb, p->m = m, p->n = n, p->k = k;
    p->alpha = alpha, p->beta = beta;
    long long ar = opa ? k : m, ac = opa ? m : k, br = opb ? n : k, bc = opb ? k : n;
    p->lda = (ar > 1 ? ar : 1) + pad_a, p->ldb = (br > 1 ? br : 1) + pad_b;
    p->ldc = (m > 1 ? m : 1) + pad_c;
    size_t na = (size_t)(p->lda * ac), nb = (size_t)(p->ldb * bc), nc = (size_t)(p->ldc * n);
    /* At least one element each: k == 0 leaves A or B empty, and malloc(0) may be NULL. */
    p->A = malloc((na + 1) * 8), p->B = malloc((nb + 1) * 8);
    p->C0 = malloc(nc * 8), p->C = malloc(nc * 8);
    for (size_t i = 0; i < na; i++) p->A[i] = drand_full();
    for (size_t i = 0; i < nb; i++) p->B[i] = drand_full();
    for (size_t i = 0; i < nc; i++) p->C0[i] = drand_full();
    gt_cu.mem_alloc(&p->dA, (na + 1) * 8);
    gt_cu.mem_alloc(&p->dB, (nb + 1) * 8);
    gt_cu.mem_alloc(&p->dC, nc * 8);
    gt_cu.memcpy_htod(p->dA, p->A, (na + 1) * 8);
    gt_cu.memcpy_htod(p->dB, p->B, (nb + 1) * 8);
    gt_cu.memcpy_htod(p->dC, p->C0, nc * 8);
}

static size_t cd_elems(const probd *p) { return (size_t)(p->ldc * p->n); }

static void probd_free(probd *p) {
    free(p->A), free(p->B), free(p->C0), free(p->C);
    gt_cu.mem_free(p->dA), gt_cu.mem_free(p->dB), gt_cu.mem_free(p->dC);
}

/* Writes C0 to the device C again (after a run changed it). */
static void probd_reset_c(probd *p) { gt_cu.memcpy_htod(p->dC, p->C0, cd_elems(p) * 8); }

static gt_status probd_run(probd *p, void *stream) {
    gt_status s = gemm_tuned_d(p->opa ? GT_OP_T : GT_OP_N, p->opb ? GT_OP_T : GT_OP_N, p->m,
                               p->n, p->k, p->alpha, (const double *)(uintptr_t)p->dA, p->lda,
                               (const double *)(uintptr_t)p->dB, p->ldb, p->beta,
                               (double *)(uintptr_t)p->dC, p->ldc, stream);
    gt_cu.ctx_synchronize();
    gt_cu.memcpy_dtoh(p->C, p->dC, cd_elems(p) * 8);
    return s;
}

/* Relative Frobenius error of C against alpha*op(A)*op(B) + beta*C0 summed in double;
 * padding rows of C (beyond m) must be untouched. +inf on any non-finite output. */
static double probd_error(const probd *p) {
    double d2 = 0, r2 = 0;
    for (long long j = 0; j < p->n; j++) {
        for (long long i = 0; i < p->m; i++) {
            double sum = 0;
            for (long long l = 0; l < p->k; l++) {
                double a = p->opa ? p->A[l + i * p->lda] : p->A[i + l * p->lda];
                double b = p->opb ? p->B[j + l * p->ldb] : p->B[l + j * p->ldb];
                sum += a * b;
            }
            double ref = p->alpha * sum + (p->beta == 0.0 ? 0.0 : p->beta * p->C0[i + j * p->ldc]);
            double v = p->C[i + j * p->ldc];
            if (!isfinite(v)) return INFINITY;
            d2 += (v - ref) * (v - ref);
            r2 += ref * ref;
        }
        for (long long i = p->m; i < p->ldc; i++)
            if (memcmp(&p->C[i + j * p->ldc], &p->C0[i + j * p->ldc], 8) != 0) return INFINITY;
    }
    return r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
}

/* The library's f64 rule (tuner/verify.h): about 1e-12 for these K; a kernel that rounds
 * anything to float is off by ~1e-7. */
static double tol_d(long long k) { return 1e-13 * sqrt((double)(k > 0 ? k : 1)) + 2e-13; }

static void gpu_f64_all_ops_odd_shapes(void) {
    NEED_GPU();
    /* Odd sizes (no tile divides them), a one-column C, and odd padding on the last shape
     * (alignment class 8: one double). Scalars non-trivial, beta 0 on every other run. */
    static const struct {
        long long m, n, k, pad_a, pad_b, pad_c;
    } sh[] = {{67, 45, 129, 0, 0, 0}, {129, 1, 7, 0, 0, 0}, {255, 257, 31, 1, 3, 5}};
    for (size_t s = 0; s < sizeof sh / sizeof sh[0]; s++)
        for (int op = 0; op < 4; op++) {
            probd p;
            double beta = (s + op) % 2 ? 0.0 : -0.375, alpha = op % 2 ? -0.75 : 1.5;
            probd_init(&p, op & 1, op >> 1, sh[s].m, sh[s].n, sh[s].k, sh[s].pad_a, sh[s].pad_b,
                       sh[s].pad_c, alpha, beta);
            gt_status st = probd_run(&p, NULL);
            double e = probd_error(&p);
            char name[96];
            snprintf(name, sizeof name, "%lldx%lldx%lld:%c%c pads %lld,%lld,%lld", sh[s].m,
                     sh[s].n, sh[s].k, op & 1 ? 'T' : 'N', op >> 1 ? 'T' : 'N', sh[s].pad_a,
                     sh[s].pad_b, sh[s].pad_c);
            TAP_CHECK(st == GT_SUCCESS, "%s: %s: %s", name, gt_status_string(st), gt_last_error());
            TAP_CHECK(e <= tol_d(p.k), "%s alpha %g beta %g: rel err %.3g > %.3g", name, alpha,
                      beta, e, tol_d(p.k));
            printf("# f64 %s alpha=%g beta=%g rel err %.3g\n", name, alpha, beta, e);
            probd_free(&p);
        }
}

static void gpu_f64_nan_in_c_with_beta0(void) {
    NEED_GPU();
    probd p;
    probd_init(&p, 1, 0, 97, 61, 43, 0, 0, 0, -1.25, 0.0);
    for (size_t i = 0; i < cd_elems(&p); i++) p.C0[i] = NAN;
    probd_reset_c(&p);
    gt_status st = probd_run(&p, NULL);
    double e = probd_error(&p);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    TAP_CHECK(e <= tol_d(p.k), "NaN leaked or wrong: err %.3g", e);
    probd_free(&p);
}

static void gpu_f64_k_zero_and_alpha_zero(void) {
    NEED_GPU();
    /* k == 0: C = beta * C, exactly (one double multiply per element). */
    probd p;
    probd_init(&p, 0, 1, 53, 29, 0, 0, 0, 0, 1.0, -0.3);
    gt_status st = probd_run(&p, NULL);
    int exact = 1;
    for (size_t i = 0; i < cd_elems(&p); i++) exact &= p.C[i] == -0.3 * p.C0[i];
    TAP_CHECK(st == GT_SUCCESS && exact, "k == 0 must give C = beta * C in double: %s",
              gt_last_error());
    /* k == 0, beta == 0, NaN in C: zeros. */
    for (size_t i = 0; i < cd_elems(&p); i++) p.C0[i] = NAN;
    probd_reset_c(&p);
    p.beta = 0.0;
    st = probd_run(&p, NULL);
    int zeros = 1;
    for (size_t i = 0; i < cd_elems(&p); i++) zeros &= p.C[i] == 0.0;
    TAP_CHECK(st == GT_SUCCESS && zeros, "k == 0, beta == 0 must give zeros");
    probd_free(&p);

    /* alpha == 0 with A and B NULL (never read): C = beta * C. beta = 1 + 2^-40 is not a
     * float: a path that narrowed it would round it to 1 and leave C as it was. */
    probd_init(&p, 0, 0, 123, 45, 67, 0, 0, 0, 0.0, 1.0 + 0x1p-40);
    st = gemm_tuned_d(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 0.0, NULL, p.lda, NULL, p.ldb, p.beta,
                      (double *)(uintptr_t)p.dC, p.ldc, NULL);
    gt_cu.ctx_synchronize();
    gt_cu.memcpy_dtoh(p.C, p.dC, cd_elems(&p) * 8);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    exact = 1;
    for (size_t i = 0; i < cd_elems(&p); i++) exact &= p.C[i] == p.beta * p.C0[i];
    TAP_CHECK(exact, "C != beta * C0 in double with alpha == 0");
    /* alpha == 0 and beta == 1: nothing to do, C untouched, even with NULL A and B. */
    probd_reset_c(&p);
    st = gemm_tuned_d(GT_OP_T, GT_OP_N, p.m, p.n, p.k, 0.0, NULL, p.k, NULL, p.ldb, 1.0,
                      (double *)(uintptr_t)p.dC, p.ldc, NULL);
    gt_cu.ctx_synchronize();
    gt_cu.memcpy_dtoh(p.C, p.dC, cd_elems(&p) * 8);
    TAP_CHECK(st == GT_SUCCESS && memcmp(p.C, p.C0, cd_elems(&p) * 8) == 0,
              "alpha == 0, beta == 1 changed C: %s", gt_last_error());
    probd_free(&p);
}

static void gpu_f64_misaligned_launches_nothing(void) {
    NEED_GPU();
    /* A 4-byte offset is a valid float address but not a double's: position 12, C as
     * it was. */
    probd p;
    probd_init(&p, 0, 0, 40, 40, 40, 0, 0, 0, 1.0, 0.0);
    gt_status st = gemm_tuned_d(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 1.0,
                                (const double *)(uintptr_t)p.dA, p.lda,
                                (const double *)(uintptr_t)p.dB, p.ldb, 0.0,
                                (double *)(uintptr_t)(p.dC + 4), p.ldc, NULL);
    gt_cu.ctx_synchronize();
    gt_cu.memcpy_dtoh(p.C, p.dC, cd_elems(&p) * 8);
    TAP_CHECK(st == GT_INVALID_VALUE && gt_last_error_arg() == 12,
              "misaligned C: status %d arg %d (%s)", st, gt_last_error_arg(), gt_last_error());
    TAP_CHECK(memcmp(p.C, p.C0, cd_elems(&p) * 8) == 0, "C written on error");
    probd_free(&p);
}

static void gpu_f32_and_f64_same_shape(void) {
    NEED_GPU();
    /* One shape and ops in both types, interleaved: two keys, two plans, two kernels. A
     * plan of one type run on the other's data would be off by O(1). */
    gt_stats before, after;
    gt_get_stats(&before);
    prob pf;
    probd pd;
    prob_init(&pf, 0, 1, 71, 83, 59, 0, 0, 0, 1.25f, 0.5f);
    probd_init(&pd, 0, 1, 71, 83, 59, 0, 0, 0, 1.25, 0.5);
    for (int round = 0; round < 2; round++) {
        gt_cu.memcpy_htod(pf.dC, pf.C0, c_elems(&pf) * 4);
        probd_reset_c(&pd);
        gt_status sf = prob_run(&pf, NULL), sd = probd_run(&pd, NULL);
        double ef = prob_error(&pf), ed = probd_error(&pd);
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
    probd_free(&pd);
}

/* Child mode: one call of a fixed shape, then print the counters. */
static int child(void) {
    CUcontext ctx;
    int pushed;
    if (gt_cu_load() != GT_SUCCESS || gt_cu_enter(NULL, &ctx, &pushed) != GT_SUCCESS) return 3;
    prob p;
    prob_init(&p, 0, 1, 515, 99, 77, 0, 0, 0, 1.0f, 0.0f);
    gt_status st = prob_run(&p, NULL);
    double e = prob_error(&p);
    gt_stats s;
    gt_get_stats(&s);
    printf("tunes=%llu cache_hits=%llu status=%d ok=%d\n", (unsigned long long)s.tunes,
           (unsigned long long)s.cache_hits, st, e <= tol(p.k));
    prob_free(&p);
    return 0;
}

static int run_child(const char *cache, unsigned long long *tunes, unsigned long long *hits,
                     int *ok) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "GEMMTUNE_CACHE=%s /proc/%d/exe --child", cache, (int)getpid());
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    int status = -1;
    int got = fscanf(f, "tunes=%llu cache_hits=%llu status=%d ok=%d", tunes, hits, &status, ok);
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

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--child") == 0) return child();
    /* A cache of this run's own, so that "this call tunes" holds on every run. */
    char dir[] = "/tmp/gt_gpu_cache_XXXXXX", path[300];
    if (mkdtemp(dir)) {
        snprintf(path, sizeof path, "%s/cache.db", dir);
        setenv("GEMMTUNE_CACHE", path, 1);
    }
    gt_status s = gt_cu_load();
    have_gpu = s == GT_SUCCESS;
    if (!have_gpu) snprintf(no_gpu_reason, sizeof no_gpu_reason, "%s", gt_last_error());
    if (have_gpu) {
        CUcontext ctx;
        int pushed;
        have_gpu = gt_cu_enter(NULL, &ctx, &pushed) == GT_SUCCESS;
    }
    TAP_RUN(gpu_all_ops_odd_shapes);
    TAP_RUN(gpu_larger_leading_dimensions);
    TAP_RUN(gpu_nan_in_c_with_beta0);
    TAP_RUN(gpu_alpha_zero_scales_c);
    TAP_RUN(gpu_k_zero);
    TAP_RUN(gpu_user_buffers_untouched_by_tuning);
    TAP_RUN(gpu_bad_argument_launches_nothing);
    TAP_RUN(gpu_threads_same_new_shape);
    TAP_RUN(gpu_memory_limit_forces_fallback);
    TAP_RUN(gpu_second_process_hits_cache);
    TAP_RUN(gpu_failed_candidates_never_chosen);
    TAP_RUN(gpu_f64_all_ops_odd_shapes);
    TAP_RUN(gpu_f64_nan_in_c_with_beta0);
    TAP_RUN(gpu_f64_k_zero_and_alpha_zero);
    TAP_RUN(gpu_f64_misaligned_launches_nothing);
    TAP_RUN(gpu_f32_and_f64_same_shape);
    gt_release();
    return tap_done();
}
