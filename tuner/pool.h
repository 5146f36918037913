/*
 * pool.h: run njobs independent jobs on up to nthreads threads (NVRTC compiles).
 */
#ifndef GT_POOL_H
#define GT_POOL_H

/* Calls fn(i, user) once for each i in [0, njobs), on nthreads threads (<= 0: one per
 * online CPU). Returns when all are done. Falls back to the calling thread alone if no
 * thread can be started. */
void gt_pool_run(int njobs, int nthreads, void (*fn)(int i, void *user), void *user);

#endif
