/*
 * verify.h: checks a GEMM result against the float64 reference kernel.
 *
 * The reference (gt_ref_f32 / gt_ref_f64 in kernel_src/aux_f32.cu, by the key's data
 * type) computes every output of a small problem, or a sample of rows x columns of a
 * large one (the first, the last and random others), in float64; the comparison is the
 * relative Frobenius error over those outputs, and any non-finite output fails.
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

/* The tolerance of the key's data type. K products summed with FMA in any order (tiles,
 * split-K, tensor cores) are off by about sqrt(K) units of roundoff (a random walk);
 * the rule is c * sqrt(K) + 2c with a wide margin over that:
 *   f32: c = 1e-6 (float's unit roundoff is 6e-8: a margin of ~17); the float64
 *        reference is exact in comparison.
 *   f64: c = 1e-13 (double's is 1.1e-16: a margin of ~900, since the float64 reference
 *        now carries roundoff of the same order as the kernel). Still far below what a
 *        kernel that rounds anything to float would show (~1e-7), so that is caught.
 * A wrong kernel is off by O(1). */
double gt_verify_tolerance(const gt_key *key);

/* Compares C (ldc) with alpha * op(A) * op(B) + beta * C0 (C0 unread when key->beta0),
 * all of the key's data type. Synchronizes `stream`. */
gt_status gt_verify(gt_devctx *dc, CUstream stream, const gt_key *key, double alpha, double beta,
                    CUdeviceptr A, long long lda, CUdeviceptr B, long long ldb, CUdeviceptr C0,
                    long long ldc0, CUdeviceptr C, long long ldc, gt_verify_result *res);

#endif
