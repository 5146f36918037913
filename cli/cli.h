/*
 * cli.h: what the two halves of the gemmtune command share.
 *
 * tuner/cli.c holds main, the usage text and the verbs that drive a GPU (info, tune,
 * list, run); tuner/cli_cache.c holds the verbs that only read and write cache files
 * (export, import, merge, show, prune), which work on a machine without a GPU.
 * Both print (the library never does); both return an exit status: 0 success,
 * 1 failure, 2 bad usage. Names here carry the prefix cli_.
 */
#ifndef GT_CLI_H
#define GT_CLI_H

#include <stdio.h>

/* One problem as the command's arguments give it. */
typedef struct cli_shape {
    long long m, n, k;
    int opa, opb; /* 0 = N, 1 = T */
} cli_shape;

/* "MxNxK" or "MxNxK:AB" with A, B in N/T (C counts as T). 0, or -1 when malformed. */
int cli_parse_shape(const char *s, cli_shape *out);

/* Reads a shape file ('#' comments; each line "M N K [opA opB]" or "MxNxK[:AB]") and
 * appends its shapes to *v (count *n, capacity *cap; realloc'd). 0, or -1 after
 * printing the file, the line and what is wrong. */
int cli_read_shapes(const char *path, cli_shape **v, int *n, int *cap);

/* Writes the usage text (every verb, option and environment variable, then the kernel
 * parameters) to f and returns code. */
int cli_usage(FILE *f, int code);

/* --dtype T of verb: *dtype, or 2 after a message that lists the known types (key.c's
 * names, so a type added there is listed here). */
int cli_parse_dtype(const char *verb, const char *text, int *dtype);

/* The user cache's path (--cache / GEMMTUNE_CACHE / default) into buf; prints why not
 * (prefixed with verb) and returns -1 when none can be formed. */
int cli_cache_path(const char *verb, char *buf, size_t size);

/* The verbs of cli_cache.c; argv[0] is the verb. */
int cli_export(int argc, char **argv);
int cli_import(int argc, char **argv);
int cli_merge(int argc, char **argv);
int cli_show(int argc, char **argv);
int cli_prune(int argc, char **argv);

#endif
