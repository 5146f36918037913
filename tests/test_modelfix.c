/*
 * test_modelfix.c: the cost model corrected by the tuned shapes' timings (tuner/modelfix.h)
 * and where the correction reaches: the space's order, the selector, and the fit from the
 * cache layers (src/dispatch.h's gt_dispatch_model_fix). No GPU needed: synthetic timings
 * of an H100, made from the model's own estimates with a known error added.
 *   fix_needs_enough_shapes       timings of fewer than GT_FIX_MIN_SHAPES shapes: no
 *                                 correction, factor 1 for every configuration
 *   fix_learns_a_feature          every configuration of one stage count ran 30% slower
 *                                 than the model says on ten shapes: those are corrected
 *                                 up (to the cap), the others not, and the cap holds
 *   fix_same_rows_any_order       the same rows shuffled give the same weights, bit for bit
 *   fix_orders_the_space          gt_space_build_fixed's estimates are the model's times
 *                                 the factor, in that order
 *   fix_changes_the_choice        the model's first and a close second differ in their
 *                                 stage count, which ran slow everywhere in the first's:
 *                                 without the fix the selector takes the first, with it
 *                                 another
 *   fix_from_the_cache_layers     timings stored in a cache file under four op pairs are
 *                                 all read into the fit of their alignment class, those of
 *                                 another class or data type not; a tuning refits it, and
 *                                 release drops it
 *   rows_kept_until_layers_change the selector's rows of a class (gt_dispatch_class_rows),
 *                                 kept per process: the same rows twice; a shape stored in
 *                                 the class is in the next read, one of another op pair is
 *                                 not; after the layers close, another file's rows
 *   class_data_one_walk           gt_dispatch_class_data's rows and fit, read in one walk,
 *                                 are those of gt_dispatch_class_rows and
 *                                 gt_dispatch_model_fix read apart (rows text for text, the
 *                                 fit bit for bit, all four op pairs in it); a kept fit is
 *                                 returned as kept
 *   class_data_kept               the first process keeps a class's rows and fit in the
 *                                 user cache and the next reads them, the same; a stored
 *                                 shape, other limits (a DRAM rate too), a shipped file
 *                                 added or changed, a damaged state: derived again
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "dispatch.h"
#include "fixtures.h"
#include "kernel_sources.h"
#include "layers.h"
#include "modelfix.h"
#include "select.h"
#include "space.h"
#include "tap.h"
#include "tempcache.h"
#include "log.h"

/* The ten training shapes (f32 NN, 16-byte class, beta 0). */
static const long long train[10][3] = {{512, 512, 512},    {1024, 1024, 1024}, {2048, 2048, 2048},
                                       {4096, 4096, 1024}, {256, 8192, 2048},  {8192, 256, 2048},
                                       {1536, 1536, 384},  {3000, 3000, 3000}, {128, 4096, 4096},
                                       {4096, 128, 4096}};

/* Rows for shape s: the model's first `per` candidates there, each timed at the model's
 * estimate times 1.3 when its stage count is slow (0: none), times a level of the shape's
 * own (which the fit must ignore). */
static int add_rows(gt_fix_row *rows, int n, const gt_key *key, int per, int slow, double level) {
    gt_cand *c = NULL;
    gt_space_counts counts;
    int got = gt_space_build(key, &h100, per, 0, &c, &counts);
    for (int i = 0; i < got; i++) {
        gt_fix_row *r = &rows[n++];
        memset(r, 0, sizeof *r);
        r->key = *key;
        r->cfg = c[i].cfg;
        r->est_us = c[i].est_us;
        r->time_us = c[i].est_us * level * (c[i].cfg.stages == slow ? 1.3 : 1.0);
    }
    free(c);
    return n;
}

static int training_rows(gt_fix_row *rows, int nshapes, int slow) {
    int n = 0;
    for (int s = 0; s < nshapes; s++) {
        gt_key key;
        fixture_key(&key, 90, 0, 0, train[s][0], train[s][1], train[s][2], 16, 1);
        n = add_rows(rows, n, &key, 40, slow, 1.0 + 0.1 * s);
    }
    return n;
}

