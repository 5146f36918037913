/*
 * stage.c: narrow operands staged into aligned copies (stage.h).
 */
#include "stage.h"

#include <string.h>

#include "cu.h"
#include "log.h"
#include "work.h"

/* Rates the decision takes an H100-class device at, per microsecond: DRAM bytes (a copy
 * reads and writes, at about 2.5 TB/s together), and the arithmetic of each type's usual
 * unit (FFMA and f64 tensor cores about 60 TFLOP/s, tf32 400, 16-bit 700, 3xTF32 a third of
 * tf32). Only their ratios matter, and only to within a factor of two. */
#define COPY_BYTES_PER_US 2.5e6
#define DRAM_BYTES_PER_US 3.0e6
#define COPY_LAUNCH_US 3.0

static double flops_per_us(int dtype) {
    switch (dtype) {
    case GT_DT_TF32: return 400e6;
    case GT_DT_F32_3XTF32: return 130e6;
    case GT_DT_F16: case GT_DT_F16_F32: case GT_DT_BF16: case GT_DT_BF16_F32: return 700e6;
    default: return 60e6;
    }
}

/* The stored rows x cols of operand o (0 A, 1 B, 2 C) of g, its pointer and ld. */
static void operand(const gt_gemm *g, int o, int64_t *rows, int64_t *cols, uintptr_t *ptr,
                    int64_t *ld) {
    if (o == 0) {
        *rows = g->opa != GT_OP_N ? g->k : g->m, *cols = g->opa != GT_OP_N ? g->m : g->k;
        *ptr = (uintptr_t)g->A, *ld = g->lda;
    } else if (o == 1) {
        *rows = g->opb != GT_OP_N ? g->n : g->k, *cols = g->opb != GT_OP_N ? g->k : g->n;
        *ptr = (uintptr_t)g->B, *ld = g->ldb;
    } else {
        *rows = g->m, *cols = g->n, *ptr = (uintptr_t)g->C, *ld = g->ldc;
    }
}

/* What running in class `align` costs a product beyond its time in the 16-byte class, as a
 * share of that time: 1 / e - 1, with e the share of DRAM's rate that copies of that width
 * reach (tuner/space.c's model of MMA and DMMA copies: 8 bytes 0.8, 4 bytes 0.6, 2 bytes
 * 0.45, measured 0.42 for 2 bytes on the H100). Tensor-core kernels of the 2-byte class lose
 * more than that (a sixth of MMA's rate measured on 81 x 65536 x 4096 NT bf16), so the
 * rule errs on the side of not staging. */
static double narrow_loss(int align) {
    const double e = align >= 8 ? 0.8 : align >= 4 ? 0.6 : 0.45;
    return 1.0 / e - 1.0;
}

static size_t round256(size_t x) { return (x + 255) / 256 * 256; }

int gt_stage_plan(const gt_gemm *g, int key_align, gt_stage *st) {
    memset(st, 0, sizeof *st);
    if (key_align >= 16) return 0;
    const int es_in = gt_dtype_in_size(g->dtype), es_out = gt_dtype_out_size(g->dtype);
    double total = 0, moved = 0;
    int copies = 0;
    int *flag[3] = {&st->a, &st->b, &st->c};
    int64_t *new_ld[3] = {&st->lda, &st->ldb, &st->ldc};
    size_t *off[3] = {&st->off_a, &st->off_b, &st->off_c};
    for (int o = 0; o < 3; o++) {
        int64_t rows, cols, ld;
        uintptr_t ptr;
        operand(g, o, &rows, &cols, &ptr, &ld);
        const int es = o < 2 ? es_in : es_out;
        const double bytes = (double)rows * (double)cols * es;
        total += bytes;
        if (gt_key_align_class(&ptr, 1, &ld, 1, es) >= 16) continue;
        /* A narrow operand of one stored row is a vector whose elements are ld apart
         * (contiguous at ld 1): its copy would spread them 16 bytes apart and widen no
         * load, and the call (m = 1 against a weight) is GEMV's, which serves it in its
         * own class. */
        if (rows == 1) return memset(st, 0, sizeof *st), 0;
        /* A copy as stored, its rows padded to 16 bytes. */
        const int64_t per = 16 / es, nld = (rows + per - 1) / per * per;
        /* cuMemcpy2D's pitches are at most 2^31 - 1 bytes on every device we know. */
        if (ld > INT32_MAX / es || nld > INT32_MAX / es) return 0;
        *flag[o] = 1;
        *new_ld[o] = nld;
        *off[o] = st->bytes;
        st->bytes += round256((size_t)nld * (size_t)cols * (size_t)es);
        /* A copy reads and writes its bytes; C is copied back, and in as well when read. */
        const int times = o < 2 ? 1 : (g->beta != 0.0 ? 2 : 1);
        moved += 2.0 * bytes * times;
        copies += times;
    }
    if (!copies || st->bytes > GT_STAGE_MAX_BYTES) return memset(st, 0, sizeof *st), 0;
    const double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    double product_us = total / DRAM_BYTES_PER_US, compute_us = flops / flops_per_us(g->dtype);
    if (compute_us > product_us) product_us = compute_us;
    const double stage_us = moved / COPY_BYTES_PER_US + COPY_LAUNCH_US * copies;
    if (stage_us > 0.5 * narrow_loss(key_align) * product_us) return memset(st, 0, sizeof *st), 0;
    return 1;
}

