/*
 * verify.h: checks a GEMM result against the float64 reference kernel.
 *
 * The reference (gt_ref_f32 in kernel_src/aux_f32.cu) computes every output of a small
 * problem, or a sample of rows x columns of a large one (the first, the last and random
 * others), in float64; the comparison is the relative Frobenius error over those
 * outputs, and any non-finite output fails.
 */
#ifndef GT_VERIFY_H
#define GT_VERIFY_H

#include <cuda.h>

#include "devctx.h"
#include "key.h"

typedef struct gt_verify_result {
    double rel_err;       /* ||C - ref|| / ||ref|| over the checked outputs */
    double tol;           /* the tolerance for this key */
    long long nonfinite;  /* checked outputs that are NaN or Inf */
    long long checked;    /* outputs compared */
    int pass;
} gt_verify_result;

/* The fp32 tolerance: K products summed in float with FMA; about sqrt(K) ulps of
 * random-walk error, with a wide margin. A wrong kernel is off by O(1). */
double gt_verify_tolerance(const gt_key *key);

/* Compares C (ldc) with alpha * op(A) * op(B) + beta * C0 (C0 unread when key->beta0).
 * Synchronizes `stream`. */
gt_status gt_verify(gt_devctx *dc, CUstream stream, const gt_key *key, float alpha, float beta,
                    CUdeviceptr A, long long lda, CUdeviceptr B, long long ldb, CUdeviceptr C0,
                    long long ldc0, CUdeviceptr C, long long ldc, gt_verify_result *res);

#endif
