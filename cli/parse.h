/*
 * parse.h: what every verb of the gemmtune command reads the same way: shapes and shape
 * files, data types, whole numbers, the cache's path, and the usage text.
 *
 * Owns the command's words (the shape syntax, the usage text); reads the library's
 * tables for the rest (data type names from key.h, environment variables from env.h,
 * kernel parameters from kcfg.h). Includes nothing else of cli/, so every verb file may
 * include it. Messages go to stderr prefixed "gemmtune VERB: "; exit statuses are the
 * command's: 0 success, 1 failure, 2 bad usage. Names carry the prefix cli_.
 */
#ifndef GT_CLI_PARSE_H
#define GT_CLI_PARSE_H

#include <stddef.h>
#include <stdio.h>

/* One problem as the command's arguments give it. */
typedef struct cli_shape {
    long long m, n, k;
    int opa, opb; /* 0 = N, 1 = T */
} cli_shape;

/* "MxNxK" or "MxNxK:AB" with A, B in N/T (C counts as T). 0, or -1 when malformed. */
int cli_parse_shape(const char *s, cli_shape *out);

/* The shape as cli_parse_shape reads it, with both ops: "MxNxK:AB". */
void cli_shape_format(const cli_shape *sh, char *buf, size_t size);

/* Appends sh to *v (count *n, capacity *cap; realloc'd). 0, or -1 when out of memory. */
int cli_push_shape(cli_shape **v, int *n, int *cap, const cli_shape *sh);

/* A shape that may range over one dimension: "MxLO:HIxK[:AB]" (any one of M, N or K as
 * LO:HI, LO < HI): LO, every power of two between them and HI, in ascending order, for
 * applications whose batch or sequence length varies (the selector covers the points
 * between). Appends the shapes to *v. 0; -1 when malformed (more than one range, more
 * than CLI_RANGE_MAX points, a size out of range); -2 when out of memory. */
#define CLI_RANGE_MAX 64
int cli_push_shapes(const char *s, cli_shape **v, int *n, int *cap);

/* Reads a shape file ('#' comments; each line "M N K [opA opB]" or "MxNxK[:AB]", the latter
 * with a range as cli_push_shapes reads it) and
 * appends its shapes to *v (count *n, capacity *cap; realloc'd). 0, or -1 after
 * printing the file, the line and what is wrong. */
int cli_read_shapes(const char *path, cli_shape **v, int *n, int *cap);

/* --dtype T of verb: *dtype, or 2 after a message that lists the known types (key.c's
 * names, so a type added there is listed here). */
int cli_parse_dtype(const char *verb, const char *text, int *dtype);

/* A whole non-negative decimal number that fits an int (digits only): 0, else -1. */
int cli_parse_index(const char *s, int *out);

/* A finite decimal or hexadecimal floating-point number (strtod's syntax, nothing
 * after it): 0, else -1. */
int cli_parse_finite(const char *s, double *out);

/* The user cache's path (--cache / GEMMTUNE_CACHE / default; on a network or parallel
 * filesystem this host's file beside it, cache/layers.h) into buf; prints why not
 * (prefixed with verb) and returns -1 when none can be formed. */
int cli_cache_path(const char *verb, char *buf, size_t size);

/* Writes the usage text to f and returns code: every verb and option, the shape and
 * data type syntax, then the environment variables (env.h's table) and the kernel
 * parameters (kcfg.h's table). */
int cli_usage(FILE *f, int code);

#endif
