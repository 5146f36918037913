/*
 * test_defaults.c: cache texts (cache/text.h) and the built-in defaults layer
 * (cache/layers.h), no GPU needed. argv[1] is the source root (data/defaults/ and the
 * example are read from it).
 *
 * The example tests/defaults/example.txt is synthetic: ten winners (H100 f32 and bf16,
 * an A100 f32 key, one entry of another kernel source "oldsrcoldsrc0000"; the others of
 * source "example0src0hash"), each with five candidates (three timed, one compile
 * failure whose message holds a tab, a newline, quotes and a backslash, one not timed),
 * configurations from the candidate space of each key, written by gt_text_write itself.
 * tests/meson.build embeds it with data/embed.py (gt_test_example) as the library embeds
 * data/defaults/, and embeds no file at all (gt_test_none).
 *
 * Cases: round trip (db -> text -> db holds the same winners and timings, field for
 * field; the second text is byte-identical; the example is its own text); the filter by
 * device and type; malformed texts refused with their line named and nothing merged;
 * the first-line test; a number the text cannot carry; a sealed cache (gt_db_seal) is
 * read but never written and yields no cubin; embedding (the bytes come back
 * exactly); the layer (last, after the user cache and GEMMTUNE_CACHE_PATH's file; found
 * by lookups, neighbours and timings; a shipped entry of the same key wins; the source
 * hash rule; never written); GEMMTUNE_DEFAULTS=0 hides it; a bad text left out, none
 * built in; every file of data/defaults/ parses, its keys are sane and every
 * configuration in it passes the legal constraints for its key (and the check is shown
 * to catch an illegal one); the library holds exactly data/defaults/'s files and loads
 * them all; the built-in image holds exactly what those files load into, read-only, and
 * a damaged image is refused.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "defaults_data.h"
#include "defaults_image.h"
#include "files.h"
#include "fixtures.h"
#include "kcfg.h"
#include "kernel_sources.h"
#include "key.h"
#include "layers.h"
#include "tap.h"
#include "test_example_data.h"
#include "test_none_data.h"
#include "text.h"

static const char *src_root = ".";
static char tmp[256];

#define EX_SRC "example0src0hash"
#define EX_OLD_SRC "oldsrcoldsrc0000"
#define MAGIC GT_TEXT_MAGIC "\n"

/* ===================================================================================
 * Helpers
 * =================================================================================== */

/* Everything a database holds, for comparison: winners in gt_db_list's order, each with
 * its timings in gt_db_timings' order. */
typedef struct row {
    gt_key key;
    char src[128];
    int major;
    gt_db_winner w;
    gt_db_timing t[8];
    int nt;
} row;

typedef struct rows {
    row v[64];
    int n;
} rows;

static int collect(const gt_key *key, const char *src, int major, const gt_db_winner *w,
                   void *user) {
    rows *r = user;
    if (r->n == 64) return 1;
    row *e = &r->v[r->n++];
    memset(e, 0, sizeof *e);
    e->key = *key;
    snprintf(e->src, sizeof e->src, "%s", src);
    e->major = major;
    e->w = *w;
    return 0;
}

static int collect_t(const gt_db_timing *t, void *user) {
    row *e = user;
    if (e->nt < 8) e->t[e->nt++] = *t;
    return 0;
}

static int read_rows(gt_db *db, rows *r) {
    memset(r, 0, sizeof *r);
    if (gt_db_list(db, collect, r) != GT_SUCCESS) return -1;
    for (int i = 0; i < r->n; i++)
        if (gt_db_timings(db, &r->v[i].key, r->v[i].src, r->v[i].major, collect_t, &r->v[i]) !=
            GT_SUCCESS)
            return -1;
    return 0;
}

static int same_winner(const gt_db_winner *a, const gt_db_winner *b) {
    return strcmp(a->config, b->config) == 0 && a->time_us == b->time_us &&
           a->tflops == b->tflops && a->tuned_at == b->tuned_at &&
           strcmp(a->nvrtc, b->nvrtc) == 0 && strcmp(a->driver, b->driver) == 0 &&
           strcmp(a->host, b->host) == 0 && strcmp(a->libver, b->libver) == 0;
}

static int same_timing(const gt_db_timing *a, const gt_db_timing *b) {
    return strcmp(a->config, b->config) == 0 && strcmp(a->status, b->status) == 0 &&
           a->time_us == b->time_us && a->tflops == b->tflops &&
           strcmp(a->message, b->message) == 0;
}

/* Whether a and b hold the same rows; says the first difference. */
static int same_rows(const rows *a, const rows *b) {
    if (a->n != b->n) {
        printf("#   %d winners against %d\n", a->n, b->n);
        return 0;
    }
    for (int i = 0; i < a->n; i++) {
        const row *x = &a->v[i], *y = &b->v[i];
        char kt[256];
        gt_key_format(&x->key, kt, sizeof kt);
        if (!gt_key_equal(&x->key, &y->key) || strcmp(x->src, y->src) != 0 ||
            x->major != y->major || !same_winner(&x->w, &y->w) || x->nt != y->nt) {
            printf("#   winner %d (%s) differs\n", i, kt);
            return 0;
        }
        for (int j = 0; j < x->nt; j++)
            if (!same_timing(&x->t[j], &y->t[j])) {
                printf("#   timing %d of %s differs: '%s' '%s'\n", j, kt, x->t[j].config,
                       y->t[j].config);
                return 0;
            }
    }
    return 1;
}

static gt_db *mem_db(void) {
    gt_db *db = NULL;
    char msg[600];
    gt_status s = gt_db_open(":memory:", 0, 0, &db, msg, sizeof msg);
    TAP_CHECK(s == GT_SUCCESS, "open :memory:: %s", msg);
    return s == GT_SUCCESS ? db : NULL;
}

