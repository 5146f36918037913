/*
 * test_gpu.c: gemm_tuned on a real GPU against a float64 CPU reference.
 * Without a CUDA device every case reports "skipped: no CUDA device". Built twice: test_gpu
 * runs the default cases, test_gpu_sweep (GT_TEST_SWEEP) the sweeps over every candidate.
 * Cases: all four op pairs on odd shapes; leading dimensions above the minimum;
 * NaN in C with beta == 0; alpha == 0; k == 0; user buffers untouched by tuning;
 * a second process finds the winner in the cache without tuning; threads; the tuning
 * memory limit forcing the fallback; bad arguments launch nothing; a tuning's screened
 * candidates and a stop where the best held, as reported.
 * Double precision (gemm_tuned_d, cases gpu_f64_*): all four op pairs on odd shapes with
 * non-trivial alpha and beta, odd leading dimensions, NaN in C with beta == 0, k == 0
 * and alpha == 0 (exact), a misaligned double rejected with nothing written, and one
 * shape as f32 and f64 in one process (two keys, two kernels, both right).
 * Split-K: three shapes with split-K configurations pinned through the cache (one reduced
 * in two levels), alternating on one stream (one shared workspace), each result right and
 * repeated calls bit-identical.
 * One set of problem helpers (prob_*, prob.h) serves every data type. Results are graded
 * element by element against the test's own float64 CPU reference (grade.h), within bounds
 * stated once, at prob_bound (prob.h). The sweeps grade every candidate a tuning timed,
 * launched on the test's own buffers, and hold the library's verifier to the same verdicts
 * (sweep_problem).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cu.h"
#include "db.h"
#include "call.h"
#include "devctx.h"
#include "dispatch.h"
#include "gemmtune.h"
#include "kcfg.h"
#include "layers.h"
#include "measure.h"
#include "kern.h"
#include "gpu_probe.h"
#include "grade.h"
#include "kernel_sources.h"
#include "plan.h"
#include "prob.h"
#include "tap.h"
#include "tune.h"

/* No GPU: skipped; a GPU that failed to set up: failed (gpu_probe.h). */
GPU_TEST_STATE();

/* ===== cases ===== */

/* The problem helpers (prob_*), the bounds (prob_bound) and pin_config are in prob.h. */

static const long long shapes[][3] = {{1, 1, 1},     {17, 33, 65},  {1000, 1000, 1000},
                                      {4097, 129, 257}, {64, 64, 64}, {129, 1, 7},
                                      {3, 300, 2},   {255, 257, 31}};

static void gpu_all_ops_odd_shapes(void) {
    NEED_GPU();
    /* Two op pairs per shape, alternating, so that the shapes meet all four; 8 candidates
     * a tuning (the sweep suite times every one). */
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "8", 1);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int op = 0; op < 4; op++) {
            if ((op + (int)s) % 2) continue;
            prob p;
            double beta = (s + op) % 4 < 2 ? 0.0 : -0.5;
            prob_init(&p, GT_DT_F32, op & 1, op >> 1, shapes[s][0], shapes[s][1], shapes[s][2],
                      0, 0, 0, 1.5, beta);
            gt_status st = prob_run(&p, NULL);
            gr_result res;
            double e = prob_error(&p, &res);
            TAP_CHECK(st == GT_SUCCESS, "%lldx%lldx%lld op %d: %s", shapes[s][0], shapes[s][1],
                      shapes[s][2], op, gt_last_error());
            TAP_CHECK(e <= 1.0, "%lldx%lldx%lld:%c%c beta %g: %s", shapes[s][0], shapes[s][1],
                      shapes[s][2], op & 1 ? 'T' : 'N', op >> 1 ? 'T' : 'N', beta, res.text);
            printf("# %lldx%lldx%lld:%c%c beta=%g |err| / bound %.3g\n", shapes[s][0],
                   shapes[s][1], shapes[s][2], op & 1 ? 'T' : 'N', op >> 1 ? 'T' : 'N', beta, e);
            prob_free(&p);
        }
    unsetenv("GEMMTUNE_TUNE_MAX_CANDIDATES");
}

static void gpu_larger_leading_dimensions(void) {
    NEED_GPU();
    /* Odd pads: the alignment class drops to 4 bytes, so scalar paths are exercised. */
    const long long pads[][3] = {{3, 5, 7}, {4, 8, 12}, {1, 0, 0}};
    for (int q = 0; q < 3; q++)
        for (int op = 0; op < 4; op++) {
            prob p;
            prob_init(&p, GT_DT_F32, op & 1, op >> 1, 77, 45, 130, pads[q][0], pads[q][1],
                      pads[q][2], 1.0, 0.25);
            gt_status st = prob_run(&p, NULL);
            gr_result res;
            double e = prob_error(&p, &res);
            TAP_CHECK(st == GT_SUCCESS && e <= 1.0, "pads %lld,%lld,%lld op %d: %s: %s",
                      pads[q][0], pads[q][1], pads[q][2], op, gt_status_string(st), res.text);
            prob_free(&p);
        }
}

static void gpu_nan_in_c_with_beta0(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F32, 0, 1, 300, 200, 100, 0, 0, 0, 1.0, 0.0);
    for (size_t i = 0; i < c_elems(&p); i++) set_elem(&p, p.C0, i, NAN);
    prob_reset_c(&p);
    gt_status st = prob_run(&p, NULL);
    gr_result res;
    double e = prob_error(&p, &res);
    TAP_CHECK(st == GT_SUCCESS && e <= 1.0, "NaN leaked or wrong: %s", res.text);
    prob_free(&p);
}

static void gpu_alpha_zero_scales_c(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F32, 0, 0, 123, 45, 67, 0, 0, 0, 0.0, 2.0);
    gt_status st = gemm_tuned(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 0.0f, NULL, p.lda, NULL, p.ldb,
                              2.0f, (float *)(uintptr_t)p.dC, p.ldc, NULL);
    gt_cu.ctx_synchronize();
    prob_fetch_c(&p, p.dC);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    int exact = 1;
    for (size_t i = 0; i < c_elems(&p); i++)
        exact &= elem(&p, p.C, i) == round_elem(&p, 2.0 * elem(&p, p.C0, i));
    TAP_CHECK(exact, "C != 2 * C0 with alpha == 0 (A and B were NULL: must not be read)");
    prob_free(&p);
}

static void gpu_k_zero(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F32, 1, 0, 50, 60, 0, 0, 0, 0, 1.0, 0.5);
    gt_status st = prob_run(&p, NULL);
    int exact = 1;
    for (size_t i = 0; i < c_elems(&p); i++)
        exact &= elem(&p, p.C, i) == round_elem(&p, 0.5 * elem(&p, p.C0, i));
    TAP_CHECK(st == GT_SUCCESS && exact, "k == 0 must give C = beta * C");
    /* beta == 0 and NaN in C: zeros. */
    for (size_t i = 0; i < c_elems(&p); i++) set_elem(&p, p.C0, i, NAN);
    prob_reset_c(&p);
    p.beta = 0.0;
    st = prob_run(&p, NULL);
    int zeros = 1;
    for (size_t i = 0; i < c_elems(&p); i++) zeros &= elem(&p, p.C, i) == 0.0;
    TAP_CHECK(st == GT_SUCCESS && zeros, "k == 0, beta == 0 must give zeros");
    prob_free(&p);
}

static void gpu_user_buffers_untouched_by_tuning(void) {
    NEED_GPU();
    /* A shape no other case uses, so this call tunes; beta = 1 makes any extra write of C
     * by tuning show in the result. */
    prob p;
    prob_init(&p, GT_DT_F32, 0, 1, 333, 222, 111, 2, 2, 0, 1.0, 1.0);
    gt_stats before, after;
    gt_get_stats(&before);
    gt_status st = prob_run(&p, NULL);
    gt_get_stats(&after);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    TAP_CHECK(after.tunes == before.tunes + 1, "expected this call to tune");
    /* NT: A is lda x k, B is ldb x k as stored. */
    size_t na = (size_t)(p.lda * p.k) * p.ea, nb = (size_t)(p.ldb * p.k) * p.ea;
    void *a = malloc(na), *b = malloc(nb);
    gt_cu.memcpy_dtoh(a, p.dA, na);
    gt_cu.memcpy_dtoh(b, p.dB, nb);
    TAP_CHECK(memcmp(a, p.A, na) == 0, "A changed");
    TAP_CHECK(memcmp(b, p.B, nb) == 0, "B changed");
    gr_result res;
    double e = prob_error(&p, &res);
    TAP_CHECK(e <= 1.0, "C = A B + C0 wrong after tuning: %s", res.text);
    free(a), free(b);
    prob_free(&p);
}

