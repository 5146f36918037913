/*
 * fs.c: the filesystem of a cache directory, the policy for it, and the per-host names
 * (fs.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "env.h"
#include "log.h"

/* ===================================================================================
 * Types
 * =================================================================================== */

typedef struct fs_type {
    const char *name;
    unsigned long magic;
    int shared;
} fs_type;

#define GT_FS_ROW(name, magic, shared) {name, magic, shared},
static const fs_type types[] = {GT_FS_TABLE(GT_FS_ROW)};
#undef GT_FS_ROW
#define NTYPES (sizeof types / sizeof types[0])

const char *gt_fs_type_name(unsigned long magic, int *shared) {
    if (shared) *shared = 0;
    /* f_type is a signed word on some ABIs: compare the low 32 bits, as the magic
     * numbers are. */
    magic &= 0xFFFFFFFFUL;
    for (size_t i = 0; i < NTYPES; i++)
        if (types[i].magic == magic) {
            if (shared) *shared = types[i].shared;
            return types[i].name;
        }
    return NULL;
}

static const fs_type *type_by_name(const char *name) {
    for (size_t i = 0; i < NTYPES; i++)
        if (strcasecmp(types[i].name, name) == 0) return &types[i];
    return NULL;
}

/* ===================================================================================
 * Probe and policy
 * =================================================================================== */

/* statfs of the directory holding path, or of its nearest existing ancestor. */
static int statfs_dir(const char *path, struct statfs *st) {
    char *dir = strdup(path && *path ? path : ".");
    if (!dir) return -1;
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, strlen(dir) + 1, ".");
    else if (slash == dir) dir[1] = 0;
    else *slash = 0;
    int rc;
    for (;;) {
        rc = statfs(dir, st);
        if (rc == 0 || errno != ENOENT) break;
        /* Not there yet (the cache directory is made at the first open): its parent's
         * filesystem is the one it will be made on. */
        slash = strrchr(dir, '/');
        if (!slash) {
            snprintf(dir, strlen(dir) + 1, ".");
        } else if (slash == dir) {
            if (dir[1] == 0) break;
            dir[1] = 0;
        } else {
            *slash = 0;
        }
    }
    free(dir);
    return rc;
}

static void set_type(gt_fs_info *out, unsigned long magic, const char *name, int shared) {
    out->magic = magic;
    out->shared = shared;
    if (name) snprintf(out->type, sizeof out->type, "%s", name);
    else snprintf(out->type, sizeof out->type, "0x%lx", magic & 0xFFFFFFFFUL);
}

void gt_fs_probe(const char *path, gt_fs_info *out) {
    static atomic_int warned;
    memset(out, 0, sizeof *out);
    struct statfs st;
    if (statfs_dir(path, &st) == 0) {
        unsigned long magic = (unsigned long)st.f_type & 0xFFFFFFFFUL;
        int shared;
        const char *name = gt_fs_type_name(magic, &shared);
        set_type(out, magic, name, shared);
    } else {
        snprintf(out->type, sizeof out->type, "unknown");
    }
    out->per_host = out->shared;
    snprintf(out->source, sizeof out->source, "detected");
    const char *v = gt_env(GT_ENV_CACHE_FS);
    if (!v || strcasecmp(v, "auto") == 0) return;
    const char *var = gt_env_vars[GT_ENV_CACHE_FS].name;
    const fs_type *t;
    if (strcasecmp(v, "local") == 0 || strcasecmp(v, "shared") == 0) {
        out->per_host = strcasecmp(v, "shared") == 0;
        snprintf(out->source, sizeof out->source, "%s=%s", var, out->per_host ? "shared" : "local");
    } else if ((t = type_by_name(v))) {
        set_type(out, t->magic, t->name, t->shared);
        out->per_host = t->shared;
        snprintf(out->source, sizeof out->source, "%s=%s", var, t->name);
    } else if (!atomic_exchange(&warned, 1)) {
        gt_log(GT_LOG_WARN, "%s='%s' is not auto, local, shared or a filesystem type name; "
                            "using auto", var, v);
    }
}

/* ===================================================================================
 * Host names
 * =================================================================================== */

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static char test_host[64];

void gt_fs_set_test_host(const char *name) {
    pthread_mutex_lock(&host_lock);
    snprintf(test_host, sizeof test_host, "%s", name ? name : "");
    pthread_mutex_unlock(&host_lock);
}

