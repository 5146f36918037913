/*
 * gpu_probe.h: whether a test may use a GPU, told apart from a GPU that fails.
 *
 * "No GPU" is the driver library missing (GT_NO_DRIVER) or no device (GT_NO_DEVICE): GPU
 * cases are then skipped. Anything else that keeps a test from a GPU (a driver that loads
 * but fails, a context that cannot be entered) is a failure of every GPU case, never a
 * skip. GEMMTUNE_TEST_REQUIRE_GPU=1 (set by tools/gpu_run.sh) makes "no GPU" a failure too,
 * so a GPU run cannot pass by skipping.
 */
#ifndef GT_GPU_PROBE_H
#define GT_GPU_PROBE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "gemmtune.h"

enum { GPU_FAILED = -1, GPU_NONE = 0, GPU_READY = 1 };

/* Loads the driver and, when enter, makes the default context current (device 0's
 * primary context, as gemm_tuned would); without enter, counts the devices. GPU_READY,
 * or GPU_NONE / GPU_FAILED with the reason in why. */
static int gpu_probe(char *why, size_t size, int enter) {
    why[0] = 0;
    gt_status s = gt_cu_load();
    int state = GPU_READY;
    if (s == GT_NO_DRIVER || s == GT_NO_DEVICE) {
        state = GPU_NONE;
    } else if (s == GT_SUCCESS && enter) {
        CUcontext ctx;
        int pushed;
        if ((s = gt_cu_enter(NULL, &ctx, &pushed)) != GT_SUCCESS) state = GPU_FAILED;
    } else if (s == GT_SUCCESS) {
        int count = 0;
        CUresult r = gt_cu.device_get_count(&count);
        if (r != CUDA_SUCCESS || count < 1) s = gt_cu_fail(r, "cuDeviceGetCount"), state = GPU_FAILED;
    } else {
        state = GPU_FAILED;
    }
    if (state != GPU_READY) snprintf(why, size, "%s: %s", gt_status_string(s), gt_last_error());
    const char *req = getenv("GEMMTUNE_TEST_REQUIRE_GPU");
    if (state == GPU_NONE && req && strcmp(req, "1") == 0) {
        size_t n = strlen(why);
        snprintf(why + n, size - n, " (GEMMTUNE_TEST_REQUIRE_GPU=1)");
        state = GPU_FAILED;
    }
    return state;
}

/* The opening of a GPU case: "no GPU" (state GPU_NONE) skips, any other state but
 * GPU_READY fails with why; either way the case returns. state is read more than once. */
#define GPU_NEED(state, why)                                                         \
    do {                                                                            \
        if ((state) == GPU_NONE) TAP_SKIP("skipped: no CUDA device (%s)", (why));   \
        TAP_CHECK((state) == GPU_READY, "GPU set-up failed: %s", (why));            \
        if ((state) != GPU_READY) return;                                           \
    } while (0)

/* A GPU test program's probe result (its main sets gpu_state = gpu_probe(no_gpu_reason,
 * ...)) and NEED_GPU(), the opening of each of its GPU cases. */
#define GPU_TEST_STATE()          \
    static int gpu_state;         \
    static char no_gpu_reason[200]
#define NEED_GPU() GPU_NEED(gpu_state, no_gpu_reason)

#endif
