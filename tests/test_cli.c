/*
 * test_cli.c: the gemmtune command (cli/), run as a child process.
 *
 * The command's path comes from GEMMTUNE_EXE (set by tests/meson.build; else the
 * `gemmtune` next to this test's directory). Each run gets fork+exec with stdout and
 * stderr captured in files, a fresh GEMMTUNE_CACHE in a mkdtemp() directory (removed at
 * the end), small tuning budgets, and a time limit. Cases: --help (its environment
 * section holds every variable of env.h's table, name and meaning, and the check of
 * that is shown to catch any one left out) and usage errors (exit
 * 2 with a message naming what is wrong: verbs, shapes, options, shape files); info, tune
 * and run without a driver (GEMMTUNE_LIBCUDA pointing at nothing: exit 1 with the
 * reason); info and run on this machine as it is (exit 1 without a GPU; with one, exit 0
 * and a passing check); list on a missing cache, through --cache, on a cache holding
 * winners written by the library, and on a file of random bytes (exit 1, no crash, file
 * untouched); the cache-file verbs on fixture caches written with the library's db API:
 * export (per device, timings carried, no cubins, old sources left out, no temporary file
 * left on failure), merge (per key the faster entry with its provenance, tampered
 * configurations rejected, output never an input, a bad input writes nothing; --keep N:
 * each key's N fastest timings, the failed ones kept), import
 * (faster replaces, slower kept, bad file leaves the cache's bytes alone), show, prune;
 * tune --shard / --dry-run with Slurm's variables (unset unless a case sets them), and
 * tune --devices (usage without a GPU; on one, every shape tuned and listed).
 * Cache texts (cache/text.h): export --text (current source only, timings and provenance
 * carried, --device/--dtype), a text read by import and merge like an SQLite file, text
 * -> cache -> text the same bytes, a malformed text refused with its line and the cache
 * untouched; defaults: usage errors (no --file, no -o, a bad type, a bad or missing shape
 * file, a stray argument) and, without a driver, exit 1 with nothing written and no
 * private cache left; info names the built-in defaults (off with GEMMTUNE_DEFAULTS=0);
 * with a GPU, defaults tunes two shapes without creating the user's cache and writes
 * this GPU's entries of the current kernel source, which import takes.
 * Data types (--dtype, every name of key.h): an unknown name lists all of them on every
 * verb that takes one; without a driver each type gets as far as the device; run's float
 * scalars for all but f64; list --dtype and show --dtype on a cache holding several
 * types; merge refuses a tensor-only type below sm_80. With a GPU: run of every type
 * (or, below sm_80, the tensor-core types exit 1 saying why) saves its problem with
 * --save, and the test grades every element of C against its own float64 reference
 * (grade_saved: the test's own decoding of f16 and bf16, a per-element bound from the
 * types' rounding units), the library's PASS only a second opinion; a tuned bf16 shape
 * is listed under bf16 only. --save's errors (a path that cannot be made, a run that
 * fails) write nothing. Whether there is a GPU is each case's own probe (gpu_here).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cu.h"
#include "db.h"
#include "env.h"
#include "files.h"
#include "fixtures.h"
#include "gemmtune.h"
#include "kcfg.h"
#include "kernel_sources.h"
#include "key.h"
#include "rtc.h"
#include "space.h"
#include "gpu_probe.h"
#include "tap.h"

/* ===== running the command ===== */

static char exe[PATH_MAX + 32];
static char root[256];        /* mkdtemp directory */
static char default_cache[PATH_MAX];
static int have_gpu = -2;     /* gpu_here()'s finding (GPU_NONE, GPU_READY, GPU_FAILED); -2 before */
static int gpu_arch = -1;     /* GPU 0's cc_major * 10 + cc_minor */
static char gpu_why[200];     /* why not GPU_READY */

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
        /* CI may run inside Slurm: no test shards unless it says so. */
        static const char *const slurm[] = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
                                            "SLURM_ARRAY_TASK_MIN", "SLURM_PROCID",
                                            "SLURM_NTASKS"};
        for (size_t i = 0; i < sizeof slurm / sizeof slurm[0]; i++) unsetenv(slurm[i]);
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

static int write_text(const char *path, const char *text) {
    return write_file(path, text, strlen(text));
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

#define NO_DRIVER_ENV "GEMMTUNE_LIBCUDA=/nonexistent/gemmtune-test-libcuda.so.1"

/* Whether this machine has a GPU: this process's own probe (gpu_probe.h), made once by
 * whichever case asks first, so that no case depends on another having run; GPU 0's
 * compute capability beside it. GPU_READY, GPU_NONE, or GPU_FAILED (gpu_why says why). */
static int gpu_here(void) {
    if (have_gpu != -2) return have_gpu;
    have_gpu = gpu_probe(gpu_why, sizeof gpu_why, 0);
    if (have_gpu == GPU_READY) {
        CUdevice dev;
        gt_cu_device d;
        gt_status s = gt_cu.device_get(&dev, 0) == CUDA_SUCCESS ? gt_cu_device_query(dev, &d)
                                                                : GT_CUDA_ERROR;
        if (s == GT_SUCCESS) {
            gpu_arch = d.cc_major * 10 + d.cc_minor;
        } else {
            snprintf(gpu_why, sizeof gpu_why, "GPU 0 cannot be queried: %s", gt_last_error());
            have_gpu = GPU_FAILED;
        }
    }
    return have_gpu;
}

/* A case that needs a GPU: skipped without one, failed when the GPU fails to set up. The
 * probe here is lazy (gpu_here), not gpu_probe.h's state of a program's main. */
#undef NEED_GPU
#define NEED_GPU() GPU_NEED(gpu_here(), gpu_why)

/* ===== help and usage ===== */

static int name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Whether text holds name as a word of its own: HOME inside XDG_CACHE_HOME, or
 * GEMMTUNE_CACHE inside GEMMTUNE_CACHE_PATH, does not count. */
static int has_name(const char *text, const char *name) {
    size_t n = strlen(name);
    for (const char *p = text; (p = strstr(p, name)) != NULL; p++)
        if ((p == text || !name_char(p[-1])) && !name_char(p[n])) return 1;
    return 0;
}

/* The first variable of env.h's table whose name text lacks; NULL when it has all. */
static const char *env_name_missing(const char *text) {
    for (int i = 0; i < GT_NENV; i++)
        if (!has_name(text, gt_env_vars[i].name)) return gt_env_vars[i].name;
    return NULL;
}

static void cli_help(void) {
    const char *const *variants[3] = {ARGS("--help"), ARGS("-h"), ARGS("help")};
    for (int v = 0; v < 3; v++) {
        result r;
        run_cmd(&r, NULL, variants[v]);
        CHECK_RUN(&r, r.code == 0, "%s: exit %d", variants[v][0], r.code);
        static const char *verbs[] = {
            "info", "tune", "list", "run", "show", "export", "import", "merge", "prune",
            "defaults", "usage", "SHAPE", "--cache", "--devices", "--shard", "--dry-run",
            "--force", "--device", "--dtype", "-o FILE", "--text", "data/defaults/"};
        for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
            CHECK_RUN(&r, strstr(r.out, verbs[i]) != NULL, "%s: help lacks '%s'", variants[v][0],
                      verbs[i]);
        const char *missing = env_name_missing(r.out);
        CHECK_RUN(&r, missing == NULL, "%s: help lacks environment variable %s (env.h)",
                  variants[v][0], missing ? missing : "");
        /* Every data type, as a line of its own ("  bf16  ..."), and the typed entry. */
        for (int t = 0; t < GT_NDTYPES; t++) {
            char line[32];
            snprintf(line, sizeof line, "\n  %s ", gt_dtype_name(t));
            CHECK_RUN(&r, strstr(r.out, line) != NULL, "%s: help lacks data type %s",
                      variants[v][0], gt_dtype_name(t));
        }
        CHECK_RUN(&r, strstr(r.out, "gemm_tuned_ex") != NULL, "%s: help lacks gemm_tuned_ex",
                  variants[v][0]);
        for (int i = 0; i < gt_nkparams; i++)
            CHECK_RUN(&r, strstr(r.out, gt_kparams[i].name) != NULL,
                      "%s: help lacks parameter %s", variants[v][0], gt_kparams[i].name);
        for (int i = 0; i < gt_nkconstraints; i++)
            CHECK_RUN(&r, strstr(r.out, gt_kconstraints[i].name) != NULL,
                      "%s: help lacks constraint %s", variants[v][0], gt_kconstraints[i].name);
        result_free(&r);
    }
    /* Verbs take --help too. */
    const char *const *verbs[10] = {ARGS("info", "--help"),   ARGS("tune", "--help"),
                                    ARGS("list", "--help"),   ARGS("run", "--help"),
                                    ARGS("show", "--help"),   ARGS("export", "--help"),
                                    ARGS("import", "--help"), ARGS("merge", "--help"),
                                    ARGS("prune", "--help"),  ARGS("defaults", "--help")};
    for (int v = 0; v < 10; v++) {
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

/* The environment section of --help is env.h's table: every variable's name and
 * meaning. And the name check compares against that table: with any one name blotted
 * out of the real help text, it reports that name. */
static void cli_help_env(void) {
    result r;
    run_cmd(&r, NULL, ARGS("--help"));
    CHECK_RUN(&r, r.code == 0, "--help: exit %d", r.code);
    const char *env = strstr(r.out, "Environment:\n");
    CHECK_RUN(&r, env != NULL, "--help has no 'Environment:' section");
    if (!env) env = r.out;
    const char *missing = env_name_missing(env);
    CHECK_RUN(&r, missing == NULL, "the environment section lacks %s", missing ? missing : "");
    for (int i = 0; i < GT_NENV; i++)
        CHECK_RUN(&r, strstr(env, gt_env_vars[i].meaning) != NULL,
                  "the environment section lacks the meaning of %s: '%s'", gt_env_vars[i].name,
                  gt_env_vars[i].meaning);
    /* Only meaningful when the real text has every name. */
    for (int i = 0; !missing && i < GT_NENV; i++) {
        const char *name = gt_env_vars[i].name;
        size_t n = strlen(name);
        char *text = strdup(r.out);
        if (!text) break;
        for (char *p = text; (p = strstr(p, name)) != NULL; p++)
            if ((p == text || !name_char(p[-1])) && !name_char(p[n])) memset(p, '#', n);
        const char *found = env_name_missing(text);
        TAP_CHECK(found && strcmp(found, name) == 0,
                  "help text without %s: the check reports %s", name, found ? found : "none");
        free(text);
    }
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
    expect_usage_error(NULL, ARGS("run", "8x8x8", "--save"), NULL, "--save without a value");
    expect_usage_error(NULL, ARGS("run", "8x8x8", "--save", ""), "--save", "--save ''");
}

/* --save DIR that cannot be made: exit 1 naming it, before any GPU work (so the same
 * with a driver or without); a run that fails writes nothing. */
static void cli_run_save_errors(void) {
    char file[PATH_MAX], dir[PATH_MAX], deep[PATH_MAX + 16];
    case_path("save-plain-file", file, sizeof file);
    TAP_CHECK(write_file(file, "x", 1) == 0, "cannot write %s", file);
    case_path("save-missing-parent", dir, sizeof dir);
    snprintf(deep, sizeof deep, "%s/sub", dir);
    const char *const bad[][2] = {{file, "not a directory"}, {deep, "cannot create"}};
    for (int i = 0; i < 2; i++) {
        result r;
        run_cmd(&r, NULL, ARGS("run", "8x8x8", "--save", bad[i][0]));
        CHECK_RUN(&r, r.code == 1 && strstr(r.err, bad[i][0]) && strstr(r.err, bad[i][1]),
                  "--save %s: exit %d, want 1 and '%s'", bad[i][0], r.code, bad[i][1]);
        result_free(&r);
    }
    TAP_CHECK(!exists(dir), "%s was created", dir);
    /* No driver: the run fails, the directory is not even created. */
    char nodrv[PATH_MAX];
    case_path("save-no-driver", nodrv, sizeof nodrv);
    result r;
    run_cmd(&r, ENV(NO_DRIVER_ENV), ARGS("run", "8x8x8", "--save", nodrv));
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, gt_status_string(GT_NO_DRIVER)),
              "--save without a driver: exit %d", r.code);
    TAP_CHECK(!exists(nodrv), "a failed run created %s", nodrv);
    result_free(&r);
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
    /* Whether there is a GPU is this process's own finding (gpu_probe.h), not info's exit
     * status: a GPU that info fails on is a failure, never "no GPU". */
    int state = gpu_here(), ready = state == GPU_READY;
    TAP_CHECK(state != GPU_FAILED, "GPU set-up failed: %s", gpu_why);
    CHECK_RUN(&r, r.code == (ready ? 0 : 1), "info exit %d with%s a GPU", r.code,
              ready ? "" : "out");
    if (ready) {
        CHECK_RUN(&r, strstr(r.out, "GPU 0: ") != NULL && strstr(r.out, "driver: ") != NULL,
                  "exit 0 without a GPU line");
        /* "GPU 0: NAME, sm_90, 132 SMs, ...": what the probe found. */
        const char *g = strstr(r.out, "GPU 0: "), *sm = g ? strstr(g, ", sm_") : NULL;
        int arch = -1;
        CHECK_RUN(&r, sm && sscanf(sm, ", sm_%d", &arch) == 1 && arch == gpu_arch,
                  "the GPU 0 line says sm_%d, the driver sm_%d", arch, gpu_arch);
        printf("# GPU 0: sm_%d\n", gpu_arch);
        /* The memory's figures and the model's DRAM rate from them (space.h): H100s and
         * H200s report both; the rate printed is gt_space_dram_rate's of the figures. */
        const char *mem = g ? strstr(g, ", memory ") : NULL, *eol = g ? strchr(g, '\n') : NULL;
        int mhz = 0, bits = 0;
        double tbs = 0, rate = 0;
        int got = mem && (!eol || mem < eol)
                      ? sscanf(mem, ", memory %d MHz x %d bits (%lf TB/s peak; the cost model's DRAM rate x %lf)",
                               &mhz, &bits, &tbs, &rate)
                      : 0;
        CHECK_RUN(&r, got == 4 && mhz > 0 && bits > 0 && tbs > 0.1 &&
                          fabs(rate - gt_space_dram_rate(mhz * 1000, bits)) < 0.01,
                  "the GPU 0 line's memory: %d of 4 figures", got);
        printf("# GPU 0: memory %d MHz x %d bits, %.2f TB/s, DRAM rate x %.2f\n", mhz, bits, tbs, rate);
    } else {
        CHECK_RUN(&r, strstr(r.out, "GPU: none") != NULL ||
                          strstr(r.out, gt_status_string(GT_NO_DRIVER)) != NULL,
                  "exit 1 without saying why");
    }
    printf("# this machine: %s\n", ready ? "GPU" : "no GPU");
    result_free(&r);
}

/* ===== run --save, graded on the CPU ===== */

/* What `run --save DIR` wrote: meta.txt's fields and the four arrays as float64. */
typedef struct {
    char dtype[64], ops[64], ab_type[64], c_type[64];
    long long m, n, k, lda, ldb, ldc;
    double alpha, beta;
    double *A, *B, *C0, *C;
} saved_run;

static void saved_free(saved_run *sv) {
    free(sv->A), free(sv->B), free(sv->C0), free(sv->C);
    sv->A = sv->B = sv->C0 = sv->C = NULL;
}

/* IEEE binary16 bits as a double: the test's own decoding, not the library's. */
static double f16_value(unsigned h) {
    unsigned e = (h >> 10) & 31, f = h & 1023;
    double v = e == 0 ? ldexp((double)f, -24)
               : e == 31 ? (f ? NAN : INFINITY)
                         : ldexp((double)(f | 1024), (int)e - 25);
    return h & 0x8000 ? -v : v;
}

/* bfloat16 bits as a double: 8 exponent bits (bias 127), 7 fraction bits. */
static double bf16_value(unsigned b) {
    unsigned e = (b >> 7) & 255, f = b & 127;
    double v = e == 0 ? ldexp((double)f, -133)
               : e == 255 ? (f ? NAN : INFINITY)
                          : ldexp((double)(f | 128), (int)e - 134);
    return b & 0x8000 ? -v : v;
}

/* Bytes of one element of storage type name (f32, f64, f16, bf16); 0 when unknown. */
static size_t stype_bytes(const char *name) {
    return strcmp(name, "f64") == 0                                ? 8
           : strcmp(name, "f32") == 0                              ? 4
           : strcmp(name, "f16") == 0 || strcmp(name, "bf16") == 0 ? 2
                                                                   : 0;
}

/* dir/name: count little-endian elements of storage type `type`, as doubles (malloc'd);
 * NULL with the reason in why. */
static double *load_elems(const char *dir, const char *name, const char *type, long long count,
                          char *why, size_t size) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t es = stype_bytes(type), len = 0;
    unsigned char *raw = read_all(path, &len);
    if (!raw || es == 0 || count < 1 || len != (size_t)count * es) {
        snprintf(why, size, "%s: %zu bytes, want %lld elements of %s", path, raw ? len : 0,
                 count, type);
        free(raw);
        return NULL;
    }
    double *v = malloc(sizeof *v * (size_t)count);
    for (long long i = 0; v && i < count; i++) {
        const unsigned char *p = raw + (size_t)i * es;
        uint64_t bits = 0;
        for (size_t b = 0; b < es; b++) bits |= (uint64_t)p[b] << (8 * b);
        if (es == 8) {
            double d;
            memcpy(&d, &bits, 8);
            v[i] = d;
        } else if (es == 4) {
            uint32_t u = (uint32_t)bits;
            float f;
            memcpy(&f, &u, 4);
            v[i] = f;
        } else {
            v[i] = strcmp(type, "f16") == 0 ? f16_value((unsigned)bits) : bf16_value((unsigned)bits);
        }
    }
    free(raw);
    if (!v) snprintf(why, size, "out of memory for %s", path);
    return v;
}

