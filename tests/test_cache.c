/*
 * test_cache.c: tests of the SQLite cache (cache/db.h), no GPU needed.
 *
 * Each case works in its own directory under a mkdtemp() root in /tmp, removed at the
 * end. Raw sqlite3 calls appear only where a case must forge a file that the library
 * would never write (a newer schema, another program's database) or hold a lock.
 * Child processes (concurrent writers, the lock holder) leave with _exit() so they never
 * flush the parent's TAP output twice.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "files.h"
#include "key.h"
#include "tap.h"

/* ===================================================================================
 * Helpers
 * =================================================================================== */

static char root[256];

/* Case directories are short, so that every path built from them fits PATH_MAX. */
#define DIR_MAX 512

/* A fresh directory for one case; returns "root/name". */
static const char *case_dir(const char *name, char *buf, size_t size) {
    snprintf(buf, size, "%s/%s", root, name);
    mkdir(buf, 0755);
    return buf;
}

static void make_key(gt_key *k, int i) {
    memset(k, 0, sizeof *k);
    snprintf(k->device, sizeof k->device, "NVIDIA Test GPU 80GB");
    k->cc_major = 9;
    k->cc_minor = 0;
    k->sm_count = 132;
    k->dtype = GT_DT_F32;
    k->opa = 0;
    k->opb = 1;
    k->m = 64 + i;
    k->n = 128;
    k->k = 256;
    k->align = 16;
    k->beta0 = 0;
}

static void make_winner(gt_db_winner *w, const char *config, double time_us) {
    memset(w, 0, sizeof *w);
    snprintf(w->config, sizeof w->config, "%s", config);
    w->time_us = time_us;
    w->tflops = 12.5 + time_us;
    w->tuned_at = 1700000000;
    snprintf(w->nvrtc, sizeof w->nvrtc, "13.0");
    snprintf(w->driver, sizeof w->driver, "13000");
    snprintf(w->host, sizeof w->host, "node-17");
    snprintf(w->libver, sizeof w->libver, "0.1.0");
}

static void make_timing(gt_db_timing *t, const char *config, const char *status, double us,
                        const char *message) {
    memset(t, 0, sizeof *t);
    snprintf(t->config, sizeof t->config, "%s", config);
    snprintf(t->status, sizeof t->status, "%s", status);
    t->time_us = us;
    t->tflops = us > 0 ? 1000.0 / us : 0;
    snprintf(t->message, sizeof t->message, "%s", message);
}

static int winners_equal(const gt_db_winner *a, const gt_db_winner *b) {
    return strcmp(a->config, b->config) == 0 && a->time_us == b->time_us &&
           a->tflops == b->tflops && a->tuned_at == b->tuned_at &&
           strcmp(a->nvrtc, b->nvrtc) == 0 && strcmp(a->driver, b->driver) == 0 &&
           strcmp(a->host, b->host) == 0 && strcmp(a->libver, b->libver) == 0;
}

static gt_db *open_ok(const char *path, int readonly, int busy_ms) {
    gt_db *db = NULL;
    char msg[512];
    gt_status s = gt_db_open(path, readonly, busy_ms, &db, msg, sizeof msg);
    TAP_CHECK(s == GT_SUCCESS && db != NULL, "open %s: status %d: %s", path, s, msg);
    return s == GT_SUCCESS ? db : NULL;
}

/* Case name's cache file (its folder made) into path, opened writable: the handle, or
 * NULL after a failed check. */
static gt_db *case_db(const char *name, char *path, size_t size) {
    char dir[DIR_MAX];
    snprintf(path, size, "%s/cache.db", case_dir(name, dir, sizeof dir));
    return open_ok(path, 0, 0);
}


static int write_all(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    return fclose(f) == 0 && w == len ? 0 : -1;
}


static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}


/* The schema_version text in the meta table, read with raw SQLite, read-only. */
static void raw_meta_version(const char *path, char *buf, size_t size) {
    sqlite3 *c = NULL;
    sqlite3_stmt *st = NULL;
    buf[0] = 0;
    if (sqlite3_open_v2(path, &c, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(c, "SELECT value FROM meta WHERE key='schema_version'", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(c);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Deterministic junk that does not start with the SQLite header. */
static void fill_random(unsigned char *buf, size_t len, unsigned seed) {
    unsigned x = seed * 2654435761u + 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (unsigned char)x;
    }
    buf[0] = 'X';
}

/* Expects a refused open: GT_CACHE_ERROR, a message, no handle. */
static void expect_refused(const char *path, int readonly, const char *needle) {
    gt_db *db = (gt_db *)0x1;
    char msg[512] = "";
    gt_status s = gt_db_open(path, readonly, 0, &db, msg, sizeof msg);
    TAP_CHECK(s == GT_CACHE_ERROR, "%s (ro=%d): status %d", path, readonly, s);
    TAP_CHECK(db == NULL, "%s: handle not NULL on failure", path);
    TAP_CHECK(msg[0] != 0, "%s: no message", path);
    TAP_CHECK(strstr(msg, path) != NULL, "message does not name the file: %s", msg);
    if (needle) TAP_CHECK(strstr(msg, needle) != NULL, "message lacks '%s': %s", needle, msg);
    printf("# refused as expected: %s\n", msg);
    if (s == GT_SUCCESS) gt_db_close(db);
}

/* Collectors for gt_db_list and gt_db_timings. */
typedef struct {
    int n, stop_after;
    gt_key keys[512];
    char hashes[512][32];
    int majors[512];
    gt_db_winner winners[512];
} list_acc;

static int collect_winner(const gt_key *key, const char *src_hash, int lib_major,
                          const gt_db_winner *w, void *user) {
    list_acc *a = user;
    if (a->n < 512) {
        a->keys[a->n] = *key;
        snprintf(a->hashes[a->n], sizeof a->hashes[a->n], "%s", src_hash);
        a->majors[a->n] = lib_major;
        a->winners[a->n] = *w;
    }
    a->n++;
    return a->stop_after > 0 && a->n >= a->stop_after;
}

typedef struct {
    int n, stop_after;
    gt_db_timing t[16];
} timing_acc;

static int collect_timing(const gt_db_timing *t, void *user) {
    timing_acc *a = user;
    if (a->n < 16) a->t[a->n] = *t;
    a->n++;
    return a->stop_after > 0 && a->n >= a->stop_after;
}

static const char *HASH = "src0123abcd";

/* ===================================================================================
 * Cases
 * =================================================================================== */

/* 1. What is stored comes back identical after reopening, and only under its exact key. */
static void test_round_trip(void) {
    char dir[DIR_MAX], path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cache.db", case_dir("round_trip", dir, sizeof dir));
    gt_key key;
    make_key(&key, 0);
    gt_db_winner w, got;
    make_winner(&w, "f0_128x128x16_w32x64_t8x8_s3_v4_k1_r8", 123.456789);
    gt_db_timing t[3];
    make_timing(&t[0], "f0_128x128x16_w32x64_t8x8_s3_v4_k1_r8", "ok", 123.456789, "");
    make_timing(&t[1], "f0_64x64x8_w32x16_t4x4_s2_v2_k1_r1", "ok", 200.25, "");
    make_timing(&t[2], "f0_256x128x32_w64x32_t8x8_s4_v4_k1_r8", "compile_failed", -1,
                "too many registers");

    gt_db *db = open_ok(path, 0, 0);
    if (!db) return;
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, t, 3) == GT_SUCCESS, "store: %s",
              gt_db_errmsg(db));
    gt_db_close(db);

    db = open_ok(path, 0, 0);
    if (!db) return;
    int found = 0;
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS, "lookup: %s",
              gt_db_errmsg(db));
    TAP_CHECK(found == 1, "stored key not found");
    TAP_CHECK(found && winners_equal(&w, &got), "fields differ: config '%s' time %.17g", got.config,
              got.time_us);

    timing_acc acc = {0};
    TAP_CHECK(gt_db_timings(db, &key, HASH, 0, collect_timing, &acc) == GT_SUCCESS,
              "timings: %s", gt_db_errmsg(db));
    TAP_CHECK(acc.n == 3, "expected 3 timings, got %d", acc.n);
    if (acc.n == 3) {
        TAP_CHECK(strcmp(acc.t[0].config, t[0].config) == 0 && acc.t[0].time_us == t[0].time_us &&
                      acc.t[0].tflops == t[0].tflops && strcmp(acc.t[0].status, "ok") == 0,
                  "timing 0 differs: %s", acc.t[0].config);
        TAP_CHECK(strcmp(acc.t[1].config, t[1].config) == 0 && acc.t[1].time_us == 200.25,
                  "timing 1 differs: %s", acc.t[1].config);
        TAP_CHECK(strcmp(acc.t[2].config, t[2].config) == 0 &&
                      strcmp(acc.t[2].status, "compile_failed") == 0 && acc.t[2].time_us == -1 &&
                      strcmp(acc.t[2].message, "too many registers") == 0,
                  "timing 2 differs: %s %s '%s'", acc.t[2].config, acc.t[2].status,
                  acc.t[2].message);
    }

    /* Every key field, the source hash and the library major are part of the key. */
    static const char *fields[] = {"device", "cc_major", "cc_minor", "sms",   "opa",
                                   "opb",    "m",        "n",        "k",     "align",
                                   "beta0",  "src_hash", "lib_major"};
    for (int f = 0; f < (int)(sizeof fields / sizeof fields[0]); f++) {
        gt_key other = key;
        const char *hash = HASH;
        int major = 0;
        switch (f) {
        case 0: snprintf(other.device, sizeof other.device, "NVIDIA Test GPU 40GB"); break;
        case 1: other.cc_major = 8; break;
        case 2: other.cc_minor = 1; break;
        case 3: other.sm_count = 108; break;
        case 4: other.opa = 1; break;
        case 5: other.opb = 0; break;
        case 6: other.m++; break;
        case 7: other.n++; break;
        case 8: other.k++; break;
        case 9: other.align = 8; break;
        case 10: other.beta0 = 1; break;
        case 11: hash = "src0123abce"; break;
        case 12: major = 1; break;
        }
        found = 1;
        gt_status s = gt_db_lookup(db, &other, hash, major, &got, &found);
        TAP_CHECK(s == GT_SUCCESS && found == 0, "changed %s: status %d found %d", fields[f], s,
                  found);
        acc.n = 0;
        TAP_CHECK(gt_db_timings(db, &other, hash, major, collect_timing, &acc) == GT_SUCCESS &&
                      acc.n == 0,
                  "changed %s: %d timings", fields[f], acc.n);
    }

    /* The dtype column is tested with a row forged under a type this library does not
     * know (a newer one's, say): it must neither collide with (primary key) nor be returned
     * for the f32 key, and listing skips it. */
    gt_db_close(db);
    int rc = raw_exec(path, "INSERT INTO winners SELECT device, cc, sms, 'f8', opa, opb, m, n, "
                            "k, align, beta0, src_hash, lib_major, 'f8config', time_us, tflops, "
                            "tuned_at, nvrtc, driver, host, libver FROM winners");
    TAP_CHECK(rc == SQLITE_OK, "forging an f8 row: rc %d", rc);
    db = open_ok(path, 0, 0);
    if (!db) return;
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                  strcmp(got.config, w.config) == 0,
              "f32 lookup returned '%s'", got.config);
    gt_key bad = key;
    bad.dtype = GT_NDTYPES;
    found = 1;
    TAP_CHECK(gt_db_lookup(db, &bad, HASH, 0, &got, &found) == GT_INVALID_VALUE && found == 0,
              "unknown dtype accepted");
    list_acc *la = calloc(1, sizeof *la);
    TAP_CHECK(gt_db_list(db, collect_winner, la) == GT_SUCCESS, "list: %s", gt_db_errmsg(db));
    TAP_CHECK(la->n == 1, "list shows %d rows; the f8 row must be skipped", la->n);
    TAP_CHECK(la->n >= 1 && gt_key_equal(&la->keys[0], &key) &&
                  strcmp(la->hashes[0], HASH) == 0 && la->majors[0] == 0 &&
                  winners_equal(&la->winners[0], &w),
              "listed row differs from the stored one");
    free(la);
    gt_db_close(db);
}

/* 2. A second store replaces the winner; timings are upserted by config. */
static void test_replace(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("replace", path, sizeof path);
    if (!db) return;
    gt_key key;
    make_key(&key, 3);
    gt_db_winner a, b, got;
    make_winner(&a, "cfgA", 10);
    make_winner(&b, "cfgB", 8);
    snprintf(b.host, sizeof b.host, "node-99");
    gt_db_timing t1[2], t2[2];
    make_timing(&t1[0], "cfgA", "ok", 10, "");
    make_timing(&t1[1], "cfgC", "ok", 30, "");
    make_timing(&t2[0], "cfgC", "verify_failed", -1, "max error 1e-2");
    make_timing(&t2[1], "cfgB", "ok", 8, "");
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &a, t1, 2) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &b, t2, 2) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    int found = 0;
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found, "lookup");
    TAP_CHECK(winners_equal(&got, &b), "second store did not win: '%s' host '%s'", got.config,
              got.host);

    timing_acc acc = {0};
    TAP_CHECK(gt_db_timings(db, &key, HASH, 0, collect_timing, &acc) == GT_SUCCESS, "timings");
    TAP_CHECK(acc.n == 3, "expected 3 distinct configs, got %d", acc.n);
    if (acc.n == 3) {
        /* ok rows by time ascending (B 8, A 10), then the failed C, whose row was replaced. */
        TAP_CHECK(strcmp(acc.t[0].config, "cfgB") == 0 && strcmp(acc.t[1].config, "cfgA") == 0 &&
                      strcmp(acc.t[2].config, "cfgC") == 0,
                  "order %s %s %s", acc.t[0].config, acc.t[1].config, acc.t[2].config);
        TAP_CHECK(strcmp(acc.t[2].status, "verify_failed") == 0 &&
                      strcmp(acc.t[2].message, "max error 1e-2") == 0 && acc.t[2].time_us == -1,
                  "cfgC not replaced: %s '%s'", acc.t[2].status, acc.t[2].message);
    }

    /* Timings alone leave the winner as it is. */
    gt_db_timing t3;
    make_timing(&t3, "cfgD", "ok", 9, "");
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, NULL, &t3, 1) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                  strcmp(got.config, "cfgB") == 0,
              "timings-only store changed the winner to '%s'", got.config);
    acc.n = 0;
    acc.stop_after = 2;
    TAP_CHECK(gt_db_timings(db, &key, HASH, 0, collect_timing, &acc) == GT_SUCCESS, "timings");
    TAP_CHECK(acc.n == 2 && strcmp(acc.t[0].config, "cfgB") == 0 &&
                  strcmp(acc.t[1].config, "cfgD") == 0,
              "stop after 2: n %d, %s %s", acc.n, acc.t[0].config, acc.t[1].config);
    gt_db_close(db);
}