static void gpu_bad_argument_launches_nothing(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F32, 0, 0, 40, 40, 40, 0, 0, 0, 1.0, 0.0);
    gt_status st = gemm_tuned(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 1.0f, (const float *)(uintptr_t)p.dA,
                              p.lda, (const float *)(uintptr_t)p.dB, p.ldb, 0.0f,
                              (float *)(uintptr_t)p.dC, p.m - 1, NULL);
    gt_cu.ctx_synchronize();
    prob_fetch_c(&p, p.dC);
    TAP_CHECK(st == GT_INVALID_VALUE && gt_last_error_arg() == 13, "ldc < m: status %d arg %d", st,
              gt_last_error_arg());
    TAP_CHECK(memcmp(p.C, p.C0, c_bytes(&p)) == 0, "C written on error");
    prob_free(&p);
}

typedef struct {
    gt_status st;
    double err;
    gr_result res;
} thread_out;

static void *thread_body(void *arg) {
    thread_out *o = arg;
    CUcontext ctx;
    CUdevice dev;
    gt_cu.device_get(&dev, 0);
    gt_cu.primary_ctx_retain(&ctx, dev);
    gt_cu.ctx_set_current(ctx);
    prob p;
    prob_init(&p, GT_DT_F32, 1, 1, 211, 197, 89, 0, 0, 0, 1.0, 0.0);
    o->st = prob_run(&p, NULL);
    o->err = prob_error(&p, &o->res);
    prob_free(&p);
    return NULL;
}

static void gpu_threads_same_new_shape(void) {
    NEED_GPU();
    gt_stats before, after;
    gt_get_stats(&before);
    pthread_t t[4];
    thread_out o[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, thread_body, &o[i]);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    gt_get_stats(&after);
    for (int i = 0; i < 4; i++)
        TAP_CHECK(o[i].st == GT_SUCCESS && o[i].err <= 1.0, "thread %d: %s: %s", i,
                  gt_status_string(o[i].st), o[i].res.text);
    TAP_CHECK(after.tunes - before.tunes <= 1, "the shape was tuned %llu times",
              (unsigned long long)(after.tunes - before.tunes));
}

static void gpu_memory_limit_forces_fallback(void) {
    NEED_GPU();
    gt_set_tune_memory_limit(1024); /* far too little for any tuning */
    gt_stats before, after;
    gt_get_stats(&before);
    prob p;
    prob_init(&p, GT_DT_F32, 1, 0, 150, 170, 190, 0, 0, 0, 1.0, 0.0);
    gt_status st = prob_run(&p, NULL);
    gt_get_stats(&after);
    gt_set_tune_memory_limit(0);
    TAP_CHECK(st == GT_SUCCESS, "call must succeed without tuning: %s", gt_last_error());
    TAP_CHECK(after.fallbacks == before.fallbacks + 1, "fallback not used");
    gr_result res;
    double e = prob_error(&p, &res);
    TAP_CHECK(e <= 1.0, "fallback wrong: %s", res.text);
    prob_free(&p);
}

/* Tunes p's key on the current context over the whole space (`gemmtune tune --force`),
 * with rep and *source as gt_dispatch_tune leaves them (rep zeroed first); the plan it
 * makes is what p's later calls run. */
static gt_status tune_prob(const prob *p, gt_tune_report *rep, int *source) {
    memset(rep, 0, sizeof *rep);
    gt_devctx *dc;
    gt_key key;
    gt_status st = prob_key(p, &dc, &key);
    if (st != GT_SUCCESS) return st;
    return gt_dispatch_tune(dc, &key, 1, NULL, rep, source);
}

/* The library's own f32 rule for the relative Frobenius error its verifier reports
 * (tuner/verify.h), to which rep.rel_err, its figure for the winner, is held. */
static double verify_tol_f32(long long k) { return 1e-6 * sqrt((double)(k > 0 ? k : 1)) + 2e-6; }

/* p's call with the plan its tuning made, graded against the reference; then p freed. */
static void winner_right_then_free(prob *p) {
    gt_status st = prob_run(p, NULL);
    gr_result res;
    double e = prob_error(p, &res);
    TAP_CHECK(st == GT_SUCCESS && e <= 1.0, "result with the winner: %s", res.text);
    prob_free(p);
}

static void gpu_failed_candidates_never_chosen(void) {
    NEED_GPU();
    /* Candidate 0 fails to compile, 1 fails to launch, and the fastest that runs computes
     * a wrong result: each must be recorded, none chosen, and the call still right. */
    setenv("GEMMTUNE_TEST_FAULT", "compile:0,launch:1,verify:0", 1);
    prob p;
    prob_init(&p, GT_DT_F32, 1, 0, 301, 203, 105, 0, 0, 0, 1.0, 0.0);
    gt_tune_report rep;
    int source = -1;
    gt_status st = tune_prob(&p, &rep, &source);
    unsetenv("GEMMTUNE_TEST_FAULT");
    TAP_CHECK(st == GT_SUCCESS && source == GT_SRC_TUNED, "tuning: %s", gt_last_error());
    int counts[GT_TR_NOT_TIMED + 1] = {0};
    char win[64], bad[64];
    gt_kcfg_format(&rep.winner, win, sizeof win);
    for (int i = 0; i < rep.ncands; i++) {
        counts[rep.cands[i].status]++;
        gt_kcfg_format(&rep.cands[i].cfg, bad, sizeof bad);
        if (rep.cands[i].status != GT_TR_OK)
            TAP_CHECK(strcmp(bad, win) != 0, "failed candidate %s (%s) chosen", bad,
                      gt_tune_result_name(rep.cands[i].status));
    }
    TAP_CHECK(counts[GT_TR_COMPILE_FAILED] == 1, "compile failures %d", counts[GT_TR_COMPILE_FAILED]);
    TAP_CHECK(counts[GT_TR_LAUNCH_FAILED] == 1, "launch failures %d", counts[GT_TR_LAUNCH_FAILED]);
    TAP_CHECK(counts[GT_TR_VERIFY_FAILED] == 1, "verify failures %d", counts[GT_TR_VERIFY_FAILED]);
    TAP_CHECK(rep.verify_failed == 1 && rep.rel_err <= verify_tol_f32(p.k), "winner rel err %.3g",
              rep.rel_err);
    gt_tune_report_free(&rep);
    winner_right_then_free(&p);
}

/* A compile still under way when the budget is spent does not hold up the call: the
 * tuning returns with what was timed and the compile finishes in the background, where
 * gt_tune_wait_compiles (gt_release, exit) waits for it. Candidate 1's compile is made
 * to take 2 s more; the budget is 0.6 s. The f32 helper kernels are made ready first:
 * compiled cold (0.4 to 0.75 s on the H100 machine) they would take the whole budget
 * before anything could be timed, which is not what this case is about. */
static void gpu_slow_compile_left_behind(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F32, 0, 1, 97, 61, 33, 0, 0, 0, 1.0, 0.0);
    {
        gt_devctx *dc;
        gt_key key;
        TAP_CHECK(prob_key(&p, &dc, &key) == GT_SUCCESS && gt_devctx_aux(dc, GT_DT_F32) == GT_SUCCESS,
                  "f32 helpers: %s", gt_last_error());
    }
    setenv("GEMMTUNE_TEST_FAULT", "slow:1", 1);
    setenv("GEMMTUNE_TUNE_BUDGET_S", "0.6", 1);
    gt_tune_report rep;
    int source = -1;
    double t0 = gt_measure_now_s();
    gt_status st = tune_prob(&p, &rep, &source);
    double call_s = gt_measure_now_s() - t0;
    unsetenv("GEMMTUNE_TEST_FAULT");
    unsetenv("GEMMTUNE_TUNE_BUDGET_S");
    TAP_CHECK(st == GT_SUCCESS && source == GT_SRC_TUNED, "tuning: %s", gt_last_error());
    TAP_CHECK(call_s < 1.6, "the call took %.2f s with a 0.6 s budget", call_s);
    /* The report is in time order now: the slow one is found by its message. Timing went
     * on with the candidates compiled after it. */
    int still = 0, timed = 0;
    for (int i = 0; i < rep.ncands; i++) {
        still += !rep.cands[i].compiled && rep.cands[i].status == GT_TR_NOT_TIMED &&
                 strstr(rep.cands[i].message, "still compiling") != NULL;
        timed += rep.cands[i].status == GT_TR_OK;
    }
    TAP_CHECK(still >= 1, "the slow candidate is left compiling, not timed");
    TAP_CHECK(timed >= 2, "timing went on past the slow compile: %d timed", timed);
    gt_tune_report_free(&rep);
    double t1 = gt_measure_now_s();
    gt_tune_wait_compiles();
    double wait_s = gt_measure_now_s() - t1;
    TAP_CHECK(wait_s > 0.5 && wait_s < 3.0, "waited %.2f s for the compile left running", wait_s);
    winner_right_then_free(&p);
}

