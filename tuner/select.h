/*
 * select.h: a configuration for a shape in no cache, chosen from what the cache layers
 * measured on other shapes of its class (every candidate's timing of every tuned shape,
 * not only the winners) and from the cost model.
 *
 * The pool: the cost model's best GT_SELECT_POOL legal candidates for the new shape, and
 * every measured configuration that is legal for it (gt_kcfg_validate). A configuration
 * that failed on any measured shape (did not compile, load, run or verify) is never
 * chosen. Each candidate c gets a score, the log of its expected time relative to the
 * best, lower is better:
 *   S(c) = ln(est_c / est_min) + (sum_j w_j r_jc + W0 U) / (W + W0)
 * where est is the (corrected, modelfix.h) cost model's estimate for the new shape, r_jc
 * c's error against the model on measured shape j, ln(t_jc / est_jc), less the mean of
 * that over shape j's timings, w_j = exp(-(d_j / SIGMA)^2) with d_j the distance of
 * (log M, log N, log K) from the new shape, W = sum_j w_j over the shapes that timed c,
 * and U the doubt about a configuration no nearby shape has timed, which fades as
 * measurements gather (shapes of weight under GT_SELECT_MIN_WEIGHT are not read). A
 * shape where c's block tile covers all of M (or N) and the new shape's does not, or the
 * reverse, does not count for c: the tile meets the operands differently there. So the model speaks for how a configuration fits the new shape
 * (its tiles, waves and split of K), and measurements for what the model gets wrong about
 * it: a near shape's fastest is not carried to a shape whose geometry it does not fit
 * (choosing a near shape's fastest by its time relative to the others there ran an
 * unsplit tile on bf16 64 x 64 x 100000, 25 times slower than the model's split-K choice,
 * H100). Ties go to the configuration text that sorts first; the rows are sorted before
 * they are read, so the same rows in any order give the same choice on every rank.
 */
#ifndef GT_SELECT_H
#define GT_SELECT_H

#include "kcfg.h"
#include "key.h"
#include "modelfix.h"

#define GT_SELECT_POOL 64
/* The weights below may be set at compile time, for dev/select_loo.c's trials. */
#ifndef GT_SELECT_SIGMA
#define GT_SELECT_SIGMA 1.0   /* natural-log units: a factor e in one dimension */
#endif
#ifndef GT_SELECT_W0
#define GT_SELECT_W0 0.3      /* the prior's weight, as one shape at distance 1.1 */
#endif
#ifndef GT_SELECT_DOUBT
#define GT_SELECT_DOUBT 0.4   /* ln 1.5: an unmeasured configuration's handicap */
#endif
#define GT_SELECT_MIN_WEIGHT 1e-3 /* a measured shape's weight below which it is not read */
#define GT_SELECT_CONFIG_MAX 128

/* One candidate's outcome on one measured shape (the cache's timings table). */
typedef struct gt_select_row {
    long long m, n, k;          /* the measured shape (of the new shape's class) */
    int beta0;
    char config[GT_SELECT_CONFIG_MAX];
    int ok;                     /* ran and verified there */
    double time_us;             /* its median time there (ok rows) */
    int generic;                /* the selector's own: config named a generic kernel */
} gt_select_row;

typedef struct gt_select_info {
    int pool;                   /* candidates scored */
    int measured;               /* of them, timed on some measured shape */
    int excluded;               /* configurations that failed somewhere */
    double score;               /* the chosen one's S */
    int from_model;             /* 1: no measured shape timed the chosen one */
    int in_have;                /* gt_select_have: the choice is one of have */
} gt_select_info;

/* The squared distance of (ln M, ln N, ln K) between key's shape and m x n x k: how far
 * a measured shape is, for the selector's weights and mode cached's nearest winner. */
double gt_select_log_dist2(const gt_key *key, long long m, long long n, long long k);

/* The choice for key on a device of limits lim, from rows (of key's device, dtype, ops
 * and alignment class; rows of key's own shape are used too). flags: space.h's
 * (GT_SPACE_SAME_ORDER: only configurations whose results are bit-identical to the
 * default kernel's, measured ones included). fix: the cost model's correction
 * (modelfix.h, fitted to the data type's timings of every class), or NULL: every
 * estimate above is the corrected one. 0 with *out set; -1 when no candidate is legal
 * (or out of memory). info may be NULL. */
int gt_select(const gt_key *key, const gt_klimits *lim, int flags, const gt_modelfix *fix,
              const gt_select_row *rows, int nrows, gt_kcfg *out, gt_select_info *info);

/* gt_select, preferring what the node has built (the configurations whose generic kernel
 * the binary cache holds). A prebuilt set (nhave >= GT_SELECT_HELD_MIN: src/prebuild.c's,
 * from the selector over a grid of shapes) replaces the search of the space: the pool is
 * have and the measured configurations, legal here, and the best of have is chosen
 * (info->in_have = 1), so a first call compiles nothing; the best of the rest only where
 * none of have is legal here. A smaller held set (binaries of the shapes a node has run)
 * joins the model's best, as without one, and its best is chosen when its score is within
 * GT_SELECT_HAVE_SLACK of the best's, else the best. A configuration that failed
 * somewhere is never chosen, held or not. */
#define GT_SELECT_HAVE_SLACK 0.05 /* ln 1.05: 5% of expected time for no compile */
#define GT_SELECT_HELD_MIN 16     /* held configurations that make a prebuilt set */
int gt_select_have(const gt_key *key, const gt_klimits *lim, int flags, const gt_modelfix *fix,
                   const gt_select_row *rows, int nrows, const gt_kcfg *have, int nhave,
                   gt_kcfg *out, gt_select_info *info);

/* The ranking that learns, for tuning a new shape: the configurations that shapes of key's
 * class measured (the rows: every candidate's timing of every tuned shape, all layers)
 * and that are legal here, best score S first (ties by text), at most max into out; the
 * count (0 with no rows). S is the selector's: the model's estimate for this shape moved
 * by what nearby shapes measured it to get wrong about each configuration, so the
 * configurations that ran faster than the model said, near here, come first. The tuner
 * times these first (gt_tune_opts.seeds); with an empty history the cost model alone
 * ranks. */
int gt_select_rank(const gt_key *key, const gt_klimits *lim, int flags, const gt_modelfix *fix,
                   const gt_select_row *rows, int nrows, gt_kcfg *out, int max);

#endif
