/*
 * dispatch.c: plan resolution (dispatch.h).
 *
 * Owns: the mode, async and specialization settings, and the background worker with its
 * queue (async tuning; exact-shape twins of mode cached's generic kernels).
 * The cache files are cache/layers.c's; per-context locks live in gt_devctx.
 *
 * Invariants:
 *   1. Nothing read from a file is compiled before gt_kcfg_validate accepts it for this
 *      key and device; binaries come only from the writable user cache (runtime/load.c).
 *   2. The worker holds a context's tune_lock while tuning, never its resolve_lock at
 *      the same time; a caller takes resolve_lock, then tune_lock. So no deadlock.
 *   3. Mode off opens no cache file: resolve() opens the layers only in the other modes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dispatch.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "kernel_sources.h"
#include "layers.h"
#include "load.h"
#include "log.h"
#include "measure.h"
#include "rtc.h"
#include "modelfix.h"
#include "select.h"
#include "selector_hash.h"
#include "space.h"
#include "twin.h"

/* ===================================================================================
 * Settings
 * =================================================================================== */

static atomic_int mode_setting = -1;   /* -1: not set by the API, read the environment */
static atomic_int async_setting = -1;
static atomic_int specialize_setting = -1;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int env_mode = GT_MODE_TUNE, env_async, env_specialize = 1;

static void read_env(void) {
    const char *m = gt_env(GT_ENV_MODE);
    if (m) {
        if (strcasecmp(m, "tune") == 0) env_mode = GT_MODE_TUNE;
        else if (strcasecmp(m, "cached") == 0) env_mode = GT_MODE_CACHED;
        else if (strcasecmp(m, "off") == 0) env_mode = GT_MODE_OFF;
        else gt_log(GT_LOG_WARN, "GEMMTUNE_MODE='%s' is not tune, cached or off; using tune", m);
    }
    const char *a = gt_env(GT_ENV_TUNE_ASYNC);
    env_async = a && strcmp(a, "0") != 0;
    const char *sp = gt_env(GT_ENV_SPECIALIZE);
    env_specialize = !sp || strcmp(sp, "0") != 0;
}

int gt_dispatch_mode(void) {
    int m = atomic_load(&mode_setting);
    if (m >= 0) return m;
    pthread_once(&env_once, read_env);
    return env_mode;
}

int gt_dispatch_async(void) {
    int a = atomic_load(&async_setting);
    if (a >= 0) return a;
    pthread_once(&env_once, read_env);
    return env_async;
}

gt_status gt_dispatch_set_mode(int mode) {
    if (mode != GT_MODE_TUNE && mode != GT_MODE_CACHED && mode != GT_MODE_OFF)
        return gt_fail_arg(1, "mode %d is not GT_MODE_TUNE, GT_MODE_CACHED or GT_MODE_OFF", mode);
    atomic_store(&mode_setting, mode);
    return GT_SUCCESS;
}

void gt_dispatch_set_async(int on) { atomic_store(&async_setting, on != 0); }

int gt_dispatch_specialize(void) {
    int v = atomic_load(&specialize_setting);
    if (v >= 0) return v;
    pthread_once(&env_once, read_env);
    return env_specialize;
}

void gt_dispatch_set_specialize(int on) { atomic_store(&specialize_setting, on != 0); }

/* ===================================================================================
 * Plans from the layers: the exact key, or the nearest tuned shape
 * =================================================================================== */

/* Validates text (from layer `layer`) for key on dc; logs and counts a rejection. */
static int valid(gt_devctx *dc, int layer, const gt_key *key, const char *text, gt_kcfg *cfg) {
    gt_klimits lim;
    gt_kern_limits(dc, &lim);
    char why[400];
    if (gt_kcfg_validate(text, key, &lim, cfg, why, sizeof why) == 0) return 1;
    char kt[200];
    gt_key_format(key, kt, sizeof kt);
    gt_stat_add(GT_STAT_REJECTED, 1);
    gt_log(GT_LOG_WARN, "cache %s: entry for %s rejected: %s", gt_layers_path(layer), kt, why);
    return 0;
}

/* The first layer's winner of key that validates and loads; 0 when none. */
static int from_layers(gt_devctx *dc, const gt_key *key, gt_kern *k) {
    for (int i = 0, n = gt_layers_count(); i < n; i++) {
        gt_db_winner w;
        gt_kcfg cfg;
        if (!gt_layers_lookup(i, key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w) ||
            !valid(dc, i, key, w.config, &cfg))
            continue;
        if (gt_kern_get(&cfg, key, dc->arch, 1, k) != GT_SUCCESS) {
            gt_stat_add(GT_STAT_REJECTED, 1);
            gt_log(GT_LOG_WARN, "cache %s: entry '%s' does not build: %s", gt_layers_path(i),
                   w.config, gt_last_error());
            continue;
        }
        gt_stat_add(GT_STAT_CACHE_HITS, 1);
        return 1;
    }
    return 0;
}

/* A configuration chosen for a shape that no layer has tuned (the selector's, the
 * nearest winner's, the default): its generic kernel, one binary per class and
 * configuration, so that once the node holds it (`gemmtune prebuild`, or an earlier
 * shape of the class) the call compiles nothing; else compiled now and stored for the
 * class. The exact-shape kernel where the generic one does not build, and first of all
 * where the binary cache already holds it and specialization is on (gt_set_specialize):
 * both sum every output in the same order, so either gives the same bits. */
static gt_status get_untuned(gt_devctx *dc, const gt_kcfg *cfg, const gt_key *key, gt_kern *k) {
    gt_kcfg g = *cfg;
    g.generic = 1;
    if (gt_dispatch_specialize()) {
        /* Its exact-shape twin where the binary cache holds it (the same bits; a worker
         * compiled and checked it for an earlier process, specialize_later). */
        gt_kcfg exact = g;
        exact.generic = 0;
        if (gt_kern_get(&exact, key, dc->arch, GT_LOAD_HELD, k) == GT_SUCCESS) {
            gt_stat_add(GT_STAT_SPECIALIZED, 1);
            return GT_SUCCESS;
        }
    }
    gt_status s = gt_kern_get(&g, key, dc->arch, 1, k);
    if (s == GT_SUCCESS) return s;
    char text[GT_DB_CONFIG_MAX];
    gt_kcfg_format(&g, text, sizeof text);
    gt_log(GT_LOG_INFO, "generic %s does not build (%s); the exact-shape kernel instead", text,
           gt_last_error());
    return gt_kern_get(cfg, key, dc->arch, 1, k);
}

/* The most generic kernels of one class that the selector looks for among the node's. */
#define HAVE_MAX 1024

typedef struct near_acc {
    const gt_key *key;
    int layer;           /* the layer being read */
    int nrows, cap;
    struct near_row {
        char config[GT_DB_CONFIG_MAX];
        double dist;     /* < 0 once tried */
        int beta_diff;
        int layer;
        gt_key key;      /* the tuned shape's key */
        double time_us;  /* its winner's time */
    } *rows;
} near_acc;

static int collect_near(const gt_key *key, const char *src_hash, int lib_major,
                        const gt_db_winner *w, void *user) {
    (void)src_hash, (void)lib_major;
    near_acc *a = user;
    if (a->nrows == a->cap) {
        int cap = a->cap ? 2 * a->cap : 32;
        struct near_row *r = realloc(a->rows, sizeof *r * (size_t)cap);
        if (!r) return 1;
        a->rows = r, a->cap = cap;
    }
    struct near_row *r = &a->rows[a->nrows++];
    snprintf(r->config, sizeof r->config, "%s", w->config);
    r->dist = sqrt(gt_select_log_dist2(a->key, key->m, key->n, key->k));
    r->beta_diff = key->beta0 != a->key->beta0;
    r->layer = a->layer;
    r->key = *key;
    r->time_us = w->time_us;
    return 0;
}

