/*
 * cache.c: the verbs of the gemmtune command that work on cache files and need no GPU
 * (cache.h): list, show, export, import, merge, prune.
 *
 * A cache file is an SQLite file or a cache text (cache/text.h: the form of the built-in
 * defaults, data/defaults/): every input is read as either, told by its first line (a
 * text is loaded into a private in-memory cache first), and export and merge write a text
 * with --text.
 *
 * "The cache" is the user cache: --cache FILE, else GEMMTUNE_CACHE, else the default
 * (gt_db_default_path). Exported and merged files carry configurations and timings of
 * the current kernel source hash and library major only, never cubins, and are written
 * whole (FILE.tmp.<pid>, then rename), so a node reading an older copy never sees half
 * a file. Every configuration read from a file by export, import or merge is checked
 * against the parameter table and the legal constraints under the limits every
 * supported GPU shares (gt_kcfg_validate, gt_kcfg_limits_generic) before it is written
 * anywhere that a process would compile it from; a bad entry is named on stderr with
 * the reason, counted and skipped, and the other entries go on.
 *
 * Every file is opened by the policy of its directory (gt_layers_open_file): on a network
 * or parallel filesystem an input is read as a snapshot, and a file written is this
 * host's alone (gt_db_open_host); "the cache" there is this host's file (cli_cache_path).
 *
 * Owns the files it writes (the new file of export and merge, the cache for import and
 * prune). Touches a cache only through cache/db.h and cache/layers.h and knows no SQL;
 * loads the driver only to learn its version (prune), never a device. Includes parse.h
 * of cli/, nothing else of it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"

#include "cu.h"
#include "db.h"
#include "gemmtune.h"
#include "kcfg.h"
#include "kernel_sources.h"
#include "key.h"
#include "layers.h"
#include "rtc.h"
#include "text.h"

#include "parse.h"

/* ===== entries of a file ===== */

/* Room for one more element in *v of n elements (capacity *cap, first allocation
 * `first`): the array to use, or NULL when out of memory (*v left as it was). */
static void *grow(void *v, int n, int *cap, size_t size, int first) {
    if (n < *cap) return v;
    int ncap = *cap ? 2 * *cap : first;
    void *nv = realloc(v, size * (size_t)ncap);
    if (nv) *cap = ncap;
    return nv;
}

#define SRC_HASH_MAX 128

/* One winner row as read from a file. */
typedef struct entry {
    gt_key key;
    char src_hash[SRC_HASH_MAX];
    int lib_major;
    int current;     /* of this kernel source hash and library major */
    gt_db_winner w;
} entry;

typedef struct entries {
    entry *v;
    int n, cap;
    int oom;
} entries;

static int collect_entry(const gt_key *key, const char *src_hash, int lib_major,
                         const gt_db_winner *w, void *user) {
    entries *es = user;
    entry *nv = grow(es->v, es->n, &es->cap, sizeof *nv, 64);
    if (!nv) {
        es->oom = 1;
        return 1;
    }
    es->v = nv;
    entry *e = &es->v[es->n++];
    memset(e, 0, sizeof *e);
    e->key = *key;
    snprintf(e->src_hash, sizeof e->src_hash, "%s", src_hash ? src_hash : "");
    e->lib_major = lib_major;
    e->current = src_hash && strcmp(src_hash, gt_kernel_source_hash) == 0 &&
                 lib_major == GT_VERSION_MAJOR;
    e->w = *w;
    return 0;
}

/* How a read of db went: 0, or -1 after a message (out of memory while collecting the
 * rows, or the database's error). */
static int read_outcome(const char *verb, const char *path, gt_db *db, gt_status s, int oom) {
    if (oom) {
        fprintf(stderr, "gemmtune %s: %s: out of memory\n", verb, path);
        return -1;
    }
    if (s != GT_SUCCESS) {
        fprintf(stderr, "gemmtune %s: %s: %s\n", verb, path, gt_db_errmsg(db));
        return -1;
    }
    return 0;
}

/* Every winner of db into *es (the list callback may not use db, so rows are collected
 * first and their timings read afterwards). 0, or -1 after a message. */
static int load_entries(const char *verb, const char *path, gt_db *db, entries *es) {
    memset(es, 0, sizeof *es);
    gt_status s = gt_db_list(db, collect_entry, es);
    return read_outcome(verb, path, db, s, es->oom);
}

typedef struct timings {
    gt_db_timing *v;
    int n, cap;
    int oom;
} timings;