static void put(gt_db *db, const gt_key *k, const char *src, const char *cfg, double us,
                const char *host, const char *msg1) {
    gt_db_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.config, sizeof w.config, "%s", cfg);
    w.time_us = us;
    w.tflops = 2.0 * (double)k->m * (double)k->n * (double)k->k / (us * 1e6);
    w.tuned_at = 1767225600 + (int64_t)us;
    snprintf(w.nvrtc, sizeof w.nvrtc, "13.0");
    snprintf(w.host, sizeof w.host, "%s", host);
    snprintf(w.libver, sizeof w.libver, "0.1.0");
    gt_db_timing t[3];
    memset(t, 0, sizeof t);
    snprintf(t[0].config, sizeof t[0].config, "%s", cfg);
    snprintf(t[0].status, sizeof t[0].status, "ok");
    t[0].time_us = us, t[0].tflops = w.tflops;
    snprintf(t[1].config, sizeof t[1].config, "f0_128x128x8_w32x64_t8x8_s2_v1_k1_r1");
    snprintf(t[1].status, sizeof t[1].status, "verify_failed");
    t[1].time_us = us * 0.5, t[1].tflops = 0.1;
    snprintf(t[1].message, sizeof t[1].message, "%s", msg1);
    snprintf(t[2].config, sizeof t[2].config, "f0_64x128x16_w16x64_t4x8_s3_v4_k1_r8");
    snprintf(t[2].status, sizeof t[2].status, "not_timed");
    t[2].time_us = -1;
    gt_status s = gt_db_store(db, k, src, 0, &w, t, 3);
    TAP_CHECK(s == GT_SUCCESS, "store: %s", gt_db_errmsg(db));
}

/* The embedded example as a gt_text_file (tests/meson.build: data/embed.py). */
static const gt_text_file *example(void) { return &gt_test_example[0]; }

static gt_db *example_db(void) {
    gt_db *db = NULL;
    char msg[600];
    gt_status s = gt_text_open(example()->text, example()->size, "example.txt", &db, NULL, msg,
                               sizeof msg);
    TAP_CHECK(s == GT_SUCCESS, "the example does not load: %s", msg);
    return s == GT_SUCCESS ? db : NULL;
}

/* ===================================================================================
 * Text
 * =================================================================================== */

static void text_round_trip(void) {
    gt_db *a = mem_db();
    if (!a) return;
    gt_key k;
    fixture_key(&k, 90, 0, 1, 512, 512, 512, 16, 1);
    put(a, &k, "srcA", "f0_64x64x16_w32x16_t4x4_s2_v4_k1_r1", 0.1, "node 1", "-");
    k.dtype = GT_DT_F64;
    put(a, &k, "srcA", "f0_64x64x16_w32x16_t4x4_s2_v4_k1_r1", 1.0 / 3.0, "",
        "tab\there, newline\nhere, backslash \\ and \\t literally, a lone - and \\-");
    fixture_key(&k, 80, 1, 1, 1, 9007199254740993LL, 3, 1, 0);
    put(a, &k, "srcB", "f0_16x16x8_w8x16_t2x2_s2_v1_k1_r1", 123456789.125, "-", "");
    snprintf(k.device, sizeof k.device, "Odd|device\tname\\");
    k.dtype = GT_DT_BF16;
    put(a, &k, "srcA", "f2_32x64x64_w16x16_t2x1_s3_v8_k1_r1", 1e-30, "h", "\\");
    /* A winner of time 0, tuned before 1970, of another library major, without timings. */
    fixture_key(&k, 90, 0, 0, 7, 7, 7, 4, 0);
    gt_db_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.config, sizeof w.config, "f0_16x16x8_w8x16_t2x2_s2_v1_k1_r1");
    w.tuned_at = -5;
    TAP_CHECK(gt_db_store(a, &k, "srcA", 3, &w, NULL, 0) == GT_SUCCESS, "store");

    char *t1 = NULL, *t2 = NULL, msg[600];
    size_t n1 = 0, n2 = 0;
    gt_text_counts c1, c2;
    gt_status s = gt_text_write(a, NULL, &t1, &n1, &c1, msg, sizeof msg);
    TAP_CHECK(s == GT_SUCCESS && t1 && n1 == strlen(t1), "write: %s", msg);
    TAP_CHECK(c1.winners == 5 && c1.timings == 12, "counts %lld, %lld", c1.winners, c1.timings);
    TAP_CHECK(t1 && gt_text_is(t1, n1), "the text does not begin as one");
    /* No line ends in white space, and none is empty but where a comment could be. */
    for (const char *p = t1; t1 && (p = strchr(p, '\n')); p++)
        TAP_CHECK(p == t1 || (p[-1] != ' ' && p[-1] != '\t' && p[-1] != '\n'),
                  "a line ends in white space at byte %ld", (long)(p - t1));
    gt_db *b = NULL;
    gt_text_counts lc;
    s = t1 ? gt_text_open(t1, n1, "round", &b, &lc, msg, sizeof msg) : GT_INTERNAL;
    TAP_CHECK(s == GT_SUCCESS && b, "load: %s", msg);
    TAP_CHECK(lc.winners == 5 && lc.timings == 12, "load counts %lld, %lld", lc.winners,
              lc.timings);
    rows ra, rb;
    TAP_CHECK(read_rows(a, &ra) == 0 && (!b || read_rows(b, &rb) == 0), "read back");
    TAP_CHECK(b && same_rows(&ra, &rb), "db -> text -> db changed the rows");
    s = b ? gt_text_write(b, NULL, &t2, &n2, &c2, msg, sizeof msg) : GT_INTERNAL;
    TAP_CHECK(s == GT_SUCCESS && t1 && t2 && n1 == n2 && memcmp(t1, t2, n1) == 0,
              "the second text differs from the first");
    printf("# %zu bytes of text for %lld winners\n", n1, c1.winners);
    free(t1), free(t2);
    gt_db_close(a), gt_db_close(b);

    /* The committed example is a text exactly as the writer writes it. */
    gt_db *e = example_db();
    char *t3 = NULL;
    size_t n3 = 0;
    s = e ? gt_text_write(e, NULL, &t3, &n3, NULL, msg, sizeof msg) : GT_INTERNAL;
    TAP_CHECK(s == GT_SUCCESS && n3 == example()->size &&
                  memcmp(t3, example()->text, n3) == 0,
              "the example is not its own text (%zu bytes against %zu)", n3, example()->size);
    free(t3);
    gt_db_close(e);
}

