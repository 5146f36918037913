/*
 * test_cli.c: the gemmtune command (tuner/cli.c), run as a child process.
 *
 * The command's path comes from GEMMTUNE_EXE (set by tests/meson.build; else the
 * `gemmtune` next to this test's directory). Each run gets fork+exec with stdout and
 * stderr captured in files, a fresh GEMMTUNE_CACHE in a mkdtemp() directory (removed at
 * the end), small tuning budgets, and a time limit. Cases: --help and usage errors (exit
 * 2 with a message naming what is wrong: verbs, shapes, options, shape files); info, tune
 * and run without a driver (GEMMTUNE_LIBCUDA pointing at nothing: exit 1 with the
 * reason); info and run on this machine as it is (exit 1 without a GPU; with one, exit 0
 * and a passing check); list on a missing cache, through --cache, on a cache holding
 * winners written by the library, and on a file of random bytes (exit 1, no crash, file
 * untouched).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "gemmtune.h"
#include "kcfg.h"
#include "kernel_sources.h"
#include "key.h"
#include "rtc.h"
#include "tap.h"

/* ===== running the command ===== */

static char exe[PATH_MAX + 32];
static char root[256];        /* mkdtemp directory */
static char default_cache[PATH_MAX];
static int have_gpu = -1;     /* decided by `gemmtune info` */

#define RUN_LIMIT_S 45

typedef struct {
    int code;        /* exit status; 128 + signal when killed */
    int signaled;
    int timed_out;
    char *out, *err; /* malloc'd, NUL-terminated */
} result;

static void result_free(result *r) {
    free(r->out), free(r->err);
    r->out = r->err = NULL;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return calloc(1, 1);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb, cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf ? buf : calloc(1, 1);
}

/* Runs `gemmtune args...`. env: "NAME=VALUE" to set, "NAME" to unset, applied after the
 * defaults (GEMMTUNE_CACHE in the temp directory, small tuning budgets). */
