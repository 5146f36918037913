/*
 * layers.c: the process's cache layers (layers.h): the user cache, other hosts' files,
 * the shipped files and the built-in defaults, opened once in lookup order.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "layers.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "defaults_data.h"
#include "defaults_image.h"
#include "env.h"
#include "log.h"

#define PATH_MAX_LEN 4096
#define MAX_LAYERS (1 + GT_LAYERS_MAX_HOSTS + GT_LAYERS_MAX_SHIPPED + 1)

/* What a layer is. */
enum { ROLE_USER, ROLE_HOST, ROLE_SHIPPED, ROLE_DEFAULTS };

typedef struct layer {
    gt_db *db;
    char path[PATH_MAX_LEN];
    int role;
    int writable;
    atomic_int failed;     /* a use failed: bypassed */
    atomic_int deferred;   /* the built-in image, not opened yet (open_deferred) */
} layer;

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int opened;             /* layers opened (or tried): set last, under open_lock */
static layer layers[MAX_LAYERS];      /* [0] the user cache, then other hosts', then shipped */
static int nlayers;
static char named[PATH_MAX_LEN];      /* the path the user cache is named by */
static gt_fs_info user_fs;
static int hosts_unread;

/* Invariant 4: the in-memory cache, made at the first result the user cache cannot take.
 * mem_said: the one warning has been given (at the user cache's failure, or here). */
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static gt_db *mem;
static int mem_failed;
static atomic_int mem_said;

#define KEPT_IN_MEMORY "tuning results are kept in this process only"

/* The built-in defaults: the texts read (those built in, or a test's), and what became
 * of them at the last opening. Under open_lock. */
static const gt_text_file *defaults_files = gt_defaults_files;
static int defaults_nfiles = -1;      /* -1: gt_defaults_files_count */
static int defaults_state = GT_DEFAULTS_NONE;
static int defaults_loaded;
static int defaults_imaged; /* the layer is the built-in image, read in place */

/* ===================================================================================
 * Opening
 * =================================================================================== */

/* The user cache's file for the policy fs of the directory of nominal, into buf. */
static gt_status user_file_of(const char *nominal, const gt_fs_info *fs, char *buf,
                              size_t size) {
    if (!fs->per_host) {
        int n = snprintf(buf, size, "%s", nominal);
        return n >= 0 && (size_t)n < size ? GT_SUCCESS : GT_INVALID_VALUE;
    }
    char host[64];
    if (gt_fs_host(host, sizeof host) != 0) return GT_CACHE_ERROR;
    return gt_fs_host_path(nominal, host, buf, size) == 0 ? GT_SUCCESS : GT_INVALID_VALUE;
}

gt_status gt_layers_user_file(char *buf, size_t size, gt_fs_info *fs) {
    gt_fs_info local;
    if (!fs) fs = &local;
    memset(fs, 0, sizeof *fs);
    if (size) buf[0] = 0;
    char nominal[PATH_MAX_LEN];
    gt_status s = gt_db_default_path(nominal, sizeof nominal);
    if (s != GT_SUCCESS) return s;
    gt_fs_probe(nominal, fs);
    return user_file_of(nominal, fs, buf, size);
}

gt_status gt_layers_open_file(const char *path, int readonly, int timings, gt_db **out,
                              char *msg, size_t msgsize) {
    gt_fs_info fs;
    gt_fs_probe(path ? path : "", &fs);
    if (!fs.per_host) return gt_db_open(path, readonly, 0, out, msg, msgsize);
    if (readonly) return gt_db_open_snapshot(path, timings, out, msg, msgsize);
    return gt_db_open_host(path, 0, out, msg, msgsize);
}

/* Adds a layer. A writable one is the user cache (host: this host's file on a shared
 * filesystem); a read-only one is a snapshot when snapshot != 0, with the candidates'
 * timings for a shipped file (the selector of mode cached reads them; other hosts' files
 * give their winners only, which keeps opening them cheap). */
