/*
 * db.c: the SQLite cache of tuned kernels (contract in db.h, design in docs/DESIGN.md,
 * "Cache").
 *
 * Does: opens one cache file (creating it and its parent directory when writable),
 * checks that it is a gemmtune cache of a schema version this library understands,
 * creates or migrates the schema, and reads and writes winners and candidate timings
 * (plain, or keep-the-faster merge), prunes stale rows, and keeps compiled cubins.
 *
 * Owns: the gt_db handle (SQLite connection, prepared statements, a mutex, the last
 * error message) and, in the file, the tables `meta`, `winners`, `timings` and
 * `cubins`.
 *
 * Must not touch: CUDA (keys and configurations are plain data), the process (no
 * printing, no exit), and any file that is not ours: a corrupt file, another program's
 * SQLite file or a file of a newer schema is refused at open without being written.
 *
 * Invariants:
 *   1. Every public function returns a gt_status; SQLite result codes and SQLite's own
 *      wording ("database is locked") never cross the interface: each failure leaves a
 *      message of our own that names the file.
 *   2. All use of the connection happens under db->lock, so one handle serves many
 *      threads. The connection is opened with SQLITE_OPEN_NOMUTEX for that reason.
 *   3. Every write is one short BEGIN IMMEDIATE transaction: a writer takes the write lock
 *      before reading, so two processes never deadlock on a read-to-write upgrade, and
 *      the busy timeout covers the whole wait.
 *   4. Every prepared statement is reset before the lock is released, so no read
 *      transaction outlives a call (it would pin the WAL and hide other writers' rows).
 *   5. A read-only handle never writes. On a WAL file in a directory it cannot write
 *      (a shipped cache) it falls back to SQLite's immutable mode: see
 *      immutable_fallback_applies().
 *   6. A read-only handle never yields a cubin: a shipped file carries configurations,
 *      never binaries (docs/DESIGN.md, "Rules each part keeps"), so gt_db_cubin_get does not even read the
 *      table there.
 *   7. A host handle (gt_db_open_host: a file on a network or parallel filesystem that
 *      only this host writes) never uses WAL or the filesystem's locks: SQLite's
 *      "unix-none" file layer, a rollback journal, and every use of the connection, from
 *      open to the last statement, inside the host-wide lock of nodelock.h. Its writes
 *      keep meta 'winners_digest' (see "Winners digest") in the transaction that
 *      changes the winners.
 *   8. A snapshot handle (gt_db_open_snapshot) is an in-memory copy, read-only to its
 *      callers. The file it copies is opened immutable (no lock, no journal, never
 *      written) and the copy is kept only when it is one committed state of the file.
 *
 * Callbacks of gt_db_list, gt_db_neighbors and gt_db_timings run with the handle
 * locked: they may use any other handle, but a call on their own handle returns
 * GT_INVALID_VALUE.
 *
 * Environment, read once at open: GEMMTUNE_CACHE_TIMEOUT_MS (the busy timeout when the
 * caller gives none) and GEMMTUNE_CACHE_MAX_MB (a size cap on writable handles, through
 * SQLite's per-connection max_page_count). Values that are not positive integers are
 * ignored, as if unset.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "db.h"
#include "env.h"
#include "nodelock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ===================================================================================
 * Types
 * =================================================================================== */

#define DEFAULT_BUSY_TIMEOUT_MS 5000
#define GENERATION_KEY "generation" /* meta: gt_db_generation's count */
#define STATE_PREFIX "state:"       /* meta: gt_db_state_put's entries */
#define ERRMSG_MAX 1024

/* The handle's statements (stmt_sql). */
enum { ST_LOOKUP, ST_PUT_WINNER, ST_PUT_TIMING, ST_LIST, ST_TIMINGS, ST_DEL_TIMINGS,
       ST_NEIGHBORS, ST_CLASS_TIMINGS, ST_CUBIN_GET, ST_CUBIN_PUT, ST_GENERATION,
       ST_STATE_GET, ST_STATE_PUT, ST_COUNT };

struct gt_db {
    sqlite3 *conn;
    pthread_mutex_t lock;   /* error-checking: a callback that re-enters is refused,
                               not deadlocked */
    int readonly;
    int host;               /* a host handle (invariant 7) */
    int winners_dirty;      /* host handle: this transaction changed the winners */
    int rows_changed;       /* this transaction changes winners or timings: counted */
    int keep_wal;           /* this transaction leaves the WAL as it is (empty_wal) */
    int wal_pages;          /* pages in the WAL after the last commit (wal_count) */
    int lockfd;             /* host handle: the held host-wide lock, -1 when not held */
    char lockname[64];      /* host handle: the host-wide lock's name */
    int busy_timeout_ms;
    int64_t max_mb;         /* GEMMTUNE_CACHE_MAX_MB applied at open; 0 when none */
    int last_rc;            /* SQLite code of the last failure, for open's fallbacks */
    char *path;
    sqlite3_stmt *st[ST_COUNT]; /* prepared at their first use (use()) */
    char errmsg[ERRMSG_MAX];
};

/* ===================================================================================
 * Schema and migrations
 *
 * migrations[v] moves a file from schema version v to v + 1. The driver (migrate())
 * runs them in one IMMEDIATE transaction and writes the new version into `meta`, so a
 * later schema change is one added function and one bump of GT_DB_SCHEMA_VERSION.
 * =================================================================================== */

/* The key columns, in bind order ?1..?13 (bind_key() follows this order). */
#define KEY_COLS "device, cc, sms, dtype, opa, opb, m, n, k, align, beta0, src_hash, lib_major"
#define KEY_COLS_DECL                                                                      \
    "device TEXT NOT NULL, cc INTEGER NOT NULL, sms INTEGER NOT NULL, "                   \
    "dtype TEXT NOT NULL, opa TEXT NOT NULL, opb TEXT NOT NULL, "                          \
    "m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL, "                         \
    "align INTEGER NOT NULL, beta0 INTEGER NOT NULL, "                                     \
    "src_hash TEXT NOT NULL, lib_major INTEGER NOT NULL"
#define KEY_WHERE                                                                          \
    "device = ?1 AND cc = ?2 AND sms = ?3 AND dtype = ?4 AND opa = ?5 AND opb = ?6 AND "   \
    "m = ?7 AND n = ?8 AND k = ?9 AND align = ?10 AND beta0 = ?11 AND src_hash = ?12 AND " \
    "lib_major = ?13"
#define KEY_PARAMS "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13"

typedef int (*migration_fn)(sqlite3 *conn);

/* v0 -> v1: the empty file becomes a cache. */
static int migrate_v0_v1(sqlite3 *conn) {
    static const char sql[] =
        "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
        "CREATE TABLE winners(" KEY_COLS_DECL ", "
        "config TEXT NOT NULL, time_us REAL, tflops REAL, tuned_at INTEGER, "
        "nvrtc TEXT, driver TEXT, host TEXT, libver TEXT, "
        "PRIMARY KEY(" KEY_COLS "));"
        "CREATE TABLE timings(" KEY_COLS_DECL ", "
        "config TEXT NOT NULL, status TEXT NOT NULL, time_us REAL, tflops REAL, "
        "message TEXT, "
        "PRIMARY KEY(" KEY_COLS ", config));";
    return sqlite3_exec(conn, sql, NULL, NULL, NULL);
}

/* v1 -> v2: the binary cache. The key is everything the image depends on, so a new
 * NVRTC or driver never loads an old image; `size` is stored beside the blob so that a
 * damaged row can be told from a good one before it is handed to the driver. */
static int migrate_v1_v2(sqlite3 *conn) {
    static const char sql[] =
        "CREATE TABLE cubins(src_hash TEXT NOT NULL, program TEXT NOT NULL, "
        "arch INTEGER NOT NULL, nvrtc TEXT NOT NULL, driver TEXT NOT NULL, "
        "image BLOB NOT NULL, size INTEGER NOT NULL, stored_at INTEGER, "
        "PRIMARY KEY(src_hash, program, arch, nvrtc, driver));";
    return sqlite3_exec(conn, sql, NULL, NULL, NULL);
}

static const migration_fn migrations[] = {migrate_v0_v1, migrate_v1_v2};

_Static_assert(sizeof migrations / sizeof migrations[0] == GT_DB_SCHEMA_VERSION,
               "one migration per schema version");

/* ===================================================================================
 * Helpers
 * =================================================================================== */

/* Bounded copy that always terminates dst; NULL src copies "". */
static void copy_text(char *dst, size_t size, const char *src) {
    if (size == 0) return;
    size_t n = src ? strnlen(src, size - 1) : 0;
    if (n) memcpy(dst, src, n);
    dst[n] = 0;
}

static void copy_column(char *dst, size_t size, sqlite3_stmt *st, int col) {
    copy_text(dst, size, (const char *)sqlite3_column_text(st, col));
}

static void set_error(gt_db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(gt_db *db, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(db->errmsg, sizeof db->errmsg, fmt, ap);
    va_end(ap);
}

/* Our own words for an SQLite result code: callers see what happened to their file,
 * not SQLite's vocabulary. */
static const char *rc_phrase(int rc) {
    if (rc == SQLITE_READONLY_DIRECTORY)
        return "its directory is not writable, and a WAL file needs its -shm file created there";
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "the file stayed locked by another connection beyond the busy timeout";
    case SQLITE_NOTADB: return "the file is not an SQLite database";
    case SQLITE_CORRUPT: return "the file is corrupt";
    case SQLITE_CANTOPEN: return "the file cannot be opened";
    case SQLITE_READONLY: return "the file is read-only";
    case SQLITE_PERM:
    case SQLITE_AUTH: return "permission denied";
    case SQLITE_FULL: return "the disk is full";
    case SQLITE_IOERR: return "I/O error";
    case SQLITE_NOMEM: return "out of memory";
    case SQLITE_PROTOCOL: return "file locking failed";
    case SQLITE_NOLFS: return "the file is too large for this system";
    case SQLITE_CONSTRAINT: return "a row broke a table constraint";
    case SQLITE_TOOBIG: return "a value is too large";
    default: return "SQLite reported an error";
    }
}

/* Records a failure of an SQLite call (rc) while doing `what`, and returns the status
 * for it. Must run before anything else touches the connection (ROLLBACK would reset
 * sqlite3_errmsg, whose detail is kept for schema errors). */
static gt_status fail_rc(gt_db *db, int rc, const char *what) {
    int prim = rc & 0xff;
    db->last_rc = rc;
    char detail[300] = "";
    if (prim == SQLITE_ERROR || prim == SQLITE_CONSTRAINT || prim == SQLITE_MISMATCH ||
        prim == SQLITE_RANGE || prim == SQLITE_SCHEMA) {
        /* A statement error: SQLite's text ("no such table: winners") is the useful part. */
        snprintf(detail, sizeof detail, " (%s)", db->conn ? sqlite3_errmsg(db->conn) : "");
    } else if (prim == SQLITE_FULL && db->max_mb > 0) {
        /* Under a cap the likelier cause is the cap, and SQLite's errno would be stale
         * (it is only set by I/O failures). */
        snprintf(detail, sizeof detail, " (or the file reached its limit of %lld MiB, "
                 "GEMMTUNE_CACHE_MAX_MB)", (long long)db->max_mb);
    } else if ((prim == SQLITE_IOERR || prim == SQLITE_CANTOPEN || prim == SQLITE_FULL) &&
               db->conn && sqlite3_system_errno(db->conn) != 0) {
        snprintf(detail, sizeof detail, " (%s)", strerror(sqlite3_system_errno(db->conn)));
    }
    if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED)
        set_error(db,
                  "cache file '%s': %s: the file stayed locked by another writer for "
                  "longer than the busy timeout (%d ms)",
                  db->path, what, db->busy_timeout_ms);
    else
        set_error(db, "cache file '%s': %s: %s%s", db->path, what, rc_phrase(rc), detail);
    return prim == SQLITE_NOMEM ? GT_OUT_OF_MEMORY : GT_CACHE_ERROR;
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* 1 (after a short sleep) when rc says "busy" and the busy timeout, counted from start,
 * has not passed yet. The busy handler normally does the waiting; this covers the cases
 * where SQLite returns SQLITE_BUSY without calling it: while another process switches
 * the file to WAL or recovers the WAL, or on a read-to-write upgrade. */
static int busy_retry(gt_db *db, int64_t start, int rc) {
    int prim = rc & 0xff;
    if (prim != SQLITE_BUSY && prim != SQLITE_LOCKED) return 0;
    if (now_ms() - start >= db->busy_timeout_ms) return 0;
    sleep_ms(10);
    return 1;
}