static void run_cmd(result *r, const char *const *env, const char *const *args) {
    memset(r, 0, sizeof *r);
    char outp[PATH_MAX], errp[PATH_MAX];
    snprintf(outp, sizeof outp, "%s/stdout.txt", root);
    snprintf(errp, sizeof errp, "%s/stderr.txt", root);
    const char *argv[64];
    int argc = 0;
    argv[argc++] = exe;
    for (int i = 0; args && args[i] && argc < 63; i++) argv[argc++] = args[i];
    argv[argc] = NULL;

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0) _exit(126);
        dup2(in, 0), dup2(out, 1), dup2(err, 2);
        setenv("GEMMTUNE_CACHE", default_cache, 1);
        setenv("GEMMTUNE_TUNE_MAX_CANDIDATES", "4", 1);
        setenv("GEMMTUNE_TUNE_BUDGET_S", "1", 1);
        unsetenv("GEMMTUNE_LOG");
        for (int i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            if (eq) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
                setenv(name, eq + 1, 1);
            } else {
                unsetenv(env[i]);
            }
        }
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    TAP_CHECK(pid > 0, "fork: %s", strerror(errno));
    if (pid <= 0) {
        r->code = -1;
        r->out = calloc(1, 1), r->err = calloc(1, 1);
        return;
    }
    int status = 0;
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int waited = 0;; waited++) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        if (waited >= RUN_LIMIT_S * 100) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            r->timed_out = 1;
            break;
        }
        nanosleep(&tick, NULL);
    }
    if (WIFEXITED(status)) {
        r->code = WEXITSTATUS(status);
    } else {
        r->signaled = 1;
        r->code = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
    r->out = slurp(outp);
    r->err = slurp(errp);
    TAP_CHECK(!r->timed_out, "'%s %s' ran past %d s", exe, args && args[0] ? args[0] : "",
              RUN_LIMIT_S);
    TAP_CHECK(r->code != 127 && r->code != 126, "could not run %s", exe);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ENV(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Prints what the command said when a check on it failed. */
#define CHECK_RUN(r, cond, ...)                                                            \
    do {                                                                                   \
        TAP_CHECK(cond, __VA_ARGS__);                                                      \
        if (!(cond))                                                                       \
            printf("#   exit %d\n#   stdout: %.600s\n#   stderr: %.600s\n", (r)->code,        \
                   (r)->out ? (r)->out : "", (r)->err ? (r)->err : "");                    \
    } while (0)

/* Usage error: exit 2, a message on stderr containing `want` (NULL: any), no crash. */
static void expect_usage_error(const char *const *env, const char *const *args,
                               const char *want, const char *what) {
    result r;
    run_cmd(&r, env, args);
    CHECK_RUN(&r, r.code == 2, "%s: exit %d, want 2", what, r.code);
    CHECK_RUN(&r, r.err[0] != 0, "%s: nothing on stderr", what);
    if (want) CHECK_RUN(&r, strstr(r.err, want) != NULL, "%s: stderr lacks '%s'", what, want);
    result_free(&r);
}

static const char *case_path(const char *name, char *buf, size_t size) {
    snprintf(buf, size, "%s/%s", root, name);
    return buf;
}

static int write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

#define NO_DRIVER_ENV "GEMMTUNE_LIBCUDA=/nonexistent/gemmtune-test-libcuda.so.1"

/* ===== help and usage ===== */

static void cli_help(void) {
    const char *const *variants[3] = {ARGS("--help"), ARGS("-h"), ARGS("help")};
    for (int v = 0; v < 3; v++) {
        result r;
        run_cmd(&r, NULL, variants[v]);
        CHECK_RUN(&r, r.code == 0, "%s: exit %d", variants[v][0], r.code);
        static const char *verbs[] = {"info", "tune", "list", "run", "usage", "SHAPE",
                                      "--cache", "GEMMTUNE_CACHE"};
        for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
            CHECK_RUN(&r, strstr(r.out, verbs[i]) != NULL, "%s: help lacks '%s'", variants[v][0],
                      verbs[i]);
        for (int i = 0; i < gt_nkparams; i++)
            CHECK_RUN(&r, strstr(r.out, gt_kparams[i].name) != NULL,
                      "%s: help lacks parameter %s", variants[v][0], gt_kparams[i].name);
        for (int i = 0; i < gt_nkconstraints; i++)
            CHECK_RUN(&r, strstr(r.out, gt_kconstraints[i].name) != NULL,
                      "%s: help lacks constraint %s", variants[v][0], gt_kconstraints[i].name);
        result_free(&r);
    }
    /* Verbs take --help too. */
    const char *const *verbs[4] = {ARGS("info", "--help"), ARGS("tune", "--help"),
                                   ARGS("list", "--help"), ARGS("run", "--help")};
    for (int v = 0; v < 4; v++) {
        result r;
        run_cmd(&r, NULL, verbs[v]);
        CHECK_RUN(&r, r.code == 0 && strstr(r.out, "usage") != NULL, "%s --help: exit %d",
                  verbs[v][0], r.code);
        result_free(&r);
    }
    result r;
    run_cmd(&r, NULL, ARGS("--version"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, GT_VERSION_STRING) != NULL, "--version: exit %d",
              r.code);
    result_free(&r);
}

static void cli_no_verb(void) {
    result r;
    run_cmd(&r, NULL, NULL);
    CHECK_RUN(&r, r.code == 2, "exit %d, want 2", r.code);
    CHECK_RUN(&r, strstr(r.err, "usage") != NULL, "no usage on stderr");
    CHECK_RUN(&r, r.out[0] == 0, "usage error printed on stdout");
    result_free(&r);
    /* Only global options, no verb. */
    char path[PATH_MAX];
    case_path("unused.db", path, sizeof path);
    expect_usage_error(NULL, ARGS("--cache", path), "usage", "--cache FILE alone");
}

static void cli_unknown_verb_or_option(void) {
    expect_usage_error(NULL, ARGS("frobnicate"), "frobnicate", "unknown verb");
    expect_usage_error(NULL, ARGS("tunes", "64x64x64"), "tunes", "misspelt verb");
    expect_usage_error(NULL, ARGS("--frobnicate", "info"), "--frobnicate", "unknown option");
    expect_usage_error(NULL, ARGS("--cache"), NULL, "--cache without a file");
    expect_usage_error(NULL, ARGS("info", "extra"), "extra", "info with an argument");
    expect_usage_error(NULL, ARGS("list", "extra"), "extra", "list with an argument");
    expect_usage_error(NULL, ARGS("tune", "--bogus", "64x64x64"), NULL, "tune --bogus");
}

/* ===== tune and run usage ===== */

static void cli_tune_usage(void) {
    expect_usage_error(NULL, ARGS("tune"), NULL, "tune without shapes");
    expect_usage_error(NULL, ARGS("tune", "--force"), NULL, "tune --force without shapes");
    static const char *bad[] = {"12x12",   "0x5x5",   "5x0x5",   "5x5x0",  "5x5x5x5",
                                "5x5x5:NX", "5x5x5:NNN", "5x5x5:", "5x5x5N", "axbxc",
                                "3000000000x1x1", "5x5x5:N", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "tune '%s'", bad[i]);
        /* A good shape first: the bad one is still found, and nothing is tuned. */
        expect_usage_error(ENV(NO_DRIVER_ENV), ARGS("tune", "64x64x64", bad[i]), "bad shape",
                           what);
    }
    /* A negative size reads as an option unless after "--"; either way, usage. */
    expect_usage_error(NULL, ARGS("tune", "-5x5x5"), NULL, "tune -5x5x5");
    expect_usage_error(NULL, ARGS("tune", "--", "-5x5x5"), "bad shape", "tune -- -5x5x5");
    /* The message quotes the shape. */
    expect_usage_error(NULL, ARGS("tune", "12x12"), "12x12", "tune 12x12 quoted");
}

static void cli_run_usage(void) {
    expect_usage_error(NULL, ARGS("run"), NULL, "run without a shape");
    expect_usage_error(NULL, ARGS("run", "8x8x8", "16x16x16"), NULL, "run with two shapes");
    expect_usage_error(NULL, ARGS("run", "8x8"), NULL, "run with a bad shape");
    expect_usage_error(NULL, ARGS("run", "10x10x10", "--reps", "0"), "--reps", "--reps 0");
    expect_usage_error(NULL, ARGS("run", "10x10x10", "--reps", "10001"), "--reps", "--reps 10001");
    expect_usage_error(NULL, ARGS("run", "10x10x10", "--reps", "5x"), "--reps", "--reps 5x");
    expect_usage_error(NULL, ARGS("run", "8x8x8", "--alpha", "x"), "--alpha", "--alpha x");
    expect_usage_error(NULL, ARGS("run", "8x8x8", "--alpha", "1.5e"), "--alpha", "--alpha 1.5e");
    expect_usage_error(NULL, ARGS("run", "8x8x8", "--beta", "nan"), "--beta", "--beta nan");
    expect_usage_error(NULL, ARGS("run", "8x8x8", "--beta", "inf"), "--beta", "--beta inf");
    expect_usage_error(NULL, ARGS("run", "8x8x8", "--alpha"), NULL, "--alpha without a value");
}

static void cli_tune_file_errors(void) {
    expect_usage_error(NULL, ARGS("tune", "--file", "/nonexistent/gemmtune-shapes.txt"),
                       "/nonexistent/gemmtune-shapes.txt", "missing shape file");
    char path[PATH_MAX];
    /* Line 6 is bad; comments, blank lines and both line forms come before it. */
    const char text[] = "# shapes\n"
                        "64x64x64\n"
                        "\n"
                        "128 128 128 N T   # with ops\n"
                        "  256x16x16:TN\n"
                        "12x12\n"
                        "32x32x32\n";
    case_path("bad-shapes.txt", path, sizeof path);
    TAP_CHECK(write_file(path, text, sizeof text - 1) == 0, "cannot write %s", path);
    char want[PATH_MAX + 8];
    snprintf(want, sizeof want, "%s:6:", path);
    expect_usage_error(ENV(NO_DRIVER_ENV), ARGS("tune", "--file", path), want,
                       "shape file, bad line 6");
    /* "M N K" with one op only is bad too (line 2). */
    const char text2[] = "8 8 8\n8 8 8 N\n";
    case_path("bad-shapes2.txt", path, sizeof path);
    TAP_CHECK(write_file(path, text2, sizeof text2 - 1) == 0, "cannot write %s", path);
    snprintf(want, sizeof want, "%s:2:", path);
    expect_usage_error(ENV(NO_DRIVER_ENV), ARGS("tune", "--file", path), want,
                       "shape file, one op on line 2");
    /* A zero size on line 1. */
    const char text3[] = "0 8 8\n";
    case_path("bad-shapes3.txt", path, sizeof path);
    TAP_CHECK(write_file(path, text3, sizeof text3 - 1) == 0, "cannot write %s", path);
    snprintf(want, sizeof want, "%s:1:", path);
    expect_usage_error(ENV(NO_DRIVER_ENV), ARGS("tune", "--file", path), want,
                       "shape file, zero size on line 1");
}

/* ===== without a driver ===== */

static void cli_info_without_driver(void) {
    char cache[PATH_MAX];
    case_path("info-cache.db", cache, sizeof cache);
    char cache_env[PATH_MAX + 32];
    snprintf(cache_env, sizeof cache_env, "GEMMTUNE_CACHE=%s", cache);
    result r;
    run_cmd(&r, ENV(NO_DRIVER_ENV, cache_env), ARGS("info"));
    CHECK_RUN(&r, r.code == 1, "exit %d, want 1", r.code);
    CHECK_RUN(&r, strstr(r.out, "GPU: none") != NULL, "no 'GPU: none'");
    CHECK_RUN(&r, strstr(r.out, "gemmtune-test-libcuda.so.1") != NULL,
              "the reason does not name the driver file");
    CHECK_RUN(&r, strstr(r.out, gt_kernel_source_hash) != NULL, "no kernel source hash '%s'",
              gt_kernel_source_hash);
    char nvrtc[64];
    snprintf(nvrtc, sizeof nvrtc, "NVRTC: %s", gt_rtc_version());
    CHECK_RUN(&r, strcmp(gt_rtc_version(), "?") != 0 && strstr(r.out, nvrtc) != NULL,
              "no '%s'", nvrtc);
    CHECK_RUN(&r, strstr(r.out, cache) != NULL, "no cache path '%s'", cache);
    CHECK_RUN(&r, strstr(r.out, GT_VERSION_STRING) != NULL, "no version");
    result_free(&r);
}

static void cli_tune_and_run_without_driver(void) {
    result r;
    run_cmd(&r, ENV(NO_DRIVER_ENV), ARGS("run", "64x64x64"));
    CHECK_RUN(&r, r.code == 1, "run: exit %d, want 1", r.code);
    CHECK_RUN(&r, strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL, "run: no '%s'",
              gt_status_string(GT_NO_DRIVER));
    result_free(&r);
    run_cmd(&r, ENV(NO_DRIVER_ENV), ARGS("tune", "64x64x64", "17x33x65:TN"));
    CHECK_RUN(&r, r.code == 1, "tune: exit %d, want 1", r.code);
    CHECK_RUN(&r, strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL, "tune: no '%s'",
              gt_status_string(GT_NO_DRIVER));
    result_free(&r);
    /* A good shape file gets as far as the device. */
    char path[PATH_MAX];
    const char text[] = "# good\n64x64x64\n128 128 128 T N\n";
    case_path("good-shapes.txt", path, sizeof path);
    TAP_CHECK(write_file(path, text, sizeof text - 1) == 0, "cannot write %s", path);
    run_cmd(&r, ENV(NO_DRIVER_ENV), ARGS("tune", "--file", path));
    CHECK_RUN(&r, r.code == 1, "tune --file: exit %d, want 1", r.code);
    CHECK_RUN(&r, strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL, "tune --file: no '%s'",
              gt_status_string(GT_NO_DRIVER));
    result_free(&r);
}

/* ===== this machine as it is ===== */

static void cli_info(void) {
    result r;
    run_cmd(&r, NULL, ARGS("info"));
    CHECK_RUN(&r, r.code == 0 || r.code == 1, "exit %d", r.code);
    CHECK_RUN(&r, strstr(r.out, gt_kernel_source_hash) != NULL, "no kernel source hash");
    CHECK_RUN(&r, strstr(r.out, "NVRTC: ") != NULL && strstr(r.out, gt_rtc_version()) != NULL,
              "no NVRTC version");
    CHECK_RUN(&r, strstr(r.out, default_cache) != NULL, "no cache path '%s'", default_cache);
    have_gpu = r.code == 0;
    if (have_gpu) {
        CHECK_RUN(&r, strstr(r.out, "GPU 0: ") != NULL && strstr(r.out, "driver: ") != NULL,
                  "exit 0 without a GPU line");
    } else {
        CHECK_RUN(&r, strstr(r.out, "GPU: none") != NULL ||
                          strstr(r.out, gt_status_string(GT_NO_DRIVER)) != NULL,
                  "exit 1 without saying why");
    }
    printf("# this machine: %s\n", have_gpu ? "GPU" : "no GPU");
    result_free(&r);
}

static void cli_run_here(void) {
    if (have_gpu < 0) TAP_SKIP("cli_info did not run");
    result r;
    run_cmd(&r, NULL, ARGS("run", "64x64x64", "--reps", "3"));
    if (have_gpu) {
        CHECK_RUN(&r, r.code == 0, "exit %d, want 0", r.code);
        CHECK_RUN(&r, strstr(r.out, "PASS") != NULL, "no PASS");
        CHECK_RUN(&r, strstr(r.out, "64x64x64:NN") != NULL, "no shape");
    } else {
        CHECK_RUN(&r, r.code == 1, "exit %d, want 1", r.code);
        CHECK_RUN(&r, strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL ||
                          strstr(r.err, gt_status_string(GT_NO_DEVICE)) != NULL,
                  "no '%s' or '%s'", gt_status_string(GT_NO_DRIVER),
                  gt_status_string(GT_NO_DEVICE));
    }
    result_free(&r);
}

/* ===== list ===== */

static void cli_list_missing_cache(void) {
    char cache[PATH_MAX], env[PATH_MAX + 32];
    case_path("never-created.db", cache, sizeof cache);
    snprintf(env, sizeof env, "GEMMTUNE_CACHE=%s", cache);
    result r;
    run_cmd(&r, ENV(env), ARGS("list"));
    CHECK_RUN(&r, r.code == 0, "exit %d, want 0", r.code);
    CHECK_RUN(&r, strstr(r.out, "nothing tuned") != NULL, "no 'nothing tuned'");
    CHECK_RUN(&r, strstr(r.out, cache) != NULL, "does not name the cache '%s'", cache);
    TAP_CHECK(!exists(cache), "list created %s", cache);
    result_free(&r);
}

static void make_random_file(const char *path) {
    unsigned char buf[8192];
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)(x >> 24);
    }
    TAP_CHECK(write_file(path, buf, sizeof buf) == 0, "cannot write %s", path);
}