static void open_layer(const char *path, int role, int writable, int host, int snapshot) {
    layer *l = &layers[nlayers++];
    memset(l, 0, sizeof *l);
    snprintf(l->path, sizeof l->path, "%s", path);
    l->role = role;
    l->writable = writable;
    char msg[1200];
    gt_status s = writable ? (host ? gt_db_open_host(path, 0, &l->db, msg, sizeof msg)
                                   : gt_db_open(path, 0, 0, &l->db, msg, sizeof msg))
                           : (snapshot ? gt_db_open_snapshot(path, role == ROLE_SHIPPED, &l->db,
                                                             msg, sizeof msg)
                                       : gt_db_open(path, 1, 0, &l->db, msg, sizeof msg));
    if (s == GT_SUCCESS) return;
    l->db = NULL;
    if (role == ROLE_USER) {
        atomic_store(&mem_said, 1);
        gt_log(GT_LOG_WARN, "user cache bypassed: %s; " KEPT_IN_MEMORY, msg);
    } else {
        gt_log(GT_LOG_WARN, "%s cache bypassed: %s",
               role == ROLE_HOST ? "another host's" : "shipped", msg);
    }
}

/* 1 when path is already a layer's. */
static int is_layer(const char *path) {
    for (int i = 0; i < nlayers; i++)
        if (strcmp(layers[i].path, path) == 0) return 1;
    return 0;
}

static int add_host_file(const char *path, time_t mtime, void *user) {
    (void)mtime, (void)user;
    if (nlayers == 1 + GT_LAYERS_MAX_HOSTS) {
        hosts_unread++;
        return 0;
    }
    open_layer(path, ROLE_HOST, 0, 0, 1);
    return 0;
}

/* Layer 0 and, under a per-host policy, the other hosts' files. */
static void open_user(void) {
    memset(&user_fs, 0, sizeof user_fs);
    named[0] = 0;
    char path[PATH_MAX_LEN];
    if (gt_db_default_path(named, sizeof named) != GT_SUCCESS) {
        named[0] = 0;
        atomic_store(&mem_said, 1);
        gt_log(GT_LOG_WARN, "no user cache path (set GEMMTUNE_CACHE or HOME); " KEPT_IN_MEMORY);
        memset(&layers[0], 0, sizeof layers[0]);
        nlayers = 1; /* layers[0] stays the user slot, empty */
        return;
    }
    gt_fs_probe(named, &user_fs);
    gt_status s = user_file_of(named, &user_fs, path, sizeof path);
    if (s != GT_SUCCESS) {
        atomic_store(&mem_said, 1);
        gt_log(GT_LOG_WARN, "user cache '%s' is on %s, where each host writes its own file, "
                            "and this host has no name to give it; " KEPT_IN_MEMORY,
               named, user_fs.type);
        memset(&layers[0], 0, sizeof layers[0]);
        nlayers = 1;
        return;
    }
    open_layer(path, ROLE_USER, 1, user_fs.per_host, 0);
    if (!user_fs.per_host) return;
    gt_log(GT_LOG_INFO, "user cache '%s' is on %s (%s): this host writes %s (rollback journal, "
                        "host-wide lock) and reads the directory's other files as snapshots",
           named, user_fs.type, user_fs.source, path);
    char host[64];
    if (gt_fs_host(host, sizeof host) != 0) host[0] = 0;
    if (gt_fs_other_hosts(named, host, add_host_file, NULL) < 0)
        gt_log(GT_LOG_WARN, "cannot list the other hosts' cache files beside '%s'", named);
    if (hosts_unread)
        gt_log(GT_LOG_INFO, "%d older cache files of other hosts beside '%s' are not read "
                            "(combine them with gemmtune merge)", hosts_unread, named);
}

/* The texts of the built-in defaults, their number in *n. */
static const gt_text_file *defaults_texts(int *n) {
    *n = defaults_nfiles < 0 ? gt_defaults_files_count : defaults_nfiles;
    return defaults_nfiles < 0 ? gt_defaults_files : defaults_files;
}

/* Every built-in text loaded into one in-memory cache, then sealed (invariant 5): the
 * handle, or NULL (said) where none loads. A text that fails is reported and left out;
 * held[i] is set for each text i < nheld that loads, defaults_loaded counts them. */
