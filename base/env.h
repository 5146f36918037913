/*
 * env.h: every environment variable the library and the command read, in one table.
 *
 * Each entry has its name, its default and its meaning. The code reads a variable only
 * through gt_env(GT_ENV_...); `gemmtune --help` prints the table (gt_env_help) and the
 * README quotes it, and test_env checks that the README names every entry. Parsing a
 * value stays with the module that uses it: the table says what exists, not what is
 * valid.
 */
#ifndef GT_ENV_H
#define GT_ENV_H

#include <stddef.h>

/* X(id, name, default, meaning) */
#define GT_ENV_TABLE(X)                                                                        \
    X(GT_ENV_CACHE, "GEMMTUNE_CACHE",                                                          \
      "$XDG_CACHE_HOME/gemmtune/cache.db, else ~/.cache/gemmtune/cache.db",                    \
      "the writable cache file (--cache FILE sets it for the command)")                       \
    X(GT_ENV_CACHE_PATH, "GEMMTUNE_CACHE_PATH", "none",                                        \
      "colon-separated read-only cache files (shipped by an admin), read after the user "     \
      "cache in path order")                                                                   \
    X(GT_ENV_DEFAULTS, "GEMMTUNE_DEFAULTS", "1",                                               \
      "0: do not read the built-in defaults (the tuned sets of data/defaults/ built into the " \
      "library, read after every cache file)")                                                \
    X(GT_ENV_CACHE_TIMEOUT_MS, "GEMMTUNE_CACHE_TIMEOUT_MS", "5000",                            \
      "how long a cache access waits for another process's lock")                             \
    X(GT_ENV_CACHE_MAX_MB, "GEMMTUNE_CACHE_MAX_MB", "none",                                    \
      "cap on the writable cache's size; a full cache warns once and is bypassed")            \
    X(GT_ENV_CACHE_FS, "GEMMTUNE_CACHE_FS", "auto",                                            \
      "auto|local|shared: the cache directory's policy: one file in WAL mode (local), or a "  \
      "file per host read by the others as snapshots (shared; auto: shared on NFS, Lustre, "  \
      "GPFS, BeeGFS, CephFS, SMB, FUSE and other network filesystems); test aid: a type "     \
      "name (nfs, lustre, ext4, ...) acts as if the directory were on it")                    \
    X(GT_ENV_MODE, "GEMMTUNE_MODE", "tune",                                                    \
      "tune|cached|off: on a miss tune, run the selector's choice (tuned shapes of the class " \
      "and the cost model), or always the safe default kernel (API gt_set_mode)")             \
    X(GT_ENV_TUNE_ASYNC, "GEMMTUNE_TUNE_ASYNC", "0",                                           \
      "1: a miss runs the selector's choice among kernels bit-identical to the default one " \
      "and is tuned on a worker thread over those (API gt_set_tune_async)")                   \
    X(GT_ENV_SPECIALIZE, "GEMMTUNE_SPECIALIZE", "1",                                           \
      "0: a shape run from the selector's choice (mode cached) keeps its shape-generic "        \
      "kernel; 1: its exact-shape twin (the same bits) replaces it, from the binary cache or "  \
      "compiled on the background thread (API gt_set_specialize)")                             \
    X(GT_ENV_TUNE_MAX_CANDIDATES, "GEMMTUNE_TUNE_MAX_CANDIDATES", "32",                        \
      "candidates compiled and timed per shape, best ranked first")                           \
    X(GT_ENV_TUNE_BUDGET_S, "GEMMTUNE_TUNE_BUDGET_S", "1.5",                                   \
      "wall seconds of compiling and timing per shape (fractions allowed)")                   \
    X(GT_ENV_TUNE_THREADS, "GEMMTUNE_TUNE_THREADS", "one per CPU",                            \
      "NVRTC compiles a tuning run keeps going at once")                                       \
    X(GT_ENV_TUNE_CLAIM_S, "GEMMTUNE_TUNE_CLAIM_S", "30",                                      \
      "seconds a process's claim on a key it tunes holds the others off (they wait, then "     \
      "adopt its winner; a killed tuner's claim expires)")                                      \
    X(GT_ENV_TUNE_MEM_MB, "GEMMTUNE_TUNE_MEM_MB", "size of C + A + B + 2 x L2",                \
      "device memory tuning may take (API gt_set_tune_memory_limit)")                         \
    X(GT_ENV_TUNE_VERIFY_ALL, "GEMMTUNE_TUNE_VERIFY_ALL", "0",                                 \
      "test and diagnosis aid: 1 checks every timed candidate, not only the winner")          \
    X(GT_ENV_LOG, "GEMMTUNE_LOG", "off",                                                       \
      "off|error|warn|info|debug (or 0..4): messages to stderr")                              \
    X(GT_ENV_LIBCUDA, "GEMMTUNE_LIBCUDA", "libcuda.so.1", "the CUDA driver library to load")   \
    X(GT_ENV_TEST_FAULT, "GEMMTUNE_TEST_FAULT", "none",                                        \
      "test aid: compile:I,launch:J,slow:L fail candidates; "                                 \
      "verify|corner|droprow|coarse|rerun:K make the K-th checked a wrong kernel (rerun: its " \
      "second run off by one bit); twin: every exact-shape twin gives other bits")            \
    X(GT_ENV_XDG_CACHE_HOME, "XDG_CACHE_HOME", "~/.cache",                                     \
      "where the default cache file goes")                                                     \
    X(GT_ENV_HOME, "HOME", "none", "where the default cache file goes without XDG_CACHE_HOME") \
    X(GT_ENV_SLURM_ARRAY_TASK_ID, "SLURM_ARRAY_TASK_ID", "none",                               \
      "gemmtune tune's default shard: this array task (with _MIN and _COUNT)")                \
    X(GT_ENV_SLURM_ARRAY_TASK_MIN, "SLURM_ARRAY_TASK_MIN", "none",                             \
      "gemmtune tune's default shard: the array's first task id")                             \
    X(GT_ENV_SLURM_ARRAY_TASK_COUNT, "SLURM_ARRAY_TASK_COUNT", "none",                         \
      "gemmtune tune's default shard: the array's task count")                                \
    X(GT_ENV_SLURM_PROCID, "SLURM_PROCID", "none",                                             \
      "gemmtune tune's default shard without an array: this task's rank")                     \
    X(GT_ENV_SLURM_NTASKS, "SLURM_NTASKS", "none",                                             \
      "gemmtune tune's default shard without an array: the task count")

#define GT_ENV_ENUM(id, name, dflt, meaning) id,
typedef enum { GT_ENV_TABLE(GT_ENV_ENUM) GT_NENV } gt_env_id;
#undef GT_ENV_ENUM

typedef struct gt_env_var {
    const char *name;
    const char *dflt;    /* the default, in words */
    const char *meaning;
} gt_env_var;

extern const gt_env_var gt_env_vars[GT_NENV];

/* The value of variable id, or NULL when it is unset or empty. */
const char *gt_env(gt_env_id id);

/* Variable id as a positive whole or real number; dflt when it is unset, not a number
 * through to its end, or not positive. */
long gt_env_long(gt_env_id id, long dflt);
double gt_env_double(gt_env_id id, double dflt);

/* The table as help text ("  NAME  meaning (default: ...)" a variable); returns the
 * length needed, like snprintf. */
int gt_env_help(char *buf, size_t size);

#endif
