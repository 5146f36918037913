/*
 * test_kcfg.c: the kernel parameter table, its text form and its constraints
 * (src/kcfg.c), and the candidate space built from them (tuner/space.c). No GPU needed.
 *
 * Cases: canonical text round trip for every combination of the table; the parser's
 * rejections; each named constraint rejecting a configuration crafted to break it (and,
 * where the table allows, nothing else); the default configuration legal for a wide range
 * of problems; the candidate space (every candidate passes every constraint, ranked by
 * the estimate, cut to the budget, counts consistent, never empty for tiny or big
 * problems) for H100- and A100-like limits; NVRTC options; derived values; help text.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcfg.h"
#include "key.h"
#include "space.h"
#include "fixtures.h"
#include "tap.h"

/* ===== helpers ===== */


/* A key on the H100. */
static void make_key(gt_key *k, int opa, int opb, long long m, long long n, long long kk,
                     int align, int beta0) {
    fixture_key(k, 90, opa, opb, m, n, kk, align, beta0);
}

static int table_size(void) {
    int total = 1;
    for (int i = 0; i < gt_nkparams; i++) total *= gt_kparams[i].nvalues;
    return total;
}

/* Combination idx of the table, decoded the way tuner/space.c enumerates it. */
static void combination(int idx, gt_kcfg *c) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < gt_nkparams; i++) {
        gt_kcfg_set(c, i, gt_kparams[i].values[idx % gt_kparams[i].nvalues]);
        idx /= gt_kparams[i].nvalues;
    }
}

static int cfg_equal(const gt_kcfg *a, const gt_kcfg *b) {
    for (int i = 0; i < gt_nkparams; i++)
        if (gt_kcfg_get(a, i) != gt_kcfg_get(b, i)) return 0;
    return a->bm == b->bm && a->bn == b->bn && a->bk == b->bk && a->tm == b->tm &&
           a->tn == b->tn && a->vec == b->vec;
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

/* ===== text form ===== */

static void kcfg_table_sane(void) {
    TAP_CHECK(gt_nkparams >= 6, "%d parameters", gt_nkparams);
    for (int i = 0; i < gt_nkparams; i++) {
        const gt_kparam *p = &gt_kparams[i];
        TAP_CHECK(p->name && p->name[0] && p->help && p->help[0] && p->sep, "parameter %d", i);
        TAP_CHECK(p->nvalues >= 1 && p->nvalues <= GT_KPARAM_MAX_VALUES, "%s: %d values",
                  p->name, p->nvalues);
        TAP_CHECK(p->offset + sizeof(int) <= sizeof(gt_kcfg), "%s: offset %zu", p->name,
                  p->offset);
        /* Ascending and positive: the text form and the parser rely on distinct values. */
        for (int j = 0; j < p->nvalues; j++)
            TAP_CHECK(p->values[j] > 0 && (j == 0 || p->values[j] > p->values[j - 1]),
                      "%s: value %d = %d", p->name, j, p->values[j]);
        /* Only the first may have an empty separator, or the text would be ambiguous. */
        TAP_CHECK(i == 0 || p->sep[0] != 0, "%s has no separator", p->name);
        for (int j = 0; j < i; j++) {
            TAP_CHECK(strcmp(p->name, gt_kparams[j].name) != 0, "two parameters %s", p->name);
            TAP_CHECK(p->offset != gt_kparams[j].offset, "%s and %s share a field", p->name,
                      gt_kparams[j].name);
        }
    }
    TAP_CHECK(gt_nkconstraints >= 12, "%d constraints", gt_nkconstraints);
    for (int i = 0; i < gt_nkconstraints; i++) {
        const gt_kconstraint *k = &gt_kconstraints[i];
        TAP_CHECK(k->kind == GT_KC_LEGAL || k->kind == GT_KC_PRUNE, "%s: kind %d", k->name,
                  k->kind);
        TAP_CHECK(k->ok && k->reason && k->reason[0], "%s", k->name);
        for (int j = 0; j < i; j++)
            TAP_CHECK(strcmp(k->name, gt_kconstraints[j].name) != 0, "two constraints %s",
                      k->name);
    }
}

static void kcfg_text_examples(void) {
    gt_kcfg c = {.bm = 128, .bn = 64, .bk = 8, .tm = 8, .tn = 4, .vec = 4};
    char buf[64], why[256];
    int n = gt_kcfg_format(&c, buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "128x64x8_t8x4_v4") == 0, "'%s'", buf);
    TAP_CHECK(n == (int)strlen("128x64x8_t8x4_v4"), "returned %d", n);
    gt_kcfg p;
    TAP_CHECK(gt_kcfg_parse("16x256x32_t1x8_v2", &p, why, sizeof why) == 0, "%s", why);
    TAP_CHECK(p.bm == 16 && p.bn == 256 && p.bk == 32 && p.tm == 1 && p.tn == 8 && p.vec == 2,
              "parsed %d %d %d %d %d %d", p.bm, p.bn, p.bk, p.tm, p.tn, p.vec);
    /* Truncated output: terminated, full length returned. */
    char small[8];
    memset(small, 'Z', sizeof small);
    n = gt_kcfg_format(&c, small, sizeof small);
    TAP_CHECK(n == (int)strlen("128x64x8_t8x4_v4"), "truncated: returned %d", n);
    TAP_CHECK(small[7] == 0 && strncmp(small, "128x64x", 7) == 0, "truncated: '%.8s'", small);
    TAP_CHECK(gt_kcfg_format(&c, NULL, 0) == (int)strlen("128x64x8_t8x4_v4"), "size 0");
}

