/*
 * first_call_gpu.c: on a GPU. Where a process's first call in mode cached spends its time,
 * against the calls after it. The parent builds f32 NN a16's node set (gt_prebuild_class,
 * as test_generic does) into the cache on GEMMTUNE_CACHE and starts itself again as the
 * child; the child times, in a new process, each one-time step of a first call on its own
 * (the device context's state, the cache layers' opening, the class's rows and the model's
 * correction from one walk of the layers' timings, the held list, the choice), then whole gemm_tuned calls of four shapes of
 * that class that no cache holds (the first one now without the steps above), then the
 * four again in a second child that makes the calls without the steps first.
 * Before the children the parent closes the cache (gt_dispatch_release), as the gemmtune
 * prebuild that made the set exits: each child is then the file's only process, as an
 * application's ranks are after a prebuild. FCG_CHILDREN (default 3) children run, in
 * the order calls, steps, calls, warm, calls, steps, warm, ...; a warm child loads and
 * runs an unrelated module (an empty kernel from PTX) first, so that its first call
 * does not pay the process's first module load and launch, which any CUDA library
 * pays. Children log at GEMMTUNE_LOG's level (info gives each first call's steps).
 *
 * Build (from the repository root, after tools/build.sh or tools/gpu_build.sh, B its
 * build folder):
 *        cc -std=c11 -Ibase -Ituner -Itests -Iinclude -Icache -Iruntime -Isrc -I$B \
 *            -I/usr/local/cuda/include dev/first_call_gpu.c $B/libgemmtune.a \
 *            -L/usr/local/cuda/lib64 -lnvrtc -lsqlite3 -ldl -lpthread -lm -o /tmp/first_call_gpu
 * Usage: GEMMTUNE_CACHE=/tmp/fcg.db /tmp/first_call_gpu
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch.h"
#include "kern.h"
#include "layers.h"
#include "measure.h"
#include "modelfix.h"
#include "prebuild.h"
#include "prob.h"
#include "select.h"

#define HAVE_MAX 1024

static const long long shapes[4][3] = {{6272, 128, 1152}, {1568, 256, 2304}, {392, 512, 4608}, {2000, 3000, 500}};

static double ms_since(double t0) { return (gt_measure_now_s() - t0) * 1e3; }

/* An empty kernel: loading and running it warms the driver's module loader. */
static const char empty_ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                                ".visible .entry empty_kernel()\n{\nret;\n}\n";

static int warm_loader(void) {
    CUmodule mod;
    CUfunction f;
    const double t = gt_measure_now_s();
    if (gt_cu.module_load_data(&mod, empty_ptx) != CUDA_SUCCESS ||
        gt_cu.module_get_function(&f, mod, "empty_kernel") != CUDA_SUCCESS ||
        gt_cu.launch_kernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS ||
        gt_cu.ctx_synchronize() != CUDA_SUCCESS)
        return -1;
    printf("  an unrelated module loaded and run first: %.2f ms\n", ms_since(t));
    return 0;
}

static int child(int steps, int warm) {
    CUcontext ctx;
    int pushed;
    if (gt_cu_load() != GT_SUCCESS || gt_cu_enter(NULL, &ctx, &pushed) != GT_SUCCESS) return 3;
    if (warm && warm_loader() != 0) return 4;
    prob p[4];
    for (int i = 0; i < 4; i++)
        prob_init(&p[i], GT_DT_F32, 0, 0, shapes[i][0], shapes[i][1], shapes[i][2], 0, 0, 0, 1.0, 0.0);
    gt_cu.ctx_synchronize();
    if (steps) {
        double t = gt_measure_now_s();
        gt_devctx *dc;
        gt_key key;
        gt_status s = prob_key(&p[0], &dc, &key);
        printf("  devctx and key %.2f ms (%s)\n", ms_since(t), gt_status_string(s));
        t = gt_measure_now_s();
        gt_layers_open();
        printf("  layers open %.2f ms (%d layers)\n", ms_since(t), gt_layers_count());
        gt_klimits lim;
        gt_kern_limits(dc, &lim);
        t = gt_measure_now_s();
        gt_select_row *rows = NULL;
        gt_modelfix fix;
        const int nrows = gt_dispatch_class_data(&key, &lim, &rows, &fix);
        printf("  class rows and correction %.2f ms (%d rows, %d shapes fitted)\n", ms_since(t),
               nrows, fix.shapes);
        t = gt_measure_now_s();
        gt_kcfg *have = malloc(sizeof *have * HAVE_MAX);
        const int nhave = have ? gt_kern_generic_have(&key, dc->arch, have, HAVE_MAX) : 0;
        printf("  held list %.2f ms (%d)\n", ms_since(t), nhave);
        t = gt_measure_now_s();
        gt_kcfg cfg;
        gt_select_info info;
        int found = gt_select_have(&key, &lim, 0, &fix, rows, nrows, have, nhave, &cfg, &info) == 0;
        printf("  choice %.2f ms (%s)\n", ms_since(t), found ? "found" : "none");
        free(rows), free(have);
    }
    for (int i = 0; i < 4; i++) {
        gt_cu.ctx_synchronize();
        const double t = gt_measure_now_s();
        gt_status st = prob_launch(&p[i], p[i].dC, NULL);
        const double host = ms_since(t);
        gt_cu.ctx_synchronize();
        printf("  %lldx%lldx%lld: call %.2f ms on the host, %.2f ms to its end (%s)\n", shapes[i][0],
               shapes[i][1], shapes[i][2], host, ms_since(t), gt_status_string(st));
    }
    gt_stats s;
    gt_get_stats(&s);
    printf("  compiles %llu\n", (unsigned long long)s.compiles);
    for (int i = 0; i < 4; i++) prob_free(&p[i]);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1) return child(strcmp(argv[1], "--steps") == 0, strcmp(argv[1], "--warm") == 0);
    CUcontext ctx;
    int pushed;
    if (gt_cu_load() != GT_SUCCESS || gt_cu_enter(NULL, &ctx, &pushed) != GT_SUCCESS)
        return fprintf(stderr, "no GPU: %s\n", gt_last_error()), 1;
    prob p;
    prob_init(&p, GT_DT_F32, 0, 0, 64, 64, 64, 0, 0, 0, 1.0, 0.0);
    gt_devctx *dc;
    gt_key key;
    if (prob_key(&p, &dc, &key) != GT_SUCCESS) return fprintf(stderr, "key: %s\n", gt_last_error()), 1;
    prob_free(&p);
    gt_layers_open();
    gt_prebuild_report rep;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (gt_prebuild_class(dc, &key, cpus > 1 ? (int)cpus : 1, &rep) != GT_SUCCESS)
        return fprintf(stderr, "prebuild: %s\n", gt_last_error()), 1;
    printf("prebuild f32 NN a16 b1: %d configurations, %d built, %d held\n", rep.configs, rep.built,
           rep.held);
    fflush(stdout);
    gt_dispatch_release();
    char cmd[1024];
    const char *nc = getenv("FCG_CHILDREN");
    const int children = nc && atoi(nc) > 0 ? atoi(nc) : 3;
    for (int r = 0; r < children; r++) {
        const char *how = r % 4 == 1 ? "--steps" : r % 4 == 3 ? "--warm" : "--calls";
        printf("child %d, %s:\n", r + 1, how + 2);
        fflush(stdout);
        snprintf(cmd, sizeof cmd, "GEMMTUNE_MODE=cached /proc/%d/exe %s", (int)getpid(), how);
        if (system(cmd) != 0) fprintf(stderr, "child %d failed\n", r + 1);
    }
    return 0;
}