/* gt_text_write's filter: one device, one type, both. */
static void text_filter(void) {
    gt_db *e = example_db();
    if (!e) return;
    static const struct {
        const char *device;
        int dtype;
        long long want;
    } cases[] = {{NULL, -1, 10},
                 {"NVIDIA H100 80GB HBM3", -1, 9},
                 {"NVIDIA A100-SXM4-80GB", -1, 1},
                 {NULL, GT_DT_BF16, 4},
                 {"NVIDIA H100 80GB HBM3", GT_DT_F32, 5},
                 {"NVIDIA H100", -1, 0},
                 {NULL, GT_DT_F64, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gt_text_filter f = {cases[i].device, cases[i].dtype};
        char *t = NULL, msg[600];
        size_t n = 0;
        gt_text_counts c;
        gt_status s = gt_text_write(e, &f, &t, &n, &c, msg, sizeof msg);
        TAP_CHECK(s == GT_SUCCESS && c.winners == cases[i].want && c.timings == 5 * c.winners,
                  "filter %zu: %lld winners, want %lld", i, c.winners, cases[i].want);
        gt_db *back = NULL;
        rows r;
        s = gt_text_open(t, n, "filtered", &back, NULL, msg, sizeof msg);
        TAP_CHECK(s == GT_SUCCESS && read_rows(back, &r) == 0 && r.n == cases[i].want,
                  "filter %zu: reads back %d", i, r.n);
        for (int j = 0; s == GT_SUCCESS && j < r.n; j++)
            TAP_CHECK((!cases[i].device || strcmp(r.v[j].key.device, cases[i].device) == 0) &&
                          (cases[i].dtype < 0 || r.v[j].key.dtype == cases[i].dtype),
                      "filter %zu: row %d is not selected", i, j);
        gt_db_close(back);
        free(t);
    }
    gt_db_close(e);
}

#define GOOD_W                                                                             \
    "W\tNVIDIA H100 80GB HBM3|sm90|132|f32|NN|64x64x64|a16|b1\tsrc\t0\t"                   \
    "f0_64x64x16_w32x16_t4x4_s2_v4_k1_r1\t5.5\t0.1\t13.0\t13000\thost\t1767225600\t0.1.0\n"
#define GOOD_T "T\tf0_64x64x16_w32x16_t4x4_s2_v4_k1_r1\tok\t5.5\t0.1\t-\n"
#define OTHER_W                                                                            \
    "W\tNVIDIA H100 80GB HBM3|sm90|132|f32|NN|128x64x64|a16|b1\tsrc\t0\t"                  \
    "f0_64x64x16_w32x16_t4x4_s2_v4_k1_r1\t5.5\t0.1\t-\t-\t-\t0\t-\n"

/* Every malformed text is refused with "NAME:LINE:" and the reason, and merges nothing
 * (its good lines before the bad one included). */
static void text_malformed(void) {
    static const struct {
        const char *text;
        int line;
        const char *why;
    } bad[] = {
        {"", 1, "empty"},
        {GOOD_W, 1, "first line"},
        {"gemmtune-cache-text\t2\n" GOOD_W, 1, "first line"},
        {"gemmtune-cache-text 1\n", 1, "first line"},
        {MAGIC "X\tfoo\n", 2, "unknown record 'X'"},
        {MAGIC "w\tfoo\n", 2, "unknown record 'w'"},
        {MAGIC GOOD_T, 2, "before any W"},
        {MAGIC "# c\n\n" GOOD_W GOOD_T "T\tf0\tok\t1\n", 6, "4 tab-separated fields, want 6"},
        {MAGIC GOOD_W GOOD_T "T\tf0\tok\t1\t2\t-\textra\n", 4, "7 tab-separated fields"},
        {MAGIC "W\tkey\n", 2, "2 tab-separated fields, want 12"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64|a16|b1\ts\t0\tc\t1\t1\t-\t-\t-\t0\t-\n", 2,
         "key: size"},
        {MAGIC "W\tH100|sm90|132|f99|NN|64x64x64|a16|b1\ts\t0\tc\t1\t1\t-\t-\t-\t0\t-\n", 2,
         "unknown data type"},
        {MAGIC "W\t-\ts\t0\tc\t1\t1\t-\t-\t-\t0\t-\n", 2, "key is empty"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\t-\t0\tc\t1\t1\t-\t-\t-\t0\t-\n", 2,
         "src_hash is empty"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t-1\tc\t1\t1\t-\t-\t-\t0\t-\n", 2,
         "lib_major '-1'"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\tx\tc\t1\t1\t-\t-\t-\t0\t-\n", 2,
         "lib_major 'x'"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\t-\t1\t1\t-\t-\t-\t0\t-\n", 2,
         "config is empty"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\tnan\t1\t-\t-\t-\t0\t-\n", 2,
         "time_us 'nan'"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\t1\tinf\t-\t-\t-\t0\t-\n", 2,
         "tflops 'inf'"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\t1e999\t1\t-\t-\t-\t0\t-\n", 2,
         "time_us '1e999'"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\t12us\t1\t-\t-\t-\t0\t-\n", 2,
         "time_us '12us'"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\t 1\t1\t-\t-\t-\t0\t-\n", 2,
         "time_us ' 1'"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\t1\t1\t-\t-\t-\t1.5\t-\n", 2,
         "tuned_at '1.5'"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\t1\t1\t\t-\t-\t0\t-\n", 2,
         "nvrtc: empty field"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\t1\t1\t-\t-\th\\q\t0\t-\n", 2,
         "host: unknown escape '\\q'"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\t1\t1\t-\t-\th\\\t0\t-\n", 2,
         "host: a backslash at the end"},
        {MAGIC "W\tH100|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\t1\t1\t-\t-\t-\t0\t"
               "0.1.0-a-very-long-version-string-x\n",
         2, "libver: longer than 31 bytes"},
        {MAGIC GOOD_W "T\tf0\tok\t1\t1\t"
                      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
         3, "message: longer than 255 bytes"},
        {MAGIC GOOD_W "T\tf0\t-\t1\t1\t-\n", 3, "status is empty"},
        {MAGIC GOOD_W "T\tf0\tok\tfast\t1\t-\n", 3, "time_us 'fast'"},
        {MAGIC GOOD_W GOOD_T OTHER_W GOOD_W, 5, "the same key again (first at line 2)"},
        {MAGIC GOOD_W GOOD_T "T\tf1\tok\t1\t1\t-\n" GOOD_T, 5,
         "the same configuration again (first at line 3)"},
        {MAGIC GOOD_W "T\tf0\tok\t1\t1\t-\0\n", 3, "NUL"},
    };
    size_t sizes[sizeof bad / sizeof bad[0]];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) sizes[i] = strlen(bad[i].text);
    /* The NUL case's bytes run past its terminator. */
    sizes[sizeof bad / sizeof bad[0] - 1] += 2;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gt_db *db = mem_db();
        if (!db) return;
        gt_key k;
        fixture_key(&k, 80, 0, 0, 9, 9, 9, 16, 1);
        put(db, &k, "src", "f0_16x16x8_w8x16_t2x2_s2_v1_k1_r1", 2.0, "h", "");
        char msg[600] = "", want[64];
        gt_text_counts c;
        gt_status s = gt_text_load(db, bad[i].text, sizes[i], "bad.txt", &c, msg, sizeof msg);
        snprintf(want, sizeof want, "bad.txt:%d: ", bad[i].line);
        TAP_CHECK(s == GT_INVALID_VALUE && strncmp(msg, want, strlen(want)) == 0 &&
                      strstr(msg, bad[i].why) != NULL,
                  "case %zu: status %d, '%s'; want '%s...%s'", i, s, msg, want, bad[i].why);
        rows r;
        TAP_CHECK(read_rows(db, &r) == 0 && r.n == 1 && c.winners == 0,
                  "case %zu: %d rows after a refused text", i, r.n);
        gt_db_close(db);
    }
    /* What is not wrong: CRLF line ends, comments after white space, blank lines, no
     * newline at the end, a device name with '|', "\-" for a field that is '-'. */
    const char ok[] = GT_TEXT_MAGIC "\r\n  # indented comment\r\n\t\r\n"
                      "W\tA|B|sm90|132|f32|NN|64x64x64|a16|b1\ts\t0\tc\t5\t1\t\\-\t-\t-\t0\t-\r\n"
                      "T\tc\tok\t5\t1\t\\-";
    gt_db *db = NULL;
    char msg[600] = "";
    gt_status s = gt_text_open(ok, sizeof ok - 1, "ok.txt", &db, NULL, msg, sizeof msg);
    rows r;
    TAP_CHECK(s == GT_SUCCESS && read_rows(db, &r) == 0 && r.n == 1 && r.v[0].nt == 1 &&
                  strcmp(r.v[0].key.device, "A|B") == 0 && strcmp(r.v[0].w.nvrtc, "-") == 0 &&
                  strcmp(r.v[0].t[0].message, "-") == 0 && r.v[0].w.driver[0] == 0,
              "a good text with CRLF, comments and escapes: %s", msg);
    gt_db_close(db);
}