/* 3. Fresh files carry our version; a newer one is refused and left untouched. */
static void test_schema_version(void) {
    char dir[DIR_MAX], path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cache.db", case_dir("schema", dir, sizeof dir));
    gt_db *db = open_ok(path, 0, 0);
    if (!db) return;
    TAP_CHECK(gt_db_file_schema_version(db) == GT_DB_SCHEMA_VERSION, "fresh file version %d",
              gt_db_file_schema_version(db));
    gt_key key;
    make_key(&key, 0);
    gt_db_winner w;
    make_winner(&w, "cfg", 1);
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "store");
    gt_db_close(db);

    char sql[128], want[16], now[16];
    snprintf(sql, sizeof sql, "UPDATE meta SET value='%d' WHERE key='schema_version'",
             GT_DB_SCHEMA_VERSION + 1);
    TAP_CHECK(raw_exec(path, sql) == SQLITE_OK, "forging a newer version");
    snprintf(want, sizeof want, "%d", GT_DB_SCHEMA_VERSION + 1);

    size_t len = 0;
    unsigned char *before = read_all(path, &len);
    struct stat st0, st1;
    stat(path, &st0);
    TAP_CHECK(before && len > 0, "cannot read %s", path);
    expect_refused(path, 0, "newer");
    expect_refused(path, 1, "newer");
    stat(path, &st1);
    TAP_CHECK(before && same_bytes(path, before, len), "refused file was modified");
    TAP_CHECK(st0.st_mtim.tv_sec == st1.st_mtim.tv_sec && st0.st_mtim.tv_nsec == st1.st_mtim.tv_nsec,
              "mtime changed");
    raw_meta_version(path, now, sizeof now);
    TAP_CHECK(strcmp(now, want) == 0, "meta schema_version is now '%s'", now);
    free(before);

    /* This version's number over tables that lack a column the statements use: refused at
     * open, though the statements are prepared at their first use. */
    char other[PATH_MAX];
    snprintf(other, sizeof other, "%s/columns.db", dir);
    db = open_ok(other, 0, 0);
    if (db) gt_db_close(db);
    TAP_CHECK(raw_exec(other, "ALTER TABLE timings DROP COLUMN message") == SQLITE_OK,
              "dropping a column");
    expect_refused(other, 0, "schema");
    expect_refused(other, 1, "schema");
}

/* 4. Corrupt, truncated, empty and foreign files. */
static void test_corrupt_files(void) {
    char dir[DIR_MAX], path[PATH_MAX];
    case_dir("corrupt", dir, sizeof dir);

    /* Random bytes: refused, unchanged. */
    unsigned char junk[8192];
    fill_random(junk, sizeof junk, 42);
    snprintf(path, sizeof path, "%s/random.db", dir);
    TAP_CHECK(write_all(path, junk, sizeof junk) == 0, "write %s", path);
    expect_refused(path, 0, NULL);
    expect_refused(path, 1, NULL);
    TAP_CHECK(same_bytes(path, junk, sizeof junk), "random file was modified");

    /* A valid cache of several pages, then truncated copies of it. */
    char valid[PATH_MAX];
    snprintf(valid, sizeof valid, "%s/valid.db", dir);
    gt_db *db = open_ok(valid, 0, 0);
    if (!db) return;
    for (int i = 0; i < 200; i++) {
        gt_key key;
        make_key(&key, i);
        gt_db_winner w;
        make_winner(&w, "some_reasonably_long_configuration_text_to_fill_pages", i);
        gt_db_timing t[2];
        make_timing(&t[0], "cfg_a_with_some_length_to_fill_pages", "ok", i + 1, "");
        make_timing(&t[1], "cfg_b_with_some_length_to_fill_pages", "launch_failed", -1,
                    "too many resources requested for launch");
        if (gt_db_store(db, &key, HASH, 0, &w, t, 2) != GT_SUCCESS) {
            TAP_CHECK(0, "store %d: %s", i, gt_db_errmsg(db));
            break;
        }
    }
    gt_db_close(db);
    size_t vlen = 0;
    unsigned char *vbytes = read_all(valid, &vlen);
    TAP_CHECK(vbytes && vlen > 8 * 4096, "valid cache only %zu bytes", vlen);
    if (!vbytes) return;

    snprintf(path, sizeof path, "%s/trunc1000.db", dir);
    write_all(path, vbytes, 1000);
    expect_refused(path, 0, NULL);
    expect_refused(path, 1, NULL);
    TAP_CHECK(same_bytes(path, vbytes, 1000), "truncated file was modified");

    /* Cut after a few whole pages: the first page is intact, the tables are not. */
    snprintf(path, sizeof path, "%s/trunc_pages.db", dir);
    write_all(path, vbytes, 3 * 4096);
    expect_refused(path, 0, NULL);

    /* Garbage over the later pages of an otherwise valid file. */
    snprintf(path, sizeof path, "%s/garbled.db", dir);
    unsigned char *garbled = malloc(vlen);
    memcpy(garbled, vbytes, vlen);
    fill_random(garbled + 2 * 4096, vlen - 2 * 4096, 7);
    write_all(path, garbled, vlen);
    expect_refused(path, 0, NULL);
    TAP_CHECK(same_bytes(path, garbled, vlen), "garbled file was modified");
    /* Only the last pages (table rows, far from the schema) damaged: the open-time walk
     * over the tables must find it. */
    memcpy(garbled, vbytes, vlen);
    fill_random(garbled + vlen - 3 * 4096, 3 * 4096, 9);
    snprintf(path, sizeof path, "%s/garbled_tail.db", dir);
    write_all(path, garbled, vlen);
    expect_refused(path, 0, "corrupt");
    free(garbled);
    free(vbytes);

    /* Empty file: SQLite treats it as new, so it becomes a cache. */
    snprintf(path, sizeof path, "%s/empty.db", dir);
    write_all(path, "", 0);
    db = open_ok(path, 0, 0);
    if (db) {
        gt_key key;
        make_key(&key, 1);
        gt_db_winner w, got;
        make_winner(&w, "cfg_empty", 3);
        int found = 0;
        TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "%s",
                  gt_db_errmsg(db));
        TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                      winners_equal(&w, &got),
                  "empty file: stored row not found");
        TAP_CHECK(gt_db_file_schema_version(db) == GT_DB_SCHEMA_VERSION, "version");
        gt_db_close(db);
    }

    /* Another program's SQLite file: refused, not written into. */
    snprintf(path, sizeof path, "%s/foreign.db", dir);
    TAP_CHECK(raw_exec(path, "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);"
                             "INSERT INTO users(name) VALUES('alice');") == SQLITE_OK,
              "forging a foreign file");
    size_t flen = 0;
    unsigned char *fbytes = read_all(path, &flen);
    expect_refused(path, 0, "another program");
    expect_refused(path, 1, NULL);
    TAP_CHECK(fbytes && same_bytes(path, fbytes, flen), "foreign file was modified");
    free(fbytes);

    /* A meta table without a schema version is not ours either. */
    snprintf(path, sizeof path, "%s/nometa.db", dir);
    raw_exec(path, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                   "INSERT INTO meta VALUES('owner', 'someone else');");
    expect_refused(path, 0, "schema_version");
}

/* 5. Read-only handles read and never write. */

/* The part that needs the OS to refuse writes: in a directory chmod 0555, a read-only
 * handle still reads (no -shm can be created there), and writable opens are refused.
 * Returns nonzero when a check failed. */
static int readonly_dir_checks(const char *dir, const char *path, const gt_key *key,
                               const gt_db_winner *w) {
    gt_db *db = open_ok(path, 1, 0);
    if (db) {
        gt_db_winner got;
        int found = 0;
        TAP_CHECK(gt_db_lookup(db, key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                      winners_equal(w, &got),
                  "lookup in a read-only directory: %s", gt_db_errmsg(db));
        TAP_CHECK(gt_db_store(db, key, HASH, 0, w, NULL, 0) == GT_CACHE_ERROR, "store");
        gt_db_close(db);
    }
    /* Writable opens: a new file cannot be created, an existing one cannot be written. */
    char newpath[PATH_MAX];
    snprintf(newpath, sizeof newpath, "%s/new.db", dir);
    expect_refused(newpath, 0, NULL);
    TAP_CHECK(!exists(newpath), "file created in a read-only directory");
    expect_refused(path, 0, NULL);
    return tap_case_failed;
}

static void test_readonly(void) {
    char dir[DIR_MAX], path[PATH_MAX];
    case_dir("readonly", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/cache.db", dir);
    gt_key key;
    make_key(&key, 5);
    gt_db_winner w, got;
    make_winner(&w, "cfg_ro", 5);
    gt_db *db = open_ok(path, 0, 0);
    if (!db) return;
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "store");
    gt_db_close(db);
    chmod(path, 0644);
    TAP_CHECK(chmod(dir, 0555) == 0, "chmod: %s", strerror(errno));

    /* Read-only open semantics, whoever runs the test. */
    size_t len = 0;
    unsigned char *before = read_all(path, &len);
    db = open_ok(path, 1, 0);
    if (db) {
        int found = 0;
        TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                      winners_equal(&w, &got),
                  "read-only lookup: %s", gt_db_errmsg(db));
        gt_key k2;
        make_key(&k2, 6);
        gt_db_winner w2;
        make_winner(&w2, "cfg_new", 1);
        gt_status s = gt_db_store(db, &k2, HASH, 0, &w2, NULL, 0);
        TAP_CHECK(s == GT_CACHE_ERROR, "store on a read-only handle: status %d", s);
        TAP_CHECK(strstr(gt_db_errmsg(db), "read-only") && strstr(gt_db_errmsg(db), path),
                  "message: %s", gt_db_errmsg(db));
        TAP_CHECK(gt_db_lookup(db, &k2, HASH, 0, &got, &found) == GT_SUCCESS && !found,
                  "refused store left a row");
        TAP_CHECK(gt_db_file_schema_version(db) == GT_DB_SCHEMA_VERSION, "version");
        gt_db_close(db);
    }
    TAP_CHECK(before && same_bytes(path, before, len), "read-only use modified the file");
    free(before);

    /* Directory permissions do not stop root: then the checks run in a child that drops
     * to nobody, and are skipped (with a comment) only if it cannot. */
    if (geteuid() != 0) {
        readonly_dir_checks(dir, path, &key, &w);
    } else {
        chmod(root, 0755); /* mkdtemp made it 0700: nobody must be able to pass through */
        /* The file is nobody's own, as a user's cache is: SQLite then wants to create the
         * -shm file, which the directory refuses (a file it cannot write at all takes
         * another path inside SQLite). */
        TAP_CHECK(chown(path, 65534, 65534) == 0, "chown: %s", strerror(errno));
        /* Root's read-only handle above left an empty -wal and a -shm beside the file
         * (a read-only connection never removes them); a shipped cache has neither. */
        char side[PATH_MAX + 8];
        snprintf(side, sizeof side, "%s-wal", path);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", path);
        unlink(side);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
                _exit(77);
            int failed = readonly_dir_checks(dir, path, &key, &w);
            fflush(stdout);
            _exit(failed ? 1 : 0);
        }
        int status = 0;
        if (pid > 0) waitpid(pid, &status, 0);
        if (pid < 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 77))
            printf("# running as root and cannot drop to uid 65534: read-only directory "
                   "checks skipped\n");
        else
            TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "read-only directory checks as uid 65534 failed (status 0x%x)", status);
        chmod(root, 0700);
    }
    chmod(dir, 0755);

    /* A missing file cannot be opened read-only, and is not created. */
    char missing[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/missing.db", dir);
    expect_refused(missing, 1, NULL);
    TAP_CHECK(!exists(missing), "read-only open created the file");

    /* An empty file has schema version 0, which a read-only handle cannot upgrade. */
    char empty[PATH_MAX];
    snprintf(empty, sizeof empty, "%s/empty.db", dir);
    write_all(empty, "", 0);
    expect_refused(empty, 1, "older");
}