/* Reads dir (meta.txt and the arrays); 0, or -1 with the reason in why. */
static int saved_read(const char *dir, saved_run *sv, char *why, size_t size) {
    memset(sv, 0, sizeof *sv);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, size, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[256], name[32], value[64];
    unsigned seen = 0;
    static const char *const fields[] = {"dtype", "ops", "m",   "n",   "k",       "alpha",
                                         "beta",  "lda", "ldb", "ldc", "ab_type", "c_type"};
    enum { NFIELDS = sizeof fields / sizeof fields[0] };
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%31s %63s", name, value) != 2) continue;
        int i = 0;
        while (i < NFIELDS && strcmp(fields[i], name) != 0) i++;
        if (i == NFIELDS) continue;
        seen |= 1u << i;
        char *end = NULL;
        switch (i) {
        case 0: snprintf(sv->dtype, sizeof sv->dtype, "%s", value); break;
        case 1: snprintf(sv->ops, sizeof sv->ops, "%s", value); break;
        case 2: sv->m = strtoll(value, &end, 10); break;
        case 3: sv->n = strtoll(value, &end, 10); break;
        case 4: sv->k = strtoll(value, &end, 10); break;
        case 5: sv->alpha = strtod(value, &end); break;
        case 6: sv->beta = strtod(value, &end); break;
        case 7: sv->lda = strtoll(value, &end, 10); break;
        case 8: sv->ldb = strtoll(value, &end, 10); break;
        case 9: sv->ldc = strtoll(value, &end, 10); break;
        case 10: snprintf(sv->ab_type, sizeof sv->ab_type, "%s", value); break;
        default: snprintf(sv->c_type, sizeof sv->c_type, "%s", value); break;
        }
        if (end && *end) seen &= ~(1u << i);
    }
    fclose(f);
    for (int i = 0; i < NFIELDS; i++)
        if (!(seen & (1u << i))) {
            snprintf(why, size, "%s: no valid '%s' line", path, fields[i]);
            return -1;
        }
    int ta = sv->ops[0] == 'T', tb = sv->ops[1] == 'T';
    if (strlen(sv->ops) != 2 || sv->m < 1 || sv->n < 1 || sv->k < 1 ||
        sv->lda < (ta ? sv->k : sv->m) || sv->ldb < (tb ? sv->n : sv->k) || sv->ldc < sv->m) {
        snprintf(why, size, "%s: inconsistent sizes", path);
        return -1;
    }
    if (!(sv->A = load_elems(dir, "A.bin", sv->ab_type, sv->lda * (ta ? sv->m : sv->k), why, size)) ||
        !(sv->B = load_elems(dir, "B.bin", sv->ab_type, sv->ldb * (tb ? sv->k : sv->n), why, size)) ||
        !(sv->C0 = load_elems(dir, "C0.bin", sv->c_type, sv->ldc * sv->n, why, size)) ||
        !(sv->C = load_elems(dir, "C.bin", sv->c_type, sv->ldc * sv->n, why, size))) {
        saved_free(sv);
        return -1;
    }
    return 0;
}

/* Error-free transformations: a + b = s + e, a * b = p + e exactly. */
static void two_sum(double a, double b, double *s, double *e) {
    *s = a + b;
    double z = *s - a;
    *e = (a - (*s - z)) + (b - z);
}
static void two_prod(double a, double b, double *p, double *e) {
    *p = a * b;
    *e = fma(a, b, -*p);
}

/* The storage types and rounding units of a data type, from the test's own table (not
 * key.c's): ab and c as run --save names them; u_acc the accumulation's unit roundoff;
 * u_in the relative error of one product from rounding the inputs (tf32 operands are
 * the fp32 bits truncated to 10 fraction bits, so each is off by up to 2^-10, the product
 * by 2^-9 + 2^-20; 3xTF32 leaves out the low parts' product and rounds the low parts:
 * 2^-20 + 2 * 2^-21). 0 when dtype is unknown. */
static int dtype_units(const char *dtype, const char **ab, const char **c, double *u_acc,
                       double *u_in) {
    static const struct {
        const char *name, *ab, *c;
        int acc_bits;
        double u_in;
    } t[] = {{"f32", "f32", "f32", 24, 0},
             {"f64", "f64", "f64", 53, 0},
             {"tf32", "f32", "f32", 24, 0x1p-9 + 0x1p-20},
             {"f16", "f16", "f16", 24, 0},
             {"f16_f32", "f16", "f32", 24, 0},
             {"bf16", "bf16", "bf16", 24, 0},
             {"bf16_f32", "bf16", "f32", 24, 0},
             {"f32_3xtf32", "f32", "f32", 24, 0x1p-20 + 0x1p-20}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i].name, dtype) == 0) {
            *ab = t[i].ab, *c = t[i].c, *u_acc = ldexp(1.0, -t[i].acc_bits), *u_in = t[i].u_in;
            return 1;
        }
    return 0;
}

/* Grades what `run SHAPE --dtype dtype --alpha alpha --beta beta --save dir` wrote, with
 * no help from the library: meta.txt must name the problem asked for, and every element
 * of C must be within
 *     |C - ref| <= u_out |ref| + 8 sqrt(K) u_acc G + u_in G + tiny
 * of a float64 reference (summed error-free, so its own error is one rounding), where
 * G = |alpha| sum_l |a_il b_lj| + |beta| |c0_ij|, u_out is the unit roundoff of C's type
 * and tiny its smallest subnormal (f16) or below anything these values reach. */
static void grade_saved(const char *dir, const char *shape_text, const char *dtype,
                        double alpha, double beta) {
    saved_run sv;
    char why[PATH_MAX + 128];
    if (saved_read(dir, &sv, why, sizeof why) != 0) {
        TAP_CHECK(0, "run --save %s (%s %s): %s", dir, shape_text, dtype, why);
        return;
    }
    long long m, n, k;
    char ops[3] = "NN";
    const char *colon = strchr(shape_text, ':');
    if (colon) snprintf(ops, sizeof ops, "%s", colon + 1);
    int parsed = sscanf(shape_text, "%lldx%lldx%lld", &m, &n, &k) == 3;
    const char *want_ab = "", *want_c = "";
    double u_acc = 0, u_in = 0;
    int known = dtype_units(dtype, &want_ab, &want_c, &u_acc, &u_in);
    TAP_CHECK(parsed && known, "grade_saved: shape '%s', dtype '%s'", shape_text, dtype);
    if (!parsed || !known) {
        saved_free(&sv);
        return;
    }
    int ta = ops[0] == 'T', tb = ops[1] == 'T';
    int same = strcmp(sv.dtype, dtype) == 0 && strcmp(sv.ops, ops) == 0 && sv.m == m &&
               sv.n == n && sv.k == k && sv.alpha == alpha && sv.beta == beta &&
               strcmp(sv.ab_type, want_ab) == 0 && strcmp(sv.c_type, want_c) == 0 &&
               sv.lda == (ta ? k : m) && sv.ldb == (tb ? n : k) && sv.ldc == m;
    TAP_CHECK(same,
              "%s/meta.txt: %s %s %lldx%lldx%lld alpha %.17g beta %.17g ld %lld %lld %lld "
              "types %s %s; asked for %s %s alpha %.17g beta %.17g (types %s %s)",
              dir, sv.dtype, sv.ops, sv.m, sv.n, sv.k, sv.alpha, sv.beta, sv.lda, sv.ldb, sv.ldc,
              sv.ab_type, sv.c_type, dtype, shape_text, alpha, beta, want_ab, want_c);
    if (!same) {
        saved_free(&sv);
        return;
    }
    const double u_out = strcmp(want_c, "f64") == 0    ? 0x1p-53
                         : strcmp(want_c, "f32") == 0  ? 0x1p-24
                         : strcmp(want_c, "f16") == 0  ? 0x1p-11
                                                       : 0x1p-8;
    const double tiny = strcmp(want_c, "f16") == 0 ? 0x1p-24 : 0x1p-126;
    /* Inputs that are all zero would make any C = beta C0 pass. */
    long long nza = 0, nzb = 0;
    for (long long i = 0; i < sv.lda * (ta ? m : k); i++) nza += sv.A[i] != 0;
    for (long long i = 0; i < sv.ldb * (tb ? k : n); i++) nzb += sv.B[i] != 0;
    TAP_CHECK(nza > 0 && nzb > 0, "%s: A or B is all zeros", dir);
    long long bad = 0, worst_i = -1, worst_j = -1;
    double worst = 0, worst_c = 0, worst_ref = 0, worst_bound = 0, ref_max = 0;
    for (long long j = 0; j < n; j++)
        for (long long i = 0; i < m; i++) {
            /* sum_l a_il b_lj as s + e, error-free but for the last additions (Dot2). */
            double s = 0, e = 0, g = 0;
            for (long long l = 0; l < k; l++) {
                double a = ta ? sv.A[l + i * sv.lda] : sv.A[i + l * sv.lda];
                double b = tb ? sv.B[j + l * sv.ldb] : sv.B[l + j * sv.ldb];
                double p, pe, q;
                two_prod(a, b, &p, &pe);
                two_sum(s, p, &s, &q);
                e += q + pe;
                g += fabs(a * b);
            }
            double c0 = sv.C0[i + j * sv.ldc];
            /* ref = alpha (s + e) + beta c0 (c0 never read when beta == 0). */
            double p1, q1, p2 = 0, q2 = 0, x, y;
            two_prod(alpha, s, &p1, &q1);
            q1 += alpha * e;
            if (beta != 0) two_prod(beta, c0, &p2, &q2);
            two_sum(p1, p2, &x, &y);
            double ref = x + (y + (q1 + q2));
            double G = fabs(alpha) * g + (beta != 0 ? fabs(beta) * fabs(c0) : 0);
            double bound = u_out * fabs(ref) +
                           (1 + u_out) * (8 * sqrt((double)k) * u_acc * G + u_in * G) +
                           0x1p-52 * fabs(ref) + tiny;
            double c = sv.C[i + j * sv.ldc], err = fabs(c - ref);
            double ratio = err / bound;
            if (fabs(ref) > ref_max) ref_max = fabs(ref);
            if (!(err <= bound)) bad++;
            if (!(ratio <= worst)) {
                worst = isnan(ratio) ? INFINITY : ratio;
                worst_i = i, worst_j = j, worst_c = c, worst_ref = ref, worst_bound = bound;
            }
        }
    TAP_CHECK(ref_max > 0, "%s: the reference is all zeros", dir);
    TAP_CHECK(bad == 0,
              "%s %s alpha %g beta %g: %lld of %lld elements of C outside the bound; worst "
              "C(%lld,%lld) = %.9g, reference %.17g, bound %.3g (%.3g times it)",
              shape_text, dtype, alpha, beta, bad, m * n, worst_i, worst_j, worst_c, worst_ref,
              worst_bound, worst);
    printf("# graded %s %s: %lld elements, largest |C - ref| / bound %.3g\n", shape_text, dtype,
           m * n, worst);
    saved_free(&sv);
}