static int collect_timing(const gt_db_timing *t, void *user) {
    timings *ts = user;
    gt_db_timing *nv = grow(ts->v, ts->n, &ts->cap, sizeof *nv, 32);
    if (!nv) {
        ts->oom = 1;
        return 1;
    }
    ts->v = nv;
    ts->v[ts->n++] = *t;
    return 0;
}

/* The candidate rows of e (ts->n = 0 first). 0, or -1 after a message. */
static int load_timings(const char *verb, const char *path, gt_db *db, const entry *e,
                        timings *ts) {
    ts->n = 0, ts->oom = 0;
    gt_status s = gt_db_timings(db, &e->key, e->src_hash, e->lib_major, collect_timing, ts);
    return read_outcome(verb, path, db, s, ts->oom);
}

/* ===== validation ===== */

static int valid_align(int a) { return a == 1 || a == 2 || a == 4 || a == 8 || a == 16; }

/* Whether the key itself is one a process could build: 0, else -1 with why. */
static int check_key(const gt_key *k, char *why, size_t size) {
    const char *bad = NULL;
    if (!k->device[0]) bad = "empty device name";
    else if (k->cc_major < 5 || k->cc_major > 99 || k->cc_minor < 0 || k->cc_minor > 9)
        bad = "compute capability outside sm_50..sm_999";
    else if (k->sm_count < 1) bad = "SM count below 1";
    else if (strcmp(gt_dtype_name(k->dtype), "?") == 0) bad = "unknown data type";
    /* The library refuses these types below sm_80 (gemm_tuned_ex): no process asks. */
    else if (gt_dtype_tensor_only(k->dtype) && k->cc_major < 8)
        bad = "a tensor-core-only data type below compute capability 8.0";
    else if ((k->opa != 0 && k->opa != 1) || (k->opb != 0 && k->opb != 1)) bad = "unknown op";
    else if (k->m < 1 || k->n < 1 || k->k < 1 || k->m > 2147483647LL || k->n > 2147483647LL ||
             k->k > 2147483647LL)
        bad = "size outside 1..2^31-1";
    else if (!valid_align(k->align)) bad = "alignment class not 1, 2, 4, 8 or 16";
    else if (k->beta0 != 0 && k->beta0 != 1) bad = "beta0 neither 0 nor 1";
    if (!bad) return 0;
    snprintf(why, size, "key: %s", bad);
    return -1;
}

/* Checks an entry and its candidate rows before they are written anywhere: the key, the
 * winner's time, and every configuration against the parameter table and the legal
 * constraints (limits every supported GPU shares). 0, or -1 with the reason and the
 * offending configuration (bad_cfg, "" when it is not a configuration). */
static int check_entry(const entry *e, const timings *ts, char *bad_cfg, size_t cfgsize,
                       char *why, size_t size) {
    bad_cfg[0] = 0;
    if (check_key(&e->key, why, size) != 0) return -1;
    gt_klimits lim;
    gt_kcfg_limits_generic(&e->key, &lim);
    gt_kcfg cfg;
    if (gt_kcfg_validate(e->w.config, &e->key, &lim, &cfg, why, size) != 0) {
        snprintf(bad_cfg, cfgsize, "%s", e->w.config);
        return -1;
    }
    if (!isfinite(e->w.time_us) || e->w.time_us <= 0 || !isfinite(e->w.tflops) ||
        e->w.tflops < 0) {
        snprintf(bad_cfg, cfgsize, "%s", e->w.config);
        snprintf(why, size, "winner time %g us, %g TFLOP/s: not a measurement", e->w.time_us,
                 e->w.tflops);
        return -1;
    }
    for (int i = 0; i < ts->n; i++)
        if (gt_kcfg_validate(ts->v[i].config, &e->key, &lim, &cfg, why, size) != 0) {
            snprintf(bad_cfg, cfgsize, "%s", ts->v[i].config);
            return -1;
        }
    return 0;
}

/* ===== copying entries between files ===== */

typedef struct filter {
    const char *device; /* exact device name; NULL: any */
    int dtype;          /* -1: any */
    int keep;           /* --keep: each key's fastest this many timings that ran; 0: all */
} filter;