/* ===== double precision (gemm_tuned_d) ===== */

/* A tuning at the default budget: every screened candidate's time is over
 * GT_TUNE_SCREEN_KEEP times the fastest timed (it was held against a best that only
 * fell), the report's counts are the candidates', and where timing stopped because the
 * best held, at least GT_TUNE_HELD_MIN were timed and every one left says why. The
 * winner's result is right. */
static void gpu_screening_and_held_reported(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F32, 0, 0, 1000, 1000, 1000, 0, 0, 0, 1.0, 0.0);
    gt_tune_report rep;
    int source = -1;
    gt_status st = tune_prob(&p, &rep, &source);
    TAP_CHECK(st == GT_SUCCESS && source == GT_SRC_TUNED, "tuning: %s", gt_last_error());
    double fastest = 0;
    int screened = 0, timed = 0, left = 0, left_says = 0;
    for (int i = 0; i < rep.ncands; i++) {
        const gt_tune_cand *c = &rep.cands[i];
        if (c->status == GT_TR_OK || c->status == GT_TR_VERIFY_FAILED) {
            timed++;
            if (fastest == 0 || c->time_us < fastest) fastest = c->time_us;
        }
        if (c->status == GT_TR_NOT_TIMED) {
            left++;
            left_says += strstr(c->message, "held against its estimate") != NULL;
        }
    }
    for (int i = 0; i < rep.ncands; i++) {
        const gt_tune_cand *c = &rep.cands[i];
        if (!c->screened) continue;
        screened++;
        TAP_CHECK(c->time_us > GT_TUNE_SCREEN_KEEP * fastest,
                  "a screened candidate at %.1f us, the fastest %.1f us", c->time_us, fastest);
    }
    printf("# 1000x1000x1000 NN: %d timed, %d screened, %s; winner %.1f us\n", timed, screened,
           rep.held ? "stopped where the best held" : "the budget or the list ended", rep.time_us);
    TAP_CHECK(screened == rep.screened && timed == rep.timed, "counts %d/%d screened, %d/%d timed",
              screened, rep.screened, timed, rep.timed);
    TAP_CHECK(rep.time_us == fastest || rep.verify_failed > 0, "winner %.1f us, fastest %.1f us",
              rep.time_us, fastest);
    if (rep.held)
        TAP_CHECK(timed >= GT_TUNE_HELD_MIN && left > 0 && left_says == left,
                  "held: %d timed, %d left, %d saying why", timed, left, left_says);
    else
        TAP_CHECK(left_says == 0, "%d say the best held in a run that did not stop", left_says);
    gt_tune_report_free(&rep);
    winner_right_then_free(&p);
}

static void gpu_f64_all_ops_odd_shapes(void) {
    NEED_GPU();
    /* Odd sizes (no tile divides them), a one-column C, and odd padding on the last shape
     * (alignment class 8: one double). Scalars non-trivial, beta 0 on every other run. */
    static const struct {
        long long m, n, k, pad_a, pad_b, pad_c;
    } sh[] = {{67, 45, 129, 0, 0, 0}, {129, 1, 7, 0, 0, 0}, {255, 257, 31, 1, 3, 5}};
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "8", 1); /* the sweep suite times every one */
    for (size_t s = 0; s < sizeof sh / sizeof sh[0]; s++)
        for (int op = 0; op < 4; op++) {
            prob p;
            double beta = (s + op) % 2 ? 0.0 : -0.375, alpha = op % 2 ? -0.75 : 1.5;
            prob_init(&p, GT_DT_F64, op & 1, op >> 1, sh[s].m, sh[s].n, sh[s].k, sh[s].pad_a,
                      sh[s].pad_b, sh[s].pad_c, alpha, beta);
            gt_status st = prob_run(&p, NULL);
            gr_result res;
            double e = prob_error(&p, &res);
            char name[96];
            snprintf(name, sizeof name, "%lldx%lldx%lld:%c%c pads %lld,%lld,%lld", sh[s].m,
                     sh[s].n, sh[s].k, op & 1 ? 'T' : 'N', op >> 1 ? 'T' : 'N', sh[s].pad_a,
                     sh[s].pad_b, sh[s].pad_c);
            TAP_CHECK(st == GT_SUCCESS, "%s: %s: %s", name, gt_status_string(st), gt_last_error());
            TAP_CHECK(e <= 1.0, "%s alpha %g beta %g: %s", name, alpha, beta, res.text);
            printf("# f64 %s alpha=%g beta=%g |err| / bound %.3g\n", name, alpha, beta, e);
            prob_free(&p);
        }
    unsetenv("GEMMTUNE_TUNE_MAX_CANDIDATES");
}

static void gpu_f64_nan_in_c_with_beta0(void) {
    NEED_GPU();
    prob p;
    prob_init(&p, GT_DT_F64, 1, 0, 97, 61, 43, 0, 0, 0, -1.25, 0.0);
    for (size_t i = 0; i < c_elems(&p); i++) set_elem(&p, p.C0, i, NAN);
    prob_reset_c(&p);
    gt_status st = prob_run(&p, NULL);
    gr_result res;
    double e = prob_error(&p, &res);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    TAP_CHECK(e <= 1.0, "NaN leaked or wrong: %s", res.text);
    prob_free(&p);
}

static void gpu_f64_k_zero_and_alpha_zero(void) {
    NEED_GPU();
    /* k == 0: C = beta * C, exactly (one double multiply per element). */
    prob p;
    prob_init(&p, GT_DT_F64, 0, 1, 53, 29, 0, 0, 0, 0, 1.0, -0.3);
    gt_status st = prob_run(&p, NULL);
    int exact = 1;
    for (size_t i = 0; i < c_elems(&p); i++)
        exact &= elem(&p, p.C, i) == round_elem(&p, -0.3 * elem(&p, p.C0, i));
    TAP_CHECK(st == GT_SUCCESS && exact, "k == 0 must give C = beta * C in double: %s",
              gt_last_error());
    /* k == 0, beta == 0, NaN in C: zeros. */
    for (size_t i = 0; i < c_elems(&p); i++) set_elem(&p, p.C0, i, NAN);
    prob_reset_c(&p);
    p.beta = 0.0;
    st = prob_run(&p, NULL);
    int zeros = 1;
    for (size_t i = 0; i < c_elems(&p); i++) zeros &= elem(&p, p.C, i) == 0.0;
    TAP_CHECK(st == GT_SUCCESS && zeros, "k == 0, beta == 0 must give zeros");
    prob_free(&p);

    /* alpha == 0 with A and B NULL (never read): C = beta * C. beta = 1 + 2^-40 is not a
     * float: a path that narrowed it would round it to 1 and leave C as it was. */
    prob_init(&p, GT_DT_F64, 0, 0, 123, 45, 67, 0, 0, 0, 0.0, 1.0 + 0x1p-40);
    st = gemm_tuned_d(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 0.0, NULL, p.lda, NULL, p.ldb, p.beta,
                      (double *)(uintptr_t)p.dC, p.ldc, NULL);
    gt_cu.ctx_synchronize();
    prob_fetch_c(&p, p.dC);
    TAP_CHECK(st == GT_SUCCESS, "%s", gt_last_error());
    exact = 1;
    for (size_t i = 0; i < c_elems(&p); i++)
        exact &= elem(&p, p.C, i) == round_elem(&p, p.beta * elem(&p, p.C0, i));
    TAP_CHECK(exact, "C != beta * C0 in double with alpha == 0");
    /* alpha == 0 and beta == 1: nothing to do, C untouched, even with NULL A and B. */
    prob_reset_c(&p);
    st = gemm_tuned_d(GT_OP_T, GT_OP_N, p.m, p.n, p.k, 0.0, NULL, p.k, NULL, p.ldb, 1.0,
                      (double *)(uintptr_t)p.dC, p.ldc, NULL);
    gt_cu.ctx_synchronize();
    prob_fetch_c(&p, p.dC);
    TAP_CHECK(st == GT_SUCCESS && memcmp(p.C, p.C0, c_bytes(&p)) == 0,
              "alpha == 0, beta == 1 changed C: %s", gt_last_error());
    prob_free(&p);
}

