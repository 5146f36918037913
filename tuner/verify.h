/*
 * verify.h: checks a GEMM result against the float64 reference kernel.
 *
 * The reference (gt_ref_<dtype> in kernel_src/aux.cu, by the key's data type)
 * computes every output of a small problem, or a sample of rows x columns of a large one (the first, the last and random others), in float64; the comparison is the
 * relative Frobenius error over those outputs, and any non-finite output fails.
 */
#ifndef GT_VERIFY_H
#define GT_VERIFY_H

#include <cuda.h>

#include "devctx.h"
#include "gemm.h"
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
 *   tensor-core types with f32 accumulation: c = 1e-5 (the MMA's internal f32 sums
 *        may align with truncation), plus a base that does not grow with K:
 *        f16_f32, bf16_f32: 0 (16-bit inputs and their products are exact in f32);
 *        tf32: 4e-3 (inputs lose 13 mantissa bits, up to 2^-10 relative each);
 *        f16: 2e-3, bf16: 1e-2 (C rounded once to 11 or 8 significant bits: at most
 *        2^-11 or 2^-8 relative per element).
 * A wrong kernel is off by O(1); one that drops a K step of S is off by about 1/sqrt(S). */
double gt_verify_tolerance(const gt_key *key);

/* Compares the output of call g (its C, of key's problem) with g->alpha * op(A) * op(B) +
 * g->beta * C0 (C0 of leading dimension ldc0, unread when key->beta0), of the key's data
 * types (A, B in its input type, C0 and C in its output type). Synchronizes g->stream. */
gt_status gt_verify(gt_devctx *dc, const gt_key *key, const gt_gemm *g, const void *C0,
                    int64_t ldc0, gt_verify_result *res);

#endif