static void kcfg_round_trip_every_combination(void) {
    const int total = table_size();
    TAP_CHECK(total > 1000, "table has %d combinations", total);
    int failures = 0;
    for (int idx = 0; idx < total; idx++) {
        gt_kcfg c, p;
        combination(idx, &c);
        char buf[64], again[64], why[256] = "";
        int n = gt_kcfg_format(&c, buf, sizeof buf);
        int ok = n == (int)strlen(buf) && gt_kcfg_parse(buf, &p, why, sizeof why) == 0 &&
                 cfg_equal(&c, &p) && gt_kcfg_format(&p, again, sizeof again) == n &&
                 strcmp(buf, again) == 0;
        /* A table combination fails only constraints that depend on the problem or the
         * device, never in_table. */
        ok = ok && constraint("in_table") && constraint("in_table")->ok(&c, NULL, &h100);
        if (!ok && failures++ < 5)
            TAP_CHECK(ok, "combination %d: '%s' -> '%s' (%s)", idx, buf, again, why);
    }
    TAP_CHECK(failures == 0, "%d of %d combinations fail the round trip", failures, total);
    /* Distinct combinations give distinct texts. */
    char first[64], other[64];
    gt_kcfg a, b;
    combination(0, &a);
    combination(total - 1, &b);
    gt_kcfg_format(&a, first, sizeof first);
    gt_kcfg_format(&b, other, sizeof other);
    TAP_CHECK(strcmp(first, other) != 0, "'%s' twice", first);
}

static void kcfg_parse_rejects(void) {
    static const char *bad[] = {
        "",                                          /* empty */
        "128x64x8_t8x4",                             /* missing VEC */
        "128x64x8_t8x4_v",                           /* VEC without a number */
        "128x64x8",                                  /* missing the thread tile */
        "128x64",                                    /* missing most */
        "128x64x8_t8x_v4",                           /* TN missing */
        "128-64x8_t8x4_v4",                          /* wrong separators */
        "128x64x8-t8x4_v4",
        "128x64x8_t8x4v4",
        "128x64x8_t8_4_v4",
        "128X64X8_T8X4_V4",
        "128 x64x8_t8x4_v4",
        "128x64x8 _t8x4_v4",
        "100x128x8_t8x8_v4",                         /* out of the table */
        "128x48x8_t8x4_v4",
        "128x64x64_t8x4_v4",
        "128x64x8_t16x4_v4",
        "128x64x8_t8x3_v4",
        "128x64x8_t8x4_v8",
        "128x64x8_t8x4_v0",
        "0x64x8_t8x4_v4",
        "128x64x8_t8x4_v4 ",                         /* trailing junk */
        "128x64x8_t8x4_v4x",
        "128x64x8_t8x4_v4_v4",
        "128x64x8_t8x4_v4\n",
        "128x64x8_t8x4_v4abc",
        " 128x64x8_t8x4_v4",                         /* leading junk */
        "-128x64x8_t8x4_v4",                         /* signs */
        "+128x64x8_t8x4_v4",
        "128x-64x8_t8x4_v4",
        "4294967424x64x8_t8x4_v4",                   /* 2^32 + 128: 128 if truncated */
        "128x18446744073709551680x8_t8x4_v4",        /* 2^64 + 64 */
        "128x64x8_t8x4_v99999999999999999999999999", /* far beyond long */
        "128x64x8_t8x4_v0000000000004",              /* 4 padded past any sane width */
        "128.0x64x8_t8x4_v4",
        "0x80x64x8_t8x4_v4",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gt_kcfg c;
        char why[256] = "";
        int r = gt_kcfg_parse(bad[i], &c, why, sizeof why);
        TAP_CHECK(r == -1, "'%s' accepted as %d %d %d %d %d %d", bad[i], c.bm, c.bn, c.bk, c.tm,
                  c.tn, c.vec);
        TAP_CHECK(r != -1 || why[0] != 0, "'%s' rejected without a reason", bad[i]);
    }
    /* The reason names the offending parameter. */
    gt_kcfg c;
    char why[256] = "";
    gt_kcfg_parse("128x64x8_t8x4_v3", &c, why, sizeof why);
    TAP_CHECK(strstr(why, "VEC") != NULL, "reason '%s' does not name VEC", why);
    gt_kcfg_parse("100x128x8_t8x8_v4", &c, why, sizeof why);
    TAP_CHECK(strstr(why, "BM") != NULL, "reason '%s' does not name BM", why);
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
    int opa, opb;
    long long m, n, k;
    int align;
    const gt_klimits *lim;
    const char *also[2];
} crafted;