static void gpu_f64_misaligned_launches_nothing(void) {
    NEED_GPU();
    /* A 4-byte offset is a valid float address but not a double's: position 12, C as
     * it was. */
    prob p;
    prob_init(&p, GT_DT_F64, 0, 0, 40, 40, 40, 0, 0, 0, 1.0, 0.0);
    gt_status st = gemm_tuned_d(GT_OP_N, GT_OP_N, p.m, p.n, p.k, 1.0,
                                (const double *)(uintptr_t)p.dA, p.lda,
                                (const double *)(uintptr_t)p.dB, p.ldb, 0.0,
                                (double *)(uintptr_t)(p.dC + 4), p.ldc, NULL);
    gt_cu.ctx_synchronize();
    prob_fetch_c(&p, p.dC);
    TAP_CHECK(st == GT_INVALID_VALUE && gt_last_error_arg() == 12,
              "misaligned C: status %d arg %d (%s)", st, gt_last_error_arg(), gt_last_error());
    TAP_CHECK(memcmp(p.C, p.C0, c_bytes(&p)) == 0, "C written on error");
    prob_free(&p);
}

static void gpu_f32_and_f64_same_shape(void) {
    NEED_GPU();
    /* One shape and ops in both types, interleaved: two keys, two plans, two kernels. A
     * plan of one type run on the other's data would be off by O(1). */
    gt_stats before, after;
    gt_get_stats(&before);
    prob pf, pd;
    prob_init(&pf, GT_DT_F32, 0, 1, 71, 83, 59, 0, 0, 0, 1.25, 0.5);
    prob_init(&pd, GT_DT_F64, 0, 1, 71, 83, 59, 0, 0, 0, 1.25, 0.5);
    for (int round = 0; round < 2; round++) {
        prob_reset_c(&pf);
        prob_reset_c(&pd);
        gt_status sf = prob_run(&pf, NULL), sd = prob_run(&pd, NULL);
        gr_result rf, rd;
        double ef = prob_error(&pf, &rf), ed = prob_error(&pd, &rd);
        TAP_CHECK(sf == GT_SUCCESS && ef <= 1.0, "round %d f32: %s: %s", round,
                  gt_status_string(sf), rf.text);
        TAP_CHECK(sd == GT_SUCCESS && ed <= 1.0, "round %d f64: %s: %s", round,
                  gt_status_string(sd), rd.text);
    }
    gt_get_stats(&after);
    TAP_CHECK(after.tunes - before.tunes == 2, "tuned %llu times, want 2 (once per type)",
              (unsigned long long)(after.tunes - before.tunes));
    TAP_CHECK(after.plan_hits - before.plan_hits >= 2, "second round missed the plan table");
    prob_free(&pf);
    prob_free(&pd);
}

/* ===== DMMA kernels that spill are refused ===== */

/* gt_kern_load refuses a DMMA kernel with local memory (tuner/kern.c: every DMMA kernel
 * seen computing wrong results spilled). A warp tile of 64 x 64 doubles holds 128
 * accumulators, 256 registers: it must spill, and the test reads the function's local
 * size itself to show it does. 32 x 32 warp tiles (32 accumulators) do not spill and
 * must load. f64 300x200x40001 NT, both compiled for this device. */
static void gpu_dmma_spill_refused(void) {
    NEED_GPU();
    gt_devctx *dc;
    if (current_devctx(&dc) != GT_SUCCESS) {
        TAP_CHECK(0, "context state: %s", gt_last_error());
        return;
    }
    if (dc->arch < 80) TAP_SKIP("skipped: DMMA needs compute capability 8.0 (device %d)", dc->arch);
    gt_key key;
    const gt_gemm g = {GT_DT_F64, 0, 1, 300, 200, 40001, 1.0, 0.0, GT_PTR(4096), GT_PTR(8192),
                       GT_PTR(16384), 300, 200, 300, NULL};
    gt_call_key(dc, &g, &key);
    static const char *texts[2] = {"f1_64x64x16_w64x64_t8x8_s3_v2_k1_r1",
                                   "f1_64x64x16_w32x32_t4x4_s3_v2_k1_r1"};
    for (int i = 0; i < 2; i++) {
        gt_kcfg cfg;
        char why[256];
        if (gt_kcfg_parse(texts[i], &cfg, why, sizeof why) != 0) {
            TAP_CHECK(0, "%s: %s", texts[i], why);
            continue;
        }
        /* The local size as the driver reports it, read here, not by gt_kern_load. */
        gt_rtc_result res;
        gt_status s = gt_kern_compile(&cfg, &key, dc->arch, &res);
        TAP_CHECK(s == GT_SUCCESS, "%s: compile: %s", texts[i], gt_last_error());
        if (s != GT_SUCCESS) continue;
        CUmodule mod;
        CUfunction fn;
        int local = -1;
        if (gt_cu.module_load_data(&mod, res.image) == CUDA_SUCCESS) {
            if (gt_cu.module_get_function(&fn, mod, "gt_gemm") == CUDA_SUCCESS)
                gt_cu.func_get_attribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
            gt_cu.module_unload(mod);
        }
        gt_kern k;
        s = gt_kern_load(res.image, &cfg, &key, &k);
        gt_rtc_result_free(&res);
        printf("# %s: %d bytes of local memory, load %s\n", texts[i], local, gt_status_string(s));
        if (i == 0) {
            TAP_CHECK(local > 0, "%s: expected to spill, local size %d", texts[i], local);
            TAP_CHECK(s == GT_LAUNCH_FAILED && strstr(gt_last_error(), "spills"),
                      "%s spills %d bytes but loaded: %s", texts[i], local, gt_status_string(s));
        } else {
            TAP_CHECK(local == 0, "%s: expected no spill, local size %d", texts[i], local);
            TAP_CHECK(s == GT_SUCCESS && k.local == 0, "%s did not load: %s", texts[i], gt_last_error());
        }
        if (s == GT_SUCCESS) gt_kern_unload(&k);
    }
}

/* ===== split-K: three shapes on one stream ===== */