/* sqlite3_exec of statements that hold no state between tries, retried while busy. */
static int exec_retry(gt_db *db, const char *sql) {
    int64_t start = now_ms();
    int rc;
    do rc = sqlite3_exec(db->conn, sql, NULL, NULL, NULL);
    while (busy_retry(db, start, rc));
    return rc;
}

static int begin_immediate(gt_db *db) { return exec_retry(db, "BEGIN IMMEDIATE"); }

/* The first step of a read, retried while busy (nothing has been returned yet, so a
 * reset and a new try are invisible to the caller). Bindings survive the reset. */
static int step_first(gt_db *db, sqlite3_stmt *st) {
    int64_t start = now_ms();
    int rc;
    for (;;) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW || rc == SQLITE_DONE || !busy_retry(db, start, rc)) return rc;
        sqlite3_reset(st);
    }
}

static void rollback(gt_db *db) {
    if (!sqlite3_get_autocommit(db->conn))
        sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL);
}

/* mkdir -p of the directory part of path; new directories get mode 0700 because a
 * cache names the user's GPUs and hosts. Returns 0, or an errno value. */
static int make_parent_dirs(const char *path, char *failed, size_t failed_size) {
    size_t len = strlen(path);
    char *dir = malloc(len + 1);
    if (!dir) return ENOMEM;
    memcpy(dir, path, len + 1);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) {  /* "cache.db" or "/cache.db": nothing to create */
        free(dir);
        return 0;
    }
    *slash = 0;
    int err = 0;
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != 0) continue;
        char saved = *p;
        *p = 0;
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) err = errno;
        if (!err) {
            /* EEXIST may be a file in the way, or a directory another process just
             * made: only the first is an error. */
            struct stat st;
            if (stat(dir, &st) != 0) err = errno;
            else if (!S_ISDIR(st.st_mode)) err = ENOTDIR;
        }
        if (err) {
            copy_text(failed, failed_size, dir);
            break;
        }
        *p = saved;
        if (saved == 0) break;
    }
    free(dir);
    return err;
}

/* 1 when the directory holding path may be written by this process. */
static int dir_writable(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return access(".", W_OK) == 0;
    if (slash == path) return access("/", W_OK) == 0;
    char *dir = strndup(path, (size_t)(slash - path));
    int ok = dir && access(dir, W_OK) == 0;
    free(dir);
    return ok;
}

/* Parses a non-negative decimal schema version; -1 when the text is anything else. */
static int parse_version(const unsigned char *text) {
    if (!text || !*text) return -1;
    long v = 0;
    for (const unsigned char *p = text; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
        if (v > INT_MAX) return -1;
    }
    return (int)v;
}

/* The value of environment variable name when it is a positive decimal integer no
 * larger than max, else 0 (unset, empty, zero, negative, trailing junk, overflow):
 * a mistyped setting falls back to the default instead of failing every open. */
static int64_t env_positive(gt_env_id id, int64_t max) {
    const char *v = gt_env(id);
    if (!v) return 0;
    int64_t n = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9') return 0;
        n = n * 10 + (*p - '0');
        if (n > max) return 0;
    }
    return n;
}

/* Prepares sql and steps to its first row, retrying while the file is busy (within the
 * busy timeout). Returns SQLITE_ROW with *st positioned on the row, else the code; the
 * caller finalizes *st either way. */
