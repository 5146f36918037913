/*
 * db.h: the SQLite cache of tuned kernels (docs/DESIGN.md, "Rules each part keeps").
 *
 * One file per location. It owns the schema and its migrations, opening (WAL, busy
 * timeout), lookup and insertion of winners and of every candidate's timing.
 * It knows nothing about CUDA: keys are plain data (base/key.h), configurations are
 * their canonical text. Errors come back as gt_status with a message retrievable by
 * gt_db_errmsg(); no SQLite code crosses this interface.
 *
 * A gt_db handle may be used by several threads at once (it serializes itself);
 * several processes may write one file at once (short IMMEDIATE transactions and a busy
 * timeout, so that "database is locked" never reaches a caller within the timeout).
 *
 * On a network or parallel filesystem (cache/fs.h) a file is never opened this way by
 * two hosts: the one host that writes it opens it with gt_db_open_host (no WAL, no
 * filesystem locks, a host-wide lock instead), and every other reader takes a snapshot
 * (gt_db_open_snapshot), an in-memory copy that is one committed state of the file.
 */
#ifndef GT_DB_H
#define GT_DB_H

#include <stddef.h>
#include <stdint.h>

#include "gemmtune.h"
#include "key.h"

#define GT_DB_SCHEMA_VERSION 2
#define GT_DB_CONFIG_MAX 128

typedef struct gt_db gt_db;

/* The winner of one key. */
typedef struct gt_db_winner {
    char config[GT_DB_CONFIG_MAX]; /* canonical text of the kernel configuration */
    double time_us;                /* median time of one run */
    double tflops;
    int64_t tuned_at;              /* unix seconds */
    char nvrtc[32];                /* NVRTC version, e.g. "13.0" */
    char driver[32];               /* driver version, e.g. "13000" */
    char host[64];                 /* host name of the tuning machine */
    char libver[32];               /* library version, e.g. "0.1.0" */
} gt_db_winner;

/* One candidate's outcome for a key. */
typedef struct gt_db_timing {
    char config[GT_DB_CONFIG_MAX];
    char status[24];               /* "ok", "compile_failed", "load_failed", "launch_failed",
                                      "verify_failed", "not_timed" */
    double time_us;                /* < 0 when not timed */
    double tflops;
    char message[256];             /* why it failed; empty when ok */
} gt_db_timing;

/* Opens (and, when writable, creates, with its parent directory) the cache at path
 * (":memory:": a private in-memory cache, gone at close, without the size cap).
 * readonly != 0 opens with SQLITE_OPEN_READONLY and never writes.
 * Applies WAL and the busy timeout, creates or migrates the schema, and checks that
 * the file is a usable cache now, so that a corrupt file, a file of another program or
 * a newer schema version fails here (GT_CACHE_ERROR, *out = NULL, message in msg).
 * A file of schema version 1 is migrated (writable) or refused (read-only).
 * busy_timeout_ms <= 0 means $GEMMTUNE_CACHE_TIMEOUT_MS when set to a positive number,
 * else 5000. A writable handle honours $GEMMTUNE_CACHE_MAX_MB (positive integer): the
 * file may not grow beyond that many MiB (SQLite's max_page_count); a store that would
 * fails with "the disk is full" and leaves the file as it was. */
gt_status gt_db_open(const char *path, int readonly, int busy_timeout_ms, gt_db **out,
                     char *msg, size_t msgsize);

/* As gt_db_open (writable) for a file on a network or parallel filesystem that only this
 * host writes (fs.h: `<stem>.<host><ext>`): SQLite's "unix-none" file layer, so the
 * filesystem's locks are never used; a rollback journal, never WAL, synced in full at
 * every commit; the open and every later call inside the host-wide lock of the file
 * (nodelock.h), waited for up to the busy timeout (then GT_CACHE_ERROR, "another process
 * of this host held it..."). A file in WAL mode is refused, left as it is. Every write
 * that changes the winners records their digest in meta ('winners_digest'), which
 * gt_db_open_snapshot checks. A callback of gt_db_list, gt_db_neighbors or gt_db_timings
 * on such a handle must not use another handle of the same file (it would wait for the
 * lock the walk holds until the timeout). */
