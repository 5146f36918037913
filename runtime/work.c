/*
 * work.c: the workspaces of launches (work.h). Owns the table of streams and the library's
 * own buffers; the application's buffers are only borrowed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "work.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <time.h>

#include "cu.h"
#include "log.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    CUcontext ctx;          /* NULL: a free slot */
    CUstream stream;
    unsigned long long sid; /* the stream's id (0 where the driver gives none) */
    pthread_t thread;       /* for the per-thread default stream only */
    CUdeviceptr own;        /* the library's buffer, own_bytes long (0: none) */
    size_t own_bytes;
    CUdeviceptr app;        /* the application's (gt_set_workspace), app_bytes long */
    size_t app_bytes;
    int warned;             /* said once that app is too small */
    int busy;               /* leases not yet done: the entry is not freed meanwhile */
    CUevent done;           /* recorded after the last launch on own (NULL: none yet) */
    double used_s;          /* when it was last used */
    uint64_t used;          /* clock of the last use, for eviction */
    unsigned long long gen; /* bumped whenever the slot is cleared */
} work;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static work table[GT_WORK_SLOTS];
static uint64_t clock_now;

static int per_thread(CUstream s) { return s == CU_STREAM_PER_THREAD; }

/* Runs with w's context current: returns the context to restore (NULL: none). */
static CUcontext enter(const work *w, CUcontext cur) {
    if (w->ctx == cur) return NULL;
    gt_cu.ctx_set_current(w->ctx);
    return cur;
}
static void leave(CUcontext restore) {
    if (restore) gt_cu.ctx_set_current(restore);
}

/* Waits for the last launch on w's own buffer and forgets its event. */
static void wait_done(work *w) {
    if (!w->done) return;
    gt_cu.event_synchronize(w->done);
    gt_cu.event_destroy(w->done);
    w->done = NULL;
}

/* Frees w's own buffer once its last launch is done, and its event. wait 0: only when
 * that launch is already done; returns 0 when it is not (nothing freed). */
static int free_own(work *w, int wait) {
    if (w->done && !wait && gt_cu.event_query(w->done) == CUDA_ERROR_NOT_READY) return 0;
    wait_done(w);
    if (w->own) gt_cu.mem_free(w->own);
    w->own = 0;
    w->own_bytes = 0;
    return 1;
}

static void clear(work *w) {
    unsigned long long gen = w->gen + 1;
    memset(w, 0, sizeof *w);
    w->gen = gen;
}

/* Frees the library's buffers of idle entries whose last launch is done (a destroyed
 * stream's, or one not used for GT_WORK_IDLE_S); entries left with nothing are cleared. */
static void reclaim_idle(CUcontext cur, double now) {
    for (int i = 0; i < GT_WORK_SLOTS; i++) {
        work *w = &table[i];
        if (!w->ctx || w->busy || !w->own || now - w->used_s < GT_WORK_IDLE_S) continue;
        CUcontext restore = enter(w, cur);
        int freed = free_own(w, 0);
        leave(restore);
        if (freed && !w->app) clear(w);
    }
}

/* The entry of (ctx, stream) for this thread, made when make; NULL when there is none
 * (make 0) or the table is full of entries that cannot be evicted. Under capture (make 0)
 * the stream's id is not asked: cuStreamGetId on a capturing stream invalidates the
 * capture, and a stream under capture is alive anyway. */
