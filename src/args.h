/*
 * args.h: BLAS argument rules for gemm_tuned, gemm_tuned_d and gemm_tuned_ex, checked before anything
 * touches the GPU. Pure: no driver, no state, so every rule is tested without a GPU.
 */
#ifndef GT_ARGS_H
#define GT_ARGS_H

#include <stdint.h>

#include "gemmtune.h"
#include "key.h"

/* gemm_tuned_ex's types for each data type (gemmtune.h's table of supported
 * combinations), indexed by gt_dtype: api.c maps a call's types to its data type with it,
 * the command the other way. */
typedef struct gt_ex_type {
    gt_datatype ab, c;
    gt_compute_type compute;
} gt_ex_type;
extern const gt_ex_type gt_ex_types[GT_NDTYPES];

/* What a valid call has to do. */
typedef enum {
    GT_ACT_GEMM = 0,   /* the full product */
    GT_ACT_NONE = 1,   /* m == 0, n == 0, or (alpha == 0 or k == 0) with beta == 1 */
    GT_ACT_SCALE = 2,  /* k == 0 or alpha == 0: C = beta * C, A and B not read */
} gt_action;

/* Positions (1-based) of the arguments checked here: BLAS sgemm's (gemm_tuned,
 * gemm_tuned_d) or cublasGemmEx's without the handle (gemm_tuned_ex). The sizes are 3, 4,
 * 5 in both. */
typedef struct gt_arg_pos {
    int a, lda, b, ldb, c, ldc;
} gt_arg_pos;
extern const gt_arg_pos gt_pos_blas, gt_pos_ex;

/* GT_SUCCESS and *action, or GT_INVALID_VALUE with the argument's position (pos) and a
 * message naming it (gt_last_error, gt_last_error_arg). in_size and out_size are the
 * bytes of one element of A and B and of C (2, 4 or 8): every pointer that the call would
 * use must be aligned to its element. alpha and beta are the caller's scalars, exact in
 * double whatever their type. */
gt_status gt_args_check(const gt_arg_pos *pos, int opA, int opB, int64_t m, int64_t n,
                        int64_t k, double alpha, const void *A, int64_t lda, const void *B,
                        int64_t ldb, double beta, const void *C, int64_t ldc, int in_size,
                        int out_size, gt_action *action);

#endif