static void kcfg_each_constraint_rejects(void) {
    gt_klimits threads256 = h100, regs32k = h100;
    threads256.max_threads_per_block = 256;
    regs32k.regs_per_block = 32768;
    const crafted cases[] = {
        /* BK = 64 is outside the table; everything else about it is fine. */
        {"in_table", {32, 32, 64, 2, 2, 4}, 0, 0, 4096, 4096, 4096, 16, &h100, {0}},
        /* Table values are powers of two, so a thread tile that does not divide the block
         * tile (16 % 6) must be outside the table too. */
        {"tile_divides", {16, 32, 16, 6, 1, 4}, 0, 0, 4096, 4096, 4096, 16, &h100, {"in_table"}},
        /* 512 threads on a device of 256 per block. */
        {"whole_warps", {64, 64, 32, 8, 1, 4}, 0, 0, 4096, 4096, 4096, 16, &threads256, {0}},
        /* 256 threads, 32 vectors of A per stage. */
        {"whole_vectors", {16, 16, 8, 1, 1, 4}, 0, 0, 4096, 4096, 4096, 16, &h100, {0}},
        /* 16-byte vectors on an 8-byte alignment class; a vector wider than the class is
         * necessarily not the widest that the class allows. */
        {"aligned", {128, 128, 8, 8, 8, 4}, 0, 0, 4096, 4096, 4096, 8, &h100, {"widest_vector"}},
        /* 2 * 32 * (128 + 64 + 4) * 4 = 50176 bytes > 48 KiB. */
        {"smem_fits", {128, 64, 32, 8, 2, 4}, 0, 0, 4096, 4096, 4096, 16, &h100, {0}},
        /* 76 registers * 512 threads > 32768 per block. */
        {"regs_fit", {128, 128, 16, 8, 4, 4}, 0, 0, 4096, 4096, 4096, 16, &regs32k, {0}},
        /* (m / 128) x (n / 128) tiles far beyond 2^31 - 1. */
        {"grid_fits", {128, 128, 8, 8, 8, 4}, 0, 0, 2147483647LL, 2147483647LL, 4096, 16, &h100, {0}},
        /* m = 1: a 256-row block tile is all idle rows. */
        {"tile_not_idle", {256, 64, 16, 8, 8, 4}, 0, 0, 1, 4096, 4096, 16, &h100, {0}},
        /* 8-byte vectors where 16 bytes are allowed. */
        {"widest_vector", {128, 128, 8, 8, 8, 2}, 0, 0, 4096, 4096, 4096, 16, &h100, {0}},
        /* 32 threads. */
        {"reasonable_block", {16, 16, 8, 8, 1, 4}, 0, 0, 4096, 4096, 4096, 16, &h100, {0}},
        /* 2 outputs per thread in a 512-thread block. */
        {"enough_work_per_thread", {32, 32, 32, 2, 1, 2}, 0, 0, 4096, 4096, 4096, 8, &h100, {0}},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    /* Every constraint has a case. */
    for (int i = 0; i < gt_nkconstraints; i++) {
        int found = 0;
        for (int j = 0; j < ncases; j++) found |= strcmp(cases[j].name, gt_kconstraints[i].name) == 0;
        TAP_CHECK(found, "constraint %s has no crafted case", gt_kconstraints[i].name);
    }
    for (int j = 0; j < ncases; j++) {
        const crafted *cs = &cases[j];
        const gt_kconstraint *target = constraint(cs->name);
        TAP_CHECK(target != NULL, "no constraint named %s", cs->name);
        if (!target) continue;
        gt_key key;
        make_key(&key, cs->opa, cs->opb, cs->m, cs->n, cs->k, cs->align, 0);
        char text[64];
        gt_kcfg_format(&cs->cfg, text, sizeof text);
        TAP_CHECK(!target->ok(&cs->cfg, &key, cs->lim), "%s accepts %s", cs->name, text);
        for (int i = 0; i < gt_nkconstraints; i++) {
            const gt_kconstraint *o = &gt_kconstraints[i];
            if (o == target) continue;
            int allowed = 0;
            for (int a = 0; a < 2; a++) allowed |= cs->also[a] && strcmp(cs->also[a], o->name) == 0;
            if (allowed)
                TAP_CHECK(!o->ok(&cs->cfg, &key, cs->lim), "%s: %s was expected to fail too",
                          text, o->name);
            else
                TAP_CHECK(o->ok(&cs->cfg, &key, cs->lim), "%s, crafted for %s, also fails %s",
                          text, cs->name, o->name);
        }
        /* gt_kcfg_check reports it (or its companion that comes first in the list). */
        const gt_kconstraint *got = gt_kcfg_check(&cs->cfg, &key, cs->lim, target->kind);
        int expected = got == target;
        for (int a = 0; a < 2; a++)
            expected |= got && cs->also[a] && strcmp(got->name, cs->also[a]) == 0 &&
                        got->kind == target->kind && got < target;
        TAP_CHECK(expected, "%s: gt_kcfg_check reports %s, want %s", text,
                  got ? got->name : "nothing", cs->name);
        TAP_CHECK(gt_kcfg_check(&cs->cfg, &key, cs->lim, GT_KC_LEGAL | GT_KC_PRUNE) != NULL,
                  "%s passes the full check", text);
        /* A prune-only failure leaves the configuration legal. */
        if (target->kind == GT_KC_PRUNE) {
            const gt_kconstraint *legal = gt_kcfg_check(&cs->cfg, &key, cs->lim, GT_KC_LEGAL);
            TAP_CHECK(legal == NULL, "%s: legal check reports %s", text, legal->name);
        }
    }
    /* The brief's extreme cases fail their constraint too, whatever else they fail. */
    gt_key key;
    make_key(&key, 0, 0, 4096, 4096, 4096, 16, 0);
    gt_kcfg big = {256, 256, 32, 8, 8, 4};
    TAP_CHECK(constraint("smem_fits") && !constraint("smem_fits")->ok(&big, &key, &h100),
              "256x256x32 fits shared memory");
    gt_kcfg tm3 = {128, 128, 8, 3, 8, 4};
    TAP_CHECK(constraint("tile_divides") && !constraint("tile_divides")->ok(&tm3, &key, &h100),
              "TM = 3 divides BM = 128");
    TAP_CHECK(gt_kcfg_check(&tm3, &key, &h100, GT_KC_LEGAL) != NULL, "TM = 3 is legal");
    gt_kcfg zero = {128, 128, 8, 0, 8, 4};
    TAP_CHECK(gt_kcfg_check(&zero, &key, &h100, GT_KC_LEGAL) != NULL, "TM = 0 is legal");
}

static void kcfg_known_good_accepted(void) {
    gt_key key;
    make_key(&key, 0, 0, 4096, 4096, 4096, 16, 0);
    gt_kcfg good = {128, 128, 8, 8, 8, 4};
    const gt_kconstraint *bad = gt_kcfg_check(&good, &key, &h100, GT_KC_LEGAL | GT_KC_PRUNE);
    TAP_CHECK(bad == NULL, "128x128x8_t8x8_v4 fails %s", bad ? bad->name : "");
    TAP_CHECK(passes_all(&good, &key, &h100), "a constraint rejects it");
    TAP_CHECK(passes_all(&good, &key, &a100), "a constraint rejects it on A100 limits");
    /* Every op pair and beta. */
    for (int ops = 0; ops < 4; ops++)
        for (int beta0 = 0; beta0 < 2; beta0++) {
            make_key(&key, ops >> 1, ops & 1, 4096, 4096, 4096, 16, beta0);
            bad = gt_kcfg_check(&good, &key, &h100, GT_KC_LEGAL | GT_KC_PRUNE);
            TAP_CHECK(bad == NULL, "ops %d beta0 %d: fails %s", ops, beta0, bad ? bad->name : "");
        }
}

static void kcfg_default_is_legal(void) {
    static const long long sizes[] = {1, 2, 7, 16, 17, 64, 1000, 4096, 4097, 65536};
    static const int aligns[] = {4, 8, 16};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    const gt_klimits *lims[] = {&h100, &a100};
    int checked = 0, failures = 0;
    for (int l = 0; l < 2; l++)
        for (int ops = 0; ops < 4; ops++)
            for (int a = 0; a < 3; a++)
                for (int beta0 = 0; beta0 < 2; beta0++)
                    for (int i = 0; i < ns; i++)
                        for (int j = 0; j < ns; j++)
                            for (int k = 0; k < ns; k++) {
                                gt_key key;
                                make_key(&key, ops >> 1, ops & 1, sizes[i], sizes[j], sizes[k],
                                         aligns[a], beta0);
                                gt_kcfg c;
                                memset(&c, 0x7f, sizeof c);
                                gt_kcfg_default(&c, &key);
                                const gt_kconstraint *bad =
                                    gt_kcfg_check(&c, &key, lims[l], GT_KC_LEGAL);
                                checked++;
                                if (bad && failures++ < 5) {
                                    char text[64], shape[64];
                                    gt_kcfg_format(&c, text, sizeof text);
                                    gt_key_shape(&key, shape, sizeof shape);
                                    TAP_CHECK(bad == NULL, "default %s for %s a%d: fails %s",
                                              text, shape, aligns[a], bad->name);
                                }
                                /* It parses back: a cache could hold it. */
                                char text[64], why[128];
                                gt_kcfg p;
                                gt_kcfg_format(&c, text, sizeof text);
                                if (gt_kcfg_parse(text, &p, why, sizeof why) != 0 &&
                                    failures++ < 5)
                                    TAP_CHECK(0, "default %s does not parse: %s", text, why);
                            }
    TAP_CHECK(failures == 0, "%d of %d defaults illegal", failures, checked);
    /* The widest vector that the alignment allows is used where it is free to. */
    gt_key key;
    gt_kcfg c4, c16;
    make_key(&key, 0, 0, 1000, 1000, 1000, 4, 0);
    gt_kcfg_default(&c4, &key);
    make_key(&key, 0, 0, 1000, 1000, 1000, 16, 0);
    gt_kcfg_default(&c16, &key);
    TAP_CHECK(c4.vec == 1 && c16.vec > 1, "vec %d at a4, %d at a16", c4.vec, c16.vec);
}

/* ===== candidate space ===== */

typedef struct {
    int opa, opb;
    long long m, n, k;
} space_shape;

static void check_space(const gt_key *key, const gt_klimits *lim, int max, const char *limname) {
    char shape[64];
    gt_key_shape(key, shape, sizeof shape);
    gt_cand *c = NULL;
    gt_space_counts counts;
    memset(&counts, 0x55, sizeof counts);
    int n = gt_space_build(key, lim, max, 0, &c, &counts);
    TAP_CHECK(n >= 1 && c != NULL, "%s a%d b%d %s max %d: %d candidates", shape, key->align,
              key->beta0, limname, max, n);
    if (n < 0 || !c) {
        free(c);
        return;
    }
    /* Counts. */
    int legal = 0;
    const int total = table_size();
    for (int idx = 0; idx < total; idx++) {
        gt_kcfg cfg;
        combination(idx, &cfg);
        legal += passes_all(&cfg, key, lim);
    }
    TAP_CHECK(counts.generated == total, "%s: generated %d of %d", shape, counts.generated, total);
    TAP_CHECK(counts.generated == counts.pruned + counts.kept + counts.ranked_out,
              "%s: generated %d != pruned %d + kept %d + ranked out %d", shape, counts.generated,
              counts.pruned, counts.kept, counts.ranked_out);
    TAP_CHECK(counts.kept == n, "%s: kept %d, returned %d", shape, counts.kept, n);
    TAP_CHECK(counts.pruned == total - legal, "%s: pruned %d, but %d of %d fail a constraint",
              shape, counts.pruned, total - legal, total);
    int want = max > 0 && legal > max ? max : legal;
    TAP_CHECK(n == want, "%s max %d: %d candidates of %d legal", shape, max, n, legal);
    TAP_CHECK(max <= 0 || n <= max, "%s: %d over the budget %d", shape, n, max);
    TAP_CHECK(counts.ranked_out == legal - n, "%s: ranked out %d", shape, counts.ranked_out);
    /* Every candidate passes every constraint, is estimated as the model says, in order,
     * without duplicates. */
    for (int i = 0; i < n; i++) {
        char text[64];
        gt_kcfg_format(&c[i].cfg, text, sizeof text);
        const gt_kconstraint *bad = gt_kcfg_check(&c[i].cfg, key, lim, GT_KC_LEGAL | GT_KC_PRUNE);
        TAP_CHECK(bad == NULL, "%s: candidate %s fails %s", shape, text, bad ? bad->name : "");
        TAP_CHECK(passes_all(&c[i].cfg, key, lim), "%s: candidate %s fails a constraint", shape,
                  text);
        double est = gt_space_estimate_us(&c[i].cfg, key, lim);
        TAP_CHECK(isfinite(c[i].est_us) && c[i].est_us > 0 && c[i].est_us == est,
                  "%s: %s estimate %g, model %g", shape, text, c[i].est_us, est);
        TAP_CHECK(i == 0 || c[i - 1].est_us <= c[i].est_us, "%s: %s (%g) after %g", shape, text,
                  c[i].est_us, c[i - 1].est_us);
        for (int j = 0; j < i; j++)
            TAP_CHECK(!cfg_equal(&c[i].cfg, &c[j].cfg), "%s: %s twice", shape, text);
    }
    /* Cut to the budget, the kept ones are the best of all legal ones. */
    if (max > 0 && legal > max) {
        gt_cand *all = NULL;
        gt_space_counts all_counts;
        int nall = gt_space_build(key, lim, 0, 0, &all, &all_counts);
        TAP_CHECK(nall == legal && all_counts.ranked_out == 0, "%s: unlimited gives %d of %d",
                  shape, nall, legal);
        for (int i = 0; all && i < n && i < nall; i++)
            TAP_CHECK(c[i].est_us == all[i].est_us, "%s: rank %d: %g, unlimited %g", shape, i,
                      c[i].est_us, all[i].est_us);
        free(all);
    }
    free(c);
}

static void kcfg_space_candidates(void) {
    static const space_shape shapes[] = {
        {0, 0, 1, 1, 1},          {0, 0, 4096, 4096, 4096}, {0, 0, 17, 33, 65},
        {1, 0, 1000, 1000, 1000}, {0, 1, 4097, 129, 257},   {0, 1, 16, 4096, 4096},
        {1, 1, 65536, 7, 3},      {0, 0, 1, 65536, 1},      {1, 0, 2, 2, 100000},
    };
    static const int aligns[] = {4, 8, 16};
    const gt_klimits *lims[] = {&h100, &a100};
    const char *limnames[] = {"H100", "A100"};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int a = 0; a < 3; a++)
            for (int beta0 = 0; beta0 < 2; beta0++)
                for (int l = 0; l < 2; l++) {
                    gt_key key;
                    make_key(&key, shapes[s].opa, shapes[s].opb, shapes[s].m, shapes[s].n,
                             shapes[s].k, aligns[a], beta0);
                    /* The default budget, the smallest, none, and each side of the count
                     * of legal candidates. */
                    gt_cand *all = NULL;
                    gt_space_counts counts;
                    int legal = gt_space_build(&key, lims[l], 0, 0, &all, &counts);
                    free(all);
                    const int maxes[] = {32, 1, 0, legal - 1, legal, legal + 1};
                    for (int x = 0; x < 6; x++) check_space(&key, lims[l], maxes[x], limnames[l]);
                }
}

