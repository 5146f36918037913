/*
 * layers.h: the cache files one process reads and writes, in lookup order.
 *
 * The user cache is named by GEMMTUNE_CACHE, else the default path (gt_db_default_path);
 * the policy of its directory (fs.h) says which file layer 0 is:
 *   - local: that file, shared by the machine's processes in WAL mode;
 *   - per host (a network or parallel filesystem): this host's file beside it,
 *     `<stem>.<host><ext>` (gt_db_open_host), followed by snapshots (gt_db_open_snapshot)
 *     of the directory's other hosts' files and of the named file itself when it exists,
 *     newest first, at most GT_LAYERS_MAX_HOSTS of them.
 * Then come the read-only files of GEMMTUNE_CACHE_PATH, in path order (shipped by an
 * admin; a file already read as a layer is skipped there), each opened read-only, or as a
 * snapshot when its own directory's policy is per host. Last come the built-in defaults:
 * the cache texts of data/defaults/ embedded in the library at build time (data/embed.py,
 * cache/text.h), loaded into one in-memory cache, unless GEMMTUNE_DEFAULTS=0 or none is
 * built in; every file above wins over them for the same key. The layers are opened once,
 * on first use, and closed by gt_layers_close (gt_release).
 *
 * Owns: the layers' handles and their failure state, and the process's in-memory cache
 * for what the writable cache cannot take. Must not touch: CUDA, the kernel
 * configurations (a winner's configuration is text here; the caller validates it).
 *
 * Invariants:
 *   1. A layer that fails in any way (open, read, write: corrupt, locked past the busy
 *      timeout, full) is reported once, with the reason, and bypassed from then on.
 *   2. Binaries are read from and written to the user cache only (or the in-memory one),
 *      never a shipped file or another host's.
 *   3. A handle stays open until gt_layers_close, even once bypassed: another thread may
 *      be using it.
 *   4. No tuning result is dropped without a word: when there is no usable writable
 *      cache (no path, it fails to open, or a write fails), one warning says so, and from
 *      then on winners, their timings and binaries go to an in-memory cache that layer 0
 *      reads as well, for the rest of the process.
 *   5. The built-in defaults are read-only once loaded (gt_db_seal): never written, never
 *      a source of binaries. A built-in text that does not parse is reported once, with
 *      its name and line, and left out whole; the others still load.
 */
#ifndef GT_LAYERS_H
#define GT_LAYERS_H

#include <stddef.h>

#include "db.h"
#include "fs.h"
#include "key.h"
#include "text.h"

#define GT_LAYERS_MAX_HOSTS 16
#define GT_LAYERS_MAX_SHIPPED 16

/* Opens the layers unless they are open (thread-safe); a layer that cannot be opened is
 * reported (warning) and left out. */
void gt_layers_open(void);
/* Closes every layer and the in-memory cache (gt_release); a later gt_layers_open opens
 * them afresh. */
void gt_layers_close(void);

/* A number that changes whenever what the layers hold, but for binaries, may change in
 * this process: after each gt_layers_store and gt_layers_store_first, at each
 * gt_layers_close, and when a layer is bypassed after a failure. What a caller read from
 * the layers under one number stays true while the number holds, but for other
 * processes' writes to the same files. */
unsigned long gt_layers_epoch(void);

/* The number of layers (the user slot counts even when it has no file) and the path of
 * layer i ("" for a user slot without a path). */
int gt_layers_count(void);
const char *gt_layers_path(int i);

/* The user cache's path (this host's file under a per-host policy) and whether it is
 * open ("" when none could be formed). */
const char *gt_layers_user_path(int *open);
/* The policy of the user cache's directory (fs.h), and in *named (may be NULL) the path
 * the user cache is named by ("" when none). */
const gt_fs_info *gt_layers_user_fs(const char **named);
/* Under a per-host policy, the other hosts' files read as snapshots, newest first: the
 * path of the i-th (0-based) and whether it is usable; NULL past the last. */
const char *gt_layers_host_path(int i, int *open);
/* How many of the other hosts' files were left unread (beyond GT_LAYERS_MAX_HOSTS). */
int gt_layers_hosts_unread(void);
/* The read-only files of GEMMTUNE_CACHE_PATH in lookup order: the path of the i-th
 * (0-based) and whether it is usable; NULL past the last. */
const char *gt_layers_shipped_path(int i, int *open);
/* 1 when tuning results go to the in-memory cache (invariant 4). */
int gt_layers_in_memory(void);

/* What became of the built-in defaults at the layers' opening (opens them). */
enum {
    GT_DEFAULTS_OFF = 0,    /* GEMMTUNE_DEFAULTS=0 */
    GT_DEFAULTS_NONE = 1,   /* no text is built in */
    GT_DEFAULTS_FAILED = 2, /* none of the texts could be loaded (reported) */
    GT_DEFAULTS_LOADED = 3, /* the last layer holds them */
};
/* The state; *files (may be NULL) the texts built in, *loaded (may be NULL) how many of
 * them the layer holds. */
