/*
 * modelfix.c: the cost model corrected by what it mispredicted (modelfix.h).
 */
#include "modelfix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* log2 of a ratio of positive integers, rounded: the aspect and area buckets. */
static int log2_round(double x) { return (int)lround(log2(x)); }

static unsigned feature(unsigned kind, int fam, int value) {
    return kind << 24 | (unsigned)(fam & 0xff) << 16 | (unsigned)((value + 32768) & 0xffff);
}

int gt_modelfix_features(const gt_kcfg *c, unsigned ids[GT_FIX_PER_CONFIG]) {
    const int f = c->fam, wm = c->wm > 0 ? c->wm : 1, wn = c->wn > 0 ? c->wn : 1;
    const int bm = c->bm > 0 ? c->bm : 1, bn = c->bn > 0 ? c->bn : 1;
    int n = 0;
    ids[n++] = feature(0, f, 0);                                /* the family */
    ids[n++] = feature(1, f, c->tm * 256 + c->tn);              /* thread tile */
    ids[n++] = feature(2, f, log2_round((double)wm / wn));      /* warp aspect */
    ids[n++] = feature(3, f, log2_round((double)bm / bn));      /* block aspect */
    ids[n++] = feature(4, f, log2_round((double)bm * bn));      /* block area */
    ids[n++] = feature(5, f, c->vec);
    ids[n++] = feature(6, f, c->stages);
    ids[n++] = feature(7, f, c->bk);
    ids[n++] = feature(8, f, c->split > 1);
    ids[n++] = feature(9, f, c->raster);
    return n;
}

/* The first index of the ascending ids[0..n) whose id is not below id (n: none). */
static int lower_bound(const unsigned *ids, int n, unsigned id) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The index of id in the ascending vocabulary, or -1. */
static int find(const gt_modelfix *fix, unsigned id) {
    int at = lower_bound(fix->id, fix->nfeat, id);
    return at < fix->nfeat && fix->id[at] == id ? at : -1;
}

/* Adds id to the ascending, distinct vocabulary, which keeps the GT_FIX_MAX_FEATURES
 * smallest ids (past the cap a feature weighs 0). */
static void add_id(gt_modelfix *fix, unsigned id) {
    int n = fix->nfeat, at = lower_bound(fix->id, n, id);
    if (at < n && fix->id[at] == id) return;
    if (n == GT_FIX_MAX_FEATURES) {
        if (at == n) return;
        n--; /* the largest makes room */
    }
    memmove(&fix->id[at + 1], &fix->id[at], sizeof *fix->id * (size_t)(n - at));
    fix->id[at] = id;
    fix->nfeat = n + 1;
}

/* Rows by key (shape and class), then configuration (its parameters in table order), then
 * time: a total order, so that the fit's sums run the same way whatever order the rows
 * came in. */
#define CMP(x, y) \
    if ((x) != (y)) return (x) < (y) ? -1 : 1
static int row_order(const void *pa, const void *pb) {
    const gt_fix_row *a = *(const gt_fix_row *const *)pa, *b = *(const gt_fix_row *const *)pb;
    const gt_key *x = &a->key, *y = &b->key;
    CMP(x->dtype, y->dtype);
    CMP(x->opa, y->opa);
    CMP(x->opb, y->opb);
    CMP(x->align, y->align);
    CMP(x->beta0, y->beta0);
    CMP(x->m, y->m);
    CMP(x->n, y->n);
    CMP(x->k, y->k);
    CMP(x->cc_major, y->cc_major);
    CMP(x->cc_minor, y->cc_minor);
    CMP(x->sm_count, y->sm_count);
    int c = strcmp(x->device, y->device);
    if (c) return c;
    for (int i = 0; i < gt_nkparams; i++) CMP(gt_kcfg_get(&a->cfg, i), gt_kcfg_get(&b->cfg, i));
    CMP(a->time_us, b->time_us);
    return 0;
}
#undef CMP

/* Solves (A + ridge I) w = b for the n x n symmetric A by Cholesky, in place; -1 when it
 * is not positive definite (it always is with ridge > 0, up to rounding). */