static gt_db *load_texts(const gt_text_file *files, int n, unsigned char *held, int nheld) {
    char msg[1200];
    gt_db *db = NULL;
    defaults_loaded = 0;
    if (gt_db_open(":memory:", 0, 0, &db, msg, sizeof msg) != GT_SUCCESS) {
        gt_log(GT_LOG_WARN, "built-in defaults bypassed: %s", msg);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        gt_text_counts c;
        const char *name = files[i].name ? files[i].name : "?";
        if (gt_text_load(db, files[i].text, files[i].size, name, &c, msg, sizeof msg) !=
            GT_SUCCESS) {
            gt_log(GT_LOG_WARN, "built-in defaults: %s left out: %s", name, msg);
            continue;
        }
        gt_log(GT_LOG_DEBUG, "built-in defaults: %s: %lld winners, %lld timings", name,
               c.winners, c.timings);
        if (i < nheld) held[i] = 1;
        defaults_loaded++;
    }
    if (!defaults_loaded) {
        gt_db_close(db);
        return NULL;
    }
    gt_db_seal(db);
    return db;
}

/* The last layer. The built-in texts come as an image of the cache they load into
 * (data/image.c), read in place and opened at the layer's first read (open_deferred): a
 * process's first call that finds its class's data kept (src/dispatch.c) and a shape the
 * image does not hold (gt_defaults_image_keys) never opens it, which saves a millisecond
 * of it on the H100's host. A test's texts are loaded now. The layer is added when it
 * can be read. */
static void open_defaults(void) {
    int n;
    const gt_text_file *files = defaults_texts(&n);
    defaults_loaded = 0;
    defaults_imaged = 0;
    const char *v = gt_env(GT_ENV_DEFAULTS);
    if (v && strcmp(v, "0") == 0) {
        defaults_state = GT_DEFAULTS_OFF;
        return;
    }
    if (v && strcmp(v, "1") != 0)
        gt_log(GT_LOG_WARN, "GEMMTUNE_DEFAULTS='%s' is neither 0 nor 1; the built-in defaults "
                            "are read", v);
    if (n <= 0) {
        defaults_state = GT_DEFAULTS_NONE;
        return;
    }
    defaults_state = GT_DEFAULTS_FAILED;
    gt_db *db = NULL;
    /* Which texts the layer holds (the first 64 are named), for its name. */
    unsigned char held[64] = {0};
    const int nheld = n < (int)sizeof held ? n : (int)sizeof held;
    const int deferred = defaults_nfiles < 0 && gt_defaults_image_size > 0;
    if (deferred) {
        defaults_loaded = gt_defaults_image_files;
        defaults_imaged = 1;
        memset(held, 1, (size_t)(defaults_loaded < nheld ? defaults_loaded : nheld));
    } else if (!(db = load_texts(files, n, held, nheld))) {
        return;
    }
    layer *l = &layers[nlayers++];
    memset(l, 0, sizeof *l);
    size_t used = (size_t)snprintf(l->path, sizeof l->path, "built-in defaults (");
    for (int i = 0, named = 0; i < nheld && used < sizeof l->path; i++)
        if (held[i])
            used += (size_t)snprintf(l->path + used, sizeof l->path - used, "%s%s",
                                     named++ ? ", " : "", files[i].name ? files[i].name : "?");
    if (used < sizeof l->path) snprintf(l->path + used, sizeof l->path - used, ")");
    l->db = db;
    l->role = ROLE_DEFAULTS;
    atomic_store(&l->deferred, deferred);
    defaults_state = GT_DEFAULTS_LOADED;
}

/* Opens the built-in image of layer l (NULL: none) where it is deferred, once, at its
 * first read; where SQLite cannot read it, the texts are loaded instead, and where none
 * loads the layer is bypassed. */
static void open_deferred(layer *l) {
    if (!l || !atomic_load(&l->deferred)) return;
    pthread_mutex_lock(&open_lock);
    if (atomic_load(&l->deferred)) {
        char msg[1200];
        gt_db *db = NULL;
        if (gt_db_open_image("built-in defaults", gt_defaults_image, gt_defaults_image_size, &db,
                             msg, sizeof msg) == GT_SUCCESS) {
            gt_log(GT_LOG_DEBUG, "built-in defaults: an image of %d files (%zu bytes) read in place",
                   gt_defaults_image_files, gt_defaults_image_size);
        } else {
            gt_log(GT_LOG_DEBUG, "built-in defaults: the image is not read (%s); loading the texts",
                   msg);
            int n;
            const gt_text_file *files = defaults_texts(&n);
            unsigned char held[64];
            defaults_imaged = 0;
            db = load_texts(files, n, held, (int)sizeof held);
            if (!db) defaults_state = GT_DEFAULTS_FAILED;
        }
        l->db = db;
        if (!db) atomic_store(&l->failed, 1);
        atomic_store(&l->deferred, 0);
    }
    pthread_mutex_unlock(&open_lock);
}

