/*
 * test_kcfg.c: the kernel parameter table, its text form and its constraints
 * (tuner/kcfg.c), and the candidate space built from them (tuner/space.c). No GPU needed.
 *
 * Cases: the table is self-consistent; canonical text round trip for random combinations
 * of the table; the parser's rejections (old-format texts included), each naming the
 * parameter; each named constraint rejecting a configuration crafted to break it and
 * nothing else (but unavoidable companions); known-good configurations accepted; the
 * default configuration legal and same-order for a wide range of problems, both dtypes,
 * on H100, A100 and generic limits; gt_kcfg_validate's messages; generic limits by
 * compute capability; the candidate space (every candidate passes every constraint,
 * ranked by the estimate, cut to the budget keeping variety of tile shapes, counts
 * consistent, deterministic, never empty; same-order spaces; DMMA only for f64 on sm_80+;
 * split-K only where the tiles cannot fill the device; odd thread tiles; build time);
 * the model's DRAM rate from the device's memory; NVRTC options; derived values; help
 * text.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcfg.h"
#include "kern.h"
#include "key.h"
#include "space.h"
#include "fixtures.h"
#include "tap.h"

/* ===== helpers ===== */

/* A configuration, field by field in the order of the canonical text:
 * fFAM_BMxBNxBK_wWMxWN_tTMxTN_sSTAGES_vVEC_kSPLIT_rRASTER. */
#define CFG(fam, bm, bn, bk, wm, wn, tm, tn, s, v, k, r) \
    ((gt_kcfg){(fam), (bm), (bn), (bk), (wm), (wn), (tm), (tn), (s), (v), (k), (r), 0, 0})

/* A key on the H100 (arch 90) or the A100 (arch 80), of dtype dt. */
static void make_key_dt(gt_key *k, int arch, int dt, int opa, int opb, long long m, long long n,
                        long long kk, int align, int beta0) {
    fixture_key(k, arch, opa, opb, m, n, kk, align, beta0);
    k->dtype = dt;
}

/* An f32 key on the H100. */
static void make_key(gt_key *k, int opa, int opb, long long m, long long n, long long kk,
                     int align, int beta0) {
    make_key_dt(k, 90, GT_DT_F32, opa, opb, m, n, kk, align, beta0);
}

/* A key of a device without DMMA (compute capability 7.5, 40 SMs, like a T4). */
static void make_key_sm75(gt_key *k, int dt, long long m, long long n, long long kk, int align) {
    fixture_key(k, 75, 0, 0, m, n, kk, align, 0);
    snprintf(k->device, sizeof k->device, "Tesla T4");
    k->sm_count = 40;
    k->dtype = dt;
}

static const gt_klimits *limits_of(int arch) { return arch >= 90 ? &h100 : &a100; }

/* A small deterministic generator (the tests must not depend on the C library's rand). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint32_t rng(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

/* A random combination of the table's values. */
static void random_combination(gt_kcfg *c) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < gt_nkparams; i++)
        gt_kcfg_set(c, i, gt_kparams[i].values[rng() % (unsigned)gt_kparams[i].nvalues]);
}

static int cfg_equal(const gt_kcfg *a, const gt_kcfg *b) {
    for (int i = 0; i < gt_nkparams; i++)
        if (gt_kcfg_get(a, i) != gt_kcfg_get(b, i)) return 0;
    return a->fam == b->fam && a->bm == b->bm && a->bn == b->bn && a->bk == b->bk &&
           a->wm == b->wm && a->wn == b->wn && a->tm == b->tm && a->tn == b->tn &&
           a->stages == b->stages && a->vec == b->vec && a->split == b->split &&
           a->raster == b->raster;
}

/* Same family, block, warp and thread tiles and split: what tuner/space.c calls a tile
 * shape (at most 3 of each in the first pass of the cut). */
/* A SIMT 16 x 8 thread tile: the space keeps a share of the budget for them. */
static int is_big(const gt_kcfg *c) { return c->fam == GT_FAM_SIMT && c->tm * c->tn > 64; }
static int same_shape(const gt_kcfg *a, const gt_kcfg *b) {
    return a->fam == b->fam && a->bm == b->bm && a->bn == b->bn && a->wm == b->wm &&
           a->wn == b->wn && a->tm == b->tm && a->tn == b->tn && a->split == b->split;
}

/* Orders by tile shape first, then every other field. */
static int cfg_cmp(const gt_kcfg *a, const gt_kcfg *b) {
    const int x[] = {a->fam, a->bm, a->bn, a->wm, a->wn, a->tm, a->tn, a->split,
                     a->bk,  a->stages, a->vec, a->raster};
    const int y[] = {b->fam, b->bm, b->bn, b->wm, b->wn, b->tm, b->tn, b->split,
                     b->bk,  b->stages, b->vec, b->raster};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}
static int cand_cmp(const void *a, const void *b) {
    return cfg_cmp(&((const gt_cand *)a)->cfg, &((const gt_cand *)b)->cfg);
}

static int is_odd_tile(const gt_kcfg *c) {
    return c->tm == 3 || c->tm == 5 || c->tn == 3 || c->tn == 5;
}

static const gt_kconstraint *constraint(const char *name) {
    for (int i = 0; i < gt_nkconstraints; i++)
        if (strcmp(gt_kconstraints[i].name, name) == 0) return &gt_kconstraints[i];
    return NULL;
}