/* 6. A writable path in directories that do not exist yet. */
static void test_nested_dir(void) {
    char dir[DIR_MAX], path[PATH_MAX], sub[2 * DIR_MAX];
    case_dir("nested", dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/a/b/c", dir);
    snprintf(path, sizeof path, "%s/cache.db", sub);
    gt_db *db = open_ok(path, 0, 0);
    if (!db) return;
    struct stat st;
    TAP_CHECK(stat(sub, &st) == 0 && S_ISDIR(st.st_mode), "%s not created", sub);
    TAP_CHECK((st.st_mode & 0777) == 0700, "new directory mode %o", st.st_mode & 0777);
    gt_key key;
    make_key(&key, 0);
    gt_db_winner w;
    make_winner(&w, "cfg", 1);
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    gt_db_close(db);
    TAP_CHECK(exists(path), "cache file missing");

    /* A file where a directory should be is an error. */
    char blocked[PATH_MAX];
    snprintf(blocked, sizeof blocked, "%s/cache.db/x/cache.db", sub);
    expect_refused(blocked, 0, NULL);
}

/* 7. Several processes write one file at once, from the very first open. */
#ifndef WRITERS
#define WRITERS 4
#endif
#define KEYS_PER_WRITER 100

static void shared_key(gt_key *k) {
    make_key(k, 0);
    snprintf(k->device, sizeof k->device, "Shared GPU");
}

static int writer_child(const char *path, int id, int barrier) {
    char c;
    if (read(barrier, &c, 1) < 0) return 9; /* returns 0 (EOF) once the parent lets go */
    gt_db *db = NULL;
    char msg[512];
    if (gt_db_open(path, 0, 0, &db, msg, sizeof msg) != GT_SUCCESS) {
        fprintf(stderr, "# writer %d: open: %s\n", id, msg);
        return 1;
    }
    gt_key key, shared;
    shared_key(&shared);
    for (int i = 0; i < KEYS_PER_WRITER; i++) {
        char cfg[64];
        make_key(&key, id * 1000 + i);
        snprintf(cfg, sizeof cfg, "w%d_%d", id, i);
        gt_db_winner w;
        make_winner(&w, cfg, i);
        gt_db_timing t;
        make_timing(&t, cfg, "ok", i, "");
        if (gt_db_store(db, &key, HASH, 0, &w, &t, 1) != GT_SUCCESS ||
            gt_db_store(db, &shared, HASH, 0, &w, &t, 1) != GT_SUCCESS) {
            fprintf(stderr, "# writer %d: store %d: %s\n", id, i, gt_db_errmsg(db));
            gt_db_close(db);
            return 2;
        }
    }
    gt_db_close(db);
    return 0;
}

static int count_shared(const gt_key *key, const char *h, int major, const gt_db_winner *w,
                        void *user) {
    (void)h, (void)major, (void)w;
    int *counts = user;
    counts[0]++;
    if (strcmp(key->device, "Shared GPU") == 0) counts[1]++;
    return 0;
}

static void test_concurrent_writers(void) {
    char dir[DIR_MAX], path[PATH_MAX];
    snprintf(path, sizeof path, "%s/sub/cache.db", case_dir("writers", dir, sizeof dir));
    int barrier[2];
    if (pipe(barrier) != 0) TAP_SKIP("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pids[WRITERS];
    for (int id = 0; id < WRITERS; id++) {
        pids[id] = fork();
        if (pids[id] == 0) {
            close(barrier[1]);
            _exit(writer_child(path, id, barrier[0]));
        }
        TAP_CHECK(pids[id] > 0, "fork: %s", strerror(errno));
    }
    close(barrier[0]);
    double t0 = now_s();
    close(barrier[1]); /* all children start together */
    for (int id = 0; id < WRITERS; id++) {
        if (pids[id] <= 0) continue;
        int status = 0;
        waitpid(pids[id], &status, 0);
        TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "writer %d ended with status 0x%x", id, status);
    }
    printf("# %d writers x %d keys: %.2f s\n", WRITERS, KEYS_PER_WRITER, now_s() - t0);

    gt_db *db = open_ok(path, 1, 0);
    if (!db) return;
    int missing = 0;
    for (int id = 0; id < WRITERS; id++)
        for (int i = 0; i < KEYS_PER_WRITER; i++) {
            gt_key key;
            make_key(&key, id * 1000 + i);
            gt_db_winner got;
            int found = 0;
            char cfg[64];
            snprintf(cfg, sizeof cfg, "w%d_%d", id, i);
            if (gt_db_lookup(db, &key, HASH, 0, &got, &found) != GT_SUCCESS || !found ||
                strcmp(got.config, cfg) != 0)
                missing++;
        }
    TAP_CHECK(missing == 0, "%d keys missing or wrong", missing);
    int counts[2] = {0, 0};
    TAP_CHECK(gt_db_list(db, count_shared, counts) == GT_SUCCESS, "list");
    TAP_CHECK(counts[0] == WRITERS * KEYS_PER_WRITER + 1, "list has %d rows", counts[0]);
    TAP_CHECK(counts[1] == 1, "shared key has %d winner rows", counts[1]);
    gt_db_close(db);
}

/* 8. The default location follows the environment. */
static void test_default_path(void) {
    static const char *vars[] = {"GEMMTUNE_CACHE", "XDG_CACHE_HOME", "HOME"};
    char *saved[3];
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
    }
    char buf[PATH_MAX];

    setenv("GEMMTUNE_CACHE", "/opt/gt/mine.db", 1);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    setenv("HOME", "/home/u", 1);
    TAP_CHECK(gt_db_default_path(buf, sizeof buf) == GT_SUCCESS &&
                  strcmp(buf, "/opt/gt/mine.db") == 0,
              "GEMMTUNE_CACHE: '%s'", buf);

    setenv("GEMMTUNE_CACHE", "", 1);
    TAP_CHECK(gt_db_default_path(buf, sizeof buf) == GT_SUCCESS &&
                  strcmp(buf, "/xdg/gemmtune/cache.db") == 0,
              "XDG (GEMMTUNE_CACHE empty): '%s'", buf);
    unsetenv("GEMMTUNE_CACHE");
    TAP_CHECK(gt_db_default_path(buf, sizeof buf) == GT_SUCCESS &&
                  strcmp(buf, "/xdg/gemmtune/cache.db") == 0,
              "XDG: '%s'", buf);

    setenv("XDG_CACHE_HOME", "", 1);
    TAP_CHECK(gt_db_default_path(buf, sizeof buf) == GT_SUCCESS &&
                  strcmp(buf, "/home/u/.cache/gemmtune/cache.db") == 0,
              "HOME (XDG empty): '%s'", buf);
    unsetenv("XDG_CACHE_HOME");
    TAP_CHECK(gt_db_default_path(buf, sizeof buf) == GT_SUCCESS &&
                  strcmp(buf, "/home/u/.cache/gemmtune/cache.db") == 0,
              "HOME: '%s'", buf);

    /* Too small a buffer: no truncated path. */
    char small[10];
    TAP_CHECK(gt_db_default_path(small, sizeof small) != GT_SUCCESS && small[0] == 0,
              "truncated path returned: '%s'", small);

    setenv("HOME", "", 1);
    TAP_CHECK(gt_db_default_path(buf, sizeof buf) == GT_CACHE_ERROR, "HOME empty");
    unsetenv("HOME");
    TAP_CHECK(gt_db_default_path(buf, sizeof buf) == GT_CACHE_ERROR, "nothing set");

    for (int i = 0; i < 3; i++) {
        if (saved[i]) setenv(vars[i], saved[i], 1);
        else unsetenv(vars[i]);
        free(saved[i]);
    }
}

/* 9. gt_db_list orders by device, dtype, m, n, k, ops and stops when asked. */
static void test_list_order(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("list", path, sizeof path);
    if (!db) return;
    /* Stored in scrambled order; expected order is the array index order below. */
    struct { const char *dev; int64_t m, n, k; int opa, opb; } rows[] = {
        {"A100", 64, 64, 64, 0, 0},    {"A100", 64, 64, 64, 1, 0},
        {"A100", 64, 128, 32, 0, 0},   {"A100", 128, 8, 8, 0, 0},
        {"H100", 8, 8, 8, 0, 1},       {"H100", 8, 8, 16, 0, 0},
    };
    int n = (int)(sizeof rows / sizeof rows[0]);
    int store_order[] = {4, 1, 5, 0, 3, 2};
    for (int j = 0; j < n; j++) {
        int i = store_order[j];
        gt_key key;
        make_key(&key, 0);
        snprintf(key.device, sizeof key.device, "%s", rows[i].dev);
        key.m = rows[i].m, key.n = rows[i].n, key.k = rows[i].k;
        key.opa = rows[i].opa, key.opb = rows[i].opb;
        char cfg[16];
        snprintf(cfg, sizeof cfg, "row%d", i);
        gt_db_winner w;
        make_winner(&w, cfg, i);
        TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "%s",
                  gt_db_errmsg(db));
    }
    list_acc *acc = calloc(1, sizeof *acc);
    TAP_CHECK(gt_db_list(db, collect_winner, acc) == GT_SUCCESS, "list");
    TAP_CHECK(acc->n == n, "listed %d of %d", acc->n, n);
    for (int i = 0; i < n && i < acc->n; i++) {
        char cfg[16];
        snprintf(cfg, sizeof cfg, "row%d", i);
        TAP_CHECK(strcmp(acc->winners[i].config, cfg) == 0, "position %d holds %s", i,
                  acc->winners[i].config);
        TAP_CHECK(acc->keys[i].m == rows[i].m && acc->keys[i].opa == rows[i].opa &&
                      acc->keys[i].opb == rows[i].opb && acc->keys[i].cc_major == 9 &&
                      acc->keys[i].cc_minor == 0 && acc->keys[i].sm_count == 132 &&
                      acc->keys[i].align == 16 && acc->keys[i].dtype == GT_DT_F32,
                  "key %d read back wrong", i);
    }
    memset(acc, 0, sizeof *acc);
    acc->stop_after = 2;
    TAP_CHECK(gt_db_list(db, collect_winner, acc) == GT_SUCCESS, "list with stop");
    TAP_CHECK(acc->n == 2, "fn asked to stop after 2 calls, was called %d times", acc->n);
    TAP_CHECK(strcmp(acc->winners[1].config, "row1") == 0, "second row %s",
              acc->winners[1].config);
    free(acc);
    gt_db_close(db);
}

/* 10. A lock held beyond the busy timeout gives a bounded, clean error. */
static void test_locked_file(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("locked", path, sizeof path);
    if (!db) return;
    gt_db_close(db);

    int ready[2], go[2];
    if (pipe(ready) != 0 || pipe(go) != 0) TAP_SKIP("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        close(go[1]);
        sqlite3 *c = NULL;
        int rc = sqlite3_open(path, &c);
        if (rc == SQLITE_OK) rc = sqlite3_exec(c, "BEGIN EXCLUSIVE", NULL, NULL, NULL);
        char r = rc == SQLITE_OK ? 'L' : 'E';
        if (write(ready[1], &r, 1) != 1) _exit(3);
        char x;
        if (read(go[0], &x, 1) < 0) _exit(4); /* EOF or a byte: release */
        sqlite3_exec(c, "COMMIT", NULL, NULL, NULL);
        sqlite3_close(c);
        _exit(rc == SQLITE_OK ? 0 : 1);
    }
    close(ready[1]);
    close(go[0]);
    if (pid < 0) {
        close(ready[0]);
        close(go[1]);
        TAP_SKIP("fork: %s", strerror(errno));
    }
    char r = 0;
    TAP_CHECK(read(ready[0], &r, 1) == 1 && r == 'L', "lock holder failed (%c)", r);

    db = open_ok(path, 0, 200);
    gt_key key;
    make_key(&key, 10);
    gt_db_winner w, got;
    make_winner(&w, "cfg_locked", 1);
    if (db) {
        double t0 = now_s();
        gt_status s = gt_db_store(db, &key, HASH, 0, &w, NULL, 0);
        double dt = now_s() - t0;
        const char *m = gt_db_errmsg(db);
        TAP_CHECK(s == GT_CACHE_ERROR, "store under a foreign lock: status %d", s);
        TAP_CHECK(dt >= 0.15 && dt < 3.0, "store took %.3f s with a 200 ms busy timeout", dt);
        TAP_CHECK(strstr(m, path) && strstr(m, "locked") && strstr(m, "200 ms"), "message: %s",
                  m);
        TAP_CHECK(!strstr(m, "database is locked"), "SQLite's wording escaped: %s", m);
        printf("# locked: %.3f s: %s\n", dt, m);
        /* Reads still work while another process writes (WAL). */
        int found = 1;
        TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && !found,
                  "lookup during the lock: %s", gt_db_errmsg(db));
    }
    TAP_CHECK(write(go[1], "g", 1) == 1, "release");
    close(go[1]);
    close(ready[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "lock holder status 0x%x", status);
    if (db) {
        TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS,
                  "store after release: %s", gt_db_errmsg(db));
        int found = 0;
        TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found,
                  "row stored after release not found");
        gt_db_close(db);
    }
}

/* 11. Bad arguments give GT_INVALID_VALUE; a callback may not re-enter its handle. */
static int reenter(const gt_key *key, const char *h, int major, const gt_db_winner *w,
                   void *user) {
    (void)w;
    gt_db *db = user;
    gt_db_winner got;
    int found = 0;
    return gt_db_lookup(db, key, h, major, &got, &found) == GT_INVALID_VALUE ? 1 : 2;
}

static int reenter_result;
static int reenter_outer(const gt_key *key, const char *h, int major, const gt_db_winner *w,
                         void *user) {
    reenter_result = reenter(key, h, major, w, user);
    return 1;
}

static void test_invalid_args(void) {
    char dir[DIR_MAX], path[PATH_MAX], msg[256];
    snprintf(path, sizeof path, "%s/cache.db", case_dir("invalid", dir, sizeof dir));
    gt_db *db = (gt_db *)0x1;
    TAP_CHECK(gt_db_open(NULL, 0, 0, &db, msg, sizeof msg) == GT_INVALID_VALUE && !db, "NULL path");
    TAP_CHECK(gt_db_open("", 0, 0, &db, msg, sizeof msg) == GT_INVALID_VALUE, "empty path");
    TAP_CHECK(gt_db_open(path, 0, 0, NULL, msg, sizeof msg) == GT_INVALID_VALUE, "NULL out");
    gt_db_close(NULL); /* a no-op */
    TAP_CHECK(gt_db_file_schema_version(NULL) < 0, "version of NULL");

    db = open_ok(path, 0, 0);
    if (!db) return;
    gt_key key;
    make_key(&key, 0);
    gt_db_winner w, got;
    make_winner(&w, "cfg", 1);
    int found;
    TAP_CHECK(gt_db_store(db, &key, NULL, 0, &w, NULL, 0) == GT_INVALID_VALUE, "NULL hash");
    TAP_CHECK(gt_db_store(db, NULL, HASH, 0, &w, NULL, 0) == GT_INVALID_VALUE, "NULL key");
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 2) == GT_INVALID_VALUE, "NULL timings");
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, NULL, &found) == GT_INVALID_VALUE, "NULL out");
    gt_key bad = key;
    bad.opa = 2;
    TAP_CHECK(gt_db_store(db, &bad, HASH, 0, &w, NULL, 0) == GT_INVALID_VALUE, "opa 2");
    TAP_CHECK(strstr(gt_db_errmsg(db), "0 (N) or 1 (T)") != NULL, "message: %s",
              gt_db_errmsg(db));
    bad = key;
    memset(bad.device, 'x', sizeof bad.device);
    TAP_CHECK(gt_db_lookup(db, &bad, HASH, 0, &got, &found) == GT_INVALID_VALUE,
              "unterminated device");
    TAP_CHECK(gt_db_list(db, NULL, NULL) == GT_INVALID_VALUE, "NULL fn");

    /* Unterminated value fields are cut at their size, not read past. */
    memset(w.config, 'c', sizeof w.config);
    memset(w.host, 'h', sizeof w.host);
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                  strlen(got.config) == sizeof got.config - 1 &&
                  strlen(got.host) == sizeof got.host - 1,
              "unterminated fields: %zu %zu", strlen(got.config), strlen(got.host));

    reenter_result = 0;
    TAP_CHECK(gt_db_list(db, reenter_outer, db) == GT_SUCCESS, "list");
    TAP_CHECK(reenter_result == 1, "re-entering lookup was not refused (%d)", reenter_result);
    /* The handle still works afterwards. */
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found,
              "lookup after re-entry: %s", gt_db_errmsg(db));
    gt_db_close(db);
}

/* 12. One handle, many threads. */
typedef struct {
    gt_db *db;
    int id, failures;
} thread_arg;

static void *thread_body(void *p) {
    thread_arg *a = p;
    for (int i = 0; i < 100; i++) {
        gt_key key;
        make_key(&key, 50000 + a->id * 1000 + i);
        char cfg[32];
        snprintf(cfg, sizeof cfg, "t%d_%d", a->id, i);
        gt_db_winner w, got;
        make_winner(&w, cfg, i);
        int found = 0;
        if (gt_db_store(a->db, &key, HASH, 0, &w, NULL, 0) != GT_SUCCESS ||
            gt_db_lookup(a->db, &key, HASH, 0, &got, &found) != GT_SUCCESS || !found ||
            strcmp(got.config, cfg) != 0)
            a->failures++;
    }
    return NULL;
}