gt_status gt_db_open_host(const char *path, int busy_timeout_ms, gt_db **out, char *msg,
                          size_t msgsize);

/* A read-only, in-memory copy of the winners (and, when timings != 0, the candidates'
 * timings; never the cubins) of the cache file at path, which another host may be
 * writing meanwhile. The file is opened immutable (no lock, no journal, never written)
 * and the copy is kept only when it is one committed state: the header's change counter
 * and page count are the same before and after, and, for a file written through
 * gt_db_open_host, the rows match the digest committed with them. A copy that fails
 * these, or an SQLite error while reading, is tried again (10 attempts over about
 * 0.3 s), then GT_CACHE_ERROR with the last reason. A file that reads as empty at every
 * attempt (a network client may hold a stale size for a while) gives an empty copy; a
 * file that is not an SQLite database, of another program, or of a newer schema is
 * refused at once. A WAL file's committed rows that are still in its -wal file are not
 * read. The copy never changes afterwards; writes are refused as on any read-only
 * handle. */
gt_status gt_db_open_snapshot(const char *path, int timings, gt_db **out, char *msg,
                              size_t msgsize);

/* The whole of db (an in-memory cache, compacted first) as a malloc'd image, the bytes of
 * an SQLite file: what data/image.c builds into the library from the built-in defaults.
 * GT_NOT_SUPPORTED where SQLite cannot serialize (before 3.36, or built without it). */
gt_status gt_db_image(gt_db *db, unsigned char **image, size_t *size);

/* A read-only handle on an image of gt_db_image, read in place: image must stay valid,
 * unchanged, until gt_db_close. name is the handle's name in messages. An image of
 * another schema version is refused (GT_CACHE_ERROR); GT_NOT_SUPPORTED where SQLite
 * cannot read images. */
gt_status gt_db_open_image(const char *name, const unsigned char *image, size_t size,
                           gt_db **out, char *msg, size_t msgsize);

void gt_db_close(gt_db *db);

/* From now on db is read-only, as if opened so: every write is refused (GT_CACHE_ERROR)
 * and no cubin is yielded. For an in-memory cache filled once and then only read (the
 * built-in defaults, cache/layers.h). */
void gt_db_seal(gt_db *db);

/* The message of the last error on this handle ("" when none). */
const char *gt_db_errmsg(gt_db *db);

/* The winner for key under this kernel source hash and library major version.
 * *found = 0 when there is none (still GT_SUCCESS). */
gt_status gt_db_lookup(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                       gt_db_winner *out, int *found);

/* In one short transaction: replaces the winner of key (when winner != NULL) and
 * inserts or replaces each of the ntimings candidate rows of key. */
gt_status gt_db_store(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                      const gt_db_winner *winner, const gt_db_timing *timings,
                      int ntimings);

/* In one short transaction: stores winner as key's winner unless the file already has
 * one, and inserts or replaces the timings either way; *kept is the winner the file holds
 * afterwards (winner, or the one another process stored first). */
gt_status gt_db_store_first(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                            const gt_db_winner *winner, const gt_db_timing *timings,
                            int ntimings, gt_db_winner *kept);

/* A tuning claim on key (one process tunes a key at a time, cache/db.c's "Tuning
 * claims"): in one transaction, *state is GT_DB_CLAIM_STORED (with *stored) when the file
 * holds a winner; GT_DB_CLAIM_HELD when another owner's claim has not expired; else
 * GT_DB_CLAIM_TAKEN, the claim now owner's until ttl_s seconds from now. Writable files
 * only. */
