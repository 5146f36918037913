/*
 * args.h: BLAS argument rules for gemm_tuned and gemm_tuned_d, checked before anything
 * touches the GPU. Pure: no driver, no state, so every rule is tested without a GPU.
 */
#ifndef GT_ARGS_H
#define GT_ARGS_H

#include <stdint.h>

#include "gemmtune.h"

/* What a valid call has to do. */
typedef enum {
    GT_ACT_GEMM = 0,   /* the full product */
    GT_ACT_NONE = 1,   /* m == 0, n == 0, or (alpha == 0 or k == 0) with beta == 1 */
    GT_ACT_SCALE = 2,  /* k == 0 or alpha == 0: C = beta * C, A and B not read */
} gt_action;

/* GT_SUCCESS and *action, or GT_INVALID_VALUE with the argument's BLAS position and a
 * message naming it (gt_last_error, gt_last_error_arg). Positions as in gemmtune.h.
 * elem_size is the bytes of one element (4: float, 8: double): every pointer that the
 * call would use must be aligned to it. alpha and beta are the caller's scalars, exact in
 * double whatever their type. */
gt_status gt_args_check(int opA, int opB, int64_t m, int64_t n, int64_t k, double alpha,
                        const void *A, int64_t lda, const void *B, int64_t ldb, double beta,
                        const void *C, int64_t ldc, int elem_size, gt_action *action);

#endif
