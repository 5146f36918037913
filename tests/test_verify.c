/*
 * test_verify.c: the tuner's verifier (tuner/verify.h) rejects wrong kernels and passes
 * right ones.
 *
 * verify_bounds_order (no GPU): the tolerances sit between what a right kernel of each
 * type gives and what one computing in the next coarser type gives.
 * verify_rejects_mutants: for every data type the device runs, a tuning of two candidates
 * in which the fastest is made a wrong kernel through GEMMTUNE_TEST_FAULT (alpha off by 1%,
 * one wrong corner output, the last row of tiles unwritten, inputs rounded to a coarser
 * type): that candidate must fail verification and the other win; without a fault both
 * must pass. Each line of the table it prints is one type and fault.
 * verify_time_per_shape: the outputs a check covers and its time, up to 8192^3.
 * Without a CUDA device the GPU cases print "skipped: no CUDA device" (gpu_probe.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "cu.h"
#include "devctx.h"
#include "gemmtune.h"
#include "gpu_probe.h"
#include "kcfg.h"
#include "tap.h"
#include "tune.h"
#include "verify.h"

GPU_TEST_STATE();

static gt_key key_of(const gt_devctx *dc, int dtype, int opa, int opb, long long m, long long n,
                     long long k, double beta) {
    /* Addresses are only looked at for their alignment: the tuner works on its own arena. */
    long long lda = opa ? k : m, ldb = opb ? n : k;
    gt_gemm g = {dtype, opa, opb, m, n, k, 1.0, beta, (void *)(uintptr_t)0x100000,
                 (void *)(uintptr_t)0x200000, (void *)(uintptr_t)0x300000, lda, ldb, m, NULL};
    gt_key key;
    gt_call_key(dc, &g, &key);
    return key;
}

/* ===== bounds (no GPU) ===== */

/* Root-mean-square relative error of a product of random inputs each rounded to nearest
 * with unit roundoff u (uniform relative error in [-u, u]: u / sqrt(3) each, two inputs). */
static double rms_rounded(double u) { return sqrt(2.0) * u / sqrt(3.0); }

static void verify_bounds_order(void) {
    gt_key key;
    memset(&key, 0, sizeof key);
    for (long long k = 16; k <= 1 << 20; k *= 8) {
        key.k = k;
        const double rk = 0.41 * sqrt((double)k); /* recursive summation, in units of u */
        key.dtype = GT_DT_F32;
        double t = gt_verify_tolerance(&key);
        TAP_CHECK(t >= 5 * rk * 0x1p-24, "f32 K %lld: %.3g below 5x a right kernel's error", k, t);
        if (k <= 65536)
            TAP_CHECK(t < rms_rounded(0x1p-11), "f32 K %lld: %.3g passes inputs rounded to tf32", k, t);
        key.dtype = GT_DT_F64;
        t = gt_verify_tolerance(&key);
        TAP_CHECK(t >= 5 * 2 * rk * 0x1p-53 && t < rms_rounded(0x1p-24),
                  "f64 K %lld: %.3g", k, t);
        key.dtype = GT_DT_TF32;
        t = gt_verify_tolerance(&key);
        /* tf32 truncates: about 1.08 * 2^-10 for random data (verify.h). */
        TAP_CHECK(t >= 1.3 * 1.08 * 0x1p-10, "tf32 K %lld: %.3g below 1.3x tf32's own error", k, t);
        if (k <= 4096)
            TAP_CHECK(t < rms_rounded(0x1p-8) / 1.5, "tf32 K %lld: %.3g passes bf16 inputs", k, t);
        key.dtype = GT_DT_F16;
        t = gt_verify_tolerance(&key);
        if (k <= 4096)
            TAP_CHECK(t < rms_rounded(0x1p-8) / 2, "f16 K %lld: %.3g passes 8-bit inputs", k, t);
        key.dtype = GT_DT_BF16;
        t = gt_verify_tolerance(&key);
        TAP_CHECK(t >= 0x1p-8, "bf16 K %lld: %.3g below one rounding of C", k, t);
        if (k <= 4096) TAP_CHECK(t < 0.01 / 2, "bf16 K %lld: %.3g passes alpha off by 1%%", k, t);
    }
    gt_verify_bounds b;
    gt_verify_bounds_of(GT_DT_BF16_F32, &b);
    TAP_CHECK(b.u_in == 0 && b.u_out == 0x1p-24 && b.u_acc == 0x1p-24, "bf16_f32 roundoffs");
    gt_verify_bounds_of(GT_DT_F32_3XTF32, &b);
    TAP_CHECK(b.u_in == 0x1p-20 && b.u_out == 0x1p-24, "f32_3xtf32 roundoffs");
}