/* Every tuned shape of key's class in the layers (gt_db_neighbors), into *a. */
static void collect_class(const gt_key *key, near_acc *a) {
    for (int i = 0, n = gt_layers_count(); i < n; i++) {
        int before = a->nrows;
        a->layer = i;
        if (gt_layers_neighbors(i, key, gt_kernel_source_hash, GT_VERSION_MAJOR, collect_near, a) != 0)
            a->nrows = before;
    }
}

typedef struct sel_acc {
    int nrows, cap;
    gt_select_row *rows;
} sel_acc;

static int add_row(sel_acc *a, const gt_key *shape, const char *config, int ok, double time_us) {
    if (a->nrows == a->cap) {
        int cap = a->cap ? 2 * a->cap : 256;
        gt_select_row *r = realloc(a->rows, sizeof *r * (size_t)cap);
        if (!r) return 1;
        a->rows = r, a->cap = cap;
    }
    gt_select_row *r = &a->rows[a->nrows++];
    memset(r, 0, sizeof *r);
    r->m = shape->m, r->n = shape->n, r->k = shape->k, r->beta0 = shape->beta0;
    snprintf(r->config, sizeof r->config, "%s", config);
    r->ok = ok, r->time_us = time_us;
    return 0;
}

static int collect_timing(const gt_key *shape, const gt_db_timing *t, void *user) {
    /* Not timed (the budget ran out) says nothing either way. */
    if (strcmp(t->status, "not_timed") == 0) return 0;
    return add_row(user, shape, t->config, strcmp(t->status, "ok") == 0, t->time_us);
}

/* ===== the cost model's correction (tuner/modelfix.h) ===== */

/* Rows for the fit: every timing of the tuned shapes of one device, data type and
 * alignment class, the first FIX_MAX_ROWS of them in the layers' order (about 500 shapes
 * of 32 candidates; 5 MB). */
#define FIX_MAX_ROWS 16384
typedef struct fix_acc {
    const gt_klimits *lim;
    int nrows, cap;
    gt_fix_row *rows;
} fix_acc;

static int collect_fix(const gt_key *shape, const gt_db_timing *t, void *user) {
    fix_acc *a = user;
    gt_kcfg c;
    if (strcmp(t->status, "ok") != 0 || !(t->time_us > 0) ||
        gt_kcfg_parse(t->config, &c, NULL, 0) != 0)
        return 0;
    if (a->nrows >= FIX_MAX_ROWS) return 1; /* enough to fit; memory stays bounded */
    if (a->nrows == a->cap) {
        int cap = a->cap ? 2 * a->cap : 1024;
        gt_fix_row *r = realloc(a->rows, sizeof *r * (size_t)cap);
        if (!r) return 1;
        a->rows = r, a->cap = cap;
    }
    gt_fix_row *r = &a->rows[a->nrows++];
    memset(r, 0, sizeof *r);
    r->key = *shape;
    r->est_us = gt_space_estimate_us(&c, shape, a->lim); /* as it was timed */
    c.generic = 0; /* a generic twin's time speaks for its configuration, as in select.c */
    r->cfg = c;
    r->time_us = t->time_us;
    return 0;
}

/* The fitted corrections, one per device, data type and alignment class: made at the
 * first need, made again once this process has tuned since (its new timings join the
 * fit), and dropped by gt_release (the layers they came from close). */
#define FIX_SLOTS 32
static struct fix_slot {
    int used;
    gt_key like;         /* device, data type and alignment class (the rest unused) */
    unsigned long long tunes; /* gt_stats.tunes when fitted */
    gt_modelfix fix;
} fix_slots[FIX_SLOTS];
static pthread_mutex_t fix_lock = PTHREAD_MUTEX_INITIALIZER;

/* The same device, data type and alignment class: one fit serves both. */
static int same_fix_class(const gt_key *a, const gt_key *b) {
    return a->dtype == b->dtype && a->align == b->align && a->cc_major == b->cc_major &&
           a->cc_minor == b->cc_minor && a->sm_count == b->sm_count &&
           strcmp(a->device, b->device) == 0;
}

static unsigned long long tunes_now(void) {
    gt_stats st;
    memset(&st, 0, sizeof st);
    gt_get_stats(&st);
    return (unsigned long long)st.tunes;
}

/* The kept fit of key's class into *out where it was fitted since the last tuning; 0 where
 * there is none. */
static int fix_kept(const gt_key *key, unsigned long long tunes, gt_modelfix *out) {
    int kept = 0;
    pthread_mutex_lock(&fix_lock);
    for (int i = 0; i < FIX_SLOTS && !kept; i++)
        if (fix_slots[i].used && same_fix_class(&fix_slots[i].like, key) &&
            fix_slots[i].tunes == tunes) {
            *out = fix_slots[i].fix;
            kept = 1;
        }
    pthread_mutex_unlock(&fix_lock);
    return kept;
}

/* Keeps fix for key's class, as of tunes. */
static void keep_fix(const gt_key *key, unsigned long long tunes, const gt_modelfix *fix) {
    pthread_mutex_lock(&fix_lock);
    int slot = -1, free_slot = -1;
    for (int i = 0; i < FIX_SLOTS; i++) {
        if (fix_slots[i].used && same_fix_class(&fix_slots[i].like, key)) slot = i;
        else if (!fix_slots[i].used && free_slot < 0) free_slot = i;
    }
    if (slot < 0) slot = free_slot;
    if (slot >= 0) {
        fix_slots[slot].used = 1;
        fix_slots[slot].like = *key;
        fix_slots[slot].tunes = tunes;
        fix_slots[slot].fix = *fix;
    }
    pthread_mutex_unlock(&fix_lock);
}

/* Fits acc's rows (then freed) into *out and keeps the fit for key's class, as of tunes. */
static void fix_fit_keep(const gt_key *key, unsigned long long tunes, fix_acc *acc,
                         gt_modelfix *out) {
    gt_modelfix fix;
    if (gt_modelfix_fit(acc->rows, acc->nrows, &fix) != 0) memset(&fix, 0, sizeof fix);
    free(acc->rows);
    acc->rows = NULL, acc->nrows = acc->cap = 0;
    keep_fix(key, tunes, &fix);
    *out = fix;
}

void gt_dispatch_model_fix(const gt_key *key, const gt_klimits *lim, gt_modelfix *out) {
    const unsigned long long tunes = tunes_now();
    if (fix_kept(key, tunes, out)) return;
    /* Every op pair of the key's alignment class (a class's tuned shapes come with either
     * beta, gt_db_neighbors). Not other alignment classes: what a configuration costs
     * beyond the model's word depends on its copies' width (in bf16, MMA's stages and
     * vectors rank one way in the 16-byte class and another in the 2-byte one; fitted
     * together, the 16-byte shapes' errors misled 2-byte choices on the H100). */
    gt_layers_open();
    fix_acc acc = {.lim = lim};
    for (int i = 0, n = gt_layers_count(); i < n; i++) {
        int before = acc.nrows;
        if (gt_layers_class_timings(i, key, gt_kernel_source_hash, GT_VERSION_MAJOR, 1,
                                    collect_fix, &acc) != 0)
            acc.nrows = before;
    }
    fix_fit_keep(key, tunes, &acc, out);
}

