/*
 * db.h: the SQLite cache of tuned kernels (DESIGN.md, "Cache").
 *
 * One file per location. It owns the schema and its migrations, opening (WAL, busy
 * timeout), lookup and insertion of winners and of every candidate's timing.
 * It knows nothing about CUDA: keys are plain data (src/key.h), configurations are
 * their canonical text. Errors come back as gt_status with a message retrievable by
 * gt_db_errmsg(); no SQLite code crosses this interface.
 *
 * A gt_db handle may be used by several threads at once (it serializes itself);
 * several processes may write one file at once (short IMMEDIATE transactions and a busy
 * timeout, so that "database is locked" never reaches a caller within the timeout).
 */
#ifndef GT_DB_H
#define GT_DB_H

#include <stddef.h>
#include <stdint.h>

#include "gemmtune.h"
#include "key.h"

#define GT_DB_SCHEMA_VERSION 1
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

/* Opens (and, when writable, creates, with its parent directory) the cache at path.
 * readonly != 0 opens with SQLITE_OPEN_READONLY and never writes.
 * Applies WAL and the busy timeout, creates or migrates the schema, and checks that
 * the file is a usable cache now, so that a corrupt file, a file of another program or
 * a newer schema version fails here (GT_CACHE_ERROR, *out = NULL, message in msg).
 * busy_timeout_ms <= 0 means the default, 5000. */
gt_status gt_db_open(const char *path, int readonly, int busy_timeout_ms, gt_db **out,
                     char *msg, size_t msgsize);
void gt_db_close(gt_db *db);

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

/* Calls fn for every winner in the file (ordered by device, dtype, m, n, k, ops);
 * fn returns nonzero to stop. */
typedef int (*gt_db_winner_fn)(const gt_key *key, const char *src_hash, int lib_major,
                               const gt_db_winner *winner, void *user);
gt_status gt_db_list(gt_db *db, gt_db_winner_fn fn, void *user);

/* Calls fn for every candidate row of key, fastest first, failed ones last. */
typedef int (*gt_db_timing_fn)(const gt_db_timing *timing, void *user);
gt_status gt_db_timings(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                        gt_db_timing_fn fn, void *user);

/* The schema version stored in the file. */
int gt_db_file_schema_version(gt_db *db);

/* Default writable location: $GEMMTUNE_CACHE, else $XDG_CACHE_HOME/gemmtune/cache.db,
 * else $HOME/.cache/gemmtune/cache.db. Returns GT_CACHE_ERROR when none can be formed. */
gt_status gt_db_default_path(char *buf, size_t size);

#endif
