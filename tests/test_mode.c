/*
 * test_mode.c: the policy settings of gemmtune.h (gt_set_mode, gt_get_mode,
 * gt_set_tune_async, gt_set_specialize) and their environment variables, no GPU needed.
 * Each case that depends on the environment as first read runs in a forked child, since
 * the library reads GEMMTUNE_MODE once per process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dispatch.h"
#include "kcfg.h"
#include "gemmtune.h"
#include "tap.h"

static int warnings;
static char last_warning[512];

static void capture(int level, const char *message, void *user) {
    (void)user;
    if (level == 2) {
        warnings++;
        snprintf(last_warning, sizeof last_warning, "%s", message);
    }
}

/* Runs fn in a child with environment variable `name` = value (NULL: unset); returns
 * its exit code. */
static int in_child_env(const char *name, const char *value, int (*fn)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (value) setenv(name, value, 1);
        else unsetenv(name);
        _exit(fn());
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static int in_child(const char *value, int (*fn)(void)) {
    return in_child_env("GEMMTUNE_MODE", value, fn);
}

static int in_child_specialize(const char *value, int (*fn)(void)) {
    return in_child_env("GEMMTUNE_SPECIALIZE", value, fn);
}

static int expect_specialize(void) { return gt_dispatch_specialize() == 1 ? 0 : 1; }
static int expect_generic(void) { return gt_dispatch_specialize() == 0 ? 0 : 1; }
static int specialize_api_overrides_env(void) {
    if (gt_dispatch_specialize() != 0) return 1;
    gt_set_specialize(1);
    if (gt_dispatch_specialize() != 1) return 2;
    gt_set_specialize(0);
    return gt_dispatch_specialize() == 0 ? 0 : 3;
}

static int expect_tune(void) { return gt_get_mode() == GT_MODE_TUNE ? 0 : 1; }
static int expect_cached(void) { return gt_get_mode() == GT_MODE_CACHED ? 0 : 1; }
static int expect_off(void) { return gt_get_mode() == GT_MODE_OFF ? 0 : 1; }

static int bogus_warns_once(void) {
    gt_set_log_callback(capture, NULL);
    gt_set_log_level(2);
    int a = gt_get_mode(), b = gt_get_mode();
    if (a != GT_MODE_TUNE || b != GT_MODE_TUNE) return 1;
    if (warnings != 1) return 2;
    return strstr(last_warning, "GEMMTUNE_MODE") && strstr(last_warning, "sideways") ? 0 : 3;
}

static int api_overrides_env(void) {
    if (gt_get_mode() != GT_MODE_OFF) return 1;
    if (gt_set_mode(GT_MODE_TUNE) != GT_SUCCESS || gt_get_mode() != GT_MODE_TUNE) return 2;
    return 0;
}

static void mode_from_environment(void) {
    TAP_CHECK(in_child(NULL, expect_tune) == 0, "unset: tune is the default");
    TAP_CHECK(in_child("tune", expect_tune) == 0, "tune");
    TAP_CHECK(in_child("cached", expect_cached) == 0, "cached");
    TAP_CHECK(in_child("OFF", expect_off) == 0, "OFF (case does not matter)");
    TAP_CHECK(in_child("", expect_tune) == 0, "empty: the default");
}

static void bogus_mode_warns_once_and_tunes(void) {
    int code = in_child("sideways", bogus_warns_once);
    TAP_CHECK(code == 0, "child code %d (1: not tune, 2: not exactly one warning, 3: wording)",
              code);
}

static void api_setting_wins_over_environment(void) {
    TAP_CHECK(in_child("off", api_overrides_env) == 0, "gt_set_mode must override GEMMTUNE_MODE");
}

static void invalid_mode_is_refused(void) {
    TAP_CHECK(gt_set_mode(GT_MODE_CACHED) == GT_SUCCESS, "set cached");
    gt_status s = gt_set_mode((gt_mode)7);
    TAP_CHECK(s == GT_INVALID_VALUE, "mode 7: status %d", s);
    TAP_CHECK(gt_last_error_arg() == 1, "argument position %d", gt_last_error_arg());
    TAP_CHECK(strstr(gt_last_error(), "mode 7") != NULL, "message: %s", gt_last_error());
    TAP_CHECK(gt_get_mode() == GT_MODE_CACHED, "a refused mode must change nothing");
    s = gt_set_mode((gt_mode)-1);
    TAP_CHECK(s == GT_INVALID_VALUE && gt_get_mode() == GT_MODE_CACHED, "mode -1");
    TAP_CHECK(gt_set_mode(GT_MODE_TUNE) == GT_SUCCESS && gt_get_mode() == GT_MODE_TUNE, "back");
}

static void specialize_setting(void) {
    TAP_CHECK(in_child_specialize(NULL, expect_specialize) == 0, "unset: on");
    TAP_CHECK(in_child_specialize("1", expect_specialize) == 0, "1: on");
    TAP_CHECK(in_child_specialize("0", expect_generic) == 0, "0: off");
    TAP_CHECK(in_child_specialize("0", specialize_api_overrides_env) == 0,
              "gt_set_specialize must override GEMMTUNE_SPECIALIZE");
}

/* Which configurations may give way to their exact twins: every generic one, of every
 * family (DMMA's small warp tiles too, whose exact kernels wait for their last group's
 * fragments before the K step's barrier), and never one that is exact already. */
static void specialize_rule(void) {
    static const struct { const char *cfg; int may; } cases[] = {
        {"f1_16x64x32_w8x16_t1x2_s4_v2_k2_r1_g1", 1},
        {"f1_32x32x32_w8x16_t1x2_s4_v2_k32_r1_g1", 1},
        {"f1_16x64x32_w8x16_t1x2_s4_v2_k2_r1", 0}, /* already exact */
        {"f1_64x64x16_w32x32_t4x4_s4_v2_k1_r1_g1", 1},
        {"f0_32x256x16_w32x64_t8x8_s2_v4_k8_r1_g1", 1},
        {"f0_32x256x16_w32x64_t8x8_s2_v4_k8_r1", 0}, /* already exact */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gt_kcfg c;
        char why[200] = "";
        int parsed = gt_kcfg_parse(cases[i].cfg, &c, why, sizeof why) == 0;
        TAP_CHECK(parsed, "%s: %s", cases[i].cfg, why);
        if (parsed)
            TAP_CHECK(gt_dispatch_may_specialize(&c) == cases[i].may, "%s: %d", cases[i].cfg,
                      gt_dispatch_may_specialize(&c));
    }
}

/* With no background thread started, gt_wait_background returns at once (a hang here
 * is the test's timeout). */
static void wait_background_without_worker(void) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    gt_wait_background();
    gt_wait_background();
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    TAP_CHECK(s < 0.5, "returned after %.3f s", s);
}

