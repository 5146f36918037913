/*
 * nodelock.h: a lock that every process of this host shares and no other host sees, for
 * a cache file that only this host writes on a network or parallel filesystem (fs.h).
 *
 * The lock is an abstract UNIX socket name (Linux): binding it holds the lock, closing
 * the socket releases it, and the kernel releases it when the holder dies, so a crash
 * never leaves a stale lock. Its scope is the network namespace, which the processes of
 * one host share (jobs, containers with the host's network) and which keeps, unlike a
 * lock file in /tmp, when a job container gives each job a private /tmp. It never touches
 * the shared filesystem, whose locks are what cannot be trusted there.
 *
 * A child of fork() never holds its parent's locks: a fork handler closes them there
 * (a child that lives on without exec would otherwise keep the lock bound).
 *
 * Owns: the sockets of held locks and their list (a descriptor is the caller's to pass
 * to release). Must not touch: files, SQLite, the process (no printing).
 */
#ifndef GT_NODELOCK_H
#define GT_NODELOCK_H

#include <stddef.h>

/* The lock name of the cache file at path: "gemmtune-cache-" and a 64-bit hash of the
 * real path of its directory (which must exist) and its base name, so that every process
 * of the host that opens the file, by whatever path, names one lock. 0, or an errno
 * value (realpath's). */
int gt_nodelock_name(const char *path, char *buf, size_t size);

/* Takes the lock `name`, waiting up to timeout_ms (polling with a growing sleep of at
 * most 2 ms); *fd gets the descriptor that holds it. 0, ETIMEDOUT when another process
 * (or another handle of this one) held it all that time, ENOLCK when this process holds
 * 64 locks already, or socket's or bind's errno. */
int gt_nodelock_acquire(const char *name, int timeout_ms, int *fd);

/* Releases a lock taken by gt_nodelock_acquire (fd < 0, or a lock this process does not
 * hold, as in a child of fork(): nothing). */
void gt_nodelock_release(int fd);

#endif
