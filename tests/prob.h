/*
 * prob.h: one GEMM problem of any data type on the GPU, for the GPU tests (test_gpu,
 * test_capture, test_multigpu): random host data of the problem's storage types, its device
 * buffers, its call through the entry point of its type (prob_launch), its grading against
 * the test's own float64 CPU reference (grade.h) within the bounds stated once, at
 * prob_bound, and the helpers that reach the library's state for a problem: the context's
 * state (current_devctx), the key of its call (prob_key) and a configuration pinned as a
 * key's cached winner (pin_config). Device buffers are allocated in the calling thread's
 * current context. The random generator is one sequence for the process: problems are
 * made on one thread at a time.
 */
#ifndef GT_TEST_PROB_H
#define GT_TEST_PROB_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "call.h"
#include "cu.h"
#include "db.h"
#include "devctx.h"
#include "gemmtune.h"
#include "grade.h"
#include "kcfg.h"
#include "kern.h"
#include "kernel_sources.h"
#include "layers.h"

/* ===== random data ===== */

static unsigned long long rng = 88172645463325252ull;
static inline float frand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

static inline double drand_full(void) {
    /* 53 random bits in [-1, 1): products and sums are not exact in double, so the kernel's
     * own rounding shows, and any rounding to float would show far above the bound. */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(long long)((rng >> 11) - (1ull << 52)) / (double)(1ull << 52);
}

/* Odd multiples of 2^-8 in (-1, 1): at most 8 significant bits, so exact in tf32, f16 and
 * bf16 (never zero, never subnormal), and the product of two is exact in f32. */
static inline double rand_odd256(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(2 * (long long)((rng >> 40) % 256) - 255) / 256.0;
}

/* One problem of any data type: gemm_tuned's GT_DT_F32, gemm_tuned_d's GT_DT_F64, and
 * through gemm_tuned_ex (with gt_ex_types' types) tf32, f16, f16_f32, bf16, bf16_f32 and
 * f32_3xtf32. Host arrays hold elements of the storage types (GT_ST_*: A and B of sab, C of
 * sc) exactly as the device does: what is uploaded and what is compared byte for byte
 * (untouched padding, unchanged A and B) are the very bits, NaN payloads included. elem()
 * and set_elem() read and write C's elements as double, which holds every type exactly.
 * Scalars are doubles; every type but f64 only uses values that are floats, so passing
 * them as float changes nothing. */
typedef struct {
    int dt;                   /* gt_dtype */
    int sab, sc;              /* storage types of A and B, and of C */
    size_t ea, ec;            /* their bytes per element */
    int opa, opb;
    long long m, n, k, lda, ldb, ldc;
    double alpha, beta;
    void *A, *B, *C0, *C;     /* host */
    CUdeviceptr dA, dB, dC;
} prob;

static inline double elem(const prob *p, const void *c, size_t i) { return gr_get(p->sc, c, i); }
static inline void set_elem(const prob *p, void *c, size_t i, double v) { gr_put(p->sc, c, i, v); }

/* v rounded once to C's type: the value an exact check expects from one multiply in that
 * type (a product of two floats is exact in double, so rounding it to float gives the
 * float product bit for bit). */
static inline double round_elem(const prob *p, double v) {
    double t; /* room for one element of any type, aligned for any */
    gr_put(p->sc, &t, 0, v);
    return gr_get(p->sc, &t, 0);
}

/* Random data of p's type: 24-bit values for f32 and f32_3xtf32 (as gemm_tuned's cases
 * always had), 53-bit values for f64 (see drand_full), exact ones for the tensor types
 * (rand_odd256). */
static inline double rand_elem(const prob *p) {
    if (p->dt == GT_DT_F64) return drand_full();
    if (p->dt == GT_DT_F32 || p->dt == GT_DT_F32_3XTF32) return frand();
    return rand_odd256();
}

