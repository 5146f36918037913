/*
 * dispatch.h: the slow path of a call: find or make the plan of a key.
 *
 * Order: plan table, user cache, tuner, fallback. Tuning and cache look-ups of misses
 * are serialized within the process by one mutex (a second thread asking for the same
 * shape waits and then finds the plan); plan-table hits never take it.
 * A cache file that cannot be opened or read is reported once (warning) and bypassed.
 */
#ifndef GT_DISPATCH_H
#define GT_DISPATCH_H

#include <cuda.h>

#include "devctx.h"
#include "plan.h"
#include "tune.h"

/* The plan of key in dc's context, made if needed. Never fails for want of tuning:
 * a skipped or failed tuning gives the fallback kernel (source GT_SRC_FALLBACK). */
gt_status gt_dispatch(gt_devctx *dc, const gt_key *key, const gt_plan **out);

/* For `gemmtune tune`: tunes key even when cached (force) or only on a miss, stores the
 * result, and reports. *source says where the plan came from. rep may be NULL. */
gt_status gt_dispatch_tune(gt_devctx *dc, const gt_key *key, int force, gt_tune_report *rep,
                           int *source);

/* The user cache's path and whether it is open ("" when none could be formed). */
const char *gt_dispatch_cache_path(int *open);

/* Closes the cache (gt_release). */
void gt_dispatch_release(void);

#endif