/* One walk of a class's timings for both readers: those of the key's op pair to the
 * selector's rows, and, where fix is not NULL, the ok ones of every op pair of the
 * alignment class to the correction's (the first FIX_MAX_ROWS of them; the selector's
 * still come after). */
typedef struct both_acc {
    const gt_key *key;
    sel_acc *sel;
    fix_acc *fix;
} both_acc;

static int collect_both(const gt_key *shape, const gt_db_timing *t, void *user) {
    both_acc *b = user;
    if (shape->opa == b->key->opa && shape->opb == b->key->opb && collect_timing(shape, t, b->sel))
        return 1;
    if (b->fix && b->fix->nrows < FIX_MAX_ROWS) collect_fix(shape, t, b->fix);
    return 0;
}

/* The selector's rows (tuner/select.h) for a's class: the winner of each tuned shape a
 * holds (collect_class) and every candidate's timing of the class in each layer; with fix
 * not NULL, the correction's rows from the same walk, so that the first call of a class
 * reads the layers' timings once. */
static sel_acc rows_of(const near_acc *a, fix_acc *fix) {
    sel_acc s = {0};
    for (int j = 0; j < a->nrows; j++) {
        /* The winner counts even where a file kept no timings. */
        add_row(&s, &a->rows[j].key, a->rows[j].config, 1, a->rows[j].time_us);
    }
    /* The timings of those shapes, one query per layer (the selector sorts its rows, so
     * their order does not matter). */
    both_acc b = {.key = a->key, .sel = &s, .fix = fix};
    for (int i = 0, n = gt_layers_count(); i < n; i++) {
        int before = s.nrows, before_fix = fix ? fix->nrows : 0;
        if (gt_layers_class_timings(i, a->key, gt_kernel_source_hash, GT_VERSION_MAJOR,
                                    fix != NULL, collect_both, &b) != 0) {
            s.nrows = before;
            if (fix) fix->nrows = before_fix;
        }
    }
    return s;
}

/* The selector's rows, one set per device, data type, op pair and alignment class: read
 * at the first need, read again once what the layers hold changed (gt_layers_epoch: a
 * tuning stored, the layers closed), and dropped by gt_release. Reading them (every
 * tuned shape's winner and timings in each layer) takes about 0.9 ms on the H100 with the
 * built-in defaults, a copy of the kept set microseconds. A set is replaced, never
 * changed, so a copy is taken under the lock. */
#define ROWS_SLOTS 32
/* A larger set is read each time, so that the kept ones stay under 25 MB (a row is 176
 * bytes; the built-in defaults give a class about 300 rows). */
#define ROWS_KEEP_MAX 4096
static struct rows_slot {
    int used;
    gt_key like;         /* device, data type, op pair and alignment class */
    unsigned long epoch; /* gt_layers_epoch when read */
    gt_select_row *rows;
    int nrows;
} rows_slots[ROWS_SLOTS];
static int rows_next; /* the slot a full table gives up next */
static pthread_mutex_t rows_lock = PTHREAD_MUTEX_INITIALIZER;

static int same_rows_class(const gt_key *a, const gt_key *b) {
    return same_fix_class(a, b) && a->opa == b->opa && a->opb == b->opb;
}

/* A malloc'd copy of rows[0..n) in *out (NULL where n is 0); -1 when out of memory. */
static int copy_rows(const gt_select_row *rows, int n, gt_select_row **out) {
    *out = NULL;
    if (n <= 0) return 0;
    if (!(*out = malloc(sizeof **out * (size_t)n))) return -1;
    memcpy(*out, rows, sizeof **out * (size_t)n);
    return n;
}

/* Keeps a copy of rows[0..n) for key's class, as of epoch, where a copy can be: a set
 * that could not be copied is read again next time. */
static void keep_rows(const gt_key *key, unsigned long epoch, const gt_select_row *rows, int n) {
    gt_select_row *kept = NULL;
    if (n > ROWS_KEEP_MAX || copy_rows(rows, n, &kept) < 0) return;
    pthread_mutex_lock(&rows_lock);
    int slot = -1;
    for (int i = 0; i < ROWS_SLOTS && slot < 0; i++)
        if (!rows_slots[i].used || same_rows_class(&rows_slots[i].like, key)) slot = i;
    if (slot < 0) slot = rows_next, rows_next = (rows_next + 1) % ROWS_SLOTS;
    free(rows_slots[slot].rows);
    rows_slots[slot] = (struct rows_slot){.used = 1, .like = *key, .epoch = epoch,
                                          .rows = kept, .nrows = n};
    pthread_mutex_unlock(&rows_lock);
}

/* ===== a class's data kept in the user cache for the next process =====
 *
 * A process's first call of a class reads every tuned shape's winner and timings in every
 * layer and fits the correction: about 1.5 ms of its first call on the H100's host, more
 * than anything else it does. The result depends only on what the layers hold, the device's
 * limits and this library's selector, so the first process that derives it keeps it in
 * the user cache (gt_layers_state_put: the selector's rows, in order, and the fit) with a
 * fingerprint of all of those; a process whose fingerprint matches reads that instead, and
 * gets the same rows and fit, so the same choice. Any change of the layers' rows (a
 * tuning stored: the user cache's generation; a shipped file replaced: its inode, size and
 * time) changes the fingerprint, and the next process derives the data again. `gemmtune
 * prebuild` derives each class's data, so a node's processes find it kept. */

#define STATE_MAGIC "gtclass1"
typedef struct state_head {
    char magic[8];
    unsigned fp_len, nrows, row_size, fix_size;
} state_head;

static atomic_ulong states_read;

unsigned long gt_dispatch_states_read(void) { return atomic_load(&states_read); }

