/*
 * pool.c: a run-to-completion thread pool (pool.h). Threads take the next job index from
 * an atomic counter, so uneven compile times balance themselves.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

typedef struct {
    atomic_int next;
    int njobs;
    void (*fn)(int, void *);
    void *user;
} pool;

static void *worker(void *arg) {
    pool *p = arg;
    for (int i; (i = atomic_fetch_add(&p->next, 1)) < p->njobs;) p->fn(i, p->user);
    return NULL;
}

void gt_pool_run(int njobs, int nthreads, void (*fn)(int i, void *user), void *user) {
    pool p = {.njobs = njobs, .fn = fn, .user = user};
    atomic_init(&p.next, 0);
    if (nthreads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)n : 1;
    }
    if (nthreads > njobs) nthreads = njobs;
    if (nthreads > 64) nthreads = 64;
    pthread_t tids[64];
    int started = 0;
    for (int i = 1; i < nthreads; i++)
        if (pthread_create(&tids[started], NULL, worker, &p) == 0) started++;
    worker(&p);
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
}