typedef enum {
    GT_DB_CLAIM_TAKEN = 0,
    GT_DB_CLAIM_HELD = 1,
    GT_DB_CLAIM_STORED = 2,
} gt_db_claim_state;
gt_status gt_db_claim(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                      const char *owner, double ttl_s, gt_db_claim_state *state,
                      gt_db_winner *stored);
/* Drops owner's claim on key, if it holds one. */
gt_status gt_db_unclaim(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                        const char *owner);

/* Calls fn for every winner in the file (ordered by device, dtype, m, n, k, ops);
 * fn returns nonzero to stop. */
typedef int (*gt_db_winner_fn)(const gt_key *key, const char *src_hash, int lib_major,
                               const gt_db_winner *winner, void *user);
gt_status gt_db_list(gt_db *db, gt_db_winner_fn fn, void *user);

/* Calls fn for every candidate row of key, fastest first, failed ones last. */
typedef int (*gt_db_timing_fn)(const gt_db_timing *timing, void *user);
gt_status gt_db_timings(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                        gt_db_timing_fn fn, void *user);

/* Calls fn for every candidate row of every tuned shape whose device, dtype, align,
 * src_hash and lib_major equal key's and whose op pair is key's (any_ops 0) or any
 * (any_ops 1), whatever its m, n, k and beta0; shape is the row's full key. One query
 * for what gt_db_neighbors and a gt_db_timings per neighbour read, in no promised order
 * (the same file gives the same order; callers that need one sort). fn returns nonzero
 * to stop; same locking rule as gt_db_list. */
typedef int (*gt_db_class_timing_fn)(const gt_key *shape, const gt_db_timing *timing, void *user);
gt_status gt_db_class_timings(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                              int any_ops, gt_db_class_timing_fn fn, void *user);

/* ===== keep-the-faster merge, pruning, neighbours (issue 3) ===== */

/* In one IMMEDIATE transaction: stores winner and its timings for key unless the file
 * already holds a winner of the same key (same src_hash and lib_major) whose time_us is
 * lower or equal (ties keep what is there, so merging files in a fixed order is
 * deterministic). When it stores, the key's old timings are replaced by these.
 * *stored (may be NULL) is 1 when the entry was written, 0 when the file kept its own.
 * The winner's provenance (host, tuned_at, libver, nvrtc, driver) is stored as given.
 * winner must be non-NULL and its time_us a number (NaN cannot be compared):
 * GT_INVALID_VALUE otherwise. A stored winner without a time (NULL in the file) loses
 * to any. Refused on a read-only handle (GT_CACHE_ERROR). */
gt_status gt_db_merge(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                      const gt_db_winner *winner, const gt_db_timing *timings, int ntimings,
                      int *stored);

/* Deletes, in one transaction, the winners and timings whose src_hash differs from
 * src_hash or whose lib_major differs from lib_major, and the cubins whose src_hash
 * differs, or whose nvrtc differs (when nvrtc != NULL), or whose driver differs (when
 * driver != NULL). Counts of deleted winners and cubins go to *winners and *cubins
 * (either may be NULL; both 0 on failure). src_hash non-NULL and non-empty
 * (GT_INVALID_VALUE). Refused on a read-only handle (GT_CACHE_ERROR). */
gt_status gt_db_prune(gt_db *db, const char *src_hash, int lib_major, const char *nvrtc,
                      const char *driver, int64_t *winners, int64_t *cubins);

/* Calls fn for every winner under src_hash and lib_major whose device (name, cc, SM
 * count), dtype, opa, opb and align equal key's, whatever its m, n, k and beta0: the
 * candidates of "nearest tuned shape". Rows come ordered by m, n, k, beta0, so every
 * process sees them in the same order. fn returns nonzero to stop; same locking rule
 * as gt_db_list. */
gt_status gt_db_neighbors(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                          gt_db_winner_fn fn, void *user);

/* ===== binary cache: compiled cubins (local, writable caches only) ===== */

