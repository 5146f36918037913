/*
 * text.c: cache entries as text (format and contract in text.h).
 *
 * Writing walks gt_db_list, then each kept key's gt_db_timings, into one growing buffer;
 * the header's counts are known only at the end, so the body is built first and the
 * header put before it. Reading parses every line into arrays first (rows and the line
 * each came from), checks the whole (keys and configurations given twice), and only
 * then merges, so that a bad text leaves the database as it was.
 */
#include "text.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "key.h"

/* The room a src_hash gets (db.c reads it into 128 bytes). */
#define HASH_MAX 128
#define WINNER_FIELDS 12
#define TIMING_FIELDS 6

static void say(char *msg, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t size, const char *fmt, ...) {
    if (!msg || !size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

/* ===================================================================================
 * Writing
 * =================================================================================== */

/* A growing string; oom once any growth failed (later additions are dropped). */
typedef struct buf {
    char *p;
    size_t len, cap;
    int oom;
} buf;

static void buf_add(buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void buf_str(buf *b, const char *s) { buf_add(b, s, strlen(s)); }

/* A text field, escaped (text.h): "-" for the empty string. */
static void put_field(buf *b, const char *s) {
    buf_add(b, "\t", 1);
    if (!*s) {
        buf_add(b, "-", 1);
        return;
    }
    if (strcmp(s, "-") == 0) {
        buf_add(b, "\\-", 2);
        return;
    }
    for (const char *p = s; *p; p++) {
        const char *esc = *p == '\\' ? "\\\\" : *p == '\t' ? "\\t" : *p == '\n' ? "\\n"
                        : *p == '\r' ? "\\r" : NULL;
        if (esc) buf_add(b, esc, 2);
        else buf_add(b, p, 1);
    }
}

/* The shortest %.Ng text of v that strtod reads back as v (v finite). */
static void put_double(buf *b, double v) {
    char text[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(text, sizeof text, "%.*g", prec, v);
        if (strtod(text, NULL) == v) break;
    }
    buf_add(b, "\t", 1);
    buf_str(b, text);
}

static void put_int(buf *b, long long v) {
    char text[32];
    snprintf(text, sizeof text, "\t%lld", v);
    buf_str(b, text);
}

/* One kept winner, collected before its timings are read (a gt_db_list callback may not
 * use the handle). */
typedef struct wrow {
    gt_key key;
    char src_hash[HASH_MAX];
    int lib_major;
    gt_db_winner w;
} wrow;

typedef struct wrows {
    const gt_text_filter *flt;
    wrow *v;
    size_t n, cap;
    int oom;
} wrows;

static int collect_winner(const gt_key *key, const char *src_hash, int lib_major,
                          const gt_db_winner *w, void *user) {
    wrows *r = user;
    if (r->flt && ((r->flt->device && strcmp(r->flt->device, key->device) != 0) ||
                   (r->flt->dtype >= 0 && r->flt->dtype != key->dtype)))
        return 0;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        wrow *v = realloc(r->v, cap * sizeof *v);
        if (!v) {
            r->oom = 1;
            return 1;
        }
        r->v = v, r->cap = cap;
    }
    wrow *e = &r->v[r->n++];
    memset(e, 0, sizeof *e);
    e->key = *key;
    snprintf(e->src_hash, sizeof e->src_hash, "%s", src_hash);
    e->lib_major = lib_major;
    e->w = *w;
    return 0;
}

/* The T lines of one key, appended as gt_db_timings gives them. */
typedef struct tctx {
    buf *b;
    long long n;
    int bad; /* a number the text cannot carry */
} tctx;

static int put_timing(const gt_db_timing *t, void *user) {
    tctx *c = user;
    if (!isfinite(t->time_us) || !isfinite(t->tflops)) {
        c->bad = 1;
        return 1;
    }
    buf_str(c->b, "T");
    put_field(c->b, t->config);
    put_field(c->b, t->status);
    put_double(c->b, t->time_us);
    put_double(c->b, t->tflops);
    put_field(c->b, t->message);
    buf_add(c->b, "\n", 1);
    c->n++;
    return 0;
}

gt_status gt_text_write(gt_db *db, const gt_text_filter *flt, char **out, size_t *len,
                        gt_text_counts *counts, char *msg, size_t msgsize) {
    if (out) *out = NULL;
    if (len) *len = 0;
    if (counts) memset(counts, 0, sizeof *counts);
    say(msg, msgsize, "%s", "");
    if (!db || !out || !len) {
        say(msg, msgsize, "text: %s is NULL", !db ? "db" : !out ? "out" : "len");
        return GT_INVALID_VALUE;
    }
    wrows rows = {.flt = flt};
    gt_status s = gt_db_list(db, collect_winner, &rows);
    if (s == GT_SUCCESS && rows.oom) s = GT_OUT_OF_MEMORY;
    if (s != GT_SUCCESS) {
        if (s == GT_OUT_OF_MEMORY) say(msg, msgsize, "text: out of memory listing the winners");
        else say(msg, msgsize, "%s", gt_db_errmsg(db));
        free(rows.v);
        return s == GT_OUT_OF_MEMORY ? s : GT_CACHE_ERROR;
    }
    buf body = {0};
    tctx tc = {.b = &body};
    for (size_t i = 0; i < rows.n && s == GT_SUCCESS; i++) {
        const wrow *e = &rows.v[i];
        char kt[512];
        gt_key_format(&e->key, kt, sizeof kt);
        if (!isfinite(e->w.time_us) || !isfinite(e->w.tflops)) {
            say(msg, msgsize, "text: the winner of %s has time %g us, %g TFLOP/s: not a "
                              "number the text can carry", kt, e->w.time_us, e->w.tflops);
            s = GT_INVALID_VALUE;
            break;
        }
        buf_str(&body, "W");
        put_field(&body, kt);
        put_field(&body, e->src_hash);
        put_int(&body, e->lib_major);
        put_field(&body, e->w.config);
        put_double(&body, e->w.time_us);
        put_double(&body, e->w.tflops);
        put_field(&body, e->w.nvrtc);
        put_field(&body, e->w.driver);
        put_field(&body, e->w.host);
        put_int(&body, (long long)e->w.tuned_at);
        put_field(&body, e->w.libver);
        buf_add(&body, "\n", 1);
        gt_status ts = gt_db_timings(db, &e->key, e->src_hash, e->lib_major, put_timing, &tc);
        if (ts != GT_SUCCESS) {
            say(msg, msgsize, "%s", gt_db_errmsg(db));
            s = GT_CACHE_ERROR;
        } else if (tc.bad) {
            say(msg, msgsize, "text: a timing of %s holds a number the text cannot carry "
                              "(an infinity)", kt);
            s = GT_INVALID_VALUE;
        }
    }
    buf whole = {0};
    if (s == GT_SUCCESS) {
        char line[160];
        buf_str(&whole, GT_TEXT_MAGIC "\n"
                        "# gemmtune cache entries (cache/text.h): a W line per key with its "
                        "winner, then a T line\n"
                        "# per candidate timed for that key, fastest first, failed ones "
                        "after. Fields, tab-separated:\n"
                        "# W  key  src_hash  lib_major  config  time_us  tflops  nvrtc  "
                        "driver  host  tuned_at  libver\n"
                        "# T  config  status  time_us  tflops  message\n"
                        "# key: device|smXY|SMs|dtype|AB|MxNxK|aN|bN; '-': empty; time_us "
                        "-1: not timed.\n");
        snprintf(line, sizeof line, "# %zu winners, %lld timings\n", rows.n, tc.n);
        buf_str(&whole, line);
        if (body.len) buf_add(&whole, body.p, body.len);
        if (body.oom || whole.oom) {
            say(msg, msgsize, "text: out of memory writing %zu winners", rows.n);
            s = GT_OUT_OF_MEMORY;
        }
    }
    free(body.p);
    free(rows.v);
    if (s != GT_SUCCESS) {
        free(whole.p);
        return s;
    }
    *out = whole.p;
    *len = whole.len;
    if (counts) counts->winners = (long long)rows.n, counts->timings = tc.n;
    return GT_SUCCESS;
}

/* ===================================================================================
 * Reading
 * =================================================================================== */

/* One W line as parsed, with its timings [first, first + n) of the timing array. */
typedef struct pentry {
    gt_key key;
    char src_hash[HASH_MAX];
    int lib_major;
    gt_db_winner w;
    size_t first, n;
    long line;
} pentry;

typedef struct parsed {
    pentry *e;
    size_t ne, cape;
    gt_db_timing *t;
    long *tline; /* the line of each timing */
    size_t nt, capt;
} parsed;

static void parsed_free(parsed *p) {
    free(p->e), free(p->t), free(p->tline);
    memset(p, 0, sizeof *p);
}

/* A field: [s, s + n). */
typedef struct field {
    const char *s;
    size_t n;
} field;

/* Unescapes f into dst (size bytes, terminated). 0, or -1 with why. */
static int unescape(field f, char *dst, size_t size, char *why, size_t whysize) {
    if (f.n == 0) {
        snprintf(why, whysize, "empty field (an empty value is written '-')");
        return -1;
    }
    if (f.n == 1 && f.s[0] == '-') {
        dst[0] = 0;
        return 0;
    }
    size_t o = 0;
    for (size_t i = 0; i < f.n; i++) {
        char c = f.s[i];
        if (c == 0) {
            snprintf(why, whysize, "a NUL byte");
            return -1;
        }
        if (c == '\\') {
            if (++i == f.n) {
                snprintf(why, whysize, "a backslash at the end of a field");
                return -1;
            }
            c = f.s[i];
            if (c == 't') c = '\t';
            else if (c == 'n') c = '\n';
            else if (c == 'r') c = '\r';
            else if (c == '-' && f.n == 2) c = '-';
            else if (c != '\\') {
                snprintf(why, whysize, "unknown escape '\\%c' (known: \\\\ \\t \\n \\r, and \\- "
                                       "for a field that is '-')", c);
                return -1;
            }
        }
        if (o + 1 >= size) {
            snprintf(why, whysize, "longer than %zu bytes", size - 1);
            return -1;
        }
        dst[o++] = c;
    }
    dst[o] = 0;
    return 0;
}

/* A field that must not be empty, unescaped. */
static int text_field(field f, const char *what, char *dst, size_t size, int required,
                      char *why, size_t whysize) {
    char inner[200];
    if (unescape(f, dst, size, inner, sizeof inner) != 0) {
        snprintf(why, whysize, "%s: %s", what, inner);
        return -1;
    }
    if (required && !dst[0]) {
        snprintf(why, whysize, "%s is empty", what);
        return -1;
    }
    return 0;
}

static int double_field(field f, const char *what, double *out, char *why, size_t whysize) {
    char text[64], *end;
    if (f.n == 0 || f.n >= sizeof text || f.s[0] == ' ') goto bad;
    memcpy(text, f.s, f.n);
    text[f.n] = 0;
    errno = 0;
    *out = strtod(text, &end);
    if (end == text || *end || errno == ERANGE || !isfinite(*out)) goto bad;
    return 0;
bad:
    snprintf(why, whysize, "%s '%.*s' is not a finite number", what, (int)(f.n < 40 ? f.n : 40),
             f.s);
    return -1;
}

static int int_field(field f, const char *what, long long min, long long max, long long *out,
                     char *why, size_t whysize) {
    char text[32], *end;
    if (f.n == 0 || f.n >= sizeof text || !(f.s[0] == '-' || (f.s[0] >= '0' && f.s[0] <= '9')))
        goto bad;
    memcpy(text, f.s, f.n);
    text[f.n] = 0;
    errno = 0;
    *out = strtoll(text, &end, 10);
    if (*end || errno || *out < min || *out > max) goto bad;
    return 0;
bad:
    snprintf(why, whysize, "%s '%.*s' is not a whole number from %lld to %lld", what,
             (int)(f.n < 40 ? f.n : 40), f.s, min, max);
    return -1;
}

static int parse_winner(const field *f, pentry *e, char *why, size_t whysize) {
    char kt[512], inner[200];
    long long v;
    memset(e, 0, sizeof *e);
    if (text_field(f[1], "key", kt, sizeof kt, 1, why, whysize) != 0) return -1;
    if (gt_key_parse(kt, &e->key, inner, sizeof inner) != 0) {
        snprintf(why, whysize, "'%s': %s", kt, inner);
        return -1;
    }
    if (text_field(f[2], "src_hash", e->src_hash, sizeof e->src_hash, 1, why, whysize) != 0 ||
        int_field(f[3], "lib_major", 0, INT_MAX, &v, why, whysize) != 0)
        return -1;
    e->lib_major = (int)v;
    gt_db_winner *w = &e->w;
    if (text_field(f[4], "config", w->config, sizeof w->config, 1, why, whysize) != 0 ||
        double_field(f[5], "time_us", &w->time_us, why, whysize) != 0 ||
        double_field(f[6], "tflops", &w->tflops, why, whysize) != 0 ||
        text_field(f[7], "nvrtc", w->nvrtc, sizeof w->nvrtc, 0, why, whysize) != 0 ||
        text_field(f[8], "driver", w->driver, sizeof w->driver, 0, why, whysize) != 0 ||
        text_field(f[9], "host", w->host, sizeof w->host, 0, why, whysize) != 0 ||
        int_field(f[10], "tuned_at", INT64_MIN, INT64_MAX, &v, why, whysize) != 0 ||
        text_field(f[11], "libver", w->libver, sizeof w->libver, 0, why, whysize) != 0)
        return -1;
    w->tuned_at = v;
    return 0;
}

static int parse_timing(const field *f, gt_db_timing *t, char *why, size_t whysize) {
    memset(t, 0, sizeof *t);
    return text_field(f[1], "config", t->config, sizeof t->config, 1, why, whysize) != 0 ||
                   text_field(f[2], "status", t->status, sizeof t->status, 1, why, whysize) != 0 ||
                   double_field(f[3], "time_us", &t->time_us, why, whysize) != 0 ||
                   double_field(f[4], "tflops", &t->tflops, why, whysize) != 0 ||
                   text_field(f[5], "message", t->message, sizeof t->message, 0, why, whysize) != 0
               ? -1
               : 0;
}

static int push_entry(parsed *p) {
    if (p->ne < p->cape) return 0;
    size_t cap = p->cape ? 2 * p->cape : 64;
    pentry *e = realloc(p->e, cap * sizeof *e);
    if (!e) return -1;
    p->e = e, p->cape = cap;
    return 0;
}

static int push_timing(parsed *p) {
    if (p->nt < p->capt) return 0;
    size_t cap = p->capt ? 2 * p->capt : 256;
    gt_db_timing *t = realloc(p->t, cap * sizeof *t);
    if (t) p->t = t;
    long *l = realloc(p->tline, cap * sizeof *l);
    if (l) p->tline = l;
    if (!t || !l) return -1;
    p->capt = cap;
    return 0;
}

/* Orders entries by everything that makes a key in the database (the key, src_hash,
 * lib_major), so that a key given twice sits beside itself. */
static int entry_cmp(const void *a, const void *b) {
    const pentry *x = *(pentry *const *)a, *y = *(pentry *const *)b;
    const gt_key *p = &x->key, *q = &y->key;
    int c = strcmp(p->device, q->device);
    if (c) return c;
    long long dp[] = {p->cc_major, p->cc_minor, p->sm_count, p->dtype, p->opa, p->opb,
                      p->m, p->n, p->k, p->align, p->beta0, x->lib_major};
    long long dq[] = {q->cc_major, q->cc_minor, q->sm_count, q->dtype, q->opa, q->opb,
                      q->m, q->n, q->k, q->align, q->beta0, y->lib_major};
    for (size_t i = 0; i < sizeof dp / sizeof dp[0]; i++)
        if (dp[i] != dq[i]) return dp[i] < dq[i] ? -1 : 1;
    return strcmp(x->src_hash, y->src_hash);
}

/* A key or one key's configuration given twice: 0, else -1 with *line the later line
 * of the earliest such pair and why. */
static int check_twice(const parsed *p, long *line, char *why, size_t whysize) {
    long bad = 0, first = 0;
    const char *what = NULL;
    pentry **order = p->ne ? malloc(p->ne * sizeof *order) : NULL;
    if (p->ne && !order) {
        *line = 0;
        snprintf(why, whysize, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < p->ne; i++) order[i] = &p->e[i];
    if (p->ne) qsort(order, p->ne, sizeof *order, entry_cmp);
    for (size_t i = 1; i < p->ne; i++) {
        if (entry_cmp(&order[i - 1], &order[i]) != 0) continue;
        long a = order[i - 1]->line, b = order[i]->line;
        long later = a > b ? a : b;
        if (!bad || later < bad) bad = later, first = a < b ? a : b, what = "key";
    }
    free(order);
    for (size_t i = 0; i < p->ne; i++) {
        const pentry *e = &p->e[i];
        for (size_t j = 1; j < e->n; j++)
            for (size_t k = 0; k < j; k++)
                if (strcmp(p->t[e->first + j].config, p->t[e->first + k].config) == 0) {
                    long later = p->tline[e->first + j];
                    if (!bad || later < bad)
                        bad = later, first = p->tline[e->first + k], what = "configuration";
                }
    }
    if (!bad) return 0;
    *line = bad;
    snprintf(why, whysize, "the same %s again (first at line %ld)", what, first);
    return -1;
}

/* Parses the whole text into *p. 0, or -1 with *line (0: not a line's fault) and why. */
static int parse_all(const char *text, size_t len, parsed *p, long *line, char *why,
                     size_t whysize) {
    const char *s = text, *end = text + len;
    long lineno = 0;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        lineno++;
        *line = lineno;
        size_t n = (size_t)(e - s);
        if (n && s[n - 1] == '\r') n--;
        const char *cur = s;
        s = nl ? nl + 1 : end;
        if (lineno == 1) {
            if (n != strlen(GT_TEXT_MAGIC) || memcmp(cur, GT_TEXT_MAGIC, n) != 0) {
                snprintf(why, whysize, "not a gemmtune cache text (the first line must be "
                                       "'gemmtune-cache-text<TAB>1')");
                return -1;
            }
            continue;
        }
        size_t lead = 0;
        while (lead < n && (cur[lead] == ' ' || cur[lead] == '\t')) lead++;
        if (lead == n || cur[lead] == '#') continue;
        /* The fields: as many as the line has tabs and one; only the first few kept. */
        field f[WINNER_FIELDS];
        int nf = 0;
        for (size_t i = 0, start = 0; i <= n; i++) {
            if (i < n && cur[i] != '\t') continue;
            if (nf < WINNER_FIELDS) f[nf].s = cur + start, f[nf].n = i - start;
            nf++;
            start = i + 1;
        }
        int winner = f[0].n == 1 && f[0].s[0] == 'W', timing = f[0].n == 1 && f[0].s[0] == 'T';
        if (!winner && !timing) {
            snprintf(why, whysize, "unknown record '%.*s' (want W or T, or '#' for a comment)",
                     (int)(f[0].n < 20 ? f[0].n : 20), f[0].s);
            return -1;
        }
        int want = winner ? WINNER_FIELDS : TIMING_FIELDS;
        if (nf != want) {
            snprintf(why, whysize, "a %s line has %d tab-separated fields, want %d",
                     winner ? "W" : "T", nf, want);
            return -1;
        }
        if (winner) {
            if (push_entry(p) != 0) goto oom;
            pentry *pe = &p->e[p->ne];
            if (parse_winner(f, pe, why, whysize) != 0) return -1;
            pe->first = p->nt, pe->n = 0, pe->line = lineno;
            p->ne++;
        } else {
            if (!p->ne) {
                snprintf(why, whysize, "a T line before any W line: whose timing is it?");
                return -1;
            }
            if (push_timing(p) != 0) goto oom;
            if (parse_timing(f, &p->t[p->nt], why, whysize) != 0) return -1;
            p->tline[p->nt++] = lineno;
            p->e[p->ne - 1].n++;
        }
    }
    if (lineno == 0) {
        *line = 1;
        snprintf(why, whysize, "empty: not a gemmtune cache text");
        return -1;
    }
    return check_twice(p, line, why, whysize);
oom:
    *line = 0;
    snprintf(why, whysize, "out of memory");
    return -1;
}

gt_status gt_text_load(gt_db *db, const char *text, size_t len, const char *name,
                       gt_text_counts *counts, char *msg, size_t msgsize) {
    if (counts) memset(counts, 0, sizeof *counts);
    say(msg, msgsize, "%s", "");
    if (!name) name = "text";
    if (!db || (!text && len)) {
        say(msg, msgsize, "%s: %s is NULL", name, !db ? "db" : "text");
        return GT_INVALID_VALUE;
    }
    parsed p = {0};
    long line = 0;
    char why[400];
    if (parse_all(text ? text : "", len, &p, &line, why, sizeof why) != 0) {
        parsed_free(&p);
        if (line == 0) {
            say(msg, msgsize, "%s: %s", name, why);
            return GT_OUT_OF_MEMORY;
        }
        say(msg, msgsize, "%s:%ld: %s", name, line, why);
        return GT_INVALID_VALUE;
    }
    gt_status s = GT_SUCCESS;
    for (size_t i = 0; i < p.ne && s == GT_SUCCESS; i++) {
        const pentry *e = &p.e[i];
        s = gt_db_merge(db, &e->key, e->src_hash, e->lib_major, &e->w, p.t + e->first,
                        (int)e->n, NULL);
        if (s != GT_SUCCESS) {
            say(msg, msgsize, "%s:%ld: %s", name, e->line, gt_db_errmsg(db));
            s = GT_CACHE_ERROR;
        }
    }
    if (s == GT_SUCCESS && counts) counts->winners = (long long)p.ne, counts->timings = (long long)p.nt;
    parsed_free(&p);
    return s;
}

gt_status gt_text_open(const char *text, size_t len, const char *name, gt_db **out,
                       gt_text_counts *counts, char *msg, size_t msgsize) {
    if (counts) memset(counts, 0, sizeof *counts);
    if (!out) {
        say(msg, msgsize, "%s: out is NULL", name ? name : "text");
        return GT_INVALID_VALUE;
    }
    *out = NULL;
    gt_db *db = NULL;
    char inner[600];
    gt_status s = gt_db_open(":memory:", 0, 0, &db, inner, sizeof inner);
    if (s != GT_SUCCESS) {
        say(msg, msgsize, "%s: %s", name ? name : "text", inner);
        return s;
    }
    s = gt_text_load(db, text, len, name, counts, msg, msgsize);
    if (s != GT_SUCCESS) {
        gt_db_close(db);
        return s;
    }
    *out = db;
    return GT_SUCCESS;
}

int gt_text_is(const void *head, size_t len) {
    size_t n = strlen(GT_TEXT_MAGIC);
    const char *h = head;
    if (!h || len < n + 1 || memcmp(h, GT_TEXT_MAGIC, n) != 0) return 0;
    return h[n] == '\n' || (h[n] == '\r' && len > n + 1 && h[n + 1] == '\n');
}