static int first_row(gt_db *db, const char *sql, sqlite3_stmt **st) {
    int64_t start = now_ms();
    int rc;
    *st = NULL;
    do {
        sqlite3_finalize(*st);
        *st = NULL;
        rc = sqlite3_prepare_v2(db->conn, sql, -1, st, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_step(*st);
    } while (rc != SQLITE_ROW && busy_retry(db, start, rc));
    return rc;
}

/* Reads the schema version of the open file into *version: 0 for an empty file.
 * A non-empty file without our `meta` table, or with a meta table that has no usable
 * schema_version, belongs to another program: refused so that we never write into it.
 * Reading sqlite_master is also the first read of the file, so a file that is not an
 * SQLite database or whose first page is damaged fails here. */
static gt_status read_version_in(gt_db *db, const char *schema, int *version) {
    sqlite3_stmt *st = NULL;
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT count(*), coalesce(sum(type = 'table' AND name = 'meta'), 0) "
             "FROM %s.sqlite_master", schema);
    int rc = first_row(db, sql, &st);
    if (rc != SQLITE_ROW) {
        gt_status s = fail_rc(db, rc, "cannot read the schema");
        sqlite3_finalize(st);
        return s;
    }
    int64_t nobjects = sqlite3_column_int64(st, 0);
    int64_t has_meta = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    if (!has_meta) {
        if (nobjects == 0) {
            *version = 0;
            return GT_SUCCESS;
        }
        set_error(db,
                  "cache file '%s': the file is an SQLite database of another program "
                  "(it has tables but no gemmtune schema version); refusing to use it",
                  db->path);
        return GT_CACHE_ERROR;
    }
    snprintf(sql, sizeof sql, "SELECT value FROM %s.meta WHERE key = 'schema_version'", schema);
    rc = first_row(db, sql, &st);
    if (rc != SQLITE_ROW) {
        gt_status s = rc == SQLITE_DONE ? GT_CACHE_ERROR
                                        : fail_rc(db, rc, "cannot read the schema version");
        if (rc == SQLITE_DONE)
            set_error(db,
                      "cache file '%s': the file has a meta table but no schema_version: "
                      "not a gemmtune cache; refusing to use it",
                      db->path);
        sqlite3_finalize(st);
        return s;
    }
    int v = parse_version(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (v < 0) {
        set_error(db, "cache file '%s': the schema_version in its meta table is not a number",
                  db->path);
        return GT_CACHE_ERROR;
    }
    *version = v;
    return GT_SUCCESS;
}

static gt_status read_version(gt_db *db, int *version) {
    return read_version_in(db, "main", version);
}

static gt_status check_newer(gt_db *db, int version) {
    if (version <= GT_DB_SCHEMA_VERSION) return GT_SUCCESS;
    set_error(db,
              "cache file '%s': schema version %d is newer than this library's %d; "
              "left untouched (use a newer gemmtune or another cache file)",
              db->path, version, GT_DB_SCHEMA_VERSION);
    return GT_CACHE_ERROR;
}

/* Brings the file up to GT_DB_SCHEMA_VERSION. The version is read again inside the
 * IMMEDIATE transaction because another process may have created or migrated the
 * schema between our first look and our taking the write lock. */
static gt_status migrate(gt_db *db) {
    int rc = begin_immediate(db);
    if (rc != SQLITE_OK) return fail_rc(db, rc, "cannot start the schema update");
    int version = 0;
    gt_status s = read_version(db, &version);
    if (s == GT_SUCCESS) s = check_newer(db, version);
    for (int v = version; s == GT_SUCCESS && v < GT_DB_SCHEMA_VERSION; v++) {
        char what[96];
        snprintf(what, sizeof what, "cannot update the schema from version %d to %d", v,
                 v + 1);
        rc = migrations[v](db->conn);
        if (rc == SQLITE_OK) {
            char sql[128];
            snprintf(sql, sizeof sql,
                     "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', '%d')",
                     v + 1);
            rc = sqlite3_exec(db->conn, sql, NULL, NULL, NULL);
        }
        if (rc != SQLITE_OK) s = fail_rc(db, rc, what);
    }
    if (s == GT_SUCCESS) {
        rc = sqlite3_exec(db->conn, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK) s = fail_rc(db, rc, "cannot commit the schema update");
    }
    if (s != GT_SUCCESS) rollback(db);
    return s;
}

/* Caps the file at $GEMMTUNE_CACHE_MAX_MB through max_page_count, which SQLite keeps per
 * connection, so it is set on every open. Runs after migrate(): a capped file still
 * gets its schema. A file already above the cap stays readable; SQLite then pins the
 * count at the current size and only growth fails (SQLITE_FULL, "the disk is full"),
 * rolling back the transaction that tried. */
static gt_status apply_max_size(gt_db *db) {
    /* 2^31 MiB covers any file SQLite can address at any page size. */
    int64_t mb = env_positive(GT_ENV_CACHE_MAX_MB, (int64_t)1 << 31);
    if (mb <= 0) return GT_SUCCESS;
    sqlite3_stmt *st = NULL;
    int rc = first_row(db, "PRAGMA page_size", &st);
    int64_t page = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return fail_rc(db, rc, "cannot read the page size");
    if (page <= 0) page = 4096; /* defensive: SQLite always reports 512..65536 */
    int64_t pages = mb * 1048576 / page;
    if (pages > 4294967294LL) pages = 4294967294LL; /* SQLite's largest page number */
    if (pages < 1) pages = 1;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld", (long long)pages);
    rc = exec_retry(db, sql);
    if (rc != SQLITE_OK) return fail_rc(db, rc, "cannot apply GEMMTUNE_CACHE_MAX_MB");
    db->max_mb = mb;
    return GT_SUCCESS;
}

/* Opens the connection (name is a path, or a URI when flags has SQLITE_OPEN_URI) through
 * SQLite's file layer vfs (NULL: the default). */
static gt_status connect(gt_db *db, const char *name, int flags, const char *vfs) {
    int rc = sqlite3_open_v2(name, &db->conn, flags | SQLITE_OPEN_NOMUTEX, vfs);
    if (rc == SQLITE_OK) {
        sqlite3_extended_result_codes(db->conn, 1);
        rc = sqlite3_busy_timeout(db->conn, db->busy_timeout_ms);
    }
    if (rc != SQLITE_OK)
        return fail_rc(db, rc, db->readonly ? "cannot open for reading" : "cannot open");
    return GT_SUCCESS;
}

/* A read-only handle on a WAL file whose directory we cannot write (a cache shipped
 * on a shared, read-only path) fails its first read: SQLite must create the -shm file
 * beside it. When there is no -wal file either, every committed row is in the main
 * file, so it is opened again as immutable, which needs neither -shm nor locks.
 * The cost, accepted for shipped caches that are never written in place: a writer that
 * appears later is not seen, and if it checkpoints under us our reads may fail as
 * corrupt (reported, never a crash). Returns 0 when the fallback does not apply. */
static int immutable_fallback_applies(gt_db *db) {
    if (!db->readonly || db->last_rc != SQLITE_READONLY_DIRECTORY) return 0;
    size_t len = strlen(db->path);
    char *wal = malloc(len + 5);
    if (!wal) return 0;
    memcpy(wal, db->path, len);
    memcpy(wal + len, "-wal", 5);
    struct stat st;
    int has_wal = stat(wal, &st) == 0 && st.st_size > 0;
    free(wal);
    return !has_wal;
}

/* The file: URI of db->path made absolute, opened immutable ("?immutable=1"), malloc'd;
 * NULL after a message. Every byte outside a safe set is %-escaped, so that '?', '#' or
 * '%' in a directory name cannot be read as URI syntax. */
static char *immutable_uri(gt_db *db, gt_status *s) {
    char *abs = realpath(db->path, NULL);
    if (!abs) {
        set_error(db, "cache file '%s': cannot resolve the path: %s", db->path, strerror(errno));
        *s = GT_CACHE_ERROR;
        return NULL;
    }
    size_t len = strlen(abs);
    char *uri = malloc(len * 3 + 32);
    if (!uri) {
        free(abs);
        set_error(db, "cache file '%s': out of memory", db->path);
        *s = GT_OUT_OF_MEMORY;
        return NULL;
    }
    char *o = uri + sprintf(uri, "file:");
    for (const unsigned char *p = (const unsigned char *)abs; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/._-~", *p))
            *o++ = (char)*p;
        else
            o += sprintf(o, "%%%02X", *p);
    }
    strcpy(o, "?immutable=1");
    free(abs);
    return uri;
}

static gt_status connect_immutable(gt_db *db) {
    gt_status s = GT_SUCCESS;
    char *uri = immutable_uri(db, &s);
    if (!uri) return s;
    sqlite3_close_v2(db->conn);
    db->conn = NULL;
    s = connect(db, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    return s;
}

static gt_status prepare(gt_db *db, const char *sql, sqlite3_stmt **st) {
    int rc = sqlite3_prepare_v3(db->conn, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
    if (rc != SQLITE_OK) return fail_rc(db, rc, "the tables do not match this library's schema");
    return GT_SUCCESS;
}

/* The statements' texts. ST_NEIGHBORS is the key minus m, n, k and beta0: those
 * parameters (?7..?9, ?11) are left out of the text, so bind_key() still fills the rest by
 * number; same columns as ST_LIST, for decode_winner(). ST_TIMINGS: fastest successful
 * candidate first, failed ones after, in a stable order. ST_CLASS_TIMINGS: every
 * candidate row of the key's device, dtype and alignment class, the key's op pair or any
 * with ?14 = 1; neither ordered nor joined to the winners (sorting doubles the read's
 * time, and timings are written and pruned only with their winner). */
static const char *const stmt_sql[ST_COUNT] = {
    [ST_LOOKUP] = "SELECT config, time_us, tflops, tuned_at, nvrtc, driver, host, "
                          "libver FROM winners WHERE " KEY_WHERE,
    [ST_PUT_WINNER] = "INSERT OR REPLACE INTO winners(" KEY_COLS ", config, time_us, tflops, "
                    "tuned_at, nvrtc, driver, host, libver) VALUES(" KEY_PARAMS ", ?14, ?15, "
                    "?16, ?17, ?18, ?19, ?20, ?21)",
    [ST_PUT_TIMING] = "INSERT OR REPLACE INTO timings(" KEY_COLS ", config, status, time_us, "
                    "tflops, message) VALUES(" KEY_PARAMS ", ?14, ?15, ?16, ?17, ?18)",
    [ST_LIST] = "SELECT " KEY_COLS ", config, time_us, tflops, tuned_at, nvrtc, driver, "
                    "host, libver FROM winners ORDER BY device, dtype, m, n, k, opa, opb, "
                    "cc, sms, align, beta0, src_hash, lib_major",
    [ST_TIMINGS] = "SELECT config, status, time_us, tflops, message FROM timings WHERE " KEY_WHERE
                    " ORDER BY status <> 'ok', CASE WHEN status = 'ok' THEN time_us END, "
                    "config",
    [ST_DEL_TIMINGS] = "DELETE FROM timings WHERE " KEY_WHERE,
    [ST_NEIGHBORS] = "SELECT " KEY_COLS ", config, time_us, tflops, tuned_at, nvrtc, driver, "
                    "host, libver FROM winners WHERE device = ?1 AND cc = ?2 AND sms = ?3 AND "
                    "dtype = ?4 AND opa = ?5 AND opb = ?6 AND align = ?10 AND src_hash = ?12 "
                    "AND lib_major = ?13 ORDER BY m, n, k, beta0",
    [ST_CLASS_TIMINGS] = "SELECT opa, opb, m, n, k, beta0, config, status, time_us, tflops, message "
                    "FROM timings WHERE device = ?1 AND cc = ?2 AND sms = ?3 AND dtype = ?4 AND "
                    "(?14 = 1 OR (opa = ?5 AND opb = ?6)) AND align = ?10 AND src_hash = ?12 AND "
                    "lib_major = ?13",
    [ST_CUBIN_GET] = "SELECT image, size FROM cubins WHERE src_hash = ?1 AND program = ?2 AND "
                    "arch = ?3 AND nvrtc = ?4 AND driver = ?5",
    [ST_CUBIN_PUT] = "INSERT OR REPLACE INTO cubins(src_hash, program, arch, nvrtc, driver, "
                    "image, size, stored_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [ST_GENERATION] = "SELECT (SELECT CAST(value AS INTEGER) FROM meta WHERE key = '"
                      GENERATION_KEY "'), (SELECT max(rowid) FROM winners), "
                      "(SELECT max(rowid) FROM timings)",
    [ST_STATE_GET] = "SELECT value FROM meta WHERE key = ?1",
    [ST_STATE_PUT] = "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)",
};

/* Statement i of db, prepared at its first use: a process's first call uses a few of
 * them, and preparing all of them at open took a quarter of a millisecond of it.
 * NULL after a message where it cannot be prepared (SQLite's calls on a NULL statement
 * return SQLITE_MISUSE, which the caller reports). */
static sqlite3_stmt *use(gt_db *db, int i) {
    if (!db->st[i] && prepare(db, stmt_sql[i], &db->st[i]) != GT_SUCCESS) db->st[i] = NULL;
    return db->st[i];
}

/* What every statement reads and writes is there: one statement naming each column of
 * the three tables, prepared (not run) at open, so that a file whose tables do not match
 * this library's schema is refused there, as before the statements were prepared
 * lazily. */
static gt_status check_schema(gt_db *db) {
    sqlite3_stmt *st = NULL;
    gt_status s = prepare(db,
                          "SELECT w.device, w.cc, w.sms, w.dtype, w.opa, w.opb, w.m, w.n, w.k, "
                          "w.align, w.beta0, w.src_hash, w.lib_major, w.config, w.time_us, "
                          "w.tflops, w.tuned_at, w.nvrtc, w.driver, w.host, w.libver, "
                          "t.device, t.cc, t.sms, t.dtype, t.opa, t.opb, t.m, t.n, t.k, t.align, "
                          "t.beta0, t.src_hash, t.lib_major, t.config, t.status, t.time_us, "
                          "t.tflops, t.message, c.src_hash, c.program, c.arch, c.nvrtc, "
                          "c.driver, c.image, c.size, c.stored_at "
                          "FROM winners w, timings t, cubins c LIMIT 0",
                          &st);
    sqlite3_finalize(st);
    return s;
}

/* Reads every row of the entry tables once. Opening only touches the first page; this
 * walk makes a file whose later pages are damaged or missing fail at open, as db.h
 * promises, rather than at the first lookup. Those tables hold thousands of rows, so it
 * is cheap. Not the cubins: each row fills a page of its own (a node's prebuilt set is
 * thousands: 0.5 ms of a process's first call on this development machine for 5,000),
 * and a damaged binary, or a damaged page of their table, is found when read and
 * reported then (gt_db_cubin_get), as a damaged image always was. */
static gt_status check_tables(gt_db *db) {
    sqlite3_stmt *st = NULL;
    int rc = first_row(db,
                       "SELECT (SELECT count(*) FROM winners), (SELECT count(*) FROM timings), "
                       "(SELECT count(*) FROM meta)",
                       &st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return fail_rc(db, rc, "cannot read the tables");
    return GT_SUCCESS;
}

static void finalize_all(gt_db *db) {
    for (int i = 0; i < ST_COUNT; i++) {
        sqlite3_finalize(db->st[i]);
        db->st[i] = NULL;
    }
}

static void destroy(gt_db *db) {
    gt_nodelock_release(db->lockfd);
    finalize_all(db);
    /* close_v2: never leaves the connection half-open, whatever is still pending. */
    if (db->conn) sqlite3_close_v2(db->conn);
    pthread_mutex_destroy(&db->lock);
    free(db->path);
    free(db);
}

/* The host-wide lock of a host handle (invariant 7), waited for up to the busy timeout;
 * GT_SUCCESS at once for any other handle. */
static gt_status take_host_lock(gt_db *db) {
    if (!db->host || db->lockfd >= 0) return GT_SUCCESS;
    int err = gt_nodelock_acquire(db->lockname, db->busy_timeout_ms, &db->lockfd);
    if (err == 0) return GT_SUCCESS;
    if (err == ETIMEDOUT)
        set_error(db,
                  "cache file '%s': another process of this host held it for longer than the "
                  "busy timeout (%d ms)",
                  db->path, db->busy_timeout_ms);
    else
        set_error(db, "cache file '%s': cannot take this host's lock of the file: %s",
                  db->path, strerror(err));
    return GT_CACHE_ERROR;
}

static void drop_host_lock(gt_db *db) {
    gt_nodelock_release(db->lockfd);
    db->lockfd = -1;
}

/* Takes the handle lock, then, on a host handle, the host-wide lock. The mutex checks
 * errors, so a callback of gt_db_list or gt_db_timings that calls back into its own
 * handle gets GT_INVALID_VALUE instead of deadlocking. */
static gt_status lock_db(gt_db *db) {
    if (pthread_mutex_lock(&db->lock) != 0) {
        set_error(db,
                  "cache file '%s': handle used from inside its own list/timings callback",
                  db->path);
        return GT_INVALID_VALUE;
    }
    gt_status s = take_host_lock(db);
    if (s != GT_SUCCESS) pthread_mutex_unlock(&db->lock);
    return s;
}

static void unlock_db(gt_db *db) {
    drop_host_lock(db);
    pthread_mutex_unlock(&db->lock);
}

/* Preconditions of every keyed call. db->lock held. */
static gt_status check_key(gt_db *db, const gt_key *key, const char *src_hash) {
    if (!key || !src_hash) {
        set_error(db, "cache file '%s': %s is NULL", db->path, key ? "src_hash" : "key");
        return GT_INVALID_VALUE;
    }
    if (strnlen(key->device, sizeof key->device) == sizeof key->device) {
        set_error(db, "cache file '%s': key device name is not terminated", db->path);
        return GT_INVALID_VALUE;
    }
    if ((key->opa != 0 && key->opa != 1) || (key->opb != 0 && key->opb != 1)) {
        set_error(db, "cache file '%s': key operations must be 0 (N) or 1 (T), got %d, %d",
                  db->path, key->opa, key->opb);
        return GT_INVALID_VALUE;
    }
    if (gt_dtype_parse(gt_dtype_name(key->dtype)) != key->dtype) {
        set_error(db, "cache file '%s': key has unknown dtype %d", db->path, key->dtype);
        return GT_INVALID_VALUE;
    }
    return GT_SUCCESS;
}

/* The start of every keyed call: takes db->lock, then checks the key and, when `missing`
 * names a NULL pointer argument of `verb`, refuses it. On failure the lock is released
 * again and the message set; on success the caller holds the lock. */
static gt_status lock_keyed(gt_db *db, const gt_key *key, const char *src_hash, const char *verb,
                            const char *missing) {
    gt_status s = lock_db(db);
    if (s != GT_SUCCESS) return s;
    s = check_key(db, key, src_hash);
    if (s == GT_SUCCESS && missing) {
        set_error(db, "cache file '%s': %s: %s is NULL", db->path, verb, missing);
        s = GT_INVALID_VALUE;
    }
    if (s != GT_SUCCESS) unlock_db(db);
    return s;
}

/* Binds the 13 key columns as ?1..?13 (KEY_COLS order). */
static int bind_key(sqlite3_stmt *st, const gt_key *key, const char *src_hash, int lib_major) {
    int rc = sqlite3_bind_text(st, 1, key->device, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 2, key->cc_major * 10 + key->cc_minor);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 3, key->sm_count);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 4, gt_dtype_name(key->dtype), -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 5, key->opa ? "T" : "N", 1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 6, key->opb ? "T" : "N", 1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 7, key->m);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 8, key->n);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 9, key->k);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 10, key->align);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 11, key->beta0);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 12, src_hash, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 13, lib_major);
    return rc;
}

/* Binds a fixed-size char field without reading past its end, even when the caller
 * left it unterminated. */
static int bind_field(sqlite3_stmt *st, int i, const char *text, size_t size) {
    return sqlite3_bind_text(st, i, text, (int)strnlen(text, size), SQLITE_TRANSIENT);
}

