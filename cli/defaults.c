/*
 * defaults.c: `gemmtune defaults` (defaults.h): the data file of the built-in defaults
 * for this GPU in one go, for whoever reruns it (data/defaults/README.md).
 *
 * It composes two verbs rather than copying them: for each data type, tune --file SHAPES
 * --dtype T (gpu.c), then export --text -o FILE (cache.c). Both run against a private
 * cache in a temporary directory beside FILE, with GEMMTUNE_CACHE_PATH unset and the
 * built-in defaults off (GEMMTUNE_DEFAULTS=0), so that no entry of the user's cache, a
 * shipped file or an older defaults file is read or written and every shape is tuned
 * here; tune gets --shard 0/1, so a Slurm job's variables do not split the shapes. The
 * private cache is removed at the end, whatever happened.
 *
 * Owns the temporary directory. Like main.c it includes the headers of the verbs it
 * composes (gpu.h, cache.h) besides parse.h; no verb file includes this one's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "defaults.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu.h"
#include "env.h"
#include "gemmtune.h"
#include "key.h"
#include "log.h"

#include "cache.h"
#include "gpu.h"
#include "parse.h"

/* Removes dir and the files in it (the private cache and its journals); quiet. */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char path[PATH_MAX + 300];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

int cli_defaults(int argc, char **argv) {
    static const struct option longs[] = {
        {"file", required_argument, 0, 'f'},   {"dtype", required_argument, 0, 't'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *file = NULL, *outpath = NULL;
    int dtypes[GT_NDTYPES], ndtypes = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:o:h", longs, NULL)) != -1) {
        if (c == 'f') file = optarg;
        else if (c == 'o') outpath = optarg;
        else if (c == 't') {
            int t, seen = 0;
            if (cli_parse_dtype("defaults", optarg, &t)) return 2;
            for (int i = 0; i < ndtypes; i++) seen |= dtypes[i] == t;
            if (!seen) dtypes[ndtypes++] = t;
        } else if (c == 'h') return cli_usage(stdout, 0);
        else return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "gemmtune defaults: unexpected argument '%s' (shapes go in --file)\n",
                argv[optind]);
        return 2;
    }
    if (!file || !*file) {
        fprintf(stderr, "gemmtune defaults: give --file SHAPES (see --help)\n");
        return 2;
    }
    if (!outpath || !*outpath) {
        fprintf(stderr, "gemmtune defaults: give -o FILE for the text (see --help)\n");
        return 2;
    }
    if (ndtypes == 0) dtypes[ndtypes++] = GT_DT_F32;
    /* The shape file is read here once, so that a bad one is bad usage before anything
     * is tuned (tune reads it again). */
    cli_shape *shapes = NULL;
    int nshapes = 0, cap = 0;
    if (cli_read_shapes(file, &shapes, &nshapes, &cap) != 0) {
        free(shapes);
        return 2;
    }
    free(shapes);
    if (nshapes == 0) {
        fprintf(stderr, "gemmtune defaults: %s holds no shape\n", file);
        return 2;
    }
    gt_status s = gt_cu_load();
    int count = 0;
    CUresult r = CUDA_SUCCESS;
    if (s == GT_SUCCESS && (r = gt_cu.device_get_count(&count)) != CUDA_SUCCESS)
        s = gt_cu_fail(r, "cuDeviceGetCount");
    if (s == GT_SUCCESS && count < 1) s = gt_fail(GT_NO_DEVICE, "no CUDA device");
    if (s != GT_SUCCESS) {
        fprintf(stderr, "gemmtune defaults: %s: %s\n", gt_status_string(s), gt_last_error());
        return 1;
    }

    /* The private cache: a directory beside FILE (FILE's directory must be writable
     * anyway), so no variable names a temporary directory. */
    char dir[PATH_MAX], cache[PATH_MAX + 16];
    if (snprintf(dir, sizeof dir, "%s.tmp.XXXXXX", outpath) >= (int)sizeof dir) {
        fprintf(stderr, "gemmtune defaults: path too long: %s\n", outpath);
        return 2;
    }
    if (!mkdtemp(dir)) {
        fprintf(stderr, "gemmtune defaults: cannot make a private cache beside %s: %s\n",
                outpath, strerror(errno));
        return 1;
    }
    snprintf(cache, sizeof cache, "%s/cache.db", dir);
    setenv(gt_env_vars[GT_ENV_CACHE].name, cache, 1);
    unsetenv(gt_env_vars[GT_ENV_CACHE_PATH].name);
    setenv(gt_env_vars[GT_ENV_DEFAULTS].name, "0", 1);
    fprintf(stderr, "gemmtune defaults: %d shapes of %s, %d data types, into a private cache "
                    "in %s\n", nshapes, file, ndtypes, dir);

    int failed = 0;
    for (int i = 0; i < ndtypes; i++) {
        char *tune_argv[] = {"tune", "--file", (char *)file, "--dtype",
                             (char *)gt_dtype_name(dtypes[i]), "--shard", "0/1", NULL};
        int code = cli_tune(7, tune_argv);
        if (code != 0) {
            fprintf(stderr, "gemmtune defaults: tune --dtype %s: not every shape was tuned "
                            "(exit %d)\n", gt_dtype_name(dtypes[i]), code);
            failed = 1;
        }
    }
    char *export_argv[] = {"export", "--text", "-o", (char *)outpath, NULL};
    int code = cli_export(4, export_argv);
    remove_dir(dir);
    if (code != 0) return 1;
    if (failed) {
        fprintf(stderr, "gemmtune defaults: %s is incomplete (above)\n", outpath);
        return 1;
    }
    printf("defaults of this GPU written to %s; to build them in, copy it to "
           "data/defaults/<gpu>.txt and rebuild\n", outpath);
    return 0;
}
