/*
 * tempcache.h: a fresh user cache for a CPU test: a new file name under /tmp as
 * GEMMTUNE_CACHE, no shipped files, the built-in defaults on or off, and the cache layers
 * opened on them (cache/layers.h).
 */
#ifndef GT_TEST_TEMPCACHE_H
#define GT_TEST_TEMPCACHE_H

#include <stdlib.h>
#include <unistd.h>

#include "layers.h"

/* path: a mkstemp template ("/tmp/name_XXXXXX"), which becomes the cache's path. 0, or
 * -1 where no name could be made. */
static inline int temp_cache_open(char *path, int defaults) {
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    close(fd);
    unlink(path); /* the cache creates its file itself */
    setenv("GEMMTUNE_CACHE", path, 1);
    setenv("GEMMTUNE_CACHE_PATH", "", 1);
    setenv("GEMMTUNE_DEFAULTS", defaults ? "1" : "0", 1);
    gt_layers_close();
    gt_layers_open();
    return 0;
}

#endif
