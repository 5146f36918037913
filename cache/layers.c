/*
 * layers.c: the process's cache layers (layers.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "layers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "log.h"

#define MAX_SHIPPED 16
#define PATH_MAX_LEN 4096

typedef struct layer {
    gt_db *db;
    char path[PATH_MAX_LEN];
    int writable;
    atomic_int failed;     /* a use failed: bypassed */
} layer;

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int opened;             /* layers opened (or tried): set last, under open_lock */
static layer layers[1 + MAX_SHIPPED]; /* [0] the user cache, then the shipped files */
static int nlayers;

static void open_layer(const char *path, int writable) {
    layer *l = &layers[nlayers];
    memset(l, 0, sizeof *l);
    snprintf(l->path, sizeof l->path, "%s", path);
    l->writable = writable;
    char msg[600];
    if (gt_db_open(path, !writable, 0, &l->db, msg, sizeof msg) != GT_SUCCESS) {
        gt_log(GT_LOG_WARN, "%s cache bypassed: %s", writable ? "user" : "shipped", msg);
        l->db = NULL;
    }
    nlayers++;
}

void gt_layers_open(void) {
    pthread_mutex_lock(&open_lock);
    if (atomic_load(&opened)) {
        pthread_mutex_unlock(&open_lock);
        return;
    }
    nlayers = 0;
    char user_path[PATH_MAX_LEN];
    if (gt_db_default_path(user_path, sizeof user_path) == GT_SUCCESS) {
        open_layer(user_path, 1);
    } else {
        user_path[0] = 0;
        gt_log(GT_LOG_WARN, "no user cache path (set GEMMTUNE_CACHE or HOME); tuning results "
                            "are not kept");
        memset(&layers[0], 0, sizeof layers[0]);
        nlayers = 1; /* layers[0] stays the user slot, empty */
    }
    const char *sp = gt_env(GT_ENV_CACHE_PATH);
    if (sp) {
        char *copy = strdup(sp), *save = NULL;
        for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p; p = strtok_r(NULL, ":", &save)) {
            if (strcmp(p, user_path) == 0) continue; /* already the user cache */
            if (nlayers == 1 + MAX_SHIPPED) {
                gt_log(GT_LOG_WARN, "GEMMTUNE_CACHE_PATH: more than %d files; '%s' and later "
                                    "ones ignored", MAX_SHIPPED, p);
                break;
            }
            open_layer(p, 0);
        }
        free(copy);
    }
    atomic_store(&opened, 1);
    pthread_mutex_unlock(&open_lock);
}

void gt_layers_close(void) {
    pthread_mutex_lock(&open_lock);
    for (int i = 0; i < nlayers; i++) gt_db_close(layers[i].db);
    atomic_store(&opened, 0);
    memset(layers, 0, sizeof layers);
    nlayers = 0;
    pthread_mutex_unlock(&open_lock);
}

/* Layer i when it is open and not bypassed, else NULL. */
static layer *readable(int i) {
    if (i < 0 || i >= nlayers) return NULL;
    layer *l = &layers[i];
    return l->db && !atomic_load(&l->failed) ? l : NULL;
}

/* The user cache when it may be written, else NULL. */
static layer *writable_user(void) {
    layer *l = readable(0);
    return l && l->writable ? l : NULL;
}

/* The one warning of a layer; the handle stays open until gt_layers_close. */
static void failed(layer *l) {
    if (!atomic_exchange(&l->failed, 1))
        gt_log(GT_LOG_WARN, "cache bypassed: %s", gt_db_errmsg(l->db));
}

int gt_layers_count(void) {
    gt_layers_open();
    return nlayers;
}

const char *gt_layers_path(int i) { return i >= 0 && i < nlayers ? layers[i].path : ""; }

const char *gt_layers_user_path(int *open) {
    gt_layers_open();
    if (open) *open = layers[0].db != NULL;
    return layers[0].path;
}

const char *gt_layers_shipped_path(int i, int *open) {
    gt_layers_open();
    if (i < 0 || i + 1 >= nlayers) return NULL;
    if (open) *open = readable(i + 1) != NULL;
    return layers[i + 1].path;
}

int gt_layers_lookup(int i, const gt_key *key, const char *src_hash, int lib_major,
                     gt_db_winner *w) {
    layer *l = readable(i);
    if (!l) return 0;
    int found = 0;
    if (gt_db_lookup(l->db, key, src_hash, lib_major, w, &found) != GT_SUCCESS) {
        failed(l);
        return 0;
    }
    return found;
}

int gt_layers_neighbors(int i, const gt_key *key, const char *src_hash, int lib_major,
                        gt_db_winner_fn fn, void *user) {
    layer *l = readable(i);
    if (!l) return 0;
    if (gt_db_neighbors(l->db, key, src_hash, lib_major, fn, user) == GT_SUCCESS) return 0;
    failed(l);
    return -1;
}

void gt_layers_store(const gt_key *key, const char *src_hash, int lib_major,
                     const gt_db_winner *w, const gt_db_timing *t, int nt) {
    layer *u = writable_user();
    if (u && gt_db_store(u->db, key, src_hash, lib_major, w, t, nt) != GT_SUCCESS) failed(u);
}

void *gt_layers_bin_get(const gt_db_bin_key *bk, size_t *size) {
    layer *u = atomic_load(&opened) ? readable(0) : NULL;
    if (!u) return NULL;
    void *image = NULL;
    int found = 0;
    if (gt_db_cubin_get(u->db, bk, &image, size, &found) != GT_SUCCESS) {
        failed(u);
        return NULL;
    }
    return found ? image : NULL;
}

void gt_layers_bin_put(const gt_db_bin_key *bk, const void *image, size_t size) {
    layer *u = atomic_load(&opened) ? writable_user() : NULL;
    if (!u || !image || !size) return;
    if (gt_db_cubin_put(u->db, bk, image, size) != GT_SUCCESS) failed(u);
}