static work *find(CUcontext ctx, CUstream stream, int make, gt_status *st) {
    pthread_t self = per_thread(stream) ? pthread_self() : (pthread_t)0;
    unsigned long long sid = 0;
    if (make && gt_cu.stream_get_id && gt_cu.stream_get_id(stream, &sid) != CUDA_SUCCESS) sid = 0;
    work *w = NULL;
    for (int i = 0; i < GT_WORK_SLOTS && !w; i++) {
        work *t = &table[i];
        if (t->ctx == ctx && t->stream == stream &&
            (!per_thread(stream) || pthread_equal(t->thread, self)))
            w = t;
    }
    if (w && make && w->sid != sid) {
        /* The handle of a destroyed stream, reused: the application's workspace was for
         * the old stream; the library's buffer may serve once the old launch is done. */
        wait_done(w);
        w->app = 0, w->app_bytes = 0, w->warned = 0;
        w->sid = sid;
    }
    if (w || !make) return w;
    double now = now_s();
    reclaim_idle(ctx, now);
    work *oldest = NULL;
    for (int i = 0; i < GT_WORK_SLOTS && !w; i++) {
        work *t = &table[i];
        if (!t->ctx) w = t;
        else if (!t->busy && !t->app && (!oldest || t->used < oldest->used)) oldest = t;
    }
    if (!w && oldest) {
        /* Evict the least recently used: wait for its last launch, not for its stream. */
        CUcontext restore = enter(oldest, ctx);
        free_own(oldest, 1);
        leave(restore);
        clear(oldest);
        w = oldest;
    }
    if (!w) {
        *st = gt_fail(GT_OUT_OF_MEMORY, "%d streams hold workspaces given with gt_set_workspace "
                                        "or in use: no room for another",
                      GT_WORK_SLOTS);
        return NULL;
    }
    w->ctx = ctx, w->stream = stream, w->sid = sid, w->thread = self;
    w->used_s = now;
    return w;
}

/* w's own buffer grown to at least bytes, zeroed on stream. */
static gt_status grow(work *w, CUstream stream, size_t bytes) {
    CUresult r;
    const double t0 = now_s();
    /* Earlier launches on this stream may still use the old buffer. */
    free_own(w, 1);
    /* Round up so a few growing plans do not reallocate each time. */
    size_t want = bytes < ((size_t)1 << 20) ? (size_t)1 << 20 : bytes + bytes / 4;
    if ((r = gt_cu.mem_alloc(&w->own, want)) != CUDA_SUCCESS) {
        w->own = 0;
        return gt_cu_fail(r, "cuMemAlloc (split-K workspace)");
    }
    /* The tile counters must start at zero; every completed launch leaves them so. */
    if ((r = gt_cu.memset_d8_async(w->own, 0, want, stream)) != CUDA_SUCCESS) {
        gt_cu.mem_free(w->own);
        w->own = 0;
        return gt_cu_fail(r, "cuMemsetD8Async (split-K workspace)");
    }
    w->own_bytes = want;
    gt_log(GT_LOG_DEBUG, "workspace of stream %p grown to %zu bytes in %.2f ms", (void *)stream,
           want, 1e3 * (now_s() - t0));
    return GT_SUCCESS;
}

/* Under capture without an application workspace: memory the graph allocates, zeroes
 * and (gt_work_done) frees in every replay. */
static gt_status graph_owned(CUstream stream, size_t bytes, size_t zero, gt_work_lease *lease) {
    CUdevice dev;
    int pools = 0;
    if (gt_cu.mem_alloc_async && gt_cu.mem_free_async && gt_cu.ctx_get_device(&dev) == CUDA_SUCCESS)
        gt_cu.device_get_attribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev);
    if (!pools)
        return gt_fail(GT_NOT_SUPPORTED,
                       "this kernel needs a workspace, and under graph capture the driver "
                       "or device lacks stream-ordered allocation (CUDA 11.2, memory "
                       "pools): give one with gt_set_workspace");
    CUresult r = gt_cu.mem_alloc_async(&lease->ptr, bytes, stream);
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuMemAllocAsync (workspace, under capture)");
    if (zero && (r = gt_cu.memset_d8_async(lease->ptr, 0, zero, stream)) != CUDA_SUCCESS) {
        gt_cu.mem_free_async(lease->ptr, stream);
        return gt_cu_fail(r, "cuMemsetD8Async (workspace, under capture)");
    }
    lease->graph_owned = 1;
    return GT_SUCCESS;
}