/* ===== mutants ===== */

static gt_status current_devctx(gt_devctx **dc) {
    CUcontext ctx;
    gt_cu.ctx_get_current(&ctx);
    return gt_devctx_get(ctx, dc);
}

static const char *const faults[] = {"none", "verify", "corner", "droprow", "coarse", "rerun"};
#define NFAULTS 6

/* Tunes key with two candidates under fault f at the fastest ("none": no fault).
 * Returns 1 when the outcome is the expected one, with a line for the table in line. */
static int tune_with_fault(gt_devctx *dc, const gt_key *key, int f, char *line, size_t size) {
    char spec[64];
    snprintf(spec, sizeof spec, "%s:0", faults[f]);
    if (f) setenv("GEMMTUNE_TEST_FAULT", spec, 1);
    gt_tune_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.max_candidates = 2;
    opts.budget_s = 30;
    opts.verify_all = 1;
    gt_kern win;
    gt_tune_report rep;
    gt_status st = gt_tune(dc, key, &opts, &win, &rep);
    unsetenv("GEMMTUNE_TEST_FAULT");
    int ok = 0;
    if (st != GT_SUCCESS || rep.skipped) {
        snprintf(line, size, "tuning: %s %s", gt_status_string(st), rep.skipped ? rep.why : gt_last_error());
    } else {
        int timed = 0;
        for (int i = 0; i < rep.ncands; i++)
            timed += rep.cands[i].status == GT_TR_OK || rep.cands[i].status == GT_TR_VERIFY_FAILED;
        const gt_tune_cand *c0 = &rep.cands[0];
        char cfg[64];
        gt_kcfg_format(&c0->cfg, cfg, sizeof cfg);
        if (timed < 2) {
            snprintf(line, size, "only %d candidates ran", timed);
        } else if (f == 0) {
            ok = rep.verify_failed == 0;
            snprintf(line, size, "%s: %s", ok ? "both pass" : "a right kernel rejected",
                     rep.verify_failed ? c0->message : cfg);
        } else {
            /* The mutant (the fastest, checked first) rejected, the other chosen. */
            char wcfg[64];
            gt_kcfg_format(&rep.winner, wcfg, sizeof wcfg);
            ok = c0->status == GT_TR_VERIFY_FAILED && rep.verify_failed == 1 &&
                 strcmp(wcfg, cfg) != 0;
            snprintf(line, size, "%s (%s): %s", ok ? "rejected" : "NOT rejected", cfg,
                     c0->status == GT_TR_VERIFY_FAILED ? c0->message : "passed");
        }
        gt_kern_unload(&win);
    }
    gt_tune_report_free(&rep);
    return ok;
}

static int tensor_ok(const gt_devctx *dc, int dtype) {
    return !gt_dtype_tensor_only(dtype) || dc->dev.cc_major >= 8;
}

static void verify_rejects_mutants(void) {
    NEED_GPU();
    gt_devctx *dc;
    if (current_devctx(&dc) != GT_SUCCESS) {
        TAP_CHECK(0, "context state: %s", gt_last_error());
        return;
    }
    /* 1100 x 1000 outputs: over 512 x 512, so the check covers edge bands and a sample,
     * not everything; 1100 rows end in a partial tile for every BM but 4, 10, 20 and 50's
     * divisors. Each type takes another op pair; beta != 0 (the droprow mutant leaves C0's
     * values, finite, where outputs belong). */
    static const int types[] = {GT_DT_F32, GT_DT_F64, GT_DT_TF32, GT_DT_F16,
                                GT_DT_F16_F32, GT_DT_BF16, GT_DT_BF16_F32, GT_DT_F32_3XTF32};
    int rows = 0;
    printf("# %-11s %-8s outcome\n", "type", "fault");
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const int dt = types[t];
        if (!tensor_ok(dc, dt)) continue;
        gt_key key = key_of(dc, dt, (int)t & 1, (int)(t >> 1) & 1, 1100, 1000, 512, 0.5);
        for (int f = 0; f < NFAULTS; f++) {
            char line[400];
            int ok = tune_with_fault(dc, &key, f, line, sizeof line);
            printf("# %-11s %-8s %s\n", gt_dtype_name(dt), faults[f], line);
            TAP_CHECK(ok, "%s %s: %s", gt_dtype_name(dt), faults[f], line);
            rows++;
        }
    }
    TAP_CHECK(rows >= 2 * NFAULTS, "only %d type and fault pairs ran", rows);
}

