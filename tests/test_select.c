/*
 * test_select.c: the selector of a configuration for a shape in no cache (tuner/select.h),
 * on synthetic timings tables of an H100 (no GPU needed).
 *   select_without_rows_is_model_best   no measured shape: the cost model's first choice
 *   select_prebuilt_set_is_chosen       with a prebuilt set held (16 or more), a held
 *                                       configuration is chosen even where a measured one
 *                                       outside it is faster (no compile on a first call);
 *                                       with a smaller held set, the faster one
 *   select_far_shape_not_read           a measured shape too far to weigh is not read
 *   select_nearest_shape_wins           two shapes disagree: the nearer one's fastest
 *   select_failed_never_chosen          a configuration that failed anywhere is never
 *                                       chosen, however fast elsewhere
 *   select_illegal_never_chosen         a measured configuration illegal for the new
 *                                       shape (split-K beyond its K) is never chosen
 *   select_same_choice_any_order        the same rows shuffled give the same choice
 *   select_prefers_measured             a configuration measured near the best on a close
 *                                       shape beats an unmeasured one the model rates a
 *                                       little better
 *   select_keeps_model_geometry         a near shape's fastest, timed as the model said,
 *                                       does not displace the model's choice where the new
 *                                       shape's geometry (its tiles' fit) ranks it lower
 *   select_span_not_carried             a tile that covers all of M where it was timed and
 *                                       not at the new shape: its timing not carried; one
 *                                       that covers M at both: carried
 *   select_same_order                   with GT_SPACE_SAME_ORDER only configurations
 *                                       bit-identical to the default kernel, measured or not
 *   rank_learns_from_history            the tuner's seeds (gt_select_rank): the nearest
 *                                       shape's winner and near-winners first, in order,
 *                                       a failed one never, one the model ranks far down
 *                                       brought first by its measurements; no history, no
 *                                       seeds
 *   rank_spreads_over_groups            at most two seeds of one group (family, block tile,
 *                                       BK, split), however fast its others were measured:
 *                                       the third seed is another group's
 *   tune_order_widens_past_one_group    where the space is wider than the list: half in the
 *                                       model's order, a quarter to groups not yet listed
 *   tune_order_caps_a_simt_group        in that first half at most GT_TUNE_LEAD_SAME of one
 *                                       SIMT group; a seed counts; the list's size: no cap
 *   tune_order_seeds_first              the tuner's order (gt_tune_order): seeds, then
 *                                       the model's order without them, within the count
 *   tune_threads_leave_one_for_helpers  the compile pool (gt_tune_threads): one per CPU,
 *                                       one fewer while the helpers compile beside it,
 *                                       a request below the CPUs kept, never 0
 *   tune_screening_rules                screening (gt_tune_screens, _stands): a few runs
 *                                       for a first run 1.5x the best, their median kept
 *                                       only while 1.25x the best; none before a best
 *   tune_best_held_rules                stopping where the best has held
 *                                       (gt_tune_best_held): every candidate left, as lucky
 *                                       against its estimate as the luckiest timed one and
 *                                       by the margin, still slower; not with one close,
 *                                       a seed, fewer than 4 timed, an unknown estimate or
 *                                       none left
 *   held_list_is_the_class_generics     the node's held configurations (gt_kern_generic_have)
 *                                       from the binary cache: the class's generic programs
 *                                       of this options revision only, sorted, each once
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "kcfg.h"
#include "kern.h"
#include "layers.h"
#include "load.h"
#include "prebuild.h"
#include "select.h"
#include "space.h"
#include "tap.h"
#include "tempcache.h"
#include "tune.h"

static gt_key key_f32(long long m, long long n, long long k) {
    gt_key key;
    fixture_key(&key, 90, 0, 1, m, n, k, 16, 1);
    key.dtype = GT_DT_F32;
    return key;
}

static gt_select_row row(long long m, long long n, long long k, const char *config, int ok,
                         double us) {
    gt_select_row r;
    memset(&r, 0, sizeof r);
    r.m = m, r.n = n, r.k = k, r.beta0 = 1, r.ok = ok, r.time_us = us;
    snprintf(r.config, sizeof r.config, "%s", config);
    return r;
}

/* The text of the i-th candidate the cost model ranks for key. */
static void model_pick(const gt_key *key, int i, char *text, size_t size) {
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(key, &h100, GT_SELECT_POOL, 0, &c, &counts);
    text[0] = 0;
    if (n > i) gt_kcfg_format(&c[i].cfg, text, size);
    free(c);
}

/* The model's first and second candidates for key (GT_SELECT_CONFIG_MAX bytes each). */
static void model_firsts(const gt_key *key, char *x, char *y) {
    model_pick(key, 0, x, GT_SELECT_CONFIG_MAX);
    model_pick(key, 1, y, GT_SELECT_CONFIG_MAX);
}

/* The flags the next gt_select calls pass (select_same_order sets them). */
static int flags_in_use;

static void chosen(const gt_key *key, const gt_select_row *rows, int n, char *text, size_t size,
                   gt_select_info *info) {
    gt_kcfg cfg;
    text[0] = 0;
    if (gt_select(key, &h100, flags_in_use, NULL, rows, n, &cfg, info) == 0) gt_kcfg_format(&cfg, text, size);
}

/* gt_select_have's choice as text ("" when none). */
static void chosen_have(const gt_key *key, const gt_select_row *rows, int n, const gt_kcfg *have,
                        int nhave, char *text, gt_select_info *info) {
    gt_kcfg cfg;
    text[0] = 0;
    if (gt_select_have(key, &h100, 0, NULL, rows, n, have, nhave, &cfg, info) == 0)
        gt_kcfg_format(&cfg, text, GT_SELECT_CONFIG_MAX);
}

static int parse(const char *text, gt_kcfg *c) {
    char why[256];
    return gt_kcfg_parse(text, c, why, sizeof why);
}

/* What the node holds wins when it is within GT_SELECT_HAVE_SLACK of the best, not
 * beyond; without a held set the best wins. */