static void gpu_splitk_shapes_one_stream(void) {
    NEED_GPU();
    /* Three split-K plans of different shapes, alternating on one stream, share that
     * stream's workspace (runtime/work.c). Its tile counters sit at its start
     * (kernel_src/common.cuh, splitk_reduce): every launch must leave them at zero, and
     * no plan's partial sums may land on them. Each shape gets a split-K
     * configuration pinned through the cache, so the test does not depend on what the
     * tuner would pick. Tile sizes, tile counts (3, 15 and 6), splits (4, 6 and 24), ops,
     * vector widths and beta all differ; odd K leaves the last split short. 24 splits
     * take the reduction's two levels (gt_kcfg_split_group: 4 groups of 6, each with its
     * counter after the tile counters). All need far less workspace (about 112, 354 and
     * 592 KiB) than the 1 MiB work.c allocates at least, so one buffer serves them all
     * from the first call on. */
    enum { ROUNDS = 4, NS = 3 };
    static const struct {
        int opa, opb;
        long long m, n, k;
        double alpha, beta;
        const char *cfg;
    } sh[NS] = {
        /* NT, leading dimensions 64, 96, 64 floats: alignment class 16, so vec 4; beta 0. */
        {0, 1, 64, 96, 4099, 1.5, 0.0, "f0_64x32x16_w32x16_t4x4_s3_v4_k4_r1"},
        /* NN, ldb = k = 3001: alignment class 4, so vec 1; beta != 0 reads C. */
        {0, 0, 200, 72, 3001, -0.75, -0.5, "f0_40x24x16_w20x24_t5x3_s2_v1_k6_r1"},
        /* TN, lda = k = 9001: vec 1; 24 splits of 563 K steps in two levels; beta != 0. */
        {1, 0, 96, 64, 9001, 1.25, 0.25, "f0_32x32x16_w32x32_t4x8_s3_v1_k24_r1"},
    };
    gt_devctx *dc;
    if (current_devctx(&dc) != GT_SUCCESS) {
        TAP_CHECK(0, "context state: %s", gt_last_error());
        return;
    }
    /* A stream of its own: its workspace is created by this case's first split-K call. */
    CUstream stream;
    CUresult cr = gt_cu.stream_create(&stream, 0);
    if (cr != CUDA_SUCCESS) {
        TAP_CHECK(0, "cuStreamCreate: CUresult %d", (int)cr);
        return;
    }

    prob p[NS];
    gt_key key[NS];
    char name[NS][64];
    CUdeviceptr out[NS][ROUNDS]; /* one C per call, so that no call waits for a read-back */
    void *first[NS];             /* round 0's result, which later rounds must equal */
    int pinned = 1;
    for (int s = 0; s < NS; s++) {
        prob_init(&p[s], GT_DT_F32, sh[s].opa, sh[s].opb, sh[s].m, sh[s].n, sh[s].k, 0, 0, 0,
                  sh[s].alpha, sh[s].beta);
        for (int r = 0; r < ROUNDS; r++) {
            gt_cu.mem_alloc(&out[s][r], c_bytes(&p[s]));
            gt_cu.memcpy_htod(out[s][r], p[s].C0, c_bytes(&p[s]));
        }
        first[s] = malloc(c_bytes(&p[s]));
        /* The key gemm_tuned builds for these calls (every output is a fresh allocation,
         * so all have the same alignment class). */
        const gt_gemm g = {GT_DT_F32, p[s].opa, p[s].opb, p[s].m, p[s].n, p[s].k, 1.0,
                           p[s].beta, GT_PTR(p[s].dA), GT_PTR(p[s].dB), GT_PTR(out[s][0]),
                           p[s].lda, p[s].ldb, p[s].ldc, NULL};
        gt_call_key(dc, &g, &key[s]);
        gt_key_shape(&key[s], name[s], sizeof name[s]);
        char why[600];
        if (pin_config(dc, &key[s], sh[s].cfg, why, sizeof why) != 0) {
            TAP_CHECK(0, "%s: cannot pin %s: %s", name[s], sh[s].cfg, why);
            pinned = 0;
        }
    }

    if (pinned) {
        /* X, Y, Z, X, Y, Z, ... all queued on the stream; nothing waits in between but what the
         * library does at each shape's first call (building the kernel, allocating the
         * workspace). */
        gt_stats before, after;
        gt_get_stats(&before);
        for (int r = 0; r < ROUNDS; r++)
            for (int s = 0; s < NS; s++) {
                gt_status st = prob_launch(&p[s], out[s][r], stream);
                TAP_CHECK(st == GT_SUCCESS, "round %d %s: %s: %s", r, name[s],
                          gt_status_string(st), gt_last_error());
            }
        cr = gt_cu.stream_synchronize(stream);
        TAP_CHECK(cr == CUDA_SUCCESS, "cuStreamSynchronize: CUresult %d", (int)cr);
        gt_get_stats(&after);

        /* The pinned entries were used: found in the cache once per shape, nothing tuned
         * or substituted, every later call a plan-table hit. */
        TAP_CHECK(after.cache_hits - before.cache_hits == NS && after.tunes == before.tunes &&
                      after.fallbacks == before.fallbacks && after.nearest == before.nearest &&
                      after.rejected == before.rejected,
                  "cache hits +%llu (want 3), tunes +%llu, fallbacks +%llu, nearest +%llu, "
                  "rejected +%llu (want 0 each)",
                  (unsigned long long)(after.cache_hits - before.cache_hits),
                  (unsigned long long)(after.tunes - before.tunes),
                  (unsigned long long)(after.fallbacks - before.fallbacks),
                  (unsigned long long)(after.nearest - before.nearest),
                  (unsigned long long)(after.rejected - before.rejected));
        TAP_CHECK(after.plan_hits - before.plan_hits == NS * (ROUNDS - 1),
                  "plan hits +%llu, want %d", (unsigned long long)(after.plan_hits - before.plan_hits),
                  NS * (ROUNDS - 1));
        /* The plan table's entry for each key is what every call of it launched (api.c
         * looks up the same key): the pinned configuration, split, with a workspace. */
        for (int s = 0; s < NS; s++) {
            const gt_plan *pl = gt_plan_find(dc->ctx, &key[s]);
            char text[GT_DB_CONFIG_MAX] = "-";
            if (pl) gt_kcfg_format(&pl->kern.cfg, text, sizeof text);
            TAP_CHECK(pl && pl->source == GT_SRC_CACHE && strcmp(text, sh[s].cfg) == 0,
                      "%s ran %s (source %d), want the pinned %s from the cache", name[s], text,
                      pl ? pl->source : -1, sh[s].cfg);
            TAP_CHECK(pl && pl->kern.cfg.split > 1 && pl->kern.ws_bytes > 0,
                      "%s: the plan is not a split-K kernel", name[s]);
            if (pl)
                printf("# %s: %s, split %d, %zu bytes of workspace\n", name[s], text,
                       pl->kern.cfg.split, pl->kern.ws_bytes);
        }

        /* Every result right; the same shape gives the same bits each time (the split-K
         * reduction adds the partials in an order fixed by the configuration, whichever
         * block comes last). */
        for (int s = 0; s < NS; s++)
            for (int r = 0; r < ROUNDS; r++) {
                prob_fetch_c(&p[s], out[s][r]);
                gr_result res;
                double e = prob_error(&p[s], &res);
                TAP_CHECK(e <= 1.0, "round %d %s: %s", r, name[s], res.text);
                if (r == 0) {
                    memcpy(first[s], p[s].C, c_bytes(&p[s]));
                    printf("# split-K %s alpha=%g beta=%g |err| / bound %.3g\n", name[s], p[s].alpha,
                           p[s].beta, e);
                } else {
                    TAP_CHECK(memcmp(p[s].C, first[s], c_bytes(&p[s])) == 0,
                              "round %d %s: not bit-identical to round 0", r, name[s]);
                }
            }
    }

    for (int s = 0; s < NS; s++) {
        for (int r = 0; r < ROUNDS; r++) gt_cu.mem_free(out[s][r]);
        free(first[s]);
        prob_free(&p[s]);
    }
    gt_cu.stream_destroy(stream);
}

/* Child mode: one f32 call (tuned, or from the cache) of op(A) M x K, op(B) K x N, then
 * the counters the parent checks: tunings, cache hits, NVRTC compiles, status, result. */
static int child(int opb, long long m, long long n, long long k) {
    CUcontext ctx;
    int pushed;
    if (gt_cu_load() != GT_SUCCESS || gt_cu_enter(NULL, &ctx, &pushed) != GT_SUCCESS) return 3;
    prob p;
    prob_init(&p, GT_DT_F32, 0, opb, m, n, k, 0, 0, 0, 1.0, 0.0);
    gt_status st = prob_run(&p, NULL);
    double e = prob_error(&p, NULL);
    gt_stats s;
    gt_get_stats(&s);
    printf("tunes=%llu cache_hits=%llu compiles=%llu status=%d ok=%d\n",
           (unsigned long long)s.tunes, (unsigned long long)s.cache_hits,
           (unsigned long long)s.compiles, st, e <= 1.0);
    prob_free(&p);
    return 0;
}

/* The helper programs (fill, compare, reference) go into the user cache with the GEMM
 * kernels: a second process tuning another shape of the same type loads them instead of
 * compiling them. One candidate per tuning, so that both processes compile the same GEMM
 * kernels, and the first also f32's two helper programs (storage type, reference). */
static void gpu_helpers_from_binary_cache(void) {
    NEED_GPU();
    char dir[] = "/tmp/gt_gpu_XXXXXX";
    TAP_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    unsigned long long tunes[2] = {9, 9}, compiles[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "GEMMTUNE_CACHE=%s/cache.db GEMMTUNE_TUNE_MAX_CANDIDATES=1 /proc/%d/exe "
                 "--child-m %d", dir, (int)getpid(), 200 + i);
        FILE *f = popen(cmd, "r");
        int status = -1, ok = 0, got = 0;
        if (f) {
            got = fscanf(f, "tunes=%llu cache_hits=%*s compiles=%llu status=%d ok=%d",
                         &tunes[i], &compiles[i], &status, &ok);
            pclose(f);
        }
        TAP_CHECK(got == 4 && status == 0 && ok && tunes[i] == 1,
                  "process %d: read %d, status %d, ok %d, tunes %llu", i + 1, got, status, ok,
                  tunes[i]);
    }
    TAP_CHECK(compiles[1] >= 1 && compiles[0] == compiles[1] + 2,
              "compiles: first process %llu, second %llu (expected 2 fewer: the helper "
              "programs loaded from the cache)", compiles[0], compiles[1]);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    TAP_CHECK(system(rm) == 0, "cleanup");
}