static void cli_run_here(void) {
    int state = gpu_here();
    TAP_CHECK(state != GPU_FAILED, "GPU set-up failed: %s", gpu_why);
    if (state == GPU_FAILED) return;
    char dir[PATH_MAX];
    case_path("run-here", dir, sizeof dir);
    result r;
    run_cmd(&r, NULL, ARGS("run", "64x64x64", "--reps", "3", "--save", dir));
    if (state == GPU_READY) {
        CHECK_RUN(&r, r.code == 0, "exit %d, want 0", r.code);
        CHECK_RUN(&r, strstr(r.out, "64x64x64:NN") != NULL, "no shape");
        /* The library's own check is a second opinion; the grade is the test's. */
        CHECK_RUN(&r, strstr(r.out, "PASS") != NULL, "no PASS");
        grade_saved(dir, "64x64x64:NN", "f32", 1.0, 0.0);
    } else {
        CHECK_RUN(&r, r.code == 1, "exit %d, want 1", r.code);
        CHECK_RUN(&r, strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL ||
                          strstr(r.err, gt_status_string(GT_NO_DEVICE)) != NULL,
                  "no '%s' or '%s'", gt_status_string(GT_NO_DRIVER),
                  gt_status_string(GT_NO_DEVICE));
        /* A run that fails writes nothing. */
        TAP_CHECK(!exists(dir), "a failed run created %s", dir);
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
    snprintf(w.config, sizeof w.config, "f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8");
    w.time_us = 1234.5, w.tflops = 27.8, w.tuned_at = 1700000000;
    snprintf(w.nvrtc, sizeof w.nvrtc, "13.0");
    snprintf(w.libver, sizeof w.libver, "%s", GT_VERSION_STRING);
    s = gt_db_store(db, &key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, NULL, 0);
    TAP_CHECK(s == GT_SUCCESS, "store: %s", gt_db_errmsg(db));
    gt_key old = key;
    old.m = 17, old.n = 33, old.k = 65, old.opa = 1, old.opb = 0;
    snprintf(w.config, sizeof w.config, "f0_16x16x8_w8x16_t2x2_s2_v1_k1_r1");
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
    CHECK_RUN(&r, strstr(r.out, "f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8") != NULL,
              "no current config");
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

/* ===== cache-file verbs: fixtures ===== */

#define OLD_SRC "0000000000000000-old-source"
#define H100_NAME "NVIDIA H100 80GB HBM3"
#define A100_NAME "NVIDIA A100-SXM4-80GB"
/* Configurations of the fixtures (canonical text, tuner/kcfg.c): SIMT, 256 threads,
 * 16-byte vectors, legal for every f32 key of alignment 16. */
#define CFG_64 "f0_64x64x16_w32x16_t4x4_s2_v4_k1_r1"
#define CFG_128x64 "f0_128x64x16_w32x32_t8x4_s3_v4_k1_r8"
#define CFG_128 "f0_128x128x16_w32x64_t8x8_s3_v4_k1_r8"

static gt_db *fx_open(const char *path) {
    char msg[512];
    gt_db *db = NULL;
    unlink(path);
    gt_status s = gt_db_open(path, 0, 0, &db, msg, sizeof msg);
    TAP_CHECK(s == GT_SUCCESS && db, "gt_db_open %s: %s", path, msg);
    return s == GT_SUCCESS ? db : NULL;
}

/* Stores a winner (cfg, us, host, when) and two candidate rows: the winner's, and a
 * failed f0_128x128x8_w32x64_t8x8_s2_v1_k1_r1 (legal for every key). */
static void fx_put(gt_db *db, const gt_key *k, const char *src, const char *cfg, double us,
                   const char *host, int64_t when, const char *libver) {
    if (!db) return;
    gt_db_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.config, sizeof w.config, "%s", cfg);
    w.time_us = us;
    w.tflops = 2.0 * (double)k->m * (double)k->n * (double)k->k / (us * 1e6);
    w.tuned_at = when;
    snprintf(w.nvrtc, sizeof w.nvrtc, "13.0");
    snprintf(w.driver, sizeof w.driver, "13000");
    snprintf(w.host, sizeof w.host, "%s", host);
    snprintf(w.libver, sizeof w.libver, "%s", libver);
    gt_db_timing t[2];
    memset(t, 0, sizeof t);
    snprintf(t[0].config, sizeof t[0].config, "%s", cfg);
    snprintf(t[0].status, sizeof t[0].status, "ok");
    t[0].time_us = us, t[0].tflops = w.tflops;
    snprintf(t[1].config, sizeof t[1].config, "f0_128x128x8_w32x64_t8x8_s2_v1_k1_r1");
    snprintf(t[1].status, sizeof t[1].status, "compile_failed");
    t[1].time_us = -1;
    snprintf(t[1].message, sizeof t[1].message, "fixture: ptxas said no");
    gt_status s = gt_db_store(db, k, src, GT_VERSION_MAJOR, &w, t, 2);
    TAP_CHECK(s == GT_SUCCESS, "store %s: %s", cfg, gt_db_errmsg(db));
}

static void fx_cubin(gt_db *db, const char *src, const char *nvrtc, const char *driver) {
    if (!db) return;
    gt_db_bin_key bk = {src, "f32|NN|64x64x64|a16|b1|" CFG_64, 90, nvrtc, driver};
    static const unsigned char image[64] = {0x7f, 'E', 'L', 'F'};
    gt_status s = gt_db_cubin_put(db, &bk, image, sizeof image);
    TAP_CHECK(s == GT_SUCCESS, "cubin put: %s", gt_db_errmsg(db));
}

/* What a file holds, read back with the library. */
typedef struct fx_row {
    gt_key key;
    char src[80];
    gt_db_winner w;
} fx_row;

typedef struct fx_rows {
    fx_row v[32];
    int n;
} fx_rows;

static int fx_collect(const gt_key *key, const char *src, int major, const gt_db_winner *w,
                      void *user) {
    (void)major;
    fx_rows *r = user;
    if (r->n < 32) {
        r->v[r->n].key = *key;
        snprintf(r->v[r->n].src, sizeof r->v[r->n].src, "%s", src);
        r->v[r->n].w = *w;
        r->n++;
    }
    return 0;
}

/* Reads every winner of path; -1 when it cannot be opened. */
static int fx_read(const char *path, fx_rows *rows, int64_t *cubins) {
    char msg[512];
    gt_db *db = NULL;
    memset(rows, 0, sizeof *rows);
    if (gt_db_open(path, 1, 0, &db, msg, sizeof msg) != GT_SUCCESS) return -1;
    gt_status s = gt_db_list(db, fx_collect, rows);
    if (cubins) *cubins = gt_db_cubin_count(db);
    gt_db_close(db);
    return s == GT_SUCCESS ? 0 : -1;
}

static const fx_row *fx_find(const fx_rows *rows, const gt_key *k) {
    for (int i = 0; i < rows->n; i++)
        if (gt_key_equal(&rows->v[i].key, k)) return &rows->v[i];
    return NULL;
}

static int fx_ntimings_cb(const gt_db_timing *t, void *user) {
    (void)t;
    ++*(int *)user;
    return 0;
}

/* Candidate rows of k in path (current source); -1 on error. */
static int fx_ntimings(const char *path, const gt_key *k) {
    char msg[512];
    gt_db *db = NULL;
    int n = 0;
    if (gt_db_open(path, 1, 0, &db, msg, sizeof msg) != GT_SUCCESS) return -1;
    gt_status s = gt_db_timings(db, k, gt_kernel_source_hash, GT_VERSION_MAJOR, fx_ntimings_cb, &n);
    gt_db_close(db);
    return s == GT_SUCCESS ? n : -1;
}

/* Names in root containing ".tmp.": temporary files left behind. */
static int leftover_tmp(void) {
    DIR *d = opendir(root);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp.")) {
            printf("#   left behind: %s\n", e->d_name);
            n++;
        }
    closedir(d);
    return n;
}



static void cache_env(char *buf, size_t size, const char *path) {
    snprintf(buf, size, "GEMMTUNE_CACHE=%s", path);
}

/* ===== export ===== */

static void cli_export(void) {
    char cache[PATH_MAX], env[PATH_MAX + 32], out[PATH_MAX], out2[PATH_MAX];
    case_path("export-cache.db", cache, sizeof cache);
    gt_db *db = fx_open(cache);
    if (!db) return;
    gt_key h1, h2, a1, old;
    fixture_key(&h1, 90, 0, 0, 64, 64, 64, 16, 1);
    fixture_key(&h2, 90, 1, 0, 128, 256, 512, 16, 0);
    fixture_key(&a1, 80, 0, 0, 64, 64, 64, 16, 1);
    fixture_key(&old, 90, 1, 0, 17, 33, 65, 4, 1);
    fx_put(db, &h1, gt_kernel_source_hash, CFG_64, 10.5, "node-h", 1700000000,
           GT_VERSION_STRING);
    fx_put(db, &h2, gt_kernel_source_hash, CFG_128x64, 80.25, "node-h", 1700000100,
           GT_VERSION_STRING);
    fx_put(db, &a1, gt_kernel_source_hash, CFG_128, 12.75, "node-a", 1700000200,
           GT_VERSION_STRING);
    fx_put(db, &old, OLD_SRC, "f0_32x32x8_w16x8_t2x2_s2_v1_k1_r1", 3.0, "node-h", 1600000000,
           "0.0.1");
    fx_cubin(db, gt_kernel_source_hash, gt_rtc_version(), "13000");
    TAP_CHECK(gt_db_cubin_count(db) == 1, "fixture cubin not stored");
    gt_db_close(db);
    cache_env(env, sizeof env, cache);

    /* Everything of the current source. */
    case_path("export-all.db", out, sizeof out);
    result r;
    run_cmd(&r, ENV(env), ARGS("export", "-o", out));
    CHECK_RUN(&r, r.code == 0, "export: exit %d", r.code);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "exported 3 entries to %s", out);
    CHECK_RUN(&r, strstr(r.out, want) != NULL, "no '%s'", want);
    CHECK_RUN(&r, strstr(r.err, "left out 1 ") != NULL, "old-source entry not reported");
    result_free(&r);
    fx_rows rows;
    int64_t cubins = -1;
    TAP_CHECK(fx_read(out, &rows, &cubins) == 0, "cannot read %s", out);
    TAP_CHECK(rows.n == 3, "%d entries in the export, want 3", rows.n);
    TAP_CHECK(cubins == 0, "the export holds %lld cubins", (long long)cubins);
    for (int i = 0; i < rows.n; i++)
        TAP_CHECK(strcmp(rows.v[i].src, gt_kernel_source_hash) == 0, "entry of source %s",
                  rows.v[i].src);
    const fx_row *e = fx_find(&rows, &h2);
    TAP_CHECK(e && strcmp(e->w.config, CFG_128x64) == 0 && e->w.time_us == 80.25 &&
                  e->w.tuned_at == 1700000100 && strcmp(e->w.host, "node-h") == 0,
              "h2 not carried as it was");
    TAP_CHECK(fx_find(&rows, &old) == NULL, "old-source entry exported");
    TAP_CHECK(fx_ntimings(out, &h1) == 2, "timings of h1: %d, want 2", fx_ntimings(out, &h1));

    /* One device only, and --dtype. */
    case_path("export-a100.db", out2, sizeof out2);
    run_cmd(&r, ENV(env), ARGS("export", "--device", A100_NAME, "--dtype", "f32", "-o", out2));
    CHECK_RUN(&r, r.code == 0, "export --device: exit %d", r.code);
    CHECK_RUN(&r, strstr(r.out, "exported 1 entries") != NULL, "export --device: count");
    result_free(&r);
    TAP_CHECK(fx_read(out2, &rows, &cubins) == 0, "cannot read %s", out2);
    TAP_CHECK(rows.n == 1 && fx_find(&rows, &a1) != NULL && cubins == 0,
              "export --device: %d entries", rows.n);
    /* A name that matches nothing exactly: an empty file, still exit 0. */
    run_cmd(&r, ENV(env), ARGS("export", "--device", "NVIDIA H100", "-o", out2));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "exported 0 entries") != NULL,
              "export --device prefix: exit %d", r.code);
    result_free(&r);

    /* Unwritable: a directory that is a file; a target that is a directory (the temp
     * file is written, the rename fails): exit 1, no temp file left. */
    char notdir[PATH_MAX], bad[PATH_MAX + 16], adir[PATH_MAX];
    case_path("export-not-a-dir", notdir, sizeof notdir);
    TAP_CHECK(write_file(notdir, "x", 1) == 0, "cannot write %s", notdir);
    snprintf(bad, sizeof bad, "%s/out.db", notdir);
    run_cmd(&r, ENV(env), ARGS("export", "-o", bad));
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, bad) != NULL, "export to %s: exit %d", bad,
              r.code);
    result_free(&r);
    case_path("export-dir", adir, sizeof adir);
    mkdir(adir, 0755);
    run_cmd(&r, ENV(env), ARGS("export", "-o", adir));
    CHECK_RUN(&r, r.code == 1 && r.err[0], "export over a directory: exit %d", r.code);
    result_free(&r);
    TAP_CHECK(leftover_tmp() == 0, "temporary files left behind");

    /* Usage. */
    expect_usage_error(ENV(env), ARGS("export"), "-o", "export without -o");
    expect_usage_error(ENV(env), ARGS("export", "-o", out, "extra"), "extra", "export extra");
    expect_usage_error(ENV(env), ARGS("export", "-o", out, "--dtype", "f99"), "f99",
                       "export --dtype f99");
    expect_usage_error(ENV(env), ARGS("export", "-o", cache), "cache", "export onto the cache");
    /* A cache that does not exist: exit 1, nothing created. */
    char none[PATH_MAX], noneenv[PATH_MAX + 32], out3[PATH_MAX];
    case_path("export-no-cache.db", none, sizeof none);
    case_path("export-none.db", out3, sizeof out3);
    cache_env(noneenv, sizeof noneenv, none);
    run_cmd(&r, ENV(noneenv), ARGS("export", "-o", out3));
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, none) != NULL, "export of no cache: exit %d",
              r.code);
    TAP_CHECK(!exists(none) && !exists(out3), "export of no cache created a file");
    result_free(&r);
}

/* ===== cache texts: export --text, and texts as inputs ===== */

/* Lines of text starting with prefix. */
static int lines_starting(const char *text, const char *prefix) {
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, prefix, len) == 0) n++;
    return n;
}