static void text_first_line(void) {
    TAP_CHECK(gt_text_is(MAGIC, strlen(MAGIC)), "magic and newline");
    TAP_CHECK(gt_text_is(GT_TEXT_MAGIC "\r\n", strlen(GT_TEXT_MAGIC) + 2), "magic and CRLF");
    TAP_CHECK(!gt_text_is(GT_TEXT_MAGIC, strlen(GT_TEXT_MAGIC)), "no line end");
    TAP_CHECK(!gt_text_is(GT_TEXT_MAGIC "0\n", strlen(GT_TEXT_MAGIC) + 2), "version 10");
    TAP_CHECK(!gt_text_is("SQLite format 3\0", 16), "an SQLite header");
    TAP_CHECK(!gt_text_is(NULL, 0), "nothing");
}

/* An infinity cannot be written: the writer refuses, naming the key. */
static void text_refuses_infinity(void) {
    gt_db *db = mem_db();
    if (!db) return;
    gt_key k;
    fixture_key(&k, 90, 0, 0, 33, 33, 33, 16, 1);
    put(db, &k, "src", "f0_16x16x8_w8x16_t2x2_s2_v1_k1_r1", 2.0, "h", "");
    gt_db_timing t;
    memset(&t, 0, sizeof t);
    snprintf(t.config, sizeof t.config, "f0_32x32x8_w16x8_t2x2_s2_v1_k1_r1");
    snprintf(t.status, sizeof t.status, "ok");
    t.time_us = 1.0, t.tflops = INFINITY;
    TAP_CHECK(gt_db_store(db, &k, "src", 0, NULL, &t, 1) == GT_SUCCESS, "store");
    char *text = (char *)"unset", msg[600];
    size_t n = 7;
    gt_status s = gt_text_write(db, NULL, &text, &n, NULL, msg, sizeof msg);
    TAP_CHECK(s == GT_INVALID_VALUE && text == NULL && n == 0 && strstr(msg, "33x33x33"),
              "status %d: %s", s, msg);
    gt_db_close(db);
}

/* gt_db_seal: a sealed in-memory cache is read, never written, and yields no cubin. */
static void db_seal(void) {
    gt_db *db = mem_db();
    if (!db) return;
    gt_key k;
    fixture_key(&k, 90, 0, 0, 64, 64, 64, 16, 1);
    static const unsigned char image[16] = {0x7f, 'E', 'L', 'F'};
    gt_db_bin_key bk = {"src", "f32|NN|64x64x64|a16|b1|f0", 90, "13.0", "13000"};
    TAP_CHECK(gt_db_cubin_put(db, &bk, image, sizeof image) == GT_SUCCESS, "cubin put");
    put(db, &k, "src", "f0_16x16x8_w8x16_t2x2_s2_v1_k1_r1", 2.0, "h", "");
    gt_db_seal(db);
    gt_db_winner w;
    int found = 0;
    TAP_CHECK(gt_db_lookup(db, &k, "src", 0, &w, &found) == GT_SUCCESS && found, "lookup");
    w.time_us = 0.5;
    k.m = 65;
    TAP_CHECK(gt_db_store(db, &k, "src", 0, &w, NULL, 0) == GT_CACHE_ERROR &&
                  strstr(gt_db_errmsg(db), "read-only"),
              "a sealed cache took a store: %s", gt_db_errmsg(db));
    TAP_CHECK(gt_db_merge(db, &k, "src", 0, &w, NULL, 0, NULL) == GT_CACHE_ERROR, "merge");
    TAP_CHECK(gt_db_cubin_put(db, &bk, image, sizeof image) == GT_CACHE_ERROR, "cubin put");
    void *got = NULL;
    size_t size = 0;
    TAP_CHECK(gt_db_cubin_get(db, &bk, &got, &size, &found) == GT_SUCCESS && !found && !got,
              "a sealed cache yielded a cubin");
    rows r;
    TAP_CHECK(read_rows(db, &r) == 0 && r.n == 1, "%d rows", r.n);
    gt_db_close(db);
}

/* data/embed.py: the bytes of the example come back exactly; no file is an empty table. */
static void embed_bytes(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/defaults/example.txt", src_root);
    size_t n = 0;
    unsigned char *bytes = read_all(path, &n);
    TAP_CHECK(bytes != NULL, "cannot read %s", path);
    TAP_CHECK(gt_test_example_count == 1 && strcmp(example()->name, "example.txt") == 0,
              "%d texts embedded, the first '%s'", gt_test_example_count, example()->name);
    TAP_CHECK(bytes && example()->size == n && memcmp(example()->text, bytes, n) == 0 &&
                  example()->text[n] == 0,
              "the embedded bytes differ from %s (%zu against %zu)", path, example()->size, n);
    TAP_CHECK(gt_test_none_count == 0, "%d texts embedded from none", gt_test_none_count);
    free(bytes);
}

