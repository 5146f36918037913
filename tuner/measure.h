/*
 * measure.h: the library's one way to time GPU work: warm-up runs, then each timed run
 * between its own pair of CUDA events on one stream, and the median.
 *
 * The tuner times its candidates with it (tune.c) and `gemmtune run` times a call of
 * the public API with it, so a time the command prints and a time the tuner stored in
 * the cache are measured the same way. It owns the events it creates and nothing else:
 * what a run launches, and on which buffers, is the caller's.
 */
#ifndef GT_MEASURE_H
#define GT_MEASURE_H

#include <cuda.h>

#include "gemmtune.h"

/* Events gt_measure creates for one call when the caller gives none. */
#define GT_MEASURE_EVENTS 33

/* One run: enqueues the work on the measured stream. i counts the runs of one
 * gt_measure call from 0, warm-ups first (warm-ups are 0..warmup-1, the timed runs
 * warmup..warmup+reps-1). Any status but GT_SUCCESS ends the measurement with it. */
typedef gt_status (*gt_measure_run)(void *user, int i);

/* Calls run warmup times, then reps times (reps >= 1) on stream s with an event
 * recorded before the first timed run and after each, back to back, and waits for the
 * last; the time of run j is the elapsed time between its two events. The events are
 * ev[0..nev) (nev >= 2; created by the caller, CU_EVENT_DEFAULT), or, when ev is NULL,
 * GT_MEASURE_EVENTS created and destroyed by this call; with more runs than events
 * minus one, the runs go in chunks of nev - 1 with one synchronization between chunks
 * (outside every timed interval). t_us (may be NULL) receives the reps times in
 * microseconds, sorted ascending; *median_us their median. A failing run's status is
 * returned as it is; a failing event call (a kernel's fault shows there) is the status
 * of gt_cu_fail ("timing run" for reps == 1, else "timing runs"). The driver must be
 * loaded (gt_cu_load) and the stream's context current. */
gt_status gt_measure(CUstream s, CUevent *ev, int nev, int warmup, int reps,
                     gt_measure_run run, void *user, double *t_us, double *median_us);

/* Sorts t[0..n) ascending and returns its median (n >= 1): the middle value, or the
 * mean of the two middle values when n is even. */
double gt_measure_median(double *t, int n);

/* Monotonic wall clock in seconds (tuning budgets, a first call's time). */
double gt_measure_now_s(void);

#endif