static void cli_export_text(void) {
    char cache[PATH_MAX], env[PATH_MAX + 32], txt[PATH_MAX], txt2[PATH_MAX], txt3[PATH_MAX];
    case_path("text-cache.db", cache, sizeof cache);
    gt_db *db = fx_open(cache);
    if (!db) return;
    gt_key h1, h2, a1, old;
    fixture_key(&h1, 90, 0, 0, 64, 64, 64, 16, 1);
    fixture_key(&h2, 90, 1, 0, 128, 256, 512, 16, 0);
    fixture_key(&a1, 80, 0, 0, 64, 64, 64, 16, 1);
    fixture_key(&old, 90, 1, 0, 17, 33, 65, 4, 1);
    fx_put(db, &h1, gt_kernel_source_hash, CFG_64, 10.5, "node h", 1700000000, GT_VERSION_STRING);
    fx_put(db, &h2, gt_kernel_source_hash, CFG_128x64, 80.25, "node-h", 1700000100,
           GT_VERSION_STRING);
    fx_put(db, &a1, gt_kernel_source_hash, CFG_128, 12.75, "", 1700000200, GT_VERSION_STRING);
    fx_put(db, &old, OLD_SRC, "f0_32x32x8_w16x8_t2x2_s2_v1_k1_r1", 3.0, "node-h", 1600000000,
           "0.0.1");
    fx_cubin(db, gt_kernel_source_hash, gt_rtc_version(), "13000");
    gt_db_close(db);
    cache_env(env, sizeof env, cache);

    /* Everything of the current source, as text: a W line per key, its two T lines. */
    case_path("export.txt", txt, sizeof txt);
    result r;
    run_cmd(&r, ENV(env), ARGS("export", "--text", "-o", txt));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "exported 3 entries") != NULL,
              "export --text: exit %d", r.code);
    CHECK_RUN(&r, strstr(r.err, "left out 1 ") != NULL, "old-source entry not reported");
    result_free(&r);
    char *text = slurp(txt);
    TAP_CHECK(strncmp(text, "gemmtune-cache-text\t1\n", 22) == 0, "no first line: %.40s", text);
    TAP_CHECK(lines_starting(text, "W\t") == 3 && lines_starting(text, "T\t") == 6,
              "%d W and %d T lines, want 3 and 6", lines_starting(text, "W\t"),
              lines_starting(text, "T\t"));
    TAP_CHECK(strstr(text, "NVIDIA H100 80GB HBM3|sm90|132|f32|TN|128x256x512|a16|b0\t") &&
                  strstr(text, gt_kernel_source_hash) && !strstr(text, OLD_SRC) &&
                  strstr(text, "\tnode h\t") && strstr(text, "fixture: ptxas said no"),
              "the text lacks an entry, its source or its provenance:\n%s", text);

    /* One device and type. */
    case_path("export-a100.txt", txt2, sizeof txt2);
    run_cmd(&r, ENV(env), ARGS("export", "--text", "--device", A100_NAME, "--dtype", "f32", "-o", txt2));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "exported 1 entries") != NULL,
              "export --text --device: exit %d", r.code);
    result_free(&r);
    char *t2 = slurp(txt2);
    TAP_CHECK(lines_starting(t2, "W\t") == 1 && strstr(t2, A100_NAME "|sm80|108|f32|NN|64x64x64"),
              "export --text --device: %s", t2);
    free(t2);

    /* A text is an input like any cache file: import it into a fresh cache, and its
     * text is the same bytes; merge reads it too. */
    char fresh[PATH_MAX], fenv[PATH_MAX + 32], merged[PATH_MAX];
    case_path("text-fresh.db", fresh, sizeof fresh);
    cache_env(fenv, sizeof fenv, fresh);
    run_cmd(&r, ENV(fenv), ARGS("import", txt));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "imported 3 entries") != NULL,
              "import of a text: exit %d", r.code);
    result_free(&r);
    fx_rows rows;
    int64_t cubins = -1;
    TAP_CHECK(fx_read(fresh, &rows, &cubins) == 0 && rows.n == 3 && cubins == 0,
              "the imported cache holds %d entries, %lld cubins", rows.n, (long long)cubins);
    const fx_row *e = fx_find(&rows, &a1);
    TAP_CHECK(e && strcmp(e->w.config, CFG_128) == 0 && e->w.time_us == 12.75 &&
                  e->w.tuned_at == 1700000200 && e->w.host[0] == 0,
              "a1 not carried as it was");
    TAP_CHECK(fx_ntimings(fresh, &h2) == 2, "timings of h2: %d", fx_ntimings(fresh, &h2));
    case_path("export-again.txt", txt3, sizeof txt3);
    run_cmd(&r, ENV(fenv), ARGS("export", "--text", "-o", txt3));
    CHECK_RUN(&r, r.code == 0, "export --text again: exit %d", r.code);
    result_free(&r);
    char *t3 = slurp(txt3);
    TAP_CHECK(strcmp(text, t3) == 0 && text[0], "text -> cache -> text changed the bytes");
    free(t3);
    case_path("text-merged.db", merged, sizeof merged);
    run_cmd(&r, ENV(env), ARGS("merge", txt, cache, "-o", merged));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "merged 3 entries from 2 files") != NULL,
              "merge of a text and a cache: exit %d", r.code);
    result_free(&r);

    /* A malformed text: refused with its line, the cache's bytes untouched. */
    char bad[PATH_MAX], want[PATH_MAX + 16];
    case_path("bad.txt", bad, sizeof bad);
    const char bad_text[] = "gemmtune-cache-text\t1\n# fine\nW\tnot enough fields\n";
    TAP_CHECK(write_file(bad, bad_text, sizeof bad_text - 1) == 0, "write %s", bad);
    size_t nb = 0, na = 0;
    unsigned char *before = read_all(fresh, &nb);
    run_cmd(&r, ENV(fenv), ARGS("import", bad));
    snprintf(want, sizeof want, "%s:3: ", bad);
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, want) != NULL, "bad text: exit %d, want '%s'",
              r.code, want);
    result_free(&r);
    unsigned char *after = read_all(fresh, &na);
    TAP_CHECK(before && after && nb == na && memcmp(before, after, nb) == 0,
              "a refused text changed the cache");
    free(before), free(after);
    TAP_CHECK(leftover_tmp() == 0, "temporary files left behind");
    free(text);
}

/* gemmtune defaults: its usage, and without a driver it says so, writes nothing and
 * leaves no private cache behind. */
static void cli_defaults_usage(void) {
    char shapes[PATH_MAX], badshapes[PATH_MAX], out[PATH_MAX];
    case_path("defaults-shapes.txt", shapes, sizeof shapes);
    case_path("defaults-bad-shapes.txt", badshapes, sizeof badshapes);
    case_path("defaults-out.txt", out, sizeof out);
    TAP_CHECK(write_text(shapes, "64x64x64\n96 96 96 T N\n") == 0, "write %s", shapes);
    TAP_CHECK(write_text(badshapes, "64x64x64\n64xx\n") == 0, "write %s", badshapes);
    expect_usage_error(NULL, ARGS("defaults", "-o", out), "--file", "defaults without --file");
    expect_usage_error(NULL, ARGS("defaults", "--file", shapes), "-o FILE",
                       "defaults without -o");
    expect_usage_error(NULL, ARGS("defaults", "--file", shapes, "-o", out, "--dtype", "f99"),
                       "f99", "defaults --dtype f99");
    expect_usage_error(NULL, ARGS("defaults", "--file", badshapes, "-o", out), ":2",
                       "defaults with a bad shape file");
    expect_usage_error(NULL, ARGS("defaults", "--file", shapes, "-o", out, "64x64x64"),
                       "64x64x64", "defaults with a shape argument");
    char missing[PATH_MAX];
    case_path("defaults-missing.txt", missing, sizeof missing);
    expect_usage_error(NULL, ARGS("defaults", "--file", missing, "-o", out), missing,
                       "defaults with a missing shape file");
    result r;
    run_cmd(&r, ENV(NO_DRIVER_ENV),
            ARGS("defaults", "--file", shapes, "--dtype", "f32", "--dtype", "bf16", "-o", out));
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL,
              "defaults without a driver: exit %d", r.code);
    result_free(&r);
    TAP_CHECK(!exists(out), "defaults without a driver wrote %s", out);
    TAP_CHECK(leftover_tmp() == 0, "a private cache was left behind");
}

/* prebuild's arguments are checked before any GPU is touched; without a driver it says so
 * and fails. */
static void cli_prebuild_usage(void) {
    expect_usage_error(NULL, ARGS("prebuild", "--align", "3"), "--align", "prebuild --align 3");
    expect_usage_error(NULL, ARGS("prebuild", "--align", "16,x"), "--align", "prebuild --align 16,x");
    expect_usage_error(NULL, ARGS("prebuild", "--beta", "some"), "--beta", "prebuild --beta some");
    expect_usage_error(NULL, ARGS("prebuild", "--ops", "NX"), "--ops", "prebuild --ops NX");
    expect_usage_error(NULL, ARGS("prebuild", "--ops", "NN,TTT"), "--ops", "prebuild --ops NN,TTT");
    expect_usage_error(NULL, ARGS("prebuild", "--threads", "0"), "--threads", "prebuild --threads 0");
    expect_usage_error(NULL, ARGS("prebuild", "--dtype", "f99"), "f99", "prebuild --dtype f99");
    expect_usage_error(NULL, ARGS("prebuild", "64x64x64"), "64x64x64", "prebuild with a shape");
    result r;
    run_cmd(&r, ENV(NO_DRIVER_ENV), ARGS("prebuild", "--dtype", "f32", "--ops", "NN", "--align", "16"));
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL,
              "prebuild without a driver: exit %d", r.code);
    result_free(&r);
}

/* info names the built-in defaults: off with GEMMTUNE_DEFAULTS=0, else what is built in. */
static void cli_info_defaults(void) {
    result r;
    run_cmd(&r, ENV(NO_DRIVER_ENV, "GEMMTUNE_DEFAULTS=0"), ARGS("info"));
    CHECK_RUN(&r, strstr(r.out, "built-in defaults: off (GEMMTUNE_DEFAULTS=0)") != NULL,
              "info does not say the defaults are off");
    result_free(&r);
    run_cmd(&r, ENV(NO_DRIVER_ENV, "GEMMTUNE_DEFAULTS"), ARGS("info"));
    const char *line = strstr(r.out, "built-in defaults: ");
    CHECK_RUN(&r, line && strncmp(line, "built-in defaults: off", 22) != 0 &&
                      (strstr(line, "none built in") || strstr(line, "files loaded")),
              "info does not name the built-in defaults");
    if (line) printf("# %.*s\n", (int)strcspn(line, "\n"), line);
    result_free(&r);
}

/* With a GPU: defaults tunes into a private cache (the user's cache is not created) and
 * writes this GPU's entries of the current kernel source as a text that import reads. */
static void cli_defaults_here(void) {
    NEED_GPU();
    char shapes[PATH_MAX], out[PATH_MAX], user[PATH_MAX], uenv[PATH_MAX + 32];
    case_path("defaults-here-shapes.txt", shapes, sizeof shapes);
    case_path("defaults-here.txt", out, sizeof out);
    case_path("defaults-here-user.db", user, sizeof user);
    cache_env(uenv, sizeof uenv, user);
    TAP_CHECK(write_text(shapes, "# two\n64x64x64\n96 96 96 T N\n") == 0, "write");
    result r;
    run_cmd(&r, ENV(uenv, "GEMMTUNE_DEFAULTS"), ARGS("defaults", "--file", shapes, "-o", out));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "exported 2 entries") != NULL,
              "defaults: exit %d", r.code);
    result_free(&r);
    TAP_CHECK(!exists(user), "defaults created the user's cache %s", user);
    TAP_CHECK(leftover_tmp() == 0, "a private cache was left behind");
    char *text = slurp(out);
    TAP_CHECK(lines_starting(text, "W\t") == 2 && strstr(text, "|f32|NN|64x64x64|a16|b1\t") &&
                  strstr(text, "|f32|TN|96x96x96|a16|b1\t") && strstr(text, gt_kernel_source_hash),
              "the text lacks a shape or the kernel source:\n%.2000s", text);
    free(text);
    run_cmd(&r, ENV(uenv), ARGS("import", out));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "imported 2 entries") != NULL,
              "import of the defaults: exit %d", r.code);
    result_free(&r);
}

/* export and merge --keep N: each key's N fastest timings that ran, the winner's and every
 * failed one, in their order; a bad count refused. */
static void cli_merge_keep(void) {
    char in[PATH_MAX], out[PATH_MAX], text[4096];
    case_path("keep-in.txt", in, sizeof in);
    case_path("keep-out.txt", out, sizeof out);
    const char *key = H100_NAME "|sm90|132|f32|NN|64x64x64|a16|b1";
    snprintf(text, sizeof text,
             "gemmtune-cache-text\t1\n"
             "W\t%s\t%s\t%d\t%s\t10.5\t0.05\t13.0\t13000\tnode\t1700000000\t%s\n"
             "T\t%s\tok\t10.5\t0.05\t-\n"
             "T\t%s\tok\t11\t0.04\t-\n"
             "T\t%s\tok\t12\t0.04\t-\n"
             "T\tf0_64x64x16_w32x16_t4x4_s3_v4_k1_r1\tok\t20\t0.02\t-\n"
             "T\tf0_32x32x8_w16x8_t2x2_s2_v1_k1_r1\tcompile_failed\t-1\t0\tfixture: no\n",
             key, gt_kernel_source_hash, GT_VERSION_MAJOR, CFG_64, GT_VERSION_STRING, CFG_64,
             CFG_128, CFG_128x64);
    TAP_CHECK(write_file(in, text, strlen(text)) == 0, "write %s", in);
    result r;
    run_cmd(&r, NULL, ARGS("merge", in, "-o", out, "--text", "--keep", "2"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "merged 1 entries"), "merge --keep 2: exit %d", r.code);
    result_free(&r);
    char *got = slurp(out);
    TAP_CHECK(got && lines_starting(got, "T\t") == 3 && strstr(got, "T\t" CFG_64 "\tok") &&
                  strstr(got, "T\t" CFG_128 "\tok") && !strstr(got, CFG_128x64) &&
                  !strstr(got, "_s3_v4_k1_r1\tok") && strstr(got, "compile_failed"),
              "merge --keep 2 kept other timings:\n%s", got ? got : "");
    free(got);
    /* Without --keep every timing stays. */
    unlink(out);
    run_cmd(&r, NULL, ARGS("merge", in, "-o", out, "--text"));
    CHECK_RUN(&r, r.code == 0, "merge: exit %d", r.code);
    result_free(&r);
    got = slurp(out);
    TAP_CHECK(got && lines_starting(got, "T\t") == 5, "merge without --keep dropped timings");
    free(got);
    unlink(out);
    run_cmd(&r, NULL, ARGS("merge", in, "-o", out, "--keep", "0"));
    CHECK_RUN(&r, r.code == 2 && strstr(r.err, "--keep wants a count") && access(out, F_OK) != 0,
              "--keep 0: exit %d, a file written: %d", r.code, access(out, F_OK) == 0);
    result_free(&r);
}

/* ===== merge ===== */