/* A configuration of the rows with (want 1) or without (want 0) stages st. */
static int find_st(const gt_fix_row *rows, int n, int st, int want, gt_kcfg *out) {
    for (int i = 0; i < n; i++) {
        *out = rows[i].cfg;
        if ((out->stages == st) == want) return 1;
    }
    return 0;
}

static void fix_needs_enough_shapes(void) {
    gt_fix_row *rows = calloc(400, sizeof *rows);
    int n = training_rows(rows, GT_FIX_MIN_SHAPES - 1, 3);
    gt_modelfix fix;
    TAP_CHECK(gt_modelfix_fit(rows, n, &fix) == 0, "fit failed");
    TAP_CHECK(fix.nfeat == 0, "%d features from %d shapes", fix.nfeat, GT_FIX_MIN_SHAPES - 1);
    gt_kcfg c;
    TAP_CHECK(find_st(rows, n, 3, 1, &c) && gt_modelfix_factor(&fix, &c) == 1.0,
              "factor %g without a fit", gt_modelfix_factor(&fix, &c));
    TAP_CHECK(gt_modelfix_factor(NULL, &c) == 1.0, "factor without a correction");
    TAP_CHECK(gt_modelfix_fit(rows, 0, &fix) == 0 && fix.nfeat == 0, "no rows");
    free(rows);
}

static void fix_learns_a_feature(void) {
    gt_fix_row *rows = calloc(400, sizeof *rows);
    int n = training_rows(rows, 10, 3);
    gt_modelfix fix;
    TAP_CHECK(gt_modelfix_fit(rows, n, &fix) == 0 && fix.nfeat > 0, "no fit (%d rows)", n);
    TAP_CHECK(fix.shapes == 10 && fix.rows == n, "fit saw %d shapes, %d rows of 10 and %d",
              fix.shapes, fix.rows, n);
    gt_kcfg slow, fast;
    TAP_CHECK(find_st(rows, n, 3, 1, &slow) && find_st(rows, n, 3, 0, &fast),
              "the rows hold no 3-stage configuration or no other");
    double fs = gt_modelfix_factor(&fix, &slow), ff = gt_modelfix_factor(&fix, &fast);
    printf("# factor of a 3-stage configuration %.3f, of another %.3f\n", fs, ff);
    TAP_CHECK(fs / ff > 1.08, "slow feature not learnt: %.3f against %.3f", fs, ff);
    TAP_CHECK(fs <= exp(GT_FIX_MAX_LOG) + 1e-12 && ff >= exp(-GT_FIX_MAX_LOG) - 1e-12,
              "cap broken: %.4f %.4f", fs, ff);
    /* No error in the rows: no correction to speak of. */
    n = training_rows(rows, 10, 0);
    TAP_CHECK(gt_modelfix_fit(rows, n, &fix) == 0 && fix.nfeat > 0, "no fit");
    TAP_CHECK(fabs(log(gt_modelfix_factor(&fix, &slow))) < 1e-6, "factor %.6f from exact estimates",
              gt_modelfix_factor(&fix, &slow));
    free(rows);
}

static void fix_same_rows_any_order(void) {
    gt_fix_row *rows = calloc(400, sizeof *rows);
    int n = training_rows(rows, 10, 2);
    gt_modelfix a, b;
    TAP_CHECK(gt_modelfix_fit(rows, n, &a) == 0, "fit");
    srand(7);
    for (int i = n - 1; i > 0; i--) {
        int j = rand() % (i + 1);
        gt_fix_row t = rows[i];
        rows[i] = rows[j], rows[j] = t;
    }
    TAP_CHECK(gt_modelfix_fit(rows, n, &b) == 0, "fit");
    TAP_CHECK(a.nfeat == b.nfeat && memcmp(a.id, b.id, sizeof a.id) == 0 &&
                  memcmp(a.w, b.w, sizeof a.w) == 0,
              "shuffled rows gave other weights");
    free(rows);
}

