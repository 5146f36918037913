/*
 * load.h: a program's kernels, loaded: from the binary cache, else compiled by NVRTC and
 * then stored there. The one path by which the call path (tuner/kern.c for GEMM kernels),
 * the helper kernels (devctx.c) and the tuner (tuner/tune.c, which compiles on a pool and
 * loads on its own thread) obtain a cubin.
 *
 * The binary cache is the user cache's cubin table (cache/layers.h), keyed by kernel
 * source hash, the program's text, the architecture NVRTC targets, the NVRTC version and
 * the driver version; it is used only while the cache layers are open (never in mode
 * off). Owns nothing between calls.
 */
#ifndef GT_LOAD_H
#define GT_LOAD_H

#include <cuda.h>
#include <stddef.h>

#include "gemmtune.h"
#include "rtc.h"

#define GT_PROGRAM_MAX_OPTIONS 32

/* What a cubin is compiled from. */
typedef struct gt_program {
    char text[256];          /* one line naming it in the binary cache, e.g. the problem
                                part of the key and the configuration (tuner/kern.c) */
    const char *source;      /* CUDA C++ source (may include "common.cuh") */
    char name[96];           /* NVRTC's program name, as messages show it */
    char storage[GT_PROGRAM_MAX_OPTIONS][64];
    const char *options[GT_PROGRAM_MAX_OPTIONS];
    int noptions;
    int specific;            /* 1: for sm_<arch>a only (wgmma, setmaxnreg) */
} gt_program;

/* Compiles p for a device of architecture arch (major * 10 + minor) with NVRTC. */
gt_status gt_load_compile(const gt_program *p, int arch, gt_rtc_result *out);

/* p's cubin for arch: the binary cache's when use_cache and it holds one (*cached = 1),
 * else compiled (*cached = 0; not stored: gt_load_store does that for what is kept). */
gt_status gt_load_image(const gt_program *p, int arch, int use_cache, gt_rtc_result *out,
                        int *cached);

/* Calls fn(text, user) with the text of every program whose cubin for arch the binary
 * cache holds and whose text starts with prefix (a program may come twice: the user
 * cache and the in-memory one). None while the cache layers are closed. */
void gt_load_programs(const char *prefix, int arch, int (*fn)(const char *text, void *user),
                      void *user);

/* Stores p's cubin for arch in the binary cache (when it is open and writable). */
void gt_load_store(const gt_program *p, int arch, const void *image, size_t size);

/* Checks a freshly loaded module and takes what it needs from it; on failure it returns
 * the status (with gt_fail's message) and leaves the module to the caller. */
typedef gt_status (*gt_load_accept)(CUmodule mod, void *user);

/* image loaded in the current context and checked by accept (may be NULL); the module is
 * unloaded when accept refuses it. name is the program's, for messages. */
gt_status gt_load_accept_image(const void *image, const char *name, gt_load_accept accept,
                               void *user, CUmodule *out);

/* use_cache of gt_load_module: GT_LOAD_HELD takes the binary cache's cubin or fails,
 * never compiling (1 compiles where the cache holds none, 0 never reads it). */
#define GT_LOAD_HELD 2

/* p loaded in the current context: the binary cache's cubin when use_cache and it loads
 * and is accepted (*cached = 1), else compiled, loaded, accepted and then stored when
 * use_cache (*cached = 0). A stored cubin that does not load or is not accepted
 * (damaged, or from a driver that misreports its version) is replaced by a fresh
 * compile, with a warning. With use_cache GT_LOAD_HELD nothing is compiled: no cubin
 * held, or one that does not load, is GT_NO_CANDIDATE. accept may be NULL. On success
 * the module belongs to the caller (and to what accept took from it). cached may be
 * NULL. */
gt_status gt_load_module(const gt_program *p, int arch, int use_cache, gt_load_accept accept,
                         void *user, CUmodule *out, int *cached);

#endif
