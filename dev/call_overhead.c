/*
 * call_overhead.c: the host time of one gemm_tuned call on a shape whose plan is in the
 * table (the hot path: capture check, plan lookup, launch), measured on the CPU clock over
 * many calls. The GPU never holds more than a few launches: the stream is synchronized
 * every BATCH calls and that wait is not counted. Compare two builds of the library (e.g.
 * before and after a change to the call path) on the same machine.
 *
 * Build (from the repository root, after tools/build.sh or a meson build in DIR):
 *   cc -std=c11 -O2 -Iinclude -Ibase -Iruntime dev/call_overhead.c DIR/libgemmtune.a \
 *      -L/usr/local/cuda/lib64 -lnvrtc -lsqlite3 -ldl -lpthread -lm -o /tmp/call_overhead
 * Usage: /tmp/call_overhead [CALLS]   (GPU; prints the median of 9 runs in microseconds)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cu.h"
#include "gemmtune.h"

enum { BATCH = 64, RUNS = 9 };

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    long calls = argc > 1 ? atol(argv[1]) : 20000;
    CUcontext ctx;
    int pushed;
    if (gt_cu_load() != GT_SUCCESS || gt_cu_enter(NULL, &ctx, &pushed) != GT_SUCCESS) {
        fprintf(stderr, "no GPU: %s\n", gt_last_error());
        return 1;
    }
    const int n = 16;
    CUdeviceptr a, b, c;
    CUstream s;
    if (gt_cu.mem_alloc(&a, n * n * 4) || gt_cu.mem_alloc(&b, n * n * 4) ||
        gt_cu.mem_alloc(&c, n * n * 4) || gt_cu.stream_create(&s, CU_STREAM_NON_BLOCKING)) {
        fprintf(stderr, "allocation failed\n");
        return 1;
    }
    gt_cu.memset_d8_async(a, 0, n * n * 4, s);
    gt_cu.memset_d8_async(b, 0, n * n * 4, s);
    gt_set_mode(GT_MODE_OFF); /* the default kernel: no cache, no tuning, one plan */
    float *A = (float *)(uintptr_t)a, *B = (float *)(uintptr_t)b, *C = (float *)(uintptr_t)c;
    if (gemm_tuned(GT_OP_N, GT_OP_N, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n, s) != GT_SUCCESS) {
        fprintf(stderr, "gemm_tuned: %s\n", gt_last_error());
        return 1;
    }
    gt_cu.stream_synchronize(s);
    double per[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double host = 0;
        for (long i = 0; i < calls; i += BATCH) {
            double t0 = now_s();
            for (int j = 0; j < BATCH; j++)
                gemm_tuned(GT_OP_N, GT_OP_N, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n, s);
            host += now_s() - t0;
            gt_cu.stream_synchronize(s);
        }
        per[r] = 1e6 * host / (double)calls;
    }
    qsort(per, RUNS, sizeof per[0], cmp);
    printf("gemm_tuned host time per call (16x16x16 f32, plan in the table): median %.3f us, "
           "min %.3f, max %.3f over %d runs of %ld calls\n",
           per[RUNS / 2], per[0], per[RUNS - 1], RUNS, calls);
    gt_release();
    return 0;
}
