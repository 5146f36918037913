/*
 * work.h: the split-K workspace the library owns: one per (context, stream), grown when
 * a plan needs more, zeroed when allocated, kept until gt_release.
 *
 * Why per stream: a split-K kernel's partials and tile counters must not be shared with
 * a launch that may run at the same time, and launches on one stream never do. A
 * per-thread default stream is told apart by the calling thread as well.
 */
#ifndef GT_WORK_H
#define GT_WORK_H

#include <cuda.h>
#include <stddef.h>

#include "gemmtune.h"

/* At least `bytes` of zeroed-once workspace for launches on `stream` in the current
 * context. Allocating or growing synchronizes the stream (the old buffer may be in use
 * by earlier launches); later calls only look up the table. */
gt_status gt_work_get(CUstream stream, size_t bytes, CUdeviceptr *out);

/* Frees every workspace (gt_release). */
void gt_work_release_all(void);

#endif
