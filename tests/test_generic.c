/*
 * test_generic.c: shape-generic kernels (GT_GENERIC: M, N, K as arguments) on the GPU.
 *
 *  - Every family's generic kernel, on odd shapes in all four op pairs (and split-K where
 *    the family's candidates split), gives the same bits as the exact-shape kernel of the
 *    same configuration, and both are right against the test's float64 reference
 *    (prob.h's bounds).
 *  - A class's generic set built (gt_prebuild_class), a new process in mode cached runs
 *    shapes of that class that no cache holds with no NVRTC compile, right, and reports
 *    each first call's time. With specialization on, the background thread then compiles
 *    each shape's exact-shape twin, which takes over with the same bits; a later process
 *    loads those twins at its first calls, compiling nothing. Twins that give other bits
 *    (a fault injected) are refused and never stored.
 *  - Configurations the held-out run met: exact and generic each deterministic and equal.
 * Without a GPU every case says "skipped: no CUDA device".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch.h"
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

/* Configurations that a run of the held-out list (bench/heldout.txt) ran as generic
 * kernels in mode cached, each on its shape, and DMMA tiles whose exact kernels computed
 * wrong results when a fragment load was left in flight across the K step's barrier
 * (gemm_dmma.cu's COVER_FIRST; dev/dmma_sweep.py found them, dev/dmma_swap.sh the cause):
 * the generic kernel right, and the exact twin giving its bits, each the same run twice. */
static void twins_of_heldout(void) {
    NEED_GPU();
    if (!tc_ok()) TAP_SKIP("skipped: device below sm_80");
    /* pad: A's and C's leading dimensions past M, as the call's staged copies have them
     * (src/stage.h), so that the key is the 16-byte class the configuration is for. */
    static const struct {
        int dt, op, pad;
        long long m, n, k;
        const char *cfg;
    } cases[] = {
        {GT_DT_F64, 2, 1, 7, 15360, 5120, "f1_16x64x32_w8x16_t1x2_s4_v2_k2_r1"},
        {GT_DT_F64, 2, 1, 33, 2000, 3000, "f1_48x64x32_w24x16_t3x2_s3_v2_k1_r1"},
        {GT_DT_F64, 0, 0, 2048, 2048, 1024, "f1_32x32x32_w8x16_t1x2_s3_v2_k1_r1"},
        {GT_DT_F32, 0, 0, 1568, 256, 2304, "f0_32x256x16_w32x64_t8x8_s2_v4_k8_r1"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        prob p;
        prob_init(&p, cases[c].dt, cases[c].op & 1, cases[c].op >> 1, cases[c].m, cases[c].n,
                  cases[c].k, cases[c].pad, 0, cases[c].pad, 1.0, 0.0);
        gt_devctx *dc = NULL;
        static kprogs ps;
        memset(&ps, 0, sizeof ps);
        TAP_CHECK(prob_key(&p, &dc, &ps.key[0]) == GT_SUCCESS, "key: %s", gt_last_error());
        char why[300] = "";
        int parsed = gt_kcfg_parse(cases[c].cfg, &ps.cfg[0], why, sizeof why) == 0;
        TAP_CHECK(parsed, "%s: %s", cases[c].cfg, why);
        if (!dc || !parsed) {
            prob_free(&p);
            continue;
        }
        ps.key[1] = ps.key[0], ps.cfg[1] = ps.cfg[0], ps.cfg[1].generic = 1, ps.n = 2;
        ps.arch = dc->arch;
        kprogs_compile(&ps);
        gr_ref ref;
        prob_reference(&p, &ref);
        char name[200];
        snprintf(name, sizeof name, "%s %lldx%lldx%lld:%c%c %s", gt_dtype_name(cases[c].dt),
                 cases[c].m, cases[c].n, cases[c].k, cases[c].op & 1 ? 'T' : 'N',
                 cases[c].op >> 1 ? 'T' : 'N', cases[c].cfg);
        const gt_gemm g = prob_gemm(&p, p.dC);
        /* Each kernel twice: the same bits each time. */
        for (int i = 0; i < 2; i++) {
            void *first = malloc(c_bytes(&p));
            int ran = first && kprogs_run(&ps, i, &p, &g, why, sizeof why) == 0;
            if (ran) memcpy(first, p.C, c_bytes(&p));
            ran = ran && kprogs_run(&ps, i, &p, &g, why, sizeof why) == 0;
            TAP_CHECK(ran && memcmp(first, p.C, c_bytes(&p)) == 0, "%s, %s twice: %s", name,
                      i ? "generic" : "exact", ran ? "other bits" : why);
            free(first);
        }
        kprogs_check(&ps, 0, 1, &p, &g, &ref, name);
        gr_ref_free(&ref);
        kprogs_free(&ps);
        prob_free(&p);
    }
}

/* Child: mode cached, f32 NN calls of shapes no cache holds: the held-out list's NN
 * shapes (bench/heldout.txt) whose M and K keep the 16-byte class that the parent built
 * (and whose float64 reference is quick on the host). Per shape its first call's time and
 * compiles (the background thread idle before it, so that its work for earlier shapes is
 * not counted); then, once the background thread is idle, a second call, which must give
 * the first call's bits (the exact-shape twin, where it took over, sums in the same
 * order). Then the counters. */
static int child_cached(void) {
    CUcontext ctx;
    int pushed;
    if (gt_cu_load() != GT_SUCCESS || gt_cu_enter(NULL, &ctx, &pushed) != GT_SUCCESS) return 3;
    enum { NSHAPES = 4 };
    static const long long shapes[NSHAPES][3] = {{6272, 128, 1152}, {1568, 256, 2304},
                                                 {392, 512, 4608}, {2000, 3000, 500}};
    int all_ok = 1, same = 1;
    unsigned long long first_compiles = 0;
    double worst_ms = 0;
    for (int i = 0; i < NSHAPES; i++) {
        prob p;
        prob_init(&p, GT_DT_F32, 0, 0, shapes[i][0], shapes[i][1], shapes[i][2], 0, 0, 0, 1.0, 0.0);
        gt_cu.ctx_synchronize();
        gt_wait_background();
        gt_stats b, a;
        gt_get_stats(&b);
        double t0 = gt_measure_now_s();
        gt_status st = prob_launch(&p, p.dC, NULL);
        double ms = (gt_measure_now_s() - t0) * 1e3;
        gt_get_stats(&a);
        first_compiles += a.compiles - b.compiles;
        gt_cu.ctx_synchronize();
        prob_fetch_c(&p, p.dC);
        int ok = st == GT_SUCCESS && prob_error(&p, NULL) <= 1.0;
        gt_wait_background();
        void *first = malloc(c_bytes(&p));
        if (first) memcpy(first, p.C, c_bytes(&p));
        st = prob_launch(&p, p.dC, NULL);
        gt_cu.ctx_synchronize();
        prob_fetch_c(&p, p.dC);
        int bits = st == GT_SUCCESS && first && memcmp(first, p.C, c_bytes(&p)) == 0;
        free(first);
        printf("# %lldx%lldx%lld: first call %.2f ms (host), %s; after the background "
               "thread, %s bits\n", shapes[i][0], shapes[i][1], shapes[i][2], ms,
               ok ? "right" : "WRONG", bits ? "the same" : "OTHER");
        all_ok &= ok, same &= bits;
        if (ms > worst_ms) worst_ms = ms;
        prob_free(&p);
    }
    gt_stats s;
    gt_get_stats(&s);
    printf("compiles=%llu nearest=%llu tunes=%llu ok=%d worst_ms=%.3f specialized=%llu "
           "all_compiles=%llu same=%d\n",
           first_compiles, (unsigned long long)s.nearest, (unsigned long long)s.tunes, all_ok,
           worst_ms, (unsigned long long)s.specialized, (unsigned long long)s.compiles, same);
    return 0;
}

/* One child in mode cached (GEMMTUNE_SPECIALIZE=spec): its summary line's fields. */
typedef struct child_out {
    int got, ok, same;
    unsigned long long compiles, nearest, tunes, specialized, all_compiles;
    double worst;
} child_out;

static child_out run_child(int spec, const char *fault) {
    child_out o = {.compiles = 99, .tunes = 99, .worst = -1};
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "GEMMTUNE_MODE=cached GEMMTUNE_SPECIALIZE=%d GEMMTUNE_TEST_FAULT=%s "
             "/proc/%d/exe --child-cached", spec, fault, (int)getpid());
    FILE *f = popen(cmd, "r");
    char line[400];
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#') fputs(line, stdout);
        else o.got = sscanf(line, "compiles=%llu nearest=%llu tunes=%llu ok=%d worst_ms=%lf "
                                  "specialized=%llu all_compiles=%llu same=%d",
                            &o.compiles, &o.nearest, &o.tunes, &o.ok, &o.worst, &o.specialized,
                            &o.all_compiles, &o.same);
    }
    if (f) pclose(f);
    return o;
}

