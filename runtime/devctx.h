/*
 * devctx.h: what the library keeps per CUDA context: the device's identity and limits,
 * the helper kernels (kernel_src/aux.cu: scale, fill, compare, padding check and the test
 * aids per storage type, the
 * reference per data type of key.h, each loaded on first need through load.h) and a
 * private stream for tuning. Created on first use, kept until gt_release.
 */
#ifndef GT_DEVCTX_H
#define GT_DEVCTX_H

#include <cuda.h>
#include <pthread.h>

#include "cu.h"
#include "gemmtune.h"
#include "key.h"


typedef struct gt_devctx {
    CUcontext ctx;
    gt_cu_device dev;
    int arch;                 /* cc_major * 10 + cc_minor */
    /* Helper modules, one per storage type and one reference per data type, loaded on
     * first need (tuning, k == 0, verification); a function is valid once its module is. */
    CUmodule aux_st[GT_NSTYPES], aux_ref[GT_NDTYPES];
    /* Indexed by gt_stype (gt_scale_f16, ...) and by gt_dtype (gt_ref_bf16_f32, ...);
     * round and copy are test aids (tuner/tune.c's fault hooks). */
    CUfunction scale[GT_NSTYPES], fill[GT_NSTYPES], cmp[GT_NSTYPES], pad[GT_NSTYPES];
    CUfunction round[GT_NSTYPES], copy[GT_NSTYPES];
    CUfunction ref[GT_NDTYPES];
    CUstream tune_stream;     /* created on first need */
    /* Used by dispatch.c, one pair per context so that GPUs resolve and tune in
     * parallel. Order: resolve_lock before tune_lock. */
    pthread_mutex_t resolve_lock; /* finding or making a plan of this context */
    pthread_mutex_t tune_lock;    /* the tuner (tune stream, arena) of this context */
} gt_devctx;

/* The state of ctx, which must be current. */
gt_status gt_devctx_get(CUcontext ctx, gt_devctx **out);
/* Makes device `ordinal`'s primary context current on the calling thread (retaining
 * it, as the runtime API would) and returns its state: how `gemmtune tune --devices`
 * gives each worker thread its own GPU. */
gt_status gt_devctx_for_device(int ordinal, gt_devctx **out);
/* Loads the helper kernels a tuning or verification of data type dtype uses (scale, fill
 * and cmp of its storage types, its reference): NVRTC on first need per context.
 * gt_aux_scale and gt_aux_fill load their own. */
gt_status gt_devctx_aux(gt_devctx *dc, int dtype);
/* 1 when gt_devctx_aux(dc, dtype) has loaded them already (it would compile nothing). */
int gt_devctx_aux_ready(gt_devctx *dc, int dtype);

gt_status gt_devctx_tune_stream(gt_devctx *dc, CUstream *out);

/* GT_SUCCESS when the device runs data type dtype; else GT_NOT_SUPPORTED with a message
 * naming type and device: the tensor-core-only types (tf32, f16, bf16: no SIMT kernel)
 * need compute capability 8.0. gemm_tuned_ex and `gemmtune tune`/`run` ask it first. */
gt_status gt_devctx_supports(const gt_devctx *dc, int dtype);

/* C = beta * C (0 when beta0, without reading C) for an m x n matrix of stype (gt_stype)
 * elements, computed in double for f64 and in float otherwise (exact for a beta that came
 * from a float), rounded once to the storage type. */
gt_status gt_aux_scale(gt_devctx *dc, CUstream s, int stype, CUdeviceptr C, long long ldc,
                       long long m, long long n, double beta, int beta0);
/* count elements of stype: uniform [-1, 1) from seed, exact in the type (never all
 * zeros), or `value` (rounded to the type; NaN stays NaN) everywhere when constant. */
gt_status gt_aux_fill(gt_devctx *dc, CUstream s, int stype, CUdeviceptr p, long long count,
                      unsigned long long seed, int constant, double value);

/* Test aids (the verifier's mutation tests, tuner/tune.c): rounds count elements of stype
 * at p to `bits` significant bits, to nearest; copies the rectangle [r0, r1) x [c0, c1)
 * of src into dst, both m x n matrices of stype with leading dimension ld. */
gt_status gt_aux_round(gt_devctx *dc, CUstream s, int stype, CUdeviceptr p, long long count,
                       int bits);
gt_status gt_aux_copy(gt_devctx *dc, CUstream s, int stype, CUdeviceptr dst, CUdeviceptr src,
                      long long ld, long long r0, long long r1, long long c0, long long c1);

/* Releases every context's state (unloads, destroys). */
void gt_devctx_release_all(void);

#endif
