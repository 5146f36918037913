/*
 * prebuild.h: the node's generic kernels, built ahead of the calls that need them.
 *
 * A shape that no cache layer has tuned runs a generic kernel (M, N, K as arguments:
 * one binary per class and configuration, tuner/kcfg.h) of the selector's choice
 * (src/dispatch.c). Once the binary cache holds the generic kernels that the selector
 * chooses, such a shape's first call compiles nothing: the selector prefers what the
 * node holds (tuner/select.h, gt_select_have). This module makes that set for a class:
 * the default configuration, and the selector's choices (any order, and async tuning's
 * same-order ones) at every point of a fixed grid of shapes (a factor of 4 apart; in a
 * narrow class of a type with FMA kernels, extents one past those too) and at every shape the
 * layers have tuned, from the class's measured rows; then compiles those the binary
 * cache lacks, on threads, and stores them. Where a kernel does not compile or is refused,
 * its points get the selector's next choice, built in a further round. `gemmtune
 * prebuild` runs it per class.
 * Before the set exists, a first call compiles the generic kernel of its choice once
 * (then held for every later shape of the class).
 */
#ifndef GT_PREBUILD_H
#define GT_PREBUILD_H

#include "devctx.h"
#include "gemmtune.h"
#include "kcfg.h"
#include "key.h"
#include "select.h"

typedef struct gt_prebuild_report {
    int configs;    /* the class's set, with each round's replacements */
    int held;       /* already in the binary cache */
    int built;      /* compiled and stored now */
    int failed;     /* did not compile (logged) */
    int refused;    /* compiled into a kernel that gt_kern_load refuses (a DMMA kernel
                       that spills): logged, not stored, replaced; its exact form still
                       serves tuned shapes */
    double seconds;
} gt_prebuild_report;

/* The grid's M and N points for cls's class into mn (GT_PREBUILD_EXTENTS_MAX): powers of
 * 4 from 16, every power of two below, and in a class under 16 bytes of a type with FMA
 * kernels (f32, f64, f32_3xtf32: not a tensor-core-only type) each point from 64 one
 * larger too; their count. K's points are the powers of 4 from 16 to 2^20. */
#define GT_PREBUILD_EXTENTS_MAX 22
int gt_prebuild_extents(const gt_key *cls, long long *mn);

/* The set of configurations (generic 0) for cls's class on a device of limits lim
 * (cls's m, n, k unused), from the class's measured rows (src/dispatch.h,
 * gt_dispatch_class_rows) and the cost model's correction (gt_dispatch_model_fix; NULL:
 * none), as the selector chooses: *out malloc'd, sorted by text, no duplicates; the
 * count, or -1 out of memory. threads: selector runs at once (at least 1). */
int gt_prebuild_set(const gt_key *cls, const gt_klimits *lim, const gt_modelfix *fix,
                    const gt_select_row *rows, int nrows, int threads, gt_kcfg **out);

/* Who builds for gt_prebuild_rounds: have fills out with up to max configurations whose
 * generic kernels are held (the count); build compiles and stores todo[0..n) (generic
 * kernels) and sets ok[i] to 1 for each stored, 0 for each that does not compile or is
 * refused, counting them in rep. gt_prebuild_class's compiles with NVRTC and checks with
 * gt_kern_load; a test's may pretend. */
typedef struct gt_prebuild_builder {
    int (*have)(void *user, gt_kcfg *out, int max);
    void (*build)(void *user, const gt_kcfg *todo, int n, int *ok, gt_prebuild_report *rep);
    void *user;
} gt_prebuild_builder;

/* The rounds of a class's build: the set (gt_prebuild_set, from the measured rows), then
 * what b does not hold built by b; where some of it did not build, each of those is marked
 * failed and the selector chooses again at the points that had chosen it (its next choice;
 * the other points' choices stand, so the set is gt_prebuild_set's with those rows), until
 * a round adds no failure (at most GT_PREBUILD_ROUNDS). A failed configuration is not tried
 * twice. rep (seconds aside) counts every round. */
#define GT_PREBUILD_ROUNDS 4
gt_status gt_prebuild_rounds(const gt_key *cls, const gt_klimits *lim, const gt_modelfix *fix,
                             const gt_select_row *rows, int nrows, int threads,
                             const gt_prebuild_builder *b, gt_prebuild_report *rep);

/* Builds the set of cls's class on dc (its context current) in gt_prebuild_rounds: compiles
 * (threads at once) the generic kernels the binary cache lacks, loads each to check it,
 * and stores those that pass. The layers must be open and the user cache writable for
 * them to last beyond the process. */
gt_status gt_prebuild_class(gt_devctx *dc, const gt_key *cls, int threads, gt_prebuild_report *rep);

#endif
