/*
 * plan.c: the plan table (plan.h): a chained hash map under a read-write lock.
 * Owns every plan and its module. Plans are never freed except by gt_plan_clear, so a
 * pointer handed out stays valid while callers use it; a replaced plan moves to the
 * retired list for that reason.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "plan.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "cu.h"

#define NBUCKETS 1024

typedef struct node {
    gt_plan plan;
    struct node *next;
} node;

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static node *buckets[NBUCKETS];
static node *retired;

static size_t bucket_of(CUcontext ctx, const gt_key *key) {
    return (size_t)((gt_key_hash(key) ^ ((uint64_t)(uintptr_t)ctx * 0x9e3779b97f4a7c15ull)) %
                    NBUCKETS);
}

static node *find_locked(CUcontext ctx, const gt_key *key) {
    for (node *n = buckets[bucket_of(ctx, key)]; n; n = n->next)
        if (n->plan.ctx == ctx && gt_key_equal(&n->plan.key, key)) return n;
    return NULL;
}

const gt_plan *gt_plan_find(CUcontext ctx, const gt_key *key) {
    pthread_rwlock_rdlock(&lock);
    node *n = find_locked(ctx, key);
    pthread_rwlock_unlock(&lock);
    return n ? &n->plan : NULL;
}

int gt_plan_source(CUcontext ctx, const gt_key *key) {
    const gt_plan *p = gt_plan_find(ctx, key);
    return p ? p->source : -1;
}

const gt_plan *gt_plan_insert(const gt_plan *p) {
    pthread_rwlock_wrlock(&lock);
    node *n = find_locked(p->ctx, &p->key);
    if (n) {
        gt_kern k = p->kern;
        gt_kern_unload(&k);
    } else if ((n = malloc(sizeof *n))) {
        n->plan = *p;
        size_t b = bucket_of(p->ctx, &p->key);
        n->next = buckets[b];
        buckets[b] = n;
    } else {
        gt_kern k = p->kern;
        gt_kern_unload(&k);
    }
    pthread_rwlock_unlock(&lock);
    return n ? &n->plan : NULL;
}

const gt_plan *gt_plan_replace(const gt_plan *p) {
    node *fresh = malloc(sizeof *fresh);
    if (!fresh) {
        gt_kern k = p->kern;
        gt_kern_unload(&k);
        return NULL;
    }
    fresh->plan = *p;
    pthread_rwlock_wrlock(&lock);
    size_t b = bucket_of(p->ctx, &p->key);
    node **link = &buckets[b];
    while (*link && !((*link)->plan.ctx == p->ctx && gt_key_equal(&(*link)->plan.key, &p->key)))
        link = &(*link)->next;
    if (*link) {
        node *old = *link;
        *link = old->next;
        old->next = retired;
        retired = old;
    }
    fresh->next = buckets[b];
    buckets[b] = fresh;
    pthread_rwlock_unlock(&lock);
    return &fresh->plan;
}

/* Unloads and frees a chain of nodes. */
static void free_chain(node *n) {
    while (n) {
        node *next = n->next;
        CUcontext cur = NULL;
        gt_cu.ctx_get_current(&cur);
        int pushed = cur != n->plan.ctx && gt_cu.ctx_push(n->plan.ctx) == CUDA_SUCCESS;
        gt_kern_unload(&n->plan.kern);
        if (pushed) gt_cu.ctx_pop(&cur);
        free(n);
        n = next;
    }
}

void gt_plan_clear(void) {
    pthread_rwlock_wrlock(&lock);
    for (int b = 0; b < NBUCKETS; b++) {
        free_chain(buckets[b]);
        buckets[b] = NULL;
    }
    free_chain(retired);
    retired = NULL;
    pthread_rwlock_unlock(&lock);
}