static void fix_orders_the_space(void) {
    gt_fix_row *rows = calloc(400, sizeof *rows);
    int n = training_rows(rows, 10, 3);
    gt_modelfix fix;
    gt_modelfix_fit(rows, n, &fix);
    gt_key key;
    fixture_key(&key, 90, 0, 1, 777, 3000, 1500, 16, 1);
    gt_cand *c = NULL;
    gt_space_counts counts;
    int got = gt_space_build_fixed(&key, &h100, 0, 0, &fix, &c, &counts);
    TAP_CHECK(got > 10, "%d candidates", got);
    int bad = 0, order = 0;
    for (int i = 0; i < got; i++) {
        double want = gt_space_estimate_us(&c[i].cfg, &key, &h100) * gt_modelfix_factor(&fix, &c[i].cfg);
        bad += fabs(c[i].est_us - want) > 1e-9 * want;
        order += i > 0 && c[i].est_us < c[i - 1].est_us;
    }
    TAP_CHECK(bad == 0, "%d estimates are not the model's times the factor", bad);
    TAP_CHECK(order == 0, "%d out of order", order);
    free(c), free(rows);
}

static void fix_changes_the_choice(void) {
    /* A new shape, and the model's order there. */
    gt_key key;
    fixture_key(&key, 90, 0, 0, 1900, 1700, 1300, 16, 1);
    gt_cand *c = NULL;
    gt_space_counts counts;
    int got = gt_space_build(&key, &h100, 64, 0, &c, &counts);
    /* The model's first, and the first after it with another stage count within 9%. */
    int second = -1;
    for (int i = 1; i < got && second < 0; i++)
        if (c[i].cfg.stages != c[0].cfg.stages && c[i].est_us < 1.09 * c[0].est_us) second = i;
    TAP_CHECK(got > 1 && second > 0, "no close second with another stage count");
    if (second < 0) {
        free(c);
        return;
    }
    gt_fix_row *rows = calloc(400, sizeof *rows);
    int n = training_rows(rows, 10, c[0].cfg.stages);
    gt_modelfix fix;
    gt_modelfix_fit(rows, n, &fix);
    gt_kcfg without, with;
    char a[96], b[96], first[96];
    TAP_CHECK(gt_select(&key, &h100, 0, NULL, NULL, 0, &without, NULL) == 0, "no choice");
    TAP_CHECK(gt_select(&key, &h100, 0, &fix, NULL, 0, &with, NULL) == 0, "no choice with the fix");
    gt_kcfg_format(&without, a, sizeof a);
    gt_kcfg_format(&with, b, sizeof b);
    gt_kcfg_format(&c[0].cfg, first, sizeof first);
    printf("# model's first %s; chosen %s, with the fix %s\n", first, a, b);
    TAP_CHECK(strcmp(a, first) == 0, "without the fix: %s, not the model's first", a);
    TAP_CHECK(with.stages != c[0].cfg.stages, "with the fix the slow stage count %d is still chosen (%s)",
              c[0].cfg.stages, b);
    free(c), free(rows);
}

/* Stores rows of one shape (key) as a tuning in db, or in the layers' user cache where
 * db is NULL. */
static void store_shape_in(gt_db *db, const gt_key *key, int per) {
    gt_cand *c = NULL;
    gt_space_counts counts;
    int got = gt_space_build(key, &h100, per, 0, &c, &counts);
    gt_db_timing *t = calloc((size_t)got, sizeof *t);
    gt_db_winner w;
    memset(&w, 0, sizeof w);
    for (int i = 0; i < got; i++) {
        gt_kcfg_format(&c[i].cfg, t[i].config, sizeof t[i].config);
        snprintf(t[i].status, sizeof t[i].status, "ok");
        t[i].time_us = c[i].est_us * (c[i].cfg.stages == 3 ? 1.3 : 1.0);
    }
    snprintf(w.config, sizeof w.config, "%s", t[0].config);
    w.time_us = t[0].time_us;
    if (db) gt_db_store(db, key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, t, got);
    else gt_layers_store(key, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, t, got);
    free(c), free(t);
}