static void cli_merge(void) {
    char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
    case_path("merge-a.db", a, sizeof a);
    case_path("merge-b.db", b, sizeof b);
    case_path("merge-c.db", c, sizeof c);
    gt_key k1, k2, k3, k4, k5, k6, k7, k8;
    fixture_key(&k1, 90, 0, 0, 256, 256, 256, 16, 1);
    fixture_key(&k2, 90, 0, 1, 512, 512, 512, 16, 1);
    fixture_key(&k3, 90, 0, 0, 17, 33, 65, 16, 1);  /* tampered in A: out-of-range tile */
    fixture_key(&k4, 90, 0, 0, 1000, 1000, 8, 16, 1); /* tampered in B: unknown parameter */
    fixture_key(&k5, 80, 1, 1, 96, 96, 96, 16, 0);  /* only in B */
    fixture_key(&k6, 90, 1, 0, 640, 480, 320, 16, 1); /* a tie: A's stays */
    fixture_key(&k7, 90, 0, 0, 33, 33, 33, 4, 1);   /* align 4: v2 is illegal */
    fixture_key(&k8, 90, 1, 1, 44, 44, 44, 4, 0);   /* align 4, and not whole vectors */
    /* BM = 999 is outside the table; "_q3" is no parameter; 64 x 8 floats in vectors of 4
     * are 128 vectors, not a whole number for each of 256 threads; 8-byte vectors on the
     * 4-byte class (16-byte ones would read aligned copies). */
    const char *bad_align = "f0_64x64x16_w32x16_t4x4_s2_v2_k1_r1";
    const char *bad_tile = "f0_999x64x8_w32x16_t4x4_s2_v1_k1_r1",
               *bad_param = "f0_64x64x8_w32x16_t4x4_s2_v1_k1_r1_q3",
               *bad_vec = "f0_64x64x8_w32x16_t4x4_s2_v4_k1_r1";
    gt_db *db = fx_open(a);
    fx_put(db, &k1, gt_kernel_source_hash, CFG_64, 5.0, "alpha", 1700000001, "0.1.0");
    fx_put(db, &k2, gt_kernel_source_hash, CFG_64, 20.0, "alpha", 1700000002, "0.1.0");
    fx_put(db, &k3, gt_kernel_source_hash, bad_tile, 1.0, "alpha", 1700000003, "0.1.0");
    fx_put(db, &k6, gt_kernel_source_hash, CFG_64, 7.0, "alpha", 1700000006, "0.1.0");
    fx_put(db, &k7, gt_kernel_source_hash, bad_align, 1.0, "alpha", 1700000007, "0.1.0");
    fx_put(db, &k8, gt_kernel_source_hash, bad_vec, 1.0, "alpha", 1700000008, "0.1.0");
    fx_put(db, &k1, OLD_SRC, CFG_64, 0.5, "alpha", 1600000000, "0.0.1");
    if (db) gt_db_close(db);
    db = fx_open(b);
    fx_put(db, &k1, gt_kernel_source_hash, CFG_128x64, 8.0, "beta", 1700000011, "0.1.1");
    fx_put(db, &k2, gt_kernel_source_hash, CFG_128x64, 10.0, "beta", 1700000012, "0.1.1");
    fx_put(db, &k4, gt_kernel_source_hash, bad_param, 1.0, "beta", 1700000014, "0.1.1");
    fx_put(db, &k5, gt_kernel_source_hash, CFG_64, 9.0, "beta", 1700000015, "0.1.1");
    fx_put(db, &k6, gt_kernel_source_hash, CFG_128x64, 7.0, "beta", 1700000016, "0.1.1");
    if (db) gt_db_close(db);

    result r;
    run_cmd(&r, NULL, ARGS("merge", a, b, "-o", c));
    CHECK_RUN(&r, r.code == 0, "merge: exit %d", r.code);
    CHECK_RUN(&r, strstr(r.out, "merged 4 entries") != NULL, "no 'merged 4 entries'");
    CHECK_RUN(&r, strstr(r.err, bad_tile) != NULL, "out-of-range tile not named");
    CHECK_RUN(&r, strstr(r.err, bad_param) != NULL, "unknown parameter not named");
    CHECK_RUN(&r, strstr(r.err, "breaks aligned") != NULL,
              "v2 on align 4 not rejected as unaligned");
    CHECK_RUN(&r, strstr(r.err, "|TT|44x44x44|") != NULL, "%s on align 4 accepted", bad_vec);
    CHECK_RUN(&r, count_substr(r.err, ": rejected ") == 4, "not 4 rejections");
    CHECK_RUN(&r, strstr(r.err, "|NN|17x33x65|") != NULL, "the rejected key is not named");
    result_free(&r);
    fx_rows rows;
    int64_t cubins = -1;
    TAP_CHECK(fx_read(c, &rows, &cubins) == 0, "cannot read %s", c);
    TAP_CHECK(rows.n == 4 && cubins == 0, "%d entries, %lld cubins", rows.n, (long long)cubins);
    const fx_row *e = fx_find(&rows, &k1);
    TAP_CHECK(e && e->w.time_us == 5.0 && strcmp(e->w.host, "alpha") == 0 &&
                  e->w.tuned_at == 1700000001 && strcmp(e->w.libver, "0.1.0") == 0 &&
                  strcmp(e->src, gt_kernel_source_hash) == 0,
              "k1: want A's (alpha, 5 us)");
    e = fx_find(&rows, &k2);
    TAP_CHECK(e && e->w.time_us == 10.0 && strcmp(e->w.host, "beta") == 0 &&
                  e->w.tuned_at == 1700000012 && strcmp(e->w.libver, "0.1.1") == 0 &&
                  strcmp(e->w.config, CFG_128x64) == 0,
              "k2: want B's (beta, 10 us)");
    e = fx_find(&rows, &k6);
    TAP_CHECK(e && strcmp(e->w.host, "alpha") == 0, "k6: a tie must keep the first input's");
    TAP_CHECK(fx_find(&rows, &k5) != NULL, "k5 (only in B) missing");
    TAP_CHECK(!fx_find(&rows, &k3) && !fx_find(&rows, &k4) && !fx_find(&rows, &k7) &&
                  !fx_find(&rows, &k8),
              "a tampered entry was merged");
    TAP_CHECK(fx_ntimings(c, &k2) == 2, "k2's timings not carried");

    /* The output may not be an input; a missing input writes nothing. */
    expect_usage_error(NULL, ARGS("merge", a, b, "-o", b), "input", "merge -o an input");
    char d[PATH_MAX], missing[PATH_MAX], garbage[PATH_MAX];
    case_path("merge-d.db", d, sizeof d);
    case_path("merge-missing.db", missing, sizeof missing);
    run_cmd(&r, NULL, ARGS("merge", a, missing, "-o", d));
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, missing) != NULL, "missing input: exit %d",
              r.code);
    TAP_CHECK(!exists(d), "merge with a missing input wrote %s", d);
    result_free(&r);
    case_path("merge-garbage.db", garbage, sizeof garbage);
    make_random_file(garbage);
    run_cmd(&r, NULL, ARGS("merge", a, garbage, "-o", d));
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, garbage) != NULL, "garbage input: exit %d",
              r.code);
    TAP_CHECK(!exists(d), "merge with a garbage input wrote %s", d);
    result_free(&r);
    TAP_CHECK(leftover_tmp() == 0, "temporary files left behind");
    expect_usage_error(NULL, ARGS("merge", a, b), "-o", "merge without -o");
    expect_usage_error(NULL, ARGS("merge", "-o", d), NULL, "merge without inputs");
}

/* ===== import ===== */

static void cli_import(void) {
    char cache[PATH_MAX], env[PATH_MAX + 32], file[PATH_MAX];
    case_path("import-cache.db", cache, sizeof cache);
    case_path("import-file.db", file, sizeof file);
    gt_key k1, k2, k3, k4, k5;
    fixture_key(&k1, 90, 0, 0, 300, 300, 300, 16, 1);
    fixture_key(&k2, 90, 0, 0, 400, 400, 400, 16, 1);
    fixture_key(&k3, 80, 0, 1, 500, 500, 500, 16, 0);
    fixture_key(&k4, 90, 0, 0, 600, 600, 600, 16, 1);
    fixture_key(&k5, 90, 0, 0, 700, 700, 700, 16, 1);
    gt_db *db = fx_open(cache);
    fx_put(db, &k1, gt_kernel_source_hash, CFG_64, 7.0, "local", 1700000101, "0.1.0");
    fx_put(db, &k2, gt_kernel_source_hash, CFG_64, 3.0, "local", 1700000102, "0.1.0");
    if (db) gt_db_close(db);
    db = fx_open(file);
    fx_put(db, &k1, gt_kernel_source_hash, CFG_128x64, 5.0, "shipped", 1700000201,
           "0.1.0");
    fx_put(db, &k2, gt_kernel_source_hash, CFG_128x64, 9.0, "shipped", 1700000202,
           "0.1.0");
    fx_put(db, &k3, gt_kernel_source_hash, CFG_64, 4.0, "shipped", 1700000203,
           "0.1.0");
    fx_put(db, &k4, gt_kernel_source_hash, "f0_64x64x8_w32x16_t4x4_s2_v2_k1_r1_x1", 1.0, "shipped",
           1700000204, "0.1.0");
    fx_put(db, &k5, OLD_SRC, CFG_64, 1.0, "shipped", 1600000000, "0.0.1");
    if (db) gt_db_close(db);
    cache_env(env, sizeof env, cache);

    result r;
    run_cmd(&r, ENV(env), ARGS("import", file));
    CHECK_RUN(&r, r.code == 0, "import: exit %d", r.code);
    CHECK_RUN(&r, strstr(r.out, "imported 2 ") != NULL, "no 'imported 2'");
    CHECK_RUN(&r, strstr(r.out, "kept 1 ") != NULL, "no 'kept 1'");
    CHECK_RUN(&r, strstr(r.out, "rejected 1") != NULL, "no 'rejected 1'");
    CHECK_RUN(&r, strstr(r.out, "skipped 1 ") != NULL, "no 'skipped 1'");
    CHECK_RUN(&r, strstr(r.err, "f0_64x64x8_w32x16_t4x4_s2_v2_k1_r1_x1") != NULL,
              "rejected config not named");
    result_free(&r);
    fx_rows rows;
    TAP_CHECK(fx_read(cache, &rows, NULL) == 0, "cannot read %s", cache);
    const fx_row *e = fx_find(&rows, &k1);
    TAP_CHECK(e && e->w.time_us == 5.0 && strcmp(e->w.host, "shipped") == 0,
              "k1: the faster imported entry did not replace the cache's");
    e = fx_find(&rows, &k2);
    TAP_CHECK(e && e->w.time_us == 3.0 && strcmp(e->w.host, "local") == 0,
              "k2: the cache's faster entry was replaced");
    TAP_CHECK(fx_find(&rows, &k3) != NULL, "k3 not imported");
    TAP_CHECK(fx_find(&rows, &k4) == NULL, "tampered k4 imported");
    TAP_CHECK(rows.n == 3, "%d entries, want 3", rows.n);

    /* A file of random bytes, and a missing file: exit 1, cache untouched. */
    char garbage[PATH_MAX], missing[PATH_MAX];
    case_path("import-garbage.db", garbage, sizeof garbage);
    make_random_file(garbage);
    size_t nb = 0, na = 0;
    unsigned char *before = read_all(cache, &nb);
    run_cmd(&r, ENV(env), ARGS("import", garbage));
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, garbage) != NULL, "garbage: exit %d", r.code);
    result_free(&r);
    case_path("import-missing.db", missing, sizeof missing);
    run_cmd(&r, ENV(env), ARGS("import", missing));
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, missing) != NULL, "missing: exit %d", r.code);
    result_free(&r);
    unsigned char *after = read_all(cache, &na);
    TAP_CHECK(before && after && nb == na && nb > 0 && memcmp(before, after, nb) == 0,
              "the cache changed (%zu -> %zu bytes)", nb, na);
    free(before), free(after);

    expect_usage_error(ENV(env), ARGS("import"), NULL, "import without a file");
    expect_usage_error(ENV(env), ARGS("import", file, file), NULL, "import with two files");
    expect_usage_error(ENV(env), ARGS("import", cache), NULL, "import of the cache itself");
}

/* ===== show ===== */

static void cli_show(void) {
    char cache[PATH_MAX], env[PATH_MAX + 32];
    case_path("show-cache.db", cache, sizeof cache);
    gt_db *db = fx_open(cache);
    if (!db) return;
    gt_key h, a, other;
    fixture_key(&h, 90, 0, 1, 1024, 512, 256, 16, 1);
    fixture_key(&a, 80, 0, 1, 1024, 512, 256, 16, 0);
    fixture_key(&other, 90, 0, 0, 1024, 512, 256, 16, 1); /* other ops: not shown */
    gt_db_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.config, sizeof w.config, "%s", CFG_128x64);
    w.time_us = 50.0, w.tflops = 5.37, w.tuned_at = 1700000000;
    snprintf(w.host, sizeof w.host, "show-host");
    snprintf(w.libver, sizeof w.libver, "0.1.0");
    snprintf(w.nvrtc, sizeof w.nvrtc, "13.0");
    gt_db_timing t[4];
    memset(t, 0, sizeof t);
    const char *cfg[4] = {CFG_64, CFG_128x64, CFG_128, "f0_64x128x16_w16x64_t4x8_s3_v4_k1_r8"};
    const char *st[4] = {"ok", "ok", "compile_failed", "verify_failed"};
    double us[4] = {70.0, 50.0, -1, 40.0};
    const char *msgs[4] = {"", "", "ptxas: too many resources", "relative error 3e-2"};
    for (int i = 0; i < 4; i++) {
        snprintf(t[i].config, sizeof t[i].config, "%s", cfg[i]);
        snprintf(t[i].status, sizeof t[i].status, "%s", st[i]);
        snprintf(t[i].message, sizeof t[i].message, "%s", msgs[i]);
        t[i].time_us = us[i];
    }
    TAP_CHECK(gt_db_store(db, &h, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, t, 4) ==
                  GT_SUCCESS, "store: %s", gt_db_errmsg(db));
    fx_put(db, &a, OLD_SRC, CFG_128, 60.0, "a100-host", 1600000000, "0.0.1");
    fx_put(db, &other, gt_kernel_source_hash, "f0_32x32x8_w16x8_t2x2_s2_v1_k1_r1", 99.0, "x", 1,
           "0.1.0");
    gt_db_close(db);
    cache_env(env, sizeof env, cache);

    result r;
    run_cmd(&r, ENV(env), ARGS("show", "1024x512x256:NT"));
    CHECK_RUN(&r, r.code == 0, "show: exit %d", r.code);
    for (int i = 0; i < 4; i++) {
        CHECK_RUN(&r, strstr(r.out, cfg[i]) != NULL, "no candidate %s", cfg[i]);
        CHECK_RUN(&r, strstr(r.out, st[i]) != NULL, "no status %s", st[i]);
    }
    CHECK_RUN(&r, strstr(r.out, "ptxas: too many resources") != NULL, "no failure message");
    CHECK_RUN(&r, strstr(r.out, H100_NAME) && strstr(r.out, A100_NAME), "not both devices");
    CHECK_RUN(&r, strstr(r.out, "show-host") && strstr(r.out, "a100-host"), "no hosts");
    CHECK_RUN(&r, strstr(r.out, "2023-11-14") != NULL, "no date");
    CHECK_RUN(&r, strstr(r.out, "current kernel source") != NULL, "current not marked");
    CHECK_RUN(&r, strstr(r.out, "old kernel source") != NULL, "old not marked");
    CHECK_RUN(&r, strstr(r.out, "f0_32x32x8_w16x8_t2x2_s2_v1_k1_r1") == NULL,
              "showed a key of other ops");
    /* Fastest first: 50 us before 70 us, both before the failed one. */
    const char *hh = strstr(r.out, H100_NAME);
    const char *p50 = hh ? strstr(hh, "    " CFG_128x64) : NULL,
               *p70 = hh ? strstr(hh, "    " CFG_64) : NULL,
               *pf = hh ? strstr(hh, "compile_failed") : NULL;
    CHECK_RUN(&r, p50 && p70 && pf && p50 < p70 && p70 < pf, "candidates not fastest first");
    result_free(&r);

    run_cmd(&r, ENV(env), ARGS("show", "3x5x7"));
    CHECK_RUN(&r, r.code == 1 && strstr(r.out, "3x5x7") != NULL, "unknown shape: exit %d",
              r.code);
    result_free(&r);
    expect_usage_error(ENV(env), ARGS("show"), NULL, "show without a shape");
    expect_usage_error(ENV(env), ARGS("show", "3x5"), "3x5", "show 3x5");
    expect_usage_error(ENV(env), ARGS("show", "3x5x7", "--dtype", "q8"), "q8", "show --dtype q8");
}