static void test_threads(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("threads", path, sizeof path);
    if (!db) return;
    pthread_t th[4];
    thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (thread_arg){db, i, 0};
        TAP_CHECK(pthread_create(&th[i], NULL, thread_body, &args[i]) == 0, "pthread_create");
    }
    int failures = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        failures += args[i].failures;
    }
    TAP_CHECK(failures == 0, "%d failed store/lookup pairs", failures);
    int counts[2] = {0, 0};
    TAP_CHECK(gt_db_list(db, count_shared, counts) == GT_SUCCESS && counts[0] == 400,
              "list has %d rows", counts[0]);
    gt_db_close(db);
}

/* ===================================================================================
 * Cases of schema version 2: merge, prune, neighbours, cubins, migration, limits
 * =================================================================================== */


/* 1 when raw SQLite finds nothing wrong with the file. */
static int integrity_ok(const char *path) {
    char r[256];
    raw_text(path, 0, "PRAGMA integrity_check", r, sizeof r);
    if (strcmp(r, "ok") != 0) printf("# integrity_check of %s: '%s'\n", path, r);
    return strcmp(r, "ok") == 0;
}

static int count_timings(gt_db *db, const gt_key *key, const char *hash, int major) {
    timing_acc acc = {0};
    if (gt_db_timings(db, key, hash, major, collect_timing, &acc) != GT_SUCCESS) return -1;
    return acc.n;
}

/* 13. Merge keeps the faster entry; ties keep what is there. */
static void test_merge(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("merge", path, sizeof path);
    if (!db) return;
    gt_key key;
    make_key(&key, 13);
    gt_db_winner slow, fast, slower, tie, got;
    make_winner(&slow, "cfg_slow", 100);
    make_winner(&fast, "cfg_fast", 50);
    snprintf(fast.host, sizeof fast.host, "node-b");
    snprintf(fast.libver, sizeof fast.libver, "0.2.0");
    snprintf(fast.nvrtc, sizeof fast.nvrtc, "13.1");
    snprintf(fast.driver, sizeof fast.driver, "13010");
    fast.tuned_at = 1800000000;
    make_winner(&slower, "cfg_slower", 70);
    snprintf(slower.host, sizeof slower.host, "node-c");
    make_winner(&tie, "cfg_tie", 50);
    snprintf(tie.host, sizeof tie.host, "node-d");
    gt_db_timing ts[2], tf[1], tl[3];
    make_timing(&ts[0], "cfg_slow", "ok", 100, "");
    make_timing(&ts[1], "cfg_x", "compile_failed", -1, "too many registers");
    make_timing(&tf[0], "cfg_fast", "ok", 50, "");
    make_timing(&tl[0], "cfg_slower", "ok", 70, "");
    make_timing(&tl[1], "cfg_y", "ok", 90, "");
    make_timing(&tl[2], "cfg_z", "ok", 95, "");
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &slow, ts, 2) == GT_SUCCESS, "%s", gt_db_errmsg(db));

    int stored = -1, found = 0;
    TAP_CHECK(gt_db_merge(db, &key, HASH, 0, &fast, tf, 1, &stored) == GT_SUCCESS, "merge: %s",
              gt_db_errmsg(db));
    TAP_CHECK(stored == 1, "faster entry not stored (stored %d)", stored);
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                  winners_equal(&got, &fast),
              "after a faster merge: '%s' host '%s' libver '%s' tuned_at %lld", got.config,
              got.host, got.libver, (long long)got.tuned_at);
    timing_acc acc = {0};
    TAP_CHECK(gt_db_timings(db, &key, HASH, 0, collect_timing, &acc) == GT_SUCCESS && acc.n == 1 &&
                  strcmp(acc.t[0].config, "cfg_fast") == 0,
              "timings not replaced by the merged ones: %d rows, first '%s'", acc.n,
              acc.t[0].config);

    stored = -1;
    TAP_CHECK(gt_db_merge(db, &key, HASH, 0, &slower, tl, 3, &stored) == GT_SUCCESS, "merge: %s",
              gt_db_errmsg(db));
    TAP_CHECK(stored == 0, "slower entry stored (stored %d)", stored);
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                  winners_equal(&got, &fast),
              "slower merge changed the winner to '%s'", got.config);
    TAP_CHECK(count_timings(db, &key, HASH, 0) == 1, "slower merge touched the timings (%d)",
              count_timings(db, &key, HASH, 0));

    stored = -1;
    TAP_CHECK(gt_db_merge(db, &key, HASH, 0, &tie, tl, 3, &stored) == GT_SUCCESS && stored == 0,
              "tie: stored %d: %s", stored, gt_db_errmsg(db));
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                  winners_equal(&got, &fast),
              "a tie replaced the winner with '%s' from '%s'", got.config, got.host);
    TAP_CHECK(count_timings(db, &key, HASH, 0) == 1, "tie touched the timings");

    /* A new key is stored whatever its time; another source hash is another key; stored
     * may be NULL. */
    gt_key other;
    make_key(&other, 14);
    stored = -1;
    TAP_CHECK(gt_db_merge(db, &other, HASH, 0, &slower, tl, 3, &stored) == GT_SUCCESS &&
                  stored == 1,
              "new key: stored %d: %s", stored, gt_db_errmsg(db));
    TAP_CHECK(count_timings(db, &other, HASH, 0) == 3, "new key timings %d",
              count_timings(db, &other, HASH, 0));
    TAP_CHECK(gt_db_merge(db, &key, "otherhash", 0, &slower, NULL, 0, NULL) == GT_SUCCESS,
              "merge under another hash: %s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_lookup(db, &key, "otherhash", 0, &got, &found) == GT_SUCCESS && found &&
                  strcmp(got.config, "cfg_slower") == 0,
              "entry under another hash: found %d '%s'", found, got.config);
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                  winners_equal(&got, &fast),
              "merge under another hash changed this one");

    /* A stored winner without a time (NaN is stored as NULL) loses to a timed one; a NaN
     * time and a NULL winner are refused. */
    gt_key k3;
    make_key(&k3, 15);
    gt_db_winner untimed;
    make_winner(&untimed, "cfg_untimed", 0);
    untimed.time_us = 0.0 / 0.0;
    TAP_CHECK(gt_db_store(db, &k3, HASH, 0, &untimed, NULL, 0) == GT_SUCCESS, "%s",
              gt_db_errmsg(db));
    TAP_CHECK(gt_db_merge(db, &k3, HASH, 0, &slower, NULL, 0, &stored) == GT_SUCCESS &&
                  stored == 1,
              "timed entry did not replace an untimed one (stored %d)", stored);
    stored = -1;
    TAP_CHECK(gt_db_merge(db, &k3, HASH, 0, &untimed, NULL, 0, &stored) == GT_INVALID_VALUE &&
                  stored == 0,
              "NaN time accepted (stored %d)", stored);
    TAP_CHECK(strstr(gt_db_errmsg(db), path) != NULL, "message: %s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_merge(db, &k3, HASH, 0, NULL, NULL, 0, &stored) == GT_INVALID_VALUE,
              "NULL winner accepted");
    TAP_CHECK(gt_db_merge(db, &k3, HASH, 0, &fast, NULL, 1, &stored) == GT_INVALID_VALUE,
              "NULL timings accepted");
    TAP_CHECK(gt_db_merge(db, NULL, HASH, 0, &fast, NULL, 0, &stored) == GT_INVALID_VALUE,
              "NULL key accepted");
    gt_db_close(db);

    /* Read-only: refused with a message, nothing written. */
    db = open_ok(path, 1, 0);
    if (!db) return;
    gt_db_winner fastest;
    make_winner(&fastest, "cfg_fastest", 1);
    stored = -1;
    gt_status s = gt_db_merge(db, &key, HASH, 0, &fastest, tf, 1, &stored);
    TAP_CHECK(s == GT_CACHE_ERROR && stored == 0, "read-only merge: status %d stored %d", s,
              stored);
    TAP_CHECK(strstr(gt_db_errmsg(db), "read-only") && strstr(gt_db_errmsg(db), path),
              "message: %s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                  winners_equal(&got, &fast),
              "read-only merge changed the winner to '%s'", got.config);
    gt_db_close(db);
}

static void bin_key(gt_db_bin_key *bk, const char *hash, const char *program, int arch,
                    const char *nvrtc, const char *driver) {
    bk->src_hash = hash;
    bk->program = program;
    bk->arch = arch;
    bk->nvrtc = nvrtc;
    bk->driver = driver;
}

static const char *PROG = "f32|NT|4096x4096x4096|a16|b0|f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8";

/* 14. Prune removes rows of other sources and library majors, and stale cubins. */
static void test_prune(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("prune", path, sizeof path);
    if (!db) return;
    struct { int i; const char *hash; int major; } rows[] = {
        {0, HASH, 0}, {1, HASH, 0}, {2, "oldhash", 0}, {3, HASH, 1}, {4, "oldhash", 3},
    };
    gt_db_timing t[2];
    make_timing(&t[0], "cfg_a", "ok", 1, "");
    make_timing(&t[1], "cfg_b", "ok", 2, "");
    for (int r = 0; r < 5; r++) {
        gt_key key;
        make_key(&key, rows[r].i);
        gt_db_winner w;
        make_winner(&w, "cfg_a", 1);
        TAP_CHECK(gt_db_store(db, &key, rows[r].hash, rows[r].major, &w, t, 2) == GT_SUCCESS,
                  "%s", gt_db_errmsg(db));
    }
    /* A key whose winner is current but whose timings exist under an old hash too. */
    gt_key k0;
    make_key(&k0, 0);
    TAP_CHECK(gt_db_store(db, &k0, "oldhash", 0, NULL, t, 2) == GT_SUCCESS, "%s",
              gt_db_errmsg(db));

    unsigned char img[64];
    fill_random(img, sizeof img, 3);
    gt_db_bin_key bk[5];
    bin_key(&bk[0], HASH, PROG, 90, "13.0", "13000");        /* kept */
    bin_key(&bk[1], HASH, "f32|NN|1x1x1|a4|b1|x", 80, "13.0", "13000"); /* kept */
    bin_key(&bk[2], "oldhash", PROG, 90, "13.0", "13000");   /* other source */
    bin_key(&bk[3], HASH, PROG, 90, "12.8", "13000");        /* other NVRTC */
    bin_key(&bk[4], HASH, PROG, 90, "13.0", "12080");        /* other driver */
    for (int i = 0; i < 5; i++)
        TAP_CHECK(gt_db_cubin_put(db, &bk[i], img, sizeof img) == GT_SUCCESS, "put %d: %s", i,
                  gt_db_errmsg(db));
    TAP_CHECK(gt_db_cubin_count(db) == 5, "cubins %lld", (long long)gt_db_cubin_count(db));

    int64_t nw = -1, nc = -1;
    TAP_CHECK(gt_db_prune(db, HASH, 0, "13.0", "13000", &nw, &nc) == GT_SUCCESS, "prune: %s",
              gt_db_errmsg(db));
    TAP_CHECK(nw == 3, "deleted %lld winners, expected 3", (long long)nw);
    TAP_CHECK(nc == 3, "deleted %lld cubins, expected 3", (long long)nc);
    for (int r = 0; r < 5; r++) {
        gt_key key;
        make_key(&key, rows[r].i);
        gt_db_winner got;
        int found = -1;
        int keep = r < 2;
        TAP_CHECK(gt_db_lookup(db, &key, rows[r].hash, rows[r].major, &got, &found) ==
                          GT_SUCCESS &&
                      found == keep,
                  "row %d: found %d, expected %d", r, found, keep);
        int nt = count_timings(db, &key, rows[r].hash, rows[r].major);
        TAP_CHECK(nt == (keep ? 2 : 0), "row %d: %d timings", r, nt);
    }
    TAP_CHECK(count_timings(db, &k0, "oldhash", 0) == 0, "timings of an old hash kept");
    TAP_CHECK(gt_db_cubin_count(db) == 2, "cubins left %lld", (long long)gt_db_cubin_count(db));
    for (int i = 0; i < 5; i++) {
        void *image = NULL;
        size_t size = 0;
        int found = -1;
        TAP_CHECK(gt_db_cubin_get(db, &bk[i], &image, &size, &found) == GT_SUCCESS &&
                      found == (i < 2),
                  "cubin %d: found %d", i, found);
        free(image);
    }

    /* NULL nvrtc / driver: those columns are not filtered; the source hash still is. */
    for (int i = 2; i < 5; i++) gt_db_cubin_put(db, &bk[i], img, sizeof img);
    TAP_CHECK(gt_db_prune(db, HASH, 0, NULL, NULL, &nw, &nc) == GT_SUCCESS && nw == 0 && nc == 1,
              "NULL filters: deleted %lld winners, %lld cubins", (long long)nw, (long long)nc);
    TAP_CHECK(gt_db_cubin_count(db) == 4, "cubins %lld", (long long)gt_db_cubin_count(db));
    TAP_CHECK(gt_db_prune(db, HASH, 0, NULL, "13000", NULL, &nc) == GT_SUCCESS && nc == 1,
              "driver only: deleted %lld cubins", (long long)nc);
    TAP_CHECK(gt_db_prune(db, HASH, 0, "13.0", NULL, &nw, NULL) == GT_SUCCESS && nw == 0,
              "nvrtc only, NULL cubins count: %s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_cubin_count(db) == 2, "cubins %lld", (long long)gt_db_cubin_count(db));
    TAP_CHECK(gt_db_prune(db, NULL, 0, NULL, NULL, NULL, NULL) == GT_INVALID_VALUE,
              "NULL src_hash accepted");
    TAP_CHECK(gt_db_prune(NULL, HASH, 0, NULL, NULL, NULL, NULL) == GT_INVALID_VALUE, "NULL db");
    gt_db_close(db);

    db = open_ok(path, 1, 0);
    if (!db) return;
    nw = nc = -1;
    gt_status s = gt_db_prune(db, "newhash", 0, NULL, NULL, &nw, &nc);
    TAP_CHECK(s == GT_CACHE_ERROR && nw == 0 && nc == 0, "read-only prune: status %d", s);
    TAP_CHECK(strstr(gt_db_errmsg(db), "read-only") && strstr(gt_db_errmsg(db), path),
              "message: %s", gt_db_errmsg(db));
    gt_db_winner got;
    int found = 0;
    TAP_CHECK(gt_db_lookup(db, &k0, HASH, 0, &got, &found) == GT_SUCCESS && found,
              "read-only prune deleted a row");
    gt_db_close(db);
}

/* 15. Neighbours: same device, dtype, operations and alignment; any shape; ordered. */
static void test_neighbors(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("neighbors", path, sizeof path);
    if (!db) return;
    /* The family, in expected order; stored scrambled. */
    struct { int64_t m, n, k; int beta0; } fam[] = {
        {64, 64, 64, 0}, {64, 64, 64, 1}, {64, 128, 32, 0}, {512, 8, 8, 1}, {512, 64, 64, 0},
    };
    int nfam = (int)(sizeof fam / sizeof fam[0]);
    int order[] = {3, 0, 4, 1, 2};
    for (int j = 0; j < nfam; j++) {
        int i = order[j];
        gt_key key;
        make_key(&key, 0);
        key.m = fam[i].m, key.n = fam[i].n, key.k = fam[i].k, key.beta0 = fam[i].beta0;
        char cfg[16];
        snprintf(cfg, sizeof cfg, "fam%d", i);
        gt_db_winner w;
        make_winner(&w, cfg, i);
        TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "%s",
                  gt_db_errmsg(db));
    }
    /* Outsiders: each differs from the family in one of the matched parts. */
    for (int f = 0; f < 8; f++) {
        gt_key key;
        make_key(&key, 0);
        const char *hash = HASH;
        int major = 0;
        switch (f) {
        case 0: snprintf(key.device, sizeof key.device, "NVIDIA Test GPU 40GB"); break;
        case 1: key.cc_minor = 1; break;
        case 2: key.sm_count = 114; break;
        case 3: key.opa = 1; break;
        case 4: key.opb = 0; break;
        case 5: key.align = 8; break;
        case 6: hash = "otherhash"; break;
        case 7: major = 1; break;
        }
        gt_db_winner w;
        make_winner(&w, "outsider", 0.5);
        TAP_CHECK(gt_db_store(db, &key, hash, major, &w, NULL, 0) == GT_SUCCESS, "%s",
                  gt_db_errmsg(db));
    }
    gt_db_close(db);
    /* And a row of a data type this build does not know, otherwise a family member. */
    TAP_CHECK(raw_exec(path, "INSERT INTO winners SELECT device, cc, sms, 'f16', opa, opb, m, "
                             "n, k, align, beta0, src_hash, lib_major, 'f16row', time_us, "
                             "tflops, tuned_at, nvrtc, driver, host, libver FROM winners "
                             "WHERE config = 'fam0'") == SQLITE_OK,
              "forging an f16 row");
    db = open_ok(path, 1, 0); /* a read-only handle serves neighbours too */
    if (!db) return;

    gt_key probe;
    make_key(&probe, 0);
    probe.m = 1000, probe.n = 1000, probe.k = 1000, probe.beta0 = 1;
    list_acc *acc = calloc(1, sizeof *acc);
    TAP_CHECK(gt_db_neighbors(db, &probe, HASH, 0, collect_winner, acc) == GT_SUCCESS, "%s",
              gt_db_errmsg(db));
    TAP_CHECK(acc->n == nfam, "%d neighbours, expected %d", acc->n, nfam);
    for (int i = 0; i < nfam && i < acc->n; i++) {
        char cfg[16];
        snprintf(cfg, sizeof cfg, "fam%d", i);
        gt_key want;
        make_key(&want, 0);
        want.m = fam[i].m, want.n = fam[i].n, want.k = fam[i].k, want.beta0 = fam[i].beta0;
        TAP_CHECK(strcmp(acc->winners[i].config, cfg) == 0, "position %d holds %s", i,
                  acc->winners[i].config);
        TAP_CHECK(gt_key_equal(&acc->keys[i], &want) && strcmp(acc->hashes[i], HASH) == 0 &&
                      acc->majors[i] == 0,
                  "key %d read back wrong", i);
    }
    /* The probe's own shape is one of them when tuned: nothing special about it. */
    probe.m = 64, probe.n = 64, probe.k = 64, probe.beta0 = 0;
    memset(acc, 0, sizeof *acc);
    acc->stop_after = 2;
    TAP_CHECK(gt_db_neighbors(db, &probe, HASH, 0, collect_winner, acc) == GT_SUCCESS &&
                  acc->n == 2 && strcmp(acc->winners[1].config, "fam1") == 0,
              "stop after 2: called %d times", acc->n);
    /* Nothing under an unknown source hash; bad arguments refused. */
    memset(acc, 0, sizeof *acc);
    TAP_CHECK(gt_db_neighbors(db, &probe, "nohash", 0, collect_winner, acc) == GT_SUCCESS &&
                  acc->n == 0,
              "unknown hash: %d rows", acc->n);
    TAP_CHECK(gt_db_neighbors(db, &probe, HASH, 0, NULL, NULL) == GT_INVALID_VALUE, "NULL fn");
    TAP_CHECK(gt_db_neighbors(db, NULL, HASH, 0, collect_winner, acc) == GT_INVALID_VALUE,
              "NULL key");
    /* The callback may not re-enter its handle, and the handle works afterwards. */
    reenter_result = 0;
    TAP_CHECK(gt_db_neighbors(db, &probe, HASH, 0, reenter_outer, db) == GT_SUCCESS, "%s",
              gt_db_errmsg(db));
    TAP_CHECK(reenter_result == 1, "re-entry from a neighbours callback (%d)", reenter_result);
    memset(acc, 0, sizeof *acc);
    TAP_CHECK(gt_db_neighbors(db, &probe, HASH, 0, collect_winner, acc) == GT_SUCCESS &&
                  acc->n == nfam,
              "after re-entry: %d rows", acc->n);
    free(acc);
    gt_db_close(db);
}