static int run_child(const char *cache, unsigned long long *tunes, unsigned long long *hits,
                     int *ok) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "GEMMTUNE_CACHE=%s /proc/%d/exe --child", cache, (int)getpid());
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    int status = -1;
    int got = fscanf(f, "tunes=%llu cache_hits=%llu compiles=%*s status=%d ok=%d", tunes, hits,
                     &status, ok);
    pclose(f);
    return got == 4 && status == 0 ? 0 : -1;
}

static void gpu_second_process_hits_cache(void) {
    NEED_GPU();
    char dir[] = "/tmp/gt_gpu_XXXXXX";
    TAP_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char cache[256];
    snprintf(cache, sizeof cache, "%s/cache.db", dir);
    unsigned long long tunes = 9, hits = 9;
    int ok = 0;
    TAP_CHECK(run_child(cache, &tunes, &hits, &ok) == 0, "first process failed");
    TAP_CHECK(tunes == 1 && hits == 0 && ok, "first process: tunes=%llu hits=%llu ok=%d", tunes,
              hits, ok);
    TAP_CHECK(run_child(cache, &tunes, &hits, &ok) == 0, "second process failed");
    TAP_CHECK(tunes == 0 && hits == 1 && ok, "second process: tunes=%llu hits=%llu ok=%d", tunes,
              hits, ok);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    TAP_CHECK(system(rm) == 0, "cleanup");
}

/* ===== tensor-core types (gemm_tuned_ex) ===== */

/* The five types of gemm_tuned_ex that run on tensor cores (prob_launch passes each
 * one's gt_ex_types). Their inputs are exact (rand_odd256), so prob_bound holds them to
 * f32 accumulation and one rounding of C. */
static const int tc_types[] = {GT_DT_TF32, GT_DT_F16, GT_DT_F16_F32, GT_DT_BF16, GT_DT_BF16_F32};
#define N_TC_TYPES (int)(sizeof tc_types / sizeof tc_types[0])

/* One call of tensor type t (random exact inputs, C = C0 before) through gemm_tuned_ex:
 * the call's status in *st, and C graded against the test's reference (prob_error). */
static double tc_run(int t, int opa, int opb, long long m, long long n, long long k,
                     long long pad_a, long long pad_b, long long pad_c, double alpha, double beta,
                     gt_status *st, gr_result *res) {
    prob p;
    prob_init(&p, tc_types[t], opa, opb, m, n, k, pad_a, pad_b, pad_c, alpha, beta);
    *st = prob_run(&p, NULL);
    double e = prob_error(&p, res);
    prob_free(&p);
    return e;
}

/* On a device below sm_80 every tensor type is refused with GT_NOT_SUPPORTED. */
static int tc_supported(void) {
    CUdevice d;
    int major = 0;
    gt_cu.ctx_get_device(&d);
    gt_cu.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    return major >= 8;
}

static int is_sm90(void) {
    gt_cu_device d;
    CUdevice dev;
    return gt_cu.ctx_get_device(&dev) == CUDA_SUCCESS && gt_cu_device_query(dev, &d) == GT_SUCCESS &&
           d.cc_major == 9 && d.cc_minor == 0;
}

static void gpu_tc_all_ops_odd_shapes(void) {
    NEED_GPU();
    /* Few candidates per shape; each type takes every other shape (the even ones or the
     * odd ones, so each shape meets two types or more) and two op pairs on each, NN and TT
     * or TN and NT in turn, so that each type meets all four: 5 types x 6 keys. */
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "6", 1);
    static const long long tshapes[][3] = {{17, 33, 65}, {255, 257, 31}, {129, 1, 7},
                                           {3, 300, 2},  {96, 200, 300}, {1000, 63, 130}};
    const int sup = tc_supported();
    for (int t = 0; t < N_TC_TYPES; t++)
        for (int s = 0; s < 6; s++)
            for (int op = 0; op < 4; op++) {
                if ((s + t) % 2) continue;
                const int nn_tt = (s / 2 + t) % 2 == 0;
                if (nn_tt != (op == 0 || op == 3)) continue;
                gt_status st;
                gr_result res;
                double beta = (s + op) % 4 < 2 ? 0.0 : -0.5;
                double e = tc_run(t, op & 1, op >> 1, tshapes[s][0], tshapes[s][1],
                                  tshapes[s][2], 0, 0, 0, 1.5, beta, &st, &res);
                const char *name = gt_dtype_name(tc_types[t]);
                if (!sup) {
                    TAP_CHECK(st == GT_NOT_SUPPORTED, "%s below sm_80: %s", name,
                              gt_status_string(st));
                    continue;
                }
                TAP_CHECK(st == GT_SUCCESS, "%s %lldx%lldx%lld op %d: %s", name, tshapes[s][0],
                          tshapes[s][1], tshapes[s][2], op, gt_last_error());
                TAP_CHECK(e <= 1.0, "%s %lldx%lldx%lld:%c%c beta %g: %s", name, tshapes[s][0],
                          tshapes[s][1], tshapes[s][2], op & 1 ? 'T' : 'N', op >> 1 ? 'T' : 'N',
                          beta, res.text);
                printf("# %s %lldx%lldx%lld:%c%c beta=%g |err| / bound %.3g\n", name,
                       tshapes[s][0], tshapes[s][1], tshapes[s][2], op & 1 ? 'T' : 'N',
                       op >> 1 ? 'T' : 'N', beta, e);
            }
    unsetenv("GEMMTUNE_TUNE_MAX_CANDIDATES");
}

/* ===== every candidate, graded by the test (the sweep suite) ===== */

/* What one tuning's candidates came to, as the test graded them. */
typedef struct {
    int timed;          /* candidates timed (each graded here) */
    int right;          /* of them, within prob_bound on the test's own data */
    int disagree;       /* the test's verdict differs from the verifier's */
    int wgmma, cluster, wsplit, simt_packed; /* right ones of these kinds (sweep_kind) */
    double worst;       /* the worst |err| / bound of the right ones */
} sweep_counts;

static void sweep_limits(const char *max) {
    setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", max, 1);
    setenv("GEMMTUNE_TUNE_VERIFY_ALL", "1", 1);
}
static void sweep_limits_end(void) {
    unsetenv("GEMMTUNE_TUNE_VERIFY_ALL");
    unsetenv("GEMMTUNE_TUNE_MAX_CANDIDATES");
}

/* Tunes p's key over the whole space (every timed candidate verified by the library:
 * GEMMTUNE_TUNE_VERIFY_ALL, set by sweep_limits), then launches each timed candidate
 * itself (gt_kern_get and gt_kern_run, the entry that runs a named configuration) on the
 * test's buffers and grades its output against the test's float64 CPU reference. Each
 * must be right, and the verifier's verdict must agree: right where it passed, wrong
 * where it rejected. Then p's own call runs the winner (the plan the tuning made) and is
 * graded too. The counts in *out. */