static void cli_cache_option(void) {
    /* --cache wins over GEMMTUNE_CACHE, which points at garbage here. */
    char garbage[PATH_MAX], cache[PATH_MAX], env[PATH_MAX + 32];
    case_path("garbage-for-option.db", garbage, sizeof garbage);
    make_random_file(garbage);
    case_path("option-never-created.db", cache, sizeof cache);
    snprintf(env, sizeof env, "GEMMTUNE_CACHE=%s", garbage);
    result r;
    run_cmd(&r, ENV(env), ARGS("--cache", cache, "list"));
    CHECK_RUN(&r, r.code == 0, "exit %d, want 0", r.code);
    CHECK_RUN(&r, strstr(r.out, "nothing tuned") != NULL, "no 'nothing tuned'");
    CHECK_RUN(&r, strstr(r.out, cache) != NULL, "does not name '%s'", cache);
    CHECK_RUN(&r, strstr(r.out, garbage) == NULL && strstr(r.err, garbage) == NULL,
              "looked at GEMMTUNE_CACHE despite --cache");
    TAP_CHECK(!exists(cache), "list created %s", cache);
    result_free(&r);
    /* And info reports the --cache path too. */
    run_cmd(&r, ENV(NO_DRIVER_ENV), ARGS("--cache", cache, "info"));
    CHECK_RUN(&r, r.code == 1 && strstr(r.out, cache) != NULL, "info: exit %d, path '%s'", r.code,
              cache);
    result_free(&r);
}

