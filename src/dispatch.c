/*
 * dispatch.c: plan resolution (dispatch.h). Owns the process's handle on the user cache
 * and the tuning mutex.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dispatch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "kernel_sources.h"
#include "log.h"
#include "rtc.h"

static pthread_mutex_t tune_lock = PTHREAD_MUTEX_INITIALIZER;
static gt_db *db;
static int db_tried;
static char db_path[4096];

/* ===== the cache handle ===== */

/* Opens the user cache on first use; on failure warns once and runs without it.
 * Called with tune_lock held. */
static gt_db *cache(void) {
    if (db_tried) return db;
    db_tried = 1;
    char msg[512];
    if (gt_db_default_path(db_path, sizeof db_path) != GT_SUCCESS) {
        gt_log(GT_LOG_WARN, "no cache path (set GEMMTUNE_CACHE or HOME); tuning results are not kept");
        db_path[0] = 0;
        return NULL;
    }
    if (gt_db_open(db_path, 0, 0, &db, msg, sizeof msg) != GT_SUCCESS) {
        gt_log(GT_LOG_WARN, "cache %s bypassed: %s", db_path, msg);
        db = NULL;
    }
    return db;
}

const char *gt_dispatch_cache_path(int *open) {
    pthread_mutex_lock(&tune_lock);
    cache();
    if (open) *open = db != NULL;
    pthread_mutex_unlock(&tune_lock);
    return db_path;
}

void gt_dispatch_release(void) {
    pthread_mutex_lock(&tune_lock);
    gt_db_close(db);
    db = NULL;
    db_tried = 0;
    pthread_mutex_unlock(&tune_lock);
}

/* ===== steps ===== */

static const gt_plan *insert(gt_devctx *dc, const gt_key *key, gt_kern *k, int source) {
    gt_plan p = {.ctx = dc->ctx, .key = *key, .kern = *k, .source = source};
    return gt_plan_insert(&p);
}

/* The cache's winner for key, compiled and loaded; 0 when there is none or it is unusable. */
static int from_cache(gt_devctx *dc, const gt_key *key, gt_kern *k) {
    gt_db *d = cache();
    if (!d) return 0;
    gt_db_winner w;
    int found = 0;
    if (gt_db_lookup(d, key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, &found) != GT_SUCCESS) {
        gt_log(GT_LOG_WARN, "cache %s lookup failed: %s", db_path, gt_db_errmsg(d));
        return 0;
    }
    if (!found) return 0;
    gt_kcfg cfg;
    char why[256];
    gt_klimits lim;
    gt_devctx_limits(dc, &lim);
    const gt_kconstraint *bad = NULL;
    if (gt_kcfg_parse(w.config, &cfg, why, sizeof why) != 0 ||
        (bad = gt_kcfg_check(&cfg, key, &lim, GT_KC_LEGAL))) {
        gt_log(GT_LOG_WARN, "cache entry '%s' rejected: %s", w.config,
               bad ? bad->reason : why);
        return 0;
    }
    if (gt_kern_build(&cfg, key, dc->arch, k) != GT_SUCCESS) {
        gt_log(GT_LOG_WARN, "cache entry '%s' does not build: %s", w.config, gt_last_error());
        return 0;
    }
    gt_stat_add(GT_STAT_CACHE_HITS, 1);
    return 1;
}

