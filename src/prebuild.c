/*
 * prebuild.c: the node's generic kernels (prebuild.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "prebuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "kern.h"
#include "log.h"
#include "measure.h"
#include "pool.h"
#include "select.h"
#include "space.h"

/* The grid: M and N from a single row to a large batch, K from a short to a very long
 * reduction (split-K's territory), a factor of 4 apart, so that a shape between points
 * is within a factor of 2 of one in each dimension (0.7 selector sigmas): the held set
 * then holds, or comes close to, the choice the whole space would give it. A factor of
 * 16 left bf16 shapes of the held-out list running a held configuration the cost model
 * rated up to 2.6 times slower than its best. */
/* Below 16, every power of two: GEMV's tile holds the small side in the next power of two
 * (kcfg.c's gemv_fit), so a decode step of 5 to 8 tokens needs an 8-row point. */
static const long long grid_mn[] = {1, 2, 4, 8, 16, 64, 256, 1024, 4096, 16384, 65536};
static const long long grid_k[] = {16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576};
#define NGRID_MN (int)(sizeof grid_mn / sizeof grid_mn[0])
#define NGRID_K (int)(sizeof grid_k / sizeof grid_k[0])
/* A narrow class (alignment under 16 bytes: leading dimensions of odd sizes) of a type
 * with FMA kernels (f32, f64, f32_3xtf32; not the tensor-core-only ones) also holds each
 * M and N point from 64 up one larger (65, 257, ...): the choice for an extent just past
 * a power of two, whose last row or column of tiles is nearly empty, differs from the
 * power's own, and odd extents are what put a shape in a narrow class. On the H100, f32 4099 x
 * 257 x 3001 TT ran the 16 x 16 tile (0.42 of cuBLAS) where the set held no tile that
 * suits 257 columns, and 0.52 with these points; bf16's 2-byte held-out shapes ran level
 * with and without them (1.205 and 1.196 of cuBLAS) for twice the prebuild time. */
#define ODD_FROM 64
_Static_assert(2 * NGRID_MN <= GT_PREBUILD_EXTENTS_MAX, "room for every point and its odd twin");

int gt_prebuild_extents(const gt_key *cls, long long *mn) {
    const int odd = cls->align < 16 && !gt_dtype_tensor_only(cls->dtype);
    int n = 0;
    for (int i = 0; i < NGRID_MN; i++) {
        mn[n++] = grid_mn[i];
        if (odd && grid_mn[i] >= ODD_FROM) mn[n++] = grid_mn[i] + 1;
    }
    return n;
}

typedef struct set_job {
    const gt_key *cls;
    const gt_klimits *lim;
    const gt_modelfix *fix;
    const gt_select_row *rows;
    int nrows;
    long long (*points)[3];
    gt_kcfg *chosen;          /* 2 per point: any order, same order */
    int *ok;
    const int *which;         /* the choices to make (indices of chosen); NULL: all */
} set_job;

/* gt_pool_run's job w: choice i = which[w] (or w), the selector at point i / 2, any order
 * (even i) or same order. */
static void select_one(int w, void *user) {
    set_job *j = user;
    const int i = j->which ? j->which[w] : w;
    gt_key key = *j->cls;
    key.m = j->points[i / 2][0], key.n = j->points[i / 2][1], key.k = j->points[i / 2][2];
    j->ok[i] = gt_select(&key, j->lim, i % 2 ? GT_SPACE_SAME_ORDER : 0, j->fix, j->rows,
                         j->nrows, &j->chosen[i], NULL) == 0;
}

static int by_text(const void *a, const void *b) {
    char x[96], y[96];
    gt_kcfg_format(a, x, sizeof x);
    gt_kcfg_format(b, y, sizeof y);
    return strcmp(x, y);
}

/* The set's points into *out (malloc'd): the grid, then every measured shape once (of the
 * rows that ran: a failure says what not to choose, not where to look). The count, or -1
 * out of memory. */
static int set_points(const gt_key *cls, const gt_select_row *rows, int nrows, long long (**out)[3]) {
    long long mn[GT_PREBUILD_EXTENTS_MAX];
    const int nmn = gt_prebuild_extents(cls, mn), ngrid = nmn * nmn * NGRID_K;
    long long (*points)[3] = malloc(sizeof *points * (size_t)(ngrid + nrows));
    *out = points;
    if (!points) return -1;
    int np = 0;
    for (int a = 0; a < nmn; a++)
        for (int b = 0; b < nmn; b++)
            for (int c = 0; c < NGRID_K; c++)
                points[np][0] = mn[a], points[np][1] = mn[b], points[np][2] = grid_k[c], np++;
    for (int i = 0; i < nrows; i++) {
        if (!rows[i].ok) continue;
        int seen = 0;
        for (int p = ngrid; p < np && !seen; p++)
            seen = points[p][0] == rows[i].m && points[p][1] == rows[i].n && points[p][2] == rows[i].k;
        if (!seen) points[np][0] = rows[i].m, points[np][1] = rows[i].n, points[np][2] = rows[i].k, np++;
    }
    return np;
}