static int by_name(const void *name, const void *entry) {
    return strcmp(name, *(const char *const *)entry);
}

/* 1 when the built-in image may hold key's entry: its name is among the image's. */
static int in_image(const gt_key *key, const char *src_hash, int lib_major) {
    char name[400];
    gt_db_entry_name(key, src_hash, lib_major, name, sizeof name);
    return gt_defaults_image_nkeys > 0 &&
           bsearch(name, gt_defaults_image_keys, (size_t)gt_defaults_image_nkeys,
                   sizeof *gt_defaults_image_keys, by_name) != NULL;
}

/* Counts the changes of what the layers hold, but for binaries: a winner and timings
 * stored, a close (a later open reads other files) and a layer bypassed. */
static atomic_ulong epoch;

unsigned long gt_layers_epoch(void) { return atomic_load(&epoch); }

void gt_layers_open(void) {
    pthread_mutex_lock(&open_lock);
    if (atomic_load(&opened)) {
        pthread_mutex_unlock(&open_lock);
        return;
    }
    nlayers = 0;
    hosts_unread = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    open_user();
    const char *sp = gt_env(GT_ENV_CACHE_PATH);
    if (sp) {
        char *copy = strdup(sp), *save = NULL;
        int shipped = 0;
        for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p; p = strtok_r(NULL, ":", &save)) {
            if (is_layer(p) || strcmp(p, named) == 0) continue; /* already read */
            if (shipped == GT_LAYERS_MAX_SHIPPED) {
                gt_log(GT_LOG_WARN, "GEMMTUNE_CACHE_PATH: more than %d files; '%s' and later "
                                    "ones ignored", GT_LAYERS_MAX_SHIPPED, p);
                break;
            }
            gt_fs_info fs;
            gt_fs_probe(p, &fs);
            open_layer(p, ROLE_SHIPPED, 0, 0, fs.per_host);
            shipped++;
        }
        free(copy);
    }
    open_defaults();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* A process's first call waits for this; its share of that call is in the log. */
    gt_log(GT_LOG_INFO, "cache layers: %d opened in %.2f ms", nlayers,
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6);
    atomic_store(&opened, 1);
    pthread_mutex_unlock(&open_lock);
}

void gt_layers_close(void) {
    pthread_mutex_lock(&open_lock);
    atomic_fetch_add(&epoch, 1);
    for (int i = 0; i < nlayers; i++) gt_db_close(layers[i].db);
    atomic_store(&opened, 0);
    memset(layers, 0, sizeof layers);
    nlayers = 0;
    pthread_mutex_lock(&mem_lock);
    gt_db_close(mem);
    mem = NULL;
    mem_failed = 0;
    atomic_store(&mem_said, 0);
    pthread_mutex_unlock(&mem_lock);
    pthread_mutex_unlock(&open_lock);
}

/* ===================================================================================
 * Access
 * =================================================================================== */

/* Layer i when it is open and not bypassed, else NULL. */
static layer *readable(int i) {
    if (i < 0 || i >= nlayers) return NULL;
    layer *l = &layers[i];
    open_deferred(l);
    return l->db && !atomic_load(&l->failed) ? l : NULL;
}

/* The user cache when it may be written, else NULL. */
static layer *writable_user(void) {
    layer *l = readable(0);
    return l && l->writable ? l : NULL;
}

/* The one warning of a layer; the handle stays open until gt_layers_close. */
static void failed(layer *l) {
    if (atomic_exchange(&l->failed, 1)) return;
    atomic_fetch_add(&epoch, 1);
    if (l->role == ROLE_USER && !atomic_exchange(&mem_said, 1))
        gt_log(GT_LOG_WARN, "cache bypassed: %s; " KEPT_IN_MEMORY " from now on",
               gt_db_errmsg(l->db));
    else
        gt_log(GT_LOG_WARN, "cache bypassed: %s", gt_db_errmsg(l->db));
}