static void store_shape(const gt_key *key, int per) { store_shape_in(NULL, key, per); }

/* Stores rows of one shape (key, 12 timings) in the cache file at path, opened for it. */
static void store_shape_in_file(const char *path, const gt_key *key) {
    gt_db *db = NULL;
    char msg[600];
    TAP_CHECK(gt_db_open(path, 0, 0, &db, msg, sizeof msg) == GT_SUCCESS, "open %s: %s", path, msg);
    if (!db) return;
    store_shape_in(db, key, 12);
    gt_db_close(db);
}

/* Removes a cache file and its WAL's side files. */
static void remove_cache(const char *path) {
    const char *sides[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char side[300];
        snprintf(side, sizeof side, "%s%s", path, sides[i]);
        unlink(side);
    }
}

static void fix_from_the_cache_layers(void) {
    char path[] = "/tmp/gt_modelfix_XXXXXX";
    int made = temp_cache_open(path, 0);
    TAP_CHECK(made == 0, "mkstemp");
    if (made != 0) return;
    gt_key like;
    fixture_key(&like, 90, 0, 0, 64, 64, 64, 16, 1);
    gt_modelfix fix;
    gt_dispatch_model_fix(&like, &h100, &fix);
    TAP_CHECK(fix.nfeat == 0, "a fit from an empty cache");
    /* Ten shapes over the four op pairs of the 16-byte class, 12 timings each; three of the
     * 4-byte class, which the 16-byte class's fit must not read. */
    for (int s = 0; s < 10; s++) {
        gt_key key;
        fixture_key(&key, 90, s % 2, (s / 2) % 2, train[s][0], train[s][1], train[s][2], 16, 1);
        store_shape(&key, 12);
    }
    for (int s = 0; s < 3; s++) {
        gt_key key;
        fixture_key(&key, 90, 0, 1, train[s][0] - 1, train[s][1] + 1, train[s][2] + 1, 4, 1);
        store_shape(&key, 12);
    }
    /* A shape of another data type, which the f32 fit must not read either. */
    gt_key other;
    fixture_key(&other, 90, 0, 0, 1000, 1000, 1000, 16, 1);
    other.dtype = GT_DT_F64;
    store_shape(&other, 12);
    /* The fit is kept until this process tunes: stored rows alone do not refit it. */
    gt_dispatch_model_fix(&like, &h100, &fix);
    TAP_CHECK(fix.nfeat == 0, "refitted without a tuning");
    gt_stat_add(GT_STAT_TUNES, 1);
    gt_dispatch_model_fix(&like, &h100, &fix);
    TAP_CHECK(fix.nfeat > 0 && fix.shapes == 10 && fix.rows == 120,
              "fit from the layers: %d features, %d shapes, %d rows (want 10 and 120)", fix.nfeat,
              fix.shapes, fix.rows);
    /* gt_release drops the fit with the layers it came from: an empty cache next fits
     * nothing. */
    gt_dispatch_release();
    char empty[] = "/tmp/gt_modelfix_empty_XXXXXX";
    int fe = mkstemp(empty);
    if (fe >= 0) close(fe), unlink(empty);
    setenv("GEMMTUNE_CACHE", empty, 1);
    gt_layers_open();
    gt_dispatch_model_fix(&like, &h100, &fix);
    TAP_CHECK(fix.nfeat == 0, "a fit kept past gt_release (%d features)", fix.nfeat);
    gt_layers_close();
    unlink(empty);
    remove_cache(path);
}

/* rows[0..n) as text lines "M N K config ok time", in one malloc'd buffer; rows freed. */
static char *rows_format(gt_select_row *rows, int n) {
    size_t cap = (size_t)(n > 0 ? n : 1) * 160, used = 0;
    char *out = calloc(cap, 1);
    for (int i = 0; out && i < n; i++)
        used += (size_t)snprintf(out + used, cap - used, "%lld %lld %lld %s %d %.3f\n", rows[i].m,
                                 rows[i].n, rows[i].k, rows[i].config, rows[i].ok, rows[i].time_us);
    free(rows);
    return out;
}