/* ===== time ===== */

/* A check of a result that is not there (C never written: NaN), for its coverage and
 * time: every covered output fails, so `checked` and `nonfinite` both count them. */
static void verify_time_per_shape(void) {
    NEED_GPU();
    gt_devctx *dc;
    if (current_devctx(&dc) != GT_SUCCESS) {
        TAP_CHECK(0, "context state: %s", gt_last_error());
        return;
    }
    static const struct {
        int dt;
        long long m, n, k, want; /* want: outputs checked */
    } sh[] = {
        {GT_DT_F32, 512, 512, 512, 512 * 512},
        {GT_DT_F32, 1100, 1000, 512, 512 * 1000 + 588 * 512 + 256 * 256},
        {GT_DT_BF16, 4096, 4096, 4096, 512 * 4096 + 3584 * 512 + 256 * 256},
        {GT_DT_F32, 8192, 8192, 8192, 512 * 8192 + 7680 * 512 + 256 * 256},
        {GT_DT_BF16, 8192, 8192, 8192, 512 * 8192 + 7680 * 512 + 256 * 256},
        {GT_DT_F64, 8192, 8192, 8192, 512 * 8192 + 7680 * 512 + 256 * 256},
        {GT_DT_BF16, 14336, 1, 4096, 14336},
        {GT_DT_F32, 4, 8, 3000000, 32},
    };
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        const int dt = sh[i].dt;
        if (!tensor_ok(dc, dt)) continue;
        const long long m = sh[i].m, n = sh[i].n, k = sh[i].k;
        size_t ei = (size_t)gt_dtype_in_size(dt), eo = (size_t)gt_dtype_out_size(dt);
        CUdeviceptr A = 0, B = 0, C = 0;
        CUresult r = gt_cu.mem_alloc(&A, (size_t)(m * k) * ei);
        if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&B, (size_t)(k * n) * ei);
        if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&C, (size_t)(m * n) * eo);
        gt_status st = r == CUDA_SUCCESS ? GT_SUCCESS : gt_cu_fail(r, "cuMemAlloc");
        if (st == GT_SUCCESS) st = gt_aux_fill(dc, NULL, gt_dtype_in(dt), A, m * k, 1, 0, 0);
        if (st == GT_SUCCESS) st = gt_aux_fill(dc, NULL, gt_dtype_in(dt), B, k * n, 2, 0, 0);
        if (st == GT_SUCCESS) st = gt_aux_fill(dc, NULL, gt_dtype_out(dt), C, m * n, 0, 1, NAN);
        gt_gemm g = {dt, 0, 0, m, n, k, 1.0, 0.0, GT_PTR(A), GT_PTR(B), GT_PTR(C), m, k, m, NULL};
        gt_key key;
        gt_call_key(dc, &g, &key);
        gt_verify_result vr;
        /* Twice: the first loads the helper kernels. */
        if (st == GT_SUCCESS) st = gt_verify(dc, &key, &g, NULL, m, &vr);
        if (st == GT_SUCCESS) st = gt_verify(dc, &key, &g, NULL, m, &vr);
        TAP_CHECK(st == GT_SUCCESS, "%s %lldx%lldx%lld: %s", gt_dtype_name(dt), m, n, k, gt_last_error());
        if (st == GT_SUCCESS) {
            printf("# %-5s %lldx%lldx%lld: %lld outputs checked in %.4f s\n", gt_dtype_name(dt), m, n,
                   k, vr.checked, vr.seconds);
            TAP_CHECK(vr.checked == sh[i].want && vr.nonfinite == vr.checked && !vr.pass,
                      "%s %lldx%lldx%lld: %lld checked (want %lld), %lld non-finite, pass %d",
                      gt_dtype_name(dt), m, n, k, vr.checked, sh[i].want, vr.nonfinite, vr.pass);
        }
        if (A) gt_cu.mem_free(A);
        if (B) gt_cu.mem_free(B);
        if (C) gt_cu.mem_free(C);
    }
}

int main(void) {
    char dir[] = "/tmp/gt_verify_cache_XXXXXX", path[300];
    if (mkdtemp(dir)) {
        snprintf(path, sizeof path, "%s/cache.db", dir);
        setenv("GEMMTUNE_CACHE", path, 1);
    }
    gpu_state = gpu_probe(no_gpu_reason, sizeof no_gpu_reason, 1);
    TAP_RUN(verify_bounds_order);
    TAP_RUN(verify_rejects_mutants);
    TAP_RUN(verify_time_per_shape);
    gt_release();
    return tap_done();
}