/* 16. Cubins: round trip, exact key, replace, read-only, bad arguments, damaged rows. */
/* gt_db_class_timings: every timing of the tuned shapes of one class (the probe's op pair,
 * or any), each with its own key, and none of another class; gt_db_cubin_programs: a
 * prefix lists its programs only, not those whose name merely sorts near it. */
typedef struct {
    int n, bad;
    int64_t msum;
} class_acc;

static int collect_class(const gt_key *shape, const gt_db_timing *t, void *user) {
    class_acc *a = user;
    a->n++;
    a->msum += shape->m;
    /* Each stored row's config names its shape: "s<m>_<opa><opb>_<i>". */
    char want[64];
    snprintf(want, sizeof want, "s%lld_%d%d_", (long long)shape->m, shape->opa, shape->opb);
    if (strncmp(t->config, want, strlen(want)) != 0 || shape->n != 128 || shape->align != 16 ||
        shape->dtype != GT_DT_F32)
        a->bad++;
    return 0;
}

static int count_program(const char *program, void *user) {
    (void)program;
    ++*(int *)user;
    return 0;
}

static void test_class_timings(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("class_timings", path, sizeof path);
    if (!db) return;
    /* The class: two NT shapes (3 timings each) and one NN shape (3). */
    struct { int64_t m; int opa, opb; } shapes[] = {{64, 0, 1}, {96, 0, 1}, {80, 0, 0}};
    for (int s = 0; s < 3; s++) {
        gt_key key;
        make_key(&key, 0);
        key.m = shapes[s].m, key.opa = shapes[s].opa, key.opb = shapes[s].opb;
        gt_db_timing t[3];
        for (int i = 0; i < 3; i++) {
            char cfg[32];
            snprintf(cfg, sizeof cfg, "s%lld_%d%d_%d", (long long)key.m, key.opa, key.opb, i);
            make_timing(&t[i], cfg, i == 2 ? "compile_failed" : "ok", i == 2 ? -1 : 10.0 + i, "");
        }
        gt_db_winner w;
        make_winner(&w, t[0].config, 10.0);
        TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, t, 3) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    }
    /* Outsiders: another alignment class, data type, source and device. */
    for (int f = 0; f < 4; f++) {
        gt_key key;
        make_key(&key, 0);
        key.m = 1000 + f;
        const char *hash = HASH;
        if (f == 0) key.align = 8;
        if (f == 1) key.dtype = GT_DT_F64;
        if (f == 2) hash = "otherhash";
        if (f == 3) snprintf(key.device, sizeof key.device, "NVIDIA Other GPU");
        gt_db_timing t;
        make_timing(&t, "outsider", "ok", 5.0, "");
        gt_db_winner w;
        make_winner(&w, "outsider", 5.0);
        TAP_CHECK(gt_db_store(db, &key, hash, 0, &w, &t, 1) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    }
    gt_key probe;
    make_key(&probe, 0);
    probe.m = 5000, probe.n = 7, probe.k = 9, probe.beta0 = 1; /* the shape plays no part */
    class_acc a = {0};
    TAP_CHECK(gt_db_class_timings(db, &probe, HASH, 0, 0, collect_class, &a) == GT_SUCCESS, "%s",
              gt_db_errmsg(db));
    TAP_CHECK(a.n == 6 && a.bad == 0 && a.msum == 3 * 64 + 3 * 96,
              "NT only: %d rows, %d wrong, m sum %lld", a.n, a.bad, (long long)a.msum);
    memset(&a, 0, sizeof a);
    TAP_CHECK(gt_db_class_timings(db, &probe, HASH, 0, 1, collect_class, &a) == GT_SUCCESS, "%s",
              gt_db_errmsg(db));
    TAP_CHECK(a.n == 9 && a.bad == 0 && a.msum == 3 * (64 + 96 + 80),
              "any op pair: %d rows, %d wrong, m sum %lld", a.n, a.bad, (long long)a.msum);
    TAP_CHECK(gt_db_class_timings(db, &probe, HASH, 0, 1, NULL, NULL) == GT_INVALID_VALUE,
              "NULL fn");

    /* Programs: a class prefix, a name that extends its last field, and one that sorts
     * right after the prefix's range. */
    const char *progs[] = {"f32|NT|a16|b1|cfgA", "f32|NT|a16|b1|cfgB", "f32|NT|a16|b10|cfgC",
                           "f32|NT|a16|b1}cfgD", "f32|NT|a16|b0|cfgE", "f32|NT|a16|b2|cfgF"};
    unsigned char img[16] = {1, 2, 3};
    for (int i = 0; i < 6; i++) {
        gt_db_bin_key bk;
        bin_key(&bk, HASH, progs[i], 90, "13.0", "13000");
        TAP_CHECK(gt_db_cubin_put(db, &bk, img, sizeof img) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    }
    const char *prefixes[] = {"f32|NT|a16|b1|", "f32|NT|a16|b1", "f32|NT|", "f32|NT|a16|b1|cfgB"};
    int want[] = {2, 4, 6, 1};
    for (int p = 0; p < 4; p++) {
        gt_db_bin_key bk;
        bin_key(&bk, HASH, prefixes[p], 90, "13.0", "13000");
        int n = 0;
        gt_status st = gt_db_cubin_programs(db, &bk, count_program, &n);
        TAP_CHECK(st == GT_SUCCESS && n == want[p], "prefix '%s': %d programs, expected %d (%s)",
                  prefixes[p], n, want[p], gt_db_errmsg(db));
    }
    gt_db_close(db);
}

static void test_cubins(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("cubins", path, sizeof path);
    if (!db) return;
    TAP_CHECK(gt_db_cubin_count(db) == 0, "fresh file holds %lld cubins",
              (long long)gt_db_cubin_count(db));
    enum { N = 10240 };
    unsigned char *img = malloc(N), *img2 = malloc(N / 2);
    fill_random(img, N, 11);
    fill_random(img2, N / 2, 12);
    gt_db_bin_key bk;
    bin_key(&bk, HASH, PROG, 90, "13.0", "13000");
    TAP_CHECK(gt_db_cubin_put(db, &bk, img, N) == GT_SUCCESS, "put: %s", gt_db_errmsg(db));
    void *image = NULL;
    size_t size = 0;
    int found = 0;
    TAP_CHECK(gt_db_cubin_get(db, &bk, &image, &size, &found) == GT_SUCCESS && found == 1,
              "get: found %d: %s", found, gt_db_errmsg(db));
    TAP_CHECK(image && size == N && memcmp(image, img, N) == 0, "image differs (%zu bytes)",
              size);
    free(image);

    for (int f = 0; f < 5; f++) {
        gt_db_bin_key o = bk;
        switch (f) {
        case 0: o.src_hash = "src0123abce"; break;
        case 1: o.program = "f32|NT|4096x4096x4096|a16|b1|f0_128x64x8_w32x32_t8x4_s3_v4_k1_r8";
                break;
        case 2: o.arch = 89; break;
        case 3: o.nvrtc = "13.1"; break;
        case 4: o.driver = "13010"; break;
        }
        image = (void *)0x1;
        size = 7;
        found = -1;
        TAP_CHECK(gt_db_cubin_get(db, &o, &image, &size, &found) == GT_SUCCESS && found == 0 &&
                      image == NULL && size == 0,
                  "key part %d changed: found %d", f, found);
    }

    /* Replace, then a second key. */
    TAP_CHECK(gt_db_cubin_put(db, &bk, img2, N / 2) == GT_SUCCESS, "replace: %s",
              gt_db_errmsg(db));
    TAP_CHECK(gt_db_cubin_get(db, &bk, &image, &size, &found) == GT_SUCCESS && found &&
                  size == N / 2 && memcmp(image, img2, N / 2) == 0,
              "replaced image not returned (%zu bytes)", size);
    free(image);
    TAP_CHECK(gt_db_cubin_count(db) == 1, "count after replace %lld",
              (long long)gt_db_cubin_count(db));
    gt_db_bin_key bk2 = bk;
    bk2.arch = 80;
    TAP_CHECK(gt_db_cubin_put(db, &bk2, img, N) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_cubin_count(db) == 2, "count %lld", (long long)gt_db_cubin_count(db));

    /* Bad arguments: GT_INVALID_VALUE with a message naming the file. */
    gt_db_bin_key bad[7];
    for (int i = 0; i < 7; i++) bad[i] = bk;
    bad[0].src_hash = NULL;
    bad[1].program = "";
    bad[2].nvrtc = NULL;
    bad[3].driver = "";
    bad[4].arch = 0;
    bad[5].src_hash = "";
    bad[6].program = NULL;
    for (int i = 0; i < 7; i++) {
        gt_status s = gt_db_cubin_put(db, &bad[i], img, N);
        TAP_CHECK(s == GT_INVALID_VALUE && strstr(gt_db_errmsg(db), path),
                  "bad key %d put: status %d: %s", i, s, gt_db_errmsg(db));
        s = gt_db_cubin_get(db, &bad[i], &image, &size, &found);
        TAP_CHECK(s == GT_INVALID_VALUE && found == 0, "bad key %d get: status %d", i, s);
    }
    TAP_CHECK(gt_db_cubin_put(db, NULL, img, N) == GT_INVALID_VALUE, "NULL key put");
    TAP_CHECK(gt_db_cubin_put(db, &bk, NULL, N) == GT_INVALID_VALUE, "NULL image put");
    TAP_CHECK(gt_db_cubin_put(db, &bk, img, 0) == GT_INVALID_VALUE, "size 0 put");
    printf("# %s\n", gt_db_errmsg(db));
    TAP_CHECK(gt_db_cubin_get(db, &bk, NULL, &size, &found) == GT_INVALID_VALUE, "NULL image");
    TAP_CHECK(gt_db_cubin_get(db, &bk, &image, NULL, &found) == GT_INVALID_VALUE, "NULL size");
    TAP_CHECK(gt_db_cubin_get(db, &bk, &image, &size, NULL) == GT_INVALID_VALUE, "NULL found");
    TAP_CHECK(gt_db_cubin_get(NULL, &bk, &image, &size, &found) == GT_INVALID_VALUE, "NULL db");
    TAP_CHECK(gt_db_cubin_count(NULL) == -1, "count of NULL");
    TAP_CHECK(gt_db_cubin_count(db) == 2, "bad calls changed the count");
    gt_db_close(db);

    /* A read-only handle never yields a cubin, though the file holds two. */
    db = open_ok(path, 1, 0);
    if (db) {
        image = (void *)0x1;
        found = -1;
        TAP_CHECK(gt_db_cubin_get(db, &bk, &image, &size, &found) == GT_SUCCESS && found == 0 &&
                      image == NULL,
                  "read-only handle yielded a cubin (found %d)", found);
        TAP_CHECK(gt_db_cubin_count(db) == 2, "read-only count %lld",
                  (long long)gt_db_cubin_count(db));
        gt_status s = gt_db_cubin_put(db, &bk, img, N);
        TAP_CHECK(s == GT_CACHE_ERROR && strstr(gt_db_errmsg(db), "read-only") &&
                      strstr(gt_db_errmsg(db), path),
                  "read-only put: status %d: %s", s, gt_db_errmsg(db));
        gt_db_close(db);
    }

    /* Damaged rows: a size column that disagrees with the blob, or an image that is not
     * a blob, read as misses; the other row is untouched and a put repairs the row. */
    TAP_CHECK(raw_exec(path, "UPDATE cubins SET size = size + 1 WHERE arch = 90") == SQLITE_OK,
              "forging a size");
    db = open_ok(path, 0, 0);
    if (!db) goto out;
    image = (void *)0x1;
    found = -1;
    TAP_CHECK(gt_db_cubin_get(db, &bk, &image, &size, &found) == GT_SUCCESS && found == 0 &&
                  image == NULL,
              "a row with a wrong size was returned (found %d)", found);
    TAP_CHECK(gt_db_cubin_get(db, &bk2, &image, &size, &found) == GT_SUCCESS && found &&
                  size == N && memcmp(image, img, N) == 0,
              "the intact row was not returned");
    free(image);
    TAP_CHECK(gt_db_cubin_put(db, &bk, img2, N / 2) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_cubin_get(db, &bk, &image, &size, &found) == GT_SUCCESS && found &&
                  size == N / 2,
              "repaired row not returned");
    free(image);
    gt_db_close(db);
    TAP_CHECK(raw_exec(path, "UPDATE cubins SET image = 'abc', size = 3 WHERE arch = 90") ==
                  SQLITE_OK,
              "forging a text image");
    db = open_ok(path, 0, 0);
    if (!db) goto out;
    found = -1;
    TAP_CHECK(gt_db_cubin_get(db, &bk, &image, &size, &found) == GT_SUCCESS && found == 0,
              "a text image was returned");
    gt_db_close(db);
out:
    free(img);
    free(img2);
}

/* The schema exactly as migrate_v0_v1 (schema version 1, the previous release) wrote it,
 * in WAL mode, with one winner and one timing. */
#define V1_KEY_DECL                                                                        \
    "device TEXT NOT NULL, cc INTEGER NOT NULL, sms INTEGER NOT NULL, "                   \
    "dtype TEXT NOT NULL, opa TEXT NOT NULL, opb TEXT NOT NULL, "                          \
    "m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL, "                         \
    "align INTEGER NOT NULL, beta0 INTEGER NOT NULL, "                                     \
    "src_hash TEXT NOT NULL, lib_major INTEGER NOT NULL"
#define V1_KEY_COLS "device, cc, sms, dtype, opa, opb, m, n, k, align, beta0, src_hash, lib_major"
static const char V1_FILE[] =
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE winners(" V1_KEY_DECL ", "
    "config TEXT NOT NULL, time_us REAL, tflops REAL, tuned_at INTEGER, "
    "nvrtc TEXT, driver TEXT, host TEXT, libver TEXT, "
    "PRIMARY KEY(" V1_KEY_COLS "));"
    "CREATE TABLE timings(" V1_KEY_DECL ", "
    "config TEXT NOT NULL, status TEXT NOT NULL, time_us REAL, tflops REAL, "
    "message TEXT, "
    "PRIMARY KEY(" V1_KEY_COLS ", config));"
    "INSERT INTO meta(key, value) VALUES('schema_version', '1');"
    "INSERT INTO winners VALUES('NVIDIA Test GPU 80GB', 90, 132, 'f32', 'N', 'T', 64, 128, "
    "256, 16, 0, 'src0123abcd', 0, 'v1cfg', 42.5, 3.25, 1600000000, '12.4', '12040', "
    "'old-host', '0.0.9');"
    "INSERT INTO timings VALUES('NVIDIA Test GPU 80GB', 90, 132, 'f32', 'N', 'T', 64, 128, "
    "256, 16, 0, 'src0123abcd', 0, 'v1cfg', 'ok', 42.5, 3.25, '');";

/* The generation counts the transactions that change winners or timings, and nothing
 * else; a kept state comes back as stored, replaced by the next; a read-only handle keeps
 * none. */
static void test_generation_states(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("generation", path, sizeof path);
    if (!db) return;
    long long gen[3] = {-1, -1, -1}, g = -1;
    TAP_CHECK(gt_db_generation(db, gen) == GT_SUCCESS && (g = gen[0]) == 0 && gen[1] == 0 &&
                  gen[2] == 0,
              "fresh file: generation %lld", g);
    gt_key key;
    make_key(&key, 41);
    gt_db_winner w;
    make_winner(&w, "cfg_gen", 1);
    gt_db_timing t[2];
    memset(t, 0, sizeof t);
    snprintf(t[0].config, sizeof t[0].config, "cfg_gen");
    snprintf(t[0].status, sizeof t[0].status, "ok");
    t[0].time_us = 10;
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, t, 1) == GT_SUCCESS, "store: %s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_generation(db, gen) == GT_SUCCESS && (g = gen[0]) == 1, "after a store: %lld", g);
    unsigned char img[100];
    fill_random(img, sizeof img, 41);
    gt_db_bin_key bk;
    bin_key(&bk, HASH, PROG, 90, "13.0", "13000");
    TAP_CHECK(gt_db_cubin_put(db, &bk, img, sizeof img) == GT_SUCCESS, "put");
    const char state1[] = "the first state", state2[] = "another";
    TAP_CHECK(gt_db_state_put(db, "class|x", state1, sizeof state1) == GT_SUCCESS, "state put: %s",
              gt_db_errmsg(db));
    TAP_CHECK(gt_db_generation(db, gen) == GT_SUCCESS && (g = gen[0]) == 1,
              "a binary and a state changed the generation: %lld", g);
    void *data = NULL;
    size_t size = 0;
    int found = 0;
    TAP_CHECK(gt_db_state_get(db, "class|x", &data, &size, &found) == GT_SUCCESS && found &&
                  size == sizeof state1 && memcmp(data, state1, size) == 0,
              "state get: found %d, %zu bytes", found, size);
    free(data);
    TAP_CHECK(gt_db_state_put(db, "class|x", state2, sizeof state2) == GT_SUCCESS, "replace");
    TAP_CHECK(gt_db_state_get(db, "class|x", &data, &size, &found) == GT_SUCCESS && found &&
                  size == sizeof state2 && memcmp(data, state2, size) == 0,
              "replaced state: %zu bytes", size);
    free(data);
    TAP_CHECK(gt_db_state_get(db, "class|y", &data, &size, &found) == GT_SUCCESS && !found &&
                  !data && size == 0,
              "a state never kept: found %d", found);
    int64_t nw = 0, nc = 0;
    TAP_CHECK(gt_db_prune(db, "other", 0, NULL, NULL, &nw, &nc) == GT_SUCCESS, "prune");
    TAP_CHECK(gt_db_generation(db, gen) == GT_SUCCESS && (g = gen[0]) == 2, "after a prune: %lld", g);
    gt_db_close(db);
    db = open_ok(path, 1, 0);
    if (db) {
        TAP_CHECK(gt_db_state_put(db, "class|x", state1, sizeof state1) == GT_CACHE_ERROR,
                  "a read-only handle kept a state");
        TAP_CHECK(gt_db_generation(db, gen) == GT_SUCCESS && (g = gen[0]) == 2, "read-only: %lld", g);
        gt_db_close(db);
    }
    /* A writer that does not count (raw SQL, as an older library): the count stays, the
     * highest rowid moves. */
    db = open_ok(path, 0, 0);
    long long before[3] = {0, 0, 0};
    if (db) gt_db_generation(db, before);
    TAP_CHECK(raw_exec(path, "INSERT INTO winners(device, cc, sms, dtype, opa, opb, m, n, k, "
                             "align, beta0, src_hash, lib_major, config) VALUES('raw', 90, 1, "
                             "'f32', 'N', 'N', 1, 1, 1, 16, 1, 'h', 0, 'c')") == SQLITE_OK,
              "a raw insert");
    if (db) {
        TAP_CHECK(gt_db_generation(db, gen) == GT_SUCCESS && gen[0] == before[0] &&
                      gen[1] > before[1],
                  "a raw insert: count %lld -> %lld, winners' rowid %lld -> %lld", before[0],
                  gen[0], before[1], gen[1]);
        gt_db_close(db);
    }
}

/* The size of path's -wal file; -1 when there is none. */
static long long wal_size(const char *path) {
    char wal[PATH_MAX + 8];
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat st;
    return stat(wal, &st) == 0 ? (long long)st.st_size : -1;
}

/* A writer keeps the WAL short: a commit that leaves 256 kB or more there (64 pages)
 * moves it into the file and empties it (a new process then has little WAL to recover at
 * its first call); a smaller one leaves it; a kept state's commit never empties it. With a
 * reader in it, the store neither waits nor fails, and a later commit empties it. */
static void test_wal_emptied(void) {
    char path[PATH_MAX];
    gt_db *db = case_db("walempty", path, sizeof path);
    if (!db) return;
    gt_key key;
    make_key(&key, 31);
    gt_db_winner w;
    make_winner(&w, "cfg_wal", 1);
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "store: %s",
              gt_db_errmsg(db));
    const long long small = wal_size(path);
    TAP_CHECK(small > 0 && small < (256 << 10), "WAL after a small store: %lld bytes", small);
    enum { N = 1600000 };
    unsigned char *img = malloc(N);
    if (!img) TAP_SKIP("out of memory");
    fill_random(img, N, 31);
    gt_db_bin_key bk;
    bin_key(&bk, HASH, PROG, 90, "13.0", "13000");
    TAP_CHECK(gt_db_cubin_put(db, &bk, img, N) == GT_SUCCESS, "put: %s", gt_db_errmsg(db));
    TAP_CHECK(wal_size(path) == 0, "WAL after a 1.6 MB binary: %lld bytes", wal_size(path));
    /* A kept state of the same size stays in the WAL; the next commit empties it. */
    TAP_CHECK(gt_db_state_put(db, "class|wal", img, N) == GT_SUCCESS, "state: %s",
              gt_db_errmsg(db));
    TAP_CHECK(wal_size(path) > N, "a kept state's commit emptied the WAL (%lld bytes)",
              wal_size(path));
    make_key(&key, 34);
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "store: %s",
              gt_db_errmsg(db));
    TAP_CHECK(wal_size(path) == 0, "WAL after the state and a store: %lld bytes", wal_size(path));

    /* A reader of another connection holds a snapshot: the commit goes through at once and
     * the WAL keeps its frames. */
    sqlite3 *c = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_open(path, &c);
    if (rc == SQLITE_OK) rc = sqlite3_exec(c, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(c, "SELECT count(*) FROM winners", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st) == SQLITE_ROW ? SQLITE_OK : SQLITE_ERROR;
    TAP_CHECK(rc == SQLITE_OK, "reader: %s", sqlite3_errmsg(c));
    bk.arch = 89;
    const double t0 = now_s();
    TAP_CHECK(gt_db_cubin_put(db, &bk, img, N) == GT_SUCCESS, "put beside a reader: %s",
              gt_db_errmsg(db));
    const double dt = now_s() - t0;
    TAP_CHECK(dt < 1.0, "put beside a reader took %.3f s", dt);
    TAP_CHECK(wal_size(path) > N, "the reader's WAL was cut under it");
    sqlite3_finalize(st);
    sqlite3_exec(c, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(c);
    make_key(&key, 33);
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "store: %s",
              gt_db_errmsg(db));
    TAP_CHECK(wal_size(path) == 0, "WAL after the reader left: %lld bytes", wal_size(path));
    gt_db_close(db);

    /* Everything committed is in the file. */
    db = open_ok(path, 1, 0);
    if (db) {
        gt_db_winner got;
        int found = 0, all = 1;
        const int keys[] = {31, 33, 34};
        for (int i = 0; i < 3; i++) {
            make_key(&key, keys[i]);
            all &= gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found;
        }
        void *image = NULL;
        size_t size = 0;
        TAP_CHECK(all, "a winner is missing after the checkpoints");
        TAP_CHECK(gt_db_cubin_count(db) == 2, "binaries: %lld", (long long)gt_db_cubin_count(db));
        gt_db_close(db);
        db = open_ok(path, 0, 0);
        TAP_CHECK(db && gt_db_cubin_get(db, &bk, &image, &size, &found) == GT_SUCCESS && found &&
                      size == N && memcmp(image, img, N) == 0,
                  "binary differs after the checkpoints (%zu bytes)", size);
        free(image);
        image = NULL;
        TAP_CHECK(db && gt_db_state_get(db, "class|wal", &image, &size, &found) == GT_SUCCESS &&
                      found && size == N && memcmp(image, img, N) == 0,
                  "state differs after the checkpoints (%zu bytes)", size);
        free(image);
        if (db) gt_db_close(db);
    }
    free(img);
}