/* The in-memory cache: made when make != 0 and there is none yet; NULL when there is
 * none (or it could not be made: said once). */
static gt_db *memory(int make) {
    pthread_mutex_lock(&mem_lock);
    if (!mem && make && !mem_failed) {
        char msg[600];
        if (gt_db_open(":memory:", 0, 0, &mem, msg, sizeof msg) != GT_SUCCESS) {
            mem = NULL;
            mem_failed = 1;
            gt_log(GT_LOG_WARN, "tuning results cannot be kept in memory either: %s", msg);
        } else if (!atomic_exchange(&mem_said, 1)) {
            gt_log(GT_LOG_WARN, "no writable cache; " KEPT_IN_MEMORY);
        }
    }
    gt_db *m = mem;
    pthread_mutex_unlock(&mem_lock);
    return m;
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

const gt_fs_info *gt_layers_user_fs(const char **path) {
    gt_layers_open();
    if (path) *path = named;
    return &user_fs;
}

/* The i-th layer of role, or NULL. */
static layer *nth(int role, int i) {
    for (int j = 0; j < nlayers; j++)
        if (layers[j].role == role && i-- == 0) return &layers[j];
    return NULL;
}

const char *gt_layers_host_path(int i, int *open) {
    gt_layers_open();
    layer *l = i >= 0 ? nth(ROLE_HOST, i) : NULL;
    if (l && open) *open = l->db && !atomic_load(&l->failed);
    return l ? l->path : NULL;
}

int gt_layers_hosts_unread(void) {
    gt_layers_open();
    return hosts_unread;
}

const char *gt_layers_shipped_path(int i, int *open) {
    gt_layers_open();
    layer *l = i >= 0 ? nth(ROLE_SHIPPED, i) : NULL;
    if (l && open) *open = l->db && !atomic_load(&l->failed);
    return l ? l->path : NULL;
}

int gt_layers_in_memory(void) { return memory(0) != NULL; }

int gt_layers_defaults(int *files, int *loaded) {
    gt_layers_open();
    layer *l = nth(ROLE_DEFAULTS, 0);
    open_deferred(l);
    pthread_mutex_lock(&open_lock);
    int n, state = defaults_state;
    defaults_texts(&n);
    if (files) *files = n;
    if (loaded) *loaded = defaults_loaded;
    pthread_mutex_unlock(&open_lock);
    return state;
}

const char *gt_layers_defaults_name(int i) {
    pthread_mutex_lock(&open_lock);
    int n;
    const gt_text_file *files = defaults_texts(&n);
    const char *name = i >= 0 && i < n ? (files[i].name ? files[i].name : "?") : NULL;
    pthread_mutex_unlock(&open_lock);
    return name;
}

gt_status gt_layers_defaults_list(gt_db_winner_fn fn, void *user) {
    gt_layers_open();
    layer *l = nth(ROLE_DEFAULTS, 0);
    open_deferred(l);
    if (!l || !l->db || atomic_load(&l->failed)) return GT_SUCCESS;
    gt_status s = gt_db_list(l->db, fn, user);
    if (s != GT_SUCCESS) failed(l);
    return s;
}

void gt_layers_set_defaults(const gt_text_file *files, int n) {
    pthread_mutex_lock(&open_lock);
    assert(!atomic_load(&opened) && "gt_layers_set_defaults with the layers open");
    defaults_files = n < 0 ? gt_defaults_files : files;
    defaults_nfiles = n < 0 ? -1 : n;
    pthread_mutex_unlock(&open_lock);
}

int gt_layers_lookup(int i, const gt_key *key, const char *src_hash, int lib_major,
                     gt_db_winner *w) {
    /* An entry the built-in image does not name is not looked for there: the image stays
     * unopened. */
    if (i > 0 && i < nlayers && atomic_load(&layers[i].deferred) &&
        !in_image(key, src_hash, lib_major))
        return 0;
    layer *l = readable(i);
    int found = 0;
    if (l && gt_db_lookup(l->db, key, src_hash, lib_major, w, &found) != GT_SUCCESS) {
        failed(l);
        found = 0;
    }
    gt_db *m = i == 0 && !found ? memory(0) : NULL;
    if (m && gt_db_lookup(m, key, src_hash, lib_major, w, &found) != GT_SUCCESS) found = 0;
    return found;
}

int gt_layers_neighbors(int i, const gt_key *key, const char *src_hash, int lib_major,
                        gt_db_winner_fn fn, void *user) {
    /* The in-memory rows first: a failing file then drops them with its own, once. */
    gt_db *m = i == 0 ? memory(0) : NULL;
    if (m) gt_db_neighbors(m, key, src_hash, lib_major, fn, user);
    layer *l = readable(i);
    if (!l) return 0;
    if (gt_db_neighbors(l->db, key, src_hash, lib_major, fn, user) == GT_SUCCESS) return 0;
    failed(l);
    return -1;
}

int gt_layers_class_timings(int i, const gt_key *key, const char *src_hash, int lib_major,
                            int any_ops, gt_db_class_timing_fn fn, void *user) {
    gt_db *m = i == 0 ? memory(0) : NULL;
    if (m) gt_db_class_timings(m, key, src_hash, lib_major, any_ops, fn, user);
    layer *l = readable(i);
    if (!l) return 0;
    if (gt_db_class_timings(l->db, key, src_hash, lib_major, any_ops, fn, user) == GT_SUCCESS)
        return 0;
    failed(l);
    return -1;
}

/* gt_db_store (kept NULL) or gt_db_store_first into db. */
static gt_status store_into(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                            const gt_db_winner *w, const gt_db_timing *t, int nt,
                            gt_db_winner *kept) {
    return kept ? gt_db_store_first(db, key, src_hash, lib_major, w, t, nt, kept)
                : gt_db_store(db, key, src_hash, lib_major, w, t, nt);
}

/* The user cache, else memory (invariant 4); kept as store_into's. */
static void store_layers(const gt_key *key, const char *src_hash, int lib_major,
                         const gt_db_winner *w, const gt_db_timing *t, int nt,
                         gt_db_winner *kept) {
    layer *u = writable_user();
    if (u && store_into(u->db, key, src_hash, lib_major, w, t, nt, kept) == GT_SUCCESS) return;
    if (u) failed(u);
    gt_db *m = memory(1);
    if (m && store_into(m, key, src_hash, lib_major, w, t, nt, kept) == GT_SUCCESS) return;
    if (m) gt_log(GT_LOG_WARN, "tuning result not kept: %s", gt_db_errmsg(m));
    if (kept) *kept = *w;
}

void gt_layers_store(const gt_key *key, const char *src_hash, int lib_major,
                     const gt_db_winner *w, const gt_db_timing *t, int nt) {
    store_layers(key, src_hash, lib_major, w, t, nt, NULL);
    atomic_fetch_add(&epoch, 1);
}

int gt_layers_store_first(const gt_key *key, const char *src_hash, int lib_major,
                          const gt_db_winner *w, const gt_db_timing *t, int nt,
                          gt_db_winner *kept) {
    store_layers(key, src_hash, lib_major, w, t, nt, kept);
    atomic_fetch_add(&epoch, 1);
    return strcmp(kept->config, w->config) == 0;
}

gt_db_claim_state gt_layers_claim(const gt_key *key, const char *src_hash, int lib_major,
                                  const char *owner, double ttl_s, gt_db_winner *stored) {
    layer *u = writable_user();
    gt_db_claim_state state = GT_DB_CLAIM_TAKEN;
    if (u && gt_db_claim(u->db, key, src_hash, lib_major, owner, ttl_s, &state, stored) != GT_SUCCESS) {
        failed(u);
        state = GT_DB_CLAIM_TAKEN;
    }
    return state;
}

void gt_layers_unclaim(const gt_key *key, const char *src_hash, int lib_major, const char *owner) {
    layer *u = writable_user();
    if (u && gt_db_unclaim(u->db, key, src_hash, lib_major, owner) != GT_SUCCESS) failed(u);
}

void *gt_layers_bin_get(const gt_db_bin_key *bk, size_t *size) {
    if (!atomic_load(&opened)) return NULL;
    layer *u = readable(0);
    void *image = NULL;
    int found = 0;
    if (u && gt_db_cubin_get(u->db, bk, &image, size, &found) != GT_SUCCESS) {
        failed(u);
        found = 0;
    }
    gt_db *m = !found ? memory(0) : NULL;
    if (m && gt_db_cubin_get(m, bk, &image, size, &found) != GT_SUCCESS) found = 0;
    return found ? image : NULL;
}

void gt_layers_bin_put(const gt_db_bin_key *bk, const void *image, size_t size) {
    if (!atomic_load(&opened) || !image || !size) return;
    layer *u = writable_user();
    if (u && gt_db_cubin_put(u->db, bk, image, size) == GT_SUCCESS) return;
    if (u) failed(u);
    gt_db *m = memory(1);
    if (m) gt_db_cubin_put(m, bk, image, size);
}

void gt_layers_bin_programs(const gt_db_bin_key *bk, gt_db_program_fn fn, void *user) {
    if (!atomic_load(&opened)) return;
    layer *u = readable(0);
    if (u && gt_db_cubin_programs(u->db, bk, fn, user) != GT_SUCCESS) failed(u);
    gt_db *m = memory(0);
    if (m) gt_db_cubin_programs(m, bk, fn, user);
}


/* ===================================================================================
 * Kept states: what the layers' rows give, kept in the user cache for new processes
 * =================================================================================== */

int gt_layers_fingerprint(char *buf, size_t size) {
    gt_layers_open();
    if (!buf || size == 0) return -1;
    buf[0] = 0;
    /* Rows only this process holds are in no file. */
    if (memory(0) || !readable(0)) return -1;
    size_t used = 0;
    for (int i = 0; i < nlayers; i++) {
        const layer *l = &layers[i];
        char part[200];
        if (l->role == ROLE_DEFAULTS && !atomic_load(&l->failed)) {
            /* A test's texts, or texts loaded where no image could be read: not named.
             * The image is named without being opened. */
            if (!defaults_imaged) return -1;
            snprintf(part, sizeof part, "d%zu.%llx;", gt_defaults_image_size,
                     gt_defaults_image_sum);
        } else if (!readable(i)) {
            snprintf(part, sizeof part, "x;");
        } else if (l->role == ROLE_USER) {
            long long gen[3];
            if (gt_db_generation(l->db, gen) != GT_SUCCESS) return -1;
            snprintf(part, sizeof part, "u%lld.%lld.%lld;", gen[0], gen[1], gen[2]);
        } else {
            /* A read-only file (shipped, another host's): its identity and last change,
             * and its WAL's where it has one (commits that no checkpoint has moved into
             * the file yet change only that). */
            struct stat st, wst;
            char wal[PATH_MAX_LEN + 8];
            if (stat(l->path, &st) != 0) return -1;
            snprintf(wal, sizeof wal, "%s-wal", l->path);
            if (stat(wal, &wst) != 0) memset(&wst, 0, sizeof wst);
            snprintf(part, sizeof part, "f%llx.%llx.%lld.%lld.%ld.%lld.%lld.%ld;",
                     (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
                     (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                     (long)st.st_mtim.tv_nsec, (long long)wst.st_size,
                     (long long)wst.st_mtim.tv_sec, (long)wst.st_mtim.tv_nsec);
        }
        const size_t n = strlen(part);
        if (used + n >= size) return -1;
        memcpy(buf + used, part, n + 1);
        used += n;
    }
    return 0;
}

void *gt_layers_state_get(const char *name, size_t *size) {
    gt_layers_open();
    *size = 0;
    layer *l = readable(0);
    void *data = NULL;
    int found = 0;
    if (!l || gt_db_state_get(l->db, name, &data, size, &found) != GT_SUCCESS || !found) {
        free(data);
        *size = 0;
        return NULL;
    }
    return data;
}

void gt_layers_state_put(const char *name, const void *data, size_t size) {
    gt_layers_open();
    layer *l = writable_user();
    if (l && gt_db_state_put(l->db, name, data, size) != GT_SUCCESS)
        gt_log(GT_LOG_DEBUG, "a kept state is not stored: %s", gt_db_errmsg(l->db));
}