/* ===== prune ===== */

static void cli_prune(void) {
    char cache[PATH_MAX], env[PATH_MAX + 32];
    case_path("prune-cache.db", cache, sizeof cache);
    gt_db *db = fx_open(cache);
    if (!db) return;
    gt_key k1, k2, k3;
    fixture_key(&k1, 90, 0, 0, 64, 64, 64, 16, 1);
    fixture_key(&k2, 90, 1, 1, 80, 80, 80, 16, 1);
    fixture_key(&k3, 80, 0, 0, 64, 64, 64, 16, 1);
    fx_put(db, &k1, gt_kernel_source_hash, CFG_64, 5.0, "h", 1700000000, "0.1.0");
    fx_put(db, &k3, gt_kernel_source_hash, CFG_64, 6.0, "h", 1700000000, "0.1.0");
    fx_put(db, &k1, OLD_SRC, CFG_64, 4.0, "h", 1600000000, "0.0.1");
    fx_put(db, &k2, OLD_SRC, CFG_64, 4.0, "h", 1600000000, "0.0.1");
    /* The child loads the same driver as this process does, or none. */
    const char *driver = gt_cu_load() == GT_SUCCESS ? gt_cu_driver_version() : "13000";
    fx_cubin(db, gt_kernel_source_hash, gt_rtc_version(), driver); /* kept */
    fx_cubin(db, OLD_SRC, gt_rtc_version(), driver);               /* other source */
    gt_db_bin_key bk = {gt_kernel_source_hash, "f32|NN|80x80x80|a16|b1|" CFG_64, 90,
                        "0.0", driver};
    TAP_CHECK(gt_db_cubin_put(db, &bk, "x", 1) == GT_SUCCESS, "cubin put"); /* other NVRTC */
    gt_db_close(db);
    cache_env(env, sizeof env, cache);

    result r;
    run_cmd(&r, ENV(env), ARGS("prune"));
    CHECK_RUN(&r, r.code == 0, "prune: exit %d", r.code);
    CHECK_RUN(&r, strstr(r.out, "pruned 2 entries") != NULL, "no 'pruned 2 entries'");
    CHECK_RUN(&r, strstr(r.out, "and 2 cubins") != NULL, "no 'and 2 cubins'");
    result_free(&r);
    fx_rows rows;
    int64_t cubins = -1;
    TAP_CHECK(fx_read(cache, &rows, &cubins) == 0, "cannot read %s", cache);
    TAP_CHECK(rows.n == 2, "%d entries after prune, want 2", rows.n);
    for (int i = 0; i < rows.n; i++)
        TAP_CHECK(strcmp(rows.v[i].src, gt_kernel_source_hash) == 0, "old entry kept");
    TAP_CHECK(fx_find(&rows, &k1) && fx_find(&rows, &k3), "a current entry was pruned");
    TAP_CHECK(cubins == 1, "%lld cubins after prune, want 1", (long long)cubins);
    /* Again: nothing left to prune. */
    run_cmd(&r, ENV(env), ARGS("prune"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "pruned 0 entries") != NULL, "second prune");
    result_free(&r);
    /* No cache: nothing to do, nothing created. */
    char none[PATH_MAX], noneenv[PATH_MAX + 32];
    case_path("prune-none.db", none, sizeof none);
    cache_env(noneenv, sizeof noneenv, none);
    run_cmd(&r, ENV(noneenv), ARGS("prune"));
    CHECK_RUN(&r, r.code == 0, "prune of no cache: exit %d", r.code);
    TAP_CHECK(!exists(none), "prune created %s", none);
    result_free(&r);
    expect_usage_error(ENV(env), ARGS("prune", "extra"), "extra", "prune extra");
}

/* ===== tune --shard and --dry-run ===== */

#define NO_SLURM "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", \
                 "SLURM_PROCID", "SLURM_NTASKS"

/* The shape lines of a dry run into lines[] (at most max); their count, -1 on failure. */
static int dry_lines(const result *r, char lines[][48], int max) {
    int n = 0;
    const char *p = r->out;
    while (*p && n < max) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        snprintf(lines[n++], 48, "%.*s", (int)(len < 47 ? len : 47), p);
        p += len + (nl ? 1 : 0);
    }
    return n;
}

static void cli_shard(void) {
    char file[PATH_MAX], cache[PATH_MAX], cenv[PATH_MAX + 32];
    const char text[] = "# ten shapes\n"
                        "64x64x64\n"
                        "128 128 128 T N\n"
                        "96x32x16:NT\n"
                        "\n"
                        "1x2x3\n"
                        "4 5 6\n"
                        "7x8x9:TT\n"
                        "10x11x12\n"
                        "13x14x15   # comment\n"
                        "16x17x18:TN\n"
                        "19x20x21\n";
    static const char *all[10] = {"64x64x64:NN", "128x128x128:TN", "96x32x16:NT", "1x2x3:NN",
                                  "4x5x6:NN",    "7x8x9:TT",       "10x11x12:NN", "13x14x15:NN",
                                  "16x17x18:TN", "19x20x21:NN"};
    case_path("shard-shapes.txt", file, sizeof file);
    TAP_CHECK(write_file(file, text, sizeof text - 1) == 0, "cannot write %s", file);
    /* Dry runs touch neither GPU nor cache. */
    case_path("shard-never-created.db", cache, sizeof cache);
    cache_env(cenv, sizeof cenv, cache);

    result r;
    char lines[16][48];
    /* No shard: every shape, in order, and no shard line. */
    run_cmd(&r, ENV(NO_DRIVER_ENV, cenv, NO_SLURM), ARGS("tune", "--dry-run", "--file", file));
    CHECK_RUN(&r, r.code == 0, "dry run: exit %d", r.code);
    int n = dry_lines(&r, lines, 16);
    CHECK_RUN(&r, n == 10, "%d shapes, want 10", n);
    for (int j = 0; j < n && j < 10; j++)
        CHECK_RUN(&r, strcmp(lines[j], all[j]) == 0, "line %d '%s', want '%s'", j, lines[j],
                  all[j]);
    CHECK_RUN(&r, strstr(r.err, "shard") == NULL, "a shard line without a shard");
    result_free(&r);

    /* Three shards: disjoint, round-robin, together everything. */
    int seen[10] = {0};
    for (int i = 0; i < 3; i++) {
        char arg[8], want[64];
        snprintf(arg, sizeof arg, "%d/3", i);
        run_cmd(&r, ENV(NO_DRIVER_ENV, cenv, NO_SLURM),
                ARGS("tune", "--dry-run", "--file", file, "--shard", arg));
        CHECK_RUN(&r, r.code == 0, "--shard %s: exit %d", arg, r.code);
        n = dry_lines(&r, lines, 16);
        int want_n = (10 - i + 2) / 3;
        CHECK_RUN(&r, n == want_n, "--shard %s: %d shapes, want %d", arg, n, want_n);
        for (int j = 0; j < n; j++) {
            int idx = i + 3 * j;
            CHECK_RUN(&r, idx < 10 && strcmp(lines[j], all[idx]) == 0,
                      "--shard %s line %d: '%s'", arg, j, lines[j]);
            if (idx < 10) seen[idx]++;
        }
        snprintf(want, sizeof want, "shard %d/3: %d of 10 shapes", i, want_n);
        CHECK_RUN(&r, strstr(r.err, want) != NULL, "no '%s'", want);
        result_free(&r);
    }
    for (int j = 0; j < 10; j++) TAP_CHECK(seen[j] == 1, "shape %d in %d shards", j, seen[j]);

    /* Command-line shapes come before the file's. */
    run_cmd(&r, ENV(NO_DRIVER_ENV, cenv, NO_SLURM),
            ARGS("tune", "--dry-run", "--file", file, "5x5x5:TT", "--shard", "0/2"));
    n = dry_lines(&r, lines, 16);
    CHECK_RUN(&r, r.code == 0 && n == 6 && strcmp(lines[0], "5x5x5:TT") == 0 &&
                      strcmp(lines[1], all[1]) == 0,
              "command-line shape not first");
    result_free(&r);

    /* Defaults from Slurm: the array (minus its minimum), else the task rank. */
    struct {
        const char *const *env;
        const char *first, *want;
    } slurm[] = {
        {ENV(NO_DRIVER_ENV, cenv, NO_SLURM, "SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_MIN=4",
             "SLURM_ARRAY_TASK_COUNT=3"),
         all[1], "shard 1/3"},
        {ENV(NO_DRIVER_ENV, cenv, NO_SLURM, "SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_COUNT=3"),
         all[2], "shard 2/3"},
        {ENV(NO_DRIVER_ENV, cenv, NO_SLURM, "SLURM_PROCID=1", "SLURM_NTASKS=4"), all[1],
         "shard 1/4"},
        /* The array wins over the task rank. */
        {ENV(NO_DRIVER_ENV, cenv, NO_SLURM, "SLURM_PROCID=0", "SLURM_NTASKS=1",
             "SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=5"),
         all[1], "shard 1/5"},
    };
    for (size_t i = 0; i < sizeof slurm / sizeof slurm[0]; i++) {
        run_cmd(&r, slurm[i].env, ARGS("tune", "--dry-run", "--file", file));
        n = dry_lines(&r, lines, 16);
        CHECK_RUN(&r, r.code == 0 && n > 0 && strcmp(lines[0], slurm[i].first) == 0,
                  "slurm case %zu: first shape '%s', want '%s'", i, n > 0 ? lines[0] : "",
                  slurm[i].first);
        CHECK_RUN(&r, strstr(r.err, slurm[i].want) != NULL, "slurm case %zu: no '%s'", i,
                  slurm[i].want);
        result_free(&r);
    }
    /* --shard wins over the environment. */
    run_cmd(&r, ENV(NO_DRIVER_ENV, cenv, NO_SLURM, "SLURM_PROCID=1", "SLURM_NTASKS=2"),
            ARGS("tune", "--dry-run", "--file", file, "--shard", "0/5"));
    n = dry_lines(&r, lines, 16);
    CHECK_RUN(&r, r.code == 0 && n == 2 && strcmp(lines[1], all[5]) == 0,
              "--shard did not win over SLURM_PROCID");
    result_free(&r);
    TAP_CHECK(!exists(cache), "a dry run created the cache");

    /* Bad shards. */
    static const char *bad[] = {"3/3", "1/0", "x/2", "1", "/2", "1/", "-1/2", "1/2/3", "0/2x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "--shard %s", bad[i]);
        expect_usage_error(ENV(NO_DRIVER_ENV, cenv, NO_SLURM),
                           ARGS("tune", "--dry-run", "64x64x64", "--shard", bad[i]), "--shard",
                           what);
    }
    expect_usage_error(ENV(NO_DRIVER_ENV, cenv, NO_SLURM, "SLURM_PROCID=x", "SLURM_NTASKS=2"),
                       ARGS("tune", "--dry-run", "64x64x64"), "SLURM_PROCID", "SLURM_PROCID=x");
    expect_usage_error(
        ENV(NO_DRIVER_ENV, cenv, NO_SLURM, "SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_COUNT=3"),
        ARGS("tune", "--dry-run", "64x64x64"), "SLURM_ARRAY_TASK_COUNT", "array id 3 of 3");
    expect_usage_error(ENV(NO_DRIVER_ENV, cenv, NO_SLURM, "SLURM_PROCID=2", "SLURM_NTASKS=2"),
                       ARGS("tune", "--dry-run", "64x64x64"), "SLURM_NTASKS", "rank 2 of 2");
}

/* ===== tune --devices ===== */