/* The rows of key's class (gt_dispatch_class_rows) as rows_format's text. */
static char *rows_text(const gt_key *key, int *n) {
    gt_select_row *rows = NULL;
    *n = gt_dispatch_class_rows(key, &rows);
    return rows_format(rows, *n);
}

static void rows_kept_until_layers_change(void) {
    char path[] = "/tmp/gt_rows_XXXXXX";
    TAP_CHECK(temp_cache_open(path, 0) == 0, "mkstemp");
    gt_key nn, nt;
    fixture_key(&nn, 90, 0, 0, 777, 555, 333, 16, 1);
    fixture_key(&nt, 90, 0, 1, 777, 555, 333, 16, 1);
    int n0, n1, n2, n3, n4;
    char *t0 = rows_text(&nn, &n0);
    TAP_CHECK(n0 == 0, "%d rows in an empty cache", n0);
    gt_key a;
    fixture_key(&a, 90, 0, 0, train[0][0], train[0][1], train[0][2], 16, 1);
    store_shape(&a, 12);
    char *t1 = rows_text(&nn, &n1), *t2 = rows_text(&nn, &n2);
    /* A tuned shape's winner and its 12 timings. */
    TAP_CHECK(n1 == 13 && n2 == n1 && t1 && t2 && strcmp(t1, t2) == 0,
              "one shape stored: %d rows, then %d, %s", n1, n2,
              t1 && t2 && strcmp(t1, t2) == 0 ? "the same" : "not the same");
    gt_key b, other;
    fixture_key(&b, 90, 0, 0, train[1][0], train[1][1], train[1][2], 16, 1);
    fixture_key(&other, 90, 0, 1, train[2][0], train[2][1], train[2][2], 16, 1);
    store_shape(&b, 12);
    store_shape(&other, 12);
    char *t3 = rows_text(&nn, &n3);
    TAP_CHECK(n3 == 26, "two shapes of the class stored: %d rows (want 26)", n3);
    free(rows_text(&nt, &n4));
    TAP_CHECK(n4 == 13, "the other op pair's class: %d rows (want 13)", n4);
    /* Another file: the rows kept from the first are not read from it. */
    char empty[] = "/tmp/gt_rows_empty_XXXXXX";
    TAP_CHECK(temp_cache_open(empty, 0) == 0, "mkstemp");
    free(rows_text(&nn, &n4));
    TAP_CHECK(n4 == 0, "%d rows from an empty file after the layers closed", n4);
    free(t0), free(t1), free(t2), free(t3);
    gt_layers_close();
    remove_cache(path);
    remove_cache(empty);
}

/* Fresh process state over the same file: the kept rows and fits dropped, the layers
 * opened again. */
static void reopen(void) {
    gt_dispatch_release();
    gt_layers_open();
}

/* The ten training shapes over the four op pairs of the 16-byte class, 12 timings each,
 * into the layers' user cache. */
static void store_training_classes(void) {
    for (int s = 0; s < 10; s++) {
        gt_key key;
        fixture_key(&key, 90, s % 2, (s / 2) % 2, train[s][0], train[s][1], train[s][2], 16, 1);
        store_shape(&key, 12);
    }
}