/* A child's four shapes (8 calls, each right and giving the same bits twice), with no
 * compile at any first call, no tuning, the selector at each shape; background: its
 * worker compiled the twins (at least 4 compiles in all) or nothing compiled at all;
 * specialized: how many twins took their plan's place. */
static void check_child(const child_out *o, const char *what, int background,
                        unsigned long long specialized) {
    TAP_CHECK(o->got == 8 && o->ok && o->same && o->compiles == 0 &&
                  (background ? o->all_compiles >= 4 : o->all_compiles == 0) && o->tunes == 0 &&
                  o->nearest == 4 && o->specialized == specialized,
              "child, %s: read %d, right %d, same bits %d, first-call compiles %llu (in all "
              "%llu), tunes %llu, selector %llu, specialized %llu",
              what, o->got, o->ok, o->same, o->compiles, o->all_compiles, o->tunes, o->nearest,
              o->specialized);
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
    /* Without specialization: the generic kernels alone, nothing compiled at all. */
    child_out o = run_child(0, "none");
    check_child(&o, "generic only", 0, 0);
    /* The target (< 5 ms) is the bench's to show; a test only catches a compile-sized stall. */
    TAP_CHECK(o.worst >= 0 && o.worst < 100, "worst first call %.2f ms", o.worst);
    /* Twins that give other bits (GEMMTUNE_TEST_FAULT=twin) are refused: the generic
     * kernels stay, and nothing is stored for a later process. */
    o = run_child(1, "twin");
    check_child(&o, "twins refused", 1, 0);
    /* With it: first calls still compile nothing; the background thread compiles each
     * shape's exact twin (and the check's helper kernels), which then runs with the same
     * bits. */
    o = run_child(1, "none");
    check_child(&o, "specialized", 1, 4);
    /* A later process loads the twins from the binary cache at its first calls. */
    o = run_child(1, "none");
    TAP_CHECK(o.got == 8 && o.ok && o.same && o.all_compiles == 0 && o.specialized == 4,
              "next process: read %d, right %d, same bits %d, compiles %llu, specialized %llu",
              o.got, o.ok, o.same, o.all_compiles, o.specialized);
    TAP_CHECK(o.worst >= 0 && o.worst < 100, "worst first call %.2f ms", o.worst);
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
    TAP_RUN(twins_of_heldout);
    TAP_RUN(generic_set_serves_new_process);
    gt_release();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0) printf("# could not remove %s\n", dir);
    return tap_done();
}