gt_status gt_work_get(CUstream stream, size_t bytes, size_t zero, int capturing,
                      gt_work_lease *lease) {
    memset(lease, 0, sizeof *lease);
    lease->slot = -1;
    lease->capturing = capturing;
    CUcontext ctx;
    CUresult r = gt_cu.ctx_get_current(&ctx);
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuCtxGetCurrent");
    CUstreamCaptureMode mode = gt_cu_relaxed_begin();
    pthread_mutex_lock(&lock);
    gt_status s = GT_SUCCESS;
    /* Under capture the table only lends the application's workspace. */
    work *w = find(ctx, stream, !capturing, &s);
    if (w) {
        w->used = ++clock_now;
        w->used_s = now_s();
        if (w->app && w->app_bytes >= bytes) {
            lease->ptr = w->app;
        } else if (!capturing) {
            if (w->app && !w->warned) {
                w->warned = 1;
                gt_log(GT_LOG_WARN, "gt_set_workspace: %zu bytes given for a stream, a kernel "
                                    "needs %zu: the library's own workspace serves it", w->app_bytes, bytes);
            }
            if (w->own_bytes < bytes) s = grow(w, stream, bytes);
            lease->ptr = w->own;
        }
        if (s == GT_SUCCESS && lease->ptr) {
            w->busy++;
            lease->slot = (int)(w - table);
            lease->gen = w->gen;
        }
        if (!w->own && !w->app && !w->busy) clear(w);
    }
    pthread_mutex_unlock(&lock);
    if (s == GT_SUCCESS && !lease->ptr) s = graph_owned(stream, bytes, zero, lease);
    gt_cu_relaxed_end(mode);
    return s;
}

void gt_work_done(gt_work_lease *lease, CUstream stream) {
    if (lease->graph_owned) {
        gt_cu.mem_free_async(lease->ptr, stream);
    } else if (lease->slot >= 0) {
        pthread_mutex_lock(&lock);
        work *w = &table[lease->slot];
        if (w->gen == lease->gen) {
            w->busy--;
            /* Under capture an event record would be a node of the graph, not a mark of
             * this launch; the application's workspace, the only one lent there, is
             * never freed here anyway. */
            if (lease->ptr == w->own && !lease->capturing) {
                if (!w->done) gt_cu.event_create(&w->done, CU_EVENT_DISABLE_TIMING);
                if (w->done) gt_cu.event_record(w->done, stream);
            }
        }
        pthread_mutex_unlock(&lock);
    }
    memset(lease, 0, sizeof *lease);
    lease->slot = -1;
}

gt_status gt_work_set(CUstream stream, CUdeviceptr ptr, size_t bytes) {
    CUcontext ctx;
    CUresult r = gt_cu.ctx_get_current(&ctx);
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuCtxGetCurrent");
    CUstreamCaptureMode mode = gt_cu_relaxed_begin();
    pthread_mutex_lock(&lock);
    gt_status s = GT_SUCCESS;
    work *w = find(ctx, stream, ptr != 0, &s);
    if (w && ptr) {
        /* The tile counters start at zero, in the stream's order. */
        r = gt_cu.memset_d8_async(ptr, 0, GT_WORKSPACE_MIN_BYTES, stream);
        if (r != CUDA_SUCCESS) s = gt_cu_fail(r, "cuMemsetD8Async (gt_set_workspace)");
        else w->app = ptr, w->app_bytes = bytes, w->warned = 0;
    } else if (w) {
        w->app = 0, w->app_bytes = 0, w->warned = 0;
    }
    if (w && !w->own && !w->app && !w->busy) clear(w);
    pthread_mutex_unlock(&lock);
    gt_cu_relaxed_end(mode);
    return s;
}

void gt_work_release_all(void) {
    pthread_mutex_lock(&lock);
    CUcontext cur = NULL;
    gt_cu.ctx_get_current(&cur);
    for (int i = 0; i < GT_WORK_SLOTS; i++) {
        work *w = &table[i];
        if (!w->ctx) continue;
        CUcontext restore = enter(w, cur);
        free_own(w, 1);
        leave(restore);
        clear(w);
    }
    pthread_mutex_unlock(&lock);
}