int gt_layers_defaults(int *files, int *loaded);
/* The name of the i-th (0-based) built-in text, e.g. "h100.txt"; NULL past the last. */
const char *gt_layers_defaults_name(int i);
/* gt_db_list over the built-in defaults: every winner they hold, of any kernel source
 * (fn must not call back into the layers' reads). GT_SUCCESS without a call when they
 * are not loaded. */
gt_status gt_layers_defaults_list(gt_db_winner_fn fn, void *user);
/* Test aid: from the next gt_layers_open on, the n texts at files are read as the
 * built-in defaults instead of those built in (n < 0: those built in again). The texts
 * must live until then. Call while the layers are closed. */
void gt_layers_set_defaults(const gt_text_file *files, int n);

/* Layer i's winner of key: 1 with *w, 0 when it has none or is unusable (a failing read
 * bypasses it). Layer 0 includes the in-memory cache. */
int gt_layers_lookup(int i, const gt_key *key, const char *src_hash, int lib_major,
                     gt_db_winner *w);
/* gt_db_neighbors over layer i; 0, or -1 when it failed (the layer is then bypassed and
 * rows it gave before failing must be dropped by the caller). */
int gt_layers_neighbors(int i, const gt_key *key, const char *src_hash, int lib_major,
                        gt_db_winner_fn fn, void *user);
/* gt_db_class_timings over layer i (every candidate's outcome on every tuned shape of
 * key's class, the in-memory cache's first at layer 0); 0, or -1 when it failed (the
 * layer is then bypassed and reported once; fn may have seen some of its rows). */
int gt_layers_class_timings(int i, const gt_key *key, const char *src_hash, int lib_major,
                            int any_ops, gt_db_class_timing_fn fn, void *user);
/* Kept states (a class's selector data, src/dispatch.c): a text naming what every
 * layer holds now, into buf: the user cache's generation and highest rowids
 * (gt_db_generation), each
 * read-only file's device, inode, size and modification time (and its WAL's size and
 * time), the built-in image's size
 * and sum, and a bypassed layer as such; two equal texts mean the same rows. 0, or -1
 * where no text can say it (rows held in memory only, the user cache unusable, test
 * texts as the defaults, buf too small). */
int gt_layers_fingerprint(char *buf, size_t size);
/* The user cache's state under name (gt_db_state_get): malloc'd, *size bytes; NULL when
 * it holds none or cannot be read. */
void *gt_layers_state_get(const char *name, size_t *size);
/* Keeps a state in the user cache where it is writable; a failure is only logged
 * (debug): the state is derived again next time. */
void gt_layers_state_put(const char *name, const void *data, size_t size);
/* Stores a winner and its candidates' timings in the user cache, else in memory
 * (invariant 4). */
void gt_layers_store(const gt_key *key, const char *src_hash, int lib_major,
                     const gt_db_winner *w, const gt_db_timing *t, int nt);
/* gt_layers_store, but the winner only where the user layer (or the in-memory cache) has
 * none yet for key: 1 when w was stored, 0 when another process's winner was there first;
 * *kept is the winner the cache holds. */
int gt_layers_store_first(const gt_key *key, const char *src_hash, int lib_major,
                          const gt_db_winner *w, const gt_db_timing *t, int nt,
                          gt_db_winner *kept);
/* A tuning claim on key in the writable user cache (gt_db_claim): GT_DB_CLAIM_STORED with
 * *stored, GT_DB_CLAIM_HELD, or GT_DB_CLAIM_TAKEN, which is also the answer where no
 * writable file can coordinate processes (none, or it failed: bypassed, said once). */
gt_db_claim_state gt_layers_claim(const gt_key *key, const char *src_hash, int lib_major,
                                  const char *owner, double ttl_s, gt_db_winner *stored);
/* Drops owner's claim on key. */
void gt_layers_unclaim(const gt_key *key, const char *src_hash, int lib_major, const char *owner);

/* A binary from the user cache or the in-memory one (malloc'd), or NULL when there is
 * none or the layers are not open (a process in mode off opens none: these two never
 * open them). */
void *gt_layers_bin_get(const gt_db_bin_key *bk, size_t *size);
/* Stores a binary in the user cache, else in memory. */
void gt_layers_bin_put(const gt_db_bin_key *bk, const void *image, size_t size);
/* gt_db_cubin_programs over the user cache and the in-memory one (a program may be
 * listed by both). */
void gt_layers_bin_programs(const gt_db_bin_key *bk, gt_db_program_fn fn, void *user);

/* ===== for the command (cli/cache.c): one file at a time, by the same rules ===== */

/* The user cache's file as this process writes it: the named path, or, under a per-host
 * policy, this host's file beside it. fs (may be NULL) gets the policy. GT_CACHE_ERROR
 * when no path can be formed (GEMMTUNE_CACHE and HOME unset, or this host has no name),
 * GT_INVALID_VALUE when it does not fit in size. */
gt_status gt_layers_user_file(char *buf, size_t size, gt_fs_info *fs);

/* Opens the cache file at path by the policy of its directory: gt_db_open on a local
 * filesystem; on a network or parallel one a read-only open is a snapshot (with the
 * timings when timings != 0) and a writable one gt_db_open_host. */
gt_status gt_layers_open_file(const char *path, int readonly, int timings, gt_db **out,
                              char *msg, size_t msgsize);

#endif
