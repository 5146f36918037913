/*
 * plan.h: the in-process plan table: (context, problem key) -> loaded kernel.
 *
 * The hot path of gemm_tuned is one lookup here under a read lock, then a launch.
 * Entries live until gt_plan_clear (gt_release); their modules are owned here.
 */
#ifndef GT_PLAN_H
#define GT_PLAN_H

#include <cuda.h>

#include "kern.h"
#include "key.h"

/* Where a plan's kernel came from. */
enum {
    GT_SRC_FALLBACK = 0, /* the safe default kernel (mode off, tuning skipped or failed) */
    GT_SRC_CACHE = 1,    /* the key's winner, from the user cache or a shipped file */
    GT_SRC_TUNED = 2,    /* tuned by this process */
    GT_SRC_NEAREST = 3,  /* mode cached: the winner of the nearest tuned shape */
    GT_SRC_PENDING = 4,  /* async tuning: the default kernel while a worker tunes */
};

typedef struct gt_plan {
    CUcontext ctx;
    gt_key key;
    gt_kern kern;
    int source;            /* GT_SRC_* */
    int retune;            /* made under graph capture without tuning (mode tune, async
                              off): the first call outside capture tunes the key and
                              replaces this plan (the graph keeps this plan's kernel) */
} gt_plan;

/* The plan of (ctx, key), or NULL. The returned plan stays valid until gt_plan_clear. */
const gt_plan *gt_plan_find(CUcontext ctx, const gt_key *key);

/* Inserts a copy of *p and takes ownership of its module. If (ctx, key) already has a
 * plan, p's module is unloaded and the existing plan returned. NULL when out of memory
 * (p's module is then unloaded too). */
const gt_plan *gt_plan_insert(const gt_plan *p);

/* Puts *p in place of the plan of (ctx, key) (async tuning: the winner replaces the
 * pending default). The old plan is retired, not freed: a caller may still be launching
 * it, so its module stays loaded until gt_plan_clear. NULL when out of memory (p's
 * module is then unloaded and the old plan stays). */
const gt_plan *gt_plan_replace(const gt_plan *p);

/* Source of the plan last used for (ctx, key): GT_SRC_*, or -1 when none. */
int gt_plan_source(CUcontext ctx, const gt_key *key);

/* Unloads and forgets every plan. Modules of contexts other than the current one are
 * unloaded with their context pushed. */
void gt_plan_clear(void);

#endif