static void class_data_one_walk(void) {
    char path[] = "/tmp/gt_classdata_XXXXXX";
    TAP_CHECK(temp_cache_open(path, 0) == 0, "mkstemp");
    store_training_classes();
    gt_key nn;
    fixture_key(&nn, 90, 0, 0, 777, 555, 333, 16, 1);
    reopen();
    gt_select_row *rows = NULL;
    gt_modelfix both, apart, again;
    memset(&both, 0, sizeof both), memset(&apart, 0, sizeof apart);
    const int n1 = gt_dispatch_class_data(&nn, &h100, &rows, &both);
    char *t1 = rows_format(rows, n1);
    reopen();
    gt_dispatch_model_fix(&nn, &h100, &apart);
    int n2;
    char *t2 = rows_text(&nn, &n2);
    /* The NN shapes of the ten (s = 0, 4, 8): three winners and their 36 timings. */
    TAP_CHECK(n1 == 39 && n2 == n1 && t1 && t2 && strcmp(t1, t2) == 0,
              "rows in one walk: %d, apart: %d, %s (want 39)", n1, n2,
              t1 && t2 && strcmp(t1, t2) == 0 ? "the same" : "not the same");
    TAP_CHECK(both.nfeat > 0 && both.shapes == 10 && both.rows == 120,
              "fit in one walk: %d features, %d shapes, %d rows (want 10 and 120)", both.nfeat,
              both.shapes, both.rows);
    TAP_CHECK(both.nfeat == apart.nfeat && memcmp(both.id, apart.id, sizeof both.id) == 0 &&
                  memcmp(both.w, apart.w, sizeof both.w) == 0,
              "the fit in one walk differs from the fit apart");
    /* Rows not kept (another op pair), the fit kept: the kept fit comes back. */
    gt_key tn;
    fixture_key(&tn, 90, 1, 0, 777, 555, 333, 16, 1);
    memset(&again, 0, sizeof again);
    rows = NULL;
    gt_dispatch_class_data(&tn, &h100, &rows, &again);
    free(rows);
    TAP_CHECK(again.nfeat == apart.nfeat && memcmp(again.w, apart.w, sizeof again.w) == 0,
              "another op pair of the class: not the kept fit");
    free(t1), free(t2);
    gt_layers_close();
    remove_cache(path);
}

/* One class read by gt_dispatch_class_data as a new process would (the layers reopened):
 * rows as text and the fit; *read: whether it came from a kept state. */
static char *class_read(const gt_key *key, const gt_klimits *lim, gt_modelfix *fix, int *n,
                        int *read) {
    gt_dispatch_release();
    gt_layers_open();
    const unsigned long before = gt_dispatch_states_read();
    gt_select_row *rows = NULL;
    memset(fix, 0, sizeof *fix);
    *n = gt_dispatch_class_data(key, lim, &rows, fix);
    *read = gt_dispatch_states_read() != before;
    return rows_format(rows, *n);
}

static int same_fit(const gt_modelfix *a, const gt_modelfix *b) {
    return a->nfeat == b->nfeat && a->shapes == b->shapes && a->rows == b->rows &&
           memcmp(a->id, b->id, sizeof a->id) == 0 && memcmp(a->w, b->w, sizeof a->w) == 0;
}