/* Without a driver every mode still answers with a status, never a crash. */
static void no_driver_any_mode(void) {
    setenv("GEMMTUNE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    const gt_mode modes[] = {GT_MODE_TUNE, GT_MODE_CACHED, GT_MODE_OFF};
    for (int i = 0; i < 3; i++) {
        gt_set_mode(modes[i]);
        gt_set_tune_async(i == 0);
        gt_status s = gemm_tuned(GT_OP_N, GT_OP_N, 8, 8, 8, 1.0f, (const float *)0x1000, 8,
                                 (const float *)0x1000, 8, 0.0f, (float *)0x1000, 8, NULL);
        TAP_CHECK(s == GT_NO_DRIVER, "mode %d: status %d (%s)", (int)modes[i], s,
                  gt_last_error());
        s = gemm_tuned_d(GT_OP_N, GT_OP_N, 8, 8, 8, 1.0, (const double *)0x1000, 8,
                         (const double *)0x1000, 8, 0.0, (double *)0x1000, 8, NULL);
        TAP_CHECK(s == GT_NO_DRIVER, "mode %d, gemm_tuned_d: status %d (%s)", (int)modes[i], s,
                  gt_last_error());
    }
    gt_set_tune_async(0);
    gt_set_mode(GT_MODE_TUNE);
    gt_release();
}

int main(void) {
    TAP_RUN(mode_from_environment);
    TAP_RUN(bogus_mode_warns_once_and_tunes);
    TAP_RUN(api_setting_wins_over_environment);
    TAP_RUN(invalid_mode_is_refused);
    TAP_RUN(specialize_setting);
    TAP_RUN(specialize_rule);
    TAP_RUN(wait_background_without_worker);
    TAP_RUN(no_driver_any_mode);
    return tap_done();
}