static void cli_devices(void) {
    result r;
    run_cmd(&r, ENV(NO_DRIVER_ENV, NO_SLURM), ARGS("tune", "64x64x64", "--devices", "all"));
    CHECK_RUN(&r, r.code == 1, "--devices all without a driver: exit %d", r.code);
    CHECK_RUN(&r, strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL, "no '%s'",
              gt_status_string(GT_NO_DRIVER));
    result_free(&r);
    static const char *bad[] = {"0,0", "a", "", "0,", ",1", "1,x", "-1", "all,0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "--devices '%s'", bad[i]);
        expect_usage_error(ENV(NO_DRIVER_ENV, NO_SLURM),
                           ARGS("tune", "64x64x64", "--devices", bad[i]), "--devices", what);
    }
    int state = gpu_here();
    TAP_CHECK(state != GPU_FAILED, "GPU set-up failed: %s", gpu_why);
    if (state == GPU_FAILED) return;
    /* A device this node lacks: exit 2 with a GPU, 1 without one. */
    run_cmd(&r, ENV(NO_SLURM), ARGS("tune", "64x64x64", "--devices", "63"));
    if (state == GPU_READY) {
        CHECK_RUN(&r, r.code == 2 && strstr(r.err, "device 63 does not exist"),
                  "--devices 63: exit %d", r.code);
    } else {
        CHECK_RUN(&r, r.code == 1, "--devices 63 without a GPU: exit %d", r.code);
    }
    result_free(&r);
    NEED_GPU();
    char cache[PATH_MAX], env[PATH_MAX + 32];
    case_path("devices-cache.db", cache, sizeof cache);
    cache_env(env, sizeof env, cache);
    run_cmd(&r, ENV(env, NO_SLURM), ARGS("tune", "64x64x64", "96x96x96", "--devices", "all"));
    CHECK_RUN(&r, r.code == 0, "--devices all: exit %d", r.code);
    CHECK_RUN(&r, strstr(r.out, "GPU 0: ") != NULL, "no 'GPU 0:' line");
    static const char *shapes[2] = {"64x64x64:NN", "96x96x96:NN"};
    for (int i = 0; i < 2; i++) {
        const char *p = strstr(r.out, shapes[i]);
        const char *line = p;
        while (line && line > r.out && line[-1] != '\n') line--;
        CHECK_RUN(&r, p && strncmp(line, "GPU ", 4) == 0, "no 'GPU i:' line for %s", shapes[i]);
    }
    result_free(&r);
    run_cmd(&r, ENV(env), ARGS("list"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "64x64x64:NN") && strstr(r.out, "96x96x96:NN"),
              "list lacks a tuned shape");
    result_free(&r);
}

/* ===== data types ===== */

/* The dtype names as cli_parse_dtype lists them: "f32, f64, ..., bf16_f32". */
static void known_dtypes(char *buf, size_t size) {
    size_t len = 0;
    buf[0] = 0;
    for (int t = 0; t < GT_NDTYPES && len < size; t++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", t ? ", " : "", gt_dtype_name(t));
}

/* An unknown type is a usage error on every verb that takes --dtype, and the message
 * lists every known type, whole. */
static void cli_dtype_unknown(void) {
    char cache[PATH_MAX], env[PATH_MAX + 32], out[PATH_MAX], known[256], want[300];
    case_path("dtype-unknown.db", cache, sizeof cache);
    case_path("dtype-unknown-out.db", out, sizeof out);
    cache_env(env, sizeof env, cache);
    known_dtypes(known, sizeof known);
    snprintf(want, sizeof want, "(known: %s)", known);
    TAP_CHECK(strstr(known, "bf16_f32") != NULL && count_substr(known, ", ") == GT_NDTYPES - 1,
              "known list '%s'", known);
    const char *const *cmds[] = {
        ARGS("tune", "64x64x64", "--dtype", "q8"),
        ARGS("tune", "--dry-run", "64x64x64", "--dtype", "q8"),
        ARGS("run", "64x64x64", "--dtype", "q8"),
        ARGS("list", "--dtype", "q8"),
        ARGS("show", "64x64x64", "--dtype", "q8"),
        ARGS("export", "-o", out, "--dtype", "q8"),
        ARGS("merge", cache, "-o", out, "--dtype", "q8"),
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "%s --dtype q8", cmds[i][0]);
        result r;
        run_cmd(&r, ENV(NO_DRIVER_ENV, env), cmds[i]);
        CHECK_RUN(&r, r.code == 2, "%s: exit %d, want 2", what, r.code);
        CHECK_RUN(&r, strstr(r.err, "'q8'") != NULL, "%s: does not quote 'q8'", what);
        CHECK_RUN(&r, strstr(r.err, want) != NULL, "%s: stderr lacks '%s'", what, want);
        result_free(&r);
    }
    /* Names are exact: no prefix, no other case. */
    expect_usage_error(ENV(NO_DRIVER_ENV, env), ARGS("list", "--dtype", "bf"), "bf16_f32",
                       "list --dtype bf");
    expect_usage_error(ENV(NO_DRIVER_ENV, env), ARGS("list", "--dtype", "BF16"), "bf16_f32",
                       "list --dtype BF16");
    expect_usage_error(ENV(NO_DRIVER_ENV, env), ARGS("list", "--dtype"), NULL,
                       "list --dtype without a value");
    TAP_CHECK(!exists(cache) && !exists(out), "a usage error created a file");
}

/* Every type is accepted and gets as far as the device; run's scalars are floats for
 * every type but f64. */
static void cli_dtype_without_driver(void) {
    for (int t = 0; t < GT_NDTYPES; t++) {
        const char *name = gt_dtype_name(t);
        result r;
        run_cmd(&r, ENV(NO_DRIVER_ENV), ARGS("run", "96x200x300:NT", "--dtype", name));
        CHECK_RUN(&r, r.code == 1, "run --dtype %s: exit %d, want 1", name, r.code);
        CHECK_RUN(&r, strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL,
                  "run --dtype %s: no '%s'", name, gt_status_string(GT_NO_DRIVER));
        result_free(&r);
        run_cmd(&r, ENV(NO_DRIVER_ENV, NO_SLURM),
                ARGS("tune", "4096x4096x4096", "17x33x65:TN", "--dtype", name));
        CHECK_RUN(&r, r.code == 1, "tune --dtype %s: exit %d, want 1", name, r.code);
        CHECK_RUN(&r, strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL,
                  "tune --dtype %s: no '%s'", name, gt_status_string(GT_NO_DRIVER));
        result_free(&r);
        /* A dry run needs no device: the shapes, whatever the type. */
        run_cmd(&r, ENV(NO_DRIVER_ENV, NO_SLURM),
                ARGS("tune", "--dry-run", "4096x4096x4096", "17x33x65:TN", "--dtype", name));
        CHECK_RUN(&r, r.code == 0 && strcmp(r.out, "4096x4096x4096:NN\n17x33x65:TN\n") == 0,
                  "tune --dry-run --dtype %s: exit %d", name, r.code);
        result_free(&r);
        /* --alpha beyond float: a usage error for the float-scalar types, with the type
         * named; f64 takes it (and then finds no driver). */
        run_cmd(&r, ENV(NO_DRIVER_ENV), ARGS("run", "8x8x8", "--dtype", name, "--alpha", "1e39"));
        if (t == GT_DT_F64) {
            CHECK_RUN(&r, r.code == 1 && strstr(r.err, gt_status_string(GT_NO_DRIVER)),
                      "run --dtype f64 --alpha 1e39: exit %d, want 1 (no driver)", r.code);
        } else {
            CHECK_RUN(&r, r.code == 2 && strstr(r.err, "--alpha") && strstr(r.err, "f32"),
                      "run --dtype %s --alpha 1e39: exit %d, want 2", name, r.code);
            CHECK_RUN(&r, t == GT_DT_F32 || strstr(r.err, name) != NULL,
                      "run --dtype %s --alpha 1e39: the type is not named", name);
        }
        result_free(&r);
    }
    expect_usage_error(ENV(NO_DRIVER_ENV), ARGS("run", "8x8x8", "--dtype", "bf16", "--beta",
                                                "-3.5e38"),
                       "--beta", "run --dtype bf16 --beta -3.5e38");
}

/* Stores one winner of type dtype and shape m x n x k (NT) on the test device. */
static void put_typed(gt_db *db, int dtype, long long m, long long n, long long k,
                      const char *cfg) {
    gt_key key;
    memset(&key, 0, sizeof key);
    snprintf(key.device, sizeof key.device, "NVIDIA Test GPU 80GB");
    key.cc_major = 9, key.sm_count = 132, key.dtype = dtype;
    key.opa = 0, key.opb = 1, key.m = m, key.n = n, key.k = k, key.align = 16;
    gt_db_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.config, sizeof w.config, "%s", cfg);
    w.time_us = 100.0 + (double)dtype, w.tflops = 10.0, w.tuned_at = 1700000000;
    snprintf(w.nvrtc, sizeof w.nvrtc, "13.0");
    snprintf(w.libver, sizeof w.libver, "%s", GT_VERSION_STRING);
    gt_status s = gt_db_store(db, &key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, NULL, 0);
    TAP_CHECK(s == GT_SUCCESS, "store %s: %s", gt_dtype_name(dtype), gt_db_errmsg(db));
}

/* Lines of out that list an entry (they start with the device name). */
static int entry_lines(const char *out) { return count_substr(out, "NVIDIA Test GPU 80GB"); }

static void cli_list_dtype(void) {
    char path[PATH_MAX], env[PATH_MAX + 32], out[PATH_MAX];
    case_path("typed.db", path, sizeof path);
    gt_db *db = fx_open(path);
    if (!db) return;
    /* One shape per type, so a shape says which type's line it is. */
    static const struct {
        int dtype;
        const char *shape;
        long long m, n, k;
    } rows[] = {
        {GT_DT_F32, "1000x1001x1002:NT", 1000, 1001, 1002},
        {GT_DT_F64, "2000x2001x2002:NT", 2000, 2001, 2002},
        {GT_DT_TF32, "3000x3001x3002:NT", 3000, 3001, 3002},
        {GT_DT_BF16, "4000x4001x4002:NT", 4000, 4001, 4002},
        {GT_DT_F16_F32, "5000x5001x5002:NT", 5000, 5001, 5002},
        {GT_DT_BF16_F32, "6000x6001x6002:NT", 6000, 6001, 6002},
    };
    const int nrows = (int)(sizeof rows / sizeof rows[0]);
    for (int i = 0; i < nrows; i++)
        put_typed(db, rows[i].dtype, rows[i].m, rows[i].n, rows[i].k, CFG_64);
    gt_db_close(db);
    cache_env(env, sizeof env, path);

    /* No filter: every entry, each with its type's name. */
    result r;
    run_cmd(&r, ENV(env), ARGS("list"));
    CHECK_RUN(&r, r.code == 0 && entry_lines(r.out) == nrows, "list: exit %d, %d lines", r.code,
              entry_lines(r.out));
    for (int i = 0; i < nrows; i++) {
        const char *p = strstr(r.out, rows[i].shape), *line = p;
        while (line && line > r.out && line[-1] != '\n') line--;
        char col[32];
        snprintf(col, sizeof col, " %s ", gt_dtype_name(rows[i].dtype));
        const char *c = line ? strstr(line, col) : NULL;
        CHECK_RUN(&r, p && c && c < p, "list: no '%s' line of type %s", rows[i].shape,
                  gt_dtype_name(rows[i].dtype));
    }
    result_free(&r);

    /* --dtype T: that type's entries only. */
    for (int i = 0; i < nrows; i++) {
        const char *name = gt_dtype_name(rows[i].dtype);
        run_cmd(&r, ENV(env), ARGS("list", "--dtype", name));
        CHECK_RUN(&r, r.code == 0, "list --dtype %s: exit %d", name, r.code);
        CHECK_RUN(&r, entry_lines(r.out) == 1 && strstr(r.out, rows[i].shape) != NULL,
                  "list --dtype %s: %d lines, want the %s one", name, entry_lines(r.out),
                  rows[i].shape);
        for (int j = 0; j < nrows; j++)
            if (j != i)
                CHECK_RUN(&r, strstr(r.out, rows[j].shape) == NULL,
                          "list --dtype %s shows %s (%s)", name, rows[j].shape,
                          gt_dtype_name(rows[j].dtype));
        result_free(&r);
    }
    /* A type with no entry: said so, still exit 0. */
    run_cmd(&r, ENV(env), ARGS("list", "--dtype", "f16"));
    CHECK_RUN(&r, r.code == 0 && entry_lines(r.out) == 0 &&
                      strstr(r.out, "no entries of data type f16") != NULL,
              "list --dtype f16: exit %d", r.code);
    result_free(&r);
    /* The option may come after --cache too, and --help still wins. */
    run_cmd(&r, NULL, ARGS("--cache", path, "list", "--dtype", "bf16"));
    CHECK_RUN(&r, r.code == 0 && entry_lines(r.out) == 1 && strstr(r.out, "4000x4001x4002:NT"),
              "--cache FILE list --dtype bf16: exit %d", r.code);
    result_free(&r);
    run_cmd(&r, ENV(env), ARGS("list", "--dtype", "bf16", "--help"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "usage") != NULL, "list --dtype --help: exit %d",
              r.code);
    result_free(&r);
    expect_usage_error(ENV(env), ARGS("list", "--dtype", "bf16", "extra"), "extra",
                       "list --dtype bf16 extra");

    /* show finds a shape under its own type only. */
    run_cmd(&r, ENV(env), ARGS("show", "4000x4001x4002:NT", "--dtype", "bf16"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "|bf16|NT|4000x4001x4002|") != NULL,
              "show --dtype bf16: exit %d", r.code);
    result_free(&r);
    run_cmd(&r, ENV(env), ARGS("show", "4000x4001x4002:NT", "--dtype", "bf16_f32"));
    CHECK_RUN(&r, r.code == 1 && strstr(r.out, "no entry") && strstr(r.out, "bf16_f32"),
              "show of a bf16 shape as bf16_f32: exit %d", r.code);
    result_free(&r);
    run_cmd(&r, ENV(env), ARGS("show", "4000x4001x4002:NT"));
    CHECK_RUN(&r, r.code == 1 && strstr(r.out, "no entry"), "show of a bf16 shape as f32: exit %d",
              r.code);
    result_free(&r);

    /* export --dtype selects before anything is validated: none of f16. */
    case_path("typed-export.db", out, sizeof out);
    run_cmd(&r, ENV(env), ARGS("export", "--dtype", "f16", "-o", out));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "exported 0 entries") != NULL,
              "export --dtype f16: exit %d", r.code);
    char want[64];
    snprintf(want, sizeof want, "%d entries of other devices or data types", nrows);
    CHECK_RUN(&r, strstr(r.err, want) != NULL, "export --dtype f16: no '%s'", want);
    result_free(&r);
}

/* A tensor-core-only type below sm_80 is no key a process builds: merge and import
 * refuse it, saying why, and keep the rest. */