/* What a cubin was compiled from and for. All strings non-NULL and non-empty, arch > 0
 * (GT_INVALID_VALUE otherwise). */
typedef struct gt_db_bin_key {
    const char *src_hash;  /* kernel source hash */
    const char *program;   /* the problem and configuration it was compiled for, as text
                              (tuner/kern.c: "f32|NT|4096x4096x4096|a16|b0|f0_128x64x8_w64x32_t8x4_s2_v4_k1_r1") */
    int arch;              /* the sm_XX it was compiled for, e.g. 90 */
    const char *nvrtc;     /* NVRTC version that compiled it */
    const char *driver;    /* driver version it was stored under */
} gt_db_bin_key;

/* The cubin of bk: *image (malloc'd, caller frees) and *size, *found = 1; or *found = 0.
 * A read-only handle (a shipped file) never yields a cubin: *found = 0, GT_SUCCESS,
 * whatever the file holds. A damaged row (its stored size differs from its image, or
 * the image is not a blob) also reads as *found = 0: it must never reach the driver;
 * the next gt_db_cubin_put of bk replaces it. */
gt_status gt_db_cubin_get(gt_db *db, const gt_db_bin_key *bk, void **image, size_t *size,
                          int *found);

/* Inserts or replaces the cubin of bk in one short transaction (stored_at = now).
 * image non-NULL and size > 0 (GT_INVALID_VALUE otherwise). Refused on a read-only
 * handle (GT_CACHE_ERROR). */
gt_status gt_db_cubin_put(gt_db *db, const gt_db_bin_key *bk, const void *image, size_t size);

/* Calls fn(program, user) for every cubin of bk's source hash, arch, NVRTC and driver
 * whose program text starts with bk->program, in text order, until fn returns nonzero.
 * A read-only handle lists none. */
typedef int (*gt_db_program_fn)(const char *program, void *user);
gt_status gt_db_cubin_programs(gt_db *db, const gt_db_bin_key *bk, gt_db_program_fn fn,
                               void *user);

/* Number of cubins the file holds (for tests and `gemmtune info`), read-only handles
 * included; -1 on error. */
int64_t gt_db_cubin_count(gt_db *db);

/* The text that names an entry (key, src_hash, lib_major: the columns a lookup
 * matches): gt_key_format's text, '|', src_hash, '|', lib_major. Two entries have the
 * same text exactly when a lookup of one finds the other. */
void gt_db_entry_name(const gt_key *key, const char *src_hash, int lib_major, char *buf,
                      size_t size);

/* Generation and kept states (the file's meta table; no schema version goes with them).
 * gt_db_generation: gen[0], how many transactions have changed winners or timings in
 * the file (stores, merges that wrote, prunes), 0 for a file that never counted; gen[1]
 * and gen[2], the highest rowid of winners and of timings (0 when empty), which a writer
 * that does not count (an older library) moves too. Two reads with the same three see the
 * same winners and timings. gt_db_state_put keeps size bytes under
 * name (at most 300 characters), replacing what was there, in a transaction of its own
 * that does not count as a change; refused on a read-only handle. gt_db_state_get gives
 * a malloc'd copy in *data (the caller frees it) with *found = 1, or *found = 0. What a
 * state holds, and whether it still holds, is the caller's to say. */
gt_status gt_db_generation(gt_db *db, long long gen[3]);
gt_status gt_db_state_put(gt_db *db, const char *name, const void *data, size_t size);
gt_status gt_db_state_get(gt_db *db, const char *name, void **data, size_t *size, int *found);

/* The schema version stored in the file. */
int gt_db_file_schema_version(gt_db *db);

/* Default writable location: $GEMMTUNE_CACHE, else $XDG_CACHE_HOME/gemmtune/cache.db,
 * else $HOME/.cache/gemmtune/cache.db. Returns GT_CACHE_ERROR when none can be formed. */
gt_status gt_db_default_path(char *buf, size_t size);

#endif
