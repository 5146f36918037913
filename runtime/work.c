/*
 * work.c: the library's split-K workspaces (work.h). Owns the table and the buffers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "work.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "cu.h"
#include "log.h"

/* Streams with a workspace at once; beyond that the least recently used one is freed
 * after its context is synchronized. */
#define MAX_WORK 64

typedef struct {
    CUcontext ctx;
    CUstream stream;
    pthread_t thread;   /* for the per-thread default stream only */
    CUdeviceptr ptr;
    size_t bytes;
    uint64_t used;      /* clock of the last use, for eviction */
} work;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static work table[MAX_WORK];
static uint64_t clock_now;

static int per_thread(CUstream s) { return s == CU_STREAM_PER_THREAD; }

/* Frees w's buffer; the caller has made its context current and synchronized. */
static void drop(work *w) {
    if (w->ptr) gt_cu.mem_free(w->ptr);
    memset(w, 0, sizeof *w);
}

static gt_status grow(work *w, CUstream stream, size_t bytes) {
    CUresult r;
    if (w->ptr) {
        /* Earlier launches on this stream may still use the old buffer. */
        if ((r = gt_cu.stream_synchronize(stream)) != CUDA_SUCCESS)
            return gt_cu_fail(r, "cuStreamSynchronize (split-K workspace)");
        gt_cu.mem_free(w->ptr);
        w->ptr = 0;
        w->bytes = 0;
    }
    /* Round up so a few growing plans do not reallocate each time. */
    size_t want = bytes < ((size_t)1 << 20) ? (size_t)1 << 20 : bytes + bytes / 4;
    if ((r = gt_cu.mem_alloc(&w->ptr, want)) != CUDA_SUCCESS) {
        w->ptr = 0;
        return gt_cu_fail(r, "cuMemAlloc (split-K workspace)");
    }
    /* The tile counters must start at zero; every completed launch leaves them so. */
    if ((r = gt_cu.memset_d8_async(w->ptr, 0, want, stream)) != CUDA_SUCCESS) {
        gt_cu.mem_free(w->ptr);
        w->ptr = 0;
        return gt_cu_fail(r, "cuMemsetD8Async (split-K workspace)");
    }
    w->bytes = want;
    return GT_SUCCESS;
}

gt_status gt_work_get(CUstream stream, size_t bytes, CUdeviceptr *out) {
    CUcontext ctx;
    CUresult r = gt_cu.ctx_get_current(&ctx);
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuCtxGetCurrent");
    pthread_t self = per_thread(stream) ? pthread_self() : (pthread_t)0;
    pthread_mutex_lock(&lock);
    work *w = NULL, *free_slot = NULL, *oldest = NULL;
    for (int i = 0; i < MAX_WORK; i++) {
        work *t = &table[i];
        if (!t->ctx) {
            if (!free_slot) free_slot = t;
            continue;
        }
        if (t->ctx == ctx && t->stream == stream &&
            (!per_thread(stream) || pthread_equal(t->thread, self))) {
            w = t;
            break;
        }
        if (!oldest || t->used < oldest->used) oldest = t;
    }
    gt_status s = GT_SUCCESS;
    if (!w) {
        if (!free_slot) {
            /* Evict: its stream may be gone, so wait for its whole context. */
            CUcontext victim = oldest->ctx;
            if (victim != ctx) gt_cu.ctx_set_current(victim);
            gt_cu.ctx_synchronize();
            drop(oldest);
            if (victim != ctx) gt_cu.ctx_set_current(ctx);
            free_slot = oldest;
        }
        w = free_slot;
        w->ctx = ctx;
        w->stream = stream;
        w->thread = self;
    }
    w->used = ++clock_now;
    if (w->bytes < bytes) s = grow(w, stream, bytes);
    if (s == GT_SUCCESS) *out = w->ptr;
    else if (!w->ptr) memset(w, 0, sizeof *w);
    pthread_mutex_unlock(&lock);
    return s;
}

void gt_work_release_all(void) {
    pthread_mutex_lock(&lock);
    CUcontext prev = NULL;
    gt_cu.ctx_get_current(&prev);
    for (int i = 0; i < MAX_WORK; i++) {
        if (!table[i].ctx) continue;
        gt_cu.ctx_set_current(table[i].ctx);
        gt_cu.ctx_synchronize();
        drop(&table[i]);
    }
    gt_cu.ctx_set_current(prev);
    pthread_mutex_unlock(&lock);
}
