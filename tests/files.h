/*
 * files.h: file helpers shared by the tests (test_cache, test_cli, test_cluster): whole
 * files as bytes or text, byte-for-byte comparison, counting substrings of captured
 * output, and raw SQL on a cache file for the cases that must forge one.
 */
#ifndef GT_TEST_FILES_H
#define GT_TEST_FILES_H

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file, malloc'd (never NUL-terminated); NULL when it cannot be read whole. */
static inline unsigned char *read_all(const char *path, size_t *len) {
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* 1 when the file holds exactly these bytes. */
static inline int same_bytes(const char *path, const unsigned char *data, size_t len) {
    size_t n = 0;
    unsigned char *now = read_all(path, &n);
    int same = now && n == len && memcmp(now, data, len) == 0;
    free(now);
    return same;
}

/* The whole file as a malloc'd string; "" when it is missing or unreadable. */
static inline char *slurp(const char *path) {
    size_t n = 0;
    unsigned char *bytes = read_all(path, &n);
    char *s = calloc(bytes ? n + 1 : 1, 1);
    if (s && bytes) memcpy(s, bytes, n);
    free(bytes);
    return s;
}

/* Occurrences of sub in s, not overlapping. */
static inline int count_substr(const char *s, const char *sub) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub)) n++;
    return n;
}

/* The first column of the first row of sql, as text ("" when there is none), through a
 * raw read-only SQLite connection; immutable: the file opened with no locks and nothing
 * written (a file another process may hold or be writing). */
static inline void raw_text(const char *path, int immutable, const char *sql, char *buf,
                            size_t size) {
    char uri[PATH_MAX + 32];
    snprintf(uri, sizeof uri, "file:%s?immutable=1", path);
    sqlite3 *c = NULL;
    sqlite3_stmt *st = NULL;
    buf[0] = 0;
    if (sqlite3_open_v2(immutable ? uri : path, &c,
                        SQLITE_OPEN_READONLY | (immutable ? SQLITE_OPEN_URI : 0), NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(c, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_text(st, 0))
        snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(c);
}

/* Runs sql on the file with a raw SQLite connection; the SQLite result code. */
static inline int raw_exec(const char *path, const char *sql) {
    sqlite3 *c = NULL;
    int rc = sqlite3_open(path, &c);
    if (rc == SQLITE_OK) rc = sqlite3_exec(c, sql, NULL, NULL, NULL);
    sqlite3_close(c);
    return rc;
}

#endif
