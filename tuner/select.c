/*
 * select.c: the configuration of a shape in no cache (select.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space.h"

typedef struct {
    gt_kcfg cfg;
    char text[GT_SELECT_CONFIG_MAX];
    double est_us;
    int failed;         /* some row says it failed: never chosen */
    double err, weight; /* its rows' weighted error against the model, and their weight */
} pooled;

static int row_order(const void *pa, const void *pb) {
    const gt_select_row *a = pa, *b = pb;
    if (a->m != b->m) return a->m < b->m ? -1 : 1;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    if (a->k != b->k) return a->k < b->k ? -1 : 1;
    if (a->beta0 != b->beta0) return a->beta0 < b->beta0 ? -1 : 1;
    int c = strcmp(a->config, b->config);
    if (c) return c;
    if (a->ok != b->ok) return a->ok < b->ok ? -1 : 1;
    return a->time_us < b->time_us ? -1 : a->time_us > b->time_us;
}

/* A row with its configuration parsed (parsed 0: the text does not parse). */
typedef struct {
    gt_select_row r;
    gt_kcfg c;
    int parsed;
} prow;

static int prow_order(const void *a, const void *b) {
    return row_order(&((const prow *)a)->r, &((const prow *)b)->r);
}

static int same_shape(const gt_select_row *a, const gt_select_row *b) {
    return a->m == b->m && a->n == b->n && a->k == b->k && a->beta0 == b->beta0;
}

/* The weight of a measured shape for key: exp(-(d / SIGMA)^2), d the distance of
 * (ln M, ln N, ln K), a different beta0 counting as 0.3 more. */
double gt_select_log_dist2(const gt_key *key, long long m, long long n, long long k) {
    double dm = log((double)m) - log((double)key->m), dn = log((double)n) - log((double)key->n),
           dk = log((double)k) - log((double)key->k);
    return dm * dm + dn * dn + dk * dk;
}

static double weight(const gt_key *key, const gt_select_row *r) {
    double d2 = gt_select_log_dist2(key, r->m, r->n, r->k) + (r->beta0 != key->beta0 ? 0.09 : 0.0);
    return exp(-d2 / (GT_SELECT_SIGMA * GT_SELECT_SIGMA));
}

/* The pool's texts to their places: an open-addressed table, so that building the pool
 * and reading the rows' evidence take time linear in their counts (a prebuilt class holds
 * hundreds of configurations and its rows hundreds of timings, and a first call's choice
 * is a few milliseconds of host time). */
typedef struct {
    int *at;            /* pool index, or -1 for an empty slot */
    unsigned mask;      /* slots - 1, slots a power of two at least twice the entries */
    const pooled *pool;
} text_index;

