/*
 * work.h: the workspace of a launch (split-K partials and tile counters, operand copies):
 * the application's (gt_set_workspace), the library's own per (context, stream), or, under
 * CUDA Graph capture, memory the graph owns.
 *
 * Why per stream: a split-K kernel's partials and tile counters must not be shared with
 * a launch that may run at the same time, and launches on one stream never do. A
 * per-thread default stream is told apart by the calling thread as well.
 *
 * The library's own workspaces: one per (context, stream), grown when a plan needs more,
 * zeroed when allocated. The table holds at most GT_WORK_SLOTS streams; each entry
 * records an event after its last launch, so that a workspace can be freed once that
 * launch is done without touching its stream (which may be gone): the least recently
 * used one when the table is full, and any left idle for GT_WORK_IDLE_S (a destroyed
 * stream's) when a new stream arrives. A handle reused by a new stream is told apart by
 * the stream's id (CUDA 12.0 and later).
 *
 * Under capture (the graph replays the launch later, any number of times, perhaps
 * beside other work): the stream's application workspace when large enough, else a
 * stream-ordered allocation captured into the graph, its first bytes zeroed by a captured
 * memset, freed by a captured free after the launch. The graph owns it: no replay shares
 * it with another graph or with the stream's later calls.
 */
#ifndef GT_WORK_H
#define GT_WORK_H

#include <cuda.h>
#include <stddef.h>

#include "gemmtune.h"

#define GT_WORK_SLOTS 64
#define GT_WORK_IDLE_S 30.0

/* One launch's hold on a workspace, from gt_work_get to gt_work_done. */
typedef struct gt_work_lease {
    CUdeviceptr ptr;
    int slot;               /* the table entry, or -1 */
    unsigned long long gen; /* the entry's generation when taken */
    int capturing;          /* taken for a launch under capture */
    int graph_owned;        /* a captured allocation: gt_work_done frees it in the graph */
} gt_work_lease;

/* At least `bytes` of workspace whose first `zero` bytes are zero, for one launch on
 * `stream` in the current context; capturing says whether the stream is under capture.
 * Allocating or growing the library's own waits for that stream's earlier launches on
 * it; later calls only look up the table. */
gt_status gt_work_get(CUstream stream, size_t bytes, size_t zero, int capturing,
                      gt_work_lease *lease);

/* Ends a lease after its launch was enqueued (or failed to be): records the entry's event
 * on stream, or captures the free of a graph-owned allocation. */
void gt_work_done(gt_work_lease *lease, CUstream stream);

/* gt_set_workspace: the application's workspace for stream in the current context (ptr
 * 0: none again). */
gt_status gt_work_set(CUstream stream, CUdeviceptr ptr, size_t bytes);

/* Frees every workspace the library owns and forgets the application's (gt_release). */
void gt_work_release_all(void);

#endif