/* ===================================================================================
 * The layer
 * =================================================================================== */

static void set_env(const char *name, const char *value) {
    if (value) setenv(name, value, 1);
    else unsetenv(name);
}

/* A fresh user cache and, when ship is not NULL, a shipped file holding ship's entry
 * (the key and configuration given), both in tmp. */
static void layer_env(const char *tag, const gt_key *ship, const char *ship_cfg) {
    char user[512], shipped[512];
    snprintf(user, sizeof user, "%s/%s-user.db", tmp, tag);
    snprintf(shipped, sizeof shipped, "%s/%s-shipped.db", tmp, tag);
    unlink(user), unlink(shipped);
    set_env("GEMMTUNE_CACHE", user);
    set_env("GEMMTUNE_CACHE_FS", "local");
    set_env("GEMMTUNE_CACHE_PATH", NULL);
    if (!ship) return;
    gt_db *db = NULL;
    char msg[600];
    TAP_CHECK(gt_db_open(shipped, 0, 0, &db, msg, sizeof msg) == GT_SUCCESS, "%s", msg);
    if (db) put(db, ship, EX_SRC, ship_cfg, 1.0, "shipped", "");
    gt_db_close(db);
    set_env("GEMMTUNE_CACHE_PATH", shipped);
}

static int count_rows(const gt_key *key, const char *src, int major, const gt_db_winner *w,
                      void *user) {
    (void)key, (void)src, (void)major, (void)w;
    ++*(int *)user;
    return 0;
}

/* Counts the class's timings of one shape (user: a shape_count). */
typedef struct shape_count {
    const gt_key *shape;
    int n;
} shape_count;

static int count_timings(const gt_key *shape, const gt_db_timing *t, void *user) {
    (void)t;
    shape_count *c = user;
    c->n += gt_key_equal(shape, c->shape);
    return 0;
}

/* The first layer that has key's winner under src (dispatch.c's from_layers order), or
 * -1; its winner in *w. */
static int first_layer(const gt_key *key, const char *src, gt_db_winner *w) {
    for (int i = 0, n = gt_layers_count(); i < n; i++)
        if (gt_layers_lookup(i, key, src, 0, w)) return i;
    return -1;
}

static void defaults_layer_last(void) {
    rows ex;
    gt_db *e = example_db();
    if (!e || read_rows(e, &ex) != 0) {
        gt_db_close(e);
        return;
    }
    gt_db_close(e);
    const row *h512 = NULL, *old = NULL;
    for (int i = 0; i < ex.n; i++) {
        if (strcmp(ex.v[i].src, EX_OLD_SRC) == 0) old = &ex.v[i];
        else if (ex.v[i].key.m == 512 && ex.v[i].key.dtype == GT_DT_F32) h512 = &ex.v[i];
    }
    TAP_CHECK(h512 && old, "the example lacks its 512^3 f32 or old-source entry");
    if (!h512 || !old) return;
    const char *ship_cfg = "f0_32x32x8_w16x8_t2x2_s2_v1_k1_r1";
    TAP_CHECK(strcmp(ship_cfg, h512->w.config) != 0, "the shipped configuration is the example's");

    gt_layers_close();
    layer_env("last", &h512->key, ship_cfg);
    set_env("GEMMTUNE_DEFAULTS", NULL);
    gt_layers_set_defaults(example(), 1);
    gt_layers_open();
    int files = -1, loaded = -1;
    TAP_CHECK(gt_layers_defaults(&files, &loaded) == GT_DEFAULTS_LOADED && files == 1 &&
                  loaded == 1,
              "state: files %d, loaded %d", files, loaded);
    int n = gt_layers_count();
    TAP_CHECK(n == 3, "%d layers, want the user cache, the shipped file, the defaults", n);
    TAP_CHECK(strcmp(gt_layers_path(n - 1), "built-in defaults (example.txt)") == 0,
              "the last layer is '%s'", gt_layers_path(n - 1));
    TAP_CHECK(gt_layers_defaults_name(0) && strcmp(gt_layers_defaults_name(0), "example.txt") == 0 &&
                  gt_layers_defaults_name(1) == NULL,
              "names");
    int listed = 0;
    TAP_CHECK(gt_layers_defaults_list(count_rows, &listed) == GT_SUCCESS && listed == ex.n,
              "the layer lists %d winners, the example holds %d", listed, ex.n);

    /* Every winner of the example is found in the last layer, under its own source. */
    for (int i = 0; i < ex.n; i++) {
        gt_db_winner w;
        TAP_CHECK(gt_layers_lookup(n - 1, &ex.v[i].key, ex.v[i].src, 0, &w) &&
                      same_winner(&w, &ex.v[i].w),
                  "winner %d not found as it is", i);
    }
    /* The same key in the shipped file: that wins; the defaults keep theirs. */
    gt_db_winner w;
    int at = first_layer(&h512->key, EX_SRC, &w);
    TAP_CHECK(at == 1 && strcmp(w.config, ship_cfg) == 0, "the first layer with the key is %d "
              "(%s), want the shipped file", at, at >= 0 ? w.config : "-");
    TAP_CHECK(gt_layers_lookup(n - 1, &h512->key, EX_SRC, 0, &w) &&
                  strcmp(w.config, h512->w.config) == 0,
              "the defaults lost their own entry");
    /* A key only the defaults hold is found there, and first there. */
    const row *only = NULL;
    for (int i = 0; i < ex.n && !only; i++)
        if (ex.v[i].key.m == 4096 && ex.v[i].key.dtype == GT_DT_BF16) only = &ex.v[i];
    TAP_CHECK(only && first_layer(&only->key, EX_SRC, &w) == n - 1 &&
                  strcmp(w.config, only->w.config) == 0,
              "a key only the defaults hold");

    /* The source hash rule: under any other hash nothing is found; the old entry only
     * under its own. */
    TAP_CHECK(first_layer(&only->key, "0000000000000000", &w) == -1, "found under another hash");
    TAP_CHECK(first_layer(&old->key, EX_SRC, &w) == -1 &&
                  first_layer(&old->key, EX_OLD_SRC, &w) == n - 1,
              "the old-source entry is not kept to its own hash");

    /* Neighbours: every f32 NN a16 shape of the H100 under the source (3 of them); the
     * old source's 2048^3 is not one of them. Timings: the five candidates. */
    gt_key probe = h512->key;
    probe.m = 1000, probe.n = 3000, probe.k = 77;
    int near = 0;
    TAP_CHECK(gt_layers_neighbors(n - 1, &probe, EX_SRC, 0, count_rows, &near) == 0 && near == 3,
              "%d neighbours, want 3", near);
    shape_count nt = {&h512->key, 0};
    TAP_CHECK(gt_layers_class_timings(n - 1, &h512->key, EX_SRC, 0, 0, count_timings, &nt) == 0 &&
                  nt.n == 5,
              "%d timings, want 5", nt.n);
    nt.n = 0;
    gt_layers_class_timings(n - 1, &h512->key, "0000000000000000", 0, 0, count_timings, &nt);
    TAP_CHECK(nt.n == 0, "%d timings under another hash", nt.n);

    /* Never written: a store goes to the user cache, the defaults keep what they had. */
    gt_key fresh = only->key;
    fresh.m = 999;
    gt_db_winner nw = only->w;
    snprintf(nw.config, sizeof nw.config, "%s", ship_cfg);
    gt_layers_store(&fresh, EX_SRC, 0, &nw, NULL, 0);
    TAP_CHECK(first_layer(&fresh, EX_SRC, &w) == 0, "a store did not go to the user cache");
    TAP_CHECK(!gt_layers_lookup(n - 1, &fresh, EX_SRC, 0, &w), "a store reached the defaults");
    listed = 0;
    gt_layers_defaults_list(count_rows, &listed);
    TAP_CHECK(listed == ex.n, "the defaults hold %d winners after a store", listed);
    gt_layers_close();

    /* Without a shipped file the defaults are layer 1. */
    layer_env("last2", NULL, NULL);
    gt_layers_open();
    TAP_CHECK(gt_layers_count() == 2 && first_layer(&h512->key, EX_SRC, &w) == 1 &&
                  strcmp(w.config, h512->w.config) == 0,
              "%d layers; the defaults' entry not found first", gt_layers_count());
    gt_layers_close();
    gt_layers_set_defaults(NULL, -1);
}

