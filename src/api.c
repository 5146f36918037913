/*
 * api.c: gemm_tuned(), gemm_tuned_d(), gemm_tuned_ex() and the library-wide calls of
 * gemmtune.h.
 *
 * The path of one call (docs/DESIGN.md): the arguments as one gt_gemm -> check them
 * (call.c) -> load the driver (runtime/cu.c) -> enter the stream's context -> the
 * problem key (call.c), in the 16-byte class where narrow operands are staged (stage.c)
 * -> plan table (plan.c) -> on a miss, dispatch (cache, tuner, default kernel) -> launch
 * (tuner/kern.c; stage.c around it when staged). Owns nothing of its own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdlib.h>

#include "call.h"
#include "cu.h"
#include "devctx.h"
#include "dispatch.h"
#include "gemmtune.h"
#include "kern.h"
#include "key.h"
#include "log.h"
#include "plan.h"
#include "stage.h"
#include "work.h"
#include "gemm.h"

/* The one implementation of every entry: g->dtype says what A, B and C hold and how to
 * compute; alpha and beta arrive as double, which holds a float exactly, so the
 * f32-compute paths compute with the caller's values bit for bit. pos gives the
 * positions of the checked arguments in the caller's argument list. */
static gt_status gemm(const gt_arg_pos *pos, const gt_gemm *g) {
    gt_action act;
    gt_status s = gt_call_check(pos, g, &act);
    if (s != GT_SUCCESS || act == GT_ACT_NONE) return s;
    if ((s = gt_cu_load()) != GT_SUCCESS) return s;
    CUstream stream = (CUstream)g->stream;
    CUcontext ctx;
    int pushed;
    /* The library's own non-stream calls (a context's first set-up, loading a kernel)
     * must never invalidate an application's graph capture, of any mode, in any thread. */
    CUstreamCaptureMode capture_mode = gt_cu_relaxed_begin();
    if ((s = gt_cu_enter(stream, &ctx, &pushed)) != GT_SUCCESS) {
        gt_cu_relaxed_end(capture_mode);
        return s;
    }
    gt_devctx *dc;
    if ((s = gt_devctx_get(ctx, &dc)) != GT_SUCCESS) goto out;
    if ((s = gt_devctx_supports(dc, g->dtype)) != GT_SUCCESS) goto out;
    if (act == GT_ACT_SCALE) {
        s = gt_aux_scale(dc, stream, gt_dtype_out(g->dtype), GT_DPTR(g->C), g->ldc, g->m, g->n,
                         g->beta, g->beta == 0.0);
        goto out;
    }
    gt_key key;
    gt_call_key(dc, g, &key);
    /* Narrow small operands copied, so that the product runs in the 16-byte class. */
    gt_stage st;
    const int staging = gt_stage_plan(g, key.align, &st);
    if (staging) key.align = 16;

    /* Under graph capture nothing but stream work may happen (gt_dispatch, gt_kern_run). */
    int capturing;
    if ((s = gt_cu_capturing(stream, &capturing)) != GT_SUCCESS) goto out;
    if (capturing) gt_stat_add(GT_STAT_CAPTURED, 1);
    const gt_plan *plan = gt_plan_find(ctx, &key);
    if (plan && !(plan->retune && !capturing)) {
        gt_stat_add(GT_STAT_PLAN_HITS, 1);
    } else if ((s = gt_dispatch(dc, &key, stream, capturing, &plan)) != GT_SUCCESS) {
        goto out;
    }
    gt_stat_add(GT_STAT_CALLS, 1);
    s = staging ? gt_stage_run(&st, &plan->kern, g, capturing)
                : gt_kern_run(&plan->kern, g, capturing);
out:
    gt_cu_leave(pushed);
    gt_cu_relaxed_end(capture_mode);
    return s;
}

gt_status gemm_tuned(gt_op opA, gt_op opB, int64_t m, int64_t n, int64_t k, float alpha,
                     const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                     float *C, int64_t ldc, void *stream) {
    gt_error_clear();
    const gt_gemm g = {GT_DT_F32, opA, opB, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, stream};
    return gemm(&gt_pos_blas, &g);
}

gt_status gemm_tuned_d(gt_op opA, gt_op opB, int64_t m, int64_t n, int64_t k, double alpha,
                       const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                       double *C, int64_t ldc, void *stream) {
    gt_error_clear();
    const gt_gemm g = {GT_DT_F64, opA, opB, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, stream};
    return gemm(&gt_pos_blas, &g);
}

static const char *datatype_name(int t) {
    static const char *names[] = {"32F", "64F", "16F", "16BF"};
    return t >= 0 && t < 4 ? names[t] : "?";
}