/* 17. A file of schema version 1 is migrated when writable and keeps its rows;
 * read-only, it is refused and left as it was. */
static void test_migrate_v1(void) {
    char dir[DIR_MAX], path[PATH_MAX], ro[PATH_MAX], v[16];
    case_dir("migrate", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/v1.db", dir);
    TAP_CHECK(raw_exec(path, V1_FILE) == SQLITE_OK, "forging a v1 file");
    raw_meta_version(path, v, sizeof v);
    TAP_CHECK(strcmp(v, "1") == 0, "forged version '%s'", v);

    gt_db *db = open_ok(path, 0, 0);
    if (!db) return;
    TAP_CHECK(gt_db_file_schema_version(db) == 2, "version after migration %d",
              gt_db_file_schema_version(db));
    gt_key key;
    make_key(&key, 0);
    gt_db_winner got;
    int found = 0;
    TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found &&
                  strcmp(got.config, "v1cfg") == 0 && got.time_us == 42.5 &&
                  got.tflops == 3.25 && got.tuned_at == 1600000000 &&
                  strcmp(got.nvrtc, "12.4") == 0 && strcmp(got.driver, "12040") == 0 &&
                  strcmp(got.host, "old-host") == 0 && strcmp(got.libver, "0.0.9") == 0,
              "v1 winner after migration: found %d '%s'", found, got.config);
    TAP_CHECK(count_timings(db, &key, HASH, 0) == 1, "v1 timings after migration: %d",
              count_timings(db, &key, HASH, 0));
    gt_db_bin_key bk;
    bin_key(&bk, HASH, PROG, 90, "13.0", "13000");
    unsigned char img[100];
    fill_random(img, sizeof img, 5);
    void *image = NULL;
    size_t size = 0;
    TAP_CHECK(gt_db_cubin_put(db, &bk, img, sizeof img) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_cubin_get(db, &bk, &image, &size, &found) == GT_SUCCESS && found &&
                  size == sizeof img && memcmp(image, img, size) == 0,
              "cubin in a migrated file");
    free(image);
    TAP_CHECK(gt_db_cubin_count(db) == 1, "count %lld", (long long)gt_db_cubin_count(db));
    gt_db_close(db);
    raw_meta_version(path, v, sizeof v);
    TAP_CHECK(strcmp(v, "2") == 0, "meta schema_version '%s'", v);
    db = open_ok(path, 1, 0); /* now readable read-only */
    if (db) {
        TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found,
                  "read-only lookup after migration");
        gt_db_close(db);
    }

    /* Read-only: refused, untouched. */
    snprintf(ro, sizeof ro, "%s/v1_ro.db", dir);
    TAP_CHECK(raw_exec(ro, V1_FILE) == SQLITE_OK, "forging a v1 file");
    size_t len = 0;
    unsigned char *before = read_all(ro, &len);
    expect_refused(ro, 1, "older");
    TAP_CHECK(before && same_bytes(ro, before, len), "refused v1 file was modified");
    raw_meta_version(ro, v, sizeof v);
    TAP_CHECK(strcmp(v, "1") == 0, "refused file's version is now '%s'", v);
    free(before);

    /* A new file goes 0 -> 1 -> 2 and has every table. */
    snprintf(path, sizeof path, "%s/new.db", dir);
    db = open_ok(path, 0, 0);
    if (db) {
        TAP_CHECK(gt_db_file_schema_version(db) == 2 && gt_db_cubin_count(db) == 0,
                  "new file: version %d", gt_db_file_schema_version(db));
        gt_db_close(db);
    }
    char n[16];
    raw_text(path, 0, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                   "('meta', 'winners', 'timings', 'cubins')", n, sizeof n);
    TAP_CHECK(strcmp(n, "4") == 0, "new file has %s of the 4 tables", n);

    /* A file that says version 2 but lacks the cubins table is not a usable cache. */
    TAP_CHECK(raw_exec(path, "DROP TABLE cubins") == SQLITE_OK, "dropping cubins");
    expect_refused(path, 0, "cubins");
    expect_refused(path, 1, "cubins");
}

