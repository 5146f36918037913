/*
 * grade.h: a GEMM's output graded element by element against a float64 reference computed
 * on the CPU, independently of the library (the GPU tests, through tests/prob.h; the bounds
 * and why they hold are stated there, at prob_bound).
 *
 * A gr_ref holds, for one problem, every output's reference value and its scale
 *   ref(i, j) = alpha * sum_l op(A)(i, l) op(B)(l, j) + beta * C0(i, j)
 *   G(i, j)   = |alpha| * sum_l |op(A)(i, l)| |op(B)(l, j)| + |beta| |C0(i, j)|
 * (beta == 0: no C0 term at all, so NaN in C0 reaches neither), each sum taken in l order
 * in double. It is computed once per problem (op(A) and op(B) converted once to double
 * arrays with l contiguous, columns on several threads for large problems) and serves
 * every output graded against it. gr_grade checks one output C of the problem: every
 * element finite and within its bound
 *   |C - ref| <= rel |ref| + (sum sqrt(K) + abs) G + 1e-30
 * and C's padding rows (m to ldc - 1) equal to C0's bit for bit. Host arrays hold elements
 * of a storage type (key.h's GT_ST_*) exactly as the device does; gr_get and gr_put
 * convert one element to and from double (round to nearest even).
 */
#ifndef GT_TEST_GRADE_H
#define GT_TEST_GRADE_H

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "key.h"

/* ===== elements of a storage type ===== */

static size_t gr_size(int st) { return st == GT_ST_F64 ? 8 : st == GT_ST_F32 ? 4 : 2; }

static double gr_f16_value(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

/* v rounded to nearest even in f16, subnormals and overflow to infinity included. */
static uint16_t gr_f16_bits(double v) {
    unsigned sign = signbit(v) ? 0x8000u : 0u;
    double a = fabs(v);
    if (isnan(v)) return 0x7e00;
    if (a >= 65520.0) return (uint16_t)(sign | 0x7c00u); /* halfway to 2^16 and above */
    if (a < 0x1p-14) /* subnormal: multiples of 2^-24 (1024 of them is the least normal) */
        return (uint16_t)(sign | (unsigned)nearbyint(a * 0x1p24));
    int e;
    double f = frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    unsigned mant = (unsigned)nearbyint(f * 2048.0); /* 11 significant bits */
    if (mant == 2048) mant = 1024, e++;
    return (uint16_t)(sign | (unsigned)(e + 14) << 10 | (mant - 1024));
}

static double gr_bf16_value(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* v rounded to float (nearest), then to bf16 (nearest even). */
static uint16_t gr_bf16_bits(double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f)) return (uint16_t)(u >> 16 | 0x40);
    u += 0x7fffu + (u >> 16 & 1u);
    return (uint16_t)(u >> 16);
}

static double gr_get(int st, const void *a, size_t i) {
    switch (st) {
    case GT_ST_F32: return ((const float *)a)[i];
    case GT_ST_F64: return ((const double *)a)[i];
    case GT_ST_F16: return gr_f16_value(((const uint16_t *)a)[i]);
    default: return gr_bf16_value(((const uint16_t *)a)[i]);
    }
}

static void gr_put(int st, void *a, size_t i, double v) {
    switch (st) {
    case GT_ST_F32: ((float *)a)[i] = (float)v; break;
    case GT_ST_F64: ((double *)a)[i] = v; break;
    case GT_ST_F16: ((uint16_t *)a)[i] = gr_f16_bits(v); break;
    default: ((uint16_t *)a)[i] = gr_bf16_bits(v); break;
    }
}

static void *gr_alloc(size_t count, size_t size) {
    void *p = malloc((count ? count : 1) * size);
    if (!p) {
        fprintf(stderr, "grade.h: out of memory (%zu x %zu bytes)\n", count, size);
        abort();
    }
    return p;
}

/* ===== the reference ===== */

/* One problem as the host holds it: A, B (storage type st_ab) and C0 (st_c), column-major
 * with their leading dimensions, op 0 = N, 1 = T. */
typedef struct gr_problem {
    int opa, opb;
    long long m, n, k, lda, ldb, ldc;
    double alpha, beta;
    int st_ab, st_c;
    const void *A, *B, *C0;
} gr_problem;

typedef struct gr_ref {
    long long m, n, k;
    double *ref, *g; /* m x n each, column-major, leading dimension m */
} gr_ref;