static inline void prob_init(prob *p, int dt, int opa, int opb, long long m, long long n,
                             long long k, long long pad_a, long long pad_b, long long pad_c,
                             double alpha, double beta) {
    memset(p, 0, sizeof *p);
    p->dt = dt, p->sab = gt_dtype_in(dt), p->sc = gt_dtype_out(dt);
    p->ea = gr_size(p->sab), p->ec = gr_size(p->sc);
    p->opa = opa, p->opb = opb, p->m = m, p->n = n, p->k = k;
    p->alpha = alpha, p->beta = beta;
    long long ar = opa ? k : m, ac = opa ? m : k, br = opb ? n : k, bc = opb ? k : n;
    /* BLAS minimum: max(1, rows) (rows can be k == 0). */
    p->lda = (ar > 1 ? ar : 1) + pad_a, p->ldb = (br > 1 ? br : 1) + pad_b;
    p->ldc = (m > 1 ? m : 1) + pad_c;
    size_t na = (size_t)(p->lda * ac), nb = (size_t)(p->ldb * bc), nc = (size_t)(p->ldc * n);
    /* At least one element each: k == 0 leaves A or B empty, and malloc(0) may be NULL.
     * calloc so that the spare element is defined when it is uploaded. */
    size_t ea = p->ea, ec = p->ec;
    p->A = calloc(na + 1, ea), p->B = calloc(nb + 1, ea);
    p->C0 = malloc(nc * ec), p->C = malloc(nc * ec);
    for (size_t i = 0; i < na; i++) gr_put(p->sab, p->A, i, rand_elem(p));
    for (size_t i = 0; i < nb; i++) gr_put(p->sab, p->B, i, rand_elem(p));
    for (size_t i = 0; i < nc; i++) set_elem(p, p->C0, i, rand_elem(p));
    gt_cu.mem_alloc(&p->dA, (na + 1) * ea);
    gt_cu.mem_alloc(&p->dB, (nb + 1) * ea);
    gt_cu.mem_alloc(&p->dC, nc * ec);
    gt_cu.memcpy_htod(p->dA, p->A, (na + 1) * ea);
    gt_cu.memcpy_htod(p->dB, p->B, (nb + 1) * ea);
    gt_cu.memcpy_htod(p->dC, p->C0, nc * ec);
}

static inline size_t c_elems(const prob *p) { return (size_t)(p->ldc * p->n); }
static inline size_t c_bytes(const prob *p) { return c_elems(p) * p->ec; }

static inline void prob_free(prob *p) {
    free(p->A), free(p->B), free(p->C0), free(p->C);
    gt_cu.mem_free(p->dA), gt_cu.mem_free(p->dB), gt_cu.mem_free(p->dC);
}

/* Writes C0 to the device C again (after a run changed it, or C0 was changed). */
static inline void prob_reset_c(prob *p) { gt_cu.memcpy_htod(p->dC, p->C0, c_bytes(p)); }

/* Reads the device C into p->C. */
static inline void prob_fetch_c(prob *p, CUdeviceptr dC) {
    gt_cu.memcpy_dtoh(p->C, dC, c_bytes(p));
}

/* Enqueues p's GEMM into the device matrix C (p->dC or another of its size) on stream,
 * through the entry point of p's type; nothing waits for it. */
