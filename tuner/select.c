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

static int failed(const gt_select_row *rows, int n, const char *text) {
    for (int i = 0; i < n; i++)
        if (!rows[i].ok && strcmp(rows[i].config, text) == 0) return 1;
    return 0;
}

static int in_pool(const pooled *p, int n, const char *text) {
    for (int i = 0; i < n; i++)
        if (strcmp(p[i].text, text) == 0) return 1;
    return 0;
}

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
    gt_select_row *rows = malloc(sizeof *rows * (size_t)(nrows > 0 ? nrows : 1));
    gt_cand *cands = NULL;
    gt_space_counts counts;
    pooled *pool = malloc(sizeof *pool * (size_t)(GT_SELECT_POOL + nhave + nrows + 1));
    double *best = malloc(sizeof *best * (size_t)(nrows > 0 ? nrows : 1));
    scored *sc = malloc(sizeof *sc * (size_t)(GT_SELECT_POOL + nhave + nrows + 1));
    int ret = -1, nsc = 0;
    if (nranked) *nranked = 0;
    if (!rows || !pool || !best || !sc) goto done;
    if (nrows > 0) memcpy(rows, in, sizeof *rows * (size_t)nrows);
    /* A generic kernel's timing (tuning times the model's first as one) speaks for its
     * configuration: the selector's choices run as generic kernels anyway (src/dispatch.c). */
    for (int i = 0; i < nrows; i++) {
        gt_kcfg c;
        char why[160];
        if (gt_kcfg_parse(rows[i].config, &c, why, sizeof why) == 0 && c.generic) {
            c.generic = 0;
            gt_kcfg_format(&c, rows[i].config, sizeof rows[i].config);
        }
    }
    qsort(rows, (size_t)nrows, sizeof *rows, row_order);
    /* best[i]: the fastest ok time of row i's shape (0 when none ran there). */
    for (int i = 0; i < nrows;) {
        int j = i;
        double b = 0;
        for (; j < nrows && same_shape(&rows[i], &rows[j]); j++)
            if (rows[j].ok && rows[j].time_us > 0 && (b == 0 || rows[j].time_us < b)) b = rows[j].time_us;
        for (; i < j; i++) best[i] = b;
    }
    /* The pool: what the node holds, every measured configuration, legal here; and the
     * model's best unless some held one is legal here. With a held set the space is not
     * searched (a first call's few milliseconds): the set came from the selector over a
     * grid of shapes (src/prebuild.c). */
    int np = 0;
    for (int i = 0; i < nhave; i++) {
        /* Held but pruned here (the space would not rank it: hopeless for this shape by
         * the tuner's own rules) is left out, as the space would leave it. */
        pool[np].cfg = have[i];
        gt_kcfg_format(&have[i], pool[np].text, sizeof pool[np].text);
        if (in_pool(pool, np, pool[np].text) ||
            gt_kcfg_check(&have[i], key, lim, GT_KC_LEGAL | GT_KC_PRUNE))
            continue;
        if ((flags & GT_SPACE_SAME_ORDER) && !gt_kcfg_same_order(&have[i], key)) continue;
        np++;
    }
    int held_legal = np;
    for (int i = 0; i < nrows; i++) {
        if (!rows[i].ok || in_pool(pool, np, rows[i].config)) continue;
        char why[256];
        if (gt_kcfg_validate(rows[i].config, key, lim, &pool[np].cfg, why, sizeof why) != 0) continue;
        if ((flags & GT_SPACE_SAME_ORDER) && !gt_kcfg_same_order(&pool[np].cfg, key)) continue;
        snprintf(pool[np].text, sizeof pool[np].text, "%s", rows[i].config);
        np++;
    }
    if (held_legal == 0) {
        int ncand = gt_space_build_fixed(key, lim, GT_SELECT_POOL, flags, fix, &cands, &counts);
        if (ncand < 0) goto done;
        for (int i = 0; i < ncand; i++) {
            char text[GT_SELECT_CONFIG_MAX];
            gt_kcfg_format(&cands[i].cfg, text, sizeof text);
            if (in_pool(pool, np, text)) continue;
            pool[np].cfg = cands[i].cfg;
            snprintf(pool[np].text, sizeof pool[np].text, "%s", text);
            np++;
        }
    }
    double est_min = 0;
    for (int i = 0; i < np; i++) {
        pool[i].est_us = gt_space_estimate_us(&pool[i].cfg, key, lim) *
                         gt_modelfix_factor(fix, &pool[i].cfg);
        if (pool[i].est_us > 0 && (est_min == 0 || pool[i].est_us < est_min)) est_min = pool[i].est_us;
    }
    int chosen = -1, had = -1;
    double chosen_score = 0, had_score = 0;
    int chosen_measured = 0, had_measured = 0;
    for (int c = 0; c < np; c++) {
        if (failed(rows, nrows, pool[c].text)) {
            info->excluded++;
            continue;
        }
        info->pool++;
        /* Evidence: each measured shape's fastest time of c (rows are sorted by shape). */
        double e = 0, w = 0;
        for (int i = 0; i < nrows; i++) {
            if (!rows[i].ok || best[i] <= 0 || rows[i].time_us <= 0 ||
                strcmp(rows[i].config, pool[c].text) != 0)
                continue;
            if (i > 0 && same_shape(&rows[i - 1], &rows[i]) &&
                strcmp(rows[i - 1].config, rows[i].config) == 0 && rows[i - 1].ok)
                continue; /* a second timing of c on this shape: the first is the fastest */
            double wi = weight(key, &rows[i]);
            e += wi * log(rows[i].time_us / best[i]);
            w += wi;
        }
        if (w > 0) info->measured++;
        /* The model's word fades as measurements of c gather (lambda = W0 / (w + W0)). */
        double model = pool[c].est_us > 0 && est_min > 0 ? log(pool[c].est_us / est_min) : 0;
        double lambda = GT_SELECT_W0 / (w + GT_SELECT_W0);
        double s = (e + GT_SELECT_W0 * (GT_SELECT_DOUBT + lambda * model)) / (w + GT_SELECT_W0);
        if (w > 0) sc[nsc++] = (scored){s, c, pool[c].text};
        if (chosen < 0 || s < chosen_score ||
            (s == chosen_score && strcmp(pool[c].text, pool[chosen].text) < 0)) {
            chosen = c, chosen_score = s, chosen_measured = w > 0;
        }
        if (gt_kcfg_listed(have, nhave, &pool[c].cfg) &&
            (had < 0 || s < had_score || (s == had_score && strcmp(pool[c].text, pool[had].text) < 0))) {
            had = c, had_score = s, had_measured = w > 0;
        }
    }
    if (had >= 0 && had_score <= chosen_score + GT_SELECT_HAVE_SLACK) {
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
        qsort(sc, (size_t)nsc, sizeof *sc, scored_order);
        for (int i = 0; i < nsc && i < max_ranked; i++) ranked[(*nranked)++] = pool[sc[i].at].cfg;
    }
done:
    free(rows), free(cands), free(pool), free(best), free(sc);
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
