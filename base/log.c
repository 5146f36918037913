/*
 * log.c: status strings, the per-thread last error, logging and counters (log.h).
 * Owns the log level, the callback and the counters; touches nothing else.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "log.h"
#include "env.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ===== state ===== */

static _Thread_local char last_error[1024];
static _Thread_local int last_error_arg;

static pthread_once_t level_once = PTHREAD_ONCE_INIT;
static atomic_int log_level;
static pthread_mutex_t callback_lock = PTHREAD_MUTEX_INITIALIZER;
static gt_log_fn log_callback;
static void *log_user;

static atomic_ullong stats[GT_STAT_COUNT];

/* ===== status and errors ===== */

const char *gt_status_string(gt_status status) {
    switch (status) {
#define GT_STATUS_CASE(name, value, text) \
    case GT_##name:                        \
        return text;
        GT_STATUS_MAP(GT_STATUS_CASE)
#undef GT_STATUS_CASE
    }
    return "unknown status";
}

const char *gt_last_error(void) { return last_error; }
int gt_last_error_arg(void) { return last_error_arg; }

void gt_error_clear(void) {
    last_error[0] = 0;
    last_error_arg = 0;
}

static gt_status vfail(gt_status status, const char *fmt, va_list ap) {
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    gt_log(GT_LOG_DEBUG, "%s: %s", gt_status_string(status), last_error);
    return status;
}

gt_status gt_fail(gt_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(status, fmt, ap);
    va_end(ap);
    last_error_arg = 0;
    return status;
}

gt_status gt_fail_arg(int position, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(GT_INVALID_VALUE, fmt, ap);
    va_end(ap);
    last_error_arg = position;
    return GT_INVALID_VALUE;
}

/* ===== logging ===== */

static void level_from_env(void) {
    const char *v = gt_env(GT_ENV_LOG);
    int level = GT_LOG_OFF;
    if (v) {
        static const char *names[] = {"off", "error", "warn", "info", "debug"};
        for (int i = 0; i < 5; i++)
            if (strcasecmp(v, names[i]) == 0) level = i;
        if (v[0] >= '0' && v[0] <= '9') level = atoi(v);
        if (strcasecmp(v, "warning") == 0) level = GT_LOG_WARN;
    }
    atomic_store(&log_level, level);
}

void gt_set_log_level(int level) {
    pthread_once(&level_once, level_from_env);
    atomic_store(&log_level, level);
}

void gt_set_log_callback(gt_log_fn fn, void *user) {
    pthread_mutex_lock(&callback_lock);
    log_callback = fn;
    log_user = user;
    pthread_mutex_unlock(&callback_lock);
}

void gt_log(int level, const char *fmt, ...) {
    pthread_once(&level_once, level_from_env);
    if (level > atomic_load(&log_level)) return;
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&callback_lock);
    if (log_callback) {
        log_callback(level, msg, log_user);
    } else {
        static const char *tags[] = {"", "error", "warning", "info", "debug"};
        fprintf(stderr, "gemmtune %s: %s\n", tags[level < 0 ? 0 : level > 4 ? 4 : level], msg);
    }
    pthread_mutex_unlock(&callback_lock);
}

/* ===== counters ===== */

void gt_stat_add(int which, unsigned long long n) { atomic_fetch_add(&stats[which], n); }

void gt_get_stats(gt_stats *out) {
    if (!out) return;
    out->calls = atomic_load(&stats[GT_STAT_CALLS]);
    out->plan_hits = atomic_load(&stats[GT_STAT_PLAN_HITS]);
    out->cache_hits = atomic_load(&stats[GT_STAT_CACHE_HITS]);
    out->tunes = atomic_load(&stats[GT_STAT_TUNES]);
    out->fallbacks = atomic_load(&stats[GT_STAT_FALLBACKS]);
    out->compiles = atomic_load(&stats[GT_STAT_COMPILES]);
    out->cubin_hits = atomic_load(&stats[GT_STAT_CUBIN_HITS]);
    out->nearest = atomic_load(&stats[GT_STAT_NEAREST]);
    out->rejected = atomic_load(&stats[GT_STAT_REJECTED]);
    out->async_tunes = atomic_load(&stats[GT_STAT_ASYNC_TUNES]);
    out->captured = atomic_load(&stats[GT_STAT_CAPTURED]);
    out->deferred = atomic_load(&stats[GT_STAT_DEFERRED]);
    out->staged = atomic_load(&stats[GT_STAT_STAGED]);
    out->specialized = atomic_load(&stats[GT_STAT_SPECIALIZED]);
}

void gt_version(int *major, int *minor, int *patch) {
    if (major) *major = GT_VERSION_MAJOR;
    if (minor) *minor = GT_VERSION_MINOR;
    if (patch) *patch = GT_VERSION_PATCH;
}