static void store(const gt_key *key, const gt_tune_report *rep) {
    gt_db *d = cache();
    if (!d) return;
    gt_db_winner w;
    memset(&w, 0, sizeof w);
    gt_kcfg_format(&rep->winner, w.config, sizeof w.config);
    w.time_us = rep->time_us;
    w.tflops = rep->tflops;
    w.tuned_at = (int64_t)time(NULL);
    snprintf(w.nvrtc, sizeof w.nvrtc, "%s", gt_rtc_version());
    snprintf(w.driver, sizeof w.driver, "%s", gt_cu_driver_version());
    if (gethostname(w.host, sizeof w.host) != 0) w.host[0] = 0;
    w.host[sizeof w.host - 1] = 0;
    snprintf(w.libver, sizeof w.libver, "%s", GT_VERSION_STRING);
    gt_db_timing *t = calloc((size_t)rep->ncands, sizeof *t);
    int nt = 0;
    for (int i = 0; t && i < rep->ncands; i++, nt++) {
        gt_kcfg_format(&rep->cands[i].cfg, t[i].config, sizeof t[i].config);
        snprintf(t[i].status, sizeof t[i].status, "%s", gt_tune_result_name(rep->cands[i].status));
        t[i].time_us = rep->cands[i].time_us;
        t[i].tflops = rep->cands[i].time_us > 0
                          ? 2.0 * (double)key->m * (double)key->n * (double)key->k /
                                (rep->cands[i].time_us * 1e6)
                          : 0;
        snprintf(t[i].message, sizeof t[i].message, "%s", rep->cands[i].message);
    }
    if (gt_db_store(d, key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, t, nt) != GT_SUCCESS)
        gt_log(GT_LOG_WARN, "cache %s: result not stored: %s", db_path, gt_db_errmsg(d));
    free(t);
}

static gt_status fallback(gt_devctx *dc, const gt_key *key, const gt_plan **out) {
    gt_kcfg cfg;
    gt_kern k;
    gt_kcfg_default(&cfg, key);
    gt_status s = gt_kern_build(&cfg, key, dc->arch, &k);
    if (s != GT_SUCCESS) return s;
    gt_stat_add(GT_STAT_FALLBACKS, 1);
    *out = insert(dc, key, &k, GT_SRC_FALLBACK);
    return *out ? GT_SUCCESS : gt_fail(GT_OUT_OF_MEMORY, "plan table");
}

/* Called with tune_lock held. */
static gt_status resolve(gt_devctx *dc, const gt_key *key, int force, gt_tune_report *rep,
                         const gt_plan **out) {
    gt_kern k;
    if (!force && from_cache(dc, key, &k)) {
        *out = insert(dc, key, &k, GT_SRC_CACHE);
        return *out ? GT_SUCCESS : gt_fail(GT_OUT_OF_MEMORY, "plan table");
    }
    gt_tune_opts opts = {0};
    gt_tune_report local;
    gt_tune_report *r = rep ? rep : &local;
    gt_status s = gt_tune(dc, key, &opts, &k, r);
    gt_stat_add(GT_STAT_TUNES, 1);
    if (s == GT_SUCCESS && !r->skipped) {
        store(key, r);
        if (r != rep) gt_tune_report_free(r);
        *out = insert(dc, key, &k, GT_SRC_TUNED);
        return *out ? GT_SUCCESS : gt_fail(GT_OUT_OF_MEMORY, "plan table");
    }
    char text[160];
    gt_key_format(key, text, sizeof text);
    if (s == GT_SUCCESS) gt_log(GT_LOG_WARN, "%s: tuning skipped: %s", text, r->why);
    else gt_log(GT_LOG_WARN, "%s: tuning failed (%s); using the fallback kernel", text, gt_last_error());
    if (r != rep) gt_tune_report_free(r);
    if (s == GT_LAUNCH_FAILED && gt_cu.ctx_synchronize() != CUDA_SUCCESS) return s;
    return fallback(dc, key, out);
}

/* ===== API ===== */

gt_status gt_dispatch(gt_devctx *dc, const gt_key *key, const gt_plan **out) {
    pthread_mutex_lock(&tune_lock);
    gt_status s = GT_SUCCESS;
    if (!(*out = gt_plan_find(dc->ctx, key))) s = resolve(dc, key, 0, NULL, out);
    pthread_mutex_unlock(&tune_lock);
    return s;
}

gt_status gt_dispatch_tune(gt_devctx *dc, const gt_key *key, int force, gt_tune_report *rep,
                           int *source) {
    pthread_mutex_lock(&tune_lock);
    const gt_plan *p = force ? NULL : gt_plan_find(dc->ctx, key);
    gt_status s = GT_SUCCESS;
    if (!p) s = resolve(dc, key, force, rep, &p);
    if (s == GT_SUCCESS && source) *source = p->source;
    pthread_mutex_unlock(&tune_lock);
    return s;
}
