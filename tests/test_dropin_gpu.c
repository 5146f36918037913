/*
 * test_dropin_gpu.c: a program written against cuBLAS alone (the CUDA runtime and
 * cuBLAS, nothing of gemmtune's), run with the drop-in preloaded (LD_PRELOAD=
 * libgemmtune_cublas.so; tests/meson.build sets it). Each case calls one cuBLAS entry on
 * random data on a stream of its own, first routed (the drop-in's counts must show the
 * call served by gemmtune), then with GEMMTUNE_CUBLAS=off (forwarded to cuBLAS), and
 * compares the two outputs within the type's tolerance: Sgemm, Dgemm with beta != 0,
 * Hgemm, GemmEx bf16 in / f32 out and GemmEx f16 in / f16 out, over the four op pairs.
 * Without a GPU it prints "skipped: no CUDA device".
 */
#define _GNU_SOURCE
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grade.h"
#include "tap.h"

/* cublas_api.h declares cublasHgemm for C++ only (its scalars are __half); the entry
 * takes pointers, so C declares it with void pointers. */
cublasStatus_t cublasHgemm(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                           const void *, const void *, int, const void *, int, const void *,
                           void *, int);

typedef void (*counts_fn)(unsigned long long out[3]);
static counts_fn counts;
static int gpu_state; /* 1 ready, 0 none, -1 failed */
static char why[200];

/* A device: 1; none (no driver, no device): 0; anything else: -1. With
 * GEMMTUNE_TEST_REQUIRE_GPU=1 none is a failure. */
static int probe(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    int state = e == cudaSuccess && n > 0 ? 1
                : e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
                          (e == cudaSuccess && n == 0)
                    ? 0
                    : -1;
    if (state != 1) snprintf(why, sizeof why, "%s", cudaGetErrorString(e));
    const char *req = getenv("GEMMTUNE_TEST_REQUIRE_GPU");
    if (state == 0 && req && !strcmp(req, "1")) state = -1;
    return state;
}

/* ===== host data ===== */

/* Element types: key.h's storage types (GT_ST_F32, F64, F16, BF16), sized, read and
 * written through grade.h. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
/* Uniform in (-1, 1), full mantissa. */
static double urand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Random values, rounded to float first (what the cases pass as single precision). */
static void fill(void *p, size_t n, int t) {
    for (size_t i = 0; i < n; i++) {
        double v = urand();
        gr_put(t, p, i, t == GT_ST_F64 ? v : (double)(float)v);
    }
}

/* ===== one case ===== */

typedef struct {
    const char *name;
    int entry;        /* 0 Sgemm, 1 Dgemm, 2 Hgemm, 3 GemmEx */
    int ab, c;        /* element types of A and B, and of C */
    int m, n, k;
    double alpha, beta;
    double tol;       /* max |routed - cuBLAS| / max |cuBLAS| */
} dcase;

static cudaDataType cuda_type(int t) {
    return t == GT_ST_F32   ? CUDA_R_32F
           : t == GT_ST_F64 ? CUDA_R_64F
           : t == GT_ST_F16 ? CUDA_R_16F
                            : CUDA_R_16BF;
}