static void class_data_kept(void) {
    char path[] = "/tmp/gt_classkept_XXXXXX", shipped[] = "/tmp/gt_classkept_ship_XXXXXX";
    TAP_CHECK(temp_cache_open(path, 0) == 0, "mkstemp");
    int fd = mkstemp(shipped);
    if (fd >= 0) close(fd), unlink(shipped);
    store_training_classes();
    gt_key nn;
    fixture_key(&nn, 90, 0, 0, 777, 555, 333, 16, 1);
    gt_modelfix f1, f2;
    int n1, n2, r1, r2;
    /* Derived and kept by the first process, read by the next: the same rows and fit. */
    char *t1 = class_read(&nn, &h100, &f1, &n1, &r1);
    char *t2 = class_read(&nn, &h100, &f2, &n2, &r2);
    TAP_CHECK(!r1 && r2, "first process read a state: %d; second: %d (want 0 and 1)", r1, r2);
    TAP_CHECK(n1 == 39 && n2 == n1 && t1 && t2 && strcmp(t1, t2) == 0 && f1.nfeat > 0 &&
                  same_fit(&f1, &f2),
              "kept state: %d rows, derived %d; rows %s; fit %s", n2, n1,
              t1 && t2 && strcmp(t1, t2) == 0 ? "the same" : "differ",
              same_fit(&f1, &f2) ? "the same" : "differs");
    /* A shape of the class stored: the next process derives the data with it. */
    gt_key more;
    fixture_key(&more, 90, 0, 0, 640, 480, 2000, 16, 1);
    gt_dispatch_release();
    gt_layers_open();
    store_shape(&more, 12);
    free(t2);
    t2 = class_read(&nn, &h100, &f2, &n2, &r2);
    TAP_CHECK(!r2 && n2 == n1 + 13, "after a store: read a state %d, %d rows (want 0, %d)", r2,
              n2, n1 + 13);
    free(t1);
    t1 = class_read(&nn, &h100, &f1, &n1, &r1);
    TAP_CHECK(r1 && n1 == n2 && t1 && t2 && strcmp(t1, t2) == 0 && same_fit(&f1, &f2),
              "the state kept after the store: read %d, %d rows", r1, n1);
    /* Another memory's rate (gt_klimits.dram_rate, which moves the estimates): not the
     * kept state; then the H100's kept again for the case below. */
    gt_klimits faster = h100;
    faster.dram_rate = 1.467;
    free(t1);
    t1 = class_read(&nn, &faster, &f1, &n1, &r1);
    TAP_CHECK(!r1, "a state kept for another DRAM rate was read");
    free(t1);
    t1 = class_read(&nn, &h100, &f1, &n1, &r1);
    /* Other limits: not the kept state. */
    gt_klimits other = h100;
    other.sm_count = 114;
    free(t1);
    t1 = class_read(&nn, &other, &f1, &n1, &r1);
    TAP_CHECK(!r1, "a state kept for other limits was read");
    /* A shipped file joins the layers, then changes: each time derived anew, then kept. */
    gt_key sh;
    fixture_key(&sh, 90, 0, 0, 300, 3000, 700, 16, 1);
    store_shape_in_file(shipped, &sh);
    setenv("GEMMTUNE_CACHE_PATH", shipped, 1);
    free(t1);
    t1 = class_read(&nn, &h100, &f1, &n1, &r1);
    TAP_CHECK(!r1 && n1 == n2 + 13, "a shipped file added: read %d, %d rows (want 0, %d)", r1, n1,
              n2 + 13);
    free(t1);
    t1 = class_read(&nn, &h100, &f1, &n1, &r1);
    TAP_CHECK(r1 && n1 == n2 + 13, "with the shipped file: read %d, %d rows", r1, n1);
    fixture_key(&sh, 90, 0, 0, 301, 3001, 701, 16, 1);
    store_shape_in_file(shipped, &sh);
    free(t1);
    t1 = class_read(&nn, &h100, &f1, &n1, &r1);
    TAP_CHECK(!r1 && n1 == n2 + 26, "the shipped file changed: read %d, %d rows (want 0, %d)", r1,
              n1, n2 + 26);
    /* A damaged state is derived again, never used. */
    sqlite3 *c = NULL;
    if (sqlite3_open(path, &c) == SQLITE_OK)
        sqlite3_exec(c, "UPDATE meta SET value = x'67746336' WHERE key LIKE 'state:%'", NULL, NULL,
                     NULL);
    sqlite3_close(c);
    free(t2);
    t2 = class_read(&nn, &h100, &f2, &n2, &r2);
    TAP_CHECK(!r2 && n2 == n1 && t1 && t2 && strcmp(t1, t2) == 0, "a damaged state: read %d, %d rows",
              r2, n2);
    free(t1), free(t2);
    setenv("GEMMTUNE_CACHE_PATH", "", 1);
    gt_layers_close();
    remove_cache(path);
    remove_cache(shipped);
}

int main(void) {
    TAP_RUN(fix_needs_enough_shapes);
    TAP_RUN(fix_learns_a_feature);
    TAP_RUN(fix_same_rows_any_order);
    TAP_RUN(fix_orders_the_space);
    TAP_RUN(fix_changes_the_choice);
    TAP_RUN(fix_from_the_cache_layers);
    TAP_RUN(rows_kept_until_layers_change);
    TAP_RUN(class_data_one_walk);
    TAP_RUN(class_data_kept);
    return tap_done();
}