typedef struct {
    const gr_problem *p;
    const double *at, *bt; /* op(A) as m rows of k, op(B) as n columns of k */
    gr_ref *r;
    long long j0, j1;      /* the columns this part computes */
} gr_part;

static void gr_out(const gr_part *w, long long i, long long j, double s, double g) {
    const gr_problem *p = w->p;
    double c0 = p->beta == 0.0 ? 0.0 : gr_get(p->st_c, p->C0, (size_t)(i + j * p->ldc));
    size_t o = (size_t)(i + j * p->m);
    w->r->ref[o] = p->alpha * s + (p->beta == 0.0 ? 0.0 : p->beta * c0);
    w->r->g[o] = fabs(p->alpha) * g + (p->beta == 0.0 ? 0.0 : fabs(p->beta) * fabs(c0));
}

/* Columns j0 to j1 - 1: four rows at a time, so that eight sums run side by side; each
 * output's own sums still add l = 0, 1, ..., K - 1 in order. */
static void *gr_part_run(void *arg) {
    const gr_part *w = arg;
    const long long m = w->p->m, k = w->p->k;
    for (long long j = w->j0; j < w->j1; j++) {
        const double *b = w->bt + (size_t)(j * k);
        long long i = 0;
        for (; i + 4 <= m; i += 4) {
            const double *a0 = w->at + (size_t)(i * k), *a1 = a0 + k, *a2 = a1 + k, *a3 = a2 + k;
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0, g0 = 0, g1 = 0, g2 = 0, g3 = 0;
            for (long long l = 0; l < k; l++) {
                const double bl = b[l], ab = fabs(bl);
                s0 += a0[l] * bl, g0 += fabs(a0[l]) * ab;
                s1 += a1[l] * bl, g1 += fabs(a1[l]) * ab;
                s2 += a2[l] * bl, g2 += fabs(a2[l]) * ab;
                s3 += a3[l] * bl, g3 += fabs(a3[l]) * ab;
            }
            gr_out(w, i, j, s0, g0), gr_out(w, i + 1, j, s1, g1);
            gr_out(w, i + 2, j, s2, g2), gr_out(w, i + 3, j, s3, g3);
        }
        for (; i < m; i++) {
            const double *a = w->at + (size_t)(i * k);
            double s = 0, g = 0;
            for (long long l = 0; l < k; l++) s += a[l] * b[l], g += fabs(a[l]) * fabs(b[l]);
            gr_out(w, i, j, s, g);
        }
    }
    return NULL;
}

/* r = the reference of p (gr_ref_free frees it). */
static void gr_ref_compute(gr_ref *r, const gr_problem *p) {
    const long long m = p->m, n = p->n, k = p->k;
    r->m = m, r->n = n, r->k = k;
    r->ref = gr_alloc((size_t)(m * n), sizeof(double));
    r->g = gr_alloc((size_t)(m * n), sizeof(double));
    double *at = gr_alloc((size_t)(m * k), sizeof(double));
    double *bt = gr_alloc((size_t)(n * k), sizeof(double));
    /* Read in storage order (the inner loop runs down a stored column). */
    if (p->opa)
        for (long long i = 0; i < m; i++)
            for (long long l = 0; l < k; l++)
                at[i * k + l] = gr_get(p->st_ab, p->A, (size_t)(l + i * p->lda));
    else
        for (long long l = 0; l < k; l++)
            for (long long i = 0; i < m; i++)
                at[i * k + l] = gr_get(p->st_ab, p->A, (size_t)(i + l * p->lda));
    if (p->opb)
        for (long long l = 0; l < k; l++)
            for (long long j = 0; j < n; j++)
                bt[j * k + l] = gr_get(p->st_ab, p->B, (size_t)(j + l * p->ldb));
    else
        for (long long j = 0; j < n; j++)
            for (long long l = 0; l < k; l++)
                bt[j * k + l] = gr_get(p->st_ab, p->B, (size_t)(l + j * p->ldb));
    /* Threads for problems of more than 2^22 multiply-adds, up to 16, each a run of
     * columns. */
    enum { GR_MAX_THREADS = 16 };
    long long nt = 1;
    if ((double)m * (double)n * (double)k > 4194304.0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        nt = cpus > 1 ? cpus : 1;
        if (nt > GR_MAX_THREADS) nt = GR_MAX_THREADS;
        if (nt > n) nt = n > 0 ? n : 1;
    }
    gr_part parts[GR_MAX_THREADS];
    pthread_t tid[GR_MAX_THREADS];
    int started[GR_MAX_THREADS] = {0};
    for (long long t = 0; t < nt; t++) {
        parts[t] = (gr_part){p, at, bt, r, n * t / nt, n * (t + 1) / nt};
        /* Part 0 runs on this thread, and so does any part whose thread does not start. */
        if (t > 0) started[t] = pthread_create(&tid[t], NULL, gr_part_run, &parts[t]) == 0;
    }
    gr_part_run(&parts[0]);
    for (long long t = 1; t < nt; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else gr_part_run(&parts[t]);
    }
    free(at), free(bt);
}

