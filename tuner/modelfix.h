/*
 * modelfix.h: the cost model corrected by what it mispredicted on the tuned shapes.
 *
 * The cost model (space.h's gt_space_estimate_us) ranks the members of one tile family
 * by rules of thumb, and its errors repeat: a stage count, a warp layout or a thread tile
 * runs slower or faster than it says on shape after shape. Every candidate's timing of
 * every tuned shape of a device, data type and alignment class (all op pairs, all cache
 * layers: src/dispatch.h's gt_dispatch_model_fix gathers them) measures those errors.
 * For each timing the residual
 *   r = ln(time / estimate) - (the mean of that over the same shape's timings)
 * is what the model gets wrong about one configuration against the others of its shape
 * (the shape's own level, which the ranking does not need, drops out). A ridge
 * regression fits r on features of the configuration alone (gt_modelfix_features: the
 * family, and per family the thread tile, the warp and block aspect, the block area, the
 * vector width, stages, BK, split-K or not, rasterization):
 *   w = argmin sum (r - w.x)^2 + GT_FIX_RIDGE |w|^2,
 * and a configuration's corrected estimate is estimate * exp(w.x), with |w.x| at most
 * GT_FIX_MAX_LOG: the correction reorders configurations the model ranks close (the
 * variants of one tile it cannot tell apart, often tied), and does not pull in ones it
 * ranks far off, whose errors the timings (of the model's own top ranks) never measured.
 * A feature no timing had weighs 0. With fewer than GT_FIX_MIN_SHAPES tuned shapes there
 * is no correction (factor 1): too little to tell errors from noise.
 *
 * Checked leave-one-out on the H100 timings of the built-in defaults (dev/select_loo.c,
 * LOO_MODEL=1 LOO_FIX=1; bench/README.md, "The cost model corrected"): each shape hidden
 * in turn, the fit from the others of its class, the corrected model's first among the
 * hidden shape's timed candidates ran at 0.958 of its best in f32 (0.938 uncorrected),
 * 0.956 in f64 (0.946), 0.932 in tf32 (0.928) and 0.913 in bf16 (0.898).
 *
 * The rows are sorted before the fit and every sum runs in that order, so the same rows
 * give the same weights (and the same choices) on every rank. Pure: no driver, no state.
 */
#ifndef GT_MODELFIX_H
#define GT_MODELFIX_H

#include "kcfg.h"
#include "key.h"

#define GT_FIX_MAX_FEATURES 256
#define GT_FIX_PER_CONFIG 10    /* features of one configuration */
/* The fit's constants may be set at compile time, for dev/select_loo.c's trials. */
#ifndef GT_FIX_RIDGE
#define GT_FIX_RIDGE 30.0
#endif
#ifndef GT_FIX_MAX_LOG
#define GT_FIX_MAX_LOG 0.1      /* |w.x| at most: a correction moves an estimate by 10.5% */
#endif
#define GT_FIX_MIN_SHAPES 8

/* One ok timing of a tuned shape: its full key (any op pair and class), the configuration
 * (parsed by the caller, which needs it for the estimate), its median time and the cost
 * model's estimate of it there (gt_space_estimate_us, left to the caller so that this
 * module stays below the model it corrects). */
typedef struct gt_fix_row {
    gt_key key;
    gt_kcfg cfg;
    double time_us;
    double est_us;
} gt_fix_row;

typedef struct gt_modelfix {
    int nfeat;              /* 0: no correction */
    int shapes;             /* tuned shapes the fit saw */
    int rows;               /* timings it used */
    unsigned id[GT_FIX_MAX_FEATURES]; /* the features (gt_modelfix_features), ascending */
    double w[GT_FIX_MAX_FEATURES];
} gt_modelfix;

/* The features of c into ids (GT_FIX_PER_CONFIG of them; each names a kind, the family
 * and a value: (kind << 24) | (family << 16) | (value + 32768)); the count. */
int gt_modelfix_features(const gt_kcfg *c, unsigned ids[GT_FIX_PER_CONFIG]);

/* Fits *fix from rows (of one device and data type; any order). 0, with fix->nfeat = 0
 * where the rows hold fewer than GT_FIX_MIN_SHAPES shapes of two timings or more; -1 out of
 * memory (fix then holds no correction). */
int gt_modelfix_fit(const gt_fix_row *rows, int nrows, gt_modelfix *fix);

/* exp(w.x(c)): what the model's estimate of c is multiplied by; 1 with fix NULL or
 * empty. */
double gt_modelfix_factor(const gt_modelfix *fix, const gt_kcfg *c);

#endif
