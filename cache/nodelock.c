/*
 * nodelock.c: the host-wide lock of a cache file (nodelock.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nodelock.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    return h;
}

int gt_nodelock_name(const char *path, char *buf, size_t size) {
    if (size) buf[0] = 0;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return ENOMEM;
    char *real = realpath(dir, NULL);
    int err = real ? 0 : errno;
    free(dir);
    if (err) return err;
    uint64_t h = fnv1a(14695981039346656037ULL, real);
    h = fnv1a(h, "/");
    h = fnv1a(h, slash ? slash + 1 : path);
    free(real);
    snprintf(buf, size, "gemmtune-cache-%016llx", (unsigned long long)h);
    return 0;
}

/* ===== held locks, for fork() =====
 *
 * A child of fork() inherits the socket of a lock another thread of the parent holds, and
 * the name stays bound while any process has it open: a child that lives on (a worker
 * forked without exec) would hold the lock for good. The locks this process holds are
 * listed, and a fork handler closes them in the child, which never owns a parent's lock;
 * release closes only a listed socket, so a child's stale descriptor is never closed by
 * mistake. */

#define MAX_HELD 64

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t held_once = PTHREAD_ONCE_INIT;
static int held[MAX_HELD];
static int nheld;

static void before_fork(void) { pthread_mutex_lock(&held_lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&held_lock); }

static void after_fork_child(void) {
    for (int i = 0; i < nheld; i++) close(held[i]);
    nheld = 0;
    pthread_mutex_unlock(&held_lock);
}

static void install_fork_handler(void) {
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* Lists fd as held; 0, or -1 when the list is full (the caller gives the lock up). */
static int hold(int fd) {
    pthread_mutex_lock(&held_lock);
    int ok = nheld < MAX_HELD;
    if (ok) held[nheld++] = fd;
    pthread_mutex_unlock(&held_lock);
    return ok ? 0 : -1;
}

/* Takes fd off the list; 1 when it was there. */
static int unhold(int fd) {
    pthread_mutex_lock(&held_lock);
    int found = 0;
    for (int i = 0; i < nheld && !found; i++)
        if (held[i] == fd) {
            held[i] = held[--nheld];
            found = 1;
        }
    pthread_mutex_unlock(&held_lock);
    return found;
}

/* ===== the lock ===== */

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int gt_nodelock_acquire(const char *name, int timeout_ms, int *fd) {
    *fd = -1;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    size_t n = strlen(name);
    if (n + 1 > sizeof a.sun_path) return ENAMETOOLONG;
    /* sun_path[0] == 0: the abstract namespace; the name is the n bytes after it. */
    memcpy(a.sun_path + 1, name, n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    pthread_once(&held_once, install_fork_handler);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return errno;
    int64_t start = now_us();
    long sleep_us = 20;
    for (;;) {
        if (bind(s, (struct sockaddr *)&a, len) == 0) {
            if (hold(s) != 0) {
                close(s);
                return ENOLCK;
            }
            *fd = s;
            return 0;
        }
        int err = errno;
        if (err != EADDRINUSE) {
            close(s);
            return err;
        }
        if (now_us() - start >= (int64_t)timeout_ms * 1000) {
            close(s);
            return ETIMEDOUT;
        }
        struct timespec ts = {0, sleep_us * 1000};
        nanosleep(&ts, NULL);
        if (sleep_us < 2000) sleep_us *= 2;
    }
}

void gt_nodelock_release(int fd) {
    if (fd >= 0 && unhold(fd)) close(fd);
}
