/*
 * main.c: the gemmtune command's entry: the global options (--help, --version,
 * --cache FILE) and the table of verbs, each handed its own argv (argv[0] the verb).
 *
 * Owns nothing but that table: the verbs are in gpu.c (info, tune, run, prebuild: they
 * drive a GPU), cache.c (list, show, export, import, merge, prune: cache files only) and
 * defaults.c (defaults: tune, then export, composed), the shared words and the usage
 * text in parse.c. main.c includes every verb header; none of them includes main.c's,
 * gpu.c and cache.c include only parse.h of cli/, and defaults.c also the two verb
 * headers it composes.
 * Exit status: 0 success, 1 failure (no GPU, a failed check), 2 bad usage.
 * The command may print; the library it drives never does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "gemmtune.h"

#include "cache.h"
#include "defaults.h"
#include "gpu.h"
#include "parse.h"

static int cli_help(int argc, char **argv) {
    (void)argc, (void)argv;
    return cli_usage(stdout, 0);
}

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} verbs[] = {
    {"info", cli_info},     {"tune", cli_tune},     {"list", cli_list},
    {"show", cli_show},     {"run", cli_run},       {"export", cli_export},
    {"import", cli_import}, {"merge", cli_merge},   {"prune", cli_prune},
    {"defaults", cli_defaults}, {"prebuild", cli_prebuild}, {"help", cli_help},
};

#define NVERBS (int)(sizeof verbs / sizeof verbs[0])

int main(int argc, char **argv) {
    int i = 1;
    while (i < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return cli_usage(stdout, 0);
        if (strcmp(argv[i], "--version") == 0) {
            printf("gemmtune %s\n", GT_VERSION_STRING);
            return 0;
        }
        if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc) {
            setenv(gt_env_vars[GT_ENV_CACHE].name, argv[i + 1], 1);
            i += 2;
            continue;
        }
        fprintf(stderr, "gemmtune: unknown option '%s' (see --help)\n", argv[i]);
        return 2;
    }
    if (i >= argc) return cli_usage(stderr, 2);
    for (int v = 0; v < NVERBS; v++)
        if (strcmp(argv[i], verbs[v].name) == 0) return verbs[v].run(argc - i, argv + i);
    fprintf(stderr, "gemmtune: unknown verb '%s' (", argv[i]);
    for (int v = 0; v < NVERBS; v++)
        if (verbs[v].run != cli_help) fprintf(stderr, "%s%s", v ? ", " : "", verbs[v].name);
    fprintf(stderr, "; see --help)\n");
    return 2;
}