static cublasStatus_t call(cublasHandle_t h, const dcase *c, int ta, int tb, const void *A,
                           int lda, const void *B, int ldb, void *C, int ldc) {
    const cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const float af = (float)c->alpha, bf = (float)c->beta;
    if (c->entry == 0)
        return cublasSgemm(h, oa, ob, c->m, c->n, c->k, &af, A, lda, B, ldb, &bf, C, ldc);
    if (c->entry == 1)
        return cublasDgemm(h, oa, ob, c->m, c->n, c->k, &c->alpha, A, lda, B, ldb, &c->beta, C, ldc);
    if (c->entry == 2) {
        const uint16_t ah = gr_f16_bits(af), bh = gr_f16_bits(bf);
        return cublasHgemm(h, oa, ob, c->m, c->n, c->k, &ah, A, lda, B, ldb, &bh, C, ldc);
    }
    return cublasGemmEx(h, oa, ob, c->m, c->n, c->k, &af, A, cuda_type(c->ab), lda, B,
                        cuda_type(c->ab), ldb, &bf, C, cuda_type(c->c), ldc, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
}

/* The case with op pair (ta, tb): routed, then forwarded, from the same C. */
static void run_case(cublasHandle_t h, cudaStream_t s, const dcase *c, int ta, int tb) {
    const int lda = ta ? c->k : c->m, ldb = tb ? c->n : c->k, ldc = c->m;
    const size_t na = (size_t)c->m * c->k, nb = (size_t)c->k * c->n, nc = (size_t)c->m * c->n;
    void *ha = malloc(na * gr_size(c->ab)), *hb = malloc(nb * gr_size(c->ab));
    void *hc = malloc(nc * gr_size(c->c)), *r1 = malloc(nc * gr_size(c->c)), *r2 = malloc(nc * gr_size(c->c));
    void *da = NULL, *db = NULL, *dc = NULL;
    int ok = ha && hb && hc && r1 && r2 && cudaMalloc(&da, na * gr_size(c->ab)) == cudaSuccess &&
             cudaMalloc(&db, nb * gr_size(c->ab)) == cudaSuccess &&
             cudaMalloc(&dc, nc * gr_size(c->c)) == cudaSuccess;
    TAP_CHECK(ok, "%s: buffers", c->name);
    if (ok) {
        fill(ha, na, c->ab), fill(hb, nb, c->ab), fill(hc, nc, c->c);
        cudaMemcpy(da, ha, na * gr_size(c->ab), cudaMemcpyHostToDevice);
        cudaMemcpy(db, hb, nb * gr_size(c->ab), cudaMemcpyHostToDevice);
        unsigned long long k0[3], k1[3], k2[3];
        void *out[2] = {r1, r2};
        cublasStatus_t st[2];
        counts(k0);
        for (int run = 0; run < 2; run++) {
            if (run == 1) setenv("GEMMTUNE_CUBLAS", "off", 1);
            cudaMemcpy(dc, hc, nc * gr_size(c->c), cudaMemcpyHostToDevice);
            st[run] = call(h, c, ta, tb, da, lda, db, ldb, dc, ldc);
            cudaMemcpyAsync(out[run], dc, nc * gr_size(c->c), cudaMemcpyDeviceToHost, s);
            cudaStreamSynchronize(s);
            counts(run == 0 ? k1 : k2);
            unsetenv("GEMMTUNE_CUBLAS");
        }
        TAP_CHECK(st[0] == CUBLAS_STATUS_SUCCESS && st[1] == CUBLAS_STATUS_SUCCESS,
                  "%s %c%c: status %d routed, %d forwarded", c->name, "NT"[ta], "NT"[tb], st[0], st[1]);
        TAP_CHECK(k1[0] - k0[0] == 1 && k1[2] == k0[2], "%s %c%c: served by gemmtune +%llu, fell back +%llu",
                  c->name, "NT"[ta], "NT"[tb], k1[0] - k0[0], k1[2] - k0[2]);
        TAP_CHECK(k2[1] - k1[1] == 1 && k2[0] == k1[0], "%s %c%c: forwarded with GEMMTUNE_CUBLAS=off +%llu",
                  c->name, "NT"[ta], "NT"[tb], k2[1] - k1[1]);
        double diff = 0, big = 0;
        int finite = 1;
        for (size_t i = 0; i < nc; i++) {
            const double x = gr_get(c->c, r1, i), y = gr_get(c->c, r2, i);
            finite &= isfinite(x) && isfinite(y);
            if (fabs(x - y) > diff) diff = fabs(x - y);
            if (fabs(y) > big) big = fabs(y);
        }
        const double rel = big > 0 ? diff / big : diff;
        TAP_CHECK(finite && big > 0 && rel <= c->tol, "%s %c%c: max |drop-in - cuBLAS| / max |cuBLAS| %.3g (tolerance %.0e)",
                  c->name, "NT"[ta], "NT"[tb], rel, c->tol);
        printf("# %s %dx%dx%d:%c%c relative difference %.3g\n", c->name, c->m, c->n, c->k,
               "NT"[ta], "NT"[tb], rel);
    }
    cudaFree(da), cudaFree(db), cudaFree(dc);
    free(ha), free(hb), free(hc), free(r1), free(r2);
}

static void dropin_matches_cublas(void) {
    if (gpu_state == 0) TAP_SKIP("skipped: no CUDA device (%s)", why);
    TAP_CHECK(gpu_state == 1, "GPU set-up failed: %s", why);
    if (gpu_state != 1) return;
    if (!counts) TAP_SKIP("skipped: the drop-in is not preloaded (LD_PRELOAD)");
    cublasHandle_t h;
    cudaStream_t s;
    const int have_h = cublasCreate(&h) == CUBLAS_STATUS_SUCCESS;
    const int have_s = have_h && cudaStreamCreate(&s) == cudaSuccess;
    TAP_CHECK(have_h && have_s, "cuBLAS handle and stream");
    if (!have_s) {
        if (have_h) cublasDestroy(h);
        return;
    }
    cublasSetStream(h, s);
    /* Tolerances: the same products by other kernels (other summation orders); Hgemm's
     * cuBLAS accumulates in fp16, the drop-in's gemmtune in fp32. */
    static const dcase cases[] = {
        {"Sgemm", 0, GT_ST_F32, GT_ST_F32, 129, 67, 33, 1.5, 0.0, 1e-5},
        {"Dgemm", 1, GT_ST_F64, GT_ST_F64, 67, 45, 129, -0.75, 0.5, 1e-13},
        {"Hgemm", 2, GT_ST_F16, GT_ST_F16, 96, 200, 300, 1.0, 0.0, 2e-2},
        {"GemmEx bf16 -> f32", 3, GT_ST_BF16, GT_ST_F32, 255, 257, 31, 1.0, -0.5, 1e-5},
        {"GemmEx f16 -> f16", 3, GT_ST_F16, GT_ST_F16, 1000, 63, 130, 0.5, 0.0, 2e-3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int op = (int)i % 4; /* each case one op pair, all four over the cases */
        run_case(h, s, &cases[i], op & 1, op >> 1);
    }
    cublasDestroy(h);
    cudaStreamDestroy(s);
}

int main(void) {
    counts = (counts_fn)dlsym(RTLD_DEFAULT, "gemmtune_cublas_counts");
    gpu_state = probe();
    TAP_RUN(dropin_matches_cublas);
    return tap_done();
}