static void done_stmt(sqlite3_stmt *st) {
    if (!st) return;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Decodes the current row of st_list or st_neighbors (KEY_COLS, then the winner's
 * fields) into key, src_hash (hash_size bytes), lib_major and w. Returns 0 for a row of
 * a data type this build does not know (written by a newer library of the same schema):
 * it cannot be expressed as a gt_key, so callers skip it and leave it in the file. */
static int decode_winner(sqlite3_stmt *st, gt_key *key, char *src_hash, size_t hash_size,
                         int *lib_major, gt_db_winner *w) {
    memset(key, 0, sizeof *key);
    const char *dt = (const char *)sqlite3_column_text(st, 3);
    key->dtype = dt ? gt_dtype_parse(dt) : -1;
    if (key->dtype < 0) return 0;
    copy_column(key->device, sizeof key->device, st, 0);
    int cc = sqlite3_column_int(st, 1);
    key->cc_major = cc / 10;
    key->cc_minor = cc % 10;
    key->sm_count = sqlite3_column_int(st, 2);
    const char *oa = (const char *)sqlite3_column_text(st, 4);
    const char *ob = (const char *)sqlite3_column_text(st, 5);
    key->opa = oa && oa[0] == 'T';
    key->opb = ob && ob[0] == 'T';
    key->m = sqlite3_column_int64(st, 6);
    key->n = sqlite3_column_int64(st, 7);
    key->k = sqlite3_column_int64(st, 8);
    key->align = sqlite3_column_int(st, 9);
    key->beta0 = sqlite3_column_int(st, 10);
    copy_column(src_hash, hash_size, st, 11);
    *lib_major = sqlite3_column_int(st, 12);
    memset(w, 0, sizeof *w);
    copy_column(w->config, sizeof w->config, st, 13);
    w->time_us = sqlite3_column_double(st, 14);
    w->tflops = sqlite3_column_double(st, 15);
    w->tuned_at = sqlite3_column_int64(st, 16);
    copy_column(w->nvrtc, sizeof w->nvrtc, st, 17);
    copy_column(w->driver, sizeof w->driver, st, 18);
    copy_column(w->host, sizeof w->host, st, 19);
    copy_column(w->libver, sizeof w->libver, st, 20);
    return 1;
}

/* Steps st (bound, not yet stepped) and calls fn for every decodable row until fn
 * returns nonzero. fn runs with the handle locked and the statement open: it must not
 * use this handle (lock_db refuses it) but may use any other. Returns SQLITE_DONE when
 * the walk ended normally or was stopped by fn, else the failing code. db->lock held;
 * the caller resets st. */
static int walk_winners(gt_db *db, sqlite3_stmt *st, gt_db_winner_fn fn, void *user) {
    int rc;
    for (rc = step_first(db, st); rc == SQLITE_ROW; rc = sqlite3_step(st)) {
        gt_key key;
        char src_hash[128];
        int lib_major;
        gt_db_winner w;
        if (!decode_winner(st, &key, src_hash, sizeof src_hash, &lib_major, &w)) continue;
        if (fn(&key, src_hash, lib_major, &w, user) != 0) return SQLITE_DONE;
    }
    return rc;
}

/* ===================================================================================
 * Winners digest (host files)
 *
 * Other hosts read a host file without any lock while its host may be writing it
 * (gt_db_open_snapshot), so they may read pages of two states. The writer keeps
 * meta 'winners_digest' = "<rows> <sum>", where sum adds up (mod 2^64) a hash of every
 * winner row, in the transaction that changes the rows; a reader recomputes it over the
 * rows it copied and keeps the copy only when they agree: then it holds the winners of
 * one committed state, whatever it read on the way.
 * =================================================================================== */

#define WINNER_COLS KEY_COLS ", config, time_us, tflops, tuned_at, nvrtc, driver, host, libver"
#define DIGEST_KEY "winners_digest"

static uint64_t fnv_bytes(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* splitmix64's finalizer: spreads a row's hash over all 64 bits before the sum. */
static uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* The digest of the winners of schema ("main", "src") into out. Each column is hashed
 * as its type, its length and its bytes (integers and reals as their 8 bytes), so that
 * two different rows never hash the same text. An SQLite code: SQLITE_OK, or the
 * failure. */
static int winners_digest(gt_db *db, const char *schema, char *out, size_t size) {
    char sql[400];
    snprintf(sql, sizeof sql, "SELECT " WINNER_COLS " FROM %s.winners", schema);
    sqlite3_stmt *st = NULL;
    uint64_t sum = 0;
    long long rows = 0;
    int rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint64_t h = 14695981039346656037ULL;
        for (int c = 0, ncol = sqlite3_column_count(st); c < ncol; c++) {
            unsigned char type = (unsigned char)sqlite3_column_type(st, c), num[8];
            const void *bytes = num;
            uint64_t n = 0;
            if (type == SQLITE_INTEGER) {
                sqlite3_int64 v = sqlite3_column_int64(st, c);
                memcpy(num, &v, 8), n = 8;
            } else if (type == SQLITE_FLOAT) {
                double v = sqlite3_column_double(st, c);
                memcpy(num, &v, 8), n = 8;
            } else if (type == SQLITE_TEXT) {
                bytes = sqlite3_column_text(st, c);
                n = (uint64_t)sqlite3_column_bytes(st, c);
            } else if (type == SQLITE_BLOB) {
                bytes = sqlite3_column_blob(st, c);
                n = (uint64_t)sqlite3_column_bytes(st, c);
            }
            h = fnv_bytes(h, &type, 1);
            h = fnv_bytes(h, &n, sizeof n);
            if (n) h = fnv_bytes(h, bytes, (size_t)n);
        }
        sum += mix64(h);
        rows++;
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return rc;
    snprintf(out, size, "%lld %016llx", rows, (unsigned long long)sum);
    return SQLITE_OK;
}

/* Records the digest of the winners in meta. Inside the caller's transaction. */
static gt_status put_digest(gt_db *db) {
    char digest[64];
    int rc = winners_digest(db, "main", digest, sizeof digest);
    sqlite3_stmt *st = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->conn,
                                "INSERT OR REPLACE INTO meta(key, value) VALUES('" DIGEST_KEY
                                "', ?1)",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, digest, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    gt_status s = GT_SUCCESS;
    if (rc != SQLITE_DONE) s = fail_rc(db, rc, "cannot record the winners' digest");
    sqlite3_finalize(st);
    return s;
}

/* Writes (insert or replace) the winner row of key. Inside the caller's transaction;
 * kt is the key's text for the message. */
static gt_status put_winner(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                            const gt_db_winner *winner, const char *kt) {
    sqlite3_stmt *st = use(db, ST_PUT_WINNER);
    int rc = bind_key(st, key, src_hash, lib_major);
    if (rc == SQLITE_OK) rc = bind_field(st, 14, winner->config, sizeof winner->config);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 15, winner->time_us);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 16, winner->tflops);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 17, winner->tuned_at);
    if (rc == SQLITE_OK) rc = bind_field(st, 18, winner->nvrtc, sizeof winner->nvrtc);
    if (rc == SQLITE_OK) rc = bind_field(st, 19, winner->driver, sizeof winner->driver);
    if (rc == SQLITE_OK) rc = bind_field(st, 20, winner->host, sizeof winner->host);
    if (rc == SQLITE_OK) rc = bind_field(st, 21, winner->libver, sizeof winner->libver);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    db->winners_dirty = 1;
    gt_status s = GT_SUCCESS;
    if (rc != SQLITE_DONE) {
        char what[320];
        snprintf(what, sizeof what, "cannot store the winner of %s", kt);
        s = fail_rc(db, rc, what);
    }
    done_stmt(st);
    return s;
}

/* Writes (insert or replace, by config) the ntimings candidate rows of key. Inside the
 * caller's transaction. */
static gt_status put_timings(gt_db *db, const gt_key *key, const char *src_hash,
                             int lib_major, const gt_db_timing *timings, int ntimings,
                             const char *kt) {
    gt_status s = GT_SUCCESS;
    for (int i = 0; s == GT_SUCCESS && i < ntimings; i++) {
        const gt_db_timing *t = &timings[i];
        sqlite3_stmt *st = use(db, ST_PUT_TIMING);
        int rc = bind_key(st, key, src_hash, lib_major);
        if (rc == SQLITE_OK) rc = bind_field(st, 14, t->config, sizeof t->config);
        if (rc == SQLITE_OK) rc = bind_field(st, 15, t->status, sizeof t->status);
        if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 16, t->time_us);
        if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 17, t->tflops);
        if (rc == SQLITE_OK) rc = bind_field(st, 18, t->message, sizeof t->message);
        if (rc == SQLITE_OK) rc = sqlite3_step(st);
        if (rc != SQLITE_DONE) {
            char what[320];
            snprintf(what, sizeof what, "cannot store timing %d of %s", i, kt);
            s = fail_rc(db, rc, what);
        }
        done_stmt(st);
    }
    return s;
}

/* The WAL kept short. A process that opens a WAL file while no other has it open
 * rebuilds the WAL's index from every frame (SQLite's recovery), and processes exit
 * without closing, so a process's first call after a writer (a tune, a prebuild, a
 * worker's exact twin) read up to the 4 MB that SQLite's own checkpoints leave there:
 * about 1 ms of a first call's 5 ms on this development machine. So the handle counts the
 * WAL's pages (wal_count, which replaces SQLite's automatic checkpoint) and, after a
 * commit that leaves WAL_EMPTY_PAGES or more (256 kB of 4 kB pages: recovering that
 * costs about 0.1 ms here, 0.6 MB cost 0.3 ms), moves them into the file and cuts the
 * WAL to nothing, when no reader is in it (no wait: a busy WAL is left to the next
 * commit). Not after every commit: a checkpoint syncs the file while the handle is
 * locked, which on the H100's host took half a second after a large copy of the file,
 * and a kept state's commit (on a call's path, gt_db_state_put) never does. A failure is
 * harmless: the WAL stays as it is. */
#define WAL_EMPTY_PAGES 64

static int wal_count(void *user, sqlite3 *conn, const char *name, int pages) {
    (void)conn, (void)name;
    ((gt_db *)user)->wal_pages = pages;
    return SQLITE_OK;
}

static void empty_wal(gt_db *db) {
    /* wal_count runs on writable WAL handles only: the others never get here. */
    if (db->wal_pages < WAL_EMPTY_PAGES) return;
    sqlite3_busy_timeout(db->conn, 0);
    if (sqlite3_wal_checkpoint_v2(db->conn, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) ==
        SQLITE_OK)
        db->wal_pages = 0;
    sqlite3_busy_timeout(db->conn, db->busy_timeout_ms);
}

/* Commits the caller's transaction, or rolls it back when s (or the commit) failed.
 * what names the operation for the message. */
static gt_status finish_write(gt_db *db, gt_status s, const char *what) {
    if (s == GT_SUCCESS && db->host && db->winners_dirty) s = put_digest(db);
    db->winners_dirty = 0;
    if (s == GT_SUCCESS && db->rows_changed) {
        /* gt_db_generation's count, in the transaction that changes the rows. */
        int rc = sqlite3_exec(db->conn,
                              "INSERT INTO meta(key, value) VALUES('" GENERATION_KEY "', 1) "
                              "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                              NULL, NULL, NULL);
        if (rc != SQLITE_OK) s = fail_rc(db, rc, "cannot count the change");
    }
    db->rows_changed = 0;
    if (s == GT_SUCCESS) {
        int rc = sqlite3_exec(db->conn, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            char msg[360];
            snprintf(msg, sizeof msg, "cannot commit %s", what);
            s = fail_rc(db, rc, msg);
        }
    }
    if (s != GT_SUCCESS) rollback(db);
    else if (!db->keep_wal) empty_wal(db);
    db->keep_wal = 0;
    return s;
}

/* Preconditions of every cubin call. db->lock held. */
static gt_status check_bin_key(gt_db *db, const gt_db_bin_key *bk, const char *op) {
    const char *bad = NULL;
    if (!bk) bad = "bin key is NULL";
    else if (!bk->src_hash || !*bk->src_hash) bad = "src_hash is NULL or empty";
    else if (!bk->program || !*bk->program) bad = "program is NULL or empty";
    else if (!bk->nvrtc || !*bk->nvrtc) bad = "nvrtc is NULL or empty";
    else if (!bk->driver || !*bk->driver) bad = "driver is NULL or empty";
    else if (bk->arch <= 0) bad = "arch is not positive";
    if (!bad) return GT_SUCCESS;
    set_error(db, "cache file '%s': %s: %s", db->path, op, bad);
    return GT_INVALID_VALUE;
}

/* Binds the five columns of a bin key as ?1..?5. */
static int bind_bin_key(sqlite3_stmt *st, const gt_db_bin_key *bk) {
    int rc = sqlite3_bind_text(st, 1, bk->src_hash, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 2, bk->program, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 3, bk->arch);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 4, bk->nvrtc, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 5, bk->driver, -1, SQLITE_TRANSIENT);
    return rc;
}

/* Runs one DELETE (bound with src_hash, lib_major, nvrtc, driver as ?1..?4; NULL binds
 * as SQL NULL) inside the caller's transaction; *changes gets the rows it deleted. */
static gt_status run_delete(gt_db *db, const char *sql, const char *src_hash, int lib_major,
                            const char *nvrtc, const char *driver, int64_t *changes,
                            const char *what) {
    sqlite3_stmt *st = NULL;
    /* Prepared per call: pruning is an occasional maintenance command, not worth three
     * statements on every handle. Parameters past the statement's last one are not
     * bound; one it skips (?2 of the cubins delete) may still be bound harmlessly. */
    int rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, src_hash, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK && sqlite3_bind_parameter_count(st) >= 2)
        rc = sqlite3_bind_int(st, 2, lib_major);
    if (rc == SQLITE_OK && sqlite3_bind_parameter_count(st) >= 3)
        rc = nvrtc ? sqlite3_bind_text(st, 3, nvrtc, -1, SQLITE_TRANSIENT)
                   : sqlite3_bind_null(st, 3);
    if (rc == SQLITE_OK && sqlite3_bind_parameter_count(st) >= 4)
        rc = driver ? sqlite3_bind_text(st, 4, driver, -1, SQLITE_TRANSIENT)
                    : sqlite3_bind_null(st, 4);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    gt_status s = GT_SUCCESS;
    if (rc != SQLITE_DONE) s = fail_rc(db, rc, what);
    else if (changes) *changes = sqlite3_changes(db->conn);
    sqlite3_finalize(st);
    return s;
}