static unsigned hash_text(const char *s) {
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int index_init(text_index *t, const pooled *pool, int max) {
    unsigned slots = 16;
    while (slots < 2u * (unsigned)max) slots *= 2;
    t->at = malloc(sizeof *t->at * slots);
    t->mask = slots - 1, t->pool = pool;
    if (!t->at) return -1;
    for (unsigned i = 0; i < slots; i++) t->at[i] = -1;
    return 0;
}

/* The pool index of text, or -1. */
static int index_find(const text_index *t, const char *text) {
    for (unsigned h = hash_text(text) & t->mask;; h = (h + 1) & t->mask)
        if (t->at[h] < 0 || strcmp(t->pool[t->at[h]].text, text) == 0) return t->at[h];
}

/* Adds pool entry i (its text not yet in t). */
static void index_add(text_index *t, int i) {
    unsigned h = hash_text(t->pool[i].text) & t->mask;
    while (t->at[h] >= 0) h = (h + 1) & t->mask;
    t->at[h] = i;
}

static int by_bytes(const void *a, const void *b) { return memcmp(a, b, sizeof(gt_kcfg)); }

int gt_select(const gt_key *key, const gt_klimits *lim, int flags, const gt_modelfix *fix,
              const gt_select_row *in, int nrows, gt_kcfg *out, gt_select_info *info) {
    return gt_select_have(key, lim, flags, fix, in, nrows, NULL, 0, out, info);
}

/* One scored configuration, for gt_select_rank's order. */
typedef struct {
    double score;
    int at;
    const char *text; /* the pool's text of it: ties go to the text that sorts first */
} scored;

/* Score, then text: a total order (the pool's texts are distinct), so qsort's result does
 * not depend on the order it met them in. */
static int scored_order(const void *pa, const void *pb) {
    const scored *a = pa, *b = pb;
    if (a->score != b->score) return a->score < b->score ? -1 : 1;
    return strcmp(a->text, b->text);
}

/* gt_select_have's work; with ranked != NULL also the measured configurations (some
 * shape of the class timed them) by score, best first, up to max_ranked (*nranked). */
static int select_core(const gt_key *key, const gt_klimits *lim, int flags,
                       const gt_modelfix *fix, const gt_select_row *in, int nrows,
                       const gt_kcfg *have, int nhave, gt_kcfg *out, gt_select_info *info,
                       gt_kcfg *ranked, int max_ranked, int *nranked) {
    gt_select_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    gt_cand *cands = NULL;
    gt_space_counts counts;
    const int maxpool = GT_SELECT_POOL + nhave + nrows + 1;
    pooled *pool = calloc((size_t)maxpool, sizeof *pool);
    double *res = malloc(sizeof *res * (size_t)(nrows > 0 ? nrows : 1));
    scored *sc = malloc(sizeof *sc * (size_t)maxpool);
    /* The held list in memcmp order, for its membership test (gt_kcfg_listed's). */
    gt_kcfg *held = malloc(sizeof *held * (size_t)(nhave > 0 ? nhave : 1));
    prow *prows = malloc(sizeof *prows * (size_t)(nrows > 0 ? nrows : 1));
    text_index ti = {0};
    int ret = -1, nsc = 0;
    if (nranked) *nranked = 0;
    if (!pool || !res || !sc || !held || !prows ||
        index_init(&ti, pool, maxpool) != 0)
        goto done;
    if (nhave > 0) {
        memcpy(held, have, sizeof *held * (size_t)nhave);
        qsort(held, (size_t)nhave, sizeof *held, by_bytes);
    }
    /* A generic kernel's timing (tuning times the model's first as one) speaks for its
     * configuration: the selector's choices run as generic kernels anyway (src/dispatch.c).
     * Each row's configuration is parsed once here, for the residuals and the pool below
     * (a first call's choice reads hundreds of rows), and sorted with its row. */
    for (int i = 0; i < nrows; i++) {
        prow *p = &prows[i];
        p->r = in[i];
        p->r.generic = 0;
        p->parsed = gt_kcfg_parse(p->r.config, &p->c, NULL, 0) == 0;
        if (p->parsed && p->c.generic) {
            p->c.generic = 0;
            gt_kcfg_format(&p->c, p->r.config, sizeof p->r.config);
            p->r.generic = 1;
        }
    }
    qsort(prows, (size_t)nrows, sizeof *prows, prow_order);
    /* res[i]: row i's error against the (corrected) model at its own shape, ln(time /
     * estimate), less the mean of that over its shape's timings; NAN where it did not run
     * or has no estimate, and for shapes too far to weigh (under GT_SELECT_MIN_WEIGHT:
     * most of a class's shapes for any one new shape, whose estimates would cost a first
     * call time and change no score). */
    for (int i = 0; i < nrows;) {
        int j = i, cnt = 0;
        double sum = 0;
        gt_key at = *key;
        at.m = prows[i].r.m, at.n = prows[i].r.n, at.k = prows[i].r.k, at.beta0 = prows[i].r.beta0;
        const int near = weight(key, &prows[i].r) >= GT_SELECT_MIN_WEIGHT;
        for (; j < nrows && same_shape(&prows[i].r, &prows[j].r); j++) {
            res[j] = NAN;
            if (!near || !prows[j].r.ok || !(prows[j].r.time_us > 0) || !prows[j].parsed) continue;
            gt_kcfg c = prows[j].c;
            c.generic = prows[j].r.generic; /* estimated as it was timed */
            const double est = gt_space_estimate_fixed_us(&c, &at, lim, fix);
            if (!(est > 0)) continue;
            res[j] = log(prows[j].r.time_us / est);
            sum += res[j];
            cnt++;
        }
        for (; i < j; i++)
            if (!isnan(res[i])) res[i] -= sum / cnt;
    }
    /* The pool: what the node holds, every measured configuration, legal here; and the
     * model's best unless the node holds a prebuilt set (GT_SELECT_HELD_MIN or more) of
     * which some is legal here. With such a set the space is not searched and a held
     * configuration is chosen (a first call's few milliseconds, no compile): it came from
     * the selector over a grid of shapes (src/prebuild.c). */
    const int prebuilt = nhave >= GT_SELECT_HELD_MIN;
    int np = 0;
    for (int i = 0; i < nhave; i++) {
        /* Held but pruned here (the space would not rank it: hopeless for this shape by
         * the tuner's own rules) is left out, as the space would leave it. */
        pool[np].cfg = have[i];
        gt_kcfg_format(&have[i], pool[np].text, sizeof pool[np].text);
        if (index_find(&ti, pool[np].text) >= 0 ||
            gt_kcfg_check(&have[i], key, lim, GT_KC_LEGAL | GT_KC_PRUNE))
            continue;
        if ((flags & GT_SPACE_SAME_ORDER) && !gt_kcfg_same_order(&have[i], key)) continue;
        index_add(&ti, np++);
    }
    int held_legal = np;
    for (int i = 0; i < nrows; i++) {
        if (!prows[i].r.ok || !prows[i].parsed || index_find(&ti, prows[i].r.config) >= 0) continue;
        if (gt_kcfg_check(&prows[i].c, key, lim, GT_KC_LEGAL)) continue; /* not legal here */
        pool[np].cfg = prows[i].c;
        if ((flags & GT_SPACE_SAME_ORDER) && !gt_kcfg_same_order(&pool[np].cfg, key)) continue;
        snprintf(pool[np].text, sizeof pool[np].text, "%s", prows[i].r.config);
        index_add(&ti, np++);
    }
    /* A held set too small to stand for the space (binaries of the few shapes this node
     * has run, not a prebuilt set) does not replace the model's search: its configurations
     * were chosen for other shapes and may not fit this one. */
    if (!prebuilt || held_legal == 0) {
        int ncand = gt_space_build_fixed(key, lim, GT_SELECT_POOL, flags, fix, &cands, &counts);
        if (ncand < 0) goto done;
        for (int i = 0; i < ncand; i++) {
            char text[GT_SELECT_CONFIG_MAX];
            gt_kcfg_format(&cands[i].cfg, text, sizeof text);
            if (index_find(&ti, text) >= 0) continue;
            pool[np].cfg = cands[i].cfg;
            snprintf(pool[np].text, sizeof pool[np].text, "%s", text);
            index_add(&ti, np++);
        }
    }
    /* A choice runs as a generic kernel (src/dispatch.c) and is estimated as one; a
     * ranking is for tuning, which times exact kernels. */
    double est_min = 0;
    for (int i = 0; i < np; i++) {
        gt_kcfg as_run = pool[i].cfg;
        as_run.generic = ranked == NULL;
        pool[i].est_us = gt_space_estimate_fixed_us(&as_run, key, lim, fix);
        if (pool[i].est_us > 0 && (est_min == 0 || pool[i].est_us < est_min)) est_min = pool[i].est_us;
    }
    /* What the rows say of each pool entry: failed for some shape (never chosen), and
     * its error against the model at each measured shape that timed it (rows are sorted
     * by shape; the first timing of it there is its fastest), summed in the rows' order. */
    for (int i = 0; i < nrows; i++) {
        const int c = index_find(&ti, prows[i].r.config);
        if (c < 0) continue;
        if (!prows[i].r.ok) pool[c].failed = 1;
        if (isnan(res[i])) continue;
        if (i > 0 && same_shape(&prows[i - 1].r, &prows[i].r) &&
            strcmp(prows[i - 1].r.config, prows[i].r.config) == 0 && !isnan(res[i - 1]))
            continue; /* a second timing of it on this shape */
        /* A block tile that covers all of M (or N) at the measured shape and not here, or
         * here and not there, meets the operands differently (one tile row reads the other
         * operand once; two read it twice): its error there says nothing of it here. A 16 x
         * 128 tf32 tile timed fast on 16 x 4096 x 4096 NT was carried to 32 x 4096 x 14336
         * and ran 1.6 times slower than the 32-row tile the model ranked first (H100). */
        if ((prows[i].c.bm >= prows[i].r.m) != (prows[i].c.bm >= key->m) ||
            (prows[i].c.bn >= prows[i].r.n) != (prows[i].c.bn >= key->n))
            continue;
        const double wi = weight(key, &prows[i].r);
        pool[c].err += wi * res[i];
        pool[c].weight += wi;
    }
    int chosen = -1, had = -1;
    double chosen_score = 0, had_score = 0;
    int chosen_measured = 0, had_measured = 0;
    for (int c = 0; c < np; c++) {
        if (pool[c].failed) {
            info->excluded++;
            continue;
        }
        info->pool++;
        const double e = pool[c].err, w = pool[c].weight;
        if (w > 0) info->measured++;
        /* The model's estimate for this shape, moved by what c's measurements say the
         * model gets wrong about it; the doubt about an unmeasured configuration fades as
         * measurements of it gather. */
        double model = pool[c].est_us > 0 && est_min > 0 ? log(pool[c].est_us / est_min) : 0;
        double s = model + (e + GT_SELECT_W0 * GT_SELECT_DOUBT) / (w + GT_SELECT_W0);
        if (w > 0) sc[nsc++] = (scored){s, c, pool[c].text};
        if (chosen < 0 || s < chosen_score ||
            (s == chosen_score && strcmp(pool[c].text, pool[chosen].text) < 0)) {
            chosen = c, chosen_score = s, chosen_measured = w > 0;
        }
        if (nhave > 0 && bsearch(&pool[c].cfg, held, (size_t)nhave, sizeof *held, by_bytes) &&
            (had < 0 || s < had_score || (s == had_score && strcmp(pool[c].text, pool[had].text) < 0))) {
            had = c, had_score = s, had_measured = w > 0;
        }
    }
    if (had >= 0 && (prebuilt || had_score <= chosen_score + GT_SELECT_HAVE_SLACK)) {
        chosen = had, chosen_score = had_score, chosen_measured = had_measured;
        info->in_have = 1;
    }
    if (chosen >= 0) {
        *out = pool[chosen].cfg;
        info->score = chosen_score;
        info->from_model = !chosen_measured;
        ret = 0;
    }
    if (ranked) {
        /* At most two of one group (kcfg.h's gt_kcfg_same_group), so that the seeds reach
         * several tiles: the model's order already times a group's variants. Four seeds
         * of one 128 x 128 tile in 4 splits took the first compiles of f32 1568 x 256 x
         * 2304 NN, whose best is a 128 x 64 tile (H100; bench/README.md, issue 27). */
        qsort(sc, (size_t)nsc, sizeof *sc, scored_order);
        for (int i = 0; i < nsc && *nranked < max_ranked; i++) {
            const gt_kcfg *c = &pool[sc[i].at].cfg;
            int same = 0;
            for (int j = 0; j < *nranked; j++) same += gt_kcfg_same_group(&ranked[j], c);
            if (same < 2) ranked[(*nranked)++] = *c;
        }
    }
done:
    free(cands), free(pool), free(res), free(sc);
    free(held), free(prows), free(ti.at);
    return ret;
}

int gt_select_have(const gt_key *key, const gt_klimits *lim, int flags, const gt_modelfix *fix,
                   const gt_select_row *in, int nrows, const gt_kcfg *have, int nhave,
                   gt_kcfg *out, gt_select_info *info) {
    return select_core(key, lim, flags, fix, in, nrows, have, nhave, out, info, NULL, 0, NULL);
}

int gt_select_rank(const gt_key *key, const gt_klimits *lim, int flags, const gt_modelfix *fix,
                   const gt_select_row *rows, int nrows, gt_kcfg *out, int max) {
    if (nrows <= 0 || max <= 0) return 0;
    gt_kcfg chosen;
    int n = 0;
    if (select_core(key, lim, flags, fix, rows, nrows, NULL, 0, &chosen, NULL, out, max, &n) != 0) return 0;
    return n;
}
