/*
 * call.h: one call's arguments checked by the BLAS rules of gemm_tuned, gemm_tuned_d and
 * gemm_tuned_ex before anything touches the GPU, and the call's problem key. The checks
 * are pure (no driver, no state), so every rule is tested without a GPU.
 */
#ifndef GT_CALL_H
#define GT_CALL_H

#include <stdint.h>

#include "devctx.h"
#include "gemm.h"
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
 * message naming it (gt_last_error, gt_last_error_arg). Every pointer that the call would
 * use must be aligned to its element (gt_dtype_in_size for A and B, gt_dtype_out_size for
 * C, of g->dtype). */
gt_status gt_call_check(const gt_arg_pos *pos, const gt_gemm *g, gt_action *action);

/* The problem key of call g on dc's device: the alignment class counts leading
 * dimensions in elements of A and B's type and of C's. */
void gt_call_key(const gt_devctx *dc, const gt_gemm *g, gt_key *key);

#endif