/* The state's name for key's class; 0, or -1 where it does not fit. */
static int state_name(const gt_key *key, char *name, size_t size) {
    int n = snprintf(name, size, "class|%s|%d.%d|%d|%d|%d%d|%d", key->device, key->cc_major,
                     key->cc_minor, key->sm_count, (int)key->dtype, (int)key->opa, (int)key->opb,
                     key->align);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The fingerprint of what a class's data comes from, as of now; 0, or -1 where the layers
 * cannot be named (gt_layers_fingerprint). */
static int state_fingerprint(const gt_klimits *lim, char *fp, size_t size) {
    char layers[1600];
    if (gt_layers_fingerprint(layers, sizeof layers) != 0) return -1;
    /* Every field of the limits: each moves the estimates the rows and the fit carry. */
    int n = snprintf(fp, size, "sel=%s|src=%s|v=%s|lim=%d.%d.%d.%d.%d.%.4f|%s",
                     GT_SELECTOR_SOURCE_HASH, gt_kernel_source_hash, GT_VERSION_STRING,
                     lim->max_threads_per_block, lim->smem_per_block, lim->regs_per_block,
                     lim->regs_per_sm, lim->sm_count, lim->dram_rate, layers);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The kept state under name when its fingerprint is fp: its rows (malloc'd) and fit; the
 * row count, or -1 where there is none that fits. */
static int state_read(const char *name, const char *fp, gt_select_row **rows, gt_modelfix *fix) {
    size_t size = 0;
    unsigned char *data = gt_layers_state_get(name, &size);
    int n = -1;
    state_head h;
    const size_t fl = strlen(fp);
    if (data && size >= sizeof h) {
        memcpy(&h, data, sizeof h);
        const size_t want = sizeof h + h.fp_len + (size_t)h.nrows * h.row_size + h.fix_size;
        if (memcmp(h.magic, STATE_MAGIC, sizeof h.magic) == 0 && h.fp_len == fl &&
            h.row_size == sizeof **rows && h.fix_size == sizeof *fix && h.nrows <= ROWS_KEEP_MAX &&
            size == want && memcmp(data + sizeof h, fp, fl) == 0) {
            const unsigned char *p = data + sizeof h + fl;
            gt_modelfix f;
            memcpy(&f, p + (size_t)h.nrows * h.row_size, sizeof f);
            gt_select_row *r = NULL;
            if (f.nfeat >= 0 && f.nfeat <= GT_FIX_MAX_FEATURES &&
                copy_rows((const gt_select_row *)(const void *)p, (int)h.nrows, &r) >= 0) {
                int good = 1;
                for (unsigned i = 0; i < h.nrows && good; i++)
                    good = memchr(r[i].config, 0, sizeof r[i].config) != NULL;
                if (good) {
                    *rows = r, *fix = f, n = (int)h.nrows;
                } else {
                    free(r);
                }
            }
        }
    }
    free(data);
    return n;
}

/* Keeps rows[0..n) and fix under name with fingerprint fp. */
static void state_write(const char *name, const char *fp, const gt_select_row *rows, int n,
                        const gt_modelfix *fix) {
    if (n < 0 || n > ROWS_KEEP_MAX) return;
    const size_t fl = strlen(fp), size = sizeof(state_head) + fl + sizeof *rows * (size_t)n + sizeof *fix;
    unsigned char *data = malloc(size);
    if (!data) return;
    state_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, STATE_MAGIC, sizeof h.magic);
    h.fp_len = (unsigned)fl, h.nrows = (unsigned)n;
    h.row_size = sizeof *rows, h.fix_size = sizeof *fix;
    unsigned char *p = data;
    memcpy(p, &h, sizeof h), p += sizeof h;
    memcpy(p, fp, fl), p += fl;
    if (n > 0) memcpy(p, rows, sizeof *rows * (size_t)n), p += sizeof *rows * (size_t)n;
    memcpy(p, fix, sizeof *fix);
    gt_layers_state_put(name, data, size);
    free(data);
}

int gt_dispatch_class_data(const gt_key *key, const gt_klimits *lim, gt_select_row **rows,
                           gt_modelfix *fix) {
    gt_layers_open();
    const unsigned long epoch = gt_layers_epoch();
    pthread_mutex_lock(&rows_lock);
    for (int i = 0; i < ROWS_SLOTS; i++)
        if (rows_slots[i].used && rows_slots[i].epoch == epoch &&
            same_rows_class(&rows_slots[i].like, key)) {
            int n = copy_rows(rows_slots[i].rows, rows_slots[i].nrows, rows);
            pthread_mutex_unlock(&rows_lock);
            if (fix) gt_dispatch_model_fix(key, lim, fix);
            return n < 0 ? 0 : n;
        }
    pthread_mutex_unlock(&rows_lock);
    /* The correction's rows come with the same walk where its fit is not kept. */
    const unsigned long long tunes = tunes_now();
    const int fit = fix && !fix_kept(key, tunes, fix);
    /* Where both are to be derived, the state a process kept, if it still holds; its name
     * and fingerprint are taken before the walk, so a state is never newer than what its
     * fingerprint says. */
    char name[400], fp[2048];
    const int keepable = fit && lim && state_name(key, name, sizeof name) == 0 &&
                         state_fingerprint(lim, fp, sizeof fp) == 0;
    if (keepable) {
        gt_select_row *kept = NULL;
        const int n = state_read(name, fp, &kept, fix);
        gt_log(GT_LOG_DEBUG, "%s: %s (%s)", name,
               n >= 0 ? "the kept data read" : "no kept data fits: derived from the layers", fp);
        if (n >= 0) {
            atomic_fetch_add(&states_read, 1);
            keep_fix(key, tunes, fix);
            keep_rows(key, epoch, kept, n);
            *rows = kept;
            return n;
        }
    }
    fix_acc facc = {.lim = lim};
    near_acc a = {.key = key};
    collect_class(key, &a);
    sel_acc s = rows_of(&a, fit ? &facc : NULL);
    free(a.rows);
    if (fit) fix_fit_keep(key, tunes, &facc, fix);
    keep_rows(key, epoch, s.rows, s.nrows);
    /* Kept only where the layers still say what they said before the walk: a layer
     * bypassed during it, or a file changed, leaves no state that names them wrongly. */
    char after[2048];
    if (keepable && state_fingerprint(lim, after, sizeof after) == 0 && strcmp(after, fp) == 0)
        state_write(name, fp, s.rows, s.nrows, fix);
    *rows = s.rows;
    return s.nrows;
}

int gt_dispatch_class_rows(const gt_key *key, gt_select_row **rows) {
    return gt_dispatch_class_data(key, NULL, rows, NULL);
}

/* The selector's choice (tuner/select.h) for key, from every candidate's timing of the
 * tuned shapes of its class in the layers (gt_dispatch_class_rows) and the cost model,
 * loaded. flags: GT_SPACE_SAME_ORDER for async tuning's pending plans. 0 when it has none
 * or it does not build. */
static int select_from(gt_devctx *dc, const gt_key *key, int flags, gt_kern *k) {
    /* Each step's time goes to the log: a first call's cost is this, the binary's load
     * and the launch. */
    double t[5];
    t[0] = gt_measure_now_s();
    gt_klimits lim;
    gt_kern_limits(dc, &lim);
    gt_kcfg cfg, *have = malloc(sizeof *have * HAVE_MAX);
    gt_modelfix *fix = malloc(sizeof *fix);
    sel_acc s = {0};
    s.nrows = gt_dispatch_class_data(key, &lim, &s.rows, fix);
    t[1] = gt_measure_now_s();
    int nhave = have ? gt_kern_generic_have(key, dc->arch, have, HAVE_MAX) : 0;
    t[2] = gt_measure_now_s();
    gt_select_info info;
    int found = gt_select_have(key, &lim, flags, fix, s.rows, s.nrows, have, nhave, &cfg, &info) == 0;
    const int fixed_by = fix && fix->nfeat > 0 ? fix->shapes : 0;
    free(s.rows), free(have), free(fix);
    if (!found) return 0;
    char text[GT_DB_CONFIG_MAX], kt[200];
    gt_kcfg_format(&cfg, text, sizeof text);
    gt_key_format(key, kt, sizeof kt);
    t[3] = gt_measure_now_s();
    if (get_untuned(dc, &cfg, key, k) != GT_SUCCESS) {
        gt_log(GT_LOG_WARN, "%s: the selector's %s does not build: %s", kt, text, gt_last_error());
        return 0;
    }
    t[4] = gt_measure_now_s();
    gt_log(GT_LOG_INFO, "%s: selected %s (score %.3f, %s; %d candidates, %d measured, %d excluded; "
           "model corrected by %d shapes; generic binary %s; ms: correction %.2f, held "
           "binaries %.2f, choice %.2f, binary %.2f)", kt, text, info.score,
           info.from_model ? "cost model" : "measured", info.pool, info.measured, info.excluded,
           fixed_by, info.in_have ? "held" : "built now", 1e3 * (t[1] - t[0]),
           1e3 * (t[2] - t[1]), 1e3 * (t[3] - t[2]), 1e3 * (t[4] - t[3]));
    gt_stat_add(GT_STAT_NEAREST, 1);
    return 1;
}

/* Async tuning's pending plans: the selector's choice among the kernels that sum in the
 * default kernel's order (select_from with GT_SPACE_SAME_ORDER). */
static int from_selector_same_order(gt_devctx *dc, const gt_key *key, gt_kern *k) {
    return select_from(dc, key, GT_SPACE_SAME_ORDER, k);
}

/* Mode cached (and shapes first met under capture): the selector's choice (select_from);
 * where it has none that builds, the winner of the nearest tuned shape of the same
 * device, type, ops and alignment (Euclidean distance of log M, log N, log K; ties: the
 * same beta0 first, then layer order, then the order of gt_db_neighbors), validated for
 * this key. Every rank that sees the same files picks the same one. 0 when none. */
static int from_nearest(gt_devctx *dc, const gt_key *key, gt_kern *k) {
    if (select_from(dc, key, 0, k)) return 1;
    near_acc a = {.key = key};
    collect_class(key, &a);
    int found = 0;
    /* Best first; a row that does not validate or build gives way to the next best. */
    for (int tries = 0; tries < a.nrows && !found; tries++) {
        int best = -1;
        for (int j = 0; j < a.nrows; j++) {
            if (a.rows[j].dist < 0) continue; /* already tried */
            if (best < 0 || a.rows[j].dist < a.rows[best].dist ||
                (a.rows[j].dist == a.rows[best].dist && a.rows[j].beta_diff < a.rows[best].beta_diff))
                best = j;
        }
        if (best < 0) break;
        gt_kcfg cfg;
        if (valid(dc, a.rows[best].layer, key, a.rows[best].config, &cfg) &&
            get_untuned(dc, &cfg, key, k) == GT_SUCCESS)
            found = 1;
        a.rows[best].dist = -1;
    }
    free(a.rows);
    if (found) gt_stat_add(GT_STAT_NEAREST, 1);
    return found;
}

/* ===================================================================================
 * Tuning and storing
 * =================================================================================== */

/* Stores rep's winner and timings; the winner's binary too. replace: the winner replaces
 * any stored one (gemmtune tune --force); else it is stored only where the cache has none
 * for key, and 0 is returned when another process's winner was there first (*kept: the
 * one the cache holds). 1: rep's winner is the stored one. */
static int store(gt_devctx *dc, const gt_key *key, const gt_tune_report *rep, int replace,
                 gt_db_winner *kept) {
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
    int ours = 1;
    if (replace) gt_layers_store(key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, t, nt), *kept = w;
    else ours = gt_layers_store_first(key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, t, nt, kept);
    free(t);
    gt_program program;
    gt_kern_program(&rep->winner, key, &program);
    gt_load_store(&program, dc->arch, rep->winner_image, rep->winner_size);
    return ours;
}

/* The default kernel: generic where the binary cache is used (one binary per class),
 * exact in mode off, which never touches a cache. */
static gt_status default_kern(gt_devctx *dc, const gt_key *key, int use_cache, gt_kern *k) {
    gt_kcfg cfg;
    gt_kcfg_default(&cfg, key);
    if (use_cache) return get_untuned(dc, &cfg, key, k);
    return gt_kern_get(&cfg, key, dc->arch, use_cache, k);
}

/* How tune_key stores its winner: in place of any stored one (gemmtune tune --force);
 * only where none is stored, keeping its own kernel (the async worker, whose kernel must
 * stay bit-identical to the default one); only where none is stored, else running the
 * stored one, so that every process ends on one kernel per key. */
enum { STORE_REPLACE, STORE_FIRST_KEEP, STORE_FIRST_ADOPT };

/* Tunes key on dc (its context current), under its tune_lock; stores a winner (how).
 * base: the tuning options (NULL: the defaults); same_order: only candidates
 * bit-identical to the default kernel (gt_tune_opts).
 * Returns 1 with *k loaded when there is a winner; 0 when tuning was skipped or failed
 * (logged), with *st set to the failure that must reach the caller, if any. */
static int tune_key(gt_devctx *dc, const gt_key *key, const gt_tune_opts *base, int same_order,
                    int how, gt_tune_report *rep, gt_kern *k, gt_status *st) {
    gt_tune_opts opts;
    if (base) opts = *base;
    else memset(&opts, 0, sizeof opts);
    opts.same_order = same_order;
    /* The ranking that learns: the near-winners of the class's tuned shapes first
     * (select.h's gt_select_rank), unless the caller gave its own seeds. */
    gt_kcfg seeds[GT_TUNE_SEEDS];
    gt_klimits lim;
    gt_kern_limits(dc, &lim);
    /* The cost model corrected by the data type's timings (tuner/modelfix.h), for the
     * space's order and the seeds' scores, unless the caller gave its own. */
    gt_modelfix *fix = NULL;
    if (!opts.fix && (fix = malloc(sizeof *fix)) != NULL) opts.fix = fix;
    if (!opts.seeds) {
        gt_select_row *rows = NULL;
        int nrows = gt_dispatch_class_data(key, &lim, &rows, fix);
        opts.nseeds = nrows > 0 ? gt_select_rank(key, &lim, same_order ? GT_SPACE_SAME_ORDER : 0,
                                                 opts.fix, rows, nrows, seeds, GT_TUNE_SEEDS)
                                : 0;
        opts.seeds = seeds;
        free(rows);
    } else if (fix) {
        gt_dispatch_model_fix(key, &lim, fix);
    }
    pthread_mutex_lock(&dc->tune_lock);
    gt_status s = gt_tune(dc, key, &opts, k, rep);
    pthread_mutex_unlock(&dc->tune_lock);
    free(fix);
    gt_stat_add(GT_STAT_TUNES, 1);
    *st = GT_SUCCESS;
    if (s == GT_SUCCESS && !rep->skipped) {
        double t0 = gt_measure_now_s();
        gt_db_winner kept;
        int ours = store(dc, key, rep, how == STORE_REPLACE, &kept);
        gt_log(GT_LOG_INFO, "winner and %d timings stored in %.3f s", rep->ncands,
               gt_measure_now_s() - t0);
        gt_kern stored;
        if (!ours && how == STORE_FIRST_ADOPT && from_layers(dc, key, &stored)) {
            /* Another process stored its winner first: run that one, as it does. */
            gt_log(GT_LOG_INFO, "another process stored %s for this key first: adopted", kept.config);
            gt_kern_unload(k);
            *k = stored;
        }
        return 1;
    }
    char text[200];
    gt_key_format(key, text, sizeof text);
    if (s == GT_SUCCESS) gt_log(GT_LOG_WARN, "%s: tuning skipped: %s", text, rep->why);
    else gt_log(GT_LOG_WARN, "%s: tuning failed (%s); using the default kernel", text, gt_last_error());
    /* A fault poisons the context: nothing can run in it any more, so say so. */
    if (s == GT_LAUNCH_FAILED && gt_cu.ctx_synchronize() != CUDA_SUCCESS) *st = s;
    return 0;
}

/* ===================================================================================
 * Background tuning
 * =================================================================================== */

/* The worker's jobs: tune a key (async tuning), or compile the exact-shape twin of a
 * plan's generic kernel and put it in the plan's place (specialization). */
enum { JOB_TUNE, JOB_SPECIALIZE };

typedef struct job {
    gt_devctx *dc;
    gt_key key;
    int kind;     /* JOB_* */
    gt_kcfg cfg;  /* JOB_SPECIALIZE: the exact-shape configuration */
    struct job *next;
} job;

/* Specializations queued at most: beyond, a plan keeps its generic kernel (bounded
 * memory and a bounded backlog of compiles where an application meets thousands of
 * shapes at once). */
#define SPECIALIZE_QUEUE_MAX 256

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t q_idle = PTHREAD_COND_INITIALIZER; /* q_busy fell to 0 */
static job *q_head, *q_tail;
static int q_busy;        /* jobs queued or running */
static int q_specialize;  /* JOB_SPECIALIZE jobs queued or running */
static int worker_started, worker_stop;
static pthread_t worker;

/* The worker's promise (gemmtune.h, gt_set_tune_async): while a shape is pending the
 * application runs a kernel that sums over K in the default kernel's order (pending()),
 * and the winner that replaces it gives the same results bit for bit, so an application cannot see when the switch happened (an
 * iterative solver does not change its trajectory part-way). Hence same_order = 1: only
 * candidates that sum over K in the default kernel's order (no split-K, no tensor cores)
 * take part. The cost: the winner stored in the cache is the best of that smaller space;
 * `gemmtune tune --force` tunes the shape over the whole space. */
static void run_tune(job *j) {
    gt_devctx *dc = j->dc;
    if (gt_cu.ctx_push(dc->ctx) != CUDA_SUCCESS) return;
    gt_tune_report rep;
    gt_kern k;
    gt_status st;
    int won = tune_key(dc, &j->key, NULL, 1, STORE_FIRST_KEEP, &rep, &k, &st);
    gt_tune_report_free(&rep);
    gt_stat_add(GT_STAT_ASYNC_TUNES, 1);
    pthread_mutex_lock(&dc->resolve_lock);
    gt_plan p = {.ctx = dc->ctx, .key = j->key, .kern = k, .source = GT_SRC_TUNED};
    if (won) {
        gt_plan_replace(&p);
    } else if (st == GT_SUCCESS && default_kern(dc, &j->key, 1, &p.kern) == GT_SUCCESS) {
        /* The default kernel, final: the same bits as the pending plan's. */
        p.source = GT_SRC_FALLBACK;
        gt_plan_replace(&p);
    }
    pthread_mutex_unlock(&dc->resolve_lock);
    CUcontext dummy;
    gt_cu.ctx_pop(&dummy);
}

/* The generic kernel that key's plan runs, copied into *gen (its module stays the plan's,
 * loaded until gt_plan_clear), when it is the generic twin of exact configuration
 * `text`; else 0 (the plan was replaced meanwhile, e.g. tuned after a capture). */
static int plan_runs_twin(gt_devctx *dc, const gt_key *key, const char *text, gt_kern *gen,
                          const gt_plan **plan) {
    const gt_plan *p = gt_plan_find(dc->ctx, key);
    char now[GT_DB_CONFIG_MAX] = "";
    if (p && p->kern.cfg.generic) {
        gt_kcfg c = p->kern.cfg;
        c.generic = 0;
        gt_kcfg_format(&c, now, sizeof now);
    }
    if (strcmp(now, text) != 0) return 0;
    *gen = p->kern;
    if (plan) *plan = p;
    return 1;
}

/* The exact-shape twin of a plan's generic kernel (specialize_later): compiled, checked
 * to give the generic kernel's bits on random data (tuner/twin.h, under tune_lock: it
 * runs on the tuning stream), stored in the binary cache (so that later processes load
 * it at once, get_untuned) and put in the plan's place when the plan still runs that
 * generic kernel. The two sum every output in the same order
 * (docs/DESIGN.md), so the switch changes no value; a twin that does not build, is
 * refused (a DMMA kernel that spills) or gives other bits leaves the generic kernel. */
static void run_specialize(job *j) {
    gt_devctx *dc = j->dc;
    if (gt_cu.ctx_push(dc->ctx) != CUDA_SUCCESS) return;
    char text[GT_DB_CONFIG_MAX], kt[200];
    gt_kcfg_format(&j->cfg, text, sizeof text);
    gt_key_format(&j->key, kt, sizeof kt);
    gt_kern k, gen;
    const double t0 = gt_measure_now_s();
    int ok = 0;
    /* Stored in the binary cache only once checked: get_untuned loads it unchecked. */
    gt_rtc_result bin;
    memset(&bin, 0, sizeof bin);
    if (gt_kern_compile(&j->cfg, &j->key, dc->arch, &bin) != GT_SUCCESS ||
        gt_kern_load(bin.image, &j->cfg, &j->key, &k) != GT_SUCCESS) {
        gt_log(GT_LOG_INFO, "%s: exact-shape %s does not build (%s); the generic kernel stays",
               kt, text, gt_last_error());
        goto out;
    }
    pthread_mutex_lock(&dc->resolve_lock);
    ok = plan_runs_twin(dc, &j->key, text, &gen, NULL);
    pthread_mutex_unlock(&dc->resolve_lock);
    if (ok) {
        gt_tune_opts o;
        memset(&o, 0, sizeof o);
        gt_tune_opts_default(&o);
        int outcome;
        char why[200];
        pthread_mutex_lock(&dc->tune_lock);
        gt_status st = gt_twin_check(dc, &j->key, &gen, &k, o.mem_limit, &outcome, why, sizeof why);
        pthread_mutex_unlock(&dc->tune_lock);
        ok = st == GT_SUCCESS && outcome == GT_TWIN_SAME;
        if (st != GT_SUCCESS)
            gt_log(GT_LOG_WARN, "%s: exact-shape %s not checked (%s); the generic kernel stays",
                   kt, text, gt_last_error());
        else if (outcome == GT_TWIN_DIFFER)
            gt_log(GT_LOG_WARN, "%s: exact-shape %s refused: %s; the generic kernel stays", kt,
                   text, why);
        else if (outcome == GT_TWIN_SKIPPED)
            gt_log(GT_LOG_INFO, "%s: exact-shape %s not checked (%s); the generic kernel stays",
                   kt, text, why);
    }
    if (ok) {
        pthread_mutex_lock(&dc->resolve_lock);
        const gt_plan *p = NULL;
        ok = plan_runs_twin(dc, &j->key, text, &gen, &p);
        if (ok) {
            gt_plan np = {.ctx = dc->ctx, .key = j->key, .kern = k, .source = p->source,
                          .retune = p->retune};
            gt_program program;
            gt_kern_program(&j->cfg, &j->key, &program);
            gt_load_store(&program, dc->arch, bin.image, bin.size);
            if (gt_plan_replace(&np)) {
                gt_stat_add(GT_STAT_SPECIALIZED, 1);
                gt_log(GT_LOG_INFO, "%s: exact-shape %s in place of its generic twin after "
                                    "%.3f s", kt, text, gt_measure_now_s() - t0);
            }
        }
        pthread_mutex_unlock(&dc->resolve_lock);
    }
    if (!ok) gt_kern_unload(&k);
out:
    gt_rtc_result_free(&bin);
    CUcontext dummy;
    gt_cu.ctx_pop(&dummy);
}

static void *worker_main(void *arg) {
    (void)arg;
    /* The worker's allocations and synchronizations must never invalidate a capture
     * that an application thread runs meanwhile (in global mode they would). */
    gt_cu_relaxed_begin();
    pthread_mutex_lock(&q_lock);
    for (;;) {
        while (!q_head && !worker_stop) pthread_cond_wait(&q_cond, &q_lock);
        if (worker_stop) break;
        job *j = q_head;
        q_head = j->next;
        if (!q_head) q_tail = NULL;
        pthread_mutex_unlock(&q_lock);
        if (j->kind == JOB_SPECIALIZE) run_specialize(j);
        else run_tune(j);
        pthread_mutex_lock(&q_lock);
        q_specialize -= j->kind == JOB_SPECIALIZE;
        if (--q_busy == 0) pthread_cond_broadcast(&q_idle);
        free(j);
    }
    pthread_mutex_unlock(&q_lock);
    return NULL;
}

/* Queues a job for the worker (started on first use): tune key, or (cfg not NULL)
 * specialize its plan with cfg. 0 when it cannot be queued. */
static int enqueue(gt_devctx *dc, const gt_key *key, const gt_kcfg *cfg) {
    job *j = calloc(1, sizeof *j);
    if (!j) return 0;
    j->dc = dc, j->key = *key, j->next = NULL;
    j->kind = cfg ? JOB_SPECIALIZE : JOB_TUNE;
    if (cfg) j->cfg = *cfg;
    pthread_mutex_lock(&q_lock);
    if (cfg && q_specialize >= SPECIALIZE_QUEUE_MAX) {
        pthread_mutex_unlock(&q_lock);
        free(j);
        gt_log(GT_LOG_INFO, "%d exact-shape kernels already queued; this shape keeps its "
                            "generic kernel", SPECIALIZE_QUEUE_MAX);
        return 0;
    }
    if (!worker_started) {
        worker_stop = 0;
        if (pthread_create(&worker, NULL, worker_main, NULL) != 0) {
            pthread_mutex_unlock(&q_lock);
            free(j);
            gt_log(GT_LOG_WARN, "cannot start the background thread; this shape keeps the "
                                "kernel it runs");
            return 0;
        }
        worker_started = 1;
    }
    if (q_tail) q_tail->next = j;
    else q_head = j;
    q_tail = j;
    q_busy++;
    q_specialize += j->kind == JOB_SPECIALIZE;
    pthread_cond_signal(&q_cond);
    pthread_mutex_unlock(&q_lock);
    return 1;
}

static void stop_worker(void) {
    pthread_mutex_lock(&q_lock);
    int started = worker_started;
    worker_stop = 1;
    pthread_cond_broadcast(&q_cond);
    pthread_mutex_unlock(&q_lock);
    if (started) pthread_join(worker, NULL);
    pthread_mutex_lock(&q_lock);
    while (q_head) {
        job *j = q_head;
        q_head = j->next;
        free(j);
    }
    q_tail = NULL;
    q_busy = q_specialize = 0;
    pthread_cond_broadcast(&q_idle);
    worker_started = 0;
    worker_stop = 0;
    pthread_mutex_unlock(&q_lock);
}

void gt_dispatch_wait_background(void) {
    pthread_mutex_lock(&q_lock);
    while (q_busy > 0 && worker_started) pthread_cond_wait(&q_idle, &q_lock);
    pthread_mutex_unlock(&q_lock);
}

int gt_dispatch_may_specialize(const gt_kcfg *cfg) {
    return cfg->generic;
}

/* A plan of mode cached that runs a generic kernel (dc->resolve_lock held, so the plan
 * is in the table before the worker looks for it): its exact-shape twin queued for the
 * worker (run_specialize), when specialization is on. */
static void specialize_later(gt_devctx *dc, const gt_plan *p) {
    if (!gt_dispatch_may_specialize(&p->kern.cfg) || !gt_dispatch_specialize()) return;
    gt_kcfg exact = p->kern.cfg;
    exact.generic = 0;
    enqueue(dc, &p->key, &exact);
}

/* ===================================================================================
 * One kernel per key: tuning claims
 *
 * Processes that share the writable cache (the ranks of a node) and meet one new key at
 * once must not each tune it: timing noise would give them different kernels, and the
 * GPU would be timed by several tuners at once. The first claims the key in the cache
 * (cache/db.c's "Tuning claims") and tunes; the others wait for its winner and run it. A
 * claim expires (GEMMTUNE_TUNE_CLAIM_S), so a killed tuner holds no one off for longer;
 * a process that finishes tuning after another stored a winner runs the stored one
 * (tune_key, STORE_FIRST_ADOPT).
 * =================================================================================== */

#define GT_CLAIM_OWNER_MAX 200
#define CLAIM_POLL_S 0.05

/* This process's name in a claim: host and pid. */
static void claim_owner(char *buf, size_t size) {
    char host[128];
    if (gethostname(host, sizeof host) != 0) host[0] = 0;
    host[sizeof host - 1] = 0;
    snprintf(buf, size, "%s:%ld", host, (long)getpid());
}

/* Before tuning key (its layers hold no winner): 1 with *k when another process's winner
 * is stored, or becomes stored while this one waits, and loads: adopted. 0 when this
 * process is to tune: it holds the claim, or no writable cache can coordinate processes,
 * or the stored winner does not load here. While another owner's claim holds, it polls;
 * the claim's expiry bounds the wait, after which this process claims the key. */
static int claim_or_adopt(gt_devctx *dc, const gt_key *key, const char *owner, gt_kern *k) {
    const double ttl = gt_env_double(GT_ENV_TUNE_CLAIM_S, 30.0);
    const double t0 = gt_measure_now_s();
    int said = 0;
    for (;;) {
        gt_db_winner w;
        gt_db_claim_state st =
            gt_layers_claim(key, gt_kernel_source_hash, GT_VERSION_MAJOR, owner, ttl, &w);
        if (st == GT_DB_CLAIM_TAKEN) return 0;
        if (st == GT_DB_CLAIM_STORED) {
            if (!from_layers(dc, key, k)) return 0;
            if (said) gt_log(GT_LOG_INFO, "adopted %s after %.2f s", w.config, gt_measure_now_s() - t0);
            return 1;
        }
        if (!said++) {
            char kt[200];
            gt_key_format(key, kt, sizeof kt);
            gt_log(GT_LOG_INFO, "%s: another process tunes it; waiting for its winner", kt);
        }
        /* A claim lasts ttl from when it was taken: past twice that, something is wrong
         * with the clock or the file; tune. */
        if (gt_measure_now_s() - t0 > 2 * ttl + 1) return 0;
        struct timespec ts = {0, (long)(CLAIM_POLL_S * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* ===================================================================================
 * Resolution
 * =================================================================================== */

/* The plan (key, k, source) into the table: a new entry, or in place of the plan made
 * under capture that a retune replaces (gt_plan_replace keeps that one's kernel loaded
 * for the graphs that hold it). retune: gt_plan's. */
static gt_status plan_of(gt_devctx *dc, const gt_key *key, gt_kern *k, int source, int retune,
                         const gt_plan **out) {
    gt_plan p = {.ctx = dc->ctx, .key = *key, .kern = *k, .source = source, .retune = retune};
    *out = gt_plan_find(dc->ctx, key) ? gt_plan_replace(&p) : gt_plan_insert(&p);
    return *out ? GT_SUCCESS : gt_fail(GT_OUT_OF_MEMORY, "plan table");
}

static gt_status fallback(gt_devctx *dc, const gt_key *key, int use_cache, int source,
                          int retune, const gt_plan **out) {
    gt_kern k;
    gt_status s = default_kern(dc, key, use_cache, &k);
    if (s != GT_SUCCESS) return s;
    gt_stat_add(GT_STAT_FALLBACKS, 1);
    return plan_of(dc, key, &k, source, retune, out);
}

/* Async tuning's miss (dc->resolve_lock held): queued for the worker, which replaces this
 * plan once the key is tuned (it takes resolve_lock, held here, so the pending plan is in
 * the table before it can). Meanwhile the selector's choice among the configurations
 * whose results are bit-identical to the default kernel's (the worker tunes over the same
 * ones), so the switch never changes a value; the default kernel where it has none. Not
 * queued (no thread or memory): that plan stays, and says so. */
static gt_status pending(gt_devctx *dc, const gt_key *key, const gt_plan **out) {
    int queued = enqueue(dc, key, NULL);
    int source = queued ? GT_SRC_PENDING : GT_SRC_FALLBACK;
    gt_kern k;
    if (from_selector_same_order(dc, key, &k)) return plan_of(dc, key, &k, source, 0, out);
    return fallback(dc, key, 1, source, 0, out);
}

/* A key no layer holds, resolved without tuning (dc->resolve_lock held): the selector's
 * choice (from_nearest), else the default kernel. Unless retune (mode tune tunes the key
 * later), the plan's generic kernel is then queued to give way to its exact twin. */
static gt_status untuned_plan(gt_devctx *dc, const gt_key *key, int retune, const gt_plan **out) {
    gt_kern k;
    gt_status s = from_nearest(dc, key, &k) ? plan_of(dc, key, &k, GT_SRC_NEAREST, retune, out)
                                            : fallback(dc, key, 1, GT_SRC_FALLBACK, retune, out);
    if (s == GT_SUCCESS && !retune) specialize_later(dc, *out);
    return s;
}

/* Under graph capture (dc->resolve_lock held, dc's context current, relaxed capture
 * mode): no tuning, no synchronization (gt_dispatch says what runs). The graph keeps the
 * kernel it captured, whatever later replaces the plan. */
static gt_status resolve_captured(gt_devctx *dc, const gt_key *key, const gt_plan **out) {
    int mode = gt_dispatch_mode();
    if (mode == GT_MODE_OFF) return fallback(dc, key, 0, GT_SRC_FALLBACK, 0, out);
    gt_layers_open();
    gt_kern k;
    if (from_layers(dc, key, &k)) return plan_of(dc, key, &k, GT_SRC_CACHE, 0, out);
    int retune = 0;
    if (mode == GT_MODE_TUNE) {
        gt_stat_add(GT_STAT_DEFERRED, 1);
        if (gt_dispatch_async()) return pending(dc, key, out);
        retune = 1;
    }
    return untuned_plan(dc, key, retune, out);
}

/* Called with dc->resolve_lock held and dc's context current. */
static gt_status resolve(gt_devctx *dc, const gt_key *key, CUstream stream, const gt_plan **out) {
    int mode = gt_dispatch_mode();
    if (mode == GT_MODE_OFF) return fallback(dc, key, 0, GT_SRC_FALLBACK, 0, out);
    gt_layers_open();
    gt_kern k;
    if (from_layers(dc, key, &k)) return plan_of(dc, key, &k, GT_SRC_CACHE, 0, out);
    if (mode == GT_MODE_CACHED) return untuned_plan(dc, key, 0, out);
    if (gt_dispatch_async()) return pending(dc, key, out);
    char owner[GT_CLAIM_OWNER_MAX];
    claim_owner(owner, sizeof owner);
    if (claim_or_adopt(dc, key, owner, &k)) return plan_of(dc, key, &k, GT_SRC_CACHE, 0, out);
    /* Tuning works on its own stream and buffers; wait for the caller's work so its
     * timings are not disturbed. */
    CUresult r = gt_cu.stream_synchronize(stream);
    if (r != CUDA_SUCCESS) {
        gt_layers_unclaim(key, gt_kernel_source_hash, GT_VERSION_MAJOR, owner);
        return gt_cu_fail(r, "cuStreamSynchronize (caller's stream, before tuning)");
    }
    gt_tune_report rep;
    gt_status st;
    int won = tune_key(dc, key, NULL, 0, STORE_FIRST_ADOPT, &rep, &k, &st);
    gt_layers_unclaim(key, gt_kernel_source_hash, GT_VERSION_MAJOR, owner);
    gt_tune_report_free(&rep);
    if (won) return plan_of(dc, key, &k, GT_SRC_TUNED, 0, out);
    if (st != GT_SUCCESS) return st;
    return fallback(dc, key, 1, GT_SRC_FALLBACK, 0, out);
}

gt_status gt_dispatch(gt_devctx *dc, const gt_key *key, CUstream stream, int capturing,
                      const gt_plan **out) {
    CUstreamCaptureMode mode = gt_cu_relaxed_begin();
    pthread_mutex_lock(&dc->resolve_lock);
    gt_status s = GT_SUCCESS;
    const gt_plan *p = gt_plan_find(dc->ctx, key);
    *out = p;
    if (!p || (p->retune && !capturing))
        s = capturing ? resolve_captured(dc, key, out) : resolve(dc, key, stream, out);
    pthread_mutex_unlock(&dc->resolve_lock);
    gt_cu_relaxed_end(mode);
    return s;
}

gt_status gt_dispatch_tune(gt_devctx *dc, const gt_key *key, int force, const gt_tune_opts *opts,
                           gt_tune_report *rep, int *source) {
    pthread_mutex_lock(&dc->resolve_lock);
    gt_layers_open();
    const gt_plan *p = force ? NULL : gt_plan_find(dc->ctx, key);
    gt_status s = GT_SUCCESS;
    gt_kern k;
    if (!p && !force && from_layers(dc, key, &k)) s = plan_of(dc, key, &k, GT_SRC_CACHE, 0, &p);
    if (!p && s == GT_SUCCESS) {
        gt_tune_report local;
        gt_tune_report *r = rep ? rep : &local;
        gt_status st;
        if (tune_key(dc, key, opts, 0, force ? STORE_REPLACE : STORE_FIRST_ADOPT, r, &k, &st)) {
            /* --force replaces a plan the process may already hold. */
            gt_plan np = {.ctx = dc->ctx, .key = *key, .kern = k, .source = GT_SRC_TUNED};
            p = gt_plan_replace(&np);
            if (!p) s = gt_fail(GT_OUT_OF_MEMORY, "plan table");
        } else if ((s = st) == GT_SUCCESS && !(p = gt_plan_find(dc->ctx, key))) {
            s = fallback(dc, key, 1, GT_SRC_FALLBACK, 0, &p);
        }
        if (r == &local) gt_tune_report_free(r);
    }
    if (s == GT_SUCCESS && source) *source = p->source;
    pthread_mutex_unlock(&dc->resolve_lock);
    return s;
}

void gt_dispatch_release(void) {
    stop_worker();
    /* Compiles left running by tuning runs use the library's code and NVRTC. */
    gt_tune_wait_compiles();
    gt_layers_close();
    /* The fits came from the layers just closed: the next ones are read afresh. */
    pthread_mutex_lock(&fix_lock);
    memset(fix_slots, 0, sizeof fix_slots);
    pthread_mutex_unlock(&fix_lock);
    pthread_mutex_lock(&rows_lock);
    for (int i = 0; i < ROWS_SLOTS; i++) free(rows_slots[i].rows);
    memset(rows_slots, 0, sizeof rows_slots);
    rows_next = 0;
    pthread_mutex_unlock(&rows_lock);
}
