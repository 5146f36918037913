/*
 * test_generic.c: shape-generic kernels (GT_GENERIC: M, N, K as arguments) on the GPU.
 *
 *  - Every family's generic kernel, on odd shapes in all four op pairs (and split-K where
 *    the family's candidates split), gives the same bits as the exact-shape kernel of the
 *    same configuration, and both are right against the test's float64 reference
 *    (prob.h's bounds).
 *  - A class's generic set built (gt_prebuild_class), a new process in mode cached runs
 *    shapes of that class that no cache holds with no NVRTC compile, right, and reports
 *    each first call's time.
 * Without a GPU every case says "skipped: no CUDA device".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_probe.h"
#include "kprogs.h"
#include "layers.h"
#include "measure.h"
#include "pool.h"
#include "prebuild.h"
#include "prob.h"
#include "space.h"
#include "tap.h"

GPU_TEST_STATE();

/* dt's family fam on an odd shape in every op pair (A's and C's leading dimensions padded),
 * without and with split-K: generic == exact, bit for bit, and right. */
static prob problem_of(int dt, int op, long long m, long long n, long long k) {
    prob p;
    prob_init(&p, dt, op & 1, op >> 1, m, n, k, 3, 0, 5, 0.75, op == 2 ? 0.0 : -0.5);
    return p;
}

static void family_case(int dt, int fam, long long m, long long n, long long k, int *ran) {
    /* The programs: per op pair, the family's best without and with split-K, exact and
     * generic (even entries exact, the next one its generic twin). */
    static kprogs ps;
    memset(&ps, 0, sizeof ps);
    int op_of[KPROGS_MAX];
    gt_devctx *dc = NULL;
    for (int op = 0; op < 4; op++) {
        prob p = problem_of(dt, op, m, n, k);
        gt_key key;
        TAP_CHECK(prob_key(&p, &dc, &key) == GT_SUCCESS, "key: %s", gt_last_error());
        prob_free(&p);
        for (int split = 0; split < 2 && dc; split++) {
            gt_kcfg exact;
            if (!kprogs_best(&key, dc, fam, split, 0, &exact)) continue;
            for (int g = 0; g < 2; g++) {
                ps.key[ps.n] = key, ps.cfg[ps.n] = exact, ps.cfg[ps.n].generic = g;
                op_of[ps.n++] = op;
            }
        }
    }
    if (!dc) return;
    ps.arch = dc->arch;
    kprogs_compile(&ps);
    for (int i = 0; i < ps.n; i += 2) {
        /* The same random problem for the pair (a fresh one per op pair would do too; this
         * keeps the reference computed once per pair). */
        prob p = problem_of(dt, op_of[i], m, n, k);
        gr_ref ref;
        prob_reference(&p, &ref);
        char text[96], name[200];
        gt_kcfg_format(&ps.cfg[i + 1], text, sizeof text);
        snprintf(name, sizeof name, "%s %lldx%lldx%lld:%c%c %s", gt_dtype_name(dt), m, n, k,
                 op_of[i] & 1 ? 'T' : 'N', op_of[i] >> 1 ? 'T' : 'N', text);
        const gt_gemm g = prob_gemm(&p, p.dC);
        if (kprogs_check(&ps, i, 1, &p, &g, &ref, name)) (*ran)++;
        gr_ref_free(&ref);
        prob_free(&p);
    }
    kprogs_free(&ps);
}

static int tc_ok(void) {
    gt_devctx *dc;
    return current_devctx(&dc) == GT_SUCCESS && dc->arch >= 80;
}

static void generic_simt_matches_exact(void) {
    NEED_GPU();
    int ran = 0;
    family_case(GT_DT_F32, GT_FAM_SIMT, 333, 257, 199, &ran);
    family_case(GT_DT_F64, GT_FAM_SIMT, 70, 45, 1031, &ran);
    TAP_CHECK(ran >= 8, "%d generic SIMT kernels checked", ran);
}

static void generic_dmma_matches_exact(void) {
    NEED_GPU();
    if (!tc_ok()) TAP_SKIP("skipped: device below sm_80");
    int ran = 0;
    family_case(GT_DT_F64, GT_FAM_DMMA, 301, 149, 517, &ran);
    TAP_CHECK(ran >= 4, "%d generic DMMA kernels checked", ran);
}

static void generic_mma_matches_exact(void) {
    NEED_GPU();
    if (!tc_ok()) TAP_SKIP("skipped: device below sm_80");
    int ran = 0;
    family_case(GT_DT_BF16, GT_FAM_MMA, 333, 258, 1030, &ran);
    family_case(GT_DT_TF32, GT_FAM_MMA, 97, 130, 77, &ran);
    TAP_CHECK(ran >= 8, "%d generic MMA kernels checked", ran);
}

static void generic_wgmma_matches_exact(void) {
    NEED_GPU();
    gt_devctx *dc;
    if (current_devctx(&dc) != GT_SUCCESS || dc->arch != 90) TAP_SKIP("skipped: device not sm_90");
    int ran = 0;
    family_case(GT_DT_BF16, GT_FAM_WGMMA, 1003, 517, 1030, &ran);
    family_case(GT_DT_TF32, GT_FAM_WGMMA, 333, 259, 515, &ran);
    TAP_CHECK(ran >= 8, "%d generic WGMMA kernels checked", ran);
}