static void kcfg_space_tiny_and_big(void) {
    /* The smallest and a big problem always have candidates, on both devices; printed
     * for the record (kcfg_space_candidates checks the rest). */
    const long long dims[2] = {1, 4096};
    for (int i = 0; i < 2; i++)
        for (int l = 0; l < 2; l++) {
            gt_key key;
            make_key(&key, 0, 0, dims[i], dims[i], dims[i], 16, 1);
            gt_cand *c = NULL;
            gt_space_counts counts;
            int n = gt_space_build(&key, l ? &a100 : &h100, 32, 0, &c, &counts);
            TAP_CHECK(n >= 1, "%lld^3: %d candidates", dims[i], n);
            char best[64] = "-";
            if (n >= 1) gt_kcfg_format(&c[0].cfg, best, sizeof best);
            printf("# %lld^3 %s: %d candidates (generated %d, pruned %d, ranked out %d), best "
                   "estimate %s %.1f us\n",
                   dims[i], l ? "A100" : "H100", n, counts.generated, counts.pruned,
                   counts.ranked_out, best, n >= 1 ? c[0].est_us : 0.0);
            free(c);
        }
}

/* ===== derived values, options, help ===== */

static void kcfg_derived_values(void) {
    gt_key key;
    make_key(&key, 0, 0, 1000, 33, 65, 16, 0);
    gt_kcfg c = {128, 32, 8, 8, 4, 4};
    TAP_CHECK(gt_kcfg_threads(&c) == (128 / 8) * (32 / 4), "threads %d", gt_kcfg_threads(&c));
    unsigned grid[3], block[3];
    gt_kcfg_grid(&c, &key, grid, block);
    /* One dimension over all tiles: ceil(1000 / 128) x ceil(33 / 32) = 8 x 2. */
    TAP_CHECK(grid[0] == 16 && grid[1] == 1 && grid[2] == 1, "grid %u %u %u", grid[0], grid[1],
              grid[2]);
    TAP_CHECK(block[0] == 128 && block[1] == 1 && block[2] == 1, "block %u %u %u", block[0],
              block[1], block[2]);
    /* Shared memory: padding only for the operand whose contiguous dimension is k. */
    int nn = gt_kcfg_smem_bytes(&c, &key);
    key.opa = 1;
    int tn = gt_kcfg_smem_bytes(&c, &key);
    key.opb = 1;
    int tt = gt_kcfg_smem_bytes(&c, &key);
    TAP_CHECK(nn == 2 * 8 * (128 + 32 + 4) * 4, "NN smem %d", nn);
    TAP_CHECK(tn == 2 * 8 * (128 + 4 + 32 + 4) * 4, "TN smem %d", tn);
    TAP_CHECK(tt == 2 * 8 * (128 + 4 + 32) * 4, "TT smem %d", tt);
    TAP_CHECK(gt_kcfg_regs_estimate(&c) > c.tm * c.tn, "registers %d", gt_kcfg_regs_estimate(&c));
}

