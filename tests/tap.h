/*
 * tap.h: a minimal TAP producer for gemmtune's tests (meson runs them with
 * protocol 'tap' and counts every case).
 *
 * A test file defines static void functions and lists them in main:
 *     TAP_RUN(test_name);  // runs one case and prints "ok N - test_name"
 * Inside a case, TAP_CHECK(cond, fmt, ...) records a failure with its line and goes on;
 * TAP_SKIP("reason") marks the case skipped and returns.
 * main ends with `return tap_done();`.
 */
#ifndef GT_TAP_H
#define GT_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int tap_n, tap_failed_cases, tap_case_failed, tap_case_skipped;
static char tap_skip_reason[256];

#define TAP_CHECK(cond, ...)                                                               \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            tap_case_failed = 1;                                                           \
            printf("#   FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);                   \
            printf(__VA_ARGS__);                                                           \
            printf("\n");                                                                  \
            fflush(stdout);                                                                \
        }                                                                                  \
    } while (0)

#define TAP_SKIP(...)                                                                      \
    do {                                                                                   \
        tap_case_skipped = 1;                                                              \
        snprintf(tap_skip_reason, sizeof tap_skip_reason, __VA_ARGS__);                    \
        return;                                                                            \
    } while (0)

/* 1 when name is one of the comma-separated names in list. */
static int tap_listed(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        p += len + (end != NULL);
    }
    return 0;
}

static double tap_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* TAP_ONLY=name[,name...] runs those cases alone (the others are reported skipped): for
 * rerunning slow cases on a GPU machine. TAP_EXCEPT=name[,name...] runs all but those (they
 * are reported skipped): for a tool that breaks a case by itself (tools/gpu_run.sh
 * capture-memcheck). Each case's wall time follows it as a comment. */
static void tap_run(void (*fn)(void), const char *name) {
    tap_case_failed = 0;
    tap_case_skipped = 0;
    tap_skip_reason[0] = 0;
    const char *only = getenv("TAP_ONLY");
    if (only && *only && !tap_listed(only, name)) {
        printf("ok %d - %s # SKIP not selected (TAP_ONLY=%s)\n", ++tap_n, name, only);
        return;
    }
    const char *except = getenv("TAP_EXCEPT");
    if (except && *except && tap_listed(except, name)) {
        printf("ok %d - %s # SKIP left out (TAP_EXCEPT=%s)\n", ++tap_n, name, except);
        return;
    }
    double t0 = tap_now_s();
    fn();
    double seconds = tap_now_s() - t0;
    tap_n++;
    if (tap_case_skipped && !tap_case_failed) {
        printf("ok %d - %s # SKIP %s\n", tap_n, name, tap_skip_reason);
        fprintf(stderr, "%s: %s\n", name, tap_skip_reason);
    } else if (tap_case_failed) {
        printf("not ok %d - %s\n", tap_n, name);
        tap_failed_cases++;
    } else {
        printf("ok %d - %s\n", tap_n, name);
    }
    printf("# %s: %.2f s\n", name, seconds);
    fflush(stdout);
}

#define TAP_RUN(fn) tap_run(fn, #fn)

static int tap_done(void) {
    printf("1..%d\n", tap_n);
    return tap_failed_cases ? 1 : 0;
}

#endif
