/*
 * stage.h: narrow operands staged into aligned copies.
 *
 * A call's alignment class is the narrowest of its three operands (base/key.h), and every
 * kernel of a class moves A, B and C in vectors of that width. When a small operand is
 * narrow (an activation of 77 rows, lda = 77 in bf16: 2 bytes) and a large one is 16-byte
 * aligned (a weight of 1 GB), the large one is then read 2 bytes at a time. Staging copies
 * the narrow operands, as stored, into the call's workspace with their leading dimensions
 * rounded up to 16 bytes (C back again after the product), so that the product runs in
 * the 16-byte class and is planned, tuned and cached under that key. It is done only where
 * the copies' estimated time is at most half of what the narrow class is estimated to cost
 * the product (stage.c's narrow_loss: 1.2 times the product's time for 2-byte classes,
 * 0.67 for 4-byte, 0.25 for 8-byte), so calls with a small narrow part gain, and calls
 * whose operands are all narrow and large are left as they are, as are calls whose narrow
 * operand is one stored row (a vector: m = 1, GEMV's). The copies are stream work
 * (cuMemcpy2DAsync), so staging runs under CUDA Graph capture as well.
 */
#ifndef GT_STAGE_H
#define GT_STAGE_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm.h"
#include "gemmtune.h"
#include "kern.h"
#include "key.h"

/* The copies' bytes, at most (workspace memory stays bounded). */
#define GT_STAGE_MAX_BYTES ((size_t)256 << 20)

/* Which operands are copied and where. An operand is stored rows x cols (rows
 * contiguous): A m x k (k x m transposed), B k x n (n x k), C m x n. */
typedef struct gt_stage {
    int a, b, c;               /* 1: that operand is copied */
    int64_t lda, ldb, ldc;     /* the copies' leading dimensions (16-byte multiples) */
    size_t off_a, off_b, off_c; /* byte offsets in the staging area, 256-byte aligned */
    size_t bytes;              /* the staging area's size */
} gt_stage;

/* 1 and *st when staging pays for call g (checked, whose key has class key_align), else
 * 0. Pure: no driver, no state. */
int gt_stage_plan(const gt_gemm *g, int key_align, gt_stage *st);

/* The call the kernel runs: g with each copied operand at base + its offset. */
void gt_stage_apply(const gt_stage *st, const gt_gemm *g, CUdeviceptr base, gt_gemm *out);

/* Runs call g through k (a kernel of the 16-byte class's key) on g's stream: one
 * workspace lease holds k's own workspace from its start (split-K's tile counters live
 * there, zero between calls) and the copies after it; the copies in, the product, C's
 * copy back. capturing: g's stream is under CUDA Graph capture. */
gt_status gt_stage_run(const gt_stage *st, const gt_kern *k, const gt_gemm *g, int capturing);

#endif
