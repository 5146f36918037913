/*
 * layers.h: the cache files one process reads and writes, in lookup order.
 *
 * Layer 0 is the writable user cache: GEMMTUNE_CACHE, else the default path
 * (gt_db_default_path). Then come the read-only files of GEMMTUNE_CACHE_PATH, in path
 * order (shipped by an admin; the user cache's own path is skipped there). The layers
 * are opened once, on first use, and closed by gt_layers_close (gt_release).
 *
 * Owns: the layers' handles and their failure state. Must not touch: CUDA, the kernel
 * configurations (a winner's configuration is text here; the caller validates it).
 *
 * Invariants:
 *   1. A layer that fails in any way (open, read, write: corrupt, locked past the busy
 *      timeout, full) is reported once, with the reason, and bypassed from then on.
 *   2. Binaries are read from and written to the user cache only, never a shipped file.
 *   3. A handle stays open until gt_layers_close, even once bypassed: another thread may
 *      be using it.
 */
#ifndef GT_LAYERS_H
#define GT_LAYERS_H

#include <stddef.h>

#include "db.h"
#include "key.h"

/* Opens the layers unless they are open (thread-safe); a layer that cannot be opened is
 * reported (warning) and left out. */
void gt_layers_open(void);
/* Closes every layer (gt_release); a later gt_layers_open opens them afresh. */
void gt_layers_close(void);

/* The number of layers (the user slot counts even when it has no file) and the path of
 * layer i ("" for a user slot without a path). */
int gt_layers_count(void);
const char *gt_layers_path(int i);

/* The user cache's path and whether it is open ("" when none could be formed). */
const char *gt_layers_user_path(int *open);
/* The read-only files in lookup order: the path of the i-th (0-based) and whether it is
 * usable; NULL past the last. */
const char *gt_layers_shipped_path(int i, int *open);

/* Layer i's winner of key: 1 with *w, 0 when it has none or is unusable (a failing read
 * bypasses it). */
int gt_layers_lookup(int i, const gt_key *key, const char *src_hash, int lib_major,
                     gt_db_winner *w);
/* gt_db_neighbors over layer i; 0, or -1 when it failed (the layer is then bypassed and
 * rows it gave before failing must be dropped by the caller). */
int gt_layers_neighbors(int i, const gt_key *key, const char *src_hash, int lib_major,
                        gt_db_winner_fn fn, void *user);
/* Stores a winner and its candidates' timings in the user cache when it is writable. */
void gt_layers_store(const gt_key *key, const char *src_hash, int lib_major,
                     const gt_db_winner *w, const gt_db_timing *t, int nt);

/* A binary from the user cache (malloc'd), or NULL when there is none, the cache is
 * unusable, or the layers are not open (a process in mode off opens none: these two
 * never open them). */
void *gt_layers_bin_get(const gt_db_bin_key *bk, size_t *size);
/* Stores a binary in the user cache when it is writable. */
void gt_layers_bin_put(const gt_db_bin_key *bk, const void *image, size_t size);

#endif
