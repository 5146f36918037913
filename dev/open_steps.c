/*
 * open_steps.c: where the cache layers' opening spends its time, one step at a time, in a
 * new process each (the first call of a process opens them). STEP is one of:
 *   layers  gt_layers_open() as a first call makes it (user cache on GEMMTUNE_CACHE, the
 *           shipped files, the built-in defaults)
 *   user    gt_db_open of FILE alone (writable, as the user cache)
 *   image   gt_db_open_image of the built-in defaults alone
 *   raw     FILE through SQLite's own calls, each timed: the open, the journal and
 *           synchronous pragmas, the schema version, the statements' preparation, and a
 *           count(*) of each table (gt_db's open walks them)
 * Prints one line of milliseconds per run.
 *
 * Build (from the repository root, after tools/build.sh or tools/gpu_build.sh, B its
 * build folder):
 *        cc -std=c11 -D_DEFAULT_SOURCE -Ibase -Ituner -Itests -Iinclude -Icache -Iruntime \
 *            -Isrc -I$B dev/open_steps.c $B/libgemmtune.a -lsqlite3 -ldl -lpthread -lm \
 *            -o /tmp/open_steps
 * Usage: GEMMTUNE_CACHE=FILE /tmp/open_steps layers|user|image|raw [FILE]
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "defaults_image.h"
#include "layers.h"
#include "measure.h"

static double ms(double t0) { return (gt_measure_now_s() - t0) * 1e3; }

static double exec_ms(sqlite3 *c, const char *sql) {
    double t0 = gt_measure_now_s();
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) == SQLITE_OK)
        while (sqlite3_step(st) == SQLITE_ROW) {
        }
    sqlite3_finalize(st);
    return ms(t0);
}

static int raw(const char *path) {
    sqlite3 *c = NULL;
    double t0 = gt_measure_now_s();
    if (sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    double open = ms(t0);
    double ver = exec_ms(c, "SELECT value FROM meta");
    double wal = exec_ms(c, "PRAGMA journal_mode=WAL");
    double syn = exec_ms(c, "PRAGMA synchronous=NORMAL");
    t0 = gt_measure_now_s();
    static const char *const sql[] = {
        "SELECT config FROM winners WHERE device = ?1 AND dtype = ?2",
        "SELECT config FROM timings WHERE device = ?1 AND dtype = ?2",
        "SELECT image FROM cubins WHERE src_hash = ?1 AND program = ?2",
        "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)",
        "SELECT device, m, n, k FROM winners ORDER BY device, dtype, m, n, k",
        "SELECT config, status FROM timings WHERE m = ?1 AND n = ?2 ORDER BY status",
        "DELETE FROM timings WHERE device = ?1 AND m = ?2",
        "SELECT opa, opb, config FROM timings WHERE device = ?1 AND (?2 = 1 OR opa = ?3)",
        "SELECT program, size FROM cubins WHERE src_hash = ?1 AND arch = ?2",
        "SELECT time_us FROM winners WHERE device = ?1 AND m = ?2 AND n = ?3",
        "INSERT OR REPLACE INTO cubins(src_hash, program, arch, nvrtc, driver, image, size, "
        "stored_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        "SELECT tflops FROM timings WHERE device = ?1 AND k = ?2",
    };
    const int n = (int)(sizeof sql / sizeof *sql);
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *st = NULL;
        sqlite3_prepare_v2(c, sql[i], -1, &st, NULL);
        sqlite3_finalize(st);
    }
    double prep = ms(t0);
    double cw = exec_ms(c, "SELECT count(*) FROM winners");
    double ct = exec_ms(c, "SELECT count(*) FROM timings");
    double cc = exec_ms(c, "SELECT count(*) FROM cubins");
    t0 = gt_measure_now_s();
    sqlite3_close(c);
    printf("raw ms: open %.3f, version %.3f, WAL %.3f, synchronous %.3f, %d prepares %.3f, "
           "count winners %.3f, timings %.3f, cubins %.3f, close %.3f\n",
           open, ver, wal, syn, n, prep, cw, ct, cc, ms(t0));
    return 0;
}

int main(int argc, char **argv) {
    const char *step = argc > 1 ? argv[1] : "";
    char msg[1200];
    gt_db *db = NULL;
    double t0 = gt_measure_now_s();
    if (strcmp(step, "layers") == 0) {
        gt_layers_open();
        printf("layers ms: %.3f (%d layers)\n", ms(t0), gt_layers_count());
        return 0;
    }
    if (strcmp(step, "user") == 0 && argc > 2) {
        gt_status s = gt_db_open(argv[2], 0, 0, &db, msg, sizeof msg);
        printf("user ms: %.3f (%s)\n", ms(t0), s == GT_SUCCESS ? "open" : msg);
        return 0;
    }
    if (strcmp(step, "image") == 0) {
        gt_status s = gt_db_open_image("built-in defaults", gt_defaults_image,
                                       gt_defaults_image_size, &db, msg, sizeof msg);
        printf("image ms: %.3f (%zu bytes; %s)\n", ms(t0), gt_defaults_image_size,
               s == GT_SUCCESS ? "open" : msg);
        return 0;
    }
    if (strcmp(step, "raw") == 0 && argc > 2) return raw(argv[2]);
    fprintf(stderr, "usage: open_steps layers|user|image|raw [FILE]\n");
    return 2;
}
