/*
 * kern.h: one GEMM kernel of the family: compile (NVRTC), load (current context),
 * launch. A gt_kern is a loaded module plus what its launch needs.
 */
#ifndef GT_KERN_H
#define GT_KERN_H

#include <cuda.h>

#include "gemmtune.h"
#include "kcfg.h"
#include "key.h"
#include "rtc.h"

typedef struct gt_kern {
    CUmodule module;
    CUfunction fn;
    gt_kcfg cfg;
    unsigned grid[3], block[3];
    int regs;        /* registers per thread, as ptxas allocated them */
} gt_kern;

/* Compiles the GEMM family for (cfg, key) for sm_<arch>. */
gt_status gt_kern_compile(const gt_kcfg *cfg, const gt_key *key, int arch, gt_rtc_result *out);

/* Loads a cubin in the current context; fails (GT_LAUNCH_FAILED) when the compiled
 * kernel cannot launch with the configuration's block (too many registers). */
gt_status gt_kern_load(const void *image, const gt_kcfg *cfg, const gt_key *key, gt_kern *out);

/* What a cubin is compiled from, as one line for the binary cache: the problem part of
 * the key that reaches the compiler and the configuration, e.g.
 * "f32|NT|4096x4096x4096|a16|b0|128x64x8_t8x4_v4". Returns the length needed. */
int gt_kern_program(const gt_kcfg *cfg, const gt_key *key, char *buf, size_t size);

/* Compile then load. */
gt_status gt_kern_build(const gt_kcfg *cfg, const gt_key *key, int arch, gt_kern *out);

gt_status gt_kern_launch(const gt_kern *k, CUstream stream, CUdeviceptr A, long long lda,
                         CUdeviceptr B, long long ldb, CUdeviceptr C, long long ldc, float alpha,
                         float beta);
void gt_kern_unload(gt_kern *k);

#endif
