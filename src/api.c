/*
 * api.c: gemm_tuned(), gemm_tuned_d() and the library-wide calls of gemmtune.h.
 *
 * The path of one call (DESIGN.md): check arguments (args.c) -> load the driver (cu.c)
 * -> enter the stream's context -> build the key (key.c) -> plan table (plan.c) ->
 * on a miss, dispatch (cache, tuner, fallback) -> launch. Owns nothing of its own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdlib.h>

#include "args.h"
#include "cu.h"
#include "devctx.h"
#include "dispatch.h"
#include "gemmtune.h"
#include "kern.h"
#include "key.h"
#include "log.h"
#include "plan.h"
#include "work.h"

/* The one implementation of gemm_tuned and gemm_tuned_d: dtype (gt_dtype) says what A,
 * B and C hold; alpha and beta arrive as double, which holds a float exactly, so the f32
 * path computes with the caller's values bit for bit. */
static gt_status gemm(int dtype, gt_op opA, gt_op opB, int64_t m, int64_t n, int64_t k,
                      double alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                      double beta, void *C, int64_t ldc, void *stream) {
    gt_error_clear();
    gt_action act;
    gt_status s = gt_args_check(opA, opB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                                gt_dtype_size(dtype), &act);
    if (s != GT_SUCCESS || act == GT_ACT_NONE) return s;
    if ((s = gt_cu_load()) != GT_SUCCESS) return s;
    CUcontext ctx;
    int pushed;
    if ((s = gt_cu_enter((CUstream)stream, &ctx, &pushed)) != GT_SUCCESS) return s;
    gt_devctx *dc;
    if ((s = gt_devctx_get(ctx, &dc)) != GT_SUCCESS) goto out;
    if (act == GT_ACT_SCALE) {
        s = gt_aux_scale(dc, (CUstream)stream, dtype, (CUdeviceptr)(uintptr_t)C, ldc, m, n, beta,
                         beta == 0.0);
        goto out;
    }
    gt_key key;
    gt_devctx_make_key(dc, dtype, opA != GT_OP_N, opB != GT_OP_N, m, n, k, A, lda, B, ldb, beta,
                       C, ldc, &key);

    const gt_plan *plan = gt_plan_find(ctx, &key);
    if (plan) {
        gt_stat_add(GT_STAT_PLAN_HITS, 1);
    } else if ((s = gt_dispatch(dc, &key, (CUstream)stream, &plan)) != GT_SUCCESS) {
        goto out;
    }
    gt_stat_add(GT_STAT_CALLS, 1);
    s = gt_kern_run(&plan->kern, (CUstream)stream, (CUdeviceptr)(uintptr_t)A, lda,
                    (CUdeviceptr)(uintptr_t)B, ldb, (CUdeviceptr)(uintptr_t)C, ldc, alpha, beta);
out:
    gt_cu_leave(pushed);
    return s;
}

gt_status gemm_tuned(gt_op opA, gt_op opB, int64_t m, int64_t n, int64_t k, float alpha,
                     const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                     float *C, int64_t ldc, void *stream) {
    return gemm(GT_DT_F32, opA, opB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

gt_status gemm_tuned_d(gt_op opA, gt_op opB, int64_t m, int64_t n, int64_t k, double alpha,
                       const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                       double *C, int64_t ldc, void *stream) {
    return gemm(GT_DT_F64, opA, opB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

gt_status gt_set_mode(gt_mode mode) {
    gt_error_clear();
    return gt_dispatch_set_mode((int)mode);
}

gt_mode gt_get_mode(void) { return (gt_mode)gt_dispatch_mode(); }

void gt_set_tune_async(int on) { gt_dispatch_set_async(on); }

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