static inline gt_status prob_launch(const prob *p, CUdeviceptr C, void *stream) {
    gt_op oa = p->opa ? GT_OP_T : GT_OP_N, ob = p->opb ? GT_OP_T : GT_OP_N;
    if (p->dt == GT_DT_F32)
        return gemm_tuned(oa, ob, p->m, p->n, p->k, (float)p->alpha,
                          (const float *)(uintptr_t)p->dA, p->lda,
                          (const float *)(uintptr_t)p->dB, p->ldb, (float)p->beta,
                          (float *)(uintptr_t)C, p->ldc, stream);
    if (p->dt == GT_DT_F64)
        return gemm_tuned_d(oa, ob, p->m, p->n, p->k, p->alpha, (const double *)(uintptr_t)p->dA,
                            p->lda, (const double *)(uintptr_t)p->dB, p->ldb, p->beta,
                            (double *)(uintptr_t)C, p->ldc, stream);
    /* Every other type computes in f32: float scalars. */
    const gt_ex_type *t = &gt_ex_types[p->dt];
    const float a = (float)p->alpha, b = (float)p->beta;
    return gemm_tuned_ex(oa, ob, p->m, p->n, p->k, &a, (const void *)(uintptr_t)p->dA, t->ab,
                         p->lda, (const void *)(uintptr_t)p->dB, t->ab, p->ldb, &b,
                         (void *)(uintptr_t)C, t->c, p->ldc, t->compute, stream);
}

static inline gt_status prob_run(prob *p, void *stream) {
    gt_status s = prob_launch(p, p->dC, stream);
    gt_cu.ctx_synchronize();
    prob_fetch_c(p, p->dC);
    return s;
}

/* p's call into the device matrix C on the default stream as the internal entries take it:
 * the gt_gemm that api.c builds for prob_launch's call. */
static inline gt_gemm prob_gemm(const prob *p, CUdeviceptr C) {
    const gt_gemm g = {p->dt, p->opa ? GT_OP_T : GT_OP_N, p->opb ? GT_OP_T : GT_OP_N, p->m, p->n,
                       p->k, p->alpha, p->beta, GT_PTR(p->dA), GT_PTR(p->dB), GT_PTR(C), p->lda,
                       p->ldb, p->ldc, NULL};
    return g;
}

/* ===== the bounds (the one place that states them) =====
 *
 * Every output C(i, j) is graded on its own (grade.h) against the test's float64 reference
 *   ref = alpha * sum_l a_il b_lj + beta * c0_ij,  G = |alpha| sum_l |a_il| |b_lj| + |beta| |c0_ij|
 * (beta == 0: no C0 term), and must be finite and within
 *   |C - ref| <= u_out |ref| + (lambda sqrt(K) u + e) G + 1e-30.
 * Why. Each product a b is exact, or rounded once (relative u). The K terms are summed in
 * the accumulator's precision u, in whatever order the kernel likes (tiles, split-K,
 * tensor cores), each addition rounding once: at worst that is K u sum |a||b|, and with
 * rounding errors of mean zero, independent, it stays below lambda sqrt(K) u sum |a||b|
 * except with probability about 2 exp(-lambda^2 / 2) (Higham and Mary's probabilistic
 * bound); lambda = 8 makes that 3e-14 per element. alpha, beta and adding beta C0 round a
 * few times more, a few u G, within lambda sqrt(K) u G for any K >= 1. The output is then
 * rounded once to C's type, to nearest: u_out |ref| (plus u_out times the error above,
 * which the margin in lambda covers). 1e-30 keeps the bound positive where G is 0.
 *   f32 (24-bit random inputs, FFMA, exact products):  u_out = 2^-24, lambda u = 8 * 2^-24
 *   f32_3xtf32 (the same inputs on tf32 tensor cores): as f32, plus e = 2^-21: each
 *       operand is split into a high and a low tf32 part and a_hi b_hi + a_hi b_lo +
 *       a_lo b_hi leaves out a_lo b_lo and the low parts' own rounding, about 2^-22 |a b|
 *       each (SIMT candidates compute it exactly, as f32).
 *   tf32, f16_f32, bf16_f32 (inputs odd multiples of 2^-8: exact in every input type,
 *       products exact in f32; f32 accumulation, f32 C): 2^-24, 8 * 2^-24
 *   f16, bf16 (the same, C rounded once from f32 to 11 or 8 significant bits):
 *       u_out = 2^-11 or 2^-8, lambda u = 8 * 2^-24
 *   f64 (53-bit random inputs: products round too): u_out = 2^-53, lambda u = 16 * 2^-53,
 *       twice f32's lambda because the double reference itself rounds as much as the
 *       kernel does.
 * With inputs of mean |a| = 1/2, G is about K / 4 and 8 sqrt(K) 2^-24 G about
 * 2^-21 K^1.5 / 4: 0.004 at K = 1003, 0.25 at K = 16384. A kernel that drops a K step or
 * reads a wrong element moves some outputs by |a b|, up to 1: the worst of them shows it. */