/* Child: mode cached, f32 NN calls of shapes no cache holds: the held-out list's NN
 * shapes (bench/heldout.txt) whose M and K keep the 16-byte class that the parent built
 * (and whose float64 reference is quick on the host); per shape its first call's time,
 * then the counters. */
static int child_cached(void) {
    CUcontext ctx;
    int pushed;
    if (gt_cu_load() != GT_SUCCESS || gt_cu_enter(NULL, &ctx, &pushed) != GT_SUCCESS) return 3;
    enum { NSHAPES = 4 };
    static const long long shapes[NSHAPES][3] = {{6272, 128, 1152}, {1568, 256, 2304},
                                                 {392, 512, 4608}, {2000, 3000, 500}};
    int all_ok = 1;
    double worst_ms = 0;
    for (int i = 0; i < NSHAPES; i++) {
        prob p;
        prob_init(&p, GT_DT_F32, 0, 0, shapes[i][0], shapes[i][1], shapes[i][2], 0, 0, 0, 1.0, 0.0);
        gt_cu.ctx_synchronize();
        double t0 = gt_measure_now_s();
        gt_status st = prob_launch(&p, p.dC, NULL);
        double ms = (gt_measure_now_s() - t0) * 1e3;
        gt_cu.ctx_synchronize();
        prob_fetch_c(&p, p.dC);
        int ok = st == GT_SUCCESS && prob_error(&p, NULL) <= 1.0;
        printf("# %lldx%lldx%lld: first call %.2f ms (host), %s\n", shapes[i][0], shapes[i][1],
               shapes[i][2], ms, ok ? "right" : "WRONG");
        all_ok &= ok;
        if (ms > worst_ms) worst_ms = ms;
        prob_free(&p);
    }
    gt_stats s;
    gt_get_stats(&s);
    printf("compiles=%llu nearest=%llu tunes=%llu ok=%d worst_ms=%.3f\n",
           (unsigned long long)s.compiles, (unsigned long long)s.nearest,
           (unsigned long long)s.tunes, all_ok, worst_ms);
    return 0;
}

static void generic_set_serves_new_process(void) {
    NEED_GPU();
    /* The class of the child's calls, its set built into this process's cache. */
    prob p;
    prob_init(&p, GT_DT_F32, 0, 0, 64, 64, 64, 0, 0, 0, 1.0, 0.0);
    gt_devctx *dc;
    gt_key key;
    TAP_CHECK(prob_key(&p, &dc, &key) == GT_SUCCESS, "key");
    prob_free(&p);
    gt_layers_open();
    gt_prebuild_report rep;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    gt_status st = gt_prebuild_class(dc, &key, cpus > 1 ? (int)cpus : 1, &rep);
    TAP_CHECK(st == GT_SUCCESS && rep.configs > 0 && rep.failed == 0 &&
                  rep.built + rep.held + rep.refused == rep.configs,
              "prebuild: %s; %d configurations, %d built, %d held, %d refused, %d failed",
              gt_status_string(st), rep.configs, rep.built, rep.held, rep.refused, rep.failed);
    printf("# prebuild f32 NN a16 b1: %d configurations, %d built in %.1f s\n", rep.configs,
           rep.built, rep.seconds);
    /* A second build finds them all held. */
    gt_prebuild_report again;
    st = gt_prebuild_class(dc, &key, 2, &again);
    TAP_CHECK(st == GT_SUCCESS && again.held == rep.configs - rep.refused && again.built == 0,
              "second prebuild: %d held of %d, %d built", again.held, again.configs, again.built);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "GEMMTUNE_MODE=cached /proc/%d/exe --child-cached", (int)getpid());
    FILE *f = popen(cmd, "r");
    char line[256];
    unsigned long long compiles = 99, nearest = 0, tunes = 99;
    int ok = 0, got = 0;
    double worst = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#') fputs(line, stdout);
        else got = sscanf(line, "compiles=%llu nearest=%llu tunes=%llu ok=%d worst_ms=%lf", &compiles,
                          &nearest, &tunes, &ok, &worst);
    }
    if (f) pclose(f);
    TAP_CHECK(got == 5 && ok && compiles == 0 && tunes == 0 && nearest == 4,
              "child: read %d, right %d, compiles %llu, tunes %llu, selector %llu", got, ok,
              compiles, tunes, nearest);
    /* The target (< 5 ms) is the bench's to show; a test only catches a compile-sized stall. */
    TAP_CHECK(worst >= 0 && worst < 100, "worst first call %.2f ms", worst);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--child-cached") == 0) return child_cached();
    /* A cache of this run's own: the set built here is what the child finds. */
    char dir[] = "/tmp/gt_generic_XXXXXX", path[300];
    if (mkdtemp(dir)) {
        snprintf(path, sizeof path, "%s/cache.db", dir);
        setenv("GEMMTUNE_CACHE", path, 1);
    }
    gpu_state = gpu_probe(no_gpu_reason, sizeof no_gpu_reason, 1);
    TAP_RUN(generic_simt_matches_exact);
    TAP_RUN(generic_dmma_matches_exact);
    TAP_RUN(generic_mma_matches_exact);
    TAP_RUN(generic_wgmma_matches_exact);
    TAP_RUN(generic_set_serves_new_process);
    gt_release();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0) printf("# could not remove %s\n", dir);
    return tap_done();
}