static int by_time(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* --keep: drops every timing that ran but the fastest keep and the winner's (ties by the
 * rows' order); failed ones stay, so the selector never chooses them. The rest keep their
 * order. 0, or -1 out of memory. */
static int keep_fastest(timings *ts, int keep, const char *winner) {
    if (keep <= 0) return 0;
    int nok = 0;
    for (int i = 0; i < ts->n; i++) nok += strcmp(ts->v[i].status, "ok") == 0;
    if (nok <= keep) return 0;
    double *t = malloc(sizeof *t * (size_t)nok);
    if (!t) return -1;
    for (int i = 0, j = 0; i < ts->n; i++)
        if (strcmp(ts->v[i].status, "ok") == 0) t[j++] = ts->v[i].time_us;
    qsort(t, (size_t)nok, sizeof *t, by_time);
    const double cut = t[keep - 1];
    free(t);
    int j = 0, taken = 0;
    for (int i = 0; i < ts->n; i++) {
        if (strcmp(ts->v[i].status, "ok") == 0) {
            const int fast = ts->v[i].time_us <= cut && taken < keep;
            if (!fast && strcmp(ts->v[i].config, winner) != 0) continue;
            taken += fast;
        }
        ts->v[j++] = ts->v[i];
    }
    ts->n = j;
    return 0;
}

typedef struct counts {
    int seen;          /* winner rows read */
    int stored;        /* written (new key, or faster than what was there) */
    int kept;          /* the destination had the key at an equal or better time */
    int rejected;      /* failed validation */
    int other_source;  /* of another kernel source hash or library major: left out */
    int unselected;    /* not of --device / --dtype */
} counts;

/* Copies every current, selected, valid entry of in (with its candidate rows) into out
 * by keep-the-faster merge. Rejections are printed and counted; 0, or -1 after a
 * message when a file cannot be read or out cannot be written. */
static int copy_entries(const char *verb, const char *inpath, gt_db *in, const char *outpath,
                        gt_db *out, const filter *flt, counts *c) {
    entries es;
    if (load_entries(verb, inpath, in, &es) != 0) {
        free(es.v);
        return -1;
    }
    timings ts;
    memset(&ts, 0, sizeof ts);
    int rc = 0;
    for (int i = 0; i < es.n && rc == 0; i++) {
        const entry *e = &es.v[i];
        c->seen++;
        if (!e->current) {
            c->other_source++;
            continue;
        }
        if ((flt->device && strcmp(flt->device, e->key.device) != 0) ||
            (flt->dtype >= 0 && flt->dtype != e->key.dtype)) {
            c->unselected++;
            continue;
        }
        if (load_timings(verb, inpath, in, e, &ts) != 0) {
            rc = -1;
            break;
        }
        char why[512], bad[GT_DB_CONFIG_MAX], keytext[256];
        if (check_entry(e, &ts, bad, sizeof bad, why, sizeof why) != 0) {
            gt_key_format(&e->key, keytext, sizeof keytext);
            fprintf(stderr, "gemmtune %s: %s: rejected %s '%s': %s\n", verb, inpath, keytext,
                    bad[0] ? bad : e->w.config, why);
            c->rejected++;
            continue;
        }
        if (keep_fastest(&ts, flt->keep, e->w.config) != 0) {
            fprintf(stderr, "gemmtune %s: out of memory\n", verb);
            rc = -1;
            break;
        }
        int stored = 0;
        if (gt_db_merge(out, &e->key, e->src_hash, e->lib_major, &e->w, ts.v, ts.n, &stored) !=
            GT_SUCCESS) {
            fprintf(stderr, "gemmtune %s: cannot write %s: %s\n", verb, outpath,
                    gt_db_errmsg(out));
            rc = -1;
            break;
        }
        if (stored) c->stored++;
        else c->kept++;
    }
    free(ts.v);
    free(es.v);
    return rc;
}

/* Prints what copy_entries left out, on stderr. */
static void say_left_out(const char *verb, const char *path, const counts *c) {
    if (c->other_source)
        fprintf(stderr,
                "gemmtune %s: %s: left out %d entries of other kernel sources or library "
                "versions (this is kernel source %s, library %d.x)\n",
                verb, path, c->other_source, gt_kernel_source_hash, GT_VERSION_MAJOR);
    if (c->unselected)
        fprintf(stderr, "gemmtune %s: %s: %d entries of other devices or data types not "
                        "selected\n", verb, path, c->unselected);
    if (c->rejected)
        fprintf(stderr, "gemmtune %s: %s: %d entries rejected (above)\n", verb, path,
                c->rejected);
}

static int count_entry(const gt_key *key, const char *src_hash, int lib_major,
                       const gt_db_winner *w, void *user) {
    (void)key, (void)src_hash, (void)lib_major, (void)w;
    ++*(long long *)user;
    return 0;
}

/* ===== files ===== */

/* Whether a and b name one file (the same text, or the same inode when both exist). */
static int same_file(const char *a, const char *b) {
    if (strcmp(a, b) == 0) return 1;
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* 1 when the file at path begins as a cache text (text.h), 0 when not or unreadable (the
 * SQLite open then says why). */
static int is_text_file(const char *path) {
    char head[64];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return gt_text_is(head, n);
}

/* A cache text file read into a private in-memory cache, *db. 0, or -1 after a message
 * naming the file (and the line, for a malformed one). */
static int open_text_input(const char *verb, const char *path, gt_db **db) {
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0, cap = 0;
    int err = 0;
    if (!f) err = errno;
    while (f && !err) {
        if (len == cap) {
            size_t ncap = cap ? 2 * cap : 65536;
            char *nt = realloc(text, ncap);
            if (!nt) {
                err = ENOMEM;
                break;
            }
            text = nt, cap = ncap;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) err = errno ? errno : EIO;
            break;
        }
    }
    if (f) fclose(f);
    if (err) {
        fprintf(stderr, "gemmtune %s: cannot read %s: %s\n", verb, path, strerror(err));
        free(text);
        return -1;
    }
    char msg[1024];
    gt_status s = gt_text_open(text, len, path, db, NULL, msg, sizeof msg);
    free(text);
    if (s != GT_SUCCESS) {
        fprintf(stderr, "gemmtune %s: cannot read %s\n", verb, msg);
        *db = NULL;
        return -1;
    }
    return 0;
}

/* Opens an existing cache file (SQLite, or a cache text) read-only. 0, or -1 after a
 * message naming it. */
static int open_input(const char *verb, const char *path, gt_db **db) {
    char msg[512];
    struct stat st;
    *db = NULL;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "gemmtune %s: cannot read %s: %s\n", verb, path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gemmtune %s: cannot read %s: it is a directory\n", verb, path);
        return -1;
    }
    if (is_text_file(path)) return open_text_input(verb, path, db);
    if (gt_layers_open_file(path, 1, 1, db, msg, sizeof msg) != GT_SUCCESS) {
        fprintf(stderr, "gemmtune %s: cannot read %s: %s\n", verb, path, msg);
        *db = NULL;
        return -1;
    }
    return 0;
}