static inline gr_bound prob_bound(const prob *p) {
    const double u32 = 0x1p-24, u64 = 0x1p-53;
    switch (p->dt) {
    case GT_DT_F64: return (gr_bound){u64, 16 * u64, 0};
    case GT_DT_F32_3XTF32: return (gr_bound){u32, 8 * u32, 0x1p-21};
    case GT_DT_F16: return (gr_bound){0x1p-11, 8 * u32, 0};
    case GT_DT_BF16: return (gr_bound){0x1p-8, 8 * u32, 0};
    default: return (gr_bound){u32, 8 * u32, 0}; /* f32, tf32, f16_f32, bf16_f32 */
    }
}

/* The reference of p as it stands (A, B, C0, alpha, beta), to grade against as often as
 * needed (gr_ref_free frees it). */
static inline void prob_reference(const prob *p, gr_ref *r) {
    const gr_problem h = {p->opa, p->opb, p->m, p->n, p->k, p->lda, p->ldb, p->ldc,
                          p->alpha, p->beta, p->sab, p->sc, p->A, p->B, p->C0};
    gr_ref_compute(r, &h);
}

/* Grades p->C (as the last prob_fetch_c left it) against r with p's bound: returns the
 * worst |C - ref| / bound, <= 1 when right, +inf for a non-finite output or a changed
 * padding element of C (rows past m); where and what in *res (res->text). */
static inline double prob_grade(const prob *p, const gr_ref *r, gr_result *res) {
    const gr_bound b = prob_bound(p);
    return gr_grade(r, &b, p->sc, p->C, p->C0, p->ldc, res);
}

/* prob_grade against a reference computed for this grading alone; res may be NULL. */
static inline double prob_error(const prob *p, gr_result *res) {
    gr_result local;
    gr_ref r;
    prob_reference(p, &r);
    double e = prob_grade(p, &r, res ? res : &local);
    gr_ref_free(&r);
    return e;
}

/* ===== the library's state for a problem ===== */

/* The library's state for the calling thread's current context (gt_devctx_get). */
static inline gt_status current_devctx(gt_devctx **dc) {
    CUcontext ctx;
    gt_cu.ctx_get_current(&ctx);
    return gt_devctx_get(ctx, dc);
}

/* The key of p's call (prob_launch into p->dC) on the current context, and that context's
 * state. */
static inline gt_status prob_key(const prob *p, gt_devctx **dc, gt_key *key) {
    gt_status st = current_devctx(dc);
    if (st != GT_SUCCESS) return st;
    const gt_gemm g = prob_gemm(p, p->dC);
    gt_call_key(*dc, &g, key);
    return GT_SUCCESS;
}

/* Makes the configuration `text` the plan of key, as a shipped or imported winner would be
 * (test_cli and test_cluster pin configurations the same way): stores it as key's winner in
 * this process's user cache (GEMMTUNE_CACHE, which each test's main points at a file of its
 * own). At key's first call the plan table misses and the dispatcher reads the cache before
 * it would tune, so the entry written here is what that call runs. The dispatcher
 * validates the entry against the device with gt_kcfg_validate; it is checked here first
 * with the same limits, so that a configuration this device cannot run fails here, with
 * its reason, instead of silently turning into a tuning. 0 on success, else -1 with the
 * reason in why. */
static inline int pin_config(gt_devctx *dc, const gt_key *key, const char *text, char *why,
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

#endif