static void sweep_problem(prob *p, const char *name, sweep_counts *out) {
    memset(out, 0, sizeof *out);
    gr_ref ref;
    prob_reference(p, &ref);
    gt_tune_report rep;
    int source = 0;
    gt_status st = tune_prob(p, &rep, &source);
    TAP_CHECK(st == GT_SUCCESS && !rep.skipped, "%s: tuning: %s %s", name, gt_status_string(st),
              st == GT_SUCCESS ? rep.why : gt_last_error());
    gt_devctx *dc = NULL;
    gt_key key;
    if (st == GT_SUCCESS) st = prob_key(p, &dc, &key);
    for (int c = 0; st == GT_SUCCESS && c < rep.ncands; c++) {
        const gt_tune_cand *cd = &rep.cands[c];
        if (cd->time_us < 0) continue;
        char text[GT_DB_CONFIG_MAX];
        gt_kcfg_format(&cd->cfg, text, sizeof text);
        out->timed++;
        gt_kern k;
        gt_status ks = gt_kern_get(&cd->cfg, &key, dc->arch, 1, &k);
        TAP_CHECK(ks == GT_SUCCESS, "%s: %s does not load: %s", name, text, gt_last_error());
        if (ks != GT_SUCCESS) continue;
        prob_reset_c(p);
        const gt_gemm g = prob_gemm(p, p->dC);
        ks = gt_kern_run(&k, &g, 0);
        if (ks == GT_SUCCESS && gt_cu.ctx_synchronize() != CUDA_SUCCESS) ks = GT_CUDA_ERROR;
        gt_kern_unload(&k);
        TAP_CHECK(ks == GT_SUCCESS, "%s: %s does not run: %s", name, text, gt_last_error());
        if (ks != GT_SUCCESS) continue;
        prob_fetch_c(p, p->dC);
        gr_result res;
        const double e = prob_grade(p, &ref, &res);
        const int right = e <= 1.0, passed = cd->status == GT_TR_OK;
        TAP_CHECK(right, "%s: candidate %s wrong (verifier: %s): %s", name, text,
                  gt_tune_result_name(cd->status), res.text);
        TAP_CHECK(right == passed, "%s: candidate %s: the test grades it %s, the verifier %s (%s)",
                  name, text, right ? "right" : "wrong", gt_tune_result_name(cd->status),
                  cd->message);
        out->disagree += right != passed;
        if (!right) continue;
        out->right++;
        if (e > out->worst) out->worst = e;
        if (cd->cfg.fam == GT_FAM_WGMMA) {
            out->wgmma++;
            out->cluster += strstr(text, "_t2x") != NULL;
            out->wsplit += cd->cfg.split > 1;
        }
        out->simt_packed += cd->cfg.fam == GT_FAM_SIMT && strstr(text, "_v4_") != NULL;
    }
    TAP_CHECK(out->timed > 0, "%s: no candidate timed", name);
    gt_tune_report_free(&rep);
    /* The call itself, with the winner. */
    prob_reset_c(p);
    st = prob_run(p, NULL);
    gr_result res;
    double e = prob_grade(p, &ref, &res);
    TAP_CHECK(st == GT_SUCCESS && e <= 1.0, "%s: the call after tuning: %s: %s", name,
              gt_status_string(st), st == GT_SUCCESS ? res.text : gt_last_error());
    printf("# %s: %d timed, %d right (worst |err| / bound %.3g), WGMMA %d, clusters %d, "
           "WGMMA split-K %d, packed SIMT %d\n",
           name, out->timed, out->right, out->worst, out->wgmma, out->cluster, out->wsplit,
           out->simt_packed);
    gr_ref_free(&ref);
}

/* One problem of sweep_problem: dt, ops (op bit 0: A transposed, bit 1: B), shape, pads
 * of A's, B's and C's leading dimensions, alpha and beta. */
static void sweep_case(int dt, int op, long long m, long long n, long long k, const long long pad[3],
                       double alpha, double beta, sweep_counts *out) {
    prob p;
    prob_init(&p, dt, op & 1, op >> 1, m, n, k, pad[0], pad[1], pad[2], alpha, beta);
    char name[128];
    snprintf(name, sizeof name, "%s %lldx%lldx%lld:%c%c pads %lld,%lld,%lld beta %g",
             gt_dtype_name(dt), m, n, k, op & 1 ? 'T' : 'N', op >> 1 ? 'T' : 'N', pad[0], pad[1],
             pad[2], beta);
    sweep_problem(&p, name, out);
    prob_free(&p);
}

/* Odd leading dimensions: 16-bit types fall to the 2-byte alignment class (copies through
 * registers), tf32 to 4 bytes; C's own class with its wider elements for the _f32 types.
 * Every candidate graded, and the tensor family's own among them (not the fallback). */
static void gpu_tc_unaligned_every_candidate(void) {
    NEED_GPU();
    if (!tc_supported()) TAP_SKIP("skipped: device below sm_80");
    sweep_limits("8");
    const long long pads[][3] = {{1, 3, 1}, {8, 8, 8}};
    for (int t = 0; t < N_TC_TYPES; t++)
        for (int q = 0; q < 2; q++)
            for (int op = 0; op < 4; op++) {
                sweep_counts sc;
                sweep_case(tc_types[t], op, 77, 45 + q, 130, pads[q], 1.0, 0.25, &sc);
            }
    sweep_limits_end();
}

/* The Hopper WGMMA family, on a 9.0 device: every op pair and tensor type, with leading
 * dimensions that TMA can read directly (multiples of 16 bytes) and odd ones (the
 * operands are copied to aligned memory first), odd M, N and K inside; every candidate
 * graded, and WGMMA candidates among those that are right (tf32 operands stored without
 * k contiguous are read from transposed copies). */
static void gpu_wgmma_every_candidate(void) {
    NEED_GPU();
    if (!is_sm90()) TAP_SKIP("skipped: WGMMA needs a 9.0 device");
    sweep_limits("8");
    /* Pads of 8 keep 600 and 256 rows at multiples of 8 elements: TMA reads the operands
     * themselves. Pads of 1 and 3 make them odd: the cost model ranks WGMMA's (which copy
     * the operands first) below the first 8 on these small shapes, so whether any is
     * among them is not asserted; they must still all be right. */
    const long long pads[][3] = {{8, 8, 8}, {1, 3, 1}};
    for (int t = 0; t < N_TC_TYPES; t++)
        for (int q = 0; q < 2; q++)
            for (int op = 0; op < 4; op++) {
                sweep_counts sc;
                /* Rows of A, B and C are 600 or 256 (m, k) in every op pair but B's N when
                 * transposed: n = 520 keeps that a multiple of 8 too. 64 x 64 tiles give
                 * 90 blocks or more, enough for the space to keep WGMMA ones. */
                sweep_case(tc_types[t], op, 600, op >> 1 ? 520 : 517, 256, pads[q], 1.0, 0.25, &sc);
                /* tf32 with A or B needing a transposed copy (op pairs other than TN): each
                 * copy is a launch of its own, and on this small shape the model ranks them
                 * below MMA; the split-K and 1001 x 999 x 1003 cases below run those. */
                int copies = tc_types[t] == GT_DT_TF32 && op != 1;
                TAP_CHECK(q == 1 || copies || sc.wgmma > 0, "%s op %d: %d WGMMA candidates right",
                          gt_dtype_name(tc_types[t]), op, sc.wgmma);
            }
    static const long long pad787[3] = {7, 8, 7}, pad484[3] = {4, 8, 4}, pad888[3] = {8, 8, 8},
                           pad000[3] = {0, 0, 0};
    sweep_counts sc;
    /* beta 0 with 16-bit C in the 16-byte class. m = 1000: C stored through shared
     * memory by TMA, the last box of each column ending at row 1000, the padding after it
     * (ldc 1008) left as it was. m = 601 (ldc 608): from registers, 8 rows at a time (a
     * TMA store would write rows 601 to 607 with row 600's chunk), the last run partial. */
    static const int c16_types[] = {GT_DT_F16, GT_DT_BF16};
    for (int t = 0; t < 2; t++) {
        const int dt = c16_types[t];
        sweep_case(dt, 0, 1000, 517, 256, pad888, 1.5, 0.0, &sc);
        TAP_CHECK(sc.wgmma > 0, "%s m 1000: no WGMMA candidate right", gt_dtype_name(dt));
        sweep_case(dt, 0, 601, 517, 256, pad787, 1.5, 0.0, &sc);
        TAP_CHECK(sc.wgmma > 0, "%s m 601: no WGMMA candidate right", gt_dtype_name(dt));
    }
    /* Clusters of 2 blocks sharing B's tile (TMA multicast), ranked among the first 16 on
     * this shape: 1100 rows make an odd number of 128-row tiles, so the last cluster's
     * second block computes a tile past M and must store nothing (C's padding is checked).
     * beta 0 and not (16-byte and pairwise stores); 1096 rows with beta 0: TMA stores. */
    sweep_limits("16");
    for (int b = 0; b < 2; b++) {
        sweep_case(GT_DT_BF16, 0, 1100, 1000, 512, pad484, 1.0, b ? 0.25 : 0.0, &sc);
        TAP_CHECK(sc.cluster > 0, "bf16 1100 rows beta %d: no WGMMA cluster right", b);
    }
    sweep_case(GT_DT_BF16, 0, 1096, 1000, 512, pad888, 1.0, 0.0, &sc);
    TAP_CHECK(sc.cluster > 0, "bf16 1096 rows: no WGMMA cluster right");
    /* Split-K: large K on few tiles, every split's partial summed by the last to arrive;
     * beta 0 and not. bf16 and f16_f32: 320 rows (3 tile rows of 128: clusters too);
     * tf32 NN: 640 x 640 x 16384, A's transposed copy after the partials in the
     * workspace (a shape where WGMMA's split-K ranks high: its copy costs). */
    sweep_limits("24");
    static const int split_types[] = {GT_DT_TF32, GT_DT_F16_F32, GT_DT_BF16};
    for (int t = 0; t < 3; t++) {
        const int dt = split_types[t], tf32 = dt == GT_DT_TF32;
        for (int b = 0; b < 2; b++) {
            sweep_case(dt, 0, tf32 ? 640 : 320, tf32 ? 640 : 256, tf32 ? 16384 : 8192, pad888,
                       1.0, b ? 0.25 : 0.0, &sc);
            TAP_CHECK(sc.wsplit > 0, "%s beta %d: no WGMMA split-K right", gt_dtype_name(dt), b);
        }
    }
    /* The copies: a shape where they pay (odd leading dimensions, K 1003; tf32 NN: A
     * transposed, B copied), every one of 32 candidates graded, WGMMA's among them. */
    sweep_limits("32");
    static const int copy_types[] = {GT_DT_TF32, GT_DT_BF16};
    for (int t = 0; t < 2; t++) {
        sweep_case(copy_types[t], 0, 1001, 999, 1003, pad000, 1.0, 0.25, &sc);
        TAP_CHECK(sc.wgmma > 0, "%s 1001x999x1003: no WGMMA candidate right",
                  gt_dtype_name(copy_types[t]));
    }
    sweep_limits_end();
}