static const char *compute_name(int t) {
    static const char *names[] = {"COMPUTE_32F", "COMPUTE_64F", "COMPUTE_32F_FAST_TF32",
                                  "COMPUTE_32F_EMULATED_3XTF32"};
    return t >= 0 && t < 4 ? names[t] : "?";
}

gt_status gemm_tuned_ex(gt_op opA, gt_op opB, int64_t m, int64_t n, int64_t k,
                        const void *alpha, const void *A, gt_datatype Atype, int64_t lda,
                        const void *B, gt_datatype Btype, int64_t ldb, const void *beta, void *C,
                        gt_datatype Ctype, int64_t ldc, gt_compute_type computeType,
                        void *stream) {
    gt_error_clear();
    /* Enum values first, in position order (a value outside its enum is bad input, like a
     * bad op); then the combination, which may be valid but not supported. */
    const int types[3] = {(int)Atype, (int)Btype, (int)Ctype}, tpos[3] = {8, 11, 15};
    static const char *tnames[3] = {"Atype", "Btype", "Ctype"};
    for (int i = 0; i < 3; i++)
        if (types[i] < GT_R_32F || types[i] > GT_R_16BF)
            return gt_fail_arg(tpos[i], "argument %d (%s) = %d is not a gt_datatype", tpos[i],
                               tnames[i], types[i]);
    if ((int)computeType < GT_COMPUTE_32F || (int)computeType > GT_COMPUTE_32F_EMULATED_3XTF32)
        return gt_fail_arg(17, "argument 17 (computeType) = %d is not a gt_compute_type",
                           (int)computeType);
    if (!alpha) return gt_fail_arg(6, "argument 6 (alpha) is NULL");
    if (!beta) return gt_fail_arg(13, "argument 13 (beta) is NULL");
    int dtype = -1;
    for (int t = 0; t < GT_NDTYPES; t++)
        if (gt_ex_types[t].ab == Atype && gt_ex_types[t].ab == Btype && gt_ex_types[t].c == Ctype &&
            gt_ex_types[t].compute == computeType)
            dtype = t;
    if (dtype < 0)
        return gt_fail(GT_NOT_SUPPORTED,
                       "types A %s, B %s, C %s with %s are not a supported combination (see "
                       "gemm_tuned_ex in gemmtune.h)",
                       datatype_name(Atype), datatype_name(Btype), datatype_name(Ctype),
                       compute_name(computeType));
    double a, b;
    if (computeType == GT_COMPUTE_64F) {
        a = *(const double *)alpha;
        b = *(const double *)beta;
    } else {
        a = *(const float *)alpha;
        b = *(const float *)beta;
    }
    const gt_gemm g = {dtype, opA, opB, m, n, k, a, b, A, B, C, lda, ldb, ldc, stream};
    return gemm(&gt_pos_ex, &g);
}

gt_status gt_set_workspace(void *stream, void *ptr, size_t bytes) {
    gt_error_clear();
    if (ptr && (uintptr_t)ptr % 256 != 0)
        return gt_fail_arg(2, "argument 2 (ptr) = %p is not aligned to 256 bytes", ptr);
    if (ptr && bytes < GT_WORKSPACE_MIN_BYTES)
        return gt_fail_arg(3, "argument 3 (bytes) = %zu is below GT_WORKSPACE_MIN_BYTES (%d)",
                           bytes, GT_WORKSPACE_MIN_BYTES);
    gt_status s = gt_cu_load();
    if (s != GT_SUCCESS) return s;
    CUcontext ctx;
    int pushed, capturing = 0;
    if ((s = gt_cu_enter((CUstream)stream, &ctx, &pushed)) != GT_SUCCESS) return s;
    if ((s = gt_cu_capturing((CUstream)stream, &capturing)) == GT_SUCCESS && capturing)
        s = gt_fail_arg(1, "argument 1 (stream) is under graph capture: set its workspace "
                           "before the capture");
    if (s == GT_SUCCESS) s = gt_work_set((CUstream)stream, GT_DPTR(ptr), ptr ? bytes : 0);
    gt_cu_leave(pushed);
    return s;
}

gt_status gt_set_mode(gt_mode mode) {
    gt_error_clear();
    return gt_dispatch_set_mode((int)mode);
}

gt_mode gt_get_mode(void) { return (gt_mode)gt_dispatch_mode(); }

void gt_set_tune_async(int on) { gt_dispatch_set_async(on); }

void gt_set_specialize(int on) { gt_dispatch_set_specialize(on); }

void gt_wait_background(void) { gt_dispatch_wait_background(); }

void gt_release(void) {
    /* The background worker first: it uses plans and contexts. */
    gt_dispatch_release();
    if (gt_cu_load() != GT_SUCCESS) {
        gt_error_clear();
        return;
    }
    gt_plan_clear();
    gt_work_release_all();
    gt_devctx_release_all();
}