/* The user cache's path into path: 1 when the file exists; 0 when it does not, after
 * printing "cache PATH does not exist yet: <absent>"; -1 when no path can be formed
 * (after a message). */
static int find_cache(const char *verb, char *path, size_t size, const char *absent) {
    if (cli_cache_path(verb, path, size) != 0) return -1;
    if (access(path, F_OK) == 0) return 1;
    printf("cache %s does not exist yet: %s\n", path, absent);
    return 0;
}

/* A file written whole: built at <path>.tmp.<pid>, renamed over path on success,
 * removed on failure. A text (text != 0) is built in a private in-memory cache and
 * written at the commit. */
typedef struct newfile {
    char path[PATH_MAX];
    char tmp[PATH_MAX + 32];
    gt_db *db;
    int text;
} newfile;

static void remove_tmp(const newfile *f) {
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        char p[PATH_MAX + 48];
        snprintf(p, sizeof p, "%s%s", f->tmp, sfx[i]);
        unlink(p);
    }
}

/* 0, or -1 after a message. The directory of path must exist: nothing is created but
 * the file. text != 0: the file is a cache text (text.h). */
static int newfile_begin(const char *verb, const char *path, int text, newfile *f) {
    f->db = NULL;
    f->text = text;
    if (strlen(path) >= sizeof f->path - 1) {
        fprintf(stderr, "gemmtune %s: path too long: %s\n", verb, path);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", path, (long)getpid());
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir) dir[1] = 0;
    else if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gemmtune %s: cannot write %s: %s is not a directory\n", verb, path,
                dir);
        return -1;
    }
    char msg[512];
    gt_status s = text ? gt_db_open(":memory:", 0, 0, &f->db, msg, sizeof msg)
                       : gt_layers_open_file(f->tmp, 0, 0, &f->db, msg, sizeof msg);
    if (s != GT_SUCCESS) {
        fprintf(stderr, "gemmtune %s: cannot write %s: %s\n", verb, path, msg);
        f->db = NULL;
        remove_tmp(f);
        return -1;
    }
    return 0;
}