static void select_have_prefers_held(void) {
    gt_key key = key_f32(1024, 1024, 1024);
    char x[GT_SELECT_CONFIG_MAX], y[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    model_firsts(&key, x, y);
    gt_kcfg held;
    TAP_CHECK(x[0] && y[0] && parse(y, &held) == 0, "two candidates");
    /* y 3% slower than x on this very shape. */
    gt_select_row close[] = {row(1024, 1024, 1024, x, 1, 100), row(1024, 1024, 1024, y, 1, 103)};
    gt_kcfg cfg;
    gt_select_info info;
    TAP_CHECK(gt_select_have(&key, &h100, 0, NULL, close, 2, &held, 1, &cfg, &info) == 0, "none chosen");
    gt_kcfg_format(&cfg, got, sizeof got);
    TAP_CHECK(strcmp(got, y) == 0 && info.in_have, "3%% slower held: chose '%s' (held %d), want '%s'",
              got, info.in_have, y);
    TAP_CHECK(gt_select_have(&key, &h100, 0, NULL, close, 2, NULL, 0, &cfg, &info) == 0 &&
                  gt_kcfg_format(&cfg, got, sizeof got) > 0 && strcmp(got, x) == 0 && !info.in_have,
              "nothing held: chose '%s', want '%s'", got, x);
    /* y 30% slower: the best is worth a compile. */
    gt_select_row far[] = {row(1024, 1024, 1024, x, 1, 100), row(1024, 1024, 1024, y, 1, 130)};
    chosen_have(&key, far, 2, &held, 1, got, &info);
    TAP_CHECK(strcmp(got, x) == 0 && !info.in_have, "30%% slower held: chose '%s', want '%s'", got, x);
}

/* A held configuration that failed somewhere, or is not legal here, is never chosen. */
static void select_have_never_failed(void) {
    gt_key key = key_f32(1024, 1024, 1024);
    char x[GT_SELECT_CONFIG_MAX], y[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    model_firsts(&key, x, y);
    gt_kcfg held[2];
    TAP_CHECK(parse(x, &held[0]) == 0 && parse(y, &held[1]) == 0, "parsed");
    gt_select_row rows[] = {row(1024, 1024, 1024, x, 1, 10), row(2048, 2048, 2048, x, 0, -1),
                            row(1024, 1024, 1024, y, 1, 40)};
    gt_kcfg cfg;
    gt_select_info info;
    TAP_CHECK(gt_select_have(&key, &h100, 0, NULL, rows, 3, held, 2, &cfg, &info) == 0, "none chosen");
    gt_kcfg_format(&cfg, got, sizeof got);
    TAP_CHECK(got[0] && strcmp(got, x) != 0, "chose '%s', which failed on 2048^3", got);
    /* Held but illegal for K = 64 (a split of K that 64 cannot give). */
    gt_key small = key_f32(64, 64, 64);
    gt_kcfg split = held[0];
    split.split = 16;
    TAP_CHECK(gt_select_have(&small, &h100, 0, NULL, NULL, 0, &split, 1, &cfg, &info) == 0 &&
                  cfg.split != 16 && !info.in_have,
              "chose split %d for K = 64", cfg.split);
}

/* A pretend builder for gt_prebuild_rounds: holds what it builds, refuses one
 * configuration, counts its rounds. */
typedef struct fake_builder {
    gt_kcfg refuse;
    gt_kcfg held[1024];
    int nheld, rounds;
} fake_builder;

static int fake_have(void *user, gt_kcfg *out, int max) {
    fake_builder *fb = user;
    int n = fb->nheld < max ? fb->nheld : max;
    memcpy(out, fb->held, sizeof *out * (size_t)n);
    return n;
}

static void fake_build(void *user, const gt_kcfg *todo, int n, int *ok, gt_prebuild_report *rep) {
    fake_builder *fb = user;
    fb->rounds++;
    for (int i = 0; i < n; i++) {
        gt_kcfg c = todo[i];
        c.generic = 0; /* held and listed as configurations, as gt_kern_generic_have does */
        ok[i] = memcmp(&c, &fb->refuse, sizeof c) != 0 && fb->nheld < 1024;
        if (ok[i]) fb->held[fb->nheld++] = c, rep->built++;
        else rep->refused++;
    }
}

/* The node's set (src/prebuild.h) holds the default and the selector's choice at every
 * measured shape and at points between; it is the same with one thread or several, and
 * a new shape near a measured one then finds its choice held. */
static void prebuild_set_covers_choices(void) {
    gt_key cls = key_f32(1, 1, 1);
    char x[GT_SELECT_CONFIG_MAX], y[GT_SELECT_CONFIG_MAX];
    gt_key k1 = key_f32(1000, 1000, 1000), k2 = key_f32(64, 4096, 4096);
    model_pick(&k1, 3, x, sizeof x);
    model_pick(&k2, 3, y, sizeof y);
    gt_select_row rows[] = {row(1000, 1000, 1000, x, 1, 50), row(64, 4096, 4096, y, 1, 30)};
    gt_kcfg *one = NULL, *four = NULL;
    /* 2 and 8 threads (the set is the same for any count; one thread took 36 s). */
    int n1 = gt_prebuild_set(&cls, &h100, NULL, rows, 2, 2, &one);
    int n4 = gt_prebuild_set(&cls, &h100, NULL, rows, 2, 8, &four);
    TAP_CHECK(n1 > 2 && n1 == n4 && memcmp(one, four, sizeof *one * (size_t)n1) == 0,
              "2 threads %d, 8 threads %d configurations", n1, n4);
    printf("# f32 NT a16: %d configurations\n", n1);
    gt_kcfg def, cx, cy;
    gt_kcfg_default(&def, &cls);
    TAP_CHECK(parse(x, &cx) == 0 && parse(y, &cy) == 0, "parsed");
    int has_def = 0, has_x = 0, has_y = 0, sorted = 1;
    for (int i = 0; i < n1; i++) {
        has_def |= memcmp(&one[i], &def, sizeof def) == 0;
        has_x |= memcmp(&one[i], &cx, sizeof cx) == 0;
        has_y |= memcmp(&one[i], &cy, sizeof cy) == 0;
        if (i > 0) {
            char a[GT_SELECT_CONFIG_MAX], b[GT_SELECT_CONFIG_MAX];
            gt_kcfg_format(&one[i - 1], a, sizeof a);
            gt_kcfg_format(&one[i], b, sizeof b);
            sorted &= strcmp(a, b) < 0;
        }
    }
    TAP_CHECK(has_def && has_x && has_y && sorted, "default %d, measured winners %d %d, sorted %d",
              has_def, has_x, has_y, sorted);
    /* A shape near a measured one: its choice with the set held is held. */
    gt_key near = key_f32(1100, 900, 1000);
    gt_kcfg cfg;
    gt_select_info info;
    TAP_CHECK(gt_select_have(&near, &h100, 0, NULL, rows, 2, one, n1, &cfg, &info) == 0 && info.in_have,
              "1100x900x1000: not held");
    /* prebuild's rounds with x's generic kernel refused: the set built without x, its
     * points given their next choice, so the near shape still finds a held choice, not x. */
    fake_builder fb = {.refuse = cx};
    const gt_prebuild_builder b = {.have = fake_have, .build = fake_build, .user = &fb};
    gt_prebuild_report rep;
    TAP_CHECK(gt_prebuild_rounds(&cls, &h100, NULL, rows, 2, 8, &b, &rep) == GT_SUCCESS, "rounds");
    int held_x = gt_kcfg_listed(fb.held, fb.nheld, &cx), held_y = gt_kcfg_listed(fb.held, fb.nheld, &cy);
    int held_new = 0;
    for (int i = 0; i < fb.nheld; i++) held_new |= !gt_kcfg_listed(one, n1, &fb.held[i]);
    TAP_CHECK(fb.rounds == 2 && rep.refused == 1 && !held_x && held_y && held_new &&
                  rep.built == fb.nheld && rep.configs == rep.built + rep.refused && rep.held == 0,
              "x refused: %d rounds, %d configurations, %d built, %d refused; x %d, y %d, a new one %d",
              fb.rounds, rep.configs, rep.built, rep.refused, held_x, held_y, held_new);
    gt_select_row failed[] = {rows[0], rows[1], row(1, 1, 1, x, 0, 0)};
    TAP_CHECK(gt_select_have(&near, &h100, 0, NULL, failed, 3, fb.held, fb.nheld, &cfg, &info) == 0 &&
                  info.in_have && memcmp(&cfg, &cx, sizeof cx) != 0,
              "1100x900x1000 with x refused: held %d, x %d", info.in_have,
              memcmp(&cfg, &cx, sizeof cx) == 0);
    /* Choosing again only where x was chosen gives the set of a whole search with x
     * failed: what the rounds built is that set, less only x. */
    gt_kcfg *whole = NULL;
    const int nw = gt_prebuild_set(&cls, &h100, NULL, failed, 3, 8, &whole);
    int same = nw == fb.nheld;
    for (int i = 0; same && i < nw; i++) same = gt_kcfg_listed(fb.held, fb.nheld, &whole[i]);
    TAP_CHECK(same, "rounds held %d, the whole search with x failed %d configurations", fb.nheld, nw);
    free(one), free(four), free(whole);
}

/* The grid's extents: a narrow f32 class's hold each point from 64 and one past it (an
 * odd shape's last tile nearly empty); a 16-byte class's and a tensor-core-only type's,
 * the points alone. */
static void prebuild_grid_odd_extents(void) {
    gt_key wide = key_f32(1024, 1024, 1024), narrow = wide;
    narrow.align = 4;
    long long w[GT_PREBUILD_EXTENTS_MAX], n[GT_PREBUILD_EXTENTS_MAX];
    const int nw = gt_prebuild_extents(&wide, w), nn = gt_prebuild_extents(&narrow, n);
    int w257 = 0, w256 = 0, n257 = 0, n256 = 0, n17 = 0, n4097 = 0, n65537 = 0;
    for (int i = 0; i < nw; i++) w257 += w[i] == 257, w256 += w[i] == 256;
    for (int i = 0; i < nn; i++)
        n257 += n[i] == 257, n256 += n[i] == 256, n17 += n[i] == 17, n4097 += n[i] == 4097,
            n65537 += n[i] == 65537;
    TAP_CHECK(nw == 11 && w256 && !w257, "16-byte class: %d extents, 256 %d, 257 %d", nw, w256, w257);
    TAP_CHECK(nn == 17 && n256 && n257 && n4097 && n65537 && !n17,
              "4-byte class: %d extents, 256 %d, 257 %d, 4097 %d, 65537 %d, 17 %d", nn, n256, n257,
              n4097, n65537, n17);
    gt_key bf16 = narrow;
    bf16.dtype = GT_DT_BF16, bf16.align = 2;
    TAP_CHECK(gt_prebuild_extents(&bf16, n) == 11, "bf16 2-byte class: the points alone");
}

static void select_prebuilt_set_is_chosen(void) {
    gt_key key = key_f32(1024, 1024, 1024);
    char x[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    model_pick(&key, 0, x, sizeof x);
    /* Held: the model's 20th to 39th, none of them x. */
    gt_kcfg held[20];
    int nheld = 0;
    for (int i = 20; i < 40; i++) {
        char t[GT_SELECT_CONFIG_MAX];
        model_pick(&key, i, t, sizeof t);
        if (t[0] && strcmp(t, x) != 0 && parse(t, &held[nheld]) == 0) nheld++;
    }
    TAP_CHECK(nheld >= GT_SELECT_HELD_MIN, "%d held", nheld);
    char h0[GT_SELECT_CONFIG_MAX];
    gt_kcfg_format(&held[0], h0, sizeof h0);
    /* On this very shape x ran twice as fast as the first held one. */
    gt_select_row rows[] = {row(1024, 1024, 1024, x, 1, 50), row(1024, 1024, 1024, h0, 1, 100)};
    gt_kcfg cfg;
    gt_select_info info;
    TAP_CHECK(gt_select_have(&key, &h100, 0, NULL, rows, 2, held, nheld, &cfg, &info) == 0 &&
                  info.in_have && gt_kcfg_listed(held, nheld, &cfg),
              "prebuilt set: chose %s a held one", info.in_have ? "" : "not");
    /* The same with three held: x is worth a compile. */
    chosen_have(&key, rows, 2, held, 3, got, &info);
    TAP_CHECK(strcmp(got, x) == 0 && !info.in_have, "three held: chose '%s', want '%s'", got, x);
}

/* 65536 x 64 x 64 is e^-32 of a weight from 1024^3: its timings are not read (a first
 * call does not pay for their estimates) and the model's first is chosen. */
static void select_far_shape_not_read(void) {
    gt_key key = key_f32(1024, 1024, 1024);
    char x[GT_SELECT_CONFIG_MAX], y[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    model_firsts(&key, x, y);
    gt_select_row rows[] = {row(65536, 64, 64, x, 1, 100), row(65536, 64, 64, y, 1, 10)};
    gt_select_info info;
    chosen(&key, rows, 2, got, sizeof got, &info);
    TAP_CHECK(strcmp(got, x) == 0 && info.measured == 0, "chose '%s' with %d measured, want '%s' and 0",
              got, info.measured, x);
}

static void select_without_rows_is_model_best(void) {
    gt_key key = key_f32(1000, 1000, 1000);
    char want[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    gt_select_info info;
    model_pick(&key, 0, want, sizeof want);
    chosen(&key, NULL, 0, got, sizeof got, &info);
    TAP_CHECK(want[0] && strcmp(want, got) == 0, "chose '%s', the model's first is '%s'", got, want);
    TAP_CHECK(info.from_model && info.measured == 0 && info.pool > 0, "info: pool %d measured %d",
              info.pool, info.measured);
}

/* A choice runs as a generic kernel and is estimated as one: in f32's 4-byte class the
 * model's exact first for 4099 x 257 x 3001 TT copies 4 bytes at a time, which costs a
 * generic kernel more (tuner/space.c), so the selector takes a tile with packed 16-byte
 * copies; tuning's order (exact kernels) keeps the scalar one first. */
static void select_estimates_generic(void) {
    gt_key key;
    fixture_key(&key, 90, 1, 1, 4099, 257, 3001, 4, 1);
    key.dtype = GT_DT_F32;
    char first[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    gt_kcfg f, g;
    model_pick(&key, 0, first, sizeof first);
    chosen(&key, NULL, 0, got, sizeof got, NULL);
    TAP_CHECK(parse(first, &f) == 0 && parse(got, &g) == 0 && f.vec == 1 && g.vec == 4,
              "exact first '%s', chosen '%s'", first, got);
}

/* Two configurations legal for every shape here (the model's second and third for the
 * new shape), measured on a near and a far shape that disagree. */
static void select_nearest_shape_wins(void) {
    gt_key key = key_f32(1024, 1024, 1024);
    char x[GT_SELECT_CONFIG_MAX], y[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    model_pick(&key, 1, x, sizeof x);
    model_pick(&key, 2, y, sizeof y);
    TAP_CHECK(x[0] && y[0], "the model gives three candidates");
    /* Near (1000^3): x fast, y 2x slower. Far (8192^3): y fast, x 2x slower. */
    gt_select_row rows[] = {row(1000, 1000, 1000, x, 1, 50), row(1000, 1000, 1000, y, 1, 100),
                            row(8192, 8192, 8192, x, 1, 20000), row(8192, 8192, 8192, y, 1, 10000)};
    chosen(&key, rows, 4, got, sizeof got, NULL);
    TAP_CHECK(strcmp(got, x) == 0, "chose '%s', want the near shape's fastest '%s'", got, x);
    /* The new shape next to the far one: y. */
    gt_key far = key_f32(8000, 8000, 8000);
    chosen(&far, rows, 4, got, sizeof got, NULL);
    TAP_CHECK(strcmp(got, y) == 0, "near 8192^3 chose '%s', want '%s'", got, y);
}

/* What a measurement carries to another shape is the model's error there, not the rank:
 * 1024^3's fastest, timed exactly as the model estimated it beside the rest, is not chosen
 * for 1056 x 1056 x 1024, where its 128 x 128 tiles leave a ninth row and column of tiles
 * nearly empty and the model prefers another tile (the form that chose a near shape's
 * fastest ran an unsplit 64 x 64 WGMMA tile on bf16 64 x 64 x 100000, 25 times slower than
 * the model's split-K choice, H100). */
static void select_keeps_model_geometry(void) {
    gt_key near = key_f32(1024, 1024, 1024), key = key_f32(1056, 1056, 1024);
    char x[GT_SELECT_CONFIG_MAX], y[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    model_pick(&key, 0, x, sizeof x);
    model_pick(&near, 0, y, sizeof y);
    gt_kcfg cx, cy;
    TAP_CHECK(x[0] && y[0] && strcmp(x, y) != 0 && parse(x, &cx) == 0 && parse(y, &cy) == 0,
              "the model's firsts differ: '%s' and '%s'", x, y);
    const double ex = gt_space_estimate_us(&cx, &near, &h100), ey = gt_space_estimate_us(&cy, &near, &h100);
    TAP_CHECK(ey < ex && gt_space_estimate_us(&cy, &key, &h100) > gt_space_estimate_us(&cx, &key, &h100),
              "the geometry flips between the shapes");
    /* On 1024^3 both ran exactly as estimated: y is the fastest there. */
    gt_select_row rows[] = {row(1024, 1024, 1024, y, 1, ey), row(1024, 1024, 1024, x, 1, ex)};
    gt_select_info info;
    chosen(&key, rows, 2, got, sizeof got, &info);
    TAP_CHECK(strcmp(got, x) == 0, "chose '%s', want the model's '%s' (1024^3's fastest: '%s')", got, x, y);
    /* And where 1024^3 timed y at a quarter of its estimate (the model wrong about it there), the
     * error carries over: y is chosen. */
    rows[0].time_us = ey / 4;
    chosen(&key, rows, 2, got, sizeof got, &info);
    TAP_CHECK(strcmp(got, y) == 0, "y 4x faster than estimated near: chose '%s', want '%s'", got, y);
}

static void select_failed_never_chosen(void) {
    gt_key key = key_f32(1024, 1024, 1024);
    char x[GT_SELECT_CONFIG_MAX], y[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    model_firsts(&key, x, y);
    /* x is the fastest on the very same shape, but failed verification on another. */
    gt_select_row rows[] = {row(1024, 1024, 1024, x, 1, 10), row(1024, 1024, 1024, y, 1, 40),
                            row(2048, 2048, 2048, x, 0, -1), row(2048, 2048, 2048, y, 1, 300)};
    gt_select_info info;
    chosen(&key, rows, 4, got, sizeof got, &info);
    TAP_CHECK(got[0] && strcmp(got, x) != 0, "chose '%s', which failed on 2048^3", got);
    TAP_CHECK(info.excluded >= 1, "excluded %d", info.excluded);
}

static void select_illegal_never_chosen(void) {
    /* K = 64: a split-K configuration measured on a large-K shape cannot split 64. */
    gt_key big = key_f32(64, 64, 65536), key = key_f32(64, 64, 64);
    char split[GT_SELECT_CONFIG_MAX] = "", got[GT_SELECT_CONFIG_MAX];
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(&big, &h100, 200, 0, &c, &counts);
    for (int i = 0; i < n && !split[0]; i++)
        if (c[i].cfg.split >= 8) gt_kcfg_format(&c[i].cfg, split, sizeof split);
    free(c);
    TAP_CHECK(split[0], "no split-K candidate for 64x64x65536");
    char why[256];
    gt_kcfg cfg;
    TAP_CHECK(gt_kcfg_validate(split, &key, &h100, &cfg, why, sizeof why) != 0,
              "'%s' is legal for K = 64", split);
    /* Measured as wildly the fastest on a shape close in M and N. */
    gt_select_row rows[] = {row(64, 64, 65536, split, 1, 1), row(64, 64, 128, split, 1, 1)};
    chosen(&key, rows, 2, got, sizeof got, NULL);
    TAP_CHECK(got[0] && strcmp(got, split) != 0, "chose the illegal '%s'", got);
}

static void select_same_choice_any_order(void) {
    gt_key key = key_f32(3000, 500, 700);
    gt_key near1 = key_f32(2048, 512, 512), near2 = key_f32(4096, 512, 1024);
    /* Twelve candidates of each nearby shape with made-up times. */
    gt_select_row rows[48];
    int n = 0;
    for (int s = 0; s < 2; s++) {
        const gt_key *k = s ? &near2 : &near1;
        gt_cand *c = NULL;
        gt_space_counts counts;
        int nc = gt_space_build(k, &h100, 24, 0, &c, &counts);
        for (int i = 0; i < nc && i < 24; i++) {
            char text[GT_SELECT_CONFIG_MAX];
            gt_kcfg_format(&c[i].cfg, text, sizeof text);
            rows[n++] = row(k->m, k->n, k->k, text, i % 7 != 3, 100.0 + (double)((i * 37 + s * 11) % 50));
        }
        free(c);
    }
    char first[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    chosen(&key, rows, n, first, sizeof first, NULL);
    TAP_CHECK(first[0], "no choice");
    uint64_t st = 12345;
    int same = 1;
    for (int t = 0; t < 20; t++) {
        for (int i = n - 1; i > 0; i--) {
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            int j = (int)((st >> 33) % (uint64_t)(i + 1));
            gt_select_row tmp = rows[i];
            rows[i] = rows[j], rows[j] = tmp;
        }
        chosen(&key, rows, n, got, sizeof got, NULL);
        same &= strcmp(got, first) == 0;
    }
    TAP_CHECK(same, "a shuffled table chose '%s', the first '%s'", got, first);
}

static void select_prefers_measured(void) {
    gt_key key = key_f32(1100, 1000, 900);
    char m0[GT_SELECT_CONFIG_MAX], m3[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    model_pick(&key, 0, m0, sizeof m0);
    model_pick(&key, 3, m3, sizeof m3);
    /* The model's fourth, measured fastest on a close shape (1024 x 1024 x 1024) where the
     * model's first was never timed. */
    gt_select_row rows[] = {row(1024, 1024, 1024, m3, 1, 80)};
    gt_select_info info;
    chosen(&key, rows, 1, got, sizeof got, &info);
    TAP_CHECK(strcmp(got, m3) == 0, "chose '%s' (model's first '%s'), want the measured '%s'",
              got, m0, m3);
    TAP_CHECK(!info.from_model && info.measured == 1, "from_model %d measured %d", info.from_model,
              info.measured);
}

/* The first of the model's candidates for at whose block tile has rows rows (rows 0: at
 * least min_rows), legal for key too; "" when none of the first GT_SELECT_POOL is. */
static void tile_rows_pick(const gt_key *at, const gt_key *key, int rows, int min_rows, char *text) {
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(at, &h100, GT_SELECT_POOL, 0, &c, &counts);
    text[0] = 0;
    for (int i = 0; i < n; i++)
        if ((rows ? c[i].cfg.bm == rows : c[i].cfg.bm >= min_rows) &&
            gt_kcfg_check(&c[i].cfg, key, &h100, GT_KC_LEGAL) == 0) {
            gt_kcfg_format(&c[i].cfg, text, GT_SELECT_CONFIG_MAX);
            break;
        }
    free(c);
}

/* A tile that covers all of M at the measured shape and not at the new one: its error
 * there is not carried over. 16 x 4096 x 4096 timed a 16-row tile at a quarter of its
 * estimate; for 32 x 4096 x 4096 (two tile rows, B read twice) the selector does not
 * count that timing, while a tile of 32 rows or more, which covers M at both, carries
 * its error as any other. */
static void select_span_not_carried(void) {
    gt_key near = key_f32(16, 4096, 4096), key = key_f32(32, 4096, 4096);
    char x[GT_SELECT_CONFIG_MAX], y[GT_SELECT_CONFIG_MAX], got[GT_SELECT_CONFIG_MAX];
    tile_rows_pick(&near, &key, 16, 0, x);
    tile_rows_pick(&key, &near, 0, 32, y);
    gt_kcfg cx, cy;
    TAP_CHECK(x[0] && y[0] && parse(x, &cx) == 0 && parse(y, &cy) == 0,
              "the model gives a 16-row tile ('%s') and one of 32 rows or more ('%s')", x, y);
    gt_select_row rows[] = {row(16, 4096, 4096, x, 1, gt_space_estimate_us(&cx, &near, &h100) / 4)};
    gt_select_info info;
    chosen(&key, rows, 1, got, sizeof got, &info);
    TAP_CHECK(strcmp(got, x) != 0 && info.measured == 0,
              "chose '%s' (the 16-row tile '%s' timed where it covered M), %d measured", got, x,
              info.measured);
    /* The same timing where the new shape's M fits the tile too: carried, and chosen. */
    gt_key fits = key_f32(12, 4096, 4096);
    chosen(&fits, rows, 1, got, sizeof got, &info);
    TAP_CHECK(strcmp(got, x) == 0 && info.measured == 1, "M = 12: chose '%s', want '%s'", got, x);
    /* A tile that covers M at both shapes carries its error to 32 x 4096 x 4096. */
    snprintf(rows[0].config, sizeof rows[0].config, "%s", y);
    rows[0].time_us = gt_space_estimate_us(&cy, &near, &h100) / 4;
    chosen(&key, rows, 1, got, sizeof got, &info);
    TAP_CHECK(strcmp(got, y) == 0 && info.measured == 1, "chose '%s', want the %d-row '%s'", got,
              cy.bm, y);
}

/* Async tuning's first call: only configurations bit-identical to the default kernel's,
 * even where a split-K one was measured much faster. */
static void select_same_order(void) {
    gt_key key = key_f32(64, 64, 65536);
    char split[GT_SELECT_CONFIG_MAX] = "", got[GT_SELECT_CONFIG_MAX];
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(&key, &h100, 200, 0, &c, &counts);
    for (int i = 0; i < n && !split[0]; i++)
        if (c[i].cfg.split >= 8) gt_kcfg_format(&c[i].cfg, split, sizeof split);
    free(c);
    gt_select_row rows[] = {row(64, 64, 65536, split, 1, 1)};
    chosen(&key, rows, 1, got, sizeof got, NULL);
    TAP_CHECK(strcmp(got, split) == 0, "without flags chose '%s', want the measured '%s'", got, split);
    flags_in_use = GT_SPACE_SAME_ORDER;
    gt_kcfg cfg;
    chosen(&key, rows, 1, got, sizeof got, NULL);
    flags_in_use = 0;
    char why[256];
    TAP_CHECK(got[0] && gt_kcfg_validate(got, &key, &h100, &cfg, why, sizeof why) == 0 &&
                  gt_kcfg_same_order(&cfg, &key),
              "same order chose '%s'", got);
}

static void rank_learns_from_history(void) {
    gt_key key = key_f32(1024, 1024, 1024);
    char m0[GT_SELECT_CONFIG_MAX], m1[GT_SELECT_CONFIG_MAX], m20[GT_SELECT_CONFIG_MAX],
        m30[GT_SELECT_CONFIG_MAX];
    model_pick(&key, 0, m0, sizeof m0);
    model_pick(&key, 1, m1, sizeof m1);
    model_pick(&key, 20, m20, sizeof m20);
    model_pick(&key, 30, m30, sizeof m30);
    TAP_CHECK(m0[0] && m1[0] && m20[0] && m30[0], "the model gives 31 candidates");
    gt_kcfg out[GT_TUNE_SEEDS];
    /* No history: no seeds, the cost model's order stands. */
    TAP_CHECK(gt_select_rank(&key, &h100, 0, NULL, NULL, 0, out, GT_TUNE_SEEDS) == 0, "seeds without rows");
    /* A near shape (1000^3) measured the model's 20th fastest, its 30th 5% behind, its
     * first twice as slow; the model's second failed on another shape. */
    gt_select_row rows[] = {row(1000, 1000, 1000, m20, 1, 50), row(1000, 1000, 1000, m30, 1, 52.5),
                            row(1000, 1000, 1000, m0, 1, 100), row(2000, 2000, 2000, m1, 0, -1),
                            row(2000, 2000, 2000, m0, 1, 700)};
    int n = gt_select_rank(&key, &h100, 0, NULL, rows, 5, out, GT_TUNE_SEEDS);
    char t[3][GT_SELECT_CONFIG_MAX] = {"", "", ""};
    for (int i = 0; i < n && i < 3; i++) gt_kcfg_format(&out[i], t[i], sizeof t[i]);
    TAP_CHECK(n == 3, "%d seeds, want 3 (the measured ones that did not fail)", n);
    TAP_CHECK(strcmp(t[0], m20) == 0 && strcmp(t[1], m30) == 0 && strcmp(t[2], m0) == 0,
              "seeds '%s' '%s' '%s', want the measured order '%s' '%s' '%s'", t[0], t[1], t[2],
              m20, m30, m0);
    for (int i = 0; i < n; i++)
        TAP_CHECK(strcmp(t[i < 3 ? i : 2], m1) != 0, "the failed '%s' is a seed", m1);
    /* At most max. */
    TAP_CHECK(gt_select_rank(&key, &h100, 0, NULL, rows, 5, out, 1) == 1 &&
                  (gt_kcfg_format(&out[0], t[0], sizeof t[0]), strcmp(t[0], m20) == 0),
              "max 1: '%s'", t[0]);
}

static void rank_spreads_over_groups(void) {
    gt_key key = key_f32(1024, 1024, 1024);
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(&key, &h100, GT_SELECT_POOL, 0, &c, &counts);
    /* Three of one group from the model's list, and one of another. */
    int g[3] = {-1, -1, -1}, other = -1;
    for (int i = 0; i < n && g[2] < 0; i++) {
        int cnt = 0;
        for (int j = 0; j < n && cnt < 3; j++)
            if (gt_kcfg_same_group(&c[i].cfg, &c[j].cfg)) g[cnt++] = j;
        if (cnt < 3) g[0] = g[1] = g[2] = -1;
    }
    for (int i = 0; i < n && g[2] >= 0 && other < 0; i++)
        if (!gt_kcfg_same_group(&c[i].cfg, &c[g[0]].cfg)) other = i;
    TAP_CHECK(g[2] >= 0 && other >= 0, "the model's list holds a group of three and another");
    if (g[2] < 0 || other < 0) {
        free(c);
        return;
    }
    char t[4][GT_SELECT_CONFIG_MAX];
    for (int i = 0; i < 3; i++) gt_kcfg_format(&c[g[i]].cfg, t[i], sizeof t[i]);
    gt_kcfg_format(&c[other].cfg, t[3], sizeof t[3]);
    /* A near shape timed the group's three fastest, the other 20% behind them. */
    gt_select_row rows[] = {row(1000, 1000, 1000, t[0], 1, 50), row(1000, 1000, 1000, t[1], 1, 50.5),
                            row(1000, 1000, 1000, t[2], 1, 51), row(1000, 1000, 1000, t[3], 1, 60)};
    gt_kcfg out[GT_TUNE_SEEDS];
    int ns = gt_select_rank(&key, &h100, 0, NULL, rows, 4, out, GT_TUNE_SEEDS);
    TAP_CHECK(ns == 3, "%d seeds, want 3 (two of the group, then the other)", ns);
    int in_group = 0, has_other = 0;
    for (int i = 0; i < ns; i++) {
        in_group += gt_kcfg_same_group(&out[i], &c[g[0]].cfg);
        has_other |= memcmp(&out[i], &c[other].cfg, sizeof out[i]) == 0;
    }
    TAP_CHECK(in_group == 2 && has_other, "%d seeds of the group (want 2), the other %s", in_group,
              has_other ? "among them" : "missing");
    TAP_CHECK(ns == 3 && gt_kcfg_same_group(&out[0], &c[g[0]].cfg) && gt_kcfg_same_group(&out[1], &c[g[0]].cfg),
              "the group's two come first, by their measurements");
    free(c);
}

static void tune_order_seeds_first(void) {
    gt_key key = key_f32(1024, 1024, 1024);
    gt_cand *space = NULL;
    gt_space_counts counts;
    int n = gt_space_build(&key, &h100, 8, 0, &space, &counts);
    TAP_CHECK(n == 8, "space of %d", n);
    if (n != 8) {
        free(space);
        return;
    }
    /* Seeds: the model's 6th, one outside the space (the 40th), the 6th again. */
    gt_cand *wide = NULL;
    int nw = gt_space_build(&key, &h100, 64, 0, &wide, &counts);
    TAP_CHECK(nw > 40, "wide space of %d", nw);
    gt_kcfg seeds[3] = {space[5].cfg, nw > 40 ? wide[40].cfg : space[7].cfg, space[5].cfg};
    gt_kcfg out[8];
    int k = gt_tune_order(space, n, seeds, 3, 8, out);
    TAP_CHECK(k == 8, "order of %d", k);
    TAP_CHECK(gt_kcfg_listed(&out[0], 1, &seeds[0]) && gt_kcfg_listed(&out[1], 1, &seeds[1]),
              "the seeds are not first");
    /* Then the model's order without the seed it held: 0, 1, 2, 3, 4, 6; the 8th drops. */
    static const int want[] = {0, 1, 2, 3, 4, 6};
    int same = 1;
    for (int i = 0; i < 6; i++) same &= gt_kcfg_listed(&out[2 + i], 1, &space[want[i]].cfg);
    TAP_CHECK(same, "the model's order after the seeds");
    /* No seeds: the model's order itself. */
    k = gt_tune_order(space, n, NULL, 0, 8, out);
    same = k == 8;
    for (int i = 0; i < k; i++) same &= gt_kcfg_listed(&out[i], 1, &space[i].cfg);
    TAP_CHECK(same, "without seeds the order differs from the model's");
    free(space), free(wide);
}


static void tune_threads_leave_one_for_helpers(void) {
    TAP_CHECK(gt_tune_threads(0, 16, 0) == 16, "16 CPUs, helpers held: %d", gt_tune_threads(0, 16, 0));
    TAP_CHECK(gt_tune_threads(0, 16, 1) == 15, "16 CPUs, helpers to compile: %d", gt_tune_threads(0, 16, 1));
    TAP_CHECK(gt_tune_threads(8, 16, 1) == 8, "8 of 16 requested: %d", gt_tune_threads(8, 16, 1));
    TAP_CHECK(gt_tune_threads(16, 16, 1) == 15, "16 of 16 requested: %d", gt_tune_threads(16, 16, 1));
    TAP_CHECK(gt_tune_threads(0, 1, 1) == 1 && gt_tune_threads(0, -1, 1) == 1 &&
                  gt_tune_threads(1, 16, 1) == 1,
              "one CPU, no CPU count, one requested: %d %d %d", gt_tune_threads(0, 1, 1),
              gt_tune_threads(0, -1, 1), gt_tune_threads(1, 16, 1));
}

static void tune_screening_rules(void) {
    /* No best yet: every candidate is timed in full. */
    TAP_CHECK(!gt_tune_screens(100.0, 0) && !gt_tune_screen_stands(100.0, 0),
              "screened with no best so far");
    /* A first run over GT_TUNE_SCREEN_FIRST times the best is screened, one under not. */
    TAP_CHECK(!gt_tune_screens(14.0, 10.0) && gt_tune_screens(16.0, 10.0),
              "first runs 1.4x and 1.6x the best: %d %d", gt_tune_screens(14.0, 10.0),
              gt_tune_screens(16.0, 10.0));
    TAP_CHECK(!gt_tune_screens(NAN, 10.0), "a NaN first run screened");
    /* The screening median stands only while clearly slower; near the best, timed in full. */
    TAP_CHECK(!gt_tune_screen_stands(12.0, 10.0) && gt_tune_screen_stands(13.0, 10.0),
              "screening medians 1.2x and 1.3x the best: %d %d", gt_tune_screen_stands(12.0, 10.0),
              gt_tune_screen_stands(13.0, 10.0));
    /* A standing median can never be the fastest: the best it was held against is
     * faster, and the best only falls. */
    TAP_CHECK(GT_TUNE_SCREEN_KEEP > 1.0 && GT_TUNE_SCREEN_FIRST >= GT_TUNE_SCREEN_KEEP &&
                  GT_TUNE_SCREEN_REPS >= 3,
              "screening constants %g %g %d", GT_TUNE_SCREEN_FIRST, GT_TUNE_SCREEN_KEEP,
              GT_TUNE_SCREEN_REPS);
}

/* cands[i]: status, time (OK) and estimate. */
static void held_cands(gt_tune_cand *c, int n, const int *status, const double *time_us,
                       const double *est_us) {
    memset(c, 0, sizeof *c * (size_t)n);
    for (int i = 0; i < n; i++) {
        c[i].status = status[i];
        c[i].time_us = status[i] == GT_TR_OK ? time_us[i] : -1;
        c[i].est_us = est_us[i];
    }
}

static void tune_best_held_rules(void) {
    enum { OK = GT_TR_OK, LEFT = GT_TR_NOT_TIMED, FAILED = GT_TR_COMPILE_FAILED };
    gt_tune_cand c[6];
    /* Four timed, each as the model said (time / estimate 1): the best 10 us. Two left,
     * estimated 25 and 30: even as far under their estimates as the luckiest timed one and
     * by the margin more (x 0.5), 12.5 and 15 us: the best has held. */
    const int st[6] = {OK, OK, OK, OK, LEFT, LEFT};
    const double t[6] = {10, 12, 20, 30, 0, 0};
    double e[6] = {10, 12, 20, 30, 25, 30};
    held_cands(c, 6, st, t, e);
    TAP_CHECK(gt_tune_best_held(c, 6), "remaining ones estimated 2.5x and 3x the best not held");
    /* One left estimated within twice the best: it could still win. */
    e[4] = 19;
    held_cands(c, 6, st, t, e);
    TAP_CHECK(!gt_tune_best_held(c, 6), "held with one left estimated 1.9x the best");
    /* A seed left, however far its estimate: the history put it first, so not held. */
    e[4] = 25;
    held_cands(c, 6, st, t, e);
    c[5].seeded = 1;
    TAP_CHECK(!gt_tune_best_held(c, 6), "held with a seed left");
    e[4] = 19;
    /* Its compile failed: it is not left. */
    const int st_failed[6] = {OK, OK, OK, OK, FAILED, LEFT};
    held_cands(c, 6, st_failed, t, e);
    TAP_CHECK(gt_tune_best_held(c, 6), "a failed candidate counted as left");
    /* A timed candidate ran at 0.4 of its estimate: the ones left are judged as lucky, so
     * estimates of 25 and 30 (x 0.4 x 0.5 = 5 and 6 us) could beat the best. */
    double e_lucky[6] = {10, 30, 20, 30, 25, 30};
    held_cands(c, 6, st, t, e_lucky);
    TAP_CHECK(!gt_tune_best_held(c, 6), "held though a timed one ran at 0.4 of its estimate");
    /* Fewer than GT_TUNE_HELD_MIN timed: never held. */
    const int st_three[6] = {OK, OK, OK, LEFT, LEFT, LEFT};
    double e_far[6] = {10, 12, 20, 100, 100, 100};
    held_cands(c, 6, st_three, t, e_far);
    TAP_CHECK(GT_TUNE_HELD_MIN == 4 && !gt_tune_best_held(c, 6), "held after three timed");
    /* A left candidate with no estimate: unknown, so not held. */
    double e_none[6] = {10, 12, 20, 30, 0, 100};
    held_cands(c, 6, st, t, e_none);
    TAP_CHECK(!gt_tune_best_held(c, 6), "held against a candidate with no estimate");
    /* Nothing left: nothing to stop. */
    const int st_all[6] = {OK, OK, OK, OK, OK, OK};
    const double t_all[6] = {10, 12, 20, 30, 40, 50};
    double e_all[6] = {10, 12, 20, 30, 40, 50};
    held_cands(c, 6, st_all, t_all, e_all);
    TAP_CHECK(!gt_tune_best_held(c, 6), "held with every candidate timed");
}

/* A synthetic space in the model's order, of family fam: 12 of one group (A) first, then
 * two of group B, one more A, then groups C, D and E. 0 when it cannot be made. */
static int order_space(int fam, gt_cand space[20]) {
    gt_key key = key_f32(1024, 1024, 1024);
    gt_cand *real = NULL;
    gt_space_counts counts;
    int nr = gt_space_build(&key, &h100, 1, 0, &real, &counts);
    TAP_CHECK(nr == 1, "a model candidate");
    if (nr != 1) return free(real), 0;
    const int grp[20] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 2, 3, 4, 4, 0};
    for (int i = 0; i < 20; i++) {
        space[i] = real[0];
        space[i].cfg.fam = fam;
        space[i].cfg.bm = 32 << (grp[i] % 3);
        space[i].cfg.split = 1 + grp[i] / 3;
        space[i].cfg.stages = 2 + i; /* each one distinct */
    }
    free(real);
    return 1;
}

/* gt_tune_order over space (20 entries), with seed first where one is given, max places:
 * checks that it fills them and that its first nwant are space's entries want[]. */
static void check_order(const gt_cand *space, const gt_kcfg *seed, int max, const int *want,
                        int nwant, const char *what) {
    gt_kcfg out[20];
    int k = gt_tune_order(space, 20, seed, seed ? 1 : 0, max, out);
    int same = k == max;
    for (int i = 0; i < nwant && same; i++) same = gt_kcfg_listed(&out[i], 1, &space[want[i]].cfg);
    TAP_CHECK(same, "%s", what);
}

static void tune_order_widens_past_one_group(void) {
    /* A tensor-core family: no cap on one group's members in the first half. */
    gt_cand space[20];
    if (!order_space(GT_FAM_DMMA, space)) return;
    /* max 8 of 20: 4 in the model's order (A), 2 of new groups (B, C), 2 in order (A). */
    static const int want[8] = {0, 1, 2, 3, 12, 15, 4, 5};
    check_order(space, NULL, 8, want, 8,
                "max 8 of 20: 4 of the model's, the best of B and C, then the model's order");
    gt_kcfg out[20];
    int k = gt_tune_order(space, 20, NULL, 0, 8, out), groups = 0;
    for (int i = 0; i < k; i++) {
        int fresh = 1;
        for (int j = 0; j < i; j++) fresh &= !gt_kcfg_same_group(&out[i], &out[j]);
        groups += fresh;
    }
    TAP_CHECK(groups == 3, "%d groups among 8, want 3", groups);
    /* max 16 of 20: 8 in order, then 4 new groups (B at 12, C at 15, D at 16, E at 17). */
    static const int want16[12] = {0, 1, 2, 3, 4, 5, 6, 7, 12, 15, 16, 17};
    check_order(space, NULL, 16, want16, 12, "max 16 of 20: 8 of the model's, then B, C, D and E");
    /* A seed takes the first place; the places left split the same way (7: 4, 1, 2). */
    gt_kcfg seed = space[17].cfg;
    static const int want_s[8] = {17, 0, 1, 2, 3, 12, 4, 5};
    check_order(space, &seed, 8, want_s, 8,
                "with a seed: the seed, 4 of the model's, B, then the model's order");
    /* The same inputs, the same order (every rank the same). */
    gt_kcfg again[20];
    k = gt_tune_order(space, 20, &seed, 1, 8, out);
    int k2 = gt_tune_order(space, 20, &seed, 1, 8, again);
    TAP_CHECK(k2 == k && memcmp(again, out, sizeof out[0] * (size_t)k) == 0, "the same order twice");
}

static void tune_order_caps_a_simt_group(void) {
    gt_cand space[20];
    if (!order_space(GT_FAM_SIMT, space)) return;
    TAP_CHECK(GT_TUNE_LEAD_SAME == 3, "the cases below are for a cap of 3, not %d",
              GT_TUNE_LEAD_SAME);
    /* max 8 of 20: the first half holds 3 of A (GT_TUNE_LEAD_SAME) and B's first; new
     * groups C and D; then A's next in the model's order. */
    static const int want[8] = {0, 1, 2, 12, 15, 16, 3, 4};
    check_order(space, NULL, 8, want, 8, "max 8 of 20: 3 of A, B, then C and D, then A's next");
    /* max 16: the first half reaches every group (A 3, B 2, C, D, E); no group is new
     * after it; the rest in the model's order, A's from the 4th. */
    static const int want16[16] = {0, 1, 2, 12, 13, 15, 16, 17, 3, 4, 5, 6, 7, 8, 9, 10};
    check_order(space, NULL, 16, want16, 16,
                "max 16 of 20: 3 of A, both of B, C, D, E, then A's others");
    /* A seed counts towards its group: with A's 6th as the seed, 2 more of A lead. */
    gt_kcfg seed = space[5].cfg;
    static const int want_s[8] = {5, 0, 1, 12, 13, 15, 2, 3};
    check_order(space, &seed, 8, want_s, 8,
                "with a seed of A: the seed, 2 of A, both of B, C, then A's next");
    /* No wider than the list: the model's order, no cap. */
    gt_kcfg out[8];
    int k = gt_tune_order(space, 8, NULL, 0, 8, out), same = k == 8;
    for (int i = 0; i < k && same; i++) same = gt_kcfg_listed(&out[i], 1, &space[i].cfg);
    TAP_CHECK(same, "a space of the list's size keeps the model's order");
}

static void held_list_is_the_class_generics(void) {
    char path[] = "/tmp/gt_select_held_XXXXXX";
    int made = temp_cache_open(path, 0);
    TAP_CHECK(made == 0, "mkstemp");
    if (made != 0) return;
    gt_key key = key_f32(1000, 1000, 1000), other = key;
    other.opb = 0; /* another class: NN */
    static const unsigned char image[16] = {0x7f, 'E', 'L', 'F'};
    /* Stored out of order; one twice; an exact program, another class's and one of
     * another options revision beside them. */
    const char *cfgs[] = {"f0_64x64x8_w32x32_t4x4_s2_v4_k1_r1", "f0_128x64x8_w64x32_t8x4_s2_v4_k1_r1",
                          "f0_32x32x8_w32x32_t4x4_s2_v4_k1_r1", "f0_64x64x8_w32x32_t4x4_s2_v4_k1_r1"};
    for (int i = 0; i < 4; i++) {
        gt_kcfg c;
        TAP_CHECK(gt_kcfg_parse(cfgs[i], &c, NULL, 0) == 0, "parse %s", cfgs[i]);
        c.generic = 1;
        gt_program p;
        gt_kern_program(&c, &key, &p);
        gt_load_store(&p, 90, image, sizeof image);
        if (i == 0) {
            gt_kern_program(&c, &other, &p); /* another class */
            gt_load_store(&p, 90, image, sizeof image);
            gt_kern_program(&c, &key, &p); /* another revision of the options */
            char *o = strstr(p.text, "|o");
            TAP_CHECK(o != NULL, "no revision in '%s'", p.text);
            if (o) o[2] = (char)(o[2] == '1' ? '0' : '1');
            gt_load_store(&p, 90, image, sizeof image);
            c.generic = 0; /* the exact program */
            gt_kern_program(&c, &key, &p);
            gt_load_store(&p, 90, image, sizeof image);
        }
    }
    gt_kcfg have[8];
    int n = gt_kern_generic_have(&key, 90, have, 8);
    const char *want[] = {"f0_128x64x8_w64x32_t8x4_s2_v4_k1_r1", "f0_32x32x8_w32x32_t4x4_s2_v4_k1_r1",
                          "f0_64x64x8_w32x32_t4x4_s2_v4_k1_r1"};
    TAP_CHECK(n == 3, "%d held configurations, expected 3", n);
    for (int i = 0; i < n && i < 3; i++) {
        char text[GT_SELECT_CONFIG_MAX];
        gt_kcfg_format(&have[i], text, sizeof text);
        TAP_CHECK(strcmp(text, want[i]) == 0, "held %d: %s, expected %s", i, text, want[i]);
    }
    TAP_CHECK(gt_kern_generic_have(&key, 90, have, 2) == 2, "max 2 not kept");
    gt_layers_close();
    unlink(path);
    unsetenv("GEMMTUNE_CACHE");
}

int main(void) {
    TAP_RUN(select_have_prefers_held);
    TAP_RUN(tune_order_widens_past_one_group);
    TAP_RUN(tune_order_caps_a_simt_group);
    TAP_RUN(select_have_never_failed);
    TAP_RUN(prebuild_set_covers_choices);
    TAP_RUN(prebuild_grid_odd_extents);
    TAP_RUN(select_prebuilt_set_is_chosen);
    TAP_RUN(select_far_shape_not_read);
    TAP_RUN(select_without_rows_is_model_best);
    TAP_RUN(select_estimates_generic);
    TAP_RUN(select_nearest_shape_wins);
    TAP_RUN(select_failed_never_chosen);
    TAP_RUN(select_keeps_model_geometry);
    TAP_RUN(select_illegal_never_chosen);
    TAP_RUN(select_same_choice_any_order);
    TAP_RUN(select_prefers_measured);
    TAP_RUN(select_span_not_carried);
    TAP_RUN(select_same_order);
    TAP_RUN(rank_learns_from_history);
    TAP_RUN(rank_spreads_over_groups);
    TAP_RUN(tune_order_seeds_first);
    TAP_RUN(tune_threads_leave_one_for_helpers);
    TAP_RUN(tune_screening_rules);
    TAP_RUN(tune_best_held_rules);
    TAP_RUN(held_list_is_the_class_generics);
    return tap_done();
}
