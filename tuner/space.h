/*
 * space.h: the candidate space of a problem: every combination of the parameter table
 * (tuner/kcfg.c) that passes the legal and prune constraints for the key and the device,
 * ranked by a simple cost model and cut to a budget.
 */
#ifndef GT_SPACE_H
#define GT_SPACE_H

#include "kcfg.h"
#include "modelfix.h"
#include "key.h"

typedef struct gt_cand {
    gt_kcfg cfg;
    double est_us;   /* the cost model's estimate, for ranking only */
} gt_cand;

typedef struct gt_space_counts {
    int generated;   /* combinations of the table */
    int pruned;      /* failed a constraint */
    int ranked_out;  /* legal but beyond the budget */
    int kept;
} gt_space_counts;

/* Builds the ranked candidates (best first, at most max; max <= 0: all). *out is
 * malloc'd; returns the count, or -1 when out of memory. When the budget cuts the space,
 * the kept ones are in estimate order but for unsplit candidates estimated within
 * GT_SPACE_UNSPLIT_NEAR of the best: none of those waits behind more than
 * GT_SPACE_SPLIT_RUN split-K ones in a row (they are compiled and timed in this order
 * until the budget is spent, and the model often misjudges split against unsplit). */
#define GT_SPACE_UNSPLIT_NEAR 1.3
#define GT_SPACE_SPLIT_RUN 3
/* Where the budget cuts the space and GEMV candidates are kept, the best of them comes at
 * this position at the latest (0-based), moved ahead of better estimates if need be: the
 * GEMV model and the tile families' are fitted apart, so both get timed early. */
#define GT_SPACE_GEMV_BY 2
/* flags: GT_SPACE_SAME_ORDER keeps only configurations that sum over K in the order
 * of gt_kcfg_default's kernel (no split-K, no tensor cores), so that their results are
 * bit-identical to it: background tuning swaps kernels under a running application. */
enum { GT_SPACE_SAME_ORDER = 1 };

/* The constraints (by name) that read only the family, the block, warp and thread tiles,
 * the key and the limits: gt_space_build tests them once per tile shape instead of once
 * per BK, stages, split, raster and vector variant. test_kcfg checks that no variant
 * field changes their verdict. */
extern const char *const gt_space_tile_only[];
extern const int gt_space_ntile_only;
/* The cheap constraints (by name) that reject most variants, tried before the full
 * check; they read the tile shape, BK, split and raster only, so gt_space_build tests
 * them once per such combination, not per stage count and vector as well. test_kcfg
 * checks that STAGES and VEC never change their verdict. */
extern const char *const gt_space_selective[];
extern const int gt_space_nselective;
int gt_space_build(const gt_key *key, const gt_klimits *lim, int max, int flags, gt_cand **out,
                   gt_space_counts *counts);
/* gt_space_build with the model's estimates corrected by fix (modelfix.h; NULL: none):
 * every candidate's est_us, and so the ranking, is the corrected one. */
int gt_space_build_fixed(const gt_key *key, const gt_klimits *lim, int max, int flags,
                         const gt_modelfix *fix, gt_cand **out, gt_space_counts *counts);

/* gt_klimits.dram_rate for a device whose memory runs at mem_clock_khz (peak) on a bus of
 * bus_bits: its peak (two transfers a clock) over the H100 SXM's (2,619 MHz, 5,120 bits:
 * 3.35 TB/s); 1 within 5% of it (the H100's own figures, which the model's rates were
 * measured on, whatever the driver rounds); 0 (the H100's rate) when either is unknown
 * (<= 0). H200: 3,201 MHz and the 6,016 bits its driver reports give 1.44. Pure. */
double gt_space_dram_rate(int mem_clock_khz, int bus_bits);

/* The cost model: a rough time in microseconds on a device like lim's. */
double gt_space_estimate_us(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim);
/* gt_space_estimate_us corrected by fix (modelfix.h; NULL: as is): the estimate every
 * ranking uses (the space, the tuner's stop, the selector). */
double gt_space_estimate_fixed_us(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim,
                                  const gt_modelfix *fix);

#endif