/* GEMMTUNE_DEFAULTS: 0 hides the layer; 1 (or anything else, with a warning) reads it. */
static void defaults_env_off(void) {
    gt_key k;
    fixture_key(&k, 90, 0, 0, 512, 512, 512, 16, 1);
    static const struct {
        const char *value;
        int state, layers;
    } cases[] = {{"0", GT_DEFAULTS_OFF, 1}, {"1", GT_DEFAULTS_LOADED, 2},
                 {NULL, GT_DEFAULTS_LOADED, 2}, {"yes", GT_DEFAULTS_LOADED, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gt_layers_close();
        layer_env("env", NULL, NULL);
        set_env("GEMMTUNE_DEFAULTS", cases[i].value);
        gt_layers_set_defaults(example(), 1);
        gt_layers_open();
        int files = -1, loaded = -1, state = gt_layers_defaults(&files, &loaded);
        gt_db_winner w;
        int at = first_layer(&k, EX_SRC, &w);
        TAP_CHECK(state == cases[i].state && gt_layers_count() == cases[i].layers &&
                      files == 1 && at == (cases[i].layers == 2 ? 1 : -1),
                  "GEMMTUNE_DEFAULTS=%s: state %d, %d layers, found in %d",
                  cases[i].value ? cases[i].value : "(unset)", state, gt_layers_count(), at);
        int listed = 0;
        gt_layers_defaults_list(count_rows, &listed);
        TAP_CHECK((listed > 0) == (cases[i].state == GT_DEFAULTS_LOADED), "listed %d", listed);
    }
    gt_layers_close();
    set_env("GEMMTUNE_DEFAULTS", NULL);
    gt_layers_set_defaults(NULL, -1);
}

/* A text that does not parse is left out, the others load; none that loads, or none
 * built in at all, adds no layer. */
static void defaults_bad_or_none(void) {
    const char bad_text[] = MAGIC "W\tnot a key\n";
    const gt_text_file two[2] = {{"bad.txt", bad_text, sizeof bad_text - 1}, *example()};
    set_env("GEMMTUNE_DEFAULTS", NULL);
    gt_layers_close();
    layer_env("bad", NULL, NULL);
    gt_layers_set_defaults(two, 2);
    gt_layers_open();
    int files = -1, loaded = -1, state = gt_layers_defaults(&files, &loaded);
    TAP_CHECK(state == GT_DEFAULTS_LOADED && files == 2 && loaded == 1 &&
                  gt_layers_count() == 2 &&
                  strcmp(gt_layers_path(1), "built-in defaults (example.txt)") == 0,
              "one bad text: state %d, %d of %d loaded, last layer '%s'", state, loaded, files,
              gt_layers_path(gt_layers_count() - 1));
    gt_layers_close();
    gt_layers_set_defaults(two, 1);
    gt_layers_open();
    state = gt_layers_defaults(&files, &loaded);
    TAP_CHECK(state == GT_DEFAULTS_FAILED && loaded == 0 && gt_layers_count() == 1,
              "only a bad text: state %d, %d layers", state, gt_layers_count());
    gt_layers_close();
    gt_layers_set_defaults(gt_test_none, gt_test_none_count);
    gt_layers_open();
    state = gt_layers_defaults(&files, &loaded);
    TAP_CHECK(state == GT_DEFAULTS_NONE && files == 0 && gt_layers_count() == 1 &&
                  gt_layers_defaults_name(0) == NULL,
              "none built in: state %d, %d layers", state, gt_layers_count());
    gt_layers_close();
    gt_layers_set_defaults(NULL, -1);
}

/* ===================================================================================
 * The data: data/defaults/
 * =================================================================================== */

typedef struct check_ctx {
    const char *name;
    long long winners, current, configs, bad;
} check_ctx;

/* Every configuration of one key (the winner's and every candidate's) against the legal
 * constraints for the key, under the published limits of its compute capability (as
 * export and import check them) and, for an H100, tests/fixtures.h's. */
static void check_config(check_ctx *c, const gt_key *key, const char *cfg) {
    gt_klimits lim[2];
    int nlim = 1;
    gt_kcfg_limits_generic(key, &lim[0]);
    if (strcmp(key->device, "NVIDIA H100 80GB HBM3") == 0 && key->cc_major == 9 &&
        key->sm_count == h100.sm_count)
        lim[nlim++] = h100;
    for (int i = 0; i < nlim; i++) {
        gt_kcfg k;
        char why[400], kt[256];
        c->configs++;
        if (gt_kcfg_validate(cfg, key, &lim[i], &k, why, sizeof why) == 0) continue;
        gt_key_format(key, kt, sizeof kt);
        if (c->bad++ < 5) printf("#   %s: %s: '%s': %s\n", c->name, kt, cfg, why);
    }
}

typedef struct key_cfgs {
    check_ctx *c;
    const gt_key *key;
} key_cfgs;

static int check_timing(const gt_db_timing *t, void *user) {
    key_cfgs *kc = user;
    check_config(kc->c, kc->key, t->config);
    return 0;
}

/* The winners of one text, collected (a list callback may not use its handle). */
typedef struct all_rows {
    row *v;
    int n, cap;
} all_rows;

static int collect_all(const gt_key *key, const char *src, int major, const gt_db_winner *w,
                       void *user) {
    all_rows *r = user;
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        row *v = realloc(r->v, sizeof *v * (size_t)cap);
        if (!v) return 1;
        r->v = v, r->cap = cap;
    }
    row *e = &r->v[r->n++];
    memset(e, 0, sizeof *e);
    e->key = *key;
    snprintf(e->src, sizeof e->src, "%s", src);
    e->major = major;
    e->w = *w;
    return 0;
}

