/*
 * verify.c: reference check of a result (verify.h). Owns only the short-lived device
 * buffers of one check.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verify.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "log.h"
#include "measure.h"

/* Problems up to this many outputs are checked whole. */
#define FULL_OUTPUTS (512 * 512)
/* Interior rows and columns sampled (each) beside the edge bands. */
#define SAMPLE 256
/* Float64 multiply-adds of the reference, and outputs, beyond which the bands are
 * sampled. */
#define WORK_MAX (1ull << 36)
#define OUTPUTS_MAX (1ll << 26)
/* Outputs whose reference is held at once. */
#define CHUNK (1ll << 22)

void gt_verify_bounds_of(int dtype, gt_verify_bounds *b) {
    const double u24 = ldexp(1.0, -24), u53 = ldexp(1.0, -53);
    memset(b, 0, sizeof *b);
    b->u_acc = dtype == GT_DT_F64 ? u53 : u24;
    b->u_out = dtype == GT_DT_F64                           ? u53
               : dtype == GT_DT_F16                         ? ldexp(1.0, -11)
               : dtype == GT_DT_BF16                        ? ldexp(1.0, -8)
                                                            : u24;
    b->u_in = dtype == GT_DT_TF32 ? ldexp(1.0, -10) : dtype == GT_DT_F32_3XTF32 ? ldexp(1.0, -20) : 0.0;
    b->lambda = dtype == GT_DT_F64 ? 16.0 : 8.0;
    b->c_frob = dtype == GT_DT_F64 ? 8.0 : dtype == GT_DT_F32 || dtype == GT_DT_F32_3XTF32 ? 4.0 : 16.0;
    /* The smallest normal of C's type. */
    b->floor_abs = dtype == GT_DT_F64 ? ldexp(1.0, -1022)
                   : dtype == GT_DT_F16 ? ldexp(1.0, -14)
                                        : ldexp(1.0, -126);
}

double gt_verify_tolerance(const gt_key *key) {
    gt_verify_bounds b;
    gt_verify_bounds_of(key->dtype, &b);
    return 1.5 * b.u_in + b.u_out + b.c_frob * sqrt((double)(key->k > 0 ? key->k : 1)) * b.u_acc;
}

void gt_verify_describe(const gt_verify_result *r, char *out, size_t size) {
    int n = snprintf(out, size, "relative error %.3g (tolerance %.3g), worst output %.3g of its bound",
                     r->rel_err, r->tol, r->worst);
    if (n < 0 || (size_t)n >= size) return;
    if (r->over || r->nonfinite)
        n += snprintf(out + n, size - (size_t)n, ", %lld beyond it, %lld non-finite (first at (%lld, %lld))",
                      r->over, r->nonfinite, r->first_row, r->first_col);
    if (n < 0 || (size_t)n >= size) return;
    if (r->pad_changed)
        n += snprintf(out + n, size - (size_t)n, ", %lld padding elements changed", r->pad_changed);
    if (n < 0 || (size_t)n >= size) return;
    snprintf(out + n, size - (size_t)n, "; %lld outputs checked", r->checked);
}