/* The set of the choices made (ok) and cls's default, sorted by text, each once, into
 * *out (malloc'd); the count, or -1 out of memory. */
static int set_of(const gt_key *cls, const gt_kcfg *chosen, const int *ok, int nchosen, gt_kcfg **out) {
    gt_kcfg *set = malloc(sizeof *set * (size_t)(nchosen + 1));
    *out = set;
    if (!set) return -1;
    int n = 0;
    for (int i = 0; i < nchosen; i++)
        if (ok[i]) set[n++] = chosen[i];
    gt_kcfg_default(&set[n++], cls);
    qsort(set, (size_t)n, sizeof *set, by_text);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (u == 0 || memcmp(&set[u - 1], &set[i], sizeof *set) != 0) set[u++] = set[i];
    return u;
}

/* The set's points (set_points) and the selector's two choices at each (select_one, on
 * threads) into *j, whose points, chosen and ok are malloc'd (the caller frees them, set
 * or not); the count of points, or -1 out of memory. */
static int choose_all(const gt_key *cls, const gt_klimits *lim, const gt_modelfix *fix,
                      const gt_select_row *rows, int nrows, int threads, set_job *j) {
    *j = (set_job){.cls = cls, .lim = lim, .fix = fix, .rows = rows, .nrows = nrows};
    const int np = set_points(cls, rows, nrows, &j->points);
    if (np < 0) return -1;
    j->chosen = malloc(sizeof *j->chosen * (size_t)(2 * np + 1));
    j->ok = calloc((size_t)(2 * np + 1), sizeof *j->ok);
    if (!j->chosen || !j->ok) return -1;
    gt_pool_run(2 * np, threads < 1 ? 1 : threads, select_one, j);
    return np;
}

int gt_prebuild_set(const gt_key *cls, const gt_klimits *lim, const gt_modelfix *fix,
                    const gt_select_row *rows, int nrows, int threads, gt_kcfg **out) {
    *out = NULL;
    set_job j;
    const int np = choose_all(cls, lim, fix, rows, nrows, threads, &j);
    const int n = np >= 0 ? set_of(cls, j.chosen, j.ok, 2 * np, out) : -1;
    free(j.points), free(j.chosen), free(j.ok);
    return n;
}

typedef struct build_job {
    const gt_key *cls;
    int arch;
    const gt_kcfg *todo;
    gt_rtc_result *res;
    gt_status *st;
} build_job;

/* gt_pool_run's job i: compiles todo[i] (NVRTC only; stored by the caller). */
static void build_one(int i, void *user) {
    build_job *j = user;
    j->st[i] = gt_kern_compile(&j->todo[i], j->cls, j->arch, &j->res[i]);
}

gt_status gt_prebuild_rounds(const gt_key *cls, const gt_klimits *lim, const gt_modelfix *fix,
                             const gt_select_row *measured, int nmeasured, int threads,
                             const gt_prebuild_builder *b, gt_prebuild_report *rep) {
    memset(rep, 0, sizeof *rep);
    if (threads < 1) threads = 1;
    /* The points and their choices are made once; a round chooses again only where the
     * choice did not build (the others stand: a failure only takes a candidate away). */
    set_job j;
    const int np = choose_all(cls, lim, fix, measured, nmeasured, threads, &j);
    int *which = np >= 0 ? malloc(sizeof *which * (size_t)(2 * np + 1)) : NULL;
    /* The measured rows, then a failed row (the selector's form: generic 0) for each
     * kernel that did not build; bad: those configurations. */
    int nrows = nmeasured, nbad = 0;
    gt_select_row *rows = malloc(sizeof *rows * (size_t)(nrows + 1));
    gt_kcfg *bad = NULL;
    gt_status ret = GT_SUCCESS;
    if (np < 0 || !which || !rows) {
        ret = gt_fail(GT_OUT_OF_MEMORY, "prebuild: %d points", np);
        goto done;
    }
    if (nrows > 0) memcpy(rows, measured, sizeof *rows * (size_t)nrows);
    for (int round = 0; round < GT_PREBUILD_ROUNDS; round++) {
        gt_kcfg *set = NULL;
        const int n = set_of(cls, j.chosen, j.ok, 2 * np, &set);
        gt_kcfg *have = n >= 0 ? malloc(sizeof *have * (size_t)(n + 1024)) : NULL;
        gt_kcfg *todo = n >= 0 ? malloc(sizeof *todo * (size_t)(n + 1)) : NULL;
        int *built = n >= 0 ? calloc((size_t)(n + 1), sizeof *built) : NULL;
        gt_select_row *more_rows = n >= 0 ? realloc(rows, sizeof *rows * (size_t)(nrows + n + 1)) : NULL;
        if (more_rows) rows = more_rows;
        gt_kcfg *more_bad = n >= 0 ? realloc(bad, sizeof *bad * (size_t)(nbad + n + 1)) : NULL;
        if (more_bad) bad = more_bad;
        if (!set || !have || !todo || !built || !more_rows || !more_bad) {
            free(set), free(have), free(todo), free(built);
            ret = gt_fail(GT_OUT_OF_MEMORY, "prebuild: the set of configurations");
            break;
        }
        const int nhave = b->have(b->user, have, n + 1024);
        int ntodo = 0;
        for (int i = 0; i < n; i++) {
            if (gt_kcfg_listed(have, nhave, &set[i])) {
                if (round == 0) rep->held++;
                continue;
            }
            /* Failed in an earlier round (only the default, which every set holds, comes
             * back): not tried again. */
            if (gt_kcfg_listed(bad, nbad, &set[i])) continue;
            todo[ntodo] = set[i];
            todo[ntodo++].generic = 1;
        }
        if (round == 0) rep->configs = rep->held;
        rep->configs += ntodo;
        if (ntodo > 0) b->build(b->user, todo, ntodo, built, rep);
        const int before = nbad;
        for (int i = 0; i < ntodo; i++) {
            if (built[i]) continue;
            gt_kcfg c = todo[i];
            c.generic = 0;
            bad[nbad++] = c;
            gt_select_row *r = &rows[nrows++];
            memset(r, 0, sizeof *r);
            r->m = r->n = r->k = 1;
            gt_kcfg_format(&c, r->config, sizeof r->config);
        }
        free(set), free(have), free(todo), free(built);
        if (nbad == before) break;
        int nwhich = 0;
        for (int i = 0; i < 2 * np; i++)
            if (j.ok[i] && gt_kcfg_listed(bad + before, nbad - before, &j.chosen[i])) which[nwhich++] = i;
        j.rows = rows, j.nrows = nrows, j.which = which;
        gt_pool_run(nwhich, threads, select_one, &j);
    }
done:
    free(j.points), free(j.chosen), free(j.ok), free(which), free(rows), free(bad);
    return ret;
}