/* ===================================================================================
 * API
 * =================================================================================== */

/* A new handle for path (no connection yet), or NULL after a message in msg. */
static gt_db *new_handle(const char *path, int busy_timeout_ms, gt_status *s, char *msg,
                         size_t msgsize) {
    gt_db *db = calloc(1, sizeof *db);
    if (db) db->path = strdup(path);
    if (!db || !db->path) {
        free(db);
        if (msg && msgsize) snprintf(msg, msgsize, "cache file '%s': out of memory", path);
        *s = GT_OUT_OF_MEMORY;
        return NULL;
    }
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&db->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    db->lockfd = -1;
    if (busy_timeout_ms <= 0)
        busy_timeout_ms = (int)env_positive(GT_ENV_CACHE_TIMEOUT_MS, INT_MAX);
    db->busy_timeout_ms = busy_timeout_ms > 0 ? busy_timeout_ms : DEFAULT_BUSY_TIMEOUT_MS;
    return db;
}

/* Hands db to *out, or, when s failed, its message to msg and db to destroy(). */
static gt_status finish_open(gt_db *db, gt_status s, gt_db **out, char *msg, size_t msgsize) {
    if (s != GT_SUCCESS) {
        if (msg && msgsize) copy_text(msg, msgsize, db->errmsg);
        destroy(db);
        return s;
    }
    *out = db;
    return GT_SUCCESS;
}

/* The first 100 bytes of the file at path (SQLite's header) into h: how many there were,
 * or -1 (errno set) when it cannot be read. A fresh open each time: on NFS, opening is
 * what makes the client look at the server's copy again (close-to-open consistency). */
static int read_header(const char *path, unsigned char h[100]) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = pread(fd, h, 100, 0);
    int err = errno;
    close(fd);
    errno = err;
    return (int)n;
}

static int is_sqlite_header(const unsigned char *h, int n) {
    return n >= 100 && memcmp(h, "SQLite format 3", 16) == 0;
}

