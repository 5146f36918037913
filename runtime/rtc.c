/*
 * rtc.c: NVRTC compilation (rtc.h). Owns nothing beyond each call's program.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rtc.h"

#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_sources.h"
#include "log.h"

static pthread_once_t archs_once = PTHREAD_ONCE_INIT;
static int archs[64], narchs;
static char version[16] = "?";

static void load_archs(void) {
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
        snprintf(version, sizeof version, "%d.%d", major, minor);
    int n = 0;
    if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0 && n <= 64 &&
        nvrtcGetSupportedArchs(archs) == NVRTC_SUCCESS)
        narchs = n;
}

const char *gt_rtc_version(void) {
    pthread_once(&archs_once, load_archs);
    return version;
}

int gt_rtc_pick_arch(int arch) {
    pthread_once(&archs_once, load_archs);
    int best = 0;
    for (int i = 0; i < narchs; i++)
        if (archs[i] <= arch && archs[i] > best) best = archs[i];
    return best;
}

void gt_rtc_result_free(gt_rtc_result *r) {
    if (!r) return;
    free(r->image);
    free(r->log);
    r->image = NULL;
    r->log = NULL;
}

static gt_status compile(const char *source, const char *name, const char *const *options,
                         int noptions, int arch, int specific, gt_rtc_result *out) {
    memset(out, 0, sizeof *out);
    int use = gt_rtc_pick_arch(arch);
    if (!use || (specific && use != arch)) {
        snprintf(out->error, sizeof out->error, "NVRTC %s supports no architecture %s sm_%d",
                 gt_rtc_version(), specific ? "=" : "<=", arch);
        return gt_fail(GT_NOT_SUPPORTED, "%s", out->error);
    }
    char archopt[32];
    snprintf(archopt, sizeof archopt, "-arch=sm_%d%s", use, specific ? "a" : "");
    const char *opts[80];
    if (noptions > 76) return gt_fail(GT_INTERNAL, "too many NVRTC options (%d)", noptions);
    int n = 0;
    for (int i = 0; i < noptions; i++) opts[n++] = options[i];
    opts[n++] = archopt;
    opts[n++] = "-std=c++17";
    opts[n++] = "-default-device";

    nvrtcProgram prog;
    /* Every program may include the families' shared header and the element types. */
    const char *headers[] = {gt_src_common, gt_src_types};
    const char *header_names[] = {"common.cuh", "types.cuh"};
    nvrtcResult r = nvrtcCreateProgram(&prog, source, name, 2, headers, header_names);
    if (r != NVRTC_SUCCESS) {
        snprintf(out->error, sizeof out->error, "nvrtcCreateProgram: %s", nvrtcGetErrorString(r));
        return gt_fail(GT_NVRTC_ERROR, "%s", out->error);
    }
    r = nvrtcCompileProgram(prog, n, opts);
    /* Counted once done, so that a caller who reads the counters around its own call
     * does not count a compile that another thread (the background worker) has only
     * begun. */
    gt_stat_add(GT_STAT_COMPILES, 1);
    size_t logsize = 0;
    if (nvrtcGetProgramLogSize(prog, &logsize) == NVRTC_SUCCESS && logsize > 1) {
        out->log = malloc(logsize);
        if (out->log && nvrtcGetProgramLog(prog, out->log) != NVRTC_SUCCESS) out->log[0] = 0;
    }
    if (r != NVRTC_SUCCESS) {
        /* The first line of the log names the first error; keep it in the message. */
        char first[160] = "";
        if (out->log) {
            snprintf(first, sizeof first, "%s", out->log);
            char *nl = strchr(first, '\n');
            if (nl) *nl = 0;
        }
        snprintf(out->error, sizeof out->error, "%s: %s: %s", name, nvrtcGetErrorString(r), first);
        nvrtcDestroyProgram(&prog);
        return gt_fail(GT_NVRTC_ERROR, "%s", out->error);
    }
    size_t size = 0;
    r = nvrtcGetCUBINSize(prog, &size);
    if (r == NVRTC_SUCCESS && size > 0) {
        out->image = malloc(size);
        if (!out->image) {
            nvrtcDestroyProgram(&prog);
            return gt_fail(GT_OUT_OF_MEMORY, "cubin of %zu bytes", size);
        }
        r = nvrtcGetCUBIN(prog, out->image);
        out->size = size;
    }
    nvrtcDestroyProgram(&prog);
    if (r != NVRTC_SUCCESS || !out->image) {
        free(out->image);
        out->image = NULL;
        snprintf(out->error, sizeof out->error, "nvrtcGetCUBIN: %s", nvrtcGetErrorString(r));
        return gt_fail(GT_NVRTC_ERROR, "%s", out->error);
    }
    return GT_SUCCESS;
}

gt_status gt_rtc_compile(const char *source, const char *name, const char *const *options,
                         int noptions, int arch, gt_rtc_result *out) {
    return compile(source, name, options, noptions, arch, 0, out);
}

gt_status gt_rtc_compile_specific(const char *source, const char *name,
                                  const char *const *options, int noptions, int arch,
                                  gt_rtc_result *out) {
    return compile(source, name, options, noptions, arch, 1, out);
}

/* A trivial program compiled once per process, alone, before the tuner's pool starts:
 * NVRTC's first use in a process costs far more when 16 threads make it at once (a fresh
 * process's first 16 compiles all end near 1.5 s, and the budget then times one
 * candidate). Not counted as a compile: it builds no kernel of ours. */
static pthread_mutex_t warm_lock = PTHREAD_MUTEX_INITIALIZER;
static int warmed;
void gt_rtc_warm(int arch) {
    pthread_mutex_lock(&warm_lock);
    int use = warmed ? 0 : gt_rtc_pick_arch(arch);
    warmed = 1;
    if (use > 0) {
        char archopt[32];
        snprintf(archopt, sizeof archopt, "-arch=sm_%d", use);
        const char *opts[] = {archopt, "-std=c++17", "-default-device"};
        nvrtcProgram prog;
        if (nvrtcCreateProgram(&prog, "extern \"C\" __global__ void gt_warm(float *p) { *p = 1.0f; }\n",
                               "warm.cu", 0, NULL, NULL) == NVRTC_SUCCESS) {
            nvrtcCompileProgram(prog, 3, opts);
            nvrtcDestroyProgram(&prog);
        }
    }
    pthread_mutex_unlock(&warm_lock);
}