typedef struct class_builder {
    gt_devctx *dc;
    const gt_key *cls;
    int threads;
} class_builder;

static int class_have(void *user, gt_kcfg *out, int max) {
    class_builder *cb = user;
    return gt_kern_generic_have(cb->cls, cb->dc->arch, out, max);
}

/* Compiles todo on threads and stores each kernel that loads and passes gt_kern_load's
 * checks (a DMMA kernel that spills is refused: a stored binary that every call refuses
 * would cost each first call a compile). */
static void class_build(void *user, const gt_kcfg *todo, int ntodo, int *ok, gt_prebuild_report *rep) {
    class_builder *cb = user;
    gt_rtc_result *res = calloc((size_t)ntodo, sizeof *res);
    gt_status *st = calloc((size_t)ntodo, sizeof *st);
    if (!res || !st) {
        free(res), free(st);
        rep->failed += ntodo;
        gt_log(GT_LOG_WARN, "prebuild: out of memory for %d kernels", ntodo);
        return;
    }
    build_job j = {.cls = cb->cls, .arch = cb->dc->arch, .todo = todo, .res = res, .st = st};
    gt_pool_run(ntodo, cb->threads < 1 ? 1 : cb->threads, build_one, &j);
    for (int i = 0; i < ntodo; i++) {
        char text[96];
        gt_kcfg_format(&todo[i], text, sizeof text);
        gt_kern k;
        gt_status ls = st[i] == GT_SUCCESS ? gt_kern_load(res[i].image, &todo[i], cb->cls, &k) : st[i];
        if (ls == GT_SUCCESS) {
            gt_kern_unload(&k);
            gt_program p;
            gt_kern_program(&todo[i], cb->cls, &p);
            gt_load_store(&p, cb->dc->arch, res[i].image, res[i].size);
            rep->built++;
            ok[i] = 1;
        } else {
            if (st[i] == GT_SUCCESS) rep->refused++;
            else rep->failed++;
            gt_log(GT_LOG_WARN, "prebuild: generic %s %s: %s", text,
                   st[i] == GT_SUCCESS ? "is refused" : "does not compile",
                   st[i] == GT_SUCCESS ? gt_last_error() : res[i].error);
        }
        gt_rtc_result_free(&res[i]);
    }
    free(res), free(st);
}

gt_status gt_prebuild_class(gt_devctx *dc, const gt_key *cls, int threads, gt_prebuild_report *rep) {
    double t0 = gt_measure_now_s();
    gt_klimits lim;
    gt_kern_limits(dc, &lim);
    gt_select_row *rows = NULL;
    gt_modelfix *fix = malloc(sizeof *fix);
    const int nrows = gt_dispatch_class_data(cls, &lim, &rows, fix);
    class_builder cb = {.dc = dc, .cls = cls, .threads = threads};
    const gt_prebuild_builder b = {.have = class_have, .build = class_build, .user = &cb};
    gt_status st = gt_prebuild_rounds(cls, &lim, fix, rows, nrows, threads, &b, rep);
    free(rows), free(fix);
    rep->seconds = gt_measure_now_s() - t0;
    return st;
}