/* Parses one text and checks its keys and every configuration; the number of bad ones
 * (a text that does not parse counts one). */
static long long check_text(const char *name, const char *text, size_t len, int quiet) {
    check_ctx c = {.name = name};
    gt_db *db = NULL;
    char msg[600];
    gt_status s = gt_text_open(text, len, name, &db, NULL, msg, sizeof msg);
    if (s != GT_SUCCESS) {
        if (!quiet) printf("#   %s\n", msg);
        return 1;
    }
    all_rows r = {0};
    if (gt_db_list(db, collect_all, &r) != GT_SUCCESS) c.bad++;
    for (int i = 0; i < r.n; i++) {
        const gt_key *k = &r.v[i].key;
        char kt[256];
        gt_key_format(k, kt, sizeof kt);
        c.winners++;
        if (strcmp(r.v[i].src, gt_kernel_source_hash) == 0 && r.v[i].major == GT_VERSION_MAJOR)
            c.current++;
        /* What a process could build: a compute capability from sm_50 and a tensor-core
         * type only from sm_80. */
        if (k->cc_major < 5 || (gt_dtype_tensor_only(k->dtype) && k->cc_major < 8)) {
            if (c.bad++ < 5) printf("#   %s: %s: no process asks for this key\n", name, kt);
            continue;
        }
        if (!isfinite(r.v[i].w.time_us) || r.v[i].w.time_us <= 0)
            if (c.bad++ < 5) printf("#   %s: %s: winner time %g\n", name, kt, r.v[i].w.time_us);
        check_config(&c, k, r.v[i].w.config);
        key_cfgs kc = {&c, k};
        if (gt_db_timings(db, k, r.v[i].src, r.v[i].major, check_timing, &kc) != GT_SUCCESS)
            c.bad++;
    }
    free(r.v);
    gt_db_close(db);
    if (!quiet)
        printf("# %s: %lld winners (%lld of this kernel source %s), %lld configurations "
               "checked, %lld bad\n",
               name, c.winners, c.current, gt_kernel_source_hash, c.configs, c.bad);
    return c.bad;
}

static int txt_name(const struct dirent *e) {
    size_t n = strlen(e->d_name);
    return n > 4 && strcmp(e->d_name + n - 4, ".txt") == 0;
}

static int byte_order(const struct dirent **a, const struct dirent **b) {
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every .txt file of data/defaults/ (zero or more) parses and holds only legal configurations;
 * the check catches an illegal one (shown on the example); and the library holds exactly
 * these files, every one of which loads as its built-in layer. */
static void defaults_data_valid(void) {
    TAP_CHECK(check_text("tests/defaults/example.txt", example()->text, example()->size, 0) == 0,
              "the example does not pass");
    /* An illegal configuration (16-byte vectors of a 64x64x8 tile's 4x4 threads, the
     * refused "bad_vec" of test_cli) in place of one of the example's. */
    const char *legal = strstr(example()->text, "\tf0_");
    char *forged = malloc(example()->size + 64);
    if (legal && forged) {
        const char *end = strchr(legal + 1, '\t');
        size_t head = (size_t)(legal + 1 - example()->text);
        int len = snprintf(forged, example()->size + 64, "%.*sf0_64x64x8_w32x16_t4x4_s2_v4_k1_r1%s",
                           (int)head, example()->text, end);
        TAP_CHECK(check_text("forged", forged, (size_t)len, 1) > 0,
                  "an illegal configuration passes the check");
    }
    free(forged);

    char dir[4096];
    snprintf(dir, sizeof dir, "%s/data/defaults", src_root);
    struct dirent **names = NULL;
    int n = scandir(dir, &names, txt_name, byte_order);
    TAP_CHECK(n >= 0, "cannot list %s: %s", dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        size_t len = 0;
        unsigned char *bytes = read_all(path, &len);
        TAP_CHECK(bytes != NULL, "cannot read %s", path);
        char label[300];
        snprintf(label, sizeof label, "data/defaults/%s", names[i]->d_name);
        if (bytes)
            TAP_CHECK(check_text(label, (const char *)bytes, len, 0) == 0, "%s: bad entries", label);
        /* The library holds this very file, under its name, in this place. */
        TAP_CHECK(i < gt_defaults_files_count &&
                      strcmp(gt_defaults_files[i].name, names[i]->d_name) == 0 && bytes &&
                      gt_defaults_files[i].size == len &&
                      memcmp(gt_defaults_files[i].text, bytes, len) == 0,
                  "%s is not the library's built-in text %d (rebuild?)", label, i);
        free(bytes);
    }
    printf("# data/defaults/: %d files; the library holds %d\n", n, gt_defaults_files_count);
    TAP_CHECK(n < 0 || n == gt_defaults_files_count, "%d files, %d built in", n,
              gt_defaults_files_count);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);

    /* The built-in texts, as the library reads them: all load. */
    gt_layers_close();
    layer_env("real", NULL, NULL);
    set_env("GEMMTUNE_DEFAULTS", NULL);
    gt_layers_set_defaults(NULL, -1);
    gt_layers_open();
    int files = -1, loaded = -1, state = gt_layers_defaults(&files, &loaded);
    TAP_CHECK(files == gt_defaults_files_count && loaded == files &&
                  state == (files ? GT_DEFAULTS_LOADED : GT_DEFAULTS_NONE),
              "built in: state %d, %d of %d loaded", state, loaded, files);
    gt_layers_close();
}