/* gt_db_open, and gt_db_open_host when host != 0 (invariant 7). */
static gt_status open_file(const char *path, int readonly, int host, int busy_timeout_ms,
                           gt_db **out, char *msg, size_t msgsize) {
    if (out) *out = NULL;
    if (msg && msgsize) msg[0] = 0;
    if (!path || !*path || !out) {
        if (msg && msgsize)
            snprintf(msg, msgsize, "cache open: %s", !out ? "out is NULL" : "empty path");
        return GT_INVALID_VALUE;
    }
    gt_status s = GT_SUCCESS;
    gt_db *db = new_handle(path, busy_timeout_ms, &s, msg, msgsize);
    if (!db) return s;
    db->readonly = readonly != 0;
    db->host = host != 0;

    if (!db->readonly) {
        char failed[512] = "";
        int err = make_parent_dirs(path, failed, sizeof failed);
        if (err) {
            set_error(db, "cache file '%s': cannot create directory '%s': %s", path, failed,
                      strerror(err));
            s = err == ENOMEM ? GT_OUT_OF_MEMORY : GT_CACHE_ERROR;
        }
    }
    if (s == GT_SUCCESS && db->host) {
        /* The whole open runs inside the host-wide lock: it may create the file, roll back
         * a crashed writer's journal or migrate the schema. */
        int err = gt_nodelock_name(path, db->lockname, sizeof db->lockname);
        if (err) {
            set_error(db, "cache file '%s': cannot resolve its directory: %s", path,
                      strerror(err));
            s = GT_CACHE_ERROR;
        }
        if (s == GT_SUCCESS) s = take_host_lock(db);
        unsigned char h[100];
        /* The file layer without locks has no shared memory for a WAL index, and a WAL
         * file is what must not be on a shared filesystem. */
        if (s == GT_SUCCESS && is_sqlite_header(h, read_header(path, h)) &&
            (h[18] == 2 || h[19] == 2)) {
            set_error(db,
                      "cache file '%s': the file is in WAL mode, which a file on a network "
                      "or parallel filesystem must not be; convert it on one host "
                      "(sqlite3 FILE 'PRAGMA journal_mode=DELETE') or remove it",
                      path);
            s = GT_CACHE_ERROR;
        }
    }
    if (s == GT_SUCCESS) {
        s = connect(db, path,
                    db->readonly ? SQLITE_OPEN_READONLY
                                 : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                    db->host ? "unix-none" : NULL);
        /* SQLite's errno for a file it could not create is that of its read-only retry
         * (ENOENT); the real cause is usually the directory. */
        if (s == GT_CACHE_ERROR && !db->readonly && (db->last_rc & 0xff) == SQLITE_CANTOPEN &&
            access(path, F_OK) != 0 && !dir_writable(path))
            set_error(db, "cache file '%s': cannot create the file: its directory is not "
                          "writable", path);
    }
    /* SQLite silently falls back to read-only when the OS refuses write access; a caller
     * that asked for a writable cache must hear about it now, not at the first store. */
    if (s == GT_SUCCESS && !db->readonly && sqlite3_db_readonly(db->conn, "main") == 1) {
        set_error(db, "cache file '%s': cannot open for writing: permission denied", path);
        s = GT_CACHE_ERROR;
    }
    /* Look before writing anything, even the WAL flag in the header: a foreign, corrupt
     * or newer file must be left exactly as it was. */
    int version = 0;
    if (s == GT_SUCCESS) {
        s = read_version(db, &version);
        if (s != GT_SUCCESS && immutable_fallback_applies(db)) {
            s = connect_immutable(db);
            if (s == GT_SUCCESS) s = read_version(db, &version);
        }
    }
    if (s == GT_SUCCESS) s = check_newer(db, version);
    if (s == GT_SUCCESS && db->readonly && version != GT_DB_SCHEMA_VERSION) {
        set_error(db,
                  "cache file '%s': schema version %d is older than this library's %d, and a "
                  "read-only file cannot be upgraded",
                  path, version, GT_DB_SCHEMA_VERSION);
        s = GT_CACHE_ERROR;
    }
    if (s == GT_SUCCESS && !db->readonly) {
        /* WAL lets readers go on while one process writes; synchronous=NORMAL is safe in
         * WAL (a crash may lose the last commits, never corrupt), and a cache can always
         * be re-tuned. A host file keeps a rollback journal, synced in full at every
         * commit: its readers on other hosts see only the main file. */
        int rc = exec_retry(db, db->host ? "PRAGMA journal_mode=DELETE"
                                         : "PRAGMA journal_mode=WAL");
        if (rc != SQLITE_OK)
            s = fail_rc(db, rc, db->host ? "cannot set the rollback journal"
                                         : "cannot switch to WAL mode");
        else if (!db->host)
            sqlite3_wal_hook(db->conn, wal_count, db);
    }
    if (s == GT_SUCCESS) {
        int rc = exec_retry(db, db->host ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
        if (rc != SQLITE_OK) s = fail_rc(db, rc, "cannot set synchronous mode");
    }
    if (s == GT_SUCCESS && !db->readonly && version < GT_DB_SCHEMA_VERSION) s = migrate(db);
    /* The cap is on a file; the in-memory cache holds what a process could not write. */
    if (s == GT_SUCCESS && !db->readonly && strcmp(path, ":memory:") != 0) s = apply_max_size(db);
    if (s == GT_SUCCESS) s = check_schema(db);
    if (s == GT_SUCCESS) s = check_tables(db);
    drop_host_lock(db);
    return finish_open(db, s, out, msg, msgsize);
}

gt_status gt_db_open(const char *path, int readonly, int busy_timeout_ms, gt_db **out,
                     char *msg, size_t msgsize) {
    return open_file(path, readonly, 0, busy_timeout_ms, out, msg, msgsize);
}

gt_status gt_db_open_host(const char *path, int busy_timeout_ms, gt_db **out, char *msg,
                          size_t msgsize) {
    return open_file(path, 0, 1, busy_timeout_ms, out, msg, msgsize);
}

/* ===================================================================================
 * Snapshots: another host's file, copied while it may be written
 * =================================================================================== */

#define SNAPSHOT_TRIES 10

/* Ends a snapshot attempt: rolls back the copy and detaches the file. */
static void snapshot_cleanup(gt_db *db) {
    rollback(db);
    sqlite3_exec(db->conn, "DETACH src", NULL, NULL, NULL);
}

/* One attempt to copy the file (uri, opened immutable) into db's empty tables. On
 * failure *transient says whether another attempt may succeed: a torn read, a file being
 * replaced or created, SQLite's errors while reading. A file of another program or of a
 * newer schema is final. *empty: the file read as 0 bytes (an empty cache, if it stays
 * so). */
static gt_status snapshot_once(gt_db *db, const char *uri, int timings, int *transient,
                               int *empty) {
    *transient = 0;
    *empty = 0;
    unsigned char h0[100], h1[100];
    int n0 = read_header(db->path, h0);
    if (n0 < 0) {
        *transient = errno == ENOENT;
        set_error(db, "cache file '%s': cannot read it: %s", db->path, strerror(errno));
        return GT_CACHE_ERROR;
    }
    if (n0 == 0) {
        /* Nothing committed yet (a file its host is creating), or a network client's
         * cached size: worth another look before it counts as an empty cache. */
        *transient = 1;
        *empty = 1;
        set_error(db, "cache file '%s': the file is empty", db->path);
        return GT_CACHE_ERROR;
    }
    if (!is_sqlite_header(h0, n0)) {
        *transient = n0 < 100 && memcmp(h0, "SQLite format 3", (size_t)n0) == 0;
        set_error(db, "cache file '%s': the file is not an SQLite database", db->path);
        return GT_CACHE_ERROR;
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->conn, "ATTACH ?1 AS src", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, uri, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    gt_status s = rc == SQLITE_DONE ? GT_SUCCESS : fail_rc(db, rc, "cannot open for reading");
    sqlite3_finalize(st);
    if (s != GT_SUCCESS) {
        *transient = 1;
        return s;
    }
    int version = 0;
    db->last_rc = 0;
    s = read_version_in(db, "src", &version);
    if (s == GT_SUCCESS) s = check_newer(db, version);
    else *transient = db->last_rc != 0; /* SQLite failed; not a verdict on the file */
    char digest[64] = "";
    if (s == GT_SUCCESS && version > 0) {
        rc = sqlite3_exec(db->conn,
                          "BEGIN; DELETE FROM main.winners; DELETE FROM main.timings; "
                          "INSERT INTO main.winners(" WINNER_COLS ") SELECT " WINNER_COLS
                          " FROM src.winners",
                          NULL, NULL, NULL);
        if (rc == SQLITE_OK && timings)
            rc = sqlite3_exec(db->conn,
                              "INSERT INTO main.timings(" KEY_COLS ", config, status, "
                              "time_us, tflops, message) SELECT " KEY_COLS ", config, status, "
                              "time_us, tflops, message FROM src.timings",
                              NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            rc = sqlite3_prepare_v2(db->conn,
                                    "SELECT value FROM src.meta WHERE key = '" DIGEST_KEY "'",
                                    -1, &st, NULL);
            if (rc == SQLITE_OK) rc = sqlite3_step(st);
            if (rc == SQLITE_ROW) copy_column(digest, sizeof digest, st, 0);
            if (rc == SQLITE_ROW) rc = SQLITE_DONE;
            if (rc != SQLITE_DONE) s = fail_rc(db, rc, "cannot copy the entries");
            sqlite3_finalize(st);
        } else {
            s = fail_rc(db, rc, "cannot copy the entries");
        }
        if (s == GT_SUCCESS) {
            rc = sqlite3_exec(db->conn, "COMMIT", NULL, NULL, NULL);
            if (rc != SQLITE_OK) s = fail_rc(db, rc, "cannot copy the entries");
        }
        if (s != GT_SUCCESS) *transient = 1;
    }
    snapshot_cleanup(db);
    if (s != GT_SUCCESS) return s;
    /* A commit between the two looks changes the header's change counter (bytes 24-27)
     * or the page count (28-31) of a rollback-journal file. */
    int n1 = read_header(db->path, h1);
    if (n1 != n0 || memcmp(h0 + 24, h1 + 24, 8) != 0) {
        *transient = 1;
        set_error(db, "cache file '%s': the file changed while it was read", db->path);
        return GT_CACHE_ERROR;
    }
    if (digest[0]) {
        char mine[64] = "";
        rc = winners_digest(db, "main", mine, sizeof mine);
        if (rc != SQLITE_OK) return fail_rc(db, rc, "cannot check the copied entries");
        if (strcmp(mine, digest) != 0) {
            *transient = 1;
            set_error(db,
                      "cache file '%s': the entries read do not match the digest the file "
                      "committed with them (it was being written)",
                      db->path);
            return GT_CACHE_ERROR;
        }
    }
    return GT_SUCCESS;
}

gt_status gt_db_open_snapshot(const char *path, int timings, gt_db **out, char *msg,
                              size_t msgsize) {
    if (out) *out = NULL;
    if (msg && msgsize) msg[0] = 0;
    if (!path || !*path || !out) {
        if (msg && msgsize)
            snprintf(msg, msgsize, "cache snapshot: %s", !out ? "out is NULL" : "empty path");
        return GT_INVALID_VALUE;
    }
    gt_status s = GT_SUCCESS;
    gt_db *db = new_handle(path, 0, &s, msg, msgsize);
    if (!db) return s;
    s = connect(db, ":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                NULL);
    if (s == GT_SUCCESS) s = migrate(db);
    char *uri = s == GT_SUCCESS ? immutable_uri(db, &s) : NULL;
    for (int attempt = 1, wait_ms = 1; uri; attempt++, wait_ms *= 2) {
        int transient = 0, empty = 0;
        s = snapshot_once(db, uri, timings, &transient, &empty);
        if (s == GT_SUCCESS || !transient) break;
        if (attempt == SNAPSHOT_TRIES && empty) {
            s = GT_SUCCESS; /* empty every time: an empty cache */
            break;
        }
        if (attempt == SNAPSHOT_TRIES) {
            char why[ERRMSG_MAX];
            copy_text(why, sizeof why, db->errmsg);
            set_error(db, "%s (after %d attempts)", why, SNAPSHOT_TRIES);
            break;
        }
        sleep_ms(wait_ms < 128 ? wait_ms : 128);
    }
    free(uri);
    /* The copy's schema is this library's own (migrate): no check_schema. */
    if (s == GT_SUCCESS) db->readonly = 1;
    return finish_open(db, s, out, msg, msgsize);
}

/* ===================================================================================
 * Images: a whole in-memory cache as bytes (the built-in defaults, data/image.c)
 * =================================================================================== */

/* sqlite3_serialize and sqlite3_deserialize: in every SQLite from 3.36 unless left out
 * at its build. */
#if SQLITE_VERSION_NUMBER >= 3036000 && !defined(SQLITE_OMIT_DESERIALIZE)
#define HAVE_IMAGE 1
#else
#define HAVE_IMAGE 0
#endif

gt_status gt_db_image(gt_db *db, unsigned char **image, size_t *size) {
    if (image) *image = NULL;
    if (size) *size = 0;
    if (!db || !image || !size) return GT_INVALID_VALUE;
    gt_status s = lock_db(db);
    if (s != GT_SUCCESS) return s;
#if HAVE_IMAGE
    /* VACUUM first: the image then holds no free pages. */
    int rc = sqlite3_exec(db->conn, "VACUUM", NULL, NULL, NULL);
    sqlite3_int64 n = 0;
    unsigned char *p = rc == SQLITE_OK ? sqlite3_serialize(db->conn, "main", &n, 0) : NULL;
    if (rc != SQLITE_OK) s = fail_rc(db, rc, "cannot compact the cache for its image");
    else if (!p || n <= 0) {
        set_error(db, "cache file '%s': cannot serialize it (out of memory)", db->path);
        s = GT_OUT_OF_MEMORY;
    } else if (!(*image = malloc((size_t)n))) {
        set_error(db, "cache file '%s': out of memory", db->path);
        s = GT_OUT_OF_MEMORY;
    } else {
        memcpy(*image, p, (size_t)n);
        *size = (size_t)n;
    }
    sqlite3_free(p);
#else
    set_error(db, "cache file '%s': this SQLite (%s) cannot serialize a database", db->path,
              sqlite3_libversion());
    s = GT_NOT_SUPPORTED;
#endif
    unlock_db(db);
    return s;
}

gt_status gt_db_open_image(const char *name, const unsigned char *image, size_t size,
                           gt_db **out, char *msg, size_t msgsize) {
    if (out) *out = NULL;
    if (msg && msgsize) msg[0] = 0;
    if (!name || !image || size == 0 || !out) {
        if (msg && msgsize) snprintf(msg, msgsize, "cache image: %s", !out ? "out is NULL" : "empty image");
        return GT_INVALID_VALUE;
    }
    gt_status s = GT_SUCCESS;
    gt_db *db = new_handle(name, 0, &s, msg, msgsize);
    if (!db) return s;
    db->readonly = 1;
    s = connect(db, ":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
#if HAVE_IMAGE
    if (s == GT_SUCCESS) {
        /* Read-only: SQLite reads the caller's bytes in place and never writes or frees
         * them. */
        int rc = sqlite3_deserialize(db->conn, "main", (unsigned char *)(uintptr_t)image,
                                     (sqlite3_int64)size, (sqlite3_int64)size,
                                     SQLITE_DESERIALIZE_READONLY);
        if (rc != SQLITE_OK) s = fail_rc(db, rc, "cannot read the image");
    }
#else
    if (s == GT_SUCCESS) {
        set_error(db, "cache image '%s': this SQLite (%s) cannot read a database image", name,
                  sqlite3_libversion());
        s = GT_NOT_SUPPORTED;
    }
#endif
    int version = 0;
    if (s == GT_SUCCESS) s = read_version(db, &version);
    if (s == GT_SUCCESS && version != GT_DB_SCHEMA_VERSION) {
        set_error(db, "cache image '%s': schema version %d, not this library's %d", name,
                  version, GT_DB_SCHEMA_VERSION);
        s = GT_CACHE_ERROR;
    }
    /* No walk of the tables (check_tables) nor check of their columns (check_schema): the
     * image is the caller's bytes in memory, built by this library, not a file that may
     * be damaged, and the walk would touch every page of it. */
    return finish_open(db, s, out, msg, msgsize);
}

void gt_db_close(gt_db *db) {
    if (!db) return;
    destroy(db);
}

void gt_db_seal(gt_db *db) {
    if (!db || lock_db(db) != GT_SUCCESS) return;
    db->readonly = 1;
    unlock_db(db);
}

const char *gt_db_errmsg(gt_db *db) { return db ? db->errmsg : "no cache handle"; }

/* Looks up key's winner (inside the caller's transaction, if any): 1 (and *out) when there is one,
 * 0 when there is none, -1 (the error recorded) when the read failed. */
static int winner_in_txn(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                         gt_db_winner *out) {
    sqlite3_stmt *st = use(db, ST_LOOKUP);
    int rc = bind_key(st, key, src_hash, lib_major);
    if (rc == SQLITE_OK) rc = step_first(db, st);
    int found = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
    if (found == 1) {
        memset(out, 0, sizeof *out);
        copy_column(out->config, sizeof out->config, st, 0);
        out->time_us = sqlite3_column_double(st, 1);
        out->tflops = sqlite3_column_double(st, 2);
        out->tuned_at = sqlite3_column_int64(st, 3);
        copy_column(out->nvrtc, sizeof out->nvrtc, st, 4);
        copy_column(out->driver, sizeof out->driver, st, 5);
        copy_column(out->host, sizeof out->host, st, 6);
        copy_column(out->libver, sizeof out->libver, st, 7);
    }
    if (found < 0) {
        char kt[256], what[320];
        gt_key_format(key, kt, sizeof kt);
        snprintf(what, sizeof what, "cannot look up %s", kt);
        fail_rc(db, rc, what);
    }
    done_stmt(st);
    return found;
}

gt_status gt_db_lookup(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                       gt_db_winner *out, int *found) {
    if (found) *found = 0;
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_keyed(db, key, src_hash, "lookup", !out ? "out" : !found ? "found" : NULL);
    if (s != GT_SUCCESS) return s;
    int f = winner_in_txn(db, key, src_hash, lib_major, out);
    if (f < 0) s = GT_CACHE_ERROR;
    else *found = f;
    unlock_db(db);
    return s;
}

/* GT_CACHE_ERROR, with the message, when db was opened read-only: `verb` names the
 * refused write ("store", "merge", ...). Every writer asks this before its transaction. */
static gt_status refuse_readonly(gt_db *db, const char *verb) {
    if (!db->readonly) return GT_SUCCESS;
    set_error(db, "cache file '%s': cannot %s: the cache is opened read-only", db->path, verb);
    return GT_CACHE_ERROR;
}

/* GT_INVALID_VALUE, with the message, unless ntimings rows at timings make sense. */
static gt_status check_timings(gt_db *db, const char *verb, const gt_db_timing *timings,
                               int ntimings) {
    if (ntimings >= 0 && (ntimings == 0 || timings)) return GT_SUCCESS;
    set_error(db, "cache file '%s': %s: %d timings at %p", db->path, verb, ntimings,
              (const void *)timings);
    return GT_INVALID_VALUE;
}

/* gt_db_store (kept NULL: the winner replaces any) and gt_db_store_first (the winner only
 * where none is; *kept: the one the file holds afterwards). */
static gt_status store_impl(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                            const gt_db_winner *winner, const gt_db_timing *timings,
                            int ntimings, gt_db_winner *kept) {
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_keyed(db, key, src_hash, "store",
                            kept && !winner ? "winner" : NULL);
    if (s != GT_SUCCESS) return s;
    s = check_timings(db, "store", timings, ntimings);
    if (s == GT_SUCCESS) s = refuse_readonly(db, "store");
    if (s != GT_SUCCESS) {
        unlock_db(db);
        return s;
    }
    char kt[256], what[320];
    gt_key_format(key, kt, sizeof kt);

    int rc = begin_immediate(db);
    if (rc != SQLITE_OK) {
        snprintf(what, sizeof what, "cannot store %s", kt);
        s = fail_rc(db, rc, what);
    }
    int found = 0;
    if (s == GT_SUCCESS && kept && (found = winner_in_txn(db, key, src_hash, lib_major, kept)) < 0)
        s = GT_CACHE_ERROR;
    if (s == GT_SUCCESS && winner && !found) {
        s = put_winner(db, key, src_hash, lib_major, winner, kt);
        if (kept) *kept = *winner;
    }
    if (s == GT_SUCCESS) s = put_timings(db, key, src_hash, lib_major, timings, ntimings, kt);
    db->rows_changed = 1;
    s = finish_write(db, s, kt);
    unlock_db(db);
    return s;
}

gt_status gt_db_store(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                      const gt_db_winner *winner, const gt_db_timing *timings,
                      int ntimings) {
    return store_impl(db, key, src_hash, lib_major, winner, timings, ntimings, NULL);
}

gt_status gt_db_store_first(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                            const gt_db_winner *winner, const gt_db_timing *timings,
                            int ntimings, gt_db_winner *kept) {
    if (!kept) {
        if (db) set_error(db, "cache file '%s': store: kept is NULL", db->path);
        return GT_INVALID_VALUE;
    }
    return store_impl(db, key, src_hash, lib_major, winner, timings, ntimings, kept);
}

/* ===================================================================================
 * Tuning claims
 *
 * A claim says that one process tunes a key now, until it expires: a row of `claims`,
 * keyed by the key's text with the source hash and major version. The table is transient
 * coordination state, not cache content, so it is made on first use in a writable file
 * and never read from a read-only one; no schema version goes with it (a version bump
 * would make every shipped file of the previous version unreadable, read-only files
 * being never upgraded).
 * =================================================================================== */

void gt_db_entry_name(const gt_key *key, const char *src_hash, int lib_major, char *buf,
                      size_t size) {
    char kt[256];
    gt_key_format(key, kt, sizeof kt);
    snprintf(buf, size, "%s|%s|%d", kt, src_hash, lib_major);
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

gt_status gt_db_claim(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                      const char *owner, double ttl_s, gt_db_claim_state *state,
                      gt_db_winner *stored) {
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_keyed(db, key, src_hash, "claim",
                            !owner ? "owner" : !state ? "state" : !stored ? "stored" : NULL);
    if (s != GT_SUCCESS) return s;
    if ((s = refuse_readonly(db, "claim")) != GT_SUCCESS) {
        unlock_db(db);
        return s;
    }
    char name[400];
    gt_db_entry_name(key, src_hash, lib_major, name, sizeof name);
    int rc = begin_immediate(db);
    const int began = rc == SQLITE_OK;
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db->conn,
                          "CREATE TABLE IF NOT EXISTS claims(name TEXT PRIMARY KEY, "
                          "owner TEXT NOT NULL, expires REAL NOT NULL)",
                          NULL, NULL, NULL);
    if (rc != SQLITE_OK) s = fail_rc(db, rc, "cannot begin a tuning claim");
    int found = 0;
    if (s == GT_SUCCESS && (found = winner_in_txn(db, key, src_hash, lib_major, stored)) < 0)
        s = GT_CACHE_ERROR;
    const double now = wall_s();
    if (s == GT_SUCCESS && found) *state = GT_DB_CLAIM_STORED;
    if (s == GT_SUCCESS && !found) {
        sqlite3_stmt *st = NULL;
        rc = sqlite3_prepare_v2(db->conn, "SELECT owner, expires FROM claims WHERE name = ?1",
                                -1, &st, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
        if (rc == SQLITE_OK) rc = sqlite3_step(st);
        int held = rc == SQLITE_ROW && sqlite3_column_double(st, 1) > now &&
                   strcmp((const char *)sqlite3_column_text(st, 0), owner) != 0;
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) s = fail_rc(db, rc, "cannot read the tuning claims");
        sqlite3_finalize(st);
        st = NULL;
        if (s == GT_SUCCESS && held) *state = GT_DB_CLAIM_HELD;
        if (s == GT_SUCCESS && !held) {
            rc = sqlite3_prepare_v2(db->conn, "INSERT OR REPLACE INTO claims VALUES(?1, ?2, ?3)",
                                    -1, &st, NULL);
            if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
            if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 2, owner, -1, SQLITE_TRANSIENT);
            if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 3, now + ttl_s);
            if (rc == SQLITE_OK) rc = sqlite3_step(st);
            if (rc != SQLITE_DONE) s = fail_rc(db, rc, "cannot write the tuning claim");
            sqlite3_finalize(st);
            *state = GT_DB_CLAIM_TAKEN;
        }
    }
    if (began) s = finish_write(db, s, name);
    unlock_db(db);
    return s;
}

gt_status gt_db_unclaim(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                        const char *owner) {
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_keyed(db, key, src_hash, "unclaim", !owner ? "owner" : NULL);
    if (s != GT_SUCCESS) return s;
    if ((s = refuse_readonly(db, "unclaim")) != GT_SUCCESS) {
        unlock_db(db);
        return s;
    }
    char name[400];
    gt_db_entry_name(key, src_hash, lib_major, name, sizeof name);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->conn, "DELETE FROM claims WHERE name = ?1 AND owner = ?2",
                                -1, &st, NULL);
    /* No table: nothing was ever claimed in this file. */
    if (rc == SQLITE_ERROR) rc = SQLITE_DONE;
    else {
        if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
        if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 2, owner, -1, SQLITE_TRANSIENT);
        if (rc == SQLITE_OK) rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) s = fail_rc(db, rc, "cannot release the tuning claim");
    unlock_db(db);
    return s;
}