static void cli_merge_refuses_tensor_type_below_sm80(void) {
    char in[PATH_MAX], out[PATH_MAX];
    case_path("sm70-in.db", in, sizeof in);
    case_path("sm70-out.db", out, sizeof out);
    gt_key v100, ok;
    memset(&v100, 0, sizeof v100);
    snprintf(v100.device, sizeof v100.device, "Tesla V100-SXM2-16GB");
    v100.cc_major = 7, v100.cc_minor = 0, v100.sm_count = 80, v100.dtype = GT_DT_BF16;
    v100.m = v100.n = v100.k = 256, v100.align = 16, v100.beta0 = 1;
    fixture_key(&ok, 90, 0, 0, 256, 256, 256, 16, 1);
    gt_db *db = fx_open(in);
    fx_put(db, &v100, gt_kernel_source_hash, CFG_64, 5.0, "v100", 1700000000, "0.1.0");
    fx_put(db, &ok, gt_kernel_source_hash, CFG_64, 5.0, "h100", 1700000000, "0.1.0");
    if (db) gt_db_close(db);
    result r;
    run_cmd(&r, NULL, ARGS("merge", in, "-o", out));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "merged 1 entries") != NULL, "merge: exit %d",
              r.code);
    CHECK_RUN(&r, strstr(r.err, "rejected") && strstr(r.err, "|sm70|80|bf16|") &&
                      strstr(r.err, "compute capability 8.0"),
              "the sm_70 bf16 entry not rejected with its reason");
    result_free(&r);
    fx_rows rows;
    TAP_CHECK(fx_read(out, &rows, NULL) == 0 && rows.n == 1 && fx_find(&rows, &ok),
              "merged file: %d entries", rows.n);
}

/* With a GPU: run of every type, graded on the CPU from what --save wrote (grade_saved),
 * with the library's own PASS as a second opinion; on sm_80 and later, while below it the
 * tensor-core types exit 1 saying why and write nothing. */
static void cli_run_dtypes(void) {
    NEED_GPU();
    char cache[PATH_MAX], env[PATH_MAX + 32];
    case_path("run-dtypes.db", cache, sizeof cache);
    cache_env(env, sizeof env, cache);
    /* Odd sizes, both op pairs; alpha != 1 and beta != 0 on some of each family, and on
     * the types whose C is wider or narrower than A. */
    static const struct {
        const char *name, *shape, *alpha, *beta;
    } cases[] = {{"f32", "96x200x300:NT", "1", "0"},       {"f32", "97x61x129:TN", "0.75", "-0.5"},
                 {"f64", "96x200x300:NT", "1", "0"},       {"f64", "97x61x129:TN", "-2", "0.5"},
                 {"tf32", "96x200x300:NT", "1", "0"},      {"f16", "96x200x300:NT", "1", "0.5"},
                 {"f16_f32", "96x200x300:NT", "1", "0.5"}, {"bf16", "96x200x300:NT", "1", "0"},
                 {"bf16", "96x200x300:NT", "1", "-1.5"},   {"bf16", "97x61x129:TN", "1.25", "0.25"},
                 {"bf16_f32", "96x200x300:NT", "1", "0.25"},
                 {"f32_3xtf32", "96x200x300:NT", "1", "0"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *name = cases[i].name;
        int tensor = gt_dtype_tensor_only(gt_dtype_parse(name));
        char dir[PATH_MAX], tag[32];
        snprintf(tag, sizeof tag, "run-dtypes-%zu", i);
        case_path(tag, dir, sizeof dir);
        result r;
        run_cmd(&r, ENV(env),
                ARGS("run", cases[i].shape, "--dtype", name, "--alpha", cases[i].alpha, "--beta",
                     cases[i].beta, "--reps", "3", "--save", dir));
        if (tensor && gpu_arch < 80) {
            CHECK_RUN(&r, r.code == 1, "run --dtype %s on sm_%d: exit %d, want 1", name, gpu_arch,
                      r.code);
            CHECK_RUN(&r, strstr(r.err, gt_status_string(GT_NOT_SUPPORTED)) &&
                              strstr(r.err, "compute capability 8.0") && strstr(r.err, name),
                      "run --dtype %s on sm_%d: no reason", name, gpu_arch);
            TAP_CHECK(!exists(dir), "run --dtype %s on sm_%d: a refused run created %s", name,
                      gpu_arch, dir);
        } else {
            char want[128];
            snprintf(want, sizeof want, "%s %s alpha=%s beta=%s ", cases[i].shape, name,
                     cases[i].alpha, cases[i].beta);
            CHECK_RUN(&r, r.code == 0, "run --dtype %s --beta %s: exit %d, want 0", name,
                      cases[i].beta, r.code);
            CHECK_RUN(&r, strstr(r.out, want) != NULL, "run --dtype %s: no '%s'", name, want);
            /* The grade is the test's own; the library's check must agree with it. */
            grade_saved(dir, cases[i].shape, name, strtod(cases[i].alpha, NULL),
                        strtod(cases[i].beta, NULL));
            CHECK_RUN(&r, strstr(r.out, "PASS") != NULL, "run --dtype %s: no PASS", name);
        }
        result_free(&r);
    }
}

/* With a GPU: tune bf16 shapes; list shows them under bf16, not under f32. */
static void cli_tune_list_bf16(void) {
    NEED_GPU();
    char cache[PATH_MAX], env[PATH_MAX + 32];
    case_path("tune-bf16.db", cache, sizeof cache);
    cache_env(env, sizeof env, cache);
    result r;
    run_cmd(&r, ENV(env, NO_SLURM), ARGS("tune", "128x64x32", "96x96x96:TN", "--dtype", "bf16"));
    if (gpu_arch < 80) {
        /* Said once, for both shapes; nothing tuned, no crash. */
        CHECK_RUN(&r, r.code == 1 && !r.signaled, "tune --dtype bf16 on sm_%d: exit %d",
                  gpu_arch, r.code);
        CHECK_RUN(&r, count_substr(r.err, "compute capability 8.0") == 1 &&
                          strstr(r.err, gt_status_string(GT_NOT_SUPPORTED)),
                  "tune --dtype bf16 on sm_%d: the reason not said once", gpu_arch);
        result_free(&r);
        run_cmd(&r, ENV(env, NO_SLURM),
                ARGS("tune", "128x64x32", "--dtype", "bf16", "--devices", "0"));
        CHECK_RUN(&r, r.code == 1 && !r.signaled && strstr(r.out, "GPU 0: ") &&
                          strstr(r.out, "compute capability 8.0"),
                  "tune --devices 0 --dtype bf16 on sm_%d: exit %d", gpu_arch, r.code);
        result_free(&r);
        run_cmd(&r, ENV(env), ARGS("list"));
        CHECK_RUN(&r, r.code == 0 && strstr(r.out, "128x64x32") == NULL, "list after refusal");
        result_free(&r);
        return;
    }
    CHECK_RUN(&r, r.code == 0, "tune --dtype bf16: exit %d", r.code);
    CHECK_RUN(&r, strstr(r.out, "128x64x32:NN bf16 ") && strstr(r.out, "96x96x96:TN bf16 "),
              "tune --dtype bf16: shapes not printed with their type");
    CHECK_RUN(&r, strstr(r.out, "FAILED") == NULL, "tune --dtype bf16: a shape failed");
    result_free(&r);
    run_cmd(&r, ENV(env), ARGS("list", "--dtype", "bf16"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "128x64x32:NN") && strstr(r.out, "96x96x96:TN"),
              "list --dtype bf16 lacks a tuned shape");
    CHECK_RUN(&r, count_substr(r.out, " bf16 ") == 2, "list --dtype bf16: %d bf16 lines, want 2",
              count_substr(r.out, " bf16 "));
    result_free(&r);
    run_cmd(&r, ENV(env), ARGS("list", "--dtype", "f32"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "no entries of data type f32") &&
                      strstr(r.out, "128x64x32") == NULL,
              "list --dtype f32 shows the bf16 shapes");
    result_free(&r);
    run_cmd(&r, ENV(env), ARGS("show", "128x64x32", "--dtype", "bf16"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "|bf16|NN|128x64x32|") && strstr(r.out, "winner"),
              "show --dtype bf16: exit %d", r.code);
    result_free(&r);
    /* Again, per device: the cache has both now. */
    run_cmd(&r, ENV(env, NO_SLURM),
            ARGS("tune", "128x64x32", "96x96x96:TN", "--dtype", "bf16", "--devices", "0"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "GPU 0: 128x64x32:NN bf16 ") &&
                      strstr(r.out, "(cache"),
              "tune --devices 0 --dtype bf16 again: exit %d", r.code);
    result_free(&r);
}

/* ===== setup ===== */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* tune's ranges (one size as LO:HI: LO, each power of two between, HI), on the command
 * line and in a file, and its options for offline pre-warming: --budget, --candidates and
 * --exhaustive refused where malformed or contradictory. */
static void cli_tune_ranges_and_budget(void) {
    result r;
    char lines[32][48];
    run_cmd(&r, ENV(NO_DRIVER_ENV, NO_SLURM), ARGS("tune", "--dry-run", "4096x1:256x4096:TN", "7x9:40x3"));
    int n = dry_lines(&r, lines, 32);
    static const char *want[] = {"4096x1x4096:TN",  "4096x2x4096:TN",  "4096x4x4096:TN",
                                 "4096x8x4096:TN",  "4096x16x4096:TN", "4096x32x4096:TN",
                                 "4096x64x4096:TN", "4096x128x4096:TN", "4096x256x4096:TN",
                                 "7x9x3:NN",        "7x16x3:NN",       "7x32x3:NN",
                                 "7x40x3:NN"};
    CHECK_RUN(&r, r.code == 0 && n == 13, "ranges: exit %d, %d shapes, want 13", r.code, n);
    for (int j = 0; j < n && j < 13; j++)
        CHECK_RUN(&r, strcmp(lines[j], want[j]) == 0, "line %d '%s', want '%s'", j, lines[j], want[j]);
    result_free(&r);
    char file[300];
    case_path("range-shapes.txt", file, sizeof file);
    static const char text[] = "64x3:17x64   # a range\n8 8 8 N T\n";
    TAP_CHECK(write_file(file, text, sizeof text - 1) == 0, "cannot write %s", file);
    run_cmd(&r, ENV(NO_DRIVER_ENV, NO_SLURM), ARGS("tune", "--dry-run", "--file", file));
    n = dry_lines(&r, lines, 32);
    static const char *want_file[] = {"64x3x64:NN", "64x4x64:NN", "64x8x64:NN", "64x16x64:NN",
                                      "64x17x64:NN", "8x8x8:NT"};
    CHECK_RUN(&r, r.code == 0 && n == 6, "file ranges: exit %d, %d shapes, want 6", r.code, n);
    for (int j = 0; j < n && j < 6; j++)
        CHECK_RUN(&r, strcmp(lines[j], want_file[j]) == 0, "file line %d '%s', want '%s'", j,
                  lines[j], want_file[j]);
    result_free(&r);
    expect_usage_error(NULL, ARGS("tune", "--dry-run", "1:4x1:4x5"), "1:4x1:4x5", "two ranges");
    expect_usage_error(NULL, ARGS("tune", "--dry-run", "5:3x1x1"), "5:3x1x1", "a range downwards");
    expect_usage_error(NULL, ARGS("tune", "--dry-run", "0:4x1x1"), "0:4x1x1", "a range from 0");
    expect_usage_error(NULL, ARGS("tune", "--budget", "0", "8x8x8"), "--budget", "tune --budget 0");
    expect_usage_error(NULL, ARGS("tune", "--budget", "x", "8x8x8"), "--budget", "tune --budget x");
    expect_usage_error(NULL, ARGS("tune", "--candidates", "0", "8x8x8"), "--candidates",
                       "tune --candidates 0");
    expect_usage_error(NULL, ARGS("tune", "--exhaustive", "--candidates", "3", "8x8x8"),
                       "--exhaustive", "tune --exhaustive --candidates 3");
    /* Well formed, they reach the device: here none. */
    run_cmd(&r, ENV(NO_DRIVER_ENV), ARGS("tune", "--exhaustive", "--budget", "60", "8x8x8"));
    CHECK_RUN(&r, r.code == 1 && strstr(r.err, gt_status_string(GT_NO_DRIVER)) != NULL,
              "tune --exhaustive without a driver: exit %d", r.code);
    result_free(&r);
}

/* --candidates bounds the candidates timed per shape (the tune line says how many were
 * compiled and timed); a range tunes each of its points. */
static void cli_tune_candidates(void) {
    NEED_GPU();
    char cache[PATH_MAX], env[PATH_MAX + 32];
    case_path("tune-candidates.db", cache, sizeof cache);
    cache_env(env, sizeof env, cache);
    result r;
    run_cmd(&r, ENV(env, NO_SLURM), ARGS("tune", "--candidates", "2", "--budget", "30", "96x1:4x200"));
    CHECK_RUN(&r, r.code == 0 && count_substr(r.out, "tuned in") == 3,
              "tune --candidates 2 96x1:4x200: exit %d, %d tuned", r.code,
              count_substr(r.out, "tuned in"));
    for (const char *p = strstr(r.out, "compiled "); p; p = strstr(p + 1, "compiled ")) {
        int compiled = -1, timed = -1;
        sscanf(p, "compiled %d, timed %d", &compiled, &timed);
        CHECK_RUN(&r, compiled >= 1 && compiled <= 2 && timed >= 1 && timed <= 2,
                  "--candidates 2: compiled %d, timed %d", compiled, timed);
    }
    result_free(&r);
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
    TAP_RUN(cli_help_env);
    TAP_RUN(cli_no_verb);
    TAP_RUN(cli_unknown_verb_or_option);
    TAP_RUN(cli_tune_usage);
    TAP_RUN(cli_run_usage);
    TAP_RUN(cli_run_save_errors);
    TAP_RUN(cli_tune_file_errors);
    TAP_RUN(cli_info_without_driver);
    TAP_RUN(cli_tune_and_run_without_driver);
    TAP_RUN(cli_info);
    TAP_RUN(cli_run_here);
    TAP_RUN(cli_list_missing_cache);
    TAP_RUN(cli_cache_option);
    TAP_RUN(cli_list_random_bytes);
    TAP_RUN(cli_list_shows_winners);
    TAP_RUN(cli_export);
    TAP_RUN(cli_export_text);
    TAP_RUN(cli_defaults_usage);
    TAP_RUN(cli_prebuild_usage);
    TAP_RUN(cli_tune_ranges_and_budget);
    TAP_RUN(cli_info_defaults);
    TAP_RUN(cli_defaults_here);
    TAP_RUN(cli_merge);
    TAP_RUN(cli_merge_keep);
    TAP_RUN(cli_import);
    TAP_RUN(cli_show);
    TAP_RUN(cli_prune);
    TAP_RUN(cli_shard);
    TAP_RUN(cli_devices);
    TAP_RUN(cli_dtype_unknown);
    TAP_RUN(cli_dtype_without_driver);
    TAP_RUN(cli_list_dtype);
    TAP_RUN(cli_merge_refuses_tensor_type_below_sm80);
    TAP_RUN(cli_run_dtypes);
    TAP_RUN(cli_tune_list_bf16);
    TAP_RUN(cli_tune_candidates);

    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