/* 18. GEMMTUNE_CACHE_MAX_MB: a store beyond the cap fails as "full" and leaves every
 * committed entry readable. */
static void full_timings(gt_db_timing *t, int n, int i) {
    for (int j = 0; j < n; j++) {
        char cfg[64], msg[256];
        snprintf(cfg, sizeof cfg, "cfg_%d_%d", i, j);
        memset(msg, 'm', sizeof msg - 1);
        msg[sizeof msg - 1] = 0;
        make_timing(&t[j], cfg, "launch_failed", -1, msg);
    }
}

static void test_full_disk(void) {
    char dir[DIR_MAX], path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cache.db", case_dir("full", dir, sizeof dir));
    enum { NT = 200, MAXN = 200 };
    gt_db_timing *t = calloc(NT, sizeof *t);
    setenv("GEMMTUNE_CACHE_MAX_MB", "1", 1);
    gt_db *db = open_ok(path, 0, 0);
    unsetenv("GEMMTUNE_CACHE_MAX_MB"); /* read at open; the handle keeps its cap */
    if (!db) {
        free(t);
        return;
    }
    int nstored = 0;
    gt_status s = GT_SUCCESS;
    for (int i = 0; i < MAXN; i++) {
        gt_key key;
        make_key(&key, i);
        gt_db_winner w;
        make_winner(&w, "cfg_full", i);
        full_timings(t, NT, i);
        s = gt_db_store(db, &key, HASH, 0, &w, t, NT);
        if (s != GT_SUCCESS) break;
        nstored++;
    }
    const char *m = gt_db_errmsg(db);
    printf("# %d entries fit; then: %s\n", nstored, m);
    TAP_CHECK(nstored > 0 && nstored < MAXN, "%d of %d entries stored under a 1 MiB cap",
              nstored, MAXN);
    TAP_CHECK(s == GT_CACHE_ERROR, "status %d", s);
    TAP_CHECK(strstr(m, "full") && strstr(m, path), "message: %s", m);
    /* The failed entry left nothing; a cubin beyond the cap fails the same way. */
    gt_key failed;
    make_key(&failed, nstored);
    gt_db_winner got;
    int found = 1;
    TAP_CHECK(gt_db_lookup(db, &failed, HASH, 0, &got, &found) == GT_SUCCESS && !found &&
                  count_timings(db, &failed, HASH, 0) == 0,
              "the failed store left rows");
    size_t big = 2u << 20;
    unsigned char *img = calloc(1, big);
    gt_db_bin_key bk;
    bin_key(&bk, HASH, PROG, 90, "13.0", "13000");
    s = gt_db_cubin_put(db, &bk, img, big);
    TAP_CHECK(s == GT_CACHE_ERROR && strstr(gt_db_errmsg(db), "full"),
              "2 MiB cubin under a 1 MiB cap: status %d: %s", s, gt_db_errmsg(db));
    TAP_CHECK(gt_db_cubin_count(db) == 0, "the failed put left a row");
    gt_db_close(db);
    struct stat st;
    TAP_CHECK(stat(path, &st) == 0 && st.st_size <= (1 << 20), "file is %lld bytes",
              (long long)st.st_size);

    /* Without the cap the file opens, holds every entry stored before, and grows. */
    db = open_ok(path, 0, 0);
    if (db) {
        int missing = 0;
        for (int i = 0; i < nstored; i++) {
            gt_key key;
            make_key(&key, i);
            if (gt_db_lookup(db, &key, HASH, 0, &got, &found) != GT_SUCCESS || !found ||
                got.time_us != i || count_timings(db, &key, HASH, 0) != NT)
                missing++;
        }
        TAP_CHECK(missing == 0, "%d of %d stored entries missing or incomplete", missing,
                  nstored);
        TAP_CHECK(gt_db_cubin_put(db, &bk, img, big) == GT_SUCCESS,
                  "uncapped put after a full one: %s", gt_db_errmsg(db));
        gt_db_close(db);
    }
    TAP_CHECK(integrity_ok(path), "integrity_check failed");

    /* Values that are not positive integers are ignored: no cap. */
    static const char *ignored[] = {"0", "-1", "abc", "1x", ""};
    for (int j = 0; j < 5; j++) {
        setenv("GEMMTUNE_CACHE_MAX_MB", ignored[j], 1);
        db = open_ok(path, 0, 0);
        unsetenv("GEMMTUNE_CACHE_MAX_MB");
        if (!db) continue;
        bk.arch = 100 + j;
        TAP_CHECK(gt_db_cubin_put(db, &bk, img, big) == GT_SUCCESS,
                  "GEMMTUNE_CACHE_MAX_MB='%s' capped the file: %s", ignored[j],
                  gt_db_errmsg(db));
        gt_db_close(db);
    }
    /* A cap below the current size: the file stays readable, only growth fails. */
    setenv("GEMMTUNE_CACHE_MAX_MB", "1", 1);
    db = open_ok(path, 0, 0);
    unsetenv("GEMMTUNE_CACHE_MAX_MB");
    if (db) {
        gt_key key;
        make_key(&key, 0);
        TAP_CHECK(gt_db_lookup(db, &key, HASH, 0, &got, &found) == GT_SUCCESS && found,
                  "lookup in a file above its cap: %s", gt_db_errmsg(db));
        bk.arch = 200;
        TAP_CHECK(gt_db_cubin_put(db, &bk, img, big) == GT_CACHE_ERROR, "grew beyond the cap");
        gt_db_close(db);
    }
    free(img);
    free(t);
}

/* 19. SIGKILL in the middle of a transaction (one whose pages already spilled into the
 * WAL), and at random moments of repeated stores: committed entries survive, uncommitted
 * rows do not, the file stays sound. */
#define KILL_COMMITTED 20
#define KILL_MARKER 200
#define KILL_ERROR 201

/* 1 byte from fd within ms; -1 on timeout, EOF or error. */
static int read_byte(int fd, int ms) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return -1;
    unsigned char b;
    return read(fd, &b, 1) == 1 ? b : -1;
}