static int passes_all(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim) {
    for (int i = 0; i < gt_nkconstraints; i++)
        if (!gt_kconstraints[i].ok(c, key, lim)) return 0;
    return 1;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The full text of one configuration, for messages. */
typedef struct {
    char s[80];
} text80;
static text80 fmt(const gt_kcfg *c) {
    text80 t;
    gt_kcfg_format(c, t.s, sizeof t.s);
    return t;
}

/* ===== text form ===== */

static void kcfg_table_sane(void) {
    TAP_CHECK(gt_nkparams == 14, "%d parameters", gt_nkparams);
    /* The canonical order, the fields and the separators of the text. */
    static const char *names[] = {"FAM", "BM", "BN",    "BK",  "WM",    "WN",    "TM",
                                  "TN",  "STAGES", "VEC", "SPLIT", "RASTER", "TCORE", "GENERIC"};
    static const char *seps[] = {"f", "_", "x", "x", "_w", "x", "_t", "x", "_s", "_v", "_k", "_r", "_c", "_g"};
    static const size_t offs[] = {
        offsetof(gt_kcfg, fam), offsetof(gt_kcfg, bm),     offsetof(gt_kcfg, bn),
        offsetof(gt_kcfg, bk),  offsetof(gt_kcfg, wm),     offsetof(gt_kcfg, wn),
        offsetof(gt_kcfg, tm),  offsetof(gt_kcfg, tn),     offsetof(gt_kcfg, stages),
        offsetof(gt_kcfg, vec), offsetof(gt_kcfg, split),  offsetof(gt_kcfg, raster),
        offsetof(gt_kcfg, tcore), offsetof(gt_kcfg, generic)};
    for (int i = 0; i < gt_nkparams && i < 14; i++)
        TAP_CHECK(strcmp(gt_kparams[i].name, names[i]) == 0 &&
                      strcmp(gt_kparams[i].sep, seps[i]) == 0 && gt_kparams[i].offset == offs[i],
                  "parameter %d: %s '%s' at %zu", i, gt_kparams[i].name, gt_kparams[i].sep,
                  gt_kparams[i].offset);
    /* Every field of gt_kcfg is a parameter. */
    TAP_CHECK(sizeof(gt_kcfg) == (size_t)gt_nkparams * sizeof(int), "gt_kcfg has %zu bytes",
              sizeof(gt_kcfg));
    for (int i = 0; i < gt_nkparams; i++) {
        const gt_kparam *p = &gt_kparams[i];
        TAP_CHECK(p->name && p->name[0] && p->help && p->help[0] && p->sep && p->sep[0],
                  "parameter %d", i);
        TAP_CHECK(p->nvalues >= 1 && p->nvalues <= GT_KPARAM_MAX_VALUES, "%s: %d values",
                  p->name, p->nvalues);
        TAP_CHECK(p->offset + sizeof(int) <= sizeof(gt_kcfg) && p->offset % sizeof(int) == 0,
                  "%s: offset %zu", p->name, p->offset);
        /* Ascending, non-negative (only FAM and an optional parameter's first value may
         * be 0): the parser relies on distinct values and the constraints divide by the
         * others. */
        for (int j = 0; j < p->nvalues; j++)
            TAP_CHECK((p->values[j] > 0 || ((i == 0 || p->optional) && j == 0 && p->values[j] == 0)) &&
                          (j == 0 || p->values[j] > p->values[j - 1]),
                      "%s: value %d = %d", p->name, j, p->values[j]);
        /* A separator never starts with a digit, or the text would be ambiguous. */
        TAP_CHECK(p->sep[0] < '0' || p->sep[0] > '9', "%s: separator '%s'", p->name, p->sep);
        for (int j = 0; j < i; j++) {
            TAP_CHECK(strcmp(p->name, gt_kparams[j].name) != 0, "two parameters %s", p->name);
            TAP_CHECK(p->offset != gt_kparams[j].offset, "%s and %s share a field", p->name,
                      gt_kparams[j].name);
        }
    }
    /* The families' values and a few the kernels rely on. */
    TAP_CHECK(gt_kparams[0].nvalues == 5 && gt_kparams[0].values[0] == GT_FAM_SIMT &&
                  gt_kparams[0].values[1] == GT_FAM_DMMA && gt_kparams[0].values[2] == GT_FAM_MMA &&
                  gt_kparams[0].values[3] == GT_FAM_WGMMA && gt_kparams[0].values[4] == GT_FAM_GEMV,
              "FAM values");
    TAP_CHECK(gt_nkconstraints >= 19, "%d constraints", gt_nkconstraints);
    int legal = 0, prune = 0;
    for (int i = 0; i < gt_nkconstraints; i++) {
        const gt_kconstraint *k = &gt_kconstraints[i];
        TAP_CHECK(k->kind == GT_KC_LEGAL || k->kind == GT_KC_PRUNE, "%s: kind %d", k->name,
                  k->kind);
        TAP_CHECK(k->name && k->name[0] && k->ok && k->reason && k->reason[0], "constraint %d",
                  i);
        legal += k->kind == GT_KC_LEGAL;
        prune += k->kind == GT_KC_PRUNE;
        /* Legal ones first: gt_kcfg_check with both kinds reports a legal failure first. */
        TAP_CHECK(i == 0 || k->kind >= gt_kconstraints[i - 1].kind, "%s (kind %d) after kind %d",
                  k->name, k->kind, gt_kconstraints[i - 1].kind);
        for (int j = 0; j < i; j++)
            TAP_CHECK(strcmp(k->name, gt_kconstraints[j].name) != 0, "two constraints %s",
                      k->name);
    }
    TAP_CHECK(legal >= 11 && prune >= 8, "%d legal, %d prune constraints", legal, prune);
    TAP_CHECK(strcmp(gt_kconstraints[0].name, "in_table") == 0, "first constraint %s",
              gt_kconstraints[0].name);
}

static void kcfg_text_examples(void) {
    const char *want = "f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8";
    gt_kcfg c = CFG(0, 128, 64, 8, 32, 32, 8, 4, 3, 4, 1, 8);
    char buf[80], why[256];
    int n = gt_kcfg_format(&c, buf, sizeof buf);
    TAP_CHECK(strcmp(buf, want) == 0, "'%s'", buf);
    TAP_CHECK(n == (int)strlen(want), "returned %d", n);
    gt_kcfg p;
    TAP_CHECK(gt_kcfg_parse("f1_16x256x32_w8x64_t1x8_s4_v2_k16_r16", &p, why, sizeof why) == 0,
              "%s", why);
    gt_kcfg q = CFG(1, 16, 256, 32, 8, 64, 1, 8, 4, 2, 16, 16);
    TAP_CHECK(cfg_equal(&p, &q), "parsed %s", fmt(&p).s);
    /* Odd values of the table. */
    TAP_CHECK(gt_kcfg_parse("f0_24x40x16_w24x20_t3x5_s2_v1_k3_r1", &p, why, sizeof why) == 0 &&
                  p.bm == 24 && p.bn == 40 && p.wm == 24 && p.wn == 20 && p.tm == 3 &&
                  p.tn == 5 && p.split == 3,
              "odd values: %s", why);
    /* Truncated output: terminated, full length returned. */
    char small[8];
    memset(small, 'Z', sizeof small);
    n = gt_kcfg_format(&c, small, sizeof small);
    TAP_CHECK(n == (int)strlen(want), "truncated: returned %d", n);
    TAP_CHECK(small[7] == 0 && strncmp(small, want, 7) == 0, "truncated: '%.8s'", small);
    TAP_CHECK(gt_kcfg_format(&c, NULL, 0) == (int)strlen(want), "size 0");
    /* The longest text fits the buffers that hold configurations (64 bytes and more). */
    gt_kcfg longest = CFG(1, 256, 256, 32, 256, 256, 8, 8, 4, 4, 512, 16);
    longest.generic = 1;
    TAP_CHECK(gt_kcfg_format(&longest, NULL, 0) < 48, "longest text: %d",
              gt_kcfg_format(&longest, NULL, 0));
    /* A generic kernel: "_g1" after the rest; an exact one writes nothing for it, so
     * every text stored before the parameter existed still reads as the same kernel. */
    c.generic = 1;
    gt_kcfg_format(&c, buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8_g1") == 0, "generic: '%s'", buf);
    TAP_CHECK(gt_kcfg_parse(buf, &p, why, sizeof why) == 0 && cfg_equal(&p, &c) && p.generic == 1,
              "generic parse: %s", why);
    TAP_CHECK(gt_kcfg_parse(want, &p, why, sizeof why) == 0 && p.generic == 0,
              "exact parse: %s", why);
}

static void kcfg_round_trip_random_combinations(void) {
    enum { N = 200000 };
    int failures = 0;
    for (int idx = 0; idx < N; idx++) {
        gt_kcfg c, p;
        random_combination(&c);
        char buf[80], again[80], why[256] = "";
        int n = gt_kcfg_format(&c, buf, sizeof buf);
        int ok = n == (int)strlen(buf) && gt_kcfg_parse(buf, &p, why, sizeof why) == 0 &&
                 cfg_equal(&c, &p) && gt_kcfg_format(&p, again, sizeof again) == n &&
                 strcmp(buf, again) == 0;
        /* A table combination is never outside the table, whatever else it breaks. */
        ok = ok && constraint("in_table") && constraint("in_table")->ok(&c, NULL, &h100);
        if (!ok && failures++ < 5)
            TAP_CHECK(ok, "combination %d: '%s' -> '%s' (%s)", idx, buf, again, why);
    }
    TAP_CHECK(failures == 0, "%d of %d combinations fail the round trip", failures, N);
    /* The first and last value of every parameter. */
    gt_kcfg lo, hi, p;
    memset(&lo, 0, sizeof lo);
    memset(&hi, 0, sizeof hi);
    for (int i = 0; i < gt_nkparams; i++) {
        gt_kcfg_set(&lo, i, gt_kparams[i].values[0]);
        gt_kcfg_set(&hi, i, gt_kparams[i].values[gt_kparams[i].nvalues - 1]);
    }
    char a[80], b[80], why[256] = "";
    gt_kcfg_format(&lo, a, sizeof a);
    gt_kcfg_format(&hi, b, sizeof b);
    TAP_CHECK(strcmp(a, b) != 0, "'%s' twice", a);
    TAP_CHECK(gt_kcfg_parse(a, &p, why, sizeof why) == 0 && cfg_equal(&p, &lo), "%s: %s", a, why);
    TAP_CHECK(gt_kcfg_parse(b, &p, why, sizeof why) == 0 && cfg_equal(&p, &hi), "%s: %s", b, why);
}

static void kcfg_parse_rejects(void) {
    /* Each with the parameter its reason must name ("" where the reason names none). */
    static const struct {
        const char *text, *param;
    } bad[] = {
        {"", "FAM"},                                             /* empty */
        /* The old format (block tile, thread tile, vector) and its relatives. */
        {"128x64x8_t8x4_v4", "FAM"},
        {"128x128x8_t8x8_v1", "FAM"},
        {"16x16x8_t2x2_v1", "FAM"},
        {"128x128x8_w64x32_t8x8_s2", "FAM"},
        {"_128x64x8_w32x32_t8x4_s3_v4_k1_r8", "FAM"},            /* no family */
        {"f0_128x64x8_t8x4_v4", "WM"},                           /* old text after a family */
        /* Missing parameters. */
        {"f0", "BM"},
        {"f0_128x64x8", "WM"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1", "RASTER"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r", "RASTER"},        /* without a number */
        {"f0_128x64x8_w32x32_t8x4_s3_v4_r8", "SPLIT"},
        {"f0_128x64x8_w32x32_t8x4_v4_k1_r8", "STAGES"},
        {"f0_128x64x8_w32x32_t8x_s3_v4_k1_r8", "TN"},
        {"f0_128x64_w32x32_t8x4_s3_v4_k1_r8", "BK"},
        /* Wrong separators, order or case. */
        {"f0-128x64x8_w32x32_t8x4_s3_v4_k1_r8", "BM"},
        {"f0_128-64x8_w32x32_t8x4_s3_v4_k1_r8", "BN"},
        {"f0_128x64x8-w32x32_t8x4_s3_v4_k1_r8", "WM"},
        {"f0_128x64x8_w32x32_t8x4_s3v4_k1_r8", "VEC"},
        {"f0_128x64x8_w32x32_t8_4_s3_v4_k1_r8", "TN"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_r8_k1", "SPLIT"},
        {"F0_128X64X8_W32X32_T8X4_S3_V4_K1_R8", "FAM"},
        {"f0_128 x64x8_w32x32_t8x4_s3_v4_k1_r8", "BN"},
        {"f0_128x64x8 _w32x32_t8x4_s3_v4_k1_r8", "WM"},
        /* Values outside the table. */
        {"f5_128x64x8_w32x32_t8x4_s3_v4_k1_r8", "FAM"},
        {"f0_100x64x8_w32x32_t8x4_s3_v4_k1_r8", "BM"},
        {"f0_999x64x8_w32x32_t8x4_s3_v4_k1_r8", "BM"},
        {"f0_128x7x8_w32x32_t8x4_s3_v4_k1_r8", "BN"},
        {"f0_128x64x128_w32x32_t8x4_s3_v4_k1_r8", "BK"},
        {"f0_128x64x4_w32x32_t8x4_s3_v4_k1_r8", "BK"},
        {"f0_128x64x8_w2048x32_t8x4_s3_v4_k1_r8", "WM"},
        {"f0_128x64x8_w32x7_t8x4_s3_v4_k1_r8", "WN"},
        {"f0_128x64x8_w32x32_t7x4_s3_v4_k1_r8", "TM"},
        {"f0_128x64x8_w32x32_t8x16_s3_v4_k1_r8", "TN"},
        {"f0_128x64x8_w32x32_t8x4_s1_v4_k1_r8", "STAGES"},
        {"f0_128x64x8_w32x32_t8x4_s6_v4_k1_r8", "STAGES"},
        {"f0_128x64x8_w32x32_t8x4_s3_v3_k1_r8", "VEC"},
        {"f0_128x64x8_w32x32_t8x4_s3_v16_k1_r8", "VEC"},
        {"f0_128x64x8_w32x32_t8x4_s3_v0_k1_r8", "VEC"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k5_r8", "SPLIT"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1024_r8", "SPLIT"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k0_r8", "SPLIT"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r2", "RASTER"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r32", "RASTER"},
        {"f0_0x64x8_w32x32_t8x4_s3_v4_k1_r8", "BM"},
        /* Leading zeros: one configuration, one text. */
        {"f0_0128x64x8_w32x32_t8x4_s3_v4_k1_r8", "BM"},
        {"f00_128x64x8_w32x32_t8x4_s3_v4_k1_r8", "FAM"},
        /* Trailing text: an unknown parameter, junk, a repeated one. */
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8_q3", ""},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8_x1", ""},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8 ", ""},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8\n", ""},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8_r8", ""},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8abc", ""},
        /* GENERIC: 1 or absent; its first value is never written. */
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8_g0", "GENERIC"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8_g2", "GENERIC"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8_g", "GENERIC"},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8_g1_g1", ""},
        {"f0_128x64x8_w32x32_t8x4_s3_v4_k1_g1_r8", "RASTER"},
        /* Leading junk, signs, numbers that only wrap or truncate to a value. */
        {" f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8", "FAM"},
        {"f-0_128x64x8_w32x32_t8x4_s3_v4_k1_r8", "FAM"},
        {"f0_+128x64x8_w32x32_t8x4_s3_v4_k1_r8", "BM"},
        {"f0_128x-64x8_w32x32_t8x4_s3_v4_k1_r8", "BN"},
        {"f0_4294967424x64x8_w32x32_t8x4_s3_v4_k1_r8", "BM"},          /* 2^32 + 128 */
        {"f0_128x18446744073709551680x8_w32x32_t8x4_s3_v4_k1_r8", "BN"}, /* 2^64 + 64 */
        {"f0_128x64x8_w32x32_t8x4_s3_v99999999999999999999999999_k1_r8", "VEC"},
        {"f0_128x64x8_w32x32_t8x4_s3_v0000000000004_k1_r8", "VEC"},    /* padded past reason */
        {"f0_128.0x64x8_w32x32_t8x4_s3_v4_k1_r8", "BN"},
        {"f0_0x80x64x8_w32x32_t8x4_s3_v4_k1_r8", "BM"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gt_kcfg c;
        char why[256] = "";
        int r = gt_kcfg_parse(bad[i].text, &c, why, sizeof why);
        TAP_CHECK(r == -1, "'%s' accepted as %s", bad[i].text, fmt(&c).s);
        TAP_CHECK(r != -1 || why[0] != 0, "'%s' rejected without a reason", bad[i].text);
        /* The reason names the offending parameter (a name that no other contains). */
        if (r == -1 && bad[i].param[0]) {
            char word[16];
            snprintf(word, sizeof word, " %s", bad[i].param);
            TAP_CHECK(strstr(why, word) != NULL, "'%s': reason '%s' does not name %s",
                      bad[i].text, why, bad[i].param);
        }
    }
    /* An unknown trailing parameter is quoted in the reason. */
    gt_kcfg c;
    char why[256] = "";
    gt_kcfg_parse("f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8_q3", &c, why, sizeof why);
    TAP_CHECK(strstr(why, "_q3") != NULL, "reason '%s' does not quote _q3", why);
    /* A small reason buffer is not overrun. */
    char tiny[8];
    memset(tiny, 'Z', sizeof tiny);
    TAP_CHECK(gt_kcfg_parse("garbage", &c, tiny, 4) == -1 && tiny[3] == 0 && tiny[4] == 'Z',
              "reason buffer overrun");
}

/* ===== constraints ===== */

/* A configuration crafted to break `name`: with key and limits, it must fail `name`, no
 * constraint except those in also[] (unavoidable companions), and gt_kcfg_check must
 * report the first failing one of name's kind. */
typedef struct {
    const char *name;
    gt_kcfg cfg;
    int arch, dtype, opa, opb;
    long long m, n, k;
    int align;
    const gt_klimits *lim;
    const char *also[2];
} crafted;

/* Checks one crafted case; also used for extra cases of a constraint. */
static void check_crafted(const crafted *cs) {
    const gt_kconstraint *target = constraint(cs->name);
    TAP_CHECK(target != NULL, "no constraint named %s", cs->name);
    if (!target) return;
    gt_key key;
    make_key_dt(&key, cs->arch, cs->dtype, cs->opa, cs->opb, cs->m, cs->n, cs->k, cs->align, 0);
    text80 t = fmt(&cs->cfg);
    const char *text = t.s;
    TAP_CHECK(!target->ok(&cs->cfg, &key, cs->lim), "%s accepts %s", cs->name, text);
    for (int i = 0; i < gt_nkconstraints; i++) {
        const gt_kconstraint *o = &gt_kconstraints[i];
        if (o == target) continue;
        int allowed = 0;
        for (int a = 0; a < 2; a++) allowed |= cs->also[a] && strcmp(cs->also[a], o->name) == 0;
        if (allowed)
            TAP_CHECK(!o->ok(&cs->cfg, &key, cs->lim), "%s: %s was expected to fail too", text,
                      o->name);
        else
            TAP_CHECK(o->ok(&cs->cfg, &key, cs->lim), "%s, crafted for %s, also fails %s", text,
                      cs->name, o->name);
    }
    /* gt_kcfg_check reports it (or its companion of the same kind that comes first). */
    const gt_kconstraint *got = gt_kcfg_check(&cs->cfg, &key, cs->lim, target->kind);
    int expected = got == target;
    for (int a = 0; a < 2; a++)
        expected |= got && cs->also[a] && strcmp(got->name, cs->also[a]) == 0 &&
                    got->kind == target->kind && got < target;
    TAP_CHECK(expected, "%s: gt_kcfg_check reports %s, want %s", text, got ? got->name : "nothing",
              cs->name);
    TAP_CHECK(gt_kcfg_check(&cs->cfg, &key, cs->lim, GT_KC_LEGAL | GT_KC_PRUNE) != NULL,
              "%s passes the full check", text);
    if (target->kind == GT_KC_PRUNE) {
        /* A prune-only failure leaves the configuration legal. */
        const gt_kconstraint *legal = gt_kcfg_check(&cs->cfg, &key, cs->lim, GT_KC_LEGAL);
        TAP_CHECK(legal == NULL, "%s: legal check reports %s", text, legal ? legal->name : "");
    } else {
        /* A legal failure is what gt_kcfg_validate reports, by name. */
        gt_kcfg out;
        char why[512] = "";
        int r = gt_kcfg_validate(text, &key, cs->lim, &out, why, sizeof why);
        if (strcmp(cs->name, "in_table") == 0)
            TAP_CHECK(r == -1, "%s validates", text); /* the parser refuses it first */
        else
            TAP_CHECK(r == -1 && strstr(why, got ? got->name : cs->name) != NULL,
                      "validate %s: %d '%s'", text, r, why);
    }
}

static void kcfg_each_constraint_rejects(void) {
    gt_klimits threads128 = h100, regs16k = h100, sm2048 = h100, sm8192 = h100;
    threads128.max_threads_per_block = 128;
    regs16k.regs_per_block = 16384;
    sm2048.sm_count = 2048; /* a device whose SMs outnumber 1024 tiles */
    sm8192.sm_count = 8192; /* one where 1024 tiles may take 16 splits (split_needed) */
    /* The base: f0_128x128x16_w32x64_t8x8_s3_v4_k1_r8 (256 threads, 128 registers,
     * 49920 bytes of shared memory) passes everything on 4096^3 f32 a16 on the H100;
     * each case changes what its constraint looks at. */
    const crafted cases[] = {
        /* TM = 7 is outside the table; everything else about it is fine but the lane
         * layout (7 x 8 does not divide the warp tile). */
        {"in_table", CFG(0, 128, 128, 16, 32, 64, 7, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {"warp_layout"}},
        /* BK 64 is MMA's (16-bit types) only. */
        {"k_step", CFG(0, 128, 128, 64, 32, 64, 8, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {"compiles_fast"}},
        /* DMMA for f32. */
        {"family_fits", CFG(1, 128, 128, 16, 32, 64, 4, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* MMA for bf16 on sm_75 (no bf16 tensor cores). */
        {"family_fits", CFG(2, 128, 128, 32, 64, 64, 8, 4, 3, 8, 1, 8), 75, GT_DT_BF16, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* SIMT for f16: the tensor-core types have no SIMT kernel. */
        {"family_fits", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 8, 1, 8), 90, GT_DT_F16, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* WGMMA on sm_80 (no wgmma), and for exact f32 (no tensor cores). */
        {"family_fits", CFG(3, 128, 128, 64, 128, 64, 1, 1, 4, 8, 1, 8), 80, GT_DT_BF16, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        {"family_fits", CFG(3, 128, 128, 32, 128, 64, 1, 1, 4, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* WGMMA 256 x 256 with TN 2: 256 accumulators per consumer thread. */
        {"wgmma_tile", CFG(3, 256, 256, 64, 256, 128, 1, 2, 2, 8, 1, 1), 90, GT_DT_BF16, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* WGMMA with WN = 64 but TN = 2. */
        {"warp_layout", CFG(3, 128, 128, 64, 128, 64, 1, 2, 4, 8, 1, 8), 90, GT_DT_BF16, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* WGMMA clusters of 2 with BN 64: B does not split into two 64-column parts; of 3. */
        {"warp_layout", CFG(3, 128, 64, 64, 128, 64, 2, 1, 4, 8, 1, 8), 90, GT_DT_BF16, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        {"warp_layout", CFG(3, 128, 128, 64, 128, 64, 3, 1, 4, 8, 1, 8), 90, GT_DT_BF16, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* WGMMA with BK 32 of bf16: 64 bytes, not a 128-byte swizzle row. */
        {"k_step", CFG(3, 128, 128, 32, 128, 64, 1, 1, 4, 8, 1, 8), 90, GT_DT_BF16, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* 8 x 8 thread tiles of a 64 x 64 warp tile: 64 lanes, not 32. */
        {"warp_layout", CFG(0, 128, 128, 16, 64, 64, 8, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* 256 threads on a device of 128 per block. */
        {"whole_warps", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &threads128, {0}},
        /* 256 threads, 64 x 8 / 4 = 128 vectors of A per stage. */
        {"whole_vectors", CFG(0, 64, 64, 8, 32, 16, 4, 4, 2, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* 8-byte vectors on a 4-byte alignment class (16-byte ones read aligned copies:
         * gt_kcfg_simt_packs); a vector wider than the class is necessarily not the widest
         * that the class allows. */
        {"aligned", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 2, 1, 8), 90, GT_DT_F32, 0, 0, 4096,
         4096, 4096, 4, &h100, {"widest_vector"}},
        /* DMMA copies nothing: 16 bytes of f64 on an 8-byte class. */
        {"aligned", CFG(1, 128, 128, 16, 32, 64, 4, 8, 3, 2, 1, 8), 90, GT_DT_F64, 0, 0, 4096,
         4096, 4096, 8, &h100, {"widest_vector"}},
        /* f64: 4 x 32 x (128 + 128 + 2) x 8 = 264192 bytes > 227 KiB; no block is
         * resident then either. */
        {"smem_fits", CFG(0, 128, 128, 32, 32, 64, 8, 8, 4, 2, 1, 8), 90, GT_DT_F64, 0, 1,
         4096, 4096, 4096, 16, &h100, {"occupancy", "compiles_fast"}},
        /* 128 registers x 256 threads > 16384 per block. */
        {"regs_fit", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0, 4096,
         4096, 4096, 16, &regs16k, {0}},
        /* (m / 128) x (n / 128) tiles far beyond 2^31 - 1. */
        {"grid_fits", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         2147483647LL, 2147483647LL, 4096, 16, &h100, {0}},
        /* K = 784: 49 steps of 16 in 16 splits of 4: the last split gets none. */
        {"split_has_work", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 16, 1), 90, GT_DT_F32, 0,
         0, 256, 256, 784, 16, &h100, {0}},
        /* 1024 tiles x 8 splits x 128 x 128 x 4 bytes + counters > 512 MiB (on a device
         * with more SMs than tiles, where split-K would be worth it). */
        {"workspace_fits", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 8, 1), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &sm2048, {0}},
        /* 1024 tiles of 32 x 32 split in 16: 64 MiB of partials, but the reduction's two
         * levels (4 groups of 4) need 1024 x 5 counters, more than 4096. */
        {"workspace_fits", CFG(0, 32, 32, 16, 32, 32, 4, 8, 3, 4, 16, 1), 90, GT_DT_F32, 0, 0,
         1024, 1024, 4096, 16, &sm8192, {0}},
        /* tf32 WGMMA NT 8192^3: both operands' transposed copies, 2 x 256 MiB. */
        {"workspace_fits", CFG(3, 128, 128, 32, 128, 64, 1, 1, 4, 4, 1, 8), 90, GT_DT_TF32, 0, 1,
         8192, 8192, 8192, 16, &h100, {0}},
        /* m = 1: 127 idle rows, more than a warp tile of 32. */
        {"warp_not_idle", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 1), 90, GT_DT_F32, 0, 0, 1,
         65536, 4096, 16, &h100, {0}},
        /* 8-byte vectors where 16 bytes are allowed. */
        {"widest_vector", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 2, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* 1024 threads of 2 x 2 outputs (52 registers each). */
        {"reasonable_block", CFG(0, 64, 64, 16, 8, 16, 2, 2, 3, 1, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 4, &h100, {0}},
        /* 1 output per thread in a block of 256 threads. */
        {"enough_work_per_thread", CFG(0, 16, 16, 16, 4, 8, 1, 1, 3, 1, 1, 8), 90, GT_DT_F32, 0,
         0, 4096, 4096, 4096, 4, &h100, {0}},
        /* One warp with 102400 bytes of f64 stages: 2 blocks, 2 warps per SM. */
        {"occupancy", CFG(0, 32, 64, 32, 32, 64, 8, 8, 4, 2, 1, 8), 90, GT_DT_F64, 0, 1, 4096,
         4096, 4096, 16, &h100, {"compiles_fast"}},
        /* A 16 x 4 thread tile: 16 rows only as 16 x 8. */
        {"thread_tile_fits", CFG(0, 128, 128, 8, 128, 16, 16, 4, 2, 4, 1, 8), 90, GT_DT_F32, 1,
         0, 4096, 4096, 4096, 16, &h100, {0}},
        /* 8 x 8 threads with BK 32: 2048 FMAs unrolled per K step. */
        {"compiles_fast", CFG(0, 128, 128, 32, 32, 64, 8, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* 256 x 256: 4 tiles of 128 x 128 where 64 of 32 x 32 would be possible. */
        {"fills_sms", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 1), 90, GT_DT_F32, 0, 0, 256,
         256, 4096, 16, &h100, {0}},
        /* Split-K on 1024 tiles: they fill the device alone. */
        {"split_needed", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 2, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* DMMA with an odd TN (3 fragments along N): the half-rate m8n8k4 fallback. */
        {"dmma_shape", CFG(1, 64, 48, 16, 32, 24, 4, 3, 3, 2, 1, 1), 90, GT_DT_F64, 0, 0,
         4096, 4080, 4096, 16, &h100, {0}},
        /* The DMMA configuration that computed wrong results on the H100 (16x4096x4096:NT):
         * m16n8k8 (2 fragments per warp), BK 32, 4 warps. */
        {"dmma_k8_block", CFG(1, 16, 32, 32, 8, 16, 1, 2, 4, 2, 1, 1), 90, GT_DT_F64, 0, 1, 16,
         4096, 4096, 16, &h100, {0}},
        /* The DMMA configuration that computed wrong results on the H100 (f64
         * 300x200x40001 NT): 32 x 256 tiles, two stages, 24 splits. */
        {"dmma_stages", CFG(1, 32, 256, 16, 32, 64, 4, 8, 2, 2, 24, 1), 90, GT_DT_F64, 0, 1, 300,
         200, 40001, 16, &h100, {0}},
        /* Grouping 8 rows of a 12 x 8 grid: 96 tiles, less than 2 waves. */
        {"raster_useful", CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         1536, 1024, 4096, 16, &h100, {0}},
        /* GEMV: N = 20 does not fit the 16 columns of the tile. */
        {"gemv_layout", CFG(4, 16, 16, 64, 2, 16, 2, 2, 2, 8, 1, 1), 90, GT_DT_BF16, 1, 0, 4096,
         20, 4096, 16, &h100, {0}},
        /* GEMV: 4 columns for N = 1. */
        {"gemv_fit", CFG(4, 8, 4, 64, 2, 4, 2, 2, 2, 8, 1, 1), 90, GT_DT_BF16, 1, 0, 4096, 1,
         4096, 16, &h100, {0}},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    /* Every constraint has a case. */
    for (int i = 0; i < gt_nkconstraints; i++) {
        int found = 0;
        for (int j = 0; j < ncases; j++)
            found |= strcmp(cases[j].name, gt_kconstraints[i].name) == 0;
        TAP_CHECK(found, "constraint %s has no crafted case", gt_kconstraints[i].name);
    }
    for (int j = 0; j < ncases; j++) check_crafted(&cases[j]);

    /* More ways to break some of them. */
    const crafted more[] = {
        /* DMMA needs sm_80: f64 on sm_75 (its generic limits). */
        {"family_fits", CFG(1, 128, 128, 8, 32, 64, 4, 8, 3, 2, 1, 8), 75, GT_DT_F64, 0, 0,
         4096, 4096, 4096, 16, NULL, {0}},
        /* DMMA fragments: WM must be 8 TM. */
        {"warp_layout", CFG(1, 128, 128, 16, 64, 64, 4, 8, 3, 2, 1, 8), 90, GT_DT_F64, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* A warp tile that does not divide the block tile: 96 % 64. */
        {"warp_layout", CFG(0, 96, 128, 16, 64, 32, 8, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* A thread tile that does not divide the warp tile: 32 % 3. */
        {"warp_layout", CFG(0, 128, 128, 16, 32, 64, 3, 8, 3, 4, 1, 8), 90, GT_DT_F32, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* 32-byte vectors of f64 (the alignment class cannot allow them either). */
        {"whole_vectors", CFG(1, 128, 128, 16, 32, 64, 4, 8, 3, 4, 1, 8), 90, GT_DT_F64, 0, 0,
         4096, 4096, 4096, 16, &h100, {"aligned", "widest_vector"}},
        /* f64 DMMA 8 x 8 fragments: 4 x 64 + 4 x 16 + 48 = 368 registers > 255 (and
         * more than 32 fragments); a lone warp of them still leaves blocks resident. */
        {"regs_fit", CFG(1, 64, 64, 16, 64, 64, 8, 8, 3, 2, 1, 8), 90, GT_DT_F64, 0, 0, 4096,
         4096, 4096, 16, &h100, {"dmma_shape"}},
        /* 16 x 8 f32 threads in a 512-thread block: 128 + 48 + 16 registers needed, 128
         * allowed (ptxas spills). */
        {"thread_tile_fits", CFG(0, 256, 256, 8, 128, 32, 16, 8, 2, 4, 1, 1), 90, GT_DT_F32, 1,
         0, 4096, 4096, 4096, 16, &h100, {0}},
        /* 16 x 8 with A as stored. */
        {"thread_tile_fits", CFG(0, 256, 128, 8, 128, 32, 16, 8, 2, 4, 1, 8), 90, GT_DT_F32, 0,
         0, 4096, 4096, 4096, 16, &h100, {0}},
        /* TM 16 is SIMT's only: DMMA with 16 x 2 fragments per warp. */
        {"warp_layout", CFG(1, 128, 64, 16, 128, 16, 16, 2, 3, 2, 1, 8), 90, GT_DT_F64, 0, 0,
         4096, 4096, 4096, 16, &h100, {0}},
        /* f64 on the A100: 3 x 32 x (128 + 128 + 2) x 8 = 198144 bytes > 163 KiB. */
        {"smem_fits", CFG(0, 128, 128, 32, 32, 64, 8, 8, 3, 2, 1, 8), 80, GT_DT_F64, 0, 1, 4096,
         4096, 4096, 16, &a100, {"occupancy", "compiles_fast"}},
    };
    gt_klimits sm75;
    gt_key k75;
    make_key_sm75(&k75, GT_DT_F64, 4096, 4096, 4096, 16);
    gt_kcfg_limits_generic(&k75, &sm75);
    for (size_t j = 0; j < sizeof more / sizeof more[0]; j++) {
        crafted cs = more[j];
        if (!cs.lim) cs.lim = &sm75;
        check_crafted(&cs);
    }

    /* Zero, negative or inverted values are refused as outside the table whatever kinds
     * are asked for (every predicate divides by them). */
    gt_key key;
    make_key(&key, 0, 0, 4096, 4096, 4096, 16, 0);
    const gt_kcfg odd[] = {
        CFG(0, 128, 128, 16, 32, 64, 0, 8, 3, 4, 1, 8),  /* TM 0 */
        CFG(0, 128, 128, 16, 0, 64, 8, 8, 3, 4, 1, 8),   /* WM 0 */
        CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 0, 8),  /* SPLIT 0 */
        CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 0),  /* RASTER 0 */
        CFG(0, 128, 128, 16, 32, 64, 8, 8, 0, 4, 1, 8),  /* STAGES 0 */
        CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 0, 1, 8),  /* VEC 0 */
        CFG(0, -128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 8), /* BM negative */
        CFG(0, 16, 128, 16, 32, 64, 8, 8, 3, 4, 1, 8),   /* WM > BM */
        CFG(0, 128, 128, 16, 4, 64, 8, 8, 3, 4, 1, 8),   /* TM > WM */
        CFG(0, 128, 128, 0, 32, 64, 8, 8, 3, 4, 1, 8),   /* BK 0 */
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        const gt_kconstraint *got = gt_kcfg_check(&odd[i], &key, &h100, GT_KC_PRUNE);
        TAP_CHECK(got && strcmp(got->name, "in_table") == 0, "%s: %s", fmt(&odd[i]).s,
                  got ? got->name : "accepted");
    }
}

static void kcfg_known_good_accepted(void) {
    /* The model's favourites for 4096^3 on the H100, each dtype. */
    const struct {
        int dtype;
        gt_kcfg cfg;
    } good[] = {
        {GT_DT_F32, CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 8)},
        {GT_DT_F32, CFG(0, 128, 128, 16, 32, 32, 8, 4, 3, 4, 1, 8)},
        {GT_DT_F64, CFG(1, 128, 128, 16, 32, 64, 4, 8, 3, 2, 1, 8)},
        {GT_DT_F64, CFG(0, 128, 64, 16, 32, 32, 8, 4, 3, 2, 1, 8)},
    };
    for (size_t g = 0; g < sizeof good / sizeof good[0]; g++)
        for (int arch = 80; arch <= 90; arch += 10)
            for (int ops = 0; ops < 4; ops++)
                for (int beta0 = 0; beta0 < 2; beta0++) {
                    gt_key key;
                    make_key_dt(&key, arch, good[g].dtype, ops >> 1, ops & 1, 4096, 4096, 4096,
                                16, beta0);
                    const gt_kconstraint *bad = gt_kcfg_check(&good[g].cfg, &key,
                                                              limits_of(arch),
                                                              GT_KC_LEGAL | GT_KC_PRUNE);
                    TAP_CHECK(bad == NULL, "%s sm_%d ops %d beta0 %d: fails %s",
                              fmt(&good[g].cfg).s, arch, ops, beta0, bad ? bad->name : "");
                    TAP_CHECK(passes_all(&good[g].cfg, &key, limits_of(arch)),
                              "%s: a constraint rejects it", fmt(&good[g].cfg).s);
                    /* Legal under the generic limits of its device too. */
                    gt_klimits gen;
                    gt_kcfg_limits_generic(&key, &gen);
                    TAP_CHECK(gt_kcfg_check(&good[g].cfg, &key, &gen, GT_KC_LEGAL) == NULL,
                              "%s: illegal under generic limits", fmt(&good[g].cfg).s);
                }
}

static void kcfg_default_is_legal(void) {
    static const long long edge[] = {1, 2, 3, 7, 16, 17, 64, 1000, 4096, 4097, 65536, 1000003};
    const int nedge = (int)(sizeof edge / sizeof edge[0]);
    /* The devices: H100 and A100 limits, and the generic limits of a few others. */
    static const int archs[] = {90, 80, 86, 75, 70, 60};
    int checked = 0, failures = 0;
    for (int t = 0; t < 4000; t++) {
        long long d[3];
        for (int i = 0; i < 3; i++)
            /* Every third problem from the edge sizes, the rest log-uniform up to 2^20. */
            d[i] = t % 3 == 0 ? edge[rng() % (unsigned)nedge]
                              : (long long)exp((double)(rng() % 20000) / 20000.0 * log(1048576.0));
        int dt = (int)(rng() % GT_NDTYPES), arch = archs[rng() % 6];
        /* The tensor-core types exist on sm_80 and later only (api.c refuses them below). */
        if (gt_dtype_tensor_only(dt) && arch < 80) arch = 80 + 10 * (int)(rng() % 2);
        int es = gt_dtype_in_size(dt) > gt_dtype_out_size(dt) ? gt_dtype_in_size(dt)
                                                              : gt_dtype_out_size(dt);
        /* Every alignment class from the smallest element of the key up to 16. */
        int smallest = gt_dtype_in_size(dt) < gt_dtype_out_size(dt) ? gt_dtype_in_size(dt)
                                                                   : gt_dtype_out_size(dt);
        int align = smallest << (rng() % 5);
        if (align > 16) align = 16;
        (void)es;
        gt_key key;
        make_key_dt(&key, arch >= 90 ? 90 : 80, dt, (int)(rng() % 2), (int)(rng() % 2), d[0], d[1],
                    d[2], align, (int)(rng() % 2));
        gt_klimits lim;
        if (arch == 90 || arch == 80) {
            lim = *limits_of(arch);
        } else {
            key.cc_major = arch / 10, key.cc_minor = arch % 10, key.sm_count = 28;
            gt_kcfg_limits_generic(&key, &lim);
        }
        gt_kcfg c;
        memset(&c, 0x7f, sizeof c);
        gt_kcfg_default(&c, &key);
        const gt_kconstraint *bad = gt_kcfg_check(&c, &key, &lim, GT_KC_LEGAL);
        checked++;
        char shape[64];
        gt_key_shape(&key, shape, sizeof shape);
        if (bad && failures++ < 5)
            TAP_CHECK(bad == NULL, "default %s for %s %s a%d sm_%d: fails %s", fmt(&c).s, shape,
                      gt_dtype_name(dt), align, arch, bad->name);
        /* It sums over K in the order every same-order kernel does, by definition. */
        if (!gt_kcfg_same_order(&c, &key) && failures++ < 5)
            TAP_CHECK(0, "default %s is not same-order", fmt(&c).s);
        /* It parses back: a cache could hold it. */
        char why[128];
        gt_kcfg p;
        if ((gt_kcfg_parse(fmt(&c).s, &p, why, sizeof why) != 0 || !cfg_equal(&c, &p)) &&
            failures++ < 5)
            TAP_CHECK(0, "default %s does not parse back: %s", fmt(&c).s, why);
    }
    TAP_CHECK(failures == 0, "%d of %d defaults illegal", failures, checked);
    /* The widest vector of at most 8 bytes that the alignment allows. */
    const struct {
        int dt, align, vec;
    } vecs[] = {{GT_DT_F32, 4, 1}, {GT_DT_F32, 8, 2}, {GT_DT_F32, 16, 2},
                {GT_DT_F64, 8, 1}, {GT_DT_F64, 16, 1}};
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++) {
        gt_key key;
        gt_kcfg c;
        make_key_dt(&key, 90, vecs[i].dt, 0, 0, 1000, 1000, 1000, vecs[i].align, 0);
        gt_kcfg_default(&c, &key);
        TAP_CHECK(c.vec == vecs[i].vec && c.fam == GT_FAM_SIMT && c.split == 1,
                  "%s a%d: default %s", gt_dtype_name(vecs[i].dt), vecs[i].align, fmt(&c).s);
    }
    /* The tensor-core types: MMA, the widest vector of at most 16 bytes, a K step of two
     * instructions. */
    const struct {
        int dt, align, vec, bk;
    } tc[] = {{GT_DT_BF16, 2, 1, 32}, {GT_DT_F16, 4, 2, 32},       {GT_DT_F16_F32, 16, 8, 32},
              {GT_DT_TF32, 4, 1, 16}, {GT_DT_TF32, 16, 4, 16}, {GT_DT_BF16_F32, 8, 4, 32}};
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        gt_key key;
        gt_kcfg c;
        make_key_dt(&key, 90, tc[i].dt, 1, 0, 4095, 4095, 4095, tc[i].align, 0);
        gt_kcfg_default(&c, &key);
        TAP_CHECK(c.fam == GT_FAM_MMA && c.vec == tc[i].vec && c.bk == tc[i].bk && c.split == 1,
                  "%s a%d: default %s", gt_dtype_name(tc[i].dt), tc[i].align, fmt(&c).s);
    }
}

static void kcfg_validate_messages(void) {
    gt_key key;
    make_key(&key, 0, 0, 4096, 4096, 4096, 16, 0);
    gt_kcfg out;
    char why[512] = "unchanged";
    const char *good = "f0_128x128x16_w32x64_t8x8_s3_v4_k1_r8";
    TAP_CHECK(gt_kcfg_validate(good, &key, &h100, &out, why, sizeof why) == 0, "%s: %s", good,
              why);
    gt_kcfg want = CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 8);
    TAP_CHECK(cfg_equal(&out, &want), "validated as %s", fmt(&out).s);
    /* Prune constraints do not matter: a narrow vector and split-K on a big grid. */
    TAP_CHECK(gt_kcfg_validate("f0_128x128x16_w32x64_t8x8_s3_v1_k2_r1", &key, &h100, &out, why,
                               sizeof why) == 0,
              "prune-only failures refused: %s", why);
    /* Parse errors: "configuration" and the parser's reason, naming the parameter. */
    TAP_CHECK(gt_kcfg_validate("f0_999x64x8_w32x32_t8x4_s3_v4_k1_r8", &key, &h100, &out, why,
                               sizeof why) == -1 &&
                  strncmp(why, "configuration", 13) == 0 && strstr(why, "BM = 999") &&
                  strstr(why, "f0_999x64x8_w32x32_t8x4_s3_v4_k1_r8"),
              "'%s'", why);
    TAP_CHECK(gt_kcfg_validate("128x64x8_t8x4_v4", &key, &h100, &out, why, sizeof why) == -1 &&
                  strstr(why, "128x64x8_t8x4_v4") && strstr(why, "FAM"),
              "old format: '%s'", why);
    TAP_CHECK(gt_kcfg_validate("f0_64x64x8_w32x16_t4x4_s2_v1_k1_r1_q3", &key, &h100, &out, why,
                               sizeof why) == -1 &&
                  strstr(why, "_q3"),
              "trailing parameter: '%s'", why);
    /* Constraint failures: the text, "breaks", the name and the reason. */
    gt_key a4 = key;
    a4.align = 4;
    const char *wide = "f0_64x64x16_w32x16_t4x4_s2_v2_k1_r1";
    TAP_CHECK(gt_kcfg_validate(wide, &a4, &h100, &out, why, sizeof why) == -1 &&
                  strstr(why, wide) && strstr(why, "breaks aligned") &&
                  strstr(why, constraint("aligned")->reason),
              "'%s'", why);
    /* Not whole vectors (64 x 8 / 4 = 128 for 256 threads) on an align-4 key: the first
     * failing legal constraint is reported. */
    TAP_CHECK(gt_kcfg_validate("f0_64x64x8_w32x16_t4x4_s2_v4_k1_r1", &a4, &h100, &out, why,
                               sizeof why) == -1 &&
                  strstr(why, "breaks whole_vectors"),
              "'%s'", why);
    gt_key f64 = key;
    f64.dtype = GT_DT_F64;
    f64.cc_major = 7, f64.cc_minor = 5;
    gt_klimits l75;
    gt_kcfg_limits_generic(&f64, &l75);
    TAP_CHECK(gt_kcfg_validate("f1_128x128x16_w32x64_t4x8_s3_v2_k1_r8", &f64, &l75, &out, why,
                               sizeof why) == -1 &&
                  strstr(why, "breaks family_fits"),
              "DMMA on sm_75: '%s'", why);
    /* A short buffer: terminated. */
    char tiny[12];
    memset(tiny, 'Z', sizeof tiny);
    TAP_CHECK(gt_kcfg_validate(wide, &a4, &h100, &out, tiny, 8) == -1 && tiny[7] == 0 &&
                  tiny[8] == 'Z',
              "short reason buffer");
}

static void kcfg_limits_generic(void) {
    /* Shared memory per block with the opt-in, by compute capability. */
    const struct {
        int major, minor, kib;
    } want[] = {{9, 0, 227}, {8, 0, 163}, {8, 6, 99}, {8, 9, 99}, {7, 0, 96},
                {7, 2, 96},  {7, 5, 64},  {6, 1, 48}, {5, 2, 48}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        gt_key key;
        make_key(&key, 0, 0, 64, 64, 64, 16, 0);
        key.cc_major = want[i].major, key.cc_minor = want[i].minor, key.sm_count = 77;
        gt_klimits lim;
        memset(&lim, 0, sizeof lim);
        gt_kcfg_limits_generic(&key, &lim);
        TAP_CHECK(lim.smem_per_block == want[i].kib * 1024 && lim.max_threads_per_block == 1024 &&
                      lim.regs_per_block == 65536 && lim.regs_per_sm == 65536 &&
                      lim.sm_count == 77,
                  "cc %d.%d: smem %d threads %d regs %d/%d sms %d", want[i].major, want[i].minor,
                  lim.smem_per_block, lim.max_threads_per_block, lim.regs_per_block,
                  lim.regs_per_sm, lim.sm_count);
    }
    /* The fixtures are the generic limits of their devices. */
    gt_key k;
    gt_klimits l;
    fixture_key(&k, 90, 0, 0, 1, 1, 1, 16, 0);
    gt_kcfg_limits_generic(&k, &l);
    TAP_CHECK(memcmp(&l, &h100, sizeof l) == 0, "H100 fixture differs from generic sm_90");
    fixture_key(&k, 80, 0, 0, 1, 1, 1, 16, 0);
    gt_kcfg_limits_generic(&k, &l);
    TAP_CHECK(memcmp(&l, &a100, sizeof l) == 0, "A100 fixture differs from generic sm_80");
}

/* ===== candidate space ===== */

/* Builds the space of key, checks it, and returns its candidates (*out, malloc'd) and
 * count; -1 when building failed. */
static int build(const gt_key *key, const gt_klimits *lim, int max, int flags, gt_cand **out,
                 gt_space_counts *counts) {
    *out = NULL;
    memset(counts, 0x55, sizeof *counts);
    int n = gt_space_build(key, lim, max, flags, out, counts);
    TAP_CHECK(n >= 0 && *out != NULL, "gt_space_build: %d", n);
    if (n >= 0)
        TAP_CHECK(counts->generated == counts->pruned + counts->kept + counts->ranked_out &&
                      counts->kept == n && counts->pruned >= 0 && counts->ranked_out >= 0,
                  "counts: generated %d != pruned %d + kept %d + ranked out %d (returned %d)",
                  counts->generated, counts->pruned, counts->kept, counts->ranked_out, n);
    return n;
}

static void check_space(const gt_key *key, const gt_klimits *lim, int max, int flags,
                        int legal, const gt_cand *all, const char *limname) {
    char shape[64];
    gt_key_shape(key, shape, sizeof shape);
    char what[160];
    snprintf(what, sizeof what, "%s %s a%d b%d %s max %d flags %d", shape,
             gt_dtype_name(key->dtype), key->align, key->beta0, limname, max, flags);
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = build(key, lim, max, flags, &c, &counts);
    if (n < 0 || !c) {
        free(c);
        return;
    }
    /* Counts: the budget, and what was cut. */
    int want = max > 0 && legal > max ? max : legal;
    TAP_CHECK(n == want, "%s: %d candidates of %d legal", what, n, legal);
    TAP_CHECK(max <= 0 || n <= max, "%s: %d over the budget", what, n);
    TAP_CHECK(counts.ranked_out == legal - n, "%s: ranked out %d", what, counts.ranked_out);
    TAP_CHECK(counts.pruned == counts.generated - legal, "%s: pruned %d of %d, %d legal", what,
              counts.pruned, counts.generated, legal);
    /* Every candidate passes every constraint, is estimated as the model says, in order:
     * by estimate, but where the budget cuts the space an unsplit candidate estimated
     * within GT_SPACE_UNSPLIT_NEAR of the best may come earlier, and then none of those
     * waits behind more than GT_SPACE_SPLIT_RUN split ones in a row. */
    const double near = n > 0 ? c[0].est_us * GT_SPACE_UNSPLIT_NEAR : 0.0;
    int near_left = 0;
    for (int i = 0; i < n; i++) near_left += c[i].cfg.split == 1 && c[i].est_us <= near;
    int bad = 0;
    /* The best GEMV candidate, moved up to GT_SPACE_GEMV_BY where the budget cuts the space:
     * the others are in order around it. */
    int moved = -1;
    for (int i = 0; i < n && moved < 0; i++)
        if (c[i].cfg.fam == GT_FAM_GEMV) moved = n < legal && i <= GT_SPACE_GEMV_BY ? i : n;
    for (int i = 0, run = 0; i < n; i++) {
        const gt_kconstraint *b = gt_kcfg_check(&c[i].cfg, key, lim, GT_KC_LEGAL | GT_KC_PRUNE);
        double est = gt_space_estimate_us(&c[i].cfg, key, lim);
        const int is_near = c[i].cfg.split == 1 && c[i].est_us <= near;
        const int p = i - 1 == moved ? i - 2 : i - 1; /* the previous one, the moved one aside */
        int in_order = p < 0 || i == moved || c[p].est_us <= c[i].est_us ||
                       (n < legal && c[p].cfg.split == 1 && c[p].est_us <= near);
        /* Each kind on its own stays in estimate order. */
        for (int j = i - 1; j >= 0 && i != moved; j--)
            if (j != moved && (c[j].cfg.split == 1) == (c[i].cfg.split == 1)) {
                in_order &= c[j].est_us <= c[i].est_us;
                break;
            }
        run = c[i].cfg.split > 1 ? run + 1 : 0;
        near_left -= is_near;
        in_order &= !(n < legal && run > GT_SPACE_SPLIT_RUN && near_left > 0);
        int ok = b == NULL && passes_all(&c[i].cfg, key, lim) && isfinite(c[i].est_us) &&
                 c[i].est_us > 0 && c[i].est_us == est && in_order &&
                 (!(flags & GT_SPACE_SAME_ORDER) || gt_kcfg_same_order(&c[i].cfg, key));
        if (!ok && bad++ < 3)
            TAP_CHECK(ok, "%s: #%d %s fails %s, estimate %g (model %g), previous %g", what, i,
                      fmt(&c[i].cfg).s, b ? b->name : "-", c[i].est_us, est,
                      i ? c[i - 1].est_us : 0.0);
    }
    TAP_CHECK(bad == 0, "%s: %d bad candidates", what, bad);
    /* No duplicates; the kept ones are among all legal ones, with the same estimate. */
    gt_cand *ks = malloc(sizeof *ks * (size_t)(n ? n : 1));
    gt_cand *as = malloc(sizeof *as * (size_t)(legal ? legal : 1));
    unsigned char *kept = calloc((size_t)(legal ? legal : 1), 1);
    TAP_CHECK(ks && as && kept, "out of memory");
    if (!ks || !as || !kept) {
        free(ks), free(as), free(kept), free(c);
        return;
    }
    memcpy(ks, c, sizeof *ks * (size_t)n);
    memcpy(as, all, sizeof *as * (size_t)legal);
    qsort(ks, (size_t)n, sizeof *ks, cand_cmp);
    qsort(as, (size_t)legal, sizeof *as, cand_cmp);
    int dups = 0, missing = 0;
    for (int i = 1; i < n; i++) dups += cand_cmp(&ks[i - 1], &ks[i]) == 0;
    TAP_CHECK(dups == 0, "%s: %d duplicates", what, dups);
    for (int i = 0, j = 0; i < n; i++) {
        while (j < legal && cand_cmp(&as[j], &ks[i]) < 0) j++;
        if (j < legal && cand_cmp(&as[j], &ks[i]) == 0 && as[j].est_us == ks[i].est_us)
            kept[j++] = 1;
        else if (missing++ < 3)
            TAP_CHECK(0, "%s: candidate %s is not in the unlimited space", what, fmt(&ks[i].cfg).s);
    }
    TAP_CHECK(missing == 0, "%s: %d candidates not in the unlimited space", what, missing);
    if (n > 0 && legal > 0)
        TAP_CHECK(c[0].est_us == all[0].est_us, "%s: best %g, unlimited best %g", what,
                  c[0].est_us, all[0].est_us);
    /* The cut: the first pass takes at most 3 of a tile shape in rank order, and of
     * those that differ only in rasterization the best one, then the budget is filled in
     * rank order. So a candidate left out has 3 kept ones of its shape ranked as well or
     * better, or a kept one that differs only in rasterization and ranks as well or
     * better, or ranks behind every kept one; and a shape with more than 3 kept means
     * every shape got its 3. */
    if (n < legal) {
        double worst = c[n - 1].est_us;
        int over3 = 0;
        for (int i = 0, run = 1; i < n; i++, run++) {
            if (i > 0 && !same_shape(&ks[i - 1].cfg, &ks[i].cfg)) run = 1;
            over3 |= run > 3;
        }
        int wrong = 0, nsplit = 0;
        int nbig = 0;
        for (int i = 0; i < n; i++) nsplit += c[i].cfg.split > 1, nbig += is_big(&c[i].cfg);
        TAP_CHECK(nbig <= (max < 8 ? 1 : max / 8), "%s: %d SIMT 16 x 8 tiles kept", what, nbig);
        for (int j = 0; j < legal; j++) {
            if (kept[j]) continue;
            int better = 0, all3 = 0, sib = 0;
            for (int i = 0; i < n; i++)
                if (same_shape(&c[i].cfg, &as[j].cfg)) {
                    all3++;
                    better += c[i].est_us <= as[j].est_us;
                    sib |= c[i].cfg.bk == as[j].cfg.bk && c[i].cfg.stages == as[j].cfg.stages &&
                           c[i].est_us <= as[j].est_us;
                }
            /* Or it splits K and the first pass had filled the split-K share (all but
             * a quarter of the budget, which is kept for unsplit kernels); or it is a
             * SIMT 16 x 8 thread tile and their share (an eighth, at least 1) is full. */
            int split_full = as[j].cfg.split > 1 && nsplit >= max - max / 4;
            int big_full = is_big(&as[j].cfg) && nbig >= (max < 8 ? 1 : max / 8);
            int ok = worst <= as[j].est_us ||
                     ((better >= 3 || sib) && (!over3 || all3 >= 3 || sib)) || split_full ||
                     big_full;
            if (!ok && wrong++ < 3)
                TAP_CHECK(ok, "%s: %s (%g) left out with %d of its shape kept (%d better), "
                          "worst kept %g, a shape over 3: %d",
                          what, fmt(&as[j].cfg).s, as[j].est_us, all3, better, worst, over3);
        }
        TAP_CHECK(wrong == 0, "%s: %d left out wrongly", what, wrong);
    }
    free(ks), free(as), free(kept), free(c);
}

typedef struct {
    int arch, dtype, opa, opb;
    long long m, n, k;
    int align;
} space_case;

static void kcfg_space_candidates(void) {
    static const space_case cases[] = {
        {90, GT_DT_F32, 0, 0, 1, 1, 1, 16},         {80, GT_DT_F32, 0, 0, 1, 1, 1, 4},
        {90, GT_DT_F32, 0, 0, 4096, 4096, 4096, 16}, {80, GT_DT_F32, 1, 1, 4096, 4096, 4096, 8},
        {90, GT_DT_F32, 0, 0, 17, 33, 65, 4},       {80, GT_DT_F32, 1, 0, 1000, 1000, 1000, 16},
        {90, GT_DT_F32, 0, 1, 4097, 129, 257, 8},   {80, GT_DT_F32, 0, 1, 16, 4096, 4096, 16},
        {90, GT_DT_F32, 1, 1, 65536, 7, 3, 4},      {80, GT_DT_F32, 0, 0, 1, 65536, 1, 16},
        {90, GT_DT_F32, 1, 0, 2, 2, 100000, 8},     {90, GT_DT_F32, 0, 0, 256, 256, 65536, 16},
        {90, GT_DT_F32, 0, 0, 96, 200, 300, 16},    {90, GT_DT_F32, 0, 0, 40, 1920, 4096, 16},
        {90, GT_DT_F64, 0, 0, 4096, 4096, 4096, 16}, {80, GT_DT_F64, 1, 0, 1000, 1000, 1000, 8},
        {90, GT_DT_F64, 0, 1, 17, 33, 65, 8},       {80, GT_DT_F64, 0, 0, 256, 256, 65536, 16},
        {75, GT_DT_F64, 0, 0, 4096, 4096, 4096, 16}, {75, GT_DT_F32, 1, 1, 333, 444, 555, 4},
    };
    for (size_t s = 0; s < sizeof cases / sizeof cases[0]; s++) {
        const space_case *cs = &cases[s];
        gt_key key;
        gt_klimits gen;
        const gt_klimits *lim;
        const char *limname;
        if (cs->arch == 75) {
            make_key_sm75(&key, cs->dtype, cs->m, cs->n, cs->k, cs->align);
            key.opa = cs->opa, key.opb = cs->opb;
            gt_kcfg_limits_generic(&key, &gen);
            lim = &gen, limname = "sm_75";
        } else {
            make_key_dt(&key, cs->arch, cs->dtype, cs->opa, cs->opb, cs->m, cs->n, cs->k,
                        cs->align, (int)(s % 2));
            lim = limits_of(cs->arch), limname = cs->arch >= 90 ? "H100" : "A100";
        }
        for (int flags = 0; flags <= GT_SPACE_SAME_ORDER; flags++) {
            /* The unlimited space, then the default budget, the smallest, none, and each
             * side of the count of legal candidates. */
            gt_cand *all = NULL;
            gt_space_counts counts;
            int legal = build(&key, lim, 0, flags, &all, &counts);
            TAP_CHECK(legal >= 1 && counts.ranked_out == 0, "%s sm_%d case %zu flags %d: %d legal",
                      gt_dtype_name(cs->dtype), cs->arch, s, flags, legal);
            if (legal >= 1) {
                /* Two builds are equal, in order and estimates. */
                gt_cand *again = NULL;
                gt_space_counts c2;
                int n2 = build(&key, lim, 0, flags, &again, &c2);
                TAP_CHECK(n2 == legal && again &&
                              memcmp(again, all, sizeof *all * (size_t)legal) == 0 &&
                              memcmp(&c2, &counts, sizeof c2) == 0,
                          "case %zu: two builds differ", s);
                free(again);
                const int maxes[] = {32, 1, 0, legal - 1, legal, legal + 1};
                for (int x = 0; x < 6; x++)
                    if (maxes[x] >= 0)
                        check_space(&key, lim, maxes[x], flags, legal, all, limname);
            }
            free(all);
        }
    }
}

/* Counts candidates of the space of key with a property. */
typedef struct {
    int n, dmma, mma, split, odd, not_same_order;
    gt_cand first_odd;
    int first_odd_rank;
} space_tally;

static space_tally tally(const gt_key *key, const gt_klimits *lim, int max, int flags) {
    space_tally t;
    memset(&t, 0, sizeof t);
    t.first_odd_rank = -1;
    gt_cand *c = NULL;
    gt_space_counts counts;
    t.n = build(key, lim, max, flags, &c, &counts);
    for (int i = 0; i < t.n; i++) {
        t.dmma += c[i].cfg.fam == GT_FAM_DMMA;
        t.mma += c[i].cfg.fam == GT_FAM_MMA;
        t.split += c[i].cfg.split > 1;
        t.not_same_order += !gt_kcfg_same_order(&c[i].cfg, key);
        if (is_odd_tile(&c[i].cfg) && t.odd++ == 0) t.first_odd = c[i], t.first_odd_rank = i;
    }
    free(c);
    return t;
}

#define DEFAULT_MAX_CANDIDATES 32

/* GEMV (byte-bound shapes): the cost model ranks it first on decode steps, LM heads, a row
 * vector and a tiny output with a huge K, in each layout (the large operand contiguous
 * along K or along the long side, a narrow class from the small operand's leading
 * dimension); the default budget keeps a quarter for GEMV with the best of them third at
 * the latest; no GEMV where neither M nor N is at most 16. */
static void kcfg_space_gemv(void) {
    static const struct {
        int dt, opa, opb;
        long long m, n, k;
        int align;
    } first[] = {
        {GT_DT_BF16, 1, 0, 4096, 1, 4096, 16},    {GT_DT_BF16, 1, 0, 128256, 1, 4096, 16},
        {GT_DT_BF16, 0, 0, 1, 4096, 4096, 2},     {GT_DT_F32, 0, 0, 4, 8, 3000000, 16},
        {GT_DT_F64, 0, 0, 4, 8, 3000000, 16},     {GT_DT_F32, 0, 1, 1, 10240, 8192, 4},
        {GT_DT_BF16, 0, 1, 1, 128256, 4096, 2},   {GT_DT_F16, 1, 0, 14336, 1, 4096, 16},
    };
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) {
        gt_key key;
        make_key_dt(&key, 90, first[i].dt, first[i].opa, first[i].opb, first[i].m, first[i].n,
                    first[i].k, first[i].align, 1);
        gt_cand *c = NULL;
        gt_space_counts counts;
        int n = gt_space_build(&key, &h100, 0, 0, &c, &counts);
        TAP_CHECK(n > 0 && c[0].cfg.fam == GT_FAM_GEMV, "%s %lldx%lldx%lld: first is %s",
                  gt_dtype_name(first[i].dt), first[i].m, first[i].n, first[i].k,
                  n > 0 ? fmt(&c[0].cfg).s : "none");
        free(c);
        c = NULL;
        n = gt_space_build(&key, &h100, DEFAULT_MAX_CANDIDATES, 0, &c, &counts);
        int gemv = 0, at = -1;
        for (int j = 0; j < n; j++) {
            gemv += c[j].cfg.fam == GT_FAM_GEMV;
            if (at < 0 && c[j].cfg.fam == GT_FAM_GEMV) at = j;
        }
        TAP_CHECK(gemv >= DEFAULT_MAX_CANDIDATES / 4 && at >= 0 && at <= GT_SPACE_GEMV_BY,
                  "%lldx%lldx%lld: %d GEMV in the budget, first at %d", first[i].m, first[i].n,
                  first[i].k, gemv, at);
        free(c);
    }
    /* Where the tile families' model ranks first, the budget still keeps GEMV candidates
     * (f32, 16 tokens with the weight contiguous along N) and times one third at the
     * latest. */
    gt_key key;
    make_key_dt(&key, 90, GT_DT_F32, 0, 1, 16, 4096, 4096, 16, 1);
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(&key, &h100, DEFAULT_MAX_CANDIDATES, 0, &c, &counts);
    TAP_CHECK(n == DEFAULT_MAX_CANDIDATES && c[0].cfg.fam != GT_FAM_GEMV &&
                  c[GT_SPACE_GEMV_BY].cfg.fam == GT_FAM_GEMV,
              "16x4096x4096: %s first, %s third", n ? fmt(&c[0].cfg).s : "-",
              n > 2 ? fmt(&c[2].cfg).s : "-");
    free(c);
    /* bf16 decode with 8 and 16 tokens: GEMV on tensor cores first (FMA would be bound by
     * the arithmetic); f32 never on tensor cores. */
    for (int s16 = 8; s16 <= 16; s16 += 8) {
        make_key_dt(&key, 90, GT_DT_BF16, 1, 0, 4096, s16, 4096, 16, 1);
        c = NULL;
        n = gt_space_build(&key, &h100, 0, 0, &c, &counts);
        TAP_CHECK(n > 0 && c[0].cfg.fam == GT_FAM_GEMV && c[0].cfg.tcore,
                  "bf16 4096x%dx4096: first %s", s16, n ? fmt(&c[0].cfg).s : "-");
        free(c);
    }
    make_key_dt(&key, 90, GT_DT_F32, 1, 0, 4096, 16, 4096, 16, 1);
    c = NULL;
    n = gt_space_build(&key, &h100, 0, 0, &c, &counts);
    int tc = 0;
    for (int j = 0; j < n; j++) tc += c[j].cfg.tcore;
    TAP_CHECK(n > 0 && tc == 0, "f32 4096x16x4096: %d on tensor cores", tc);
    free(c);
    /* No GEMV with both sides over 16, nor with N = 17. */
    static const long long none[][3] = {{17, 4096, 4096}, {4096, 17, 4096}, {64, 64, 64}};
    for (int i = 0; i < 3; i++) {
        make_key_dt(&key, 90, GT_DT_BF16, 1, 0, none[i][0], none[i][1], none[i][2], 16, 1);
        c = NULL;
        n = gt_space_build(&key, &h100, 0, 0, &c, &counts);
        int gemv = 0;
        for (int j = 0; j < n; j++) gemv += c[j].cfg.fam == GT_FAM_GEMV;
        TAP_CHECK(n > 0 && gemv == 0, "%lldx%lldx%lld: %d GEMV of %d", none[i][0], none[i][1],
                  none[i][2], gemv, n);
        free(c);
    }
}

static void kcfg_space_families(void) {
    /* f64 on sm_90 and sm_80: DMMA candidates, in the default budget too. */
    for (int arch = 80; arch <= 90; arch += 10) {
        gt_key key;
        make_key_dt(&key, arch, GT_DT_F64, 0, 0, 4096, 4096, 4096, 16, 0);
        space_tally all = tally(&key, limits_of(arch), 0, 0),
                    top = tally(&key, limits_of(arch), DEFAULT_MAX_CANDIDATES, 0),
                    same = tally(&key, limits_of(arch), 0, GT_SPACE_SAME_ORDER);
        TAP_CHECK(all.dmma > 0 && all.dmma < all.n, "f64 sm_%d: %d DMMA of %d", arch, all.dmma,
                  all.n);
        TAP_CHECK(top.dmma > 0, "f64 sm_%d: no DMMA among the best %d", arch, top.n);
        TAP_CHECK(same.n > 0 && same.dmma == 0 && same.split == 0 && same.not_same_order == 0,
                  "f64 sm_%d same order: %d, %d DMMA, %d split-K", arch, same.n, same.dmma,
                  same.split);
        printf("# f64 4096^3 sm_%d: %d candidates, %d DMMA; best %d: %d DMMA; same order %d\n",
               arch, all.n, all.dmma, top.n, top.dmma, same.n);
    }
    /* f32 never, on any shape. */
    static const long long shapes[][3] = {{4096, 4096, 4096}, {256, 256, 65536}, {17, 33, 65},
                                          {1, 1, 1}};
    for (int s = 0; s < 4; s++)
        for (int arch = 80; arch <= 90; arch += 10) {
            gt_key key;
            make_key_dt(&key, arch, GT_DT_F32, 0, 0, shapes[s][0], shapes[s][1], shapes[s][2], 16,
                        0);
            space_tally t = tally(&key, limits_of(arch), 0, 0);
            TAP_CHECK(t.n > 0 && t.dmma == 0, "f32 %lldx%lldx%lld sm_%d: %d DMMA of %d",
                      shapes[s][0], shapes[s][1], shapes[s][2], arch, t.dmma, t.n);
        }
    /* f64 on sm_75: no DMMA. */
    gt_key k75;
    gt_klimits l75;
    make_key_sm75(&k75, GT_DT_F64, 4096, 4096, 4096, 16);
    gt_kcfg_limits_generic(&k75, &l75);
    space_tally t75 = tally(&k75, &l75, 0, 0);
    TAP_CHECK(t75.n > 0 && t75.dmma == 0, "f64 sm_75: %d DMMA of %d", t75.dmma, t75.n);
}

static void kcfg_space_split_k(void) {
    /* 256 x 256 x 65536: 4 tiles of 128 x 128 cannot fill 132 SMs, K can. */
    gt_key key;
    make_key(&key, 0, 0, 256, 256, 65536, 16, 0);
    space_tally top = tally(&key, &h100, DEFAULT_MAX_CANDIDATES, 0);
    TAP_CHECK(top.split > 0, "256x256x65536: no split-K among the best %d", top.n);
    space_tally same = tally(&key, &h100, 0, GT_SPACE_SAME_ORDER);
    TAP_CHECK(same.n > 0 && same.split == 0 && same.not_same_order == 0,
              "256x256x65536 same order: %d candidates, %d split-K", same.n, same.split);
    printf("# 256x256x65536 f32 H100: %d of the best %d split K\n", top.split, top.n);
    /* 4096^3: the tiles fill the device alone, on either. */
    for (int arch = 80; arch <= 90; arch += 10)
        for (int dt = GT_DT_F32; dt <= GT_DT_F64; dt++) {
            make_key_dt(&key, arch, dt, 0, 0, 4096, 4096, 4096, 16, 0);
            space_tally all = tally(&key, limits_of(arch), 0, 0);
            TAP_CHECK(all.n > 0 && all.split == 0, "4096^3 %s sm_%d: %d of %d split K",
                      gt_dtype_name(dt), arch, all.split, all.n);
        }
}

/* f64 128x4096x4096 NT on the H100: split-K ranks first, but DMMA 64 x 64 unsplit
 * (estimated within 1.3x of the best) ran fastest (2026-11-25) and, last in estimate
 * order, was never compiled within the budget. The best unsplit one now comes 4th. */
static void kcfg_space_unsplit_early(void) {
    gt_key key;
    make_key_dt(&key, 90, GT_DT_F64, 0, 1, 128, 4096, 4096, 16, 1);
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = build(&key, &h100, DEFAULT_MAX_CANDIDATES, 0, &c, &counts);
    int first_unsplit = -1, splits_before = 0;
    for (int i = 0; i < n && first_unsplit < 0; i++) {
        if (c[i].cfg.split == 1) first_unsplit = i;
        else splits_before++;
    }
    TAP_CHECK(n > 0 && c[0].cfg.split > 1, "f64 128x4096x4096 NT: best ranked %s",
              n > 0 ? fmt(&c[0].cfg).s : "-");
    TAP_CHECK(first_unsplit == GT_SPACE_SPLIT_RUN && splits_before == GT_SPACE_SPLIT_RUN &&
                  c[first_unsplit].est_us <= c[0].est_us * GT_SPACE_UNSPLIT_NEAR,
              "f64 128x4096x4096 NT: first unsplit candidate at %d, want %d", first_unsplit,
              GT_SPACE_SPLIT_RUN);
    if (first_unsplit >= 0)
        printf("# f64 128x4096x4096 NT: %s at %d (%.1f us; best %.1f)\n",
               fmt(&c[first_unsplit].cfg).s, first_unsplit, c[first_unsplit].est_us, c[0].est_us);
    free(c);
}

/* What the H100 measured (2026-11-22, every candidate timed) and the model must keep:
 * f64 65536 x 64 x 64 is bound by its bytes, yet DMMA (29 us) beat DFMA (44 us), so the
 * faster arithmetic ranks first; f64 1024^3 ran in 47 us as 128 x 64 tiles unsplit and
 * 61 us as 128 x 128 tiles split in 2 (the same blocks and FLOPs per block), so split-K's
 * serial reduction ranks the unsplit tiles first. */
static void kcfg_space_model_measured(void) {
    gt_key key;
    make_key_dt(&key, 90, GT_DT_F64, 0, 0, 65536, 64, 64, 16, 1);
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(&key, &h100, DEFAULT_MAX_CANDIDATES, 0, &c, &counts);
    TAP_CHECK(n > 0 && c[0].cfg.fam == GT_FAM_DMMA, "f64 65536x64x64: first %s",
              n > 0 ? fmt(&c[0].cfg).s : "-");
    free(c);
    make_key_dt(&key, 90, GT_DT_F64, 0, 0, 1024, 1024, 1024, 16, 1);
    n = gt_space_build(&key, &h100, DEFAULT_MAX_CANDIDATES, 0, &c, &counts);
    TAP_CHECK(n > 0 && c[0].cfg.split == 1, "f64 1024^3: first %s", n > 0 ? fmt(&c[0].cfg).s : "-");
    gt_kcfg split2 = CFG(GT_FAM_DMMA, 128, 128, 16, 32, 64, 4, 8, 3, 2, 2, 1),
            unsplit = CFG(GT_FAM_DMMA, 128, 64, 16, 32, 32, 4, 4, 3, 2, 1, 1);
    double ts = gt_space_estimate_us(&split2, &key, &h100), tu = gt_space_estimate_us(&unsplit, &key, &h100);
    TAP_CHECK(tu < ts, "f64 1024^3: unsplit 128x64 %.1f us, 128x128 split in 2 %.1f us", tu, ts);
    free(c);
    /* f64 3000^3: 128 x 96 DMMA tiles, whose last tile row idles two of four warp rows
     * (2% of the grid), are kept and ranked among the timed; SIMT's
     * 128 x 128 tiles on f32 3000^3, idle warps the same way, stay pruned. */
    gt_kcfg dmma = CFG(GT_FAM_DMMA, 128, 96, 16, 32, 48, 4, 6, 3, 2, 1, 8),
            simt = CFG(GT_FAM_SIMT, 128, 128, 16, 32, 64, 8, 8, 2, 4, 1, 8);
    make_key_dt(&key, 90, GT_DT_F64, 0, 0, 3000, 3000, 3000, 16, 1);
    n = gt_space_build(&key, &h100, DEFAULT_MAX_CANDIDATES, 0, &c, &counts);
    int at = -1;
    for (int i = 0; i < n && at < 0; i++)
        if (cfg_equal(&c[i].cfg, &dmma)) at = i;
    TAP_CHECK(at >= 0 && at < 8, "f64 3000^3: %s ranks %d", fmt(&dmma).s, at);
    free(c);
    make_key_dt(&key, 90, GT_DT_F32, 0, 0, 3000, 3000, 3000, 16, 1);
    const gt_kconstraint *bad = gt_kcfg_check(&simt, &key, &h100, GT_KC_LEGAL | GT_KC_PRUNE);
    TAP_CHECK(bad && strcmp(bad->name, "warp_not_idle") == 0, "f32 3000^3: %s fails %s",
              fmt(&simt).s, bad ? bad->name : "nothing");
    /* bf16 in the 2-byte class (H100, bench/train.txt's 383 x 6143 x 1535 NN): MMA's
     * element-by-element copies took 128 us in 192 x 96 tiles, WGMMA after its aligned
     * packs 46 us. The model sees the copies' load count, puts that MMA kernel over 100 us
     * (over twice its 16-byte class twin) and ranks WGMMA first. */
    gt_kcfg narrow = CFG(GT_FAM_MMA, 192, 96, 32, 48, 48, 6, 3, 3, 1, 1, 1), wide = narrow;
    wide.vec = 8;
    make_key_dt(&key, 90, GT_DT_BF16, 0, 0, 383, 6143, 1535, 2, 1);
    gt_key k16;
    make_key_dt(&k16, 90, GT_DT_BF16, 0, 0, 384, 6144, 1536, 16, 1);
    double tn = gt_space_estimate_us(&narrow, &key, &h100), tw = gt_space_estimate_us(&wide, &k16, &h100);
    TAP_CHECK(tn > 100.0 && tn > 2.0 * tw, "bf16 383x6143x1535 2-byte MMA %.1f us, 16-byte %.1f us", tn, tw);
    n = gt_space_build(&key, &h100, DEFAULT_MAX_CANDIDATES, 0, &c, &counts);
    TAP_CHECK(n > 0 && c[0].cfg.fam == GT_FAM_WGMMA, "bf16 383x6143x1535 2-byte class: first %s",
              n > 0 ? fmt(&c[0].cfg).s : "-");
    free(c);
    /* tf32 in the 4-byte class (H100, 997 x 1009 x 1013 TT): MMA's copies of one element
     * each bound its generic 128 x 64 tiles at 77.5 us; WGMMA's 64 x 128 tiles after their
     * aligned packs ran 28 us (tuned). The model sees the copies' count, puts that MMA
     * kernel over 55 us and ranks WGMMA first, in the whole space and between the two. */
    gt_kcfg mma4 = CFG(GT_FAM_MMA, 128, 64, 16, 32, 32, 4, 2, 3, 1, 1, 1),
            wg4 = CFG(GT_FAM_WGMMA, 64, 128, 32, 64, 64, 2, 1, 4, 1, 1, 1);
    mma4.generic = wg4.generic = 1;
    make_key_dt(&key, 90, GT_DT_TF32, 1, 1, 997, 1009, 1013, 4, 1);
    const double tm4 = gt_space_estimate_us(&mma4, &key, &h100), tw4 = gt_space_estimate_us(&wg4, &key, &h100);
    TAP_CHECK(tm4 > 55.0 && tw4 < tm4, "tf32 997x1009x1013 TT 4-byte class: MMA %.1f us, WGMMA %.1f us",
              tm4, tw4);
    n = gt_space_build(&key, &h100, DEFAULT_MAX_CANDIDATES, 0, &c, &counts);
    TAP_CHECK(n > 0 && c[0].cfg.fam == GT_FAM_WGMMA, "tf32 997x1009x1013 TT 4-byte class: first %s",
              n > 0 ? fmt(&c[0].cfg).s : "-");
    free(c);
    /* Generic SIMT kernels with copies of 4 bytes (H100, f32 4099 x 257 x 3001 TT in the
     * 4-byte class): 64 x 24 tiles with scalar copies ran 287 us exact, 403 generic; 16 x
     * 96 tiles with packed 16-byte copies 292 exact, 297 generic. The model ranks the
     * exact pair as measured, and the generic pair too. In the 16-byte class a generic
     * kernel's estimate is its exact twin's. */
    gt_kcfg scalar = CFG(GT_FAM_SIMT, 64, 24, 16, 64, 12, 4, 6, 2, 1, 1, 8),
            packed = CFG(GT_FAM_SIMT, 16, 96, 16, 16, 48, 4, 6, 4, 4, 1, 8);
    gt_kcfg scalar_g = scalar, packed_g = packed;
    scalar_g.generic = packed_g.generic = 1;
    make_key_dt(&key, 90, GT_DT_F32, 1, 1, 4099, 257, 3001, 4, 1);
    const double se = gt_space_estimate_us(&scalar, &key, &h100), sg = gt_space_estimate_us(&scalar_g, &key, &h100),
                 pe = gt_space_estimate_us(&packed, &key, &h100), pg = gt_space_estimate_us(&packed_g, &key, &h100);
    TAP_CHECK(se < pe && pg < sg && sg > 1.15 * se && pg < 1.05 * pe,
              "f32 4099x257x3001 TT: scalar copies %.1f exact, %.1f generic; packed %.1f, %.1f",
              se, sg, pe, pg);
    make_key_dt(&key, 90, GT_DT_F32, 1, 1, 4096, 256, 3000, 16, 1);
    scalar.vec = 4, scalar_g.vec = 4;
    TAP_CHECK(gt_space_estimate_us(&scalar, &key, &h100) == gt_space_estimate_us(&scalar_g, &key, &h100),
              "16-byte class: a generic kernel estimated as its exact twin");
    /* TMA rows across two L2 lines (H100, bench/runs/2026-11-27-h100-raster.txt): bf16
     * 11008 x 4096 x K TN, WGMMA 128 x 256 tiles, alone and clustered by 2. K = 3000 (a
     * pitch of 6000 bytes): 669 and 449 us; K = 4096: 474 and 476 us. */
    gt_kcfg alone = CFG(GT_FAM_WGMMA, 128, 256, 64, 128, 128, 1, 2, 4, 8, 1, 4), pair = alone;
    pair.tm = 2;
    gt_key k3000, k4096;
    make_key_dt(&k3000, 90, GT_DT_BF16, 1, 0, 11008, 4096, 3000, 16, 1);
    make_key_dt(&k4096, 90, GT_DT_BF16, 1, 0, 11008, 4096, 4096, 16, 1);
    double r3000 = gt_space_estimate_us(&alone, &k3000, &h100) / gt_space_estimate_us(&pair, &k3000, &h100),
           r4096 = gt_space_estimate_us(&alone, &k4096, &h100) / gt_space_estimate_us(&pair, &k4096, &h100);
    TAP_CHECK(r3000 > 1.25 && r4096 < 1.1,
              "bf16 11008x4096xK TN, 128x256 alone / clustered: K 3000 %.2f (measured 1.49), "
              "K 4096 %.2f (1.00)", r3000, r4096);
    /* DMMA's round trips (H100, f64 1024 x 128 x 1024 NN, 32 x 32 tiles of 8 x 16 warps,
     * one block per SM, L2 emptied before each run): 16-deep K steps in 4 stages 23.5 us,
     * 32-deep 18.7 us. A DMMA block has STAGES - 1 steps in flight, so its K loop takes at
     * least K / BK / (STAGES - 1) round trips of about 1 us; SIMT's registers hold one
     * more step, and its thin tiles are not held to that floor. */
    gt_kcfg d16 = CFG(GT_FAM_DMMA, 32, 32, 16, 8, 16, 1, 2, 4, 2, 1, 1), d32 = d16;
    d32.bk = 32;
    gt_key kthin;
    make_key_dt(&kthin, 90, GT_DT_F64, 0, 0, 1024, 128, 1024, 16, 1);
    const double e16 = gt_space_estimate_us(&d16, &kthin, &h100),
                 e32 = gt_space_estimate_us(&d32, &kthin, &h100);
    TAP_CHECK(e16 >= 1024.0 / 16 / 3 && e32 < e16,
              "f64 1024x128x1024 NN, DMMA 32x32 in 4 stages: BK 16 %.1f us (at least 64 / 3 round "
              "trips; measured 23.5), BK 32 %.1f us (18.7)", e16, e32);
    gt_kcfg s16 = CFG(GT_FAM_SIMT, 32, 32, 16, 16, 8, 2, 2, 2, 1, 1, 1);
    gt_key kthin32 = kthin;
    kthin32.dtype = GT_DT_F32;
    const double es = gt_space_estimate_us(&s16, &kthin32, &h100);
    TAP_CHECK(isfinite(es) && es < 1024.0 / 16,
              "f32 1024x128x1024 NN, SIMT 32x32x16 in 2 stages: %.1f us, not held to 64 round trips",
              es);
}

/* For random table combinations on assorted keys: how many verdicts of the constraints
 * named in names[0..n) change when the fields named in vary[0..nvary) take other values
 * (the first five reported), how many were checked, and how many passed. */
typedef struct {
    int differ, checked, passed;
} verdicts;
static verdicts verdicts_under(const char *const *names, int n, const char *const *vary,
                               int nvary) {
    static const long long dims[] = {1, 17, 96, 255, 1000, 3000, 4096, 65536};
    static const int dts[] = {GT_DT_F32, GT_DT_F64, GT_DT_TF32, GT_DT_BF16, GT_DT_F32_3XTF32};
    verdicts r = {0, 0, 0};
    int found = 0;
    for (int t = 0; t < n; t++) found += constraint(names[t]) != NULL;
    TAP_CHECK(found == n, "%d of %d names are constraints", found, n);
    for (int it = 0; it < 20000; it++) {
        gt_key key;
        int arch = rng() % 2 ? 90 : 80;
        make_key_dt(&key, arch, dts[rng() % 5], rng() % 2, rng() % 2, dims[rng() % 8],
                    dims[rng() % 8], dims[rng() % 8], rng() % 2 ? 16 : 4, rng() % 2);
        gt_kcfg c, d;
        random_combination(&c);
        d = c;
        for (int v = 0; v < nvary; v++)
            for (int i = 0; i < gt_nkparams; i++)
                if (strcmp(gt_kparams[i].name, vary[v]) == 0)
                    gt_kcfg_set(&d, i, gt_kparams[i].values[rng() % (unsigned)gt_kparams[i].nvalues]);
        for (int t = 0; t < n; t++) {
            const gt_kconstraint *k = constraint(names[t]);
            if (!k) continue;
            r.checked++;
            int vc = k->ok(&c, &key, limits_of(arch)), vd = k->ok(&d, &key, limits_of(arch));
            r.passed += vc;
            if (vc != vd && r.differ++ < 5)
                TAP_CHECK(0, "%s: %s and %s differ", k->name, fmt(&c).s, fmt(&d).s);
        }
    }
    return r;
}

/* The constraints the space tests once per tile shape (space.h) must not read BK,
 * stages, split, raster or the vector width. */
static void kcfg_space_tile_only_constraints(void) {
    static const char *const vary[] = {"BK", "STAGES", "SPLIT", "RASTER", "VEC"};
    verdicts r = verdicts_under(gt_space_tile_only, gt_space_ntile_only, vary, 5);
    TAP_CHECK(r.differ == 0 && r.checked > 100000, "%d of %d verdicts changed with the variant fields",
              r.differ, r.checked);
}

/* The selective constraints' verdicts hold across STAGES and VEC (space.h): the space
 * tests them once per tile shape, BK, split and raster. */
static void kcfg_space_selective_constraints(void) {
    static const char *const vary[] = {"STAGES", "VEC"};
    verdicts r = verdicts_under(gt_space_selective, gt_space_nselective, vary, 2);
    /* Both verdicts occur, so the comparison sees each side. */
    TAP_CHECK(r.differ == 0 && r.checked > 50000 && r.passed > 0 && r.passed < r.checked,
              "%d of %d verdicts changed with STAGES and VEC (%d passed)", r.differ, r.checked,
              r.passed);
}

static void kcfg_space_odd_thread_tiles(void) {
    /* 40 x 1920 x 4096: 40 rows are 8 lanes x 5, so a thread tile of 5 rows is ranked
     * among the best. */
    gt_key key;
    make_key(&key, 0, 0, 40, 1920, 4096, 16, 0);
    space_tally top = tally(&key, &h100, DEFAULT_MAX_CANDIDATES, 0);
    TAP_CHECK(top.odd > 0, "40x1920x4096: no thread tile of 3 or 5 among the best %d", top.n);
    if (top.odd)
        printf("# 40x1920x4096 f32 H100: %d odd thread tiles of the best %d, first #%d %s\n",
               top.odd, top.n, top.first_odd_rank, fmt(&top.first_odd.cfg).s);
    /* Small odd shapes: generated, legal (the space checks them), though not ranked high. */
    static const long long small[][3] = {{96, 200, 300}, {24, 40, 64}};
    for (int s = 0; s < 2; s++) {
        make_key(&key, 0, 0, small[s][0], small[s][1], small[s][2], 16, 0);
        space_tally all = tally(&key, &h100, 0, 0);
        TAP_CHECK(all.odd > 0, "%lldx%lldx%lld: no thread tile of 3 or 5 in %d", small[s][0],
                  small[s][1], small[s][2], all.n);
        if (all.odd) {
            const gt_kconstraint *b =
                gt_kcfg_check(&all.first_odd.cfg, &key, &h100, GT_KC_LEGAL | GT_KC_PRUNE);
            TAP_CHECK(b == NULL, "%s fails %s", fmt(&all.first_odd.cfg).s, b->name);
        }
    }
    /* An exact odd tile: 24 x 40 as 3 x 5 thread tiles of 8 x 4 lanes in 2 warps. It is
     * legal; the tuner prunes it only because 32 x 32 tiles would give 2 blocks. */
    make_key(&key, 0, 0, 24, 40, 64, 16, 0);
    gt_kcfg exact = CFG(0, 24, 40, 32, 24, 20, 3, 5, 2, 4, 1, 1);
    const gt_kconstraint *b = gt_kcfg_check(&exact, &key, &h100, GT_KC_LEGAL);
    TAP_CHECK(b == NULL, "%s fails %s", fmt(&exact).s, b ? b->name : "");
    b = gt_kcfg_check(&exact, &key, &h100, GT_KC_PRUNE);
    TAP_CHECK(b && strcmp(b->name, "fills_sms") == 0, "%s: prune check says %s", fmt(&exact).s,
              b ? b->name : "nothing");
}

static void kcfg_space_tiny_and_big(void) {
    /* The smallest and a big problem always have candidates, on both devices and both
     * dtypes; a big space is built quickly (it runs on every tuning miss). */
    const long long dims[2] = {1, 4096};
    for (int i = 0; i < 2; i++)
        for (int l = 0; l < 2; l++)
            for (int dt = GT_DT_F32; dt <= GT_DT_F64; dt++) {
                gt_key key;
                make_key_dt(&key, l ? 80 : 90, dt, 0, 0, dims[i], dims[i], dims[i], 16, 1);
                gt_cand *c = NULL;
                gt_space_counts counts;
                double t0 = now_s();
                int n = gt_space_build(&key, l ? &a100 : &h100, DEFAULT_MAX_CANDIDATES, 0, &c,
                                       &counts);
                double secs = now_s() - t0;
                TAP_CHECK(n >= 1, "%lld^3: %d candidates", dims[i], n);
                TAP_CHECK(secs < 0.5, "%lld^3 %s: built in %.3f s", dims[i], gt_dtype_name(dt),
                          secs);
                printf("# %lld^3 %s %s: %d candidates (generated %d, pruned %d, ranked out %d) "
                       "in %.3f s, best estimate %s %.1f us\n",
                       dims[i], gt_dtype_name(dt), l ? "A100" : "H100", n, counts.generated,
                       counts.pruned, counts.ranked_out, secs, n >= 1 ? fmt(&c[0].cfg).s : "-",
                       n >= 1 ? c[0].est_us : 0.0);
                free(c);
            }
}

/* ===== derived values, options, help ===== */

/* The tensor-core types: only MMA candidates (and MMA never for f32 or f64), on sm_80 and
 * later only; MMA without split-K keeps the default's summation order; its shared memory
 * and register estimate as gemm_mma.cu and ptxas have them. */
static void kcfg_space_mma(void) {
    static const int types[] = {GT_DT_TF32, GT_DT_F16, GT_DT_F16_F32, GT_DT_BF16, GT_DT_BF16_F32,
                                GT_DT_F32, GT_DT_F64};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        gt_key key;
        int align = 16;
        make_key_dt(&key, 90, types[t], 0, 1, 4096, 4096, 4096, align, 1);
        gt_cand *c = NULL;
        gt_space_counts counts;
        int n = gt_space_build(&key, &h100, 32, 0, &c, &counts), mma = 0, wg = 0;
        for (int i = 0; i < n; i++) {
            mma += c[i].cfg.fam == GT_FAM_MMA;
            wg += c[i].cfg.fam == GT_FAM_WGMMA;
        }
        int tensor = gt_dtype_tensor_only(types[t]) != 0;
        /* On the H100 (9.0) the tensor types get WGMMA (tf32 NT through transposed
         * copies), the 16-bit ones MMA too; f32 and f64 neither. */
        int want_wg = tensor;
        TAP_CHECK(n == 32 && mma + wg == (tensor ? n : 0) && (wg > 0) == want_wg && (!tensor || mma > 0 || want_wg),
                  "%s 4096^3: %d candidates, %d MMA, %d WGMMA", gt_dtype_name(types[t]), n, mma, wg);
        free(c);
        if (tensor) {
            /* TN gets WGMMA too; on sm_80 no type does. */
            gt_key k2 = key;
            k2.opa = 1, k2.opb = 0;
            n = gt_space_build(&k2, &h100, 32, 0, &c, &counts), wg = 0;
            for (int i = 0; i < n; i++) wg += c[i].cfg.fam == GT_FAM_WGMMA;
            TAP_CHECK(wg > 0, "%s 4096^3 TN on 9.0: %d of %d WGMMA", gt_dtype_name(types[t]), wg, n);
            free(c);
            k2.cc_major = 8;
            gt_klimits lim80;
            gt_kcfg_limits_generic(&k2, &lim80);
            n = gt_space_build(&k2, &lim80, 0, 0, &c, &counts), wg = 0;
            for (int i = 0; i < n; i++) wg += c[i].cfg.fam == GT_FAM_WGMMA;
            TAP_CHECK(n > 0 && wg == 0, "%s on 8.0: %d candidates, %d WGMMA", gt_dtype_name(types[t]), n, wg);
            free(c);
        }
        /* Below sm_80 the tensor types have no candidate at all. */
        if (gt_dtype_tensor_only(types[t])) {
            key.cc_major = 7, key.cc_minor = 5;
            gt_klimits lim;
            gt_kcfg_limits_generic(&key, &lim);
            c = NULL;
            n = gt_space_build(&key, &lim, 32, 0, &c, &counts);
            TAP_CHECK(n == 0, "%s on sm_75: %d candidates", gt_dtype_name(types[t]), n);
            free(c);
        }
    }
    gt_kcfg m = CFG(2, 128, 128, 32, 64, 64, 8, 4, 3, 8, 1, 8);
    gt_key key;
    make_key_dt(&key, 90, GT_DT_F16, 0, 0, 4096, 4096, 4096, 16, 1);
    TAP_CHECK(gt_kcfg_same_order(&m, &key), "MMA without split-K is same-order");
    m.split = 2;
    TAP_CHECK(!gt_kcfg_same_order(&m, &key), "MMA with split-K is same-order");
    m.split = 1;
    /* A: [BK][BM + 8], B: [BN][BK + 8] halves, 3 stages: 3 x 2 x (32 x 136 + 128 x 40). */
    TAP_CHECK(gt_kcfg_smem_bytes(&m, &key) == 56832, "f16 NN smem %d", gt_kcfg_smem_bytes(&m, &key));
    make_key_dt(&key, 90, GT_DT_TF32, 1, 1, 4096, 4096, 4096, 16, 1);
    m.bk = 16;
    /* tf32 TT: A [BM][BK + 4], B [BK][BN + 8] floats: 3 x 4 x (128 x 20 + 16 x 136). */
    TAP_CHECK(gt_kcfg_smem_bytes(&m, &key) == 56832, "tf32 TT smem %d", gt_kcfg_smem_bytes(&m, &key));
    /* ptxas (sm_90, 2026-11-21): 254 registers for 8 x 4 fragments of f16 in 128 x 128 x 32
     * tiles of 4 warps; the estimate must keep it legal and within a few of that. */
    m.bk = 32;
    make_key_dt(&key, 90, GT_DT_F16, 0, 0, 4096, 4096, 4096, 16, 1);
    int r = gt_kcfg_regs_estimate(&m, &key);
    TAP_CHECK(r >= 240 && r <= 255 && !gt_kcfg_check(&m, &key, &h100, GT_KC_LEGAL),
              "8 x 4 f16 estimate %d", r);
    /* The same tile with 2-byte copies through registers (32 more per thread) spilled:
     * its estimate is over 255, so it is refused. */
    make_key_dt(&key, 90, GT_DT_F16, 0, 0, 4095, 4095, 4095, 2, 1);
    m.vec = 1;
    const gt_kconstraint *bad = gt_kcfg_check(&m, &key, &h100, GT_KC_LEGAL);
    TAP_CHECK(bad && strcmp(bad->name, "regs_fit") == 0, "8 x 4 f16 staged: %s",
              bad ? bad->name : "legal");
}

static void kcfg_derived_values(void) {
    gt_key key;
    make_key(&key, 0, 0, 1000, 33, 65, 16, 0);
    /* f0_128x32x8_w32x16_t4x4_s3_v4_k1_r1: 4 x 2 warps. */
    gt_kcfg c = CFG(0, 128, 32, 8, 32, 16, 4, 4, 3, 4, 1, 1);
    TAP_CHECK(gt_kcfg_threads(&c) == 32 * (128 / 32) * (32 / 16), "threads %d",
              gt_kcfg_threads(&c));
    unsigned grid[3], block[3];
    gt_kcfg_grid(&c, &key, grid, block);
    /* x: every tile, ceil(1000 / 128) x ceil(33 / 32) = 8 x 2; y: one split. */
    TAP_CHECK(grid[0] == 16 && grid[1] == 1 && grid[2] == 1, "grid %u %u %u", grid[0], grid[1],
              grid[2]);
    TAP_CHECK(block[0] == 256 && block[1] == 1 && block[2] == 1, "block %u %u %u", block[0],
              block[1], block[2]);
    TAP_CHECK(gt_kcfg_workspace_bytes(&c, &key) == 0, "workspace without split-K: %zu",
              gt_kcfg_workspace_bytes(&c, &key));
    /* Split-K: y is the split, the workspace holds every split's partial tile and a counter
     * per tile. */
    gt_kcfg s4 = c;
    s4.split = 4;
    gt_kcfg_grid(&s4, &key, grid, block);
    TAP_CHECK(grid[0] == 16 && grid[1] == 4 && grid[2] == 1 && block[0] == 256,
              "split grid %u %u %u", grid[0], grid[1], grid[2]);
    TAP_CHECK(gt_kcfg_workspace_bytes(&s4, &key) == (size_t)4096 * 4 + 16 * 4 * 128 * 32 * 4,
              "f32 workspace %zu", gt_kcfg_workspace_bytes(&s4, &key));
    gt_key k64 = key;
    k64.dtype = GT_DT_F64;
    TAP_CHECK(gt_kcfg_workspace_bytes(&s4, &k64) == (size_t)4096 * 4 + 16 * 4 * 128 * 32 * 8,
              "f64 workspace %zu", gt_kcfg_workspace_bytes(&s4, &k64));
    TAP_CHECK(gt_kcfg_workspace_bytes(&c, &k64) == 0, "f64 workspace without split-K");
    /* WGMMA is persistent: at most one block per SM (of the key's 132); 3 x 1 warpgroups. */
    gt_key kw;
    make_key_dt(&kw, 90, GT_DT_BF16, 0, 0, 4096, 4096, 4096, 16, 1);
    gt_kcfg w = CFG(3, 128, 256, 64, 128, 128, 1, 2, 4, 8, 1, 8);
    gt_kcfg_grid(&w, &kw, grid, block);
    TAP_CHECK(kw.sm_count == 132 && grid[0] == 132 && grid[1] == 1 && block[0] == 384,
              "WGMMA 4096^3 (512 tiles): grid %u %u, block %u", grid[0], grid[1], block[0]);
    make_key_dt(&kw, 90, GT_DT_BF16, 0, 0, 1000, 1000, 1000, 16, 1);
    gt_kcfg_grid(&w, &kw, grid, block);
    TAP_CHECK(grid[0] == 8 * 4, "WGMMA 1000^3 (32 tiles): grid %u", grid[0]);
    /* WGMMA tf32 NN with split-K: counters, 8 x 4 tiles x 4 splits x 64 x 128 floats of
     * partials, then A's transposed copy (8192 x 512 floats); B is read as stored. */
    {
        gt_key kt;
        make_key_dt(&kt, 90, GT_DT_TF32, 0, 0, 512, 512, 8192, 16, 1);
        gt_kcfg ws = CFG(3, 64, 128, 32, 64, 64, 2, 1, 4, 4, 4, 1);
        gt_kpack pk;
        size_t off = 4096 * 4 + (size_t)8 * 4 * 4 * 64 * 128 * 4;
        TAP_CHECK(gt_kcfg_pack_layout(&ws, &kt, &pk) && pk.mode_a == GT_KPACK_TRANSPOSE &&
                      pk.mode_b == GT_KPACK_NONE && pk.off_a == off && pk.lda == 8192 &&
                      pk.cols_a == 512 && gt_kcfg_workspace_bytes(&ws, &kt) == off + (size_t)8192 * 512 * 4,
                  "tf32 split-K copy layout: modes %d %d, A at %zu, ld %lld, workspace %zu", pk.mode_a,
                  pk.mode_b, pk.off_a, pk.lda, gt_kcfg_workspace_bytes(&ws, &kt));
    }
    /* Clusters of 2: pairs of vertically adjacent tiles, 1000 rows: ceil(8 / 2) x 4 = 16
     * pairs, 32 blocks; 4096^3: 16 x 16 pairs, 66 clusters of the 132 SMs. */
    w.tm = 2;
    gt_kcfg_grid(&w, &kw, grid, block);
    TAP_CHECK(grid[0] == 2 * 16, "WGMMA 1000^3 in clusters of 2: grid %u", grid[0]);
    make_key_dt(&kw, 90, GT_DT_BF16, 0, 0, 1100, 1000, 1000, 16, 1);
    gt_kcfg_grid(&w, &kw, grid, block);
    TAP_CHECK(grid[0] == 2 * 5 * 4, "WGMMA 1100 rows (9 tile rows) in clusters of 2: grid %u", grid[0]);
    make_key_dt(&kw, 90, GT_DT_BF16, 0, 0, 4096, 4096, 4096, 16, 1);
    gt_kcfg_grid(&w, &kw, grid, block);
    TAP_CHECK(grid[0] == 132, "WGMMA 4096^3 in clusters of 2: grid %u", grid[0]);
    /* WGMMA's TMA-store epilogue (16-bit C, beta 0, 16-byte class): two 8 KiB staging
     * boxes per consumer warpgroup beside the stages, where they fit in 232448 bytes. */
    {
        const struct {
            int dt, align, beta0, bm, bn, wn, stages, tma, bytes;
            long long m;
        } e[] = {
            /* 4 x 48 KiB stages + 1152, + 2 x 2 x 8 KiB: 230528, fits. */
            {GT_DT_BF16, 16, 1, 256, 128, 64, 4, 1, 197760 + 32768, 0},
            {GT_DT_F16, 16, 1, 128, 256, 128, 4, 1, 197760 + 32768, 0},
            /* One consumer warpgroup: one pair of boxes. */
            {GT_DT_BF16, 16, 1, 128, 64, 64, 4, 1, 4 * 24576 + 1152 + 16384, 0},
            /* 5 x 40 KiB + 1152 + 32 KiB = 238720: too much; registers store C. */
            {GT_DT_BF16, 16, 1, 192, 128, 64, 5, 0, 5 * 40960 + 1152, 0},
            /* beta != 0, 32-bit C, under 16 bytes: registers store C. */
            {GT_DT_BF16, 16, 0, 256, 128, 64, 4, 0, 197760, 0},
            {GT_DT_BF16_F32, 16, 1, 256, 128, 64, 4, 0, 197760, 0},
            {GT_DT_BF16, 8, 1, 256, 128, 64, 4, 0, 197760, 0},
            /* M = 601 (ldc 608): TMA would store the 16 bytes of rows 600 .. 607. */
            {GT_DT_BF16, 16, 1, 256, 128, 64, 4, 0, 197760, 601},
        };
        for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) {
            gt_key ke;
            make_key_dt(&ke, 90, e[i].dt, 0, 0, e[i].m ? e[i].m : 4096, 4096, 4096, e[i].align,
                        e[i].beta0);
            gt_kcfg c3 = CFG(3, e[i].bm, e[i].bn, 64, e[i].bm, e[i].wn, 1, e[i].wn / 64, e[i].stages,
                             e[i].align / 2, 1, 8);
            TAP_CHECK(gt_kcfg_wgmma_tma_store(&c3, &ke) == e[i].tma &&
                          gt_kcfg_smem_bytes(&c3, &ke) == e[i].bytes,
                      "WGMMA epilogue case %zu: TMA store %d (want %d), smem %d (want %d)", i,
                      gt_kcfg_wgmma_tma_store(&c3, &ke), e[i].tma, gt_kcfg_smem_bytes(&c3, &ke),
                      e[i].bytes);
        }
        /* Other families never store through TMA. */
        gt_key ke;
        make_key_dt(&ke, 90, GT_DT_BF16, 0, 0, 4096, 4096, 4096, 16, 1);
        gt_kcfg m2 = CFG(2, 128, 128, 32, 64, 64, 4, 8, 3, 8, 1, 8);
        TAP_CHECK(!gt_kcfg_wgmma_tma_store(&m2, &ke), "MMA with TMA store");
    }
    /* SIMT shared memory: STAGES x BK rows of each operand; 4 elements of padding only
     * for the operand whose stored contiguous dimension is k: A transposed, B as stored. */
    const struct {
        int dt, opa, opb, bytes;
    } smem[] = {
        {GT_DT_F32, 0, 0, 3 * 8 * (128 + 32 + 4) * 4},
        {GT_DT_F32, 1, 0, 3 * 8 * (128 + 4 + 32 + 4) * 4},
        {GT_DT_F32, 0, 1, 3 * 8 * (128 + 32) * 4},
        {GT_DT_F32, 1, 1, 3 * 8 * (128 + 4 + 32) * 4},
        {GT_DT_F64, 0, 0, 3 * 8 * (128 + 32 + 4) * 8},
        {GT_DT_F64, 1, 0, 3 * 8 * (128 + 4 + 32 + 4) * 8},
        {GT_DT_F64, 0, 1, 3 * 8 * (128 + 32) * 8},
        {GT_DT_F64, 1, 1, 3 * 8 * (128 + 4 + 32) * 8},
    };
    for (size_t i = 0; i < sizeof smem / sizeof smem[0]; i++) {
        gt_key k = key;
        k.dtype = smem[i].dt, k.opa = smem[i].opa, k.opb = smem[i].opb;
        TAP_CHECK(gt_kcfg_smem_bytes(&c, &k) == smem[i].bytes, "%s %c%c: smem %d, want %d",
                  gt_dtype_name(smem[i].dt), smem[i].opa ? 'T' : 'N', smem[i].opb ? 'T' : 'N',
                  gt_kcfg_smem_bytes(&c, &k), smem[i].bytes);
    }
    /* DMMA keeps each operand in its stored orientation, rows padded by 4 doubles:
     * A as stored is [k][m + 4], transposed [m][k + 4]; B as stored [n][k + 4], transposed
     * [k][n + 4]. */
    gt_kcfg dmma = CFG(1, 128, 32, 16, 32, 32, 4, 4, 3, 2, 1, 1);
    const struct {
        int opa, opb, bytes;
    } dsmem[] = {
        {0, 0, 3 * (16 * (128 + 4) + 32 * (16 + 4)) * 8},
        {1, 0, 3 * (128 * (16 + 4) + 32 * (16 + 4)) * 8},
        {0, 1, 3 * (16 * (128 + 4) + 16 * (32 + 4)) * 8},
        {1, 1, 3 * (128 * (16 + 4) + 16 * (32 + 4)) * 8},
    };
    for (size_t i = 0; i < sizeof dsmem / sizeof dsmem[0]; i++) {
        gt_key k = key;
        k.dtype = GT_DT_F64, k.opa = dsmem[i].opa, k.opb = dsmem[i].opb;
        TAP_CHECK(gt_kcfg_smem_bytes(&dmma, &k) == dsmem[i].bytes, "DMMA %c%c: smem %d, want %d",
                  dsmem[i].opa ? 'T' : 'N', dsmem[i].opb ? 'T' : 'N',
                  gt_kcfg_smem_bytes(&dmma, &k), dsmem[i].bytes);
    }
    /* Stages scale it. */
    gt_kcfg s2 = c;
    s2.stages = 2;
    TAP_CHECK(3 * gt_kcfg_smem_bytes(&s2, &key) == 2 * gt_kcfg_smem_bytes(&c, &key), "stages");
    /* Registers: more than the accumulators, doubles take two. */
    TAP_CHECK(gt_kcfg_regs_estimate(&c, &key) > c.tm * c.tn &&
                  gt_kcfg_regs_estimate(&c, &k64) > gt_kcfg_regs_estimate(&c, &key),
              "registers %d, f64 %d", gt_kcfg_regs_estimate(&c, &key),
              gt_kcfg_regs_estimate(&c, &k64));
    gt_kcfg d = CFG(1, 64, 64, 16, 32, 32, 4, 4, 3, 2, 1, 1);
    TAP_CHECK(gt_kcfg_regs_estimate(&d, &k64) > 4 * d.tm * d.tn, "DMMA registers %d",
              gt_kcfg_regs_estimate(&d, &k64));
    /* Minimum blocks per SM of the launch bound: 1..8, fewer for bigger blocks. */
    gt_kcfg big = CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 8);
    int mb_small = gt_kcfg_min_blocks(&c, &key), mb_big = gt_kcfg_min_blocks(&big, &key);
    TAP_CHECK(mb_small >= 1 && mb_small <= 8 && mb_big >= 1 && mb_big <= mb_small,
              "min blocks %d, %d", mb_small, mb_big);
    /* 8 x 8 f32 threads in 256-thread blocks: the bound asks for 2 blocks, so ptxas keeps
     * them to 128 registers (at 129 only one block fits an SM, measured 30 against 40
     * TFLOP/s on the H100), and the estimate says so too, whichever operand is staged. */
    for (int ops = 0; ops < 4; ops++) {
        gt_key kk = key;
        kk.opa = ops >> 1, kk.opb = ops & 1;
        TAP_CHECK(gt_kcfg_min_blocks(&big, &kk) == 2 && gt_kcfg_regs_estimate(&big, &kk) == 128,
                  "8x8 ops %d: min blocks %d, registers %d", ops, gt_kcfg_min_blocks(&big, &kk),
                  gt_kcfg_regs_estimate(&big, &kk));
    }
    /* Doubles need twice the registers: one block of 256 threads. */
    TAP_CHECK(gt_kcfg_min_blocks(&big, &k64) == 1, "8x8 f64 min blocks %d",
              gt_kcfg_min_blocks(&big, &k64));
    /* Same order: SIMT without split-K only. */
    gt_kcfg dm = c;
    dm.fam = GT_FAM_DMMA;
    TAP_CHECK(gt_kcfg_same_order(&c, &key) && !gt_kcfg_same_order(&s4, &key) && !gt_kcfg_same_order(&dm, &k64),
              "same order");
}

/* SIMT on odd leading dimensions: 16-byte vectors read copies of A and B (COPY, as
 * stored, leading dimensions rounded up to 4 floats or 2 doubles) after the split-K
 * counters and partials; the natural width copies nothing; other widths and families
 * are not copied. */
/* f32_3xtf32: SIMT everywhere (exact fp32 is one of its kernels), MMA on sm_80 and later
 * (low parts split in registers, no operand copies), WGMMA on 9.0 with a second copy of
 * every stage for the low parts and tf32's transposed operand copies, never DMMA; at
 * 4096^3 the model puts WGMMA first, at 17x33x65 SIMT or MMA (one small tile); the
 * same-order space (background tuning) is SIMT alone. */
static void kcfg_split3(void) {
    gt_key key;
    make_key_dt(&key, 90, GT_DT_F32_3XTF32, 0, 0, 4096, 4096, 4096, 16, 1);
    gt_kcfg w = CFG(GT_FAM_WGMMA, 128, 128, 32, 128, 64, 1, 1, 3, 4, 1, 1);
    TAP_CHECK(!gt_kcfg_check(&w, &key, &h100, GT_KC_LEGAL), "WGMMA 128x128x32 s3 legal on sm_90: %s",
              gt_kcfg_check(&w, &key, &h100, GT_KC_LEGAL) ? gt_kcfg_check(&w, &key, &h100, GT_KC_LEGAL)->name : "");
    /* Tiles of 3 stages twice, 1024 to align them, 128 for the mbarriers. */
    TAP_CHECK(gt_kcfg_smem_bytes(&w, &key) == 2 * 3 * 256 * 32 * 4 + 1024 + 128,
              "smem %d", gt_kcfg_smem_bytes(&w, &key));
    gt_key tf = key;
    tf.dtype = GT_DT_TF32;
    TAP_CHECK(gt_kcfg_smem_bytes(&w, &tf) == 3 * 256 * 32 * 4 + 1024 + 128, "tf32 smem %d",
              gt_kcfg_smem_bytes(&w, &tf));
    /* Two sets of accumulators: at most 96 per consumer thread (tf32: 128). */
    gt_kcfg wide = CFG(GT_FAM_WGMMA, 128, 128, 32, 128, 128, 1, 2, 3, 4, 1, 1);
    const gt_kconstraint *why = gt_kcfg_check(&wide, &key, &h100, GT_KC_LEGAL);
    TAP_CHECK(why && strcmp(why->name, "wgmma_tile") == 0 && !gt_kcfg_check(&wide, &tf, &h100, GT_KC_LEGAL),
              "w128x128: %s", why ? why->name : "legal");
    /* 4 stages of 256 x 64 tiles do not fit twice. */
    gt_kcfg big = CFG(GT_FAM_WGMMA, 256, 64, 32, 256, 64, 1, 1, 4, 4, 1, 1);
    const gt_kconstraint *bad = gt_kcfg_check(&big, &key, &h100, GT_KC_LEGAL);
    TAP_CHECK(bad && strcmp(bad->name, "smem_fits") == 0 && !gt_kcfg_check(&big, &tf, &h100, GT_KC_LEGAL),
              "256x64 s4: %s", bad ? bad->name : "legal");
    /* NN: A is read from a transposed copy, as tf32's. */
    gt_kpack pk;
    TAP_CHECK(gt_kcfg_pack_layout(&w, &key, &pk) && pk.mode_a == GT_KPACK_TRANSPOSE &&
                  pk.mode_b == GT_KPACK_NONE,
              "NN copies: %d %d", pk.mode_a, pk.mode_b);
    gt_kcfg m = CFG(GT_FAM_MMA, 64, 64, 16, 32, 32, 4, 2, 3, 4, 1, 1),
            d = CFG(GT_FAM_DMMA, 64, 64, 16, 32, 16, 4, 2, 3, 2, 1, 1),
            simt = CFG(0, 128, 128, 16, 32, 64, 8, 8, 2, 4, 1, 1);
    bad = gt_kcfg_check(&m, &key, &h100, GT_KC_LEGAL);
    TAP_CHECK(!bad && !gt_kcfg_pack_layout(&m, &key, &pk), "MMA: %s, no copies", bad ? bad->name : "legal");
    /* Its registers: tf32's and the low parts of a slice's fragments and the partials. */
    TAP_CHECK(gt_kcfg_regs_estimate(&m, &key) == gt_kcfg_regs_estimate(&m, &tf) + 2 * 4 + 4 * 2 + 4 * 4 * 2,
              "MMA registers %d, tf32 %d", gt_kcfg_regs_estimate(&m, &key), gt_kcfg_regs_estimate(&m, &tf));
    bad = gt_kcfg_check(&d, &key, &h100, GT_KC_LEGAL);
    TAP_CHECK(bad && strcmp(bad->name, "family_fits") == 0, "DMMA: %s", bad ? bad->name : "legal");
    TAP_CHECK(!gt_kcfg_check(&simt, &key, &h100, GT_KC_LEGAL), "SIMT legal");
    gt_key k80;
    make_key_dt(&k80, 80, GT_DT_F32_3XTF32, 0, 0, 4096, 4096, 4096, 16, 1);
    bad = gt_kcfg_check(&w, &k80, &a100, GT_KC_LEGAL);
    TAP_CHECK(bad && strcmp(bad->name, "family_fits") == 0, "WGMMA on sm_80: %s", bad ? bad->name : "legal");
    TAP_CHECK(!gt_kcfg_check(&m, &k80, &a100, GT_KC_LEGAL), "MMA on sm_80 legal");
    /* The default kernel is exact fp32 (SIMT), legal anywhere. */
    gt_kcfg def;
    gt_kcfg_default(&def, &key);
    TAP_CHECK(def.fam == GT_FAM_SIMT && !gt_kcfg_check(&def, &key, &h100, GT_KC_LEGAL), "default family %d", def.fam);
    /* The space: WGMMA first at 4096^3, SIMT at 17x33x65; SIMT only on sm_80 and in the
     * same-order space. */
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(&key, &h100, DEFAULT_MAX_CANDIDATES, 0, &c, &counts), wg = 0, dm = 0;
    for (int i = 0; i < n; i++) wg += c[i].cfg.fam == GT_FAM_WGMMA, dm += c[i].cfg.fam == GT_FAM_DMMA;
    TAP_CHECK(n > 0 && c[0].cfg.fam == GT_FAM_WGMMA && dm == 0, "4096^3: first %s, %d WGMMA of %d",
              n > 0 ? fmt(&c[0].cfg).s : "-", wg, n);
    free(c);
    make_key_dt(&key, 90, GT_DT_F32_3XTF32, 0, 0, 17, 33, 65, 4, 1);
    n = gt_space_build(&key, &h100, DEFAULT_MAX_CANDIDATES, 0, &c, &counts);
    TAP_CHECK(n > 0 && (c[0].cfg.fam == GT_FAM_SIMT || c[0].cfg.fam == GT_FAM_MMA), "17x33x65: first %s",
              n > 0 ? fmt(&c[0].cfg).s : "-");
    free(c);
    space_tally t80 = tally(&k80, &a100, 0, 0), same = tally(&k80, &a100, 0, GT_SPACE_SAME_ORDER);
    make_key_dt(&key, 90, GT_DT_F32_3XTF32, 0, 0, 4096, 4096, 4096, 16, 1);
    space_tally same90 = tally(&key, &h100, 0, GT_SPACE_SAME_ORDER);
    TAP_CHECK(t80.n > 0 && t80.dmma == 0 && t80.mma > 0 && same.n > 0 && same.mma == 0 &&
                  same90.n > 0 && same90.mma == 0 && same90.not_same_order == 0,
              "sm_80: %d candidates, %d MMA; same order: %d and %d on sm_90, %d and %d MMA", t80.n,
              t80.mma, same.n, same90.n, same.mma, same90.mma);
}

static void kcfg_simt_pack(void) {
    gt_key key;
    make_key(&key, 0, 0, 1000, 999, 1001, 4, 0);
    gt_kcfg c = CFG(0, 128, 128, 16, 32, 64, 8, 8, 2, 4, 4, 1);
    gt_kpack pk;
    TAP_CHECK(gt_kcfg_simt_packs(&c, &key) && !gt_kcfg_check(&c, &key, &h100, GT_KC_LEGAL | GT_KC_PRUNE),
              "f32 v4 on the 4-byte class: packs, legal");
    /* 8 x 8 tiles x 4 splits x 128 x 128 floats of partials after 4096 counters. */
    size_t off = (size_t)4096 * 4 + (size_t)8 * 8 * 4 * 128 * 128 * 4;
    size_t bytes_a = (size_t)1000 * 1001 * 4, bytes_b = (size_t)1004 * 999 * 4;
    int laid = gt_kcfg_pack_layout(&c, &key, &pk);
    TAP_CHECK(laid && pk.mode_a == GT_KPACK_COPY && pk.mode_b == GT_KPACK_COPY && pk.off_a == off &&
                  pk.lda == 1000 && pk.rows_a == 1000 && pk.cols_a == 1001 && pk.ldb == 1004 &&
                  pk.rows_b == 1001 && pk.cols_b == 999 &&
                  pk.off_b == off + (bytes_a + 255) / 256 * 256 &&
                  gt_kcfg_workspace_bytes(&c, &key) == pk.off_b + bytes_b,
              "f32 NN copies: modes %d %d, A at %zu ld %lld, B at %zu ld %lld, workspace %zu",
              pk.mode_a, pk.mode_b, pk.off_a, pk.lda, pk.off_b, pk.ldb,
              gt_kcfg_workspace_bytes(&c, &key));
    /* TT: A is K x M stored (1001 rows -> ld 1004), B N x K (999 -> 1000). */
    make_key(&key, 1, 1, 1000, 999, 1001, 4, 0);
    c.split = 1;
    laid = gt_kcfg_pack_layout(&c, &key, &pk);
    TAP_CHECK(laid && pk.off_a == (size_t)4096 * 4 && pk.lda == 1004 && pk.cols_a == 1000 &&
                  pk.ldb == 1000 && pk.cols_b == 1001,
              "f32 TT copies: A at %zu ld %lld x %lld, B ld %lld x %lld", pk.off_a, pk.lda,
              pk.cols_a, pk.ldb, pk.cols_b);
    /* The class's own width, or the 16-byte class: nothing copied. */
    gt_kcfg n1 = c;
    n1.vec = 1;
    TAP_CHECK(!gt_kcfg_simt_packs(&n1, &key) && !gt_kcfg_pack_layout(&n1, &key, &pk) &&
                  gt_kcfg_workspace_bytes(&n1, &key) == 0,
              "v1 on the 4-byte class copies nothing");
    key.align = 16;
    TAP_CHECK(!gt_kcfg_simt_packs(&c, &key) && !gt_kcfg_pack_layout(&c, &key, &pk),
              "v4 on the 16-byte class copies nothing");
    /* f64: 2 doubles on the 8-byte class; DMMA never copies. */
    make_key_dt(&key, 90, GT_DT_F64, 0, 0, 1000, 999, 1001, 8, 1);
    gt_kcfg d = CFG(0, 64, 64, 16, 32, 16, 4, 4, 2, 2, 1, 1);
    TAP_CHECK(gt_kcfg_simt_packs(&d, &key) && gt_kcfg_pack_layout(&d, &key, &pk) && pk.ldb == 1002,
              "f64 v2 on the 8-byte class packs, B's ld %lld", pk.ldb);
    d.fam = GT_FAM_DMMA, d.tm = 4, d.tn = 2;
    TAP_CHECK(!gt_kcfg_simt_packs(&d, &key) && gt_kcfg_check(&d, &key, &h100, GT_KC_LEGAL),
              "DMMA v2 on the 8-byte class: not packed, not legal");
    /* The space offers both widths on an odd class; at 4095^3 the copies rank first. */
    make_key(&key, 0, 0, 4095, 4095, 4095, 4, 1);
    gt_cand *cands = NULL;
    gt_space_counts counts;
    int n = gt_space_build(&key, &h100, 0, 0, &cands, &counts), v1 = 0, v4 = 0;
    for (int i = 0; i < n; i++) v1 += cands[i].cfg.vec == 1, v4 += cands[i].cfg.vec == 4;
    TAP_CHECK(v1 > 0 && v4 > 0 && n > 0 && gt_kcfg_simt_packs(&cands[0].cfg, &key),
              "4095^3: %d with 1 float, %d with 4 (packed); first %s", v1, v4,
              n > 0 ? fmt(&cands[0].cfg).s : "-");
    free(cands);
}

static void kcfg_nvrtc_options(void) {
    gt_key key;
    make_key_dt(&key, 90, GT_DT_F64, 1, 0, 4097, 129, 257, 8, 1);
    gt_kcfg c = CFG(1, 64, 32, 16, 32, 16, 4, 2, 3, 1, 2, 4);
    char storage[32][64];
    const char *opts[32];
    int n = gt_kcfg_options(&c, &key, storage, opts, 32);
    TAP_CHECK(n == 12 + gt_nkparams, "%d options", n);
    char minb[32], smem[32], wsc[32], sgr[32];
    snprintf(minb, sizeof minb, "-DGT_MINB=%d", gt_kcfg_min_blocks(&c, &key));
    snprintf(smem, sizeof smem, "-DGT_SMEM_CHECK=%d", gt_kcfg_smem_bytes(&c, &key));
    snprintf(wsc, sizeof wsc, "-DGT_WS_COUNTERS=%d", GT_KCFG_WS_COUNTERS);
    snprintf(sgr, sizeof sgr, "-DGT_SPLIT_GROUP=%d", gt_kcfg_split_group(&c));
    const char *want_problem[] = {"-DGT_DT=1",    "-DGT_M=4097", "-DGT_N=129",
                                  "-DGT_K=257",   "-DGT_OPA=1",  "-DGT_OPB=0",
                                  "-DGT_BETA0=1", "-DGT_ALIGN=8", minb,
                                  smem,           wsc,           sgr};
    for (int w = 0; w < 12; w++) {
        int found = 0;
        for (int i = 0; i < n; i++) found |= strcmp(opts[i], want_problem[w]) == 0;
        TAP_CHECK(found, "no %s", want_problem[w]);
    }
    for (int p = 0; p < gt_nkparams; p++) {
        char want[64];
        snprintf(want, sizeof want, "-DGT_%s=%d", gt_kparams[p].name, gt_kcfg_get(&c, p));
        int found = 0;
        for (int i = 0; i < n; i++) found |= strcmp(opts[i], want) == 0;
        TAP_CHECK(found, "no %s", want);
    }
    TAP_CHECK(n > 0 && strcmp(opts[0], "-DGT_DT=1") == 0, "first %s", n > 0 ? opts[0] : "");
    /* Generic: nothing of the sizes reaches the compiler, GT_GENERIC=1 does. */
    gt_kcfg g = c;
    g.generic = 1;
    int ng = gt_kcfg_options(&g, &key, storage, opts, 32), sizes = 0, flag = 0;
    for (int i = 0; i < ng; i++) {
        sizes += strncmp(opts[i], "-DGT_M=", 7) == 0 || strncmp(opts[i], "-DGT_N=", 7) == 0 ||
                 strncmp(opts[i], "-DGT_K=", 7) == 0;
        flag += strcmp(opts[i], "-DGT_GENERIC=1") == 0;
    }
    TAP_CHECK(ng == n - 3 && sizes == 0 && flag == 1, "generic: %d options, %d sizes, GT_GENERIC=1 %d",
              ng, sizes, flag);
    /* Its program is the class's: the same text for two shapes; an exact one's differs. */
    gt_key other = key;
    other.m = 5, other.n = 6, other.k = 7;
    gt_program p1, p2;
    gt_kern_program(&g, &key, &p1);
    gt_kern_program(&g, &other, &p2);
    TAP_CHECK(strcmp(p1.text, p2.text) == 0 && strstr(p1.text, "4097") == NULL &&
                  strstr(p1.text, "_g1") != NULL,
              "generic programs '%s', '%s'", p1.text, p2.text);
    gt_kern_program(&c, &key, &p1);
    gt_kern_program(&c, &other, &p2);
    TAP_CHECK(strcmp(p1.text, p2.text) != 0, "exact programs '%s', '%s'", p1.text, p2.text);
    /* max is respected. */
    const char *few[3] = {NULL, NULL, NULL};
    TAP_CHECK(gt_kcfg_options(&c, &key, storage, few, 2) == 2 && few[2] == NULL,
              "max 2 not respected");
}

/* The SIMT launch bound counts the copies of under 16 bytes: a 96 x 24 tile of 6 x 6
 * threads with scalar copies (which spilled under 8 blocks) gets 6 blocks, a 64 x 24 tile
 * of 4 x 6 threads (which fits 8) keeps 8, and a tile with 16-byte copies is not touched. */
static void kcfg_simt_bound_narrow(void) {
    gt_key key;
    make_key(&key, 1, 1, 4099, 257, 3001, 4, 1);
    const char *texts[] = {"f0_96x24x16_w48x24_t6x6_s2_v1_k1_r8",
                           "f0_64x24x16_w64x12_t4x6_s2_v1_k1_r8"};
    int want[] = {6, 8};
    for (int i = 0; i < 2; i++) {
        gt_kcfg c;
        char why[160] = "";
        TAP_CHECK(gt_kcfg_parse(texts[i], &c, why, sizeof why) == 0, "%s: %s", texts[i], why);
        TAP_CHECK(gt_kcfg_min_blocks(&c, &key) == want[i], "%s: %d blocks, expected %d", texts[i],
                  gt_kcfg_min_blocks(&c, &key), want[i]);
    }
    /* The same tile with 16-byte copies: the count without copies (8 blocks). */
    gt_key wide;
    make_key(&wide, 1, 1, 4096, 256, 3008, 16, 1);
    gt_kcfg v4;
    TAP_CHECK(gt_kcfg_parse("f0_96x24x16_w48x24_t6x6_s2_v4_k1_r8", &v4, NULL, 0) == 0, "parse v4");
    TAP_CHECK(gt_kcfg_min_blocks(&v4, &wide) == 8, "16-byte copies: %d blocks",
              gt_kcfg_min_blocks(&v4, &wide));
}

/* The options of a fixed set of programs, one per family and both copy widths, generic
 * and exact, against the digest recorded with GT_KCFG_OPTIONS_REV. A change to what
 * gt_kcfg_options derives makes the binary cache's programs other programs under the same
 * configuration text: raise GT_KCFG_OPTIONS_REV (tuner/kcfg.h) and record the new digest
 * here, so that no node serves a binary built under the old options. */
#define OPTIONS_REV_RECORDED 2
#define OPTIONS_DIGEST_RECORDED 0x491d33e530af9480ULL
static void kcfg_options_revision(void) {
    struct { int dt, opa, opb; long long m, n, k; int align; const char *cfg; } progs[] = {
        {GT_DT_F32, 1, 1, 4099, 257, 3001, 4, "f0_96x24x16_w48x24_t6x6_s2_v1_k1_r8"},
        {GT_DT_F32, 0, 1, 4096, 4096, 4096, 16, NULL},
        {GT_DT_F32, 0, 0, 1, 4096, 4096, 16, NULL},
        {GT_DT_F64, 0, 0, 4096, 4096, 4096, 16, NULL},
        {GT_DT_F64, 1, 0, 1001, 999, 1003, 8, NULL},
        {GT_DT_BF16, 0, 1, 4096, 4096, 4096, 16, NULL},
        {GT_DT_BF16, 0, 0, 123, 4567, 891, 2, NULL},
        {GT_DT_TF32, 1, 0, 2048, 2048, 2048, 16, NULL},
    };
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        gt_key key;
        make_key_dt(&key, 90, progs[i].dt, progs[i].opa, progs[i].opb, progs[i].m, progs[i].n,
                    progs[i].k, progs[i].align, 1);
        gt_kcfg c;
        if (progs[i].cfg)
            TAP_CHECK(gt_kcfg_parse(progs[i].cfg, &c, NULL, 0) == 0, "parse %s", progs[i].cfg);
        else
            gt_kcfg_default(&c, &key);
        for (int generic = 0; generic < 2; generic++) {
            c.generic = generic;
            char storage[48][64];
            const char *opts[48];
            int n = gt_kcfg_options(&c, &key, storage, opts, 48);
            for (int o = 0; o < n; o++)
                for (const char *q = opts[o]; ; q++) {
                    h = (h ^ (unsigned char)*q) * 1099511628211ULL;
                    if (!*q) break;
                }
        }
    }
    TAP_CHECK(GT_KCFG_OPTIONS_REV == OPTIONS_REV_RECORDED && h == OPTIONS_DIGEST_RECORDED,
              "the options changed (digest 0x%llxULL, revision %d): raise GT_KCFG_OPTIONS_REV "
              "and record both here", h, GT_KCFG_OPTIONS_REV);
    /* The revision is in every program's text, so the binary cache tells them apart. */
    gt_key key;
    make_key(&key, 0, 1, 4096, 4096, 4096, 16, 1);
    gt_kcfg c;
    gt_kcfg_default(&c, &key);
    gt_program p;
    char want[16];
    snprintf(want, sizeof want, "|o%d|", GT_KCFG_OPTIONS_REV);
    gt_kern_program(&c, &key, &p);
    TAP_CHECK(strstr(p.text, want) != NULL, "program text '%s' lacks '%s'", p.text, want);
}

static void kcfg_split_groups(void) {
    /* One level up to 8 splits; beyond, groups of the smallest divisor at least the
     * square root, so the last block reads group + groups partials, not SPLIT. */
    static const int split[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
    static const int group[] = {1, 2, 3, 4, 6, 8, 4, 4, 6, 8, 8, 8};
    for (int i = 0; i < 12; i++) {
        gt_kcfg c = CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, split[i], 1);
        int g = gt_kcfg_split_group(&c);
        TAP_CHECK(g == group[i] && split[i] % g == 0, "split %d: group %d, want %d", split[i], g,
                  group[i]);
    }
    /* Counters: one per tile, plus one per group where there are two levels. 256 x 256 in
     * 128 x 128 tiles: 4 tiles. */
    gt_key key;
    make_key(&key, 0, 0, 256, 256, 65536, 16, 1);
    gt_kcfg c = CFG(0, 128, 128, 16, 32, 64, 8, 8, 3, 4, 1, 1);
    TAP_CHECK(gt_kcfg_split_counters(&c, &key) == 0, "unsplit: %lld counters",
              gt_kcfg_split_counters(&c, &key));
    c.split = 8;
    TAP_CHECK(gt_kcfg_split_counters(&c, &key) == 4, "split 8: %lld counters, want 4",
              gt_kcfg_split_counters(&c, &key));
    c.split = 32; /* 4 groups of 8 */
    TAP_CHECK(gt_kcfg_split_counters(&c, &key) == 4 * 5, "split 32: %lld counters, want 20",
              gt_kcfg_split_counters(&c, &key));
}

/* The model's DRAM rate follows the device's memory (gt_space_dram_rate): the H100's
 * figures give 1 (its own rates), a near miss too; an H200 1.47 by its data sheet (1.44
 * by the 6,016 bits its driver reports), an A100 40GB 0.46;
 * unknown figures 0. A memory-bound estimate falls with a faster memory, 0 and 1 give
 * the same estimate, and a compute-bound one does not move. */
static void kcfg_dram_rate(void) {
    TAP_CHECK(gt_space_dram_rate(2619000, 5120) == 1.0, "H100: %g", gt_space_dram_rate(2619000, 5120));
    TAP_CHECK(gt_space_dram_rate(2600000, 5120) == 1.0, "near the H100: %g", gt_space_dram_rate(2600000, 5120));
    double h200 = gt_space_dram_rate(3201000, 6144), a100 = gt_space_dram_rate(1215000, 5120);
    TAP_CHECK(fabs(h200 - 1.4667) < 0.001, "H200: %g", h200);
    TAP_CHECK(fabs(gt_space_dram_rate(3201000, 6016) - 1.4361) < 0.001, "H200 as its driver reports: %g",
              gt_space_dram_rate(3201000, 6016));
    TAP_CHECK(fabs(a100 - 0.4639) < 0.001, "A100 40GB: %g", a100);
    TAP_CHECK(gt_space_dram_rate(0, 5120) == 0.0 && gt_space_dram_rate(2619000, -1) == 0.0,
              "unknown figures give 0");
    gt_key key;
    make_key_dt(&key, 90, GT_DT_BF16, 0, 0, 8192, 16, 8192, 16, 1); /* byte-bound */
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(&key, &h100, 4, 0, &c, &counts);
    TAP_CHECK(n > 0, "bf16 8192x16x8192: %d candidates", n);
    if (n > 0) {
        gt_klimits fast = h100, zero = h100, one = h100;
        fast.dram_rate = h200, zero.dram_rate = 0.0, one.dram_rate = 1.0;
        double t1 = gt_space_estimate_us(&c[0].cfg, &key, &one), t0 = gt_space_estimate_us(&c[0].cfg, &key, &zero),
               tf = gt_space_estimate_us(&c[0].cfg, &key, &fast);
        TAP_CHECK(t0 == t1, "rate 0 %.3f us, rate 1 %.3f us", t0, t1);
        TAP_CHECK(tf < 0.8 * t1, "bf16 8192x16x8192 %s: H100 memory %.2f us, H200's %.2f us",
                  fmt(&c[0].cfg).s, t1, tf);
    }
    free(c);
    make_key_dt(&key, 90, GT_DT_F32, 0, 0, 4096, 4096, 4096, 16, 1); /* FFMA-bound */
    gt_kcfg simt = CFG(GT_FAM_SIMT, 128, 128, 16, 64, 32, 8, 8, 2, 4, 1, 8);
    gt_klimits fast = h100;
    fast.dram_rate = h200;
    double ts = gt_space_estimate_us(&simt, &key, &h100), tf = gt_space_estimate_us(&simt, &key, &fast);
    TAP_CHECK(ts == tf, "f32 4096^3 %s: %.1f us, with the H200's memory %.1f us", fmt(&simt).s, ts, tf);
}

static void kcfg_help_text(void) {
    int need = gt_kcfg_help(NULL, 0);
    TAP_CHECK(need > 0, "help needs %d bytes", need);
    char *buf = malloc((size_t)need + 1);
    TAP_CHECK(buf != NULL, "out of memory");
    if (!buf) return;
    int n = gt_kcfg_help(buf, (size_t)need + 1);
    TAP_CHECK(n == need && (int)strlen(buf) == need, "help: %d, %d, strlen %zu", need, n,
              strlen(buf));
    for (int i = 0; i < gt_nkparams; i++) {
        TAP_CHECK(strstr(buf, gt_kparams[i].name) != NULL, "help lacks parameter %s",
                  gt_kparams[i].name);
        TAP_CHECK(strstr(buf, gt_kparams[i].help) != NULL, "help lacks %s's description",
                  gt_kparams[i].name);
    }
    for (int i = 0; i < gt_nkconstraints; i++) {
        TAP_CHECK(strstr(buf, gt_kconstraints[i].name) != NULL, "help lacks constraint %s",
                  gt_kconstraints[i].name);
        TAP_CHECK(strstr(buf, gt_kconstraints[i].reason) != NULL, "help lacks %s's reason",
                  gt_kconstraints[i].name);
    }
    TAP_CHECK(strstr(buf, "fFAM_BMxBNxBK_wWMxWN_tTMxTN_sSTAGES_vVEC_kSPLIT_rRASTER") != NULL,
              "help lacks the text's form");
    /* The example the help gives parses. */
    const char *eg = strstr(buf, "e.g. ");
    TAP_CHECK(eg != NULL, "help gives no example");
    if (eg) {
        char text[80] = "";
        sscanf(eg + 5, "%79[^) \n]", text);
        gt_kcfg p;
        char why[256] = "";
        TAP_CHECK(gt_kcfg_parse(text, &p, why, sizeof why) == 0, "example '%s': %s", text, why);
    }
    /* A short buffer: terminated, not overrun, same length returned. */
    char small[40];
    memset(small, 'Z', sizeof small);
    int m = gt_kcfg_help(small, 32);
    TAP_CHECK(m == need, "short buffer: returned %d, want %d", m, need);
    TAP_CHECK(small[31] == 0 && small[32] == 'Z' && strncmp(small, buf, 31) == 0,
              "short buffer: '%.40s'", small);
    free(buf);
}

int main(void) {
    TAP_RUN(kcfg_table_sane);
    TAP_RUN(kcfg_text_examples);
    TAP_RUN(kcfg_round_trip_random_combinations);
    TAP_RUN(kcfg_parse_rejects);
    TAP_RUN(kcfg_each_constraint_rejects);
    TAP_RUN(kcfg_known_good_accepted);
    TAP_RUN(kcfg_default_is_legal);
    TAP_RUN(kcfg_simt_bound_narrow);
    TAP_RUN(kcfg_options_revision);
    TAP_RUN(kcfg_validate_messages);
    TAP_RUN(kcfg_limits_generic);
    TAP_RUN(kcfg_space_candidates);
    TAP_RUN(kcfg_space_families);
    TAP_RUN(kcfg_space_gemv);
    TAP_RUN(kcfg_space_split_k);
    TAP_RUN(kcfg_space_model_measured);
    TAP_RUN(kcfg_space_tile_only_constraints);
    TAP_RUN(kcfg_space_selective_constraints);
    TAP_RUN(kcfg_space_odd_thread_tiles);
    TAP_RUN(kcfg_space_tiny_and_big);
    TAP_RUN(kcfg_space_mma);
    TAP_RUN(kcfg_derived_values);
    TAP_RUN(kcfg_simt_pack);
    TAP_RUN(kcfg_split3);
    TAP_RUN(kcfg_nvrtc_options);
    TAP_RUN(kcfg_split_groups);
    TAP_RUN(kcfg_space_unsplit_early);
    TAP_RUN(kcfg_dram_rate);
    TAP_RUN(kcfg_help_text);
    return tap_done();
}