static void image_said(int level, const char *message, void *user) {
    (void)level;
    if (strstr(message, "built-in defaults: an image of")) ++*(int *)user;
}

/* The built-in image (data/image.c) holds what the built-in texts load into, entry for
 * entry: the two caches write the same text. And it is what the layer opens. */
static void defaults_image_same(void) {
    printf("# image: %zu bytes, %d of %d files\n", gt_defaults_image_size, gt_defaults_image_files,
           gt_defaults_files_count);
    if (gt_defaults_files_count == 0) {
        TAP_CHECK(gt_defaults_image_size == 0, "an image of no text");
        return;
    }
    TAP_CHECK(gt_defaults_image_size > 0 && gt_defaults_image_files == gt_defaults_files_count,
              "no image of the %d built-in texts (an SQLite before 3.36?)", gt_defaults_files_count);
    if (gt_defaults_image_size == 0) return;
    char msg[1200];
    gt_db *img = NULL, *txt = mem_db();
    TAP_CHECK(gt_db_open_image("image", gt_defaults_image, gt_defaults_image_size, &img, msg,
                               sizeof msg) == GT_SUCCESS,
              "the image does not open: %s", msg);
    for (int i = 0; txt && i < gt_defaults_files_count; i++)
        TAP_CHECK(gt_text_load(txt, gt_defaults_files[i].text, gt_defaults_files[i].size,
                               gt_defaults_files[i].name, NULL, msg, sizeof msg) == GT_SUCCESS,
                  "%s: %s", gt_defaults_files[i].name, msg);
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    gt_text_counts ca, cb;
    if (img && txt) {
        TAP_CHECK(gt_text_write(img, NULL, &a, &la, &ca, msg, sizeof msg) == GT_SUCCESS, "%s", msg);
        TAP_CHECK(gt_text_write(txt, NULL, &b, &lb, &cb, msg, sizeof msg) == GT_SUCCESS, "%s", msg);
        printf("# image: %lld winners, %lld timings; texts: %lld, %lld\n", ca.winners, ca.timings,
               cb.winners, cb.timings);
        TAP_CHECK(a && b && la == lb && memcmp(a, b, la) == 0 && ca.winners > 0 &&
                      ca.timings == cb.timings,
                  "the image and the texts differ (%zu and %zu bytes of text)", la, lb);
        /* Read-only, as a sealed cache: a store is refused. */
        gt_key k;
        fixture_key(&k, 90, 0, 0, 640, 640, 640, 16, 1);
        gt_db_winner w;
        memset(&w, 0, sizeof w);
        snprintf(w.config, sizeof w.config, "f0_64x64x16_w32x32_t4x4_s2_v4_k1_r1");
        w.time_us = 1.0;
        TAP_CHECK(gt_db_store(img, &k, gt_kernel_source_hash, 0, &w, NULL, 0) != GT_SUCCESS,
                  "the image took a store");
    }
    free(a), free(b);
    gt_db_close(img);
    gt_db_close(txt);
    /* The layer opens the image, not the texts. */
    gt_layers_close();
    layer_env("image", NULL, NULL);
    set_env("GEMMTUNE_DEFAULTS", NULL);
    gt_layers_set_defaults(NULL, -1);
    int said = 0;
    gt_set_log_callback(image_said, &said);
    gt_set_log_level(4);
    gt_layers_open();
    /* Not at the layers' opening, nor for an entry the image does not name: at the first
     * read that needs it (cache/layers.c, open_deferred). */
    const int said_at_open = said;
    gt_key nk;
    fixture_key(&nk, 90, 0, 0, 641, 643, 647, 16, 1);
    gt_db_winner got;
    const int last = gt_layers_count() - 1;
    const int nfound = gt_layers_lookup(last, &nk, gt_kernel_source_hash, 0, &got);
    const int said_after_miss = said;
    /* An entry it names: opened, and found. */
    int hit = 0;
    if (gt_defaults_image_nkeys > 0) {
        char name[400], *bar;
        snprintf(name, sizeof name, "%s", gt_defaults_image_keys[0]);
        bar = strrchr(name, '|');
        int major = bar ? atoi(bar + 1) : -1;
        if (bar) *bar = 0;
        bar = strrchr(name, '|');
        gt_key ik;
        if (bar && (*bar = 0, gt_key_parse(name, &ik, NULL, 0) == 0))
            hit = gt_layers_lookup(last, &ik, bar + 1, major, &got);
    }
    int files = -1, loaded = -1;
    const int state = gt_layers_defaults(&files, &loaded);
    gt_set_log_level(0);
    gt_set_log_callback(NULL, NULL);
    TAP_CHECK(said_at_open == 0 && !nfound && said_after_miss == 0,
              "the image opened at the layers' opening (%d) or for an entry it lacks (%d, found %d)",
              said_at_open, said_after_miss, nfound);
    TAP_CHECK(gt_defaults_image_nkeys == 0 || hit, "an entry the image names was not found");
    TAP_CHECK(state == GT_DEFAULTS_LOADED && loaded == files && said == 1,
              "the layer did not open the image (%d of %d loaded, said %d)", loaded, files, said);
    gt_layers_close();
    /* A damaged image is refused with a message, never read. */
    unsigned char *bad = malloc(gt_defaults_image_size);
    if (bad) {
        memcpy(bad, gt_defaults_image, gt_defaults_image_size);
        memset(bad, 'x', 16);
        img = NULL;
        TAP_CHECK(gt_db_open_image("damaged", bad, gt_defaults_image_size, &img, msg, sizeof msg) !=
                          GT_SUCCESS && img == NULL && msg[0],
                  "a damaged image opened");
        printf("# damaged: %s\n", msg);
        free(bad);
    }
}

/* ===================================================================================
 * Main
 * =================================================================================== */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int main(int argc, char **argv) {
    if (argc > 1) src_root = argv[1];
    snprintf(tmp, sizeof tmp, "/tmp/gemmtune-test-defaults-XXXXXX");
    if (!mkdtemp(tmp)) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    unsetenv("GEMMTUNE_LOG");
    TAP_RUN(text_round_trip);
    TAP_RUN(text_filter);
    TAP_RUN(text_malformed);
    TAP_RUN(text_first_line);
    TAP_RUN(text_refuses_infinity);
    TAP_RUN(db_seal);
    TAP_RUN(embed_bytes);
    TAP_RUN(defaults_layer_last);
    TAP_RUN(defaults_env_off);
    TAP_RUN(defaults_bad_or_none);
    TAP_RUN(defaults_data_valid);
    TAP_RUN(defaults_image_same);
    nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