/* SIMT f32 on odd leading dimensions (the 4-byte class): candidates with 16-byte vectors
 * read copies of A and B made first in the workspace (gt_kcfg_simt_packs), and access C
 * 4 bytes at a time. Every op pair, beta 0 and not, split-K among them (1000 x 999 in
 * tiles of 128 x 128 fills the SMs only split; the cost model ranks packed candidates
 * first on this shape); every candidate graded, packed ones among those right; C's
 * padding untouched (gr_grade). */
static void gpu_simt_packed_every_candidate(void) {
    NEED_GPU();
    sweep_limits("12");
    /* Each leaves C (1005 or 1001 rows) and so the key in the 4-byte class. */
    const long long pads[][3] = {{1, 3, 5}, {3, 3, 1}};
    for (int q = 0; q < 2; q++)
        for (int op = q; op < 4; op += 2) {
            sweep_counts sc;
            sweep_case(GT_DT_F32, op, 1000, 999, 1001, pads[q], 1.0, op < 2 ? 0.5 : 0.0, &sc);
            TAP_CHECK(sc.simt_packed > 0, "op %d: %d packed SIMT candidates right", op,
                      sc.simt_packed);
        }
    sweep_limits_end();
}

/* fp32 emulated on tf32 tensor cores (f32_3xtf32), with full 24-bit random inputs (the
 * low parts matter: one tf32 product alone is off by about 2^-11, far above the bound,
 * prob_bound's f32 one plus 2^-21 G). Every op pair, beta 0 and not; leading dimensions
 * that TMA reads directly, odd ones (aligned copies first), odd M, N, K, and split-K;
 * every candidate graded, and on a 9.0 device WGMMA candidates among those right where
 * the model ranks them among the first 8 (want_wgmma: a mask of op pairs, bit op). */
static void gpu_f32_3xtf32_every_candidate(void) {
    NEED_GPU();
    const int sm90 = is_sm90();
    sweep_limits("8");
    static const struct {
        long long m, n, k, pad[3];
        int ops, want_wgmma; /* masks of op pairs (bit op: 0 NN, 1 TN, 2 NT, 3 TT) */
    } cases[] = {
        {600, 520, 256, {8, 8, 8}, 15, 2},
        {1001, 999, 1003, {0, 0, 0}, 15, 3},
        {77, 46, 130, {1, 3, 1}, 15, 0},
        {384, 384, 8192, {8, 8, 8}, 3, 3},
    };
    for (int c = 0; c < 4; c++)
        for (int op = 0; op < 4; op++) {
            if (!(cases[c].ops >> op & 1)) continue;
            sweep_counts sc;
            sweep_case(GT_DT_F32_3XTF32, op, cases[c].m, cases[c].n, cases[c].k, cases[c].pad, 1.5,
                       (c + op) % 2 ? 0.0 : 0.25, &sc);
            TAP_CHECK(!sm90 || !(cases[c].want_wgmma >> op & 1) || sc.wgmma > 0,
                      "%lldx%lldx%lld op %d: %d WGMMA candidates right", cases[c].m, cases[c].n,
                      cases[c].k, op, sc.wgmma);
        }
    sweep_limits_end();
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--child") == 0) return child(1, 515, 99, 77);
    if (argc > 2 && strcmp(argv[1], "--child-m") == 0) return child(0, atoll(argv[2]), 96, 80);
    /* A cache of this run's own, so that "this call tunes" holds on every run. */
    char dir[] = "/tmp/gt_gpu_cache_XXXXXX", path[300];
    if (mkdtemp(dir)) {
        snprintf(path, sizeof path, "%s/cache.db", dir);
        setenv("GEMMTUNE_CACHE", path, 1);
    }
    gpu_state = gpu_probe(no_gpu_reason, sizeof no_gpu_reason, 1);
    /* Cases that tune with every candidate timed and verified are the sweep suite
     * (test_gpu_sweep, built with GT_TEST_SWEEP), apart from the default GPU run. */
    static const struct {
        void (*fn)(void);
        const char *name;
        int sweep;
    } cases[] = {
        {gpu_all_ops_odd_shapes, "gpu_all_ops_odd_shapes", 0},
        {gpu_larger_leading_dimensions, "gpu_larger_leading_dimensions", 0},
        {gpu_nan_in_c_with_beta0, "gpu_nan_in_c_with_beta0", 0},
        {gpu_alpha_zero_scales_c, "gpu_alpha_zero_scales_c", 0},
        {gpu_k_zero, "gpu_k_zero", 0},
        {gpu_user_buffers_untouched_by_tuning, "gpu_user_buffers_untouched_by_tuning", 0},
        {gpu_bad_argument_launches_nothing, "gpu_bad_argument_launches_nothing", 0},
        {gpu_threads_same_new_shape, "gpu_threads_same_new_shape", 0},
        {gpu_memory_limit_forces_fallback, "gpu_memory_limit_forces_fallback", 0},
        {gpu_second_process_hits_cache, "gpu_second_process_hits_cache", 0},
        {gpu_helpers_from_binary_cache, "gpu_helpers_from_binary_cache", 0},
        {gpu_failed_candidates_never_chosen, "gpu_failed_candidates_never_chosen", 0},
        {gpu_slow_compile_left_behind, "gpu_slow_compile_left_behind", 0},
        {gpu_screening_and_held_reported, "gpu_screening_and_held_reported", 0},
        {gpu_f64_all_ops_odd_shapes, "gpu_f64_all_ops_odd_shapes", 0},
        {gpu_f64_nan_in_c_with_beta0, "gpu_f64_nan_in_c_with_beta0", 0},
        {gpu_f64_k_zero_and_alpha_zero, "gpu_f64_k_zero_and_alpha_zero", 0},
        {gpu_f64_misaligned_launches_nothing, "gpu_f64_misaligned_launches_nothing", 0},
        {gpu_f32_and_f64_same_shape, "gpu_f32_and_f64_same_shape", 0},
        {gpu_splitk_shapes_one_stream, "gpu_splitk_shapes_one_stream", 0},
        {gpu_dmma_spill_refused, "gpu_dmma_spill_refused", 0},
        {gpu_simt_packed_every_candidate, "gpu_simt_packed_every_candidate", 1},
        {gpu_tc_all_ops_odd_shapes, "gpu_tc_all_ops_odd_shapes", 0},
        {gpu_tc_unaligned_every_candidate, "gpu_tc_unaligned_every_candidate", 1},
        {gpu_wgmma_every_candidate, "gpu_wgmma_every_candidate", 1},
        {gpu_f32_3xtf32_every_candidate, "gpu_f32_3xtf32_every_candidate", 1},
    };
#ifdef GT_TEST_SWEEP
    const int sweep = 1;
#else
    const int sweep = 0;
#endif
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (cases[i].sweep == sweep) tap_run(cases[i].fn, cases[i].name);
    gt_release();
    return tap_done();
}