static void cli_list_random_bytes(void) {
    char path[PATH_MAX], env[PATH_MAX + 32];
    case_path("random.db", path, sizeof path);
    make_random_file(path);
    FILE *f = fopen(path, "rb");
    unsigned char before[8192], after[8192];
    size_t nb = f ? fread(before, 1, sizeof before, f) : 0;
    if (f) fclose(f);
    snprintf(env, sizeof env, "GEMMTUNE_CACHE=%s", path);
    result r;
    run_cmd(&r, ENV(env), ARGS("list"));
    CHECK_RUN(&r, !r.signaled && r.code < 128, "crashed: exit %d", r.code);
    CHECK_RUN(&r, r.code == 1, "exit %d, want 1", r.code);
    CHECK_RUN(&r, r.err[0] != 0, "no message");
    CHECK_RUN(&r, strstr(r.err, path) != NULL, "message does not name '%s'", path);
    result_free(&r);
    /* The file is left as it was. */
    f = fopen(path, "rb");
    size_t na = f ? fread(after, 1, sizeof after, f) : 0;
    if (f) fclose(f);
    TAP_CHECK(na == nb && nb == sizeof before && memcmp(before, after, nb) == 0,
              "list changed the file (%zu -> %zu bytes)", nb, na);
}

static void cli_list_shows_winners(void) {
    /* Winners written by the library itself; one under an old kernel source hash. */
    char path[PATH_MAX], env[PATH_MAX + 32], msg[512];
    case_path("winners.db", path, sizeof path);
    gt_db *db = NULL;
    gt_status s = gt_db_open(path, 0, 0, &db, msg, sizeof msg);
    TAP_CHECK(s == GT_SUCCESS && db, "gt_db_open %s: %s", path, msg);
    if (s != GT_SUCCESS || !db) return;
    gt_key key;
    memset(&key, 0, sizeof key);
    snprintf(key.device, sizeof key.device, "NVIDIA Test GPU 80GB");
    key.cc_major = 9, key.sm_count = 132, key.dtype = GT_DT_F32;
    key.opa = 0, key.opb = 1, key.m = 4096, key.n = 2048, key.k = 1024, key.align = 16;
    gt_db_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.config, sizeof w.config, "128x64x8_t8x4_v4");
    w.time_us = 1234.5, w.tflops = 27.8, w.tuned_at = 1700000000;
    snprintf(w.nvrtc, sizeof w.nvrtc, "13.0");
    snprintf(w.libver, sizeof w.libver, "%s", GT_VERSION_STRING);
    s = gt_db_store(db, &key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, NULL, 0);
    TAP_CHECK(s == GT_SUCCESS, "store: %s", gt_db_errmsg(db));
    gt_key old = key;
    old.m = 17, old.n = 33, old.k = 65, old.opa = 1, old.opb = 0;
    snprintf(w.config, sizeof w.config, "16x16x8_t2x2_v1");
    s = gt_db_store(db, &old, "0000000000000000-old-source", GT_VERSION_MAJOR, &w, NULL, 0);
    TAP_CHECK(s == GT_SUCCESS, "store old: %s", gt_db_errmsg(db));
    gt_db_close(db);

    snprintf(env, sizeof env, "GEMMTUNE_CACHE=%s", path);
    result r;
    run_cmd(&r, ENV(env), ARGS("list"));
    CHECK_RUN(&r, r.code == 0, "exit %d, want 0", r.code);
    CHECK_RUN(&r, strstr(r.out, "nothing tuned") == NULL, "says nothing tuned");
    CHECK_RUN(&r, strstr(r.out, "NVIDIA Test GPU 80GB") != NULL, "no device");
    CHECK_RUN(&r, strstr(r.out, "4096x2048x1024:NT") != NULL, "no current shape");
    CHECK_RUN(&r, strstr(r.out, "128x64x8_t8x4_v4") != NULL, "no current config");
    CHECK_RUN(&r, strstr(r.out, "17x33x65:TN") != NULL, "no old shape");
    /* Exactly one line is marked old: the 17x33x65 one. */
    const char *mark = strstr(r.out, "old kernel source");
    CHECK_RUN(&r, mark != NULL, "old entry not marked");
    if (mark) {
        const char *line = mark;
        while (line > r.out && line[-1] != '\n') line--;
        CHECK_RUN(&r, strncmp(line, "NVIDIA Test GPU", 15) == 0 &&
                          strstr(line, "17x33x65:TN") != NULL &&
                          strstr(line, "17x33x65:TN") < mark,
                  "the mark is on the wrong line");
        CHECK_RUN(&r, strstr(mark + 1, "old kernel source") == NULL, "more than one old mark");
    }
    result_free(&r);
}

