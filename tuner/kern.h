/*
 * kern.h: the GEMM kernel of one configuration (kcfg.h): its program, loading (current
 * context) and launch. A gt_kern is a loaded module plus what its launch needs.
 */
#ifndef GT_KERN_H
#define GT_KERN_H

#include <cuda.h>

#include "devctx.h"
#include "gemm.h"
#include "gemmtune.h"
#include "kcfg.h"
#include "key.h"
#include "load.h"
#include "rtc.h"

typedef struct gt_kern {
    CUmodule module;
    CUfunction fn;
    CUfunction pack; /* WGMMA's copy into aligned memory (gt_pack), or NULL */
    gt_kcfg cfg;
    unsigned grid[3], block[3];
    int regs;        /* registers per thread, as ptxas allocated them */
    int local;       /* local memory per thread, bytes (spills; DMMA refuses any) */
    unsigned smem;   /* dynamic shared memory per block, bytes */
    size_t ws_bytes; /* split-K workspace the launch needs (0: none) */
    gt_key key;      /* the problem: its dtype is the scalars' type; WGMMA builds its TMA
                        descriptors from it per launch */
} gt_kern;

/* The program of (cfg, key): its family's source, the -D options of the configuration
 * and the problem (kcfg.h), and its text for the binary cache, the problem part of the
 * key, the options' revision (GT_KCFG_OPTIONS_REV) and the configuration, e.g.
 * "f32|NT|4096x4096x4096|a16|b0|o2|f0_128x64x8_w64x32_t8x4_s2_v4_k1_r1"; for a generic
 * configuration the class instead of the problem,
 * "f32|NT|a16|b0|o2|f0_128x64x8_w64x32_t8x4_s2_v4_k1_r1_g1", one program for every shape.
 * WGMMA compiles for sm_<arch>a only. */
void gt_kern_program(const gt_kcfg *cfg, const gt_key *key, gt_program *p);

/* The configurations (exact form, generic 0) whose generic kernel for key's class the
 * binary cache holds for arch: up to max into out (sorted by text, no duplicates); the
 * number found. */
int gt_kern_generic_have(const gt_key *key, int arch, gt_kcfg *out, int max);

/* Compiles (cfg, key) for a device of architecture arch (NVRTC only; the tuner's pool). */
gt_status gt_kern_compile(const gt_kcfg *cfg, const gt_key *key, int arch, gt_rtc_result *out);

/* Loads a cubin of (cfg, key) in the current context; fails (GT_LAUNCH_FAILED) when the
 * compiled kernel cannot launch with the configuration's block (too many registers), or
 * when it is a DMMA kernel that spills to local memory (kern.c says why). */
gt_status gt_kern_load(const void *image, const gt_kcfg *cfg, const gt_key *key, gt_kern *out);

/* (cfg, key) loaded through runtime/load.h: the binary cache's cubin when use_cache and
 * it loads and passes gt_kern_load's checks (counted as a cubin hit), else compiled,
 * loaded and stored; with use_cache GT_LOAD_HELD only the cubin, never compiled. */
gt_status gt_kern_get(const gt_kcfg *cfg, const gt_key *key, int arch, int use_cache,
                      gt_kern *out);

/* Launches k for call g (on g->stream; g's problem is k's key). alpha and beta are
 * converted to the key's data type. ws is the split-K workspace, at least k->ws_bytes (0
 * when the configuration does not split K), zeroed once when allocated and left zeroed by
 * every launch that completes; it must not be shared with a launch that may run at the
 * same time. */
gt_status gt_kern_launch(const gt_kern *k, const gt_gemm *g, CUdeviceptr ws);

/* Bytes at the start of k's workspace that must be zero when it launches: split-K's tile
 * counters (0 without split-K; operand copies need nothing zeroed). */
size_t gt_kern_ws_zero(const gt_kern *k);

/* gt_kern_launch with a workspace from runtime/work.c for g's stream, as gemm_tuned and
 * gemm_tuned_d run a plan. capturing: the stream is under graph capture (the caller has
 * asked, gt_cu_capturing; the workspace is then the graph's own or the application's). */
gt_status gt_kern_run(const gt_kern *k, const gt_gemm *g, int capturing);
void gt_kern_unload(gt_kern *k);


/* The limits a configuration is checked against on dc's device (kcfg.h). */
void gt_kern_limits(const gt_devctx *dc, gt_klimits *lim);

#endif