static void newfile_abort(newfile *f) {
    if (f->db) gt_db_close(f->db);
    f->db = NULL;
    remove_tmp(f);
}

/* The text of f's in-memory cache into f->tmp, synced. 0, or -1 after a message. */
static int write_text(const char *verb, const newfile *f) {
    char *text = NULL, msg[600];
    size_t len = 0;
    if (gt_text_write(f->db, NULL, &text, &len, NULL, msg, sizeof msg) != GT_SUCCESS) {
        fprintf(stderr, "gemmtune %s: cannot write %s: %s\n", verb, f->path, msg);
        return -1;
    }
    FILE *out = fopen(f->tmp, "wb");
    int err = out ? 0 : errno;
    if (out && fwrite(text, 1, len, out) != len) err = errno ? errno : EIO;
    if (out && !err && fflush(out) != 0) err = errno;
    if (out && !err && fsync(fileno(out)) != 0) err = errno;
    if (out && fclose(out) != 0 && !err) err = errno;
    free(text);
    if (err) {
        fprintf(stderr, "gemmtune %s: cannot write %s: %s: %s\n", verb, f->path, f->tmp,
                strerror(err));
        return -1;
    }
    return 0;
}

/* Closes the new file and renames it over path. 0, or -1 after a message (the
 * temporary file removed). */
static int newfile_commit(const char *verb, newfile *f) {
    int64_t cubins = gt_db_cubin_count(f->db);
    if (cubins > 0) {
        /* Never: nothing here writes cubins. A shipped file must not carry binaries. */
        fprintf(stderr, "gemmtune %s: internal error: %s would carry %lld cubins\n", verb,
                f->path, (long long)cubins);
        newfile_abort(f);
        return -1;
    }
    if (f->text && write_text(verb, f) != 0) {
        newfile_abort(f);
        return -1;
    }
    gt_db_close(f->db);
    f->db = NULL;
    if (rename(f->tmp, f->path) != 0) {
        fprintf(stderr, "gemmtune %s: cannot write %s: rename from %s: %s\n", verb, f->path,
                f->tmp, strerror(errno));
        remove_tmp(f);
        return -1;
    }
    return 0;
}

/* ===== options ===== */

/* The options of a verb that takes --help and, where dtype is not NULL, --dtype T (into
 * *dtype). -1 to go on (optind at the first operand), else the exit code (0 after
 * --help, 2 on bad usage, getopt's or cli_parse_dtype's message printed). */