static void gr_ref_free(gr_ref *r) {
    free(r->ref), free(r->g);
    r->ref = r->g = NULL;
}

/* ===== grading ===== */

/* An output's bound: rel |ref| + (sum sqrt(K) + abs) G + 1e-30. */
typedef struct gr_bound {
    double rel, sum, abs;
} gr_bound;

typedef struct gr_result {
    double ratio;          /* worst |C - ref| / bound over the m x n outputs; +inf when an
                              output or its reference is not finite, or padding changed */
    long long i, j;        /* the worst output */
    double val, ref, bound;
    long long nonfinite;   /* outputs (or references) not finite; the first at (fi, fj) */
    long long fi, fj;
    double fval;
    long long padding;     /* padding elements (rows m to ldc - 1) changed; the first at
                              (pi, pj) */
    long long pi, pj;
    char text[320];        /* all of it in words, for a failure message */
} gr_result;

static double gr_bound_of(const gr_bound *b, long long k, double ref, double g) {
    return b->rel * fabs(ref) + (b->sum * sqrt((double)(k > 0 ? k : 0)) + b->abs) * g + 1e-30;
}

/* Grades C (storage type st_c, leading dimension ldc; C0 as the problem had it before the
 * run) against r with bound b; returns res->ratio, which is <= 1 when C is right. */
static double gr_grade(const gr_ref *r, const gr_bound *b, int st_c, const void *C,
                       const void *C0, long long ldc, gr_result *res) {
    memset(res, 0, sizeof *res);
    res->i = res->j = res->fi = res->fj = res->pi = res->pj = -1;
    const size_t es = gr_size(st_c);
    for (long long j = 0; j < r->n; j++) {
        for (long long i = 0; i < r->m; i++) {
            size_t o = (size_t)(i + j * r->m);
            double v = gr_get(st_c, C, (size_t)(i + j * ldc)), ref = r->ref[o];
            if (!isfinite(v) || !isfinite(ref)) {
                if (!res->nonfinite++) res->fi = i, res->fj = j, res->fval = v;
                continue;
            }
            double bound = gr_bound_of(b, r->k, ref, r->g[o]), q = fabs(v - ref) / bound;
            if (res->i < 0 || q > res->ratio)
                res->ratio = q, res->i = i, res->j = j, res->val = v, res->ref = ref,
                res->bound = bound;
        }
        for (long long i = r->m; i < ldc; i++) {
            size_t off = (size_t)(i + j * ldc) * es;
            if (memcmp((const char *)C + off, (const char *)C0 + off, es) != 0 && !res->padding++)
                res->pi = i, res->pj = j;
        }
    }
    size_t n = 0;
    char *t = res->text;
    const size_t size = sizeof res->text;
    if (res->i >= 0)
        n += (size_t)snprintf(t, size, "worst C(%lld, %lld) = %.9g, reference %.9g, bound %.3g (|err| / bound %.3g)",
                              res->i, res->j, res->val, res->ref, res->bound, res->ratio);
    else
        n += (size_t)snprintf(t, size, "no output");
    if (res->nonfinite && n < size)
        n += (size_t)snprintf(t + n, size - n, "; %lld not finite (output or reference), the first at C(%lld, %lld) = %g",
                              res->nonfinite, res->fi, res->fj, res->fval);
    if (res->padding && n < size)
        snprintf(t + n, size - n, "; %lld padding elements changed, the first C(%lld, %lld)",
                 res->padding, res->pi, res->pj);
    if (res->nonfinite || res->padding) res->ratio = INFINITY;
    return res->ratio;
}

#endif