static void kill_child_spill(const char *path, int out) {
    gt_db *db = NULL;
    char msg[512];
    unsigned char e = KILL_ERROR;
    if (gt_db_open(path, 0, 0, &db, msg, sizeof msg) != GT_SUCCESS) {
        if (write(out, &e, 1) != 1) _exit(3);
        _exit(1);
    }
    for (int i = 0; i < KILL_COMMITTED; i++) {
        gt_key key;
        make_key(&key, i);
        char cfg[32];
        snprintf(cfg, sizeof cfg, "committed%d", i);
        gt_db_winner w;
        make_winner(&w, cfg, i);
        gt_db_timing t;
        make_timing(&t, cfg, "ok", i, "");
        if (gt_db_store(db, &key, HASH, 0, &w, &t, 1) != GT_SUCCESS) {
            if (write(out, &e, 1) != 1) _exit(3);
            _exit(1);
        }
        unsigned char b = (unsigned char)i;
        if (write(out, &b, 1) != 1) _exit(3);
    }
    /* A tiny page cache forces the pager to spill dirty pages into the WAL long before
     * COMMIT: the file then holds frames of a transaction that never commits. */
    sqlite3 *c = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_open(path, &c);
    if (rc == SQLITE_OK) rc = sqlite3_exec(c, "PRAGMA cache_size=10", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(c, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(c, "INSERT INTO winners(" V1_KEY_COLS ", config, host) "
                                   "VALUES('Uncommitted GPU', 90, 132, 'f32', 'N', 'T', ?1, 1, "
                                   "1, 16, 0, 'src0123abcd', 0, 'uncommitted', ?2)",
                                -1, &st, NULL);
    char host[200];
    memset(host, 'u', sizeof host - 1);
    host[sizeof host - 1] = 0;
    for (int i = 0; rc == SQLITE_OK && i < 20000; i++) {
        sqlite3_bind_int(st, 1, i);
        sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(st);
    }
    unsigned char b = rc == SQLITE_OK ? KILL_MARKER : KILL_ERROR;
    if (write(out, &b, 1) != 1) _exit(3);
    for (;;) pause(); /* killed here, the transaction open */
}

static int count_device(const gt_key *key, const char *h, int major, const gt_db_winner *w,
                        void *user) {
    (void)h, (void)major, (void)w;
    struct { const char *dev; int n, total; } *c = user;
    c->total++;
    if (strcmp(key->device, c->dev) == 0) c->n++;
    return 0;
}

static void test_kill_mid_transaction(void) {
    char dir[DIR_MAX], path[PATH_MAX], wal[PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/cache.db", case_dir("kill", dir, sizeof dir));
    snprintf(wal, sizeof wal, "%s-wal", path);
    int p[2];
    if (pipe(p) != 0) TAP_SKIP("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        kill_child_spill(path, p[1]);
        _exit(0);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        TAP_SKIP("fork: %s", strerror(errno));
    }
    int reported = 0, b;
    while ((b = read_byte(p[0], 30000)) >= 0 && b < KILL_COMMITTED) reported++;
    struct stat st;
    long long walsize = stat(wal, &st) == 0 ? (long long)st.st_size : -1;
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    close(p[0]);
    TAP_CHECK(b == KILL_MARKER, "child did not reach the open transaction (byte %d)", b);
    TAP_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status 0x%x", status);
    TAP_CHECK(reported == KILL_COMMITTED, "%d entries reported", reported);
    printf("# killed with %lld bytes of WAL\n", walsize);
    TAP_CHECK(walsize > (2 << 20), "the open transaction did not spill into the WAL (%lld bytes)",
              walsize);

    gt_db *db = open_ok(path, 0, 0);
    if (!db) return;
    int missing = 0;
    for (int i = 0; i < reported; i++) {
        gt_key key;
        make_key(&key, i);
        gt_db_winner got;
        int found = 0;
        char cfg[32];
        snprintf(cfg, sizeof cfg, "committed%d", i);
        if (gt_db_lookup(db, &key, HASH, 0, &got, &found) != GT_SUCCESS || !found ||
            strcmp(got.config, cfg) != 0 || count_timings(db, &key, HASH, 0) != 1)
            missing++;
    }
    TAP_CHECK(missing == 0, "%d committed entries missing", missing);
    struct { const char *dev; int n, total; } c = {"Uncommitted GPU", 0, 0};
    TAP_CHECK(gt_db_list(db, count_device, &c) == GT_SUCCESS, "list: %s", gt_db_errmsg(db));
    TAP_CHECK(c.n == 0 && c.total == reported, "%d uncommitted rows visible, %d rows in all",
              c.n, c.total);
    /* And the file takes new writes. */
    gt_key key;
    make_key(&key, 999);
    gt_db_winner w;
    make_winner(&w, "after", 1);
    TAP_CHECK(gt_db_store(db, &key, HASH, 0, &w, NULL, 0) == GT_SUCCESS, "%s", gt_db_errmsg(db));
    gt_db_close(db);
    TAP_CHECK(integrity_ok(path), "integrity_check failed");
}

/* The child of the random-kill rounds: stores entries of device dev until killed,
 * reporting each committed index (4 bytes: atomic on a pipe). */
static void kill_child_stores(const char *path, const char *dev, int out) {
    gt_db *db = NULL;
    char msg[512];
    if (gt_db_open(path, 0, 0, &db, msg, sizeof msg) != GT_SUCCESS) _exit(1);
    gt_db_timing t[10];
    for (int i = 0;; i++) {
        gt_key key;
        make_key(&key, i);
        snprintf(key.device, sizeof key.device, "%s", dev);
        gt_db_winner w;
        make_winner(&w, "cfg_kill", i);
        for (int j = 0; j < 10; j++) {
            char cfg[32];
            snprintf(cfg, sizeof cfg, "cfg_%d", j);
            make_timing(&t[j], cfg, "ok", i + j, "");
        }
        if (gt_db_store(db, &key, HASH, 0, &w, t, 10) != GT_SUCCESS) _exit(2);
        if (write(out, &i, sizeof i) != (ssize_t)sizeof i) _exit(3);
    }
}

static void test_kill_random(void) {
    char dir[DIR_MAX], path[PATH_MAX];
    case_dir("killrand", dir, sizeof dir);
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    printf("# seed %u\n", seed);
    srand(seed);
    /* Even rounds share one file and kill after the child's first commit; odd rounds
     * kill a child on a fresh file within 5 ms of fork, often while it creates the file
     * or its schema. */
    for (int round = 0; round < 8; round++) {
        int early = round % 2;
        if (early) snprintf(path, sizeof path, "%s/early%d.db", dir, round);
        else snprintf(path, sizeof path, "%s/cache.db", dir);
        char dev[32];
        snprintf(dev, sizeof dev, "Kill GPU %d", round);
        int p[2];
        if (pipe(p) != 0) TAP_SKIP("pipe: %s", strerror(errno));
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            kill_child_stores(path, dev, p[1]);
            _exit(0);
        }
        close(p[1]);
        if (pid < 0) {
            close(p[0]);
            TAP_SKIP("fork: %s", strerror(errno));
        }
        /* Wait for the first commit (the child is then past open), then a random delay. */
        struct pollfd pf = {p[0], POLLIN, 0};
        int started = early || poll(&pf, 1, 30000) == 1;
        int delay_us = early ? rand() % 5000 : rand() % 30000;
        usleep((useconds_t)delay_us);
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        int rec, last = -1;
        while (read(p[0], &rec, sizeof rec) == (ssize_t)sizeof rec) {
            TAP_CHECK(rec == last + 1, "round %d: record %d after %d", round, rec, last);
            last = rec;
        }
        close(p[0]);
        TAP_CHECK(started, "round %d: child never committed", round);
        TAP_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "round %d: child status 0x%x", round, status);
        int reported = last + 1;
        gt_db *db = open_ok(path, 0, 0);
        if (!db) return;
        int missing = 0;
        for (int i = 0; i < reported; i++) {
            gt_key key;
            make_key(&key, i);
            snprintf(key.device, sizeof key.device, "%s", dev);
            gt_db_winner got;
            int found = 0;
            if (gt_db_lookup(db, &key, HASH, 0, &got, &found) != GT_SUCCESS || !found ||
                got.time_us != i || count_timings(db, &key, HASH, 0) != 10)
                missing++;
        }
        struct { const char *dev; int n, total; } c = {dev, 0, 0};
        TAP_CHECK(gt_db_list(db, count_device, &c) == GT_SUCCESS, "list");
        gt_db_close(db);
        printf("# round %d (%s): killed after %d us, %d entries reported, %d in the file\n",
               round, early ? "fresh file" : "after a commit", delay_us, reported, c.n);
        TAP_CHECK(missing == 0, "round %d: %d of %d reported entries missing", round, missing,
                  reported);
        /* At most the one store in flight committed without being reported. */
        TAP_CHECK(c.n == reported || c.n == reported + 1, "round %d: %d rows for %d reported",
                  round, c.n, reported);
        TAP_CHECK(integrity_ok(path), "round %d: integrity_check failed", round);
    }
}

/* 20. GEMMTUNE_CACHE_TIMEOUT_MS sets the busy timeout of handles opened without one. */
typedef struct {
    sqlite3 *c;
    int hold_ms;
} release_arg;

static void *release_later(void *p) {
    release_arg *a = p;
    usleep((useconds_t)a->hold_ms * 1000);
    sqlite3_exec(a->c, "COMMIT", NULL, NULL, NULL);
    return NULL;
}

/* Stores one entry through a handle opened with busy_ms while a raw connection holds the
 * write lock; releases it after hold_ms (never when hold_ms < 0). Returns the status and
 * the time taken; msg gets the handle's message. */
static gt_status store_under_lock(const char *path, int busy_ms, int hold_ms, double *dt,
                                  char *msg, size_t msgsize) {
    sqlite3 *c = NULL;
    *dt = 0;
    msg[0] = 0;
    if (sqlite3_open(path, &c) != SQLITE_OK ||
        sqlite3_exec(c, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_close(c);
        snprintf(msg, msgsize, "cannot take the lock");
        return GT_INTERNAL;
    }
    gt_db *db = open_ok(path, 0, busy_ms);
    gt_status s = GT_INTERNAL;
    if (db) {
        release_arg a = {c, hold_ms};
        pthread_t th;
        int started = hold_ms >= 0 && pthread_create(&th, NULL, release_later, &a) == 0;
        gt_key key;
        make_key(&key, 20);
        gt_db_winner w;
        make_winner(&w, "cfg_timeout", 1);
        double t0 = now_s();
        s = gt_db_store(db, &key, HASH, 0, &w, NULL, 0);
        *dt = now_s() - t0;
        snprintf(msg, msgsize, "%s", gt_db_errmsg(db));
        if (started) pthread_join(th, NULL);
        gt_db_close(db);
    }
    sqlite3_exec(c, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(c);
    return s;
}

static void test_timeout_env(void) {
    char dir[DIR_MAX], path[PATH_MAX], msg[512];
    snprintf(path, sizeof path, "%s/cache.db", case_dir("timeout", dir, sizeof dir));
    gt_db *db = open_ok(path, 0, 0);
    if (!db) return;
    gt_db_close(db);
    double dt;

    setenv("GEMMTUNE_CACHE_TIMEOUT_MS", "200", 1);
    gt_status s = store_under_lock(path, 0, -1, &dt, msg, sizeof msg);
    printf("# 200 ms from the environment: %.3f s: %s\n", dt, msg);
    TAP_CHECK(s == GT_CACHE_ERROR, "status %d", s);
    TAP_CHECK(dt >= 0.15 && dt < 2.0, "store took %.3f s", dt);
    TAP_CHECK(strstr(msg, "locked") && strstr(msg, "busy timeout (200 ms)") && strstr(msg, path),
              "message: %s", msg);
    /* The caller's own timeout wins over the environment. */
    s = store_under_lock(path, 1500, 400, &dt, msg, sizeof msg);
    TAP_CHECK(s == GT_SUCCESS, "busy_timeout_ms 1500, lock held 400 ms: status %d (%.3f s): %s",
              s, dt, msg);
    /* Unset, or not a positive integer: the default (5000 ms), far above a 400 ms hold. */
    static const char *defaults[] = {NULL, "12abc", "0", "-5"};
    for (int i = 0; i < 4; i++) {
        if (defaults[i]) setenv("GEMMTUNE_CACHE_TIMEOUT_MS", defaults[i], 1);
        else unsetenv("GEMMTUNE_CACHE_TIMEOUT_MS");
        s = store_under_lock(path, 0, 400, &dt, msg, sizeof msg);
        TAP_CHECK(s == GT_SUCCESS && dt >= 0.3,
                  "GEMMTUNE_CACHE_TIMEOUT_MS=%s, lock held 400 ms: status %d (%.3f s): %s",
                  defaults[i] ? defaults[i] : "(unset)", s, dt, msg);
    }
    unsetenv("GEMMTUNE_CACHE_TIMEOUT_MS");
}

/* ===================================================================================
 * Main
 * =================================================================================== */

static int remove_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

/* gt_db_claim's state for owner (major version 0), or -1 where the call fails. */
static int claim_as(gt_db *db, const gt_key *key, const char *hash, const char *owner, double ttl) {
    gt_db_claim_state st;
    gt_db_winner w;
    return gt_db_claim(db, key, hash, 0, owner, ttl, &st, &w) == GT_SUCCESS ? (int)st : -1;
}

/* Tuning claims and first-come winners (gt_db_claim, gt_db_unclaim, gt_db_store_first):
 * two handles on one file stand for two processes. */
static void test_claims(void) {
    char dir[DIR_MAX], path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cache.db", case_dir("claims", dir, sizeof dir));
    gt_db *p1 = open_ok(path, 0, 0), *p2 = open_ok(path, 0, 0);
    if (!p1 || !p2) {
        gt_db_close(p1), gt_db_close(p2);
        return;
    }
    gt_key key, other;
    make_key(&key, 7);
    make_key(&other, 8);
    gt_db_claim_state st = GT_DB_CLAIM_HELD;
    gt_db_winner w, kept;
    int c = claim_as(p1, &key, HASH, "h:1", 30);
    TAP_CHECK(c == GT_DB_CLAIM_TAKEN, "first claim: state %d: %s", c, gt_db_errmsg(p1));
    c = claim_as(p2, &key, HASH, "h:2", 30);
    TAP_CHECK(c == GT_DB_CLAIM_HELD, "second owner: state %d, want held", c);
    c = claim_as(p1, &key, HASH, "h:1", 30);
    TAP_CHECK(c == GT_DB_CLAIM_TAKEN, "the owner again: state %d", c);
    /* Claims are per key, source hash and major version. */
    c = claim_as(p2, &other, HASH, "h:2", 30);
    TAP_CHECK(c == GT_DB_CLAIM_TAKEN, "another key: state %d", c);
    c = claim_as(p2, &key, "another-hash", "h:2", 30);
    TAP_CHECK(c == GT_DB_CLAIM_TAKEN, "another source hash: state %d", c);
    /* Only the owner drops a claim. */
    TAP_CHECK(gt_db_unclaim(p2, &key, HASH, 0, "h:2") == GT_SUCCESS, "%s", gt_db_errmsg(p2));
    c = claim_as(p2, &key, HASH, "h:2", 30);
    TAP_CHECK(c == GT_DB_CLAIM_HELD, "after another owner's unclaim: state %d, want held", c);
    TAP_CHECK(gt_db_unclaim(p1, &key, HASH, 0, "h:1") == GT_SUCCESS, "%s", gt_db_errmsg(p1));
    c = claim_as(p2, &key, HASH, "h:2", 0.2);
    TAP_CHECK(c == GT_DB_CLAIM_TAKEN, "after the owner's unclaim: state %d", c);
    /* An expired claim (a killed owner's) is taken over. */
    c = claim_as(p1, &key, HASH, "h:1", 30);
    TAP_CHECK(c == GT_DB_CLAIM_HELD, "before expiry: state %d", c);
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    c = claim_as(p1, &key, HASH, "h:1", 30);
    TAP_CHECK(c == GT_DB_CLAIM_TAKEN, "after expiry: state %d", c);
    /* The first winner stays; the second process is told which it is. */
    gt_db_winner a, b;
    make_winner(&a, "cfgA", 10);
    make_winner(&b, "cfgB", 8);
    gt_db_timing t;
    make_timing(&t, "cfgB", "ok", 8, "");
    TAP_CHECK(gt_db_store_first(p1, &key, HASH, 0, &a, NULL, 0, &kept) == GT_SUCCESS &&
                  winners_equal(&kept, &a),
              "first store: kept '%s'", kept.config);
    TAP_CHECK(gt_db_store_first(p2, &key, HASH, 0, &b, &t, 1, &kept) == GT_SUCCESS &&
                  winners_equal(&kept, &a),
              "second store: kept '%s', want cfgA", kept.config);
    int found = 0;
    TAP_CHECK(gt_db_lookup(p2, &key, HASH, 0, &w, &found) == GT_SUCCESS && found &&
                  strcmp(w.config, "cfgA") == 0,
              "stored winner '%s'", w.config);
    timing_acc acc = {0};
    TAP_CHECK(gt_db_timings(p2, &key, HASH, 0, collect_timing, &acc) == GT_SUCCESS && acc.n == 1 &&
                  strcmp(acc.t[0].config, "cfgB") == 0,
              "the second store's timings kept: %d rows", acc.n);
    /* With a winner stored, a claim answers with it, whoever holds the claim. */
    TAP_CHECK(gt_db_claim(p2, &key, HASH, 0, "h:2", 30, &st, &w) == GT_SUCCESS &&
                  st == GT_DB_CLAIM_STORED && strcmp(w.config, "cfgA") == 0,
              "claim of a stored key: state %d, '%s'", st, w.config);
    gt_db_close(p1);
    gt_db_close(p2);
    /* A read-only handle cannot claim. */
    gt_db *ro = open_ok(path, 1, 0);
    if (ro) {
        TAP_CHECK(gt_db_claim(ro, &other, HASH, 0, "h:3", 30, &st, &w) == GT_CACHE_ERROR &&
                      strstr(gt_db_errmsg(ro), "read-only"),
                  "read-only claim: %s", gt_db_errmsg(ro));
        gt_db_close(ro);
    }
}

int main(void) {
    snprintf(root, sizeof root, "/tmp/gt_test_cache.XXXXXX");
    if (!mkdtemp(root)) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    TAP_RUN(test_round_trip);
    TAP_RUN(test_replace);
    TAP_RUN(test_claims);
    TAP_RUN(test_schema_version);
    TAP_RUN(test_corrupt_files);
    TAP_RUN(test_readonly);
    TAP_RUN(test_nested_dir);
    TAP_RUN(test_concurrent_writers);
    TAP_RUN(test_default_path);
    TAP_RUN(test_list_order);
    TAP_RUN(test_locked_file);
    TAP_RUN(test_invalid_args);
    TAP_RUN(test_threads);
    TAP_RUN(test_merge);
    TAP_RUN(test_prune);
    TAP_RUN(test_neighbors);
    TAP_RUN(test_cubins);
    TAP_RUN(test_wal_emptied);
    TAP_RUN(test_generation_states);
    TAP_RUN(test_class_timings);
    TAP_RUN(test_migrate_v1);
    TAP_RUN(test_full_disk);
    TAP_RUN(test_kill_mid_transaction);
    TAP_RUN(test_kill_random);
    TAP_RUN(test_timeout_env);
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
