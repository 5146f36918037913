/*
 * text.h: cache entries as text: reviewable lines that a person can read in a diff and a
 * program can turn back into the same rows (the built-in defaults, data/defaults/, and
 * `gemmtune export --text`).
 *
 * Format, version 1. UTF-8 lines ending in '\n' (a '\r' before it is dropped on reading);
 * fields separated by one tab; blank lines and lines starting with '#' are comments.
 *
 *   gemmtune-cache-text<TAB>1         the first line, exactly
 *   W  key  src_hash  lib_major  config  time_us  tflops  nvrtc  driver  host  tuned_at  libver
 *   T  config  status  time_us  tflops  message
 *
 * A W line is one key's winner (key: gt_key_format's text, parsed by gt_key_parse); the T
 * lines after it, up to the next W line, are that key's candidates (gt_db_timing), as
 * gt_db_timings orders them (fastest first, failed ones after). time_us and tflops are
 * the shortest decimals that read back as the same double (time_us -1: not timed);
 * lib_major and tuned_at (unix seconds) are whole numbers. A text field that is empty is
 * written "-"; a backslash, tab, newline or carriage return in one is written \\, \t, \n,
 * \r, and a field that is just "-" is written \-. No field is empty and no line ends in
 * white space, so an editor that trims lines cannot change an entry.
 *
 * Does: writes every winner of a gt_db (or those of one device and/or data type) with its
 * timings; reads a text into a gt_db through gt_db_merge, all or nothing: the whole text
 * is parsed and checked first, and the first bad line is named ("NAME:LINE: why").
 * Owns: nothing beyond each call. Must not touch: files (texts are strings: the caller
 * reads and writes files), kernel configurations (a configuration is text here; whoever
 * compiles one validates it, tuner/kcfg.h), CUDA, and the process (no printing).
 */
#ifndef GT_TEXT_H
#define GT_TEXT_H

#include <stddef.h>

#include "db.h"
#include "gemmtune.h"

/* The first line of every text, without its newline. */
#define GT_TEXT_MAGIC "gemmtune-cache-text\t1"

/* One named text: a data file embedded in the library (data/embed.py) or read by a
 * caller. text holds size bytes (NUL-terminated beyond them when embedded). */
typedef struct gt_text_file {
    const char *name;
    const char *text;
    size_t size;
} gt_text_file;

/* Which winners gt_text_write writes. */
typedef struct gt_text_filter {
    const char *device; /* exact device name; NULL: every device */
    int dtype;          /* gt_dtype; -1: every type */
} gt_text_filter;

/* What a text held (gt_text_load) or what was written (gt_text_write). */
typedef struct gt_text_counts {
    long long winners;
    long long timings;
} gt_text_counts;

/* The text of db's winners that pass flt (NULL: all), in gt_db_list's order, each
 * followed by its timings: malloc'd into *out, NUL-terminated, *len bytes (the caller
 * frees it). counts may be NULL. The same rows give the same bytes. GT_OUT_OF_MEMORY;
 * GT_CACHE_ERROR when db cannot be read; GT_INVALID_VALUE when a row holds a number the
 * text cannot carry (an infinity): msg says which key. *out = NULL on failure. */
gt_status gt_text_write(gt_db *db, const gt_text_filter *flt, char **out, size_t *len,
                        gt_text_counts *counts, char *msg, size_t msgsize);

/* Parses len bytes of text (name names it in messages: a path, a file name) and merges
 * every entry into db (gt_db_merge: per key the faster winner stays, and its timings).
 * Nothing is merged unless every line is good: GT_INVALID_VALUE with "NAME:LINE: why" in
 * msg for the first bad line (a missing or unknown first line, an unknown record, a
 * wrong field count, a bad key, number or escape, a field too long for its column, a T
 * line before any W line, a key or a key's configuration given twice). GT_CACHE_ERROR
 * when db refuses a row (msg has its message; rows merged before it stay), and
 * GT_OUT_OF_MEMORY. counts (may be NULL) gets the rows the text held. */
gt_status gt_text_load(gt_db *db, const char *text, size_t len, const char *name,
                       gt_text_counts *counts, char *msg, size_t msgsize);

/* gt_text_load into a new private in-memory cache (gt_db_open(":memory:")), *out;
 * *out = NULL on failure. */
gt_status gt_text_open(const char *text, size_t len, const char *name, gt_db **out,
                       gt_text_counts *counts, char *msg, size_t msgsize);

/* 1 when the len bytes at head begin with the first line of a text (GT_TEXT_MAGIC and a
 * line end): a file to read with gt_text_load, not an SQLite file. */
int gt_text_is(const void *head, size_t len);

#endif