static int host_byte_ok(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

int gt_fs_host(char *buf, size_t size) {
    char name[256] = "";
    pthread_mutex_lock(&host_lock);
    snprintf(name, sizeof name, "%s", test_host);
    pthread_mutex_unlock(&host_lock);
    if (!name[0] && gethostname(name, sizeof name) != 0) name[0] = 0;
    name[sizeof name - 1] = 0;
    if (size) buf[0] = 0;
    if (!name[0] || size < 2) return -1;
    size_t n = strlen(name);
    if (n > 63) n = 63;
    if (n > size - 1) n = size - 1;
    for (size_t i = 0; i < n; i++)
        buf[i] = host_byte_ok((unsigned char)name[i]) ? name[i] : '_';
    buf[n] = 0;
    return 0;
}

/* ===================================================================================
 * Per-host names
 * =================================================================================== */

/* Where nominal's base name starts, and its extension (the last dot of the base name
 * that is not its first byte; "" when there is none). */
static void split_name(const char *nominal, const char **base, const char **ext) {
    const char *slash = strrchr(nominal, '/');
    *base = slash ? slash + 1 : nominal;
    const char *dot = strrchr(*base, '.');
    *ext = dot && dot != *base ? dot : *base + strlen(*base);
}

int gt_fs_host_path(const char *nominal, const char *host, char *buf, size_t size) {
    if (size) buf[0] = 0;
    if (!nominal || !host || !*host || !size) return -1;
    const char *base, *ext;
    split_name(nominal, &base, &ext);
    int n = snprintf(buf, size, "%.*s.%s%s", (int)(ext - nominal), nominal, host, ext);
    if (n < 0 || (size_t)n >= size) {
        buf[0] = 0;
        return -1;
    }
    return 0;
}

typedef struct found {
    char *path;
    time_t mtime;
} found;

static int newest_first(const void *a, const void *b) {
    const found *x = a, *y = b;
    if (x->mtime != y->mtime) return x->mtime > y->mtime ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* 1 when name is `<stem>.<X><ext>` with X a non-empty run of host-name bytes. */
static int host_file_name(const char *name, const char *stem, size_t nstem, const char *ext) {
    size_t n = strlen(name), next = strlen(ext);
    if (n < nstem + 1 + 1 + next || strncmp(name, stem, nstem) != 0 || name[nstem] != '.')
        return 0;
    if (strcmp(name + n - next, ext) != 0) return 0;
    for (size_t i = nstem + 1; i < n - next; i++)
        if (!host_byte_ok((unsigned char)name[i])) return 0;
    return 1;
}

int gt_fs_other_hosts(const char *nominal, const char *own_host, gt_fs_file_fn fn, void *user) {
    if (!nominal || !*nominal) return -1;
    const char *base, *ext;
    split_name(nominal, &base, &ext);
    char own[PATH_MAX] = "";
    if (own_host && *own_host && gt_fs_host_path(nominal, own_host, own, sizeof own) != 0)
        own[0] = 0;
    char *dir = base == nominal ? strdup(".") : strndup(nominal, (size_t)(base - nominal));
    if (!dir) return -1;
    DIR *d = opendir(dir);
    if (!d) {
        int missing = errno == ENOENT;
        free(dir);
        return missing ? 0 : -1;
    }
    found *v = NULL;
    int n = 0, cap = 0, oom = 0;
    size_t nstem = (size_t)(ext - base);
    struct dirent *e;
    while (!oom && (e = readdir(d))) {
        int is_nominal = strcmp(e->d_name, base) == 0;
        if (!is_nominal && !host_file_name(e->d_name, base, nstem, ext)) continue;
        char path[PATH_MAX];
        int len = base == nominal ? snprintf(path, sizeof path, "%s", e->d_name)
                                  : snprintf(path, sizeof path, "%s%s", dir, e->d_name);
        if (len < 0 || (size_t)len >= sizeof path || strcmp(path, own) == 0) continue;
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (n == cap) {
            int ncap = cap ? 2 * cap : 16;
            found *nv = realloc(v, sizeof *nv * (size_t)ncap);
            if (!nv) {
                oom = 1;
                break;
            }
            v = nv, cap = ncap;
        }
        v[n].path = strdup(path);
        if (!v[n].path) {
            oom = 1;
            break;
        }
        v[n++].mtime = st.st_mtime;
    }
    closedir(d);
    free(dir);
    if (n > 1) qsort(v, (size_t)n, sizeof *v, newest_first); /* v is NULL where n is 0 */
    int stop = 0;
    for (int i = 0; i < n; i++) {
        if (!stop && !oom && fn) stop = fn(v[i].path, v[i].mtime, user);
        free(v[i].path);
    }
    free(v);
    return oom ? -1 : n;
}
