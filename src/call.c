/*
 * call.c: BLAS argument rules and the key of a call (call.h), the same for sgemm (gemm_tuned), dgemm
 * (gemm_tuned_d) and the typed entry (gemm_tuned_ex); only the positions differ. The
 * size and leading-dimension rules follow the reference BLAS xerbla: the first invalid
 * one in position order is reported. Pointers, which BLAS does not
 * check, come after them, and only where the call would use them (A and B are not read
 * when alpha == 0 or k == 0; nothing is when m or n is 0).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "call.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "log.h"

static int op_ok(int op) { return op == GT_OP_N || op == GT_OP_T || op == GT_OP_C; }

/* Largest size the kernels index with 32-bit block coordinates. */
#define MAX_DIM 2147483647LL

static gt_status check_ld(int pos, const char *name, int64_t ld, int64_t rows, int64_t cols,
                          const char *rows_name) {
    int64_t need = rows > 1 ? rows : 1;
    if (ld < need)
        return gt_fail_arg(pos, "argument %d (%s) = %lld must be >= max(1, %s) = %lld", pos, name,
                           (long long)ld, rows_name, (long long)need);
    /* The last column starts at ld * (cols - 1) elements: keep byte offsets in int64. */
    if (cols > 1 && ld > INT64_MAX / 16 / cols)
        return gt_fail_arg(pos, "argument %d (%s) = %lld is too large for %lld columns", pos,
                           name, (long long)ld, (long long)cols);
    return GT_SUCCESS;
}

/* An element that straddles its natural alignment cannot be loaded by any kernel of the
 * family (nor by cudaMalloc'd memory): the pointer must be a multiple of the element. */
static gt_status check_ptr(int pos, const char *name, const void *p, int elem_size) {
    if (!p) return gt_fail_arg(pos, "argument %d (%s) is NULL", pos, name);
    if ((uintptr_t)p % (uintptr_t)elem_size != 0)
        return gt_fail_arg(pos, "argument %d (%s) = %p is not aligned to %d bytes (one element)",
                           pos, name, p, elem_size);
    return GT_SUCCESS;
}

const gt_ex_type gt_ex_types[GT_NDTYPES] = {
    [GT_DT_F32] = {GT_R_32F, GT_R_32F, GT_COMPUTE_32F},
    [GT_DT_F64] = {GT_R_64F, GT_R_64F, GT_COMPUTE_64F},
    [GT_DT_TF32] = {GT_R_32F, GT_R_32F, GT_COMPUTE_32F_FAST_TF32},
    [GT_DT_F16] = {GT_R_16F, GT_R_16F, GT_COMPUTE_32F},
    [GT_DT_F16_F32] = {GT_R_16F, GT_R_32F, GT_COMPUTE_32F},
    [GT_DT_BF16] = {GT_R_16BF, GT_R_16BF, GT_COMPUTE_32F},
    [GT_DT_BF16_F32] = {GT_R_16BF, GT_R_32F, GT_COMPUTE_32F},
    [GT_DT_F32_3XTF32] = {GT_R_32F, GT_R_32F, GT_COMPUTE_32F_EMULATED_3XTF32},
};

const gt_arg_pos gt_pos_blas = {.a = 7, .lda = 8, .b = 9, .ldb = 10, .c = 12, .ldc = 13};
const gt_arg_pos gt_pos_ex = {.a = 7, .lda = 9, .b = 10, .ldb = 12, .c = 14, .ldc = 16};

gt_status gt_call_check(const gt_arg_pos *pos, const gt_gemm *g, gt_action *action) {
    assert(g->dtype >= 0 && g->dtype < GT_NDTYPES);
    const int opA = g->opa, opB = g->opb;
    const int64_t m = g->m, n = g->n, k = g->k, lda = g->lda, ldb = g->ldb, ldc = g->ldc;
    const int in_size = gt_dtype_in_size(g->dtype), out_size = gt_dtype_out_size(g->dtype);
    gt_status s;
    if (!op_ok(opA)) return gt_fail_arg(1, "argument 1 (opA) = %d is not N, T or C", opA);
    if (!op_ok(opB)) return gt_fail_arg(2, "argument 2 (opB) = %d is not N, T or C", opB);
    const int64_t dims[3] = {m, n, k};
    static const char *names[3] = {"m", "n", "k"};
    for (int i = 0; i < 3; i++) {
        if (dims[i] < 0)
            return gt_fail_arg(3 + i, "argument %d (%s) = %lld is negative", 3 + i, names[i],
                               (long long)dims[i]);
        if (dims[i] > MAX_DIM)
            return gt_fail_arg(3 + i, "argument %d (%s) = %lld exceeds %lld", 3 + i, names[i],
                               (long long)dims[i], MAX_DIM);
    }
    int ta = opA != GT_OP_N, tb = opB != GT_OP_N;
    if ((s = check_ld(pos->lda, "lda", lda, ta ? k : m, ta ? m : k, ta ? "k" : "m")) != GT_SUCCESS)
        return s;
    if ((s = check_ld(pos->ldb, "ldb", ldb, tb ? n : k, tb ? k : n, tb ? "n" : "k")) != GT_SUCCESS)
        return s;
    if ((s = check_ld(pos->ldc, "ldc", ldc, m, n, "m")) != GT_SUCCESS) return s;

    if (m == 0 || n == 0) {
        *action = GT_ACT_NONE;
        return GT_SUCCESS;
    }
    int reads_ab = k > 0 && g->alpha != 0.0;
    if (reads_ab) {
        if ((s = check_ptr(pos->a, "A", g->A, in_size)) != GT_SUCCESS) return s;
        if ((s = check_ptr(pos->b, "B", g->B, in_size)) != GT_SUCCESS) return s;
    }
    if (!reads_ab && g->beta == 1.0) {
        *action = GT_ACT_NONE;
        return GT_SUCCESS;
    }
    if ((s = check_ptr(pos->c, "C", g->C, out_size)) != GT_SUCCESS) return s;
    *action = reads_ab ? GT_ACT_GEMM : GT_ACT_SCALE;
    return GT_SUCCESS;
}

void gt_call_key(const gt_devctx *dc, const gt_gemm *g, gt_key *key) {
    assert(g->dtype >= 0 && g->dtype < GT_NDTYPES);
    memset(key, 0, sizeof *key);
    memcpy(key->device, dc->dev.name, sizeof key->device);
    key->device[sizeof key->device - 1] = 0;
    key->cc_major = dc->dev.cc_major;
    key->cc_minor = dc->dev.cc_minor;
    key->sm_count = dc->dev.sm_count;
    key->dtype = g->dtype;
    key->opa = g->opa != GT_OP_N;
    key->opb = g->opb != GT_OP_N;
    key->m = g->m;
    key->n = g->n;
    key->k = g->k;
    key->beta0 = g->beta == 0.0;
    uintptr_t ptrs[3] = {(uintptr_t)g->A, (uintptr_t)g->B, (uintptr_t)g->C};
    int64_t lds[3] = {g->lda, g->ldb, g->ldc};
    /* A and B in elements of their type, C in its own (wider for f16_f32, bf16_f32). */
    int ab = gt_key_align_class(ptrs, 2, lds, 2, gt_dtype_in_size(g->dtype));
    int c = gt_key_align_class(ptrs + 2, 1, lds + 2, 1, gt_dtype_out_size(g->dtype));
    key->align = ab < c ? ab : c;
}