static int parse_options(const char *verb, int argc, char **argv, int *dtype) {
    static const struct option with_dtype[] = {
        {"dtype", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const struct option *longs = dtype ? with_dtype : with_dtype + 1;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        if (c == 't') {
            if (cli_parse_dtype(verb, optarg, dtype)) return 2;
        } else if (c == 'h') return cli_usage(stdout, 0);
        else return 2;
    }
    return -1;
}

/* The options of export and merge: -o FILE, --text (into *text), --device, --dtype,
 * --keep, --help. Returns -1 to go on (optind at the first operand), else the exit code (0 after
 * --help, 2 on bad usage). */
static int parse_output_options(const char *verb, int argc, char **argv, const char **outpath,
                                int *text, filter *flt) {
    static const struct option longs[] = {
        {"output", required_argument, 0, 'o'}, {"device", required_argument, 0, 'D'},
        {"dtype", required_argument, 0, 't'},  {"text", no_argument, 0, 'x'},
        {"keep", required_argument, 0, 'k'},   {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    optind = 1;
    *text = 0;
    while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
        if (c == 'o') *outpath = optarg;
        else if (c == 'x') *text = 1;
        else if (c == 'D') flt->device = optarg;
        else if (c == 't') {
            if (cli_parse_dtype(verb, optarg, &flt->dtype)) return 2;
        } else if (c == 'k') {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 1 || v > 1000000) {
                fprintf(stderr, "gemmtune %s: --keep wants a count of 1 or more, not '%s'\n", verb,
                        optarg);
                return 2;
            }
            flt->keep = (int)v;
        } else if (c == 'h') return cli_usage(stdout, 0);
        else return 2;
    }
    return -1;
}

/* ===== export ===== */

int cli_export(int argc, char **argv) {
    const char *outpath = NULL;
    filter flt = {NULL, -1, 0};
    int text = 0;
    int code = parse_output_options("export", argc, argv, &outpath, &text, &flt);
    if (code >= 0) return code;
    if (optind < argc) {
        fprintf(stderr, "gemmtune export: unexpected argument '%s' (want -o FILE)\n",
                argv[optind]);
        return 2;
    }
    if (!outpath || !*outpath) {
        fprintf(stderr, "gemmtune export: give -o FILE (see --help)\n");
        return 2;
    }
    char cache[PATH_MAX];
    if (cli_cache_path("export", cache, sizeof cache) != 0) return 1;
    if (same_file(outpath, cache)) {
        fprintf(stderr, "gemmtune export: -o '%s' is the cache itself; give another file\n",
                outpath);
        return 2;
    }
    gt_db *in;
    if (open_input("export", cache, &in) != 0) return 1;
    newfile out;
    if (newfile_begin("export", outpath, text, &out) != 0) {
        gt_db_close(in);
        return 1;
    }
    counts cn;
    memset(&cn, 0, sizeof cn);
    int rc = copy_entries("export", cache, in, outpath, out.db, &flt, &cn);
    gt_db_close(in);
    if (rc != 0) {
        newfile_abort(&out);
        return 1;
    }
    if (newfile_commit("export", &out) != 0) return 1;
    say_left_out("export", cache, &cn);
    printf("exported %d entries to %s\n", cn.stored, outpath);
    return 0;
}

/* ===== merge ===== */

int cli_merge(int argc, char **argv) {
    const char *outpath = NULL;
    filter flt = {NULL, -1, 0};
    int text = 0;
    int code = parse_output_options("merge", argc, argv, &outpath, &text, &flt);
    if (code >= 0) return code;
    int nin = argc - optind;
    if (!outpath || !*outpath) {
        fprintf(stderr, "gemmtune merge: give -o FILE for the result (see --help)\n");
        return 2;
    }
    if (nin < 1) {
        fprintf(stderr, "gemmtune merge: give the files to merge: merge A B... -o C\n");
        return 2;
    }
    char **inputs = argv + optind;
    for (int i = 0; i < nin; i++)
        if (same_file(outpath, inputs[i])) {
            fprintf(stderr, "gemmtune merge: -o '%s' is also an input; write to a new file\n",
                    outpath);
            return 2;
        }
    /* Every input must be readable before anything is written. */
    gt_db **in = calloc((size_t)nin, sizeof *in);
    if (!in) return 1;
    int rc = 0;
    for (int i = 0; i < nin && rc == 0; i++)
        if (open_input("merge", inputs[i], &in[i]) != 0) rc = -1;
    newfile out;
    out.db = NULL;
    if (rc == 0 && newfile_begin("merge", outpath, text, &out) != 0) rc = -1;
    counts total;
    memset(&total, 0, sizeof total);
    for (int i = 0; i < nin && rc == 0; i++) {
        counts cn;
        memset(&cn, 0, sizeof cn);
        rc = copy_entries("merge", inputs[i], in[i], outpath, out.db, &flt, &cn);
        if (rc != 0) break;
        say_left_out("merge", inputs[i], &cn);
        fprintf(stderr, "gemmtune merge: %s: %d entries taken, %d not (an earlier input's was "
                        "as fast or faster)\n", inputs[i], cn.stored, cn.kept);
        total.rejected += cn.rejected;
        total.other_source += cn.other_source;
    }
    long long n = 0;
    if (rc == 0 && gt_db_list(out.db, count_entry, &n) != GT_SUCCESS) {
        fprintf(stderr, "gemmtune merge: cannot read back %s: %s\n", outpath,
                gt_db_errmsg(out.db));
        rc = -1;
    }
    for (int i = 0; i < nin; i++)
        if (in[i]) gt_db_close(in[i]);
    free(in);
    if (rc != 0) {
        if (out.db) newfile_abort(&out);
        return 1;
    }
    if (newfile_commit("merge", &out) != 0) return 1;
    printf("merged %lld entries from %d files into %s (%d rejected, %d of other kernel "
           "sources left out)\n",
           n, nin, outpath, total.rejected, total.other_source);
    return 0;
}

/* ===== import ===== */

int cli_import(int argc, char **argv) {
    int opts = parse_options("import", argc, argv, NULL);
    if (opts >= 0) return opts;
    if (argc - optind != 1) {
        fprintf(stderr, "gemmtune import: give one FILE to import (see --help)\n");
        return 2;
    }
    const char *path = argv[optind];
    char cache[PATH_MAX], msg[512];
    if (cli_cache_path("import", cache, sizeof cache) != 0) return 1;
    if (same_file(path, cache)) {
        fprintf(stderr, "gemmtune import: '%s' is the cache itself\n", path);
        return 2;
    }
    /* The file first: a file that cannot be read leaves the cache as it was. */
    gt_db *in;
    if (open_input("import", path, &in) != 0) return 1;
    gt_db *out;
    if (gt_layers_open_file(cache, 0, 0, &out, msg, sizeof msg) != GT_SUCCESS) {
        fprintf(stderr, "gemmtune import: cannot write the cache %s: %s\n", cache, msg);
        gt_db_close(in);
        return 1;
    }
    counts cn;
    memset(&cn, 0, sizeof cn);
    filter all = {NULL, -1, 0};
    int rc = copy_entries("import", path, in, cache, out, &all, &cn);
    gt_db_close(in);
    gt_db_close(out);
    if (rc != 0) return 1;
    printf("imported %d entries from %s into %s; kept %d (the cache had one as fast or "
           "faster); rejected %d; skipped %d of other kernel sources\n",
           cn.stored, path, cache, cn.kept, cn.rejected, cn.other_source);
    return 0;
}

/* ===== list ===== */

/* What list prints: the entries of one data type (-1: all), and how many it printed. */
typedef struct list_filter {
    int dtype;
    long long shown;
} list_filter;

static int print_winner(const gt_key *key, const char *src_hash, int lib_major,
                        const gt_db_winner *w, void *user) {
    list_filter *flt = user;
    if (flt->dtype >= 0 && key->dtype != flt->dtype) return 0;
    flt->shown++;
    char shape_text[96], when[32];
    gt_key_shape(key, shape_text, sizeof shape_text);
    time_t t = (time_t)w->tuned_at;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", gmtime(&t));
    int current = strcmp(src_hash, gt_kernel_source_hash) == 0 && lib_major == GT_VERSION_MAJOR;
    /* The type column fits the longest name (bf16_f32). */
    printf("%-28s %-8s %-22s a%-2d b%d %-20s %10.1f us %8.2f TFLOP/s  %s%s\n", key->device,
           gt_dtype_name(key->dtype), shape_text, key->align, key->beta0, w->config, w->time_us,
           w->tflops, when, current ? "" : "  (old kernel source: ignored)");
    return 0;
}

int cli_list(int argc, char **argv) {
    list_filter flt = {-1, 0};
    int opts = parse_options("list", argc, argv, &flt.dtype);
    if (opts >= 0) return opts;
    if (optind < argc) {
        fprintf(stderr, "gemmtune list: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    char path[PATH_MAX];
    int found = find_cache("list", path, sizeof path, "nothing tuned");
    if (found <= 0) return found < 0 ? 1 : 0;
    gt_db *db;
    if (open_input("list", path, &db) != 0) return 1;
    printf("cache %s\n", path);
    gt_status s = gt_db_list(db, print_winner, &flt);
    if (s != GT_SUCCESS) fprintf(stderr, "gemmtune list: %s\n", gt_db_errmsg(db));
    else if (flt.dtype >= 0 && flt.shown == 0)
        printf("no entries of data type %s\n", gt_dtype_name(flt.dtype));
    gt_db_close(db);
    return s == GT_SUCCESS ? 0 : 1;
}

/* ===== show ===== */

static int print_timing(const gt_db_timing *t, void *user) {
    const char *winner = user;
    char when[32];
    if (t->time_us >= 0) snprintf(when, sizeof when, "%10.1f us", t->time_us);
    else snprintf(when, sizeof when, "%13s", "not timed");
    if (strcmp(t->status, "ok") == 0)
        printf("    %-38s %-14s %s %8.2f TFLOP/s%s\n", t->config, t->status, when, t->tflops,
               strcmp(t->config, winner) == 0 ? "  <- winner" : "");
    else
        printf("    %-38s %-14s %s  %s\n", t->config, t->status, when,
               t->message[0] ? t->message : "(no message)");
    return 0;
}

int cli_show(int argc, char **argv) {
    int dtype = GT_DT_F32;
    int opts = parse_options("show", argc, argv, &dtype);
    if (opts >= 0) return opts;
    cli_shape sh;
    if (argc - optind != 1 || cli_parse_shape(argv[optind], &sh) != 0) {
        if (argc - optind == 1)
            fprintf(stderr, "gemmtune show: bad shape '%s' (want MxNxK or MxNxK:NT)\n",
                    argv[optind]);
        else
            fprintf(stderr, "gemmtune show: give one SHAPE, MxNxK or MxNxK:NT (see --help)\n");
        return 2;
    }
    char cache[PATH_MAX], text[96], absent[128];
    cli_shape_format(&sh, text, sizeof text);
    snprintf(absent, sizeof absent, "nothing tuned, no entry for %s", text);
    if (find_cache("show", cache, sizeof cache, absent) != 1) return 1;
    gt_db *db;
    if (open_input("show", cache, &db) != 0) return 1;
    entries es;
    if (load_entries("show", cache, db, &es) != 0) {
        free(es.v);
        gt_db_close(db);
        return 1;
    }
    int found = 0, rc = 0;
    printf("cache %s\n", cache);
    for (int i = 0; i < es.n && rc == 0; i++) {
        const entry *e = &es.v[i];
        if (e->key.m != sh.m || e->key.n != sh.n || e->key.k != sh.k || e->key.opa != sh.opa ||
            e->key.opb != sh.opb || e->key.dtype != dtype)
            continue;
        found++;
        char keytext[256], when[32];
        gt_key_format(&e->key, keytext, sizeof keytext);
        time_t t = (time_t)e->w.tuned_at;
        struct tm tmv;
        if (gmtime_r(&t, &tmv)) strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tmv);
        else snprintf(when, sizeof when, "?");
        printf("%s  winner %s  %.1f us  %.2f TFLOP/s  host %s  tuned %s  gemmtune %s  "
               "NVRTC %s  driver %s  %s%s%s\n",
               keytext, e->w.config, e->w.time_us, e->w.tflops, e->w.host[0] ? e->w.host : "?",
               when, e->w.libver[0] ? e->w.libver : "?", e->w.nvrtc[0] ? e->w.nvrtc : "?",
               e->w.driver[0] ? e->w.driver : "?",
               e->current ? "current kernel source" : "old kernel source ",
               e->current ? "" : e->src_hash, e->current ? "" : ": ignored");
        if (gt_db_timings(db, &e->key, e->src_hash, e->lib_major, print_timing,
                          (void *)e->w.config) != GT_SUCCESS) {
            fprintf(stderr, "gemmtune show: %s: %s\n", cache, gt_db_errmsg(db));
            rc = 1;
        }
    }
    free(es.v);
    gt_db_close(db);
    if (rc) return rc;
    if (!found) {
        printf("no entry for %s (%s) in %s\n", text, gt_dtype_name(dtype), cache);
        return 1;
    }
    return 0;
}

/* ===== prune ===== */

int cli_prune(int argc, char **argv) {
    int opts = parse_options("prune", argc, argv, NULL);
    if (opts >= 0) return opts;
    if (optind < argc) {
        fprintf(stderr, "gemmtune prune: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    char cache[PATH_MAX], msg[512];
    int found = find_cache("prune", cache, sizeof cache, "nothing to prune");
    if (found <= 0) return found < 0 ? 1 : 0;
    gt_db *db;
    if (gt_layers_open_file(cache, 0, 0, &db, msg, sizeof msg) != GT_SUCCESS) {
        fprintf(stderr, "gemmtune prune: cannot write the cache %s: %s\n", cache, msg);
        return 1;
    }
    const char *nvrtc = gt_rtc_version();
    if (!nvrtc || !*nvrtc || strcmp(nvrtc, "?") == 0) nvrtc = NULL;
    /* Cubins of another driver go only when this machine's driver is known. */
    const char *driver = gt_cu_load() == GT_SUCCESS ? gt_cu_driver_version() : NULL;
    if (driver && !*driver) driver = NULL;
    int64_t winners = 0, cubins = 0;
    gt_status s = gt_db_prune(db, gt_kernel_source_hash, GT_VERSION_MAJOR, nvrtc, driver,
                              &winners, &cubins);
    if (s != GT_SUCCESS) {
        fprintf(stderr, "gemmtune prune: %s: %s\n", cache, gt_db_errmsg(db));
        gt_db_close(db);
        return 1;
    }
    gt_db_close(db);
    printf("pruned %lld entries of other kernel sources or library versions and %lld cubins "
           "of other sources or NVRTC%s versions from %s\n",
           (long long)winners, (long long)cubins, driver ? " or driver" : "", cache);
    if (!driver)
        printf("(no CUDA driver here: cubins of other driver versions were kept)\n");
    return 0;
}