static int solve(double *A, double *b, int n, double ridge) {
    for (int i = 0; i < n; i++) A[i * n + i] += ridge;
    for (int j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (int k = 0; k < j; k++) d -= A[j * n + k] * A[j * n + k];
        if (!(d > 0)) return -1;
        d = sqrt(d);
        A[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (int k = 0; k < j; k++) s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s / d;
        }
    }
    for (int i = 0; i < n; i++) { /* L y = b */
        double s = b[i];
        for (int k = 0; k < i; k++) s -= A[i * n + k] * b[k];
        b[i] = s / A[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) { /* L^T w = y */
        double s = b[i];
        for (int k = i + 1; k < n; k++) s -= A[k * n + i] * b[k];
        b[i] = s / A[i * n + i];
    }
    return 0;
}

int gt_modelfix_fit(const gt_fix_row *in, int nrows, gt_modelfix *fix) {
    memset(fix, 0, sizeof *fix);
    if (nrows <= 0) return 0;
    /* The rows are sorted by pointer (a row is a key and a configuration, some 300
     * bytes), and each used row's features are found once. */
    const gt_fix_row **rows = malloc(sizeof *rows * (size_t)nrows);
    double *r = malloc(sizeof *r * (size_t)nrows);
    unsigned *ids = malloc(sizeof *ids * (size_t)nrows * GT_FIX_PER_CONFIG);
    int *nids = malloc(sizeof *nids * (size_t)nrows);
    double *A = NULL, *b = NULL;
    int ret = -1;
    if (!rows || !r || !ids || !nids) goto done;
    for (int i = 0; i < nrows; i++) rows[i] = &in[i];
    qsort(rows, (size_t)nrows, sizeof *rows, row_order);

    /* Residuals, centred per shape; rows whose time or estimate is not positive are left
     * out (r = NAN). */
    int shapes = 0, used = 0;
    for (int i = 0; i < nrows;) {
        int j = i, cnt = 0;
        double sum = 0;
        for (; j < nrows && gt_key_equal(&rows[i]->key, &rows[j]->key); j++) {
            r[j] = NAN;
            if (!(rows[j]->time_us > 0) || !(rows[j]->est_us > 0)) continue;
            r[j] = log(rows[j]->time_us / rows[j]->est_us);
            sum += r[j], cnt++;
        }
        if (cnt >= 2) {
            shapes++;
            for (int q = i; q < j; q++)
                if (!isnan(r[q])) r[q] -= sum / cnt, used++;
        } else {
            for (int q = i; q < j; q++) r[q] = NAN; /* one timing tells no difference */
        }
        i = j;
    }
    if (shapes < GT_FIX_MIN_SHAPES) {
        ret = 0;
        goto done;
    }

    /* The vocabulary: every feature of a used row, ascending, distinct. */
    for (int i = 0; i < nrows; i++) {
        unsigned *f = &ids[i * GT_FIX_PER_CONFIG];
        nids[i] = isnan(r[i]) ? 0 : gt_modelfix_features(&rows[i]->cfg, f);
        for (int q = 0; q < nids[i]; q++) add_id(fix, f[q]);
    }
    const int nf = fix->nfeat;

    /* The normal equations of the ridge regression: A = X^T X, b = X^T r. */
    A = calloc((size_t)nf * (size_t)nf, sizeof *A);
    b = calloc((size_t)nf, sizeof *b);
    if (!A || !b) {
        fix->nfeat = 0;
        goto done;
    }
    for (int i = 0; i < nrows; i++) {
        if (isnan(r[i])) continue;
        const unsigned *f = &ids[i * GT_FIX_PER_CONFIG];
        int k = 0, at[GT_FIX_PER_CONFIG];
        for (int q = 0; q < nids[i]; q++)
            if ((at[k] = find(fix, f[q])) >= 0) k++;
        for (int p = 0; p < k; p++) {
            b[at[p]] += r[i];
            for (int q = 0; q < k; q++) A[at[p] * nf + at[q]] += 1.0;
        }
    }
    if (solve(A, b, nf, GT_FIX_RIDGE) != 0) {
        fix->nfeat = 0;
        ret = 0;
        goto done;
    }
    memcpy(fix->w, b, sizeof *b * (size_t)nf);
    fix->shapes = shapes;
    fix->rows = used;
    ret = 0;
done:
    free(rows), free(r), free(ids), free(nids), free(A), free(b);
    return ret;
}

double gt_modelfix_factor(const gt_modelfix *fix, const gt_kcfg *c) {
    if (!fix || fix->nfeat <= 0) return 1.0;
    unsigned f[GT_FIX_PER_CONFIG];
    int m = gt_modelfix_features(c, f);
    double s = 0;
    for (int q = 0; q < m; q++) {
        int at = find(fix, f[q]);
        if (at >= 0) s += fix->w[at];
    }
    if (s > GT_FIX_MAX_LOG) s = GT_FIX_MAX_LOG;
    if (s < -GT_FIX_MAX_LOG) s = -GT_FIX_MAX_LOG;
    return exp(s);
}