void gt_stage_apply(const gt_stage *st, const gt_gemm *g, CUdeviceptr base, gt_gemm *out) {
    *out = *g;
    if (st->a) out->A = GT_PTR(base + st->off_a), out->lda = st->lda;
    if (st->b) out->B = GT_PTR(base + st->off_b), out->ldb = st->ldb;
    if (st->c) out->C = GT_PTR(base + st->off_c), out->ldc = st->ldc;
}

/* Operand o of `from` into operand o of `to` (the same rows x cols, other ld). */
static gt_status copy(const gt_gemm *from, const gt_gemm *to, int o) {
    int64_t rows, cols, ld_from, ld_to;
    uintptr_t src, dst;
    operand(from, o, &rows, &cols, &src, &ld_from);
    operand(to, o, &rows, &cols, &dst, &ld_to);
    const size_t es = (size_t)(o < 2 ? gt_dtype_in_size(from->dtype) : gt_dtype_out_size(from->dtype));
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = (CUdeviceptr)src;
    c.srcPitch = (size_t)ld_from * es;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = (CUdeviceptr)dst;
    c.dstPitch = (size_t)ld_to * es;
    c.WidthInBytes = (size_t)rows * es;
    c.Height = (size_t)cols;
    CUresult r = gt_cu.memcpy_2d_async(&c, (CUstream)from->stream);
    static const char *what[3] = {"cuMemcpy2DAsync (A into its aligned copy)",
                                  "cuMemcpy2DAsync (B into its aligned copy)",
                                  "cuMemcpy2DAsync (C to or from its aligned copy)"};
    return r == CUDA_SUCCESS ? GT_SUCCESS : gt_cu_fail(r, what[o]);
}

static gt_status stage_in(const gt_stage *st, const gt_gemm *g, const gt_gemm *staged) {
    gt_status s = GT_SUCCESS;
    if (st->a) s = copy(g, staged, 0);
    if (s == GT_SUCCESS && st->b) s = copy(g, staged, 1);
    if (s == GT_SUCCESS && st->c && g->beta != 0.0) s = copy(g, staged, 2);
    return s;
}

static gt_status stage_out(const gt_stage *st, const gt_gemm *g, const gt_gemm *staged) {
    if (!st->c) return GT_SUCCESS;
    /* The copy's direction: staged C into g's C. */
    gt_gemm back = *staged;
    back.stream = g->stream;
    return copy(&back, g, 2);
}

gt_status gt_stage_run(const gt_stage *st, const gt_kern *k, const gt_gemm *g, int capturing) {
    CUstream stream = (CUstream)g->stream;
    size_t ws = k->ws_bytes > GT_WORKSPACE_MIN_BYTES ? k->ws_bytes : GT_WORKSPACE_MIN_BYTES;
    ws = round256(ws);
    gt_work_lease lease;
    gt_status s = gt_work_get(stream, ws + st->bytes, gt_kern_ws_zero(k), capturing, &lease);
    if (s != GT_SUCCESS) return s;
    gt_gemm staged;
    gt_stage_apply(st, g, lease.ptr + ws, &staged);
    s = stage_in(st, g, &staged);
    if (s == GT_SUCCESS) s = gt_kern_launch(k, &staged, lease.ptr);
    if (s == GT_SUCCESS) s = stage_out(st, g, &staged);
    gt_work_done(&lease, stream);
    if (s == GT_SUCCESS) gt_stat_add(GT_STAT_STAGED, 1);
    return s;
}
