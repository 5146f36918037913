/*
 * verify.c: reference check of a result (verify.h). Owns only the short-lived device
 * buffers of one check.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verify.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "log.h"

/* Problems up to this many outputs are checked whole; larger ones by a sample. */
#define FULL_OUTPUTS (512 * 512)
#define SAMPLE 256

double gt_verify_tolerance(const gt_key *key) {
    /* f32_3xtf32 is held to fp32's bound: that is its promise. */
    double c = key->dtype == GT_DT_F64                                     ? 1e-13
               : key->dtype == GT_DT_F32 || key->dtype == GT_DT_F32_3XTF32 ? 1e-6
                                                                           : 1e-5;
    /* Roundoff that does not grow with K: tf32 inputs, and C rounded to 16 bits. */
    double base = key->dtype == GT_DT_TF32 ? 4e-3
                  : key->dtype == GT_DT_F16 ? 2e-3
                  : key->dtype == GT_DT_BF16 ? 1e-2
                                             : 0.0;
    return base + c * sqrt((double)(key->k > 0 ? key->k : 1)) + 2 * c;
}

static unsigned long long next_rand(unsigned long long *s) {
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* All of [0, n) when full, else SAMPLE indices: 0, n - 1 and random others. */
static int *pick(long long n, int full, int *count, unsigned long long seed) {
    int c = full || n <= SAMPLE ? (int)n : SAMPLE;
    int *idx = malloc(sizeof *idx * (size_t)c);
    if (!idx) return NULL;
    for (int i = 0; i < c; i++)
        idx[i] = c == n ? i : i == 0 ? 0 : i == 1 ? (int)(n - 1) : (int)(next_rand(&seed) % n);
    *count = c;
    return idx;
}

gt_status gt_verify(gt_devctx *dc, const gt_key *key, const gt_gemm *g, const void *C0p,
                    int64_t ldc0p, gt_verify_result *res) {
    assert(key->dtype >= 0 && key->dtype < GT_NDTYPES && g->dtype == key->dtype);
    /* The kernels take addresses as CUdeviceptr and sizes as long long. */
    CUstream stream = (CUstream)g->stream;
    CUdeviceptr A = GT_DPTR(g->A), B = GT_DPTR(g->B), C = GT_DPTR(g->C), C0 = GT_DPTR(C0p);
    long long lda = g->lda, ldb = g->ldb, ldc = g->ldc, ldc0 = ldc0p;
    double alpha = g->alpha, beta = g->beta;
    memset(res, 0, sizeof *res);
    res->tol = gt_verify_tolerance(key);
    gt_status s = gt_devctx_aux(dc, key->dtype);
    if (s != GT_SUCCESS) return s;
    int full = key->m * key->n <= FULL_OUTPUTS, nr = 0, nc = 0;
    int *rows = pick(key->m, full, &nr, 0x1234 + (unsigned long long)key->m);
    int *cols = pick(key->n, full, &nc, 0x5678 + (unsigned long long)key->n);
    CUdeviceptr drows = 0, dcols = 0, dref = 0, dacc = 0;
    CUresult r = CUDA_SUCCESS;
    const char *what = "";
    if (!rows || !cols) {
        s = gt_fail(GT_OUT_OF_MEMORY, "verification index lists");
        goto done;
    }
    long long total = (long long)nr * nc;
#define TRY(call, name)                  \
    if (r == CUDA_SUCCESS) {             \
        r = (call);                      \
        if (r != CUDA_SUCCESS) what = name; \
    }
    TRY(gt_cu.mem_alloc(&drows, sizeof(int) * (size_t)nr), "cuMemAlloc (verify rows)");
    TRY(gt_cu.mem_alloc(&dcols, sizeof(int) * (size_t)nc), "cuMemAlloc (verify cols)");
    TRY(gt_cu.mem_alloc(&dref, sizeof(double) * (size_t)total), "cuMemAlloc (reference)");
    TRY(gt_cu.mem_alloc(&dacc, 3 * sizeof(double)), "cuMemAlloc (sums)");
    TRY(gt_cu.memcpy_htod(drows, rows, sizeof(int) * (size_t)nr), "cuMemcpyHtoD (rows)");
    TRY(gt_cu.memcpy_htod(dcols, cols, sizeof(int) * (size_t)nc), "cuMemcpyHtoD (cols)");
    TRY(gt_cu.memset_d8_async(dacc, 0, 3 * sizeof(double), stream), "cuMemsetD8Async");
    if (r == CUDA_SUCCESS) {
        int opa = key->opa, opb = key->opb, b0 = key->beta0;
        long long m = key->m, n = key->n, k = key->k;
        void *args[] = {&opa, &opb, &m, &n, &k, &alpha, &A, &lda, &B, &ldb, &beta, &C0, &ldc0, &b0,
                        &drows, &nr, &dcols, &nc, &dref};
        unsigned grid = (unsigned)((total + 127) / 128);
        TRY(gt_cu.launch_kernel(dc->ref[key->dtype], grid, 1, 1, 128, 1, 1, 0, stream, args, NULL),
            "cuLaunchKernel (reference)");
        void *cargs[] = {&C, &ldc, &drows, &nr, &dcols, &nc, &dref, &dacc};
        TRY(gt_cu.launch_kernel(dc->cmp[gt_dtype_out(key->dtype)], grid, 1, 1, 128, 1, 1, 0, stream, cargs, NULL),
            "cuLaunchKernel (compare)");
        TRY(gt_cu.stream_synchronize(stream), "verification (the checked kernel or the reference)");
    }
    double acc[3] = {0, 0, 0};
    TRY(gt_cu.memcpy_dtoh(acc, dacc, sizeof acc), "cuMemcpyDtoH (sums)");
#undef TRY
    if (r != CUDA_SUCCESS) {
        s = gt_cu_fail(r, what);
        goto done;
    }
    res->checked = total;
    res->nonfinite = (long long)acc[2];
    res->rel_err = acc[1] > 0 ? sqrt(acc[0] / acc[1]) : sqrt(acc[0]);
    res->pass = res->nonfinite == 0 && res->rel_err <= res->tol && !isnan(res->rel_err);
done:
    if (drows) gt_cu.mem_free(drows);
    if (dcols) gt_cu.mem_free(dcols);
    if (dref) gt_cu.mem_free(dref);
    if (dacc) gt_cu.mem_free(dacc);
    free(rows);
    free(cols);
    return s;
}