gt_status gt_db_list(gt_db *db, gt_db_winner_fn fn, void *user) {
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_db(db);
    if (s != GT_SUCCESS) return s;
    if (!fn) {
        set_error(db, "cache file '%s': list: fn is NULL", db->path);
        unlock_db(db);
        return GT_INVALID_VALUE;
    }
    sqlite3_stmt *st = use(db, ST_LIST);
    int rc = walk_winners(db, st, fn, user);
    if (rc != SQLITE_DONE) s = fail_rc(db, rc, "cannot list the winners");
    done_stmt(st);
    unlock_db(db);
    return s;
}

/* One row of st_timings or st_class_timings from column `at` on (config, status,
 * time_us, tflops, message). */
static void decode_timing(sqlite3_stmt *st, int at, gt_db_timing *t) {
    memset(t, 0, sizeof *t);
    copy_column(t->config, sizeof t->config, st, at);
    copy_column(t->status, sizeof t->status, st, at + 1);
    /* SQLite stores NaN as NULL; NULL reads back as "not timed". */
    t->time_us = sqlite3_column_type(st, at + 2) == SQLITE_NULL
                     ? -1.0
                     : sqlite3_column_double(st, at + 2);
    t->tflops = sqlite3_column_double(st, at + 3);
    copy_column(t->message, sizeof t->message, st, at + 4);
}

/* Walks st (bound, db->lock held) calling fn per row: the timing's columns from `at`,
 * and with at > 0 the row's op pair, m, n, k and beta0 in columns 0 to 5 (key gives the
 * rest of the shape). Reports a failure as "cannot read <what> <key>"; resets st and
 * releases the lock. fn must not use this handle (the rule of gt_db_list). */
static gt_status walk_timings(gt_db *db, sqlite3_stmt *st, int rc, const gt_key *key, int at,
                              gt_db_class_timing_fn fn, void *user, const char *what) {
    gt_status s = GT_SUCCESS;
    if (rc == SQLITE_OK) {
        for (rc = step_first(db, st); rc == SQLITE_ROW; rc = sqlite3_step(st)) {
            gt_key shape = *key;
            if (at > 0) {
                const unsigned char *opa = sqlite3_column_text(st, 0);
                const unsigned char *opb = sqlite3_column_text(st, 1);
                shape.opa = opa && opa[0] == 'T';
                shape.opb = opb && opb[0] == 'T';
                shape.m = sqlite3_column_int64(st, 2);
                shape.n = sqlite3_column_int64(st, 3);
                shape.k = sqlite3_column_int64(st, 4);
                shape.beta0 = sqlite3_column_int(st, 5) != 0;
            }
            gt_db_timing t;
            decode_timing(st, at, &t);
            if (fn(&shape, &t, user) != 0) {
                rc = SQLITE_DONE;
                break;
            }
        }
    }
    if (rc != SQLITE_DONE) {
        char kt[256], text[320];
        gt_key_format(key, kt, sizeof kt);
        snprintf(text, sizeof text, "cannot read %s %s", what, kt);
        s = fail_rc(db, rc, text);
    }
    done_stmt(st);
    unlock_db(db);
    return s;
}

/* gt_db_timings' callback as walk_timings calls it. */
typedef struct key_timings {
    gt_db_timing_fn fn;
    void *user;
} key_timings;

static int one_key_timing(const gt_key *shape, const gt_db_timing *t, void *user) {
    (void)shape;
    const key_timings *k = user;
    return k->fn(t, k->user);
}

gt_status gt_db_timings(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                        gt_db_timing_fn fn, void *user) {
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_keyed(db, key, src_hash, "timings", fn ? NULL : "fn");
    if (s != GT_SUCCESS) return s;
    key_timings k = {fn, user};
    sqlite3_stmt *st = use(db, ST_TIMINGS);
    int rc = bind_key(st, key, src_hash, lib_major);
    return walk_timings(db, st, rc, key, 0, one_key_timing, &k, "the timings of");
}

gt_status gt_db_class_timings(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                              int any_ops, gt_db_class_timing_fn fn, void *user) {
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_keyed(db, key, src_hash, "class timings", fn ? NULL : "fn");
    if (s != GT_SUCCESS) return s;
    sqlite3_stmt *st = use(db, ST_CLASS_TIMINGS);
    int rc = bind_key(st, key, src_hash, lib_major);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 14, any_ops ? 1 : 0);
    return walk_timings(db, st, rc, key, 6, fn, user, "the timings of the class of");
}

gt_status gt_db_merge(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                      const gt_db_winner *winner, const gt_db_timing *timings, int ntimings,
                      int *stored) {
    if (stored) *stored = 0;
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_keyed(db, key, src_hash, "merge", winner ? NULL : "winner");
    if (s != GT_SUCCESS) return s;
    /* NaN compares false with everything, so it could neither win nor lose honestly. */
    if (winner->time_us != winner->time_us) {
        set_error(db, "cache file '%s': merge: the winner's time is not a number", db->path);
        s = GT_INVALID_VALUE;
    }
    if (s == GT_SUCCESS) s = check_timings(db, "merge", timings, ntimings);
    if (s == GT_SUCCESS) s = refuse_readonly(db, "merge");
    if (s != GT_SUCCESS) {
        unlock_db(db);
        return s;
    }
    char kt[256], what[320];
    gt_key_format(key, kt, sizeof kt);

    /* The comparison is made under the write lock: a faster entry that another process
     * commits between our read and our write would otherwise be overwritten. */
    int rc = begin_immediate(db);
    if (rc != SQLITE_OK) {
        snprintf(what, sizeof what, "cannot merge %s", kt);
        s = fail_rc(db, rc, what);
    }
    int write = 0;
    if (s == GT_SUCCESS) {
        sqlite3_stmt *st = use(db, ST_LOOKUP);
        rc = bind_key(st, key, src_hash, lib_major);
        if (rc == SQLITE_OK) rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) {
            write = 1;
        } else if (rc == SQLITE_ROW) {
            /* A stored winner without a time (NULL, as SQLite keeps NaN) is not "lower or
             * equal" to anything, so a timed one replaces it. */
            write = sqlite3_column_type(st, 1) == SQLITE_NULL ||
                    !(sqlite3_column_double(st, 1) <= winner->time_us);
        } else {
            snprintf(what, sizeof what, "cannot read the stored winner of %s", kt);
            s = fail_rc(db, rc, what);
        }
        done_stmt(st);
    }
    if (s == GT_SUCCESS && write) s = put_winner(db, key, src_hash, lib_major, winner, kt);
    if (s == GT_SUCCESS && write) {
        /* The old timings belong to the old winner's run: keep one run's rows together. */
        sqlite3_stmt *st = use(db, ST_DEL_TIMINGS);
        rc = bind_key(st, key, src_hash, lib_major);
        if (rc == SQLITE_OK) rc = sqlite3_step(st);
        if (rc != SQLITE_DONE) {
            snprintf(what, sizeof what, "cannot replace the timings of %s", kt);
            s = fail_rc(db, rc, what);
        }
        done_stmt(st);
    }
    if (s == GT_SUCCESS && write)
        s = put_timings(db, key, src_hash, lib_major, timings, ntimings, kt);
    /* Nothing written when the file kept its own: the commit then only ends the read. */
    db->rows_changed = write;
    s = finish_write(db, s, kt);
    if (s == GT_SUCCESS && stored) *stored = write;
    unlock_db(db);
    return s;
}

gt_status gt_db_prune(gt_db *db, const char *src_hash, int lib_major, const char *nvrtc,
                      const char *driver, int64_t *winners, int64_t *cubins) {
    if (winners) *winners = 0;
    if (cubins) *cubins = 0;
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_db(db);
    if (s != GT_SUCCESS) return s;
    if (!src_hash || !*src_hash) {
        set_error(db, "cache file '%s': prune: src_hash is NULL or empty", db->path);
        s = GT_INVALID_VALUE;
    }
    if (s == GT_SUCCESS) s = refuse_readonly(db, "prune");
    if (s != GT_SUCCESS) {
        unlock_db(db);
        return s;
    }
    int64_t nw = 0, nc = 0;
    int rc = begin_immediate(db);
    if (rc != SQLITE_OK) s = fail_rc(db, rc, "cannot prune");
    if (s == GT_SUCCESS)
        s = run_delete(db, "DELETE FROM winners WHERE src_hash <> ?1 OR lib_major <> ?2",
                       src_hash, lib_major, nvrtc, driver, &nw, "cannot prune the winners");
    if (s == GT_SUCCESS && nw > 0) db->winners_dirty = 1;
    db->rows_changed = 1;
    if (s == GT_SUCCESS)
        s = run_delete(db, "DELETE FROM timings WHERE src_hash <> ?1 OR lib_major <> ?2",
                       src_hash, lib_major, nvrtc, driver, NULL, "cannot prune the timings");
    /* A NULL nvrtc or driver means "do not filter on it" (the caller may not know the
     * running versions, e.g. without a GPU): ?3 / ?4 IS NULL then matches nothing. */
    if (s == GT_SUCCESS)
        s = run_delete(db,
                       "DELETE FROM cubins WHERE src_hash <> ?1 OR "
                       "(?3 IS NOT NULL AND nvrtc <> ?3) OR (?4 IS NOT NULL AND driver <> ?4)",
                       src_hash, lib_major, nvrtc, driver, &nc, "cannot prune the cubins");
    s = finish_write(db, s, "the pruning");
    if (s == GT_SUCCESS) {
        if (winners) *winners = nw;
        if (cubins) *cubins = nc;
    }
    unlock_db(db);
    return s;
}