static void kcfg_nvrtc_options(void) {
    gt_key key;
    make_key(&key, 1, 0, 4097, 129, 257, 8, 1);
    gt_kcfg c = {64, 32, 16, 4, 2, 2};
    char storage[32][64];
    const char *opts[32];
    int n = gt_kcfg_options(&c, &key, storage, opts, 32);
    TAP_CHECK(n == 6 + gt_nkparams, "%d options", n);
    const char *want_problem[] = {"-DGT_M=4097", "-DGT_N=129", "-DGT_K=257",
                                  "-DGT_OPA=1",  "-DGT_OPB=0", "-DGT_BETA0=1"};
    for (int w = 0; w < 6; w++) {
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
    /* max is respected. */
    const char *few[3] = {NULL, NULL, NULL};
    TAP_CHECK(gt_kcfg_options(&c, &key, storage, few, 2) == 2 && few[2] == NULL,
              "max 2 not respected");
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
    TAP_RUN(kcfg_round_trip_every_combination);
    TAP_RUN(kcfg_parse_rejects);
    TAP_RUN(kcfg_each_constraint_rejects);
    TAP_RUN(kcfg_known_good_accepted);
    TAP_RUN(kcfg_default_is_legal);
    TAP_RUN(kcfg_space_candidates);
    TAP_RUN(kcfg_space_tiny_and_big);
    TAP_RUN(kcfg_derived_values);
    TAP_RUN(kcfg_nvrtc_options);
    TAP_RUN(kcfg_help_text);
    return tap_done();
}
