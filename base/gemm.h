/*
 * gemm.h: the arguments of one GEMM call, as one value.
 *
 * C = alpha * op(A) * op(B) + beta * C, column-major, device pointers. api.c fills a
 * gt_gemm from the caller's arguments; the argument checks (src/call.c), the problem key
 * (runtime/devctx.c), the launch (tuner/kern.c), the tuner's runs on its own buffers and
 * the verifier all take it as it is. Plain C without CUDA types: a pointer here is the
 * device address as the caller gave it, a stream the caller's CUstream (NULL: default).
 */
#ifndef GT_GEMM_H
#define GT_GEMM_H

#include <stdint.h>

typedef struct gt_gemm {
    int dtype;                /* gt_dtype (key.h): what A, B and C hold, how it computes */
    int opa, opb;             /* gt_op as given: N, T or C (C means T for real types) */
    int64_t m, n, k;
    double alpha, beta;       /* exact in double whatever the compute type */
    const void *A, *B;
    void *C;
    int64_t lda, ldb, ldc;
    void *stream;
} gt_gemm;

/* A pointer of a gt_gemm as the driver's device address, and back. */
#define GT_DPTR(p) ((unsigned long long)(uintptr_t)(p))
#define GT_PTR(d) ((void *)(uintptr_t)(d))

#endif