/* ===== setup ===== */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int main(void) {
    const char *e = getenv("GEMMTUNE_EXE");
    if (e && *e) {
        snprintf(exe, sizeof exe, "%s", e);
    } else {
        /* Run by hand: the command is built one directory up from tests/. */
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = 0;
        char *slash = strrchr(self, '/');
        if (slash) *slash = 0;
        snprintf(exe, sizeof exe, "%s/../gemmtune", self);
    }
    snprintf(root, sizeof root, "/tmp/gemmtune-test-cli-XXXXXX");
    if (!mkdtemp(root)) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    snprintf(default_cache, sizeof default_cache, "%s/default-cache.db", root);
    printf("# command: %s\n", exe);
    if (access(exe, X_OK) != 0) printf("# cannot execute %s: %s\n", exe, strerror(errno));

    TAP_RUN(cli_help);
    TAP_RUN(cli_no_verb);
    TAP_RUN(cli_unknown_verb_or_option);
    TAP_RUN(cli_tune_usage);
    TAP_RUN(cli_run_usage);
    TAP_RUN(cli_tune_file_errors);
    TAP_RUN(cli_info_without_driver);
    TAP_RUN(cli_tune_and_run_without_driver);
    TAP_RUN(cli_info);
    TAP_RUN(cli_run_here);
    TAP_RUN(cli_list_missing_cache);
    TAP_RUN(cli_cache_option);
    TAP_RUN(cli_list_random_bytes);
    TAP_RUN(cli_list_shows_winners);

    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