static unsigned long long next_rand(unsigned long long *s) {
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The rows (or columns) of one dimension of size n, in three lists: the edge band (the
 * first and last GT_VERIFY_EDGE, all of n when that covers it), the interior (the rest),
 * and up to `sample` distinct random interior indices, ascending. */
typedef struct {
    int *edge, *inner, *sample;
    int nedge, ninner, nsample;
} dim_lists;

static void dim_free(dim_lists *d) {
    free(d->edge), free(d->inner), free(d->sample);
    memset(d, 0, sizeof *d);
}

/* Up to `want` distinct indices of from[0..n), in order: a random subset. */
static int *subset(const int *from, int n, int want, int *count, unsigned long long *seed) {
    int c = want < n ? want : n;
    int *out = malloc(sizeof *out * (size_t)(c > 0 ? c : 1));
    if (!out) return NULL;
    /* Selection sampling (Knuth's algorithm S): each index kept with the right odds. */
    int got = 0;
    for (int i = 0; i < n && got < c; i++)
        if (next_rand(seed) % (unsigned long long)(n - i) < (unsigned long long)(c - got))
            out[got++] = from[i];
    *count = got;
    return out;
}

static int dim_make(long long n, int sample, unsigned long long seed, dim_lists *d) {
    memset(d, 0, sizeof *d);
    const long long e = GT_VERIFY_EDGE;
    d->edge = malloc(sizeof(int) * (size_t)(n < 2 * e ? n : 2 * e));
    d->inner = malloc(sizeof(int) * (size_t)(n > 2 * e ? n - 2 * e : 1));
    if (!d->edge || !d->inner) return -1;
    for (long long i = 0; i < n; i++) {
        if (i < e || i >= n - e) d->edge[d->nedge++] = (int)i;
        else d->inner[d->ninner++] = (int)i;
    }
    d->sample = subset(d->inner, d->ninner, sample, &d->nsample, &seed);
    return d->sample ? 0 : -1;
}

/* One patch of outputs to check: rows[0..nr) x cols[0..nc). */
typedef struct {
    const int *rows, *cols;
    int nr, nc;
} patch;

typedef struct {
    double d2, r2, nonfinite, over;
    unsigned long long worst, first, pad, spare;
} acc_t; /* kernel_src/aux.cu's acc_t */

gt_status gt_verify(gt_devctx *dc, const gt_key *key, const gt_gemm *g, const void *C0p,
                    int64_t ldc0p, gt_verify_result *res) {
    assert(key->dtype >= 0 && key->dtype < GT_NDTYPES && g->dtype == key->dtype);
    double t0 = gt_measure_now_s();
    /* The kernels take addresses as CUdeviceptr and sizes as long long. */
    CUstream stream = (CUstream)g->stream;
    CUdeviceptr A = GT_DPTR(g->A), B = GT_DPTR(g->B), C = GT_DPTR(g->C), C0 = GT_DPTR(C0p);
    long long lda = g->lda, ldb = g->ldb, ldc = g->ldc, ldc0 = ldc0p;
    double alpha = g->alpha, beta = g->beta;
    memset(res, 0, sizeof *res);
    res->first_row = res->first_col = -1;
    res->tol = gt_verify_tolerance(key);
    gt_verify_bounds bd;
    gt_verify_bounds_of(key->dtype, &bd);
    double kk = (double)(key->k > 0 ? key->k : 1);
    double coef = 2 * bd.u_in + (bd.lambda * sqrt(kk) + 2) * bd.u_acc, u_out = bd.u_out,
           floor_abs = bd.floor_abs;
    if (!key->beta0 && !C0)
        return gt_fail(GT_INVALID_VALUE, "verification of beta != 0 needs C as it was before");
    gt_status s = gt_devctx_aux(dc, key->dtype);
    if (s != GT_SUCCESS) return s;
    const int out = gt_dtype_out(key->dtype);

    /* The patches: everything, or the edge bands, their corners and an interior sample. */
    dim_lists dr, dcl;
    int full = key->m * key->n <= FULL_OUTPUTS;
    int *all_r = NULL, *all_c = NULL, *band_c = NULL, *band_r = NULL;
    patch p[4];
    int np = 0;
    memset(&dr, 0, sizeof dr), memset(&dcl, 0, sizeof dcl);
    if (full) {
        all_r = malloc(sizeof(int) * (size_t)key->m), all_c = malloc(sizeof(int) * (size_t)key->n);
        if (all_r && all_c) {
            for (long long i = 0; i < key->m; i++) all_r[i] = (int)i;
            for (long long j = 0; j < key->n; j++) all_c[j] = (int)j;
            p[np++] = (patch){all_r, all_c, (int)key->m, (int)key->n};
        }
    } else if (dim_make(key->m, SAMPLE, 0x1234 + (unsigned long long)key->m, &dr) == 0 &&
               dim_make(key->n, SAMPLE, 0x5678 + (unsigned long long)key->n, &dcl) == 0) {
        /* Edge rows x all columns, interior rows x edge columns: all of the edge tiles,
         * unless that is more reference work than WORK_MAX or more outputs than
         * OUTPUTS_MAX; then the interior parts of the bands are sampled down to fit (the
         * corner blocks, edge x edge, stay whole). */
        double corner = (double)dr.nedge * dcl.nedge, bands = (double)dr.nedge * dcl.ninner +
                                                              (double)dr.ninner * dcl.nedge;
        double budget = fmin((double)WORK_MAX / kk, (double)OUTPUTS_MAX) - corner, f = bands > 0 && budget < bands
                                                                ? (budget > 0 ? budget / bands : 0)
                                                                : 1.0;
        int kc = (int)ceil(f * dcl.ninner), kr = (int)ceil(f * dr.ninner);
        unsigned long long seed = 0x9abc + (unsigned long long)key->k;
        int nbc = 0, nbr = 0, *sc = subset(dcl.inner, dcl.ninner, kc, &nbc, &seed),
            *sr = subset(dr.inner, dr.ninner, kr, &nbr, &seed);
        band_c = malloc(sizeof(int) * (size_t)(dcl.nedge + nbc));
        band_r = sr;
        if (sc && sr && band_c) {
            /* Columns of the row band: the edge columns and the (sampled) interior ones. */
            memcpy(band_c, dcl.edge, sizeof(int) * (size_t)dcl.nedge);
            memcpy(band_c + dcl.nedge, sc, sizeof(int) * (size_t)nbc);
            p[np++] = (patch){dr.edge, band_c, dr.nedge, dcl.nedge + nbc};
            if (nbr) p[np++] = (patch){band_r, dcl.edge, nbr, dcl.nedge};
            if (dr.nsample && dcl.nsample) p[np++] = (patch){dr.sample, dcl.sample, dr.nsample, dcl.nsample};
        } else {
            free(sr), band_r = NULL;
        }
        free(sc);
    }
    CUdeviceptr dbuf = 0, dacc = 0;
    CUresult r = CUDA_SUCCESS;
    const char *what = "";
    if (np == 0) {
        s = gt_fail(GT_OUT_OF_MEMORY, "verification index lists");
        goto done;
    }
    /* One buffer: every patch's row and column lists, then the reference and G of one
     * slice of at most CHUNK outputs (a patch is checked a slice of columns at a time). */
    long long total = 0, nidx = 0;
    for (int i = 0; i < np; i++) total += (long long)p[i].nr * p[i].nc, nidx += p[i].nr + p[i].nc;
    size_t idx_bytes = ((size_t)nidx * sizeof(int) + 15) / 16 * 16;
#define TRY(call, name)                     \
    if (r == CUDA_SUCCESS) {                \
        r = (call);                         \
        if (r != CUDA_SUCCESS) what = name; \
    }
    TRY(gt_cu.mem_alloc(&dbuf, idx_bytes + 2 * sizeof(double) * CHUNK), "cuMemAlloc (reference)");
    TRY(gt_cu.mem_alloc(&dacc, sizeof(acc_t)), "cuMemAlloc (sums)");
    CUdeviceptr at = dbuf, dref = dbuf + idx_bytes, dg = dref + sizeof(double) * CHUNK;
    for (int i = 0; i < np; i++) {
        TRY(gt_cu.memcpy_htod_async(at, p[i].rows, sizeof(int) * (size_t)p[i].nr, stream),
            "cuMemcpyHtoDAsync (rows)");
        at += sizeof(int) * (size_t)p[i].nr;
        TRY(gt_cu.memcpy_htod_async(at, p[i].cols, sizeof(int) * (size_t)p[i].nc, stream),
            "cuMemcpyHtoDAsync (cols)");
        at += sizeof(int) * (size_t)p[i].nc;
    }
    TRY(gt_cu.memset_d8_async(dacc, 0, sizeof(acc_t), stream), "cuMemsetD8Async");
    TRY(gt_cu.memset_d8_async(dacc + offsetof(acc_t, first), 0xff, sizeof(unsigned long long), stream),
        "cuMemsetD8Async");
    at = dbuf;
    for (int i = 0; i < np && r == CUDA_SUCCESS; i++) {
        CUdeviceptr drows = at, dcols0 = at + sizeof(int) * (size_t)p[i].nr;
        at = dcols0 + sizeof(int) * (size_t)p[i].nc;
        int opa = key->opa, opb = key->opb, b0 = key->beta0, nr = p[i].nr;
        long long k = key->k, per = CHUNK / nr > 0 ? CHUNK / nr : 1;
        for (long long c = 0; c < p[i].nc && r == CUDA_SUCCESS; c += per) {
            int nc = (int)(p[i].nc - c < per ? p[i].nc - c : per);
            CUdeviceptr dcols = dcols0 + sizeof(int) * (size_t)c;
            void *args[] = {&opa, &opb, &k,  &alpha, &A,  &lda,   &B,    &ldb, &beta,
                            &C0,  &ldc0, &b0, &drows, &nr, &dcols, &nc, &dref, &dg};
            unsigned gx = (unsigned)((nc + 15) / 16), gy = (unsigned)((nr + 15) / 16);
            if (gy > 65535) gy = 65535;
            TRY(gt_cu.launch_kernel(dc->ref[key->dtype], gx, gy, 1, 16, 16, 1, 0, stream, args, NULL),
                "cuLaunchKernel (reference)");
            long long t = (long long)nr * nc;
            unsigned grid = (unsigned)((t + 255) / 256 < 4096 ? (t + 255) / 256 : 4096);
            void *cargs[] = {&C,  &ldc, &drows, &nr,   &dcols,     &nc,
                             &dref, &dg, &coef, &u_out, &floor_abs, &dacc};
            TRY(gt_cu.launch_kernel(dc->cmp[out], grid, 1, 1, 256, 1, 1, 0, stream, cargs, NULL),
                "cuLaunchKernel (compare)");
        }
    }
    /* C's padding: rows m .. ldc - 1 as they were. */
    if (C0 && ldc0 == ldc && ldc > key->m) {
        long long m = key->m, n = key->n, t = (ldc - m) * n;
        unsigned grid = (unsigned)((t + 255) / 256 < 4096 ? (t + 255) / 256 : 4096);
        void *pargs[] = {&C, &C0, &ldc, &m, &n, &dacc};
        TRY(gt_cu.launch_kernel(dc->pad[out], grid, 1, 1, 256, 1, 1, 0, stream, pargs, NULL),
            "cuLaunchKernel (padding)");
    }
    acc_t acc;
    memset(&acc, 0, sizeof acc);
    TRY(gt_cu.memcpy_dtoh_async(&acc, dacc, sizeof acc, stream), "cuMemcpyDtoHAsync (sums)");
    TRY(gt_cu.stream_synchronize(stream), "verification (the checked kernel or the reference)");
#undef TRY
    if (r != CUDA_SUCCESS) {
        s = gt_cu_fail(r, what);
        goto done;
    }
    res->checked = total;
    res->nonfinite = (long long)acc.nonfinite;
    res->over = (long long)acc.over;
    res->pad_changed = (long long)acc.pad;
    memcpy(&res->worst, &acc.worst, sizeof res->worst);
    if (acc.first != ~0ull) {
        res->first_row = (long long)(acc.first >> 32);
        res->first_col = (long long)(acc.first & 0xffffffffull);
    }
    res->rel_err = acc.r2 > 0 ? sqrt(acc.d2 / acc.r2) : sqrt(acc.d2);
    res->pass = res->nonfinite == 0 && res->over == 0 && res->pad_changed == 0 &&
                res->rel_err <= res->tol && !isnan(res->rel_err);
done:
    if (dbuf) gt_cu.mem_free(dbuf);
    if (dacc) gt_cu.mem_free(dacc);
    free(all_r), free(all_c), free(band_c), free(band_r);
    dim_free(&dr), dim_free(&dcl);
    res->seconds = gt_measure_now_s() - t0;
    return s;
}
