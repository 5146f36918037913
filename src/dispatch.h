/*
 * dispatch.h: the slow path of a call: find or make the plan of a key.
 *
 * Order (docs/DESIGN.md, "The path of one call"): plan table, then the cache layers (the
 * writable user cache, then each read-only file of GEMMTUNE_CACHE_PATH in order), then,
 * by mode (gt_mode): tune now (tune), tune on the background worker while the default
 * kernel runs (tune with async on; the worker tunes only over candidates whose results
 * are bit-identical to the default kernel's, GT_SPACE_SAME_ORDER), the nearest tuned
 * shape (cached), or the default kernel (off, and whenever tuning is skipped or fails).
 * A plan that runs a shape-generic kernel in mode cached gets its exact-shape twin (the
 * same configuration and bits) when the binary cache holds it, else once the background
 * worker has compiled it (gt_set_specialize).
 * Every configuration read from a file is validated against the parameter table and the
 * device before it is compiled. Kernels are loaded from the binary cache (cubins in the
 * user cache, never from a shipped file) or compiled and stored there.
 * Resolution and tuning are serialized per CUDA context (a second thread asking for the
 * same shape waits and then finds the plan); plan-table hits take no lock but the
 * table's read lock. A cache file that cannot be opened, read or written is reported
 * once (warning) and bypassed for that use.
 */
#ifndef GT_DISPATCH_H
#define GT_DISPATCH_H

#include <cuda.h>

#include "devctx.h"
#include "plan.h"
#include "select.h"
#include "tune.h"

/* The plan of key in dc's context, made if needed. Never fails for want of tuning:
 * a skipped or failed tuning gives the default kernel (source GT_SRC_FALLBACK).
 * stream is the caller's: it is synchronized before tuning in the calling thread, so
 * that the caller's work does not disturb the timings.
 * capturing: the stream is under graph capture. Then nothing is tuned or synchronized:
 * a key in no cache gets what mode cached gives (with async tuning on, the default
 * kernel, as async's pending plans run: its winner gives the same bits), and in mode
 * tune is tuned later (queued for the worker with async on, else marked retune so that
 * the first call outside capture tunes it). Runs in relaxed capture mode. */
gt_status gt_dispatch(gt_devctx *dc, const gt_key *key, CUstream stream, int capturing,
                      const gt_plan **out);

/* For `gemmtune tune`: tunes key even when cached (force) or only on a miss, stores the
 * result, and reports. Ignores the mode and async settings. opts: the tuning options
 * (budget, candidates; NULL: the defaults). *source says where the plan came from. rep
 * may be NULL. */
gt_status gt_dispatch_tune(gt_devctx *dc, const gt_key *key, int force, const gt_tune_opts *opts,
                           gt_tune_report *rep, int *source);

/* Every measured row of key's class in the cache layers (each tuned shape's winner and
 * its timings), as the selector reads them: *rows malloc'd (the caller frees it; NULL
 * when none), the count returned. Opens the layers if they are not. A class's rows are
 * read once and kept until what the layers hold changes (gt_layers_epoch) or gt_release.
 * Thread-safe. */
int gt_dispatch_class_rows(const gt_key *key, gt_select_row **rows);

/* gt_dispatch_class_rows and, where fix is not NULL, gt_dispatch_model_fix into *fix
 * (lim: the device's limits, for the fit's estimates), from one walk of the layers'
 * timings where neither is kept: what a class's first call in mode cached needs. Where
 * both are derived, they are kept in the user cache for later processes, which read them
 * there while the layers hold the same rows (dispatch.c, "a class's data kept in the user
 * cache"). */
int gt_dispatch_class_data(const gt_key *key, const gt_klimits *lim, gt_select_row **rows,
                           gt_modelfix *fix);
/* How many times this process read a class's data kept by another (for tests). */
unsigned long gt_dispatch_states_read(void);

/* The cost model's correction for key's device, data type and alignment class
 * (tuner/modelfix.h), fitted to every timing the cache layers hold for them (all op pairs):
 * fitted at the first need and kept until gt_release, and fitted again once this process
 * has tuned since.
 * *out holds no correction where the layers hold too few shapes. Thread-safe. */
void gt_dispatch_model_fix(const gt_key *key, const gt_klimits *lim, gt_modelfix *out);

/* Settings (gemmtune.h: gt_set_mode, gt_set_tune_async, gt_set_specialize). Until set,
 * they come from GEMMTUNE_MODE, GEMMTUNE_TUNE_ASYNC and GEMMTUNE_SPECIALIZE. */
gt_status gt_dispatch_set_mode(int mode);
int gt_dispatch_mode(void);
void gt_dispatch_set_async(int on);
int gt_dispatch_async(void);
void gt_dispatch_set_specialize(int on);
int gt_dispatch_specialize(void);

/* 1 when configuration cfg may give way to its exact-shape twin: every generic one (the
 * twin check, tuner/twin.h, still stands between them). */
int gt_dispatch_may_specialize(const gt_kcfg *cfg);

/* Waits until the background worker has no job queued or running (gt_wait_background). */
void gt_dispatch_wait_background(void);

/* Stops the background worker (a tuning in progress finishes first), drops its queue and
 * closes every cache file (gt_release, before plans and contexts are released). */
void gt_dispatch_release(void);

#endif