gt_status gt_db_neighbors(gt_db *db, const gt_key *key, const char *src_hash, int lib_major,
                          gt_db_winner_fn fn, void *user) {
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_keyed(db, key, src_hash, "neighbors", fn ? NULL : "fn");
    if (s != GT_SUCCESS) return s;
    sqlite3_stmt *st = use(db, ST_NEIGHBORS);
    int rc = bind_key(st, key, src_hash, lib_major);
    if (rc == SQLITE_OK) rc = walk_winners(db, st, fn, user);
    if (rc != SQLITE_DONE) {
        char kt[256], what[320];
        gt_key_format(key, kt, sizeof kt);
        snprintf(what, sizeof what, "cannot list the tuned neighbours of %s", kt);
        s = fail_rc(db, rc, what);
    }
    done_stmt(st);
    unlock_db(db);
    return s;
}

gt_status gt_db_cubin_get(gt_db *db, const gt_db_bin_key *bk, void **image, size_t *size,
                          int *found) {
    if (image) *image = NULL;
    if (size) *size = 0;
    if (found) *found = 0;
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_db(db);
    if (s != GT_SUCCESS) return s;
    s = check_bin_key(db, bk, "cubin get");
    if (s == GT_SUCCESS && (!image || !size || !found)) {
        set_error(db, "cache file '%s': cubin get: %s is NULL", db->path,
                  !image ? "image" : !size ? "size" : "found");
        s = GT_INVALID_VALUE;
    }
    /* Invariant 6: a shipped file never supplies a binary, whatever it holds. */
    if (s != GT_SUCCESS || db->readonly) {
        unlock_db(db);
        return s;
    }
    sqlite3_stmt *st = use(db, ST_CUBIN_GET);
    int rc = bind_bin_key(st, bk);
    if (rc == SQLITE_OK) rc = step_first(db, st);
    char what[320];
    snprintf(what, sizeof what, "cannot read the cubin of '%s' for sm_%d", bk->program,
             bk->arch);
    if (rc == SQLITE_ROW) {
        /* Type before value: sqlite3_column_blob would convert a TEXT cell. */
        int is_blob = sqlite3_column_type(st, 0) == SQLITE_BLOB;
        const void *blob = sqlite3_column_blob(st, 0);
        int n = sqlite3_column_bytes(st, 0);
        int64_t want = sqlite3_column_int64(st, 1);
        if (!blob && n > 0) {
            s = fail_rc(db, SQLITE_NOMEM, what);
        } else if (is_blob && blob && n > 0 && want == n) {
            void *copy = malloc((size_t)n);
            if (!copy) {
                s = fail_rc(db, SQLITE_NOMEM, what);
            } else {
                memcpy(copy, blob, (size_t)n);
                *image = copy;
                *size = (size_t)n;
                *found = 1;
            }
        }
        /* Otherwise the row is damaged (not a blob, or not the length it was stored
         * with): handing it to the driver could crash the process, so it reads as a
         * miss. The caller compiles again and its put replaces the row. */
    } else if (rc != SQLITE_DONE) {
        s = fail_rc(db, rc, what);
    }
    done_stmt(st);
    unlock_db(db);
    return s;
}

gt_status gt_db_cubin_put(gt_db *db, const gt_db_bin_key *bk, const void *image, size_t size) {
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_db(db);
    if (s != GT_SUCCESS) return s;
    s = check_bin_key(db, bk, "cubin put");
    if (s == GT_SUCCESS && (!image || size == 0)) {
        set_error(db, "cache file '%s': cubin put: %s", db->path,
                  !image ? "image is NULL" : "size is 0");
        s = GT_INVALID_VALUE;
    }
    if (s == GT_SUCCESS) s = refuse_readonly(db, "store a cubin");
    if (s != GT_SUCCESS) {
        unlock_db(db);
        return s;
    }
    char what[320];
    snprintf(what, sizeof what, "the cubin of '%s' for sm_%d", bk->program, bk->arch);
    int rc = begin_immediate(db);
    if (rc == SQLITE_OK) {
        sqlite3_stmt *st = use(db, ST_CUBIN_PUT);
        rc = bind_bin_key(st, bk);
        /* STATIC: the statement is stepped and reset before this call returns. */
        if (rc == SQLITE_OK) rc = sqlite3_bind_blob64(st, 6, image, size, SQLITE_STATIC);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 7, (sqlite3_int64)size);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 8, (sqlite3_int64)time(NULL));
        if (rc == SQLITE_OK) rc = sqlite3_step(st);
        done_stmt(st);
    }
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
        char msg[360];
        snprintf(msg, sizeof msg, "cannot store %s", what);
        s = fail_rc(db, rc, msg);
    }
    s = finish_write(db, s, what);
    unlock_db(db);
    return s;
}

gt_status gt_db_cubin_programs(gt_db *db, const gt_db_bin_key *bk, gt_db_program_fn fn,
                               void *user) {
    if (!db) return GT_INVALID_VALUE;
    gt_status s = lock_db(db);
    if (s != GT_SUCCESS) return s;
    s = check_bin_key(db, bk, "cubin list");
    if (s == GT_SUCCESS && !fn) {
        set_error(db, "cache file '%s': cubin list: fn is NULL", db->path);
        s = GT_INVALID_VALUE;
    }
    if (s != GT_SUCCESS || db->readonly) {
        unlock_db(db);
        return s;
    }
    /* The prefix as a range of the primary key, [prefix, prefix with its last byte
     * raised): the index walks one class's programs, not every program of the source.
     * The range may hold more (a prefix cut to fit); the substr test decides. */
    char upper[512];
    size_t pl = strlen(bk->program);
    if (pl >= sizeof upper) pl = sizeof upper - 1;
    memcpy(upper, bk->program, pl);
    upper[pl] = 0;
    if (pl > 0 && (unsigned char)upper[pl - 1] < 0xff) upper[pl - 1]++;
    else if (pl + 1 < sizeof upper) upper[pl] = (char)0xff, upper[pl + 1] = 0;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->conn,
                                "SELECT program FROM cubins WHERE src_hash = ?1 AND "
                                "program >= ?2 AND program < ?6 AND "
                                "substr(program, 1, length(?2)) = ?2 AND arch = ?3 AND "
                                "nvrtc = ?4 AND driver = ?5 ORDER BY program",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) rc = bind_bin_key(st, bk);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 6, upper, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) {
        for (rc = step_first(db, st); rc == SQLITE_ROW; rc = sqlite3_step(st)) {
            const char *program = (const char *)sqlite3_column_text(st, 0);
            if (program && fn(program, user) != 0) {
                rc = SQLITE_DONE;
                break;
            }
        }
    }
    if (rc != SQLITE_DONE) {
        char what[320];
        snprintf(what, sizeof what, "cannot list the cubins of '%s'", bk->program);
        s = fail_rc(db, rc, what);
    }
    sqlite3_finalize(st);
    unlock_db(db);
    return s;
}

int64_t gt_db_cubin_count(gt_db *db) {
    if (!db) return -1;
    if (lock_db(db) != GT_SUCCESS) return -1;
    sqlite3_stmt *st = NULL;
    int rc = first_row(db, "SELECT count(*) FROM cubins", &st);
    int64_t n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) fail_rc(db, rc, "cannot count the cubins");
    unlock_db(db);
    return n;
}

/* ===================================================================================
 * Generation and kept states
 *
 * meta 'generation' counts the transactions that changed winners or timings (a store, a
 * merge that wrote, a prune), inside each: two reads that see one count see the same
 * rows. A state derived from those rows (the selector's class data, src/dispatch.c) is
 * kept in meta as 'state:NAME', a BLOB, with the fingerprint of what it came from inside
 * it (the caller's format): a new process reads it in one row instead of deriving it
 * again. No schema version goes with either (as with claims): a file without them reads
 * as generation 0 and no state.
 * =================================================================================== */

gt_status gt_db_generation(gt_db *db, long long gen[3]) {
    if (!db || !gen) return GT_INVALID_VALUE;
    gen[0] = gen[1] = gen[2] = 0;
    gt_status s = lock_db(db);
    if (s != GT_SUCCESS) return s;
    sqlite3_stmt *st = use(db, ST_GENERATION);
    int rc = st ? step_first(db, st) : SQLITE_MISUSE;
    if (rc == SQLITE_ROW)
        for (int i = 0; i < 3; i++) gen[i] = sqlite3_column_int64(st, i);
    done_stmt(st);
    if (rc != SQLITE_ROW) s = fail_rc(db, rc, "cannot read the generation");
    unlock_db(db);
    return s;
}

/* meta's key of state name into buf; GT_INVALID_VALUE, with the message, when it does
 * not fit. */
static gt_status state_key(gt_db *db, char *buf, size_t size, const char *name) {
    int n = snprintf(buf, size, STATE_PREFIX "%s", name);
    if (n > 0 && (size_t)n < size) return GT_SUCCESS;
    set_error(db, "cache file '%s': state name too long", db->path);
    return GT_INVALID_VALUE;
}

gt_status gt_db_state_get(gt_db *db, const char *name, void **data, size_t *size, int *found) {
    if (data) *data = NULL;
    if (size) *size = 0;
    if (found) *found = 0;
    if (!db || !name || !data || !size || !found) return GT_INVALID_VALUE;
    char key[320];
    gt_status s = state_key(db, key, sizeof key, name);
    if (s == GT_SUCCESS) s = lock_db(db);
    if (s != GT_SUCCESS) return s;
    sqlite3_stmt *st = use(db, ST_STATE_GET);
    int rc = sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = step_first(db, st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_BLOB) {
        const int n = sqlite3_column_bytes(st, 0);
        const void *p = sqlite3_column_blob(st, 0);
        if (n > 0 && p && (*data = malloc((size_t)n))) {
            memcpy(*data, p, (size_t)n);
            *size = (size_t)n;
            *found = 1;
        } else if (n > 0) {
            set_error(db, "cache file '%s': out of memory", db->path);
            s = GT_OUT_OF_MEMORY;
        }
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        s = fail_rc(db, rc, "cannot read a kept state");
    }
    done_stmt(st);
    unlock_db(db);
    return s;
}

gt_status gt_db_state_put(gt_db *db, const char *name, const void *data, size_t size) {
    if (!db || !name || !data || size == 0 || size > INT_MAX) return GT_INVALID_VALUE;
    char key[320];
    gt_status s = state_key(db, key, sizeof key, name);
    if (s == GT_SUCCESS) s = lock_db(db);
    if (s != GT_SUCCESS) return s;
    s = refuse_readonly(db, "keep a state");
    if (s != GT_SUCCESS) {
        unlock_db(db);
        return s;
    }
    int rc = begin_immediate(db);
    if (rc != SQLITE_OK) s = fail_rc(db, rc, "cannot keep a state");
    if (s == GT_SUCCESS) {
        sqlite3_stmt *st = use(db, ST_STATE_PUT);
        rc = sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK) rc = sqlite3_bind_blob(st, 2, data, (int)size, SQLITE_STATIC);
        if (rc == SQLITE_OK) rc = sqlite3_step(st);
        if (rc != SQLITE_DONE) s = fail_rc(db, rc, "cannot keep a state");
        done_stmt(st);
    }
    /* A state is written on a call's path (a class's first call that derived its data):
     * its few pages stay in the WAL, without the checkpoint's sync of the whole file,
     * which after the file was copied wrote hundreds of megabytes there; the next
     * commit of a tuning or a binary empties the WAL. */
    db->keep_wal = 1;
    s = finish_write(db, s, "a kept state");
    unlock_db(db);
    return s;
}

int gt_db_file_schema_version(gt_db *db) {
    if (!db) return -1;
    if (lock_db(db) != GT_SUCCESS) return -1;
    int version = -1;
    /* Read from the file, not remembered from open: another process with a newer
     * library may have migrated it since. */
    if (read_version(db, &version) != GT_SUCCESS) version = -1;
    unlock_db(db);
    return version;
}

/* Appends a, b (b may be NULL) into buf; 0 when it fits. */
static int join_path(char *buf, size_t size, const char *a, const char *b) {
    int n = snprintf(buf, size, "%s%s", a, b ? b : "");
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

gt_status gt_db_default_path(char *buf, size_t size) {
    if (!buf || size == 0) return GT_INVALID_VALUE;
    buf[0] = 0;
    const char *v = gt_env(GT_ENV_CACHE);
    int rc;
    if (v) {
        rc = join_path(buf, size, v, NULL);
    } else if ((v = gt_env(GT_ENV_XDG_CACHE_HOME))) {
        rc = join_path(buf, size, v, "/gemmtune/cache.db");
    } else if ((v = gt_env(GT_ENV_HOME))) {
        rc = join_path(buf, size, v, "/.cache/gemmtune/cache.db");
    } else {
        return GT_CACHE_ERROR;
    }
    if (rc != 0) {
        /* A truncated path would name some other file: give nothing rather than that. */
        buf[0] = 0;
        return GT_INVALID_VALUE;
    }
    return GT_SUCCESS;
}
