/*
 * first_call_host.c: no GPU. What the host steps of a first call in mode cached cost with
 * a prebuilt class held: the class's held list read from the binary cache
 * (gt_kern_generic_have), the selector's rows and the model's correction from one walk of
 * the layers' timings (gt_dispatch_class_data, nothing kept before it), the correction
 * again (kept: a copy), and the choice among the held set (gt_select_have). It stores
 * f32 NN a16's prebuild set (dev/select_probe.c's class, the built-in defaults' rows) as
 * generic programs with stand-in binaries into the cache on GEMMTUNE_CACHE, then times
 * each step three times, the kept rows and fits dropped before each. Set beside the same
 * program built on another tree (a denser grid, a faster list) to see which step grows.
 *
 * Build (from the repository root, after tools/build.sh):
 *        cc -std=c11 -Ibase -Ituner -Itests -Iinclude -Icache -Iruntime -Isrc \
 *            -I/usr/local/cuda/include dev/first_call_host.c build/libgemmtune.a \
 *            -L/usr/local/cuda/lib64 -lnvrtc -lsqlite3 -ldl -lpthread -lm -o /tmp/first_call_host
 * Usage: rm -f /tmp/fch.db*; GEMMTUNE_CACHE=/tmp/fch.db /tmp/first_call_host
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "fixtures.h"
#include "kern.h"
#include "layers.h"
#include "load.h"
#include "measure.h"
#include "prebuild.h"
#include "select.h"

#define HAVE_MAX 1024

int main(void) {
    gt_key key;
    fixture_key(&key, 90, 0, 0, 1568, 256, 2304, 16, 1);
    gt_layers_open();
    gt_select_row *rows = NULL;
    const int nrows = gt_dispatch_class_rows(&key, &rows);
    gt_kcfg *set = NULL;
    const int nset = gt_prebuild_set(&key, &h100, NULL, rows, nrows, 2, &set);
    if (nset <= 0) return fprintf(stderr, "no set\n"), 1;
    /* A stand-in binary of a typical cubin's size: only the list and the rows are timed. */
    static char image[120000];
    memset(image, 7, sizeof image);
    for (int i = 0; i < nset; i++) {
        gt_kcfg c = set[i];
        c.generic = 1;
        gt_program p;
        gt_kern_program(&c, &key, &p);
        gt_load_store(&p, 90, image, sizeof image);
    }
    gt_kcfg *have = malloc(sizeof *have * HAVE_MAX);
    if (!have) return 1;
    for (int r = 0; r < 3; r++) {
        /* As in a new process: nothing kept, the layers open. */
        gt_dispatch_release();
        gt_layers_open();
        const double t0 = gt_measure_now_s();
        gt_select_row *rr = NULL;
        gt_modelfix fix;
        const int nr = gt_dispatch_class_data(&key, &h100, &rr, &fix);
        const double t1 = gt_measure_now_s();
        gt_modelfix fix2;
        gt_dispatch_model_fix(&key, &h100, &fix2);
        const double t2 = gt_measure_now_s();
        const int nhave = gt_kern_generic_have(&key, 90, have, HAVE_MAX);
        const double t3 = gt_measure_now_s();
        gt_kcfg cfg;
        const int found = gt_select_have(&key, &h100, 0, &fix, rr, nr, have, nhave, &cfg, NULL) == 0;
        const double t4 = gt_measure_now_s();
        printf("held %d, rows %d: rows and correction %.2f ms, the correction again %.2f ms, held list %.2f ms, choice %.2f ms%s\n",
               nhave, nr, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t4 - t3) * 1e3,
               found ? "" : " (none found)");
        free(rr);
    }
    free(rows), free(set), free(have);
    return 0;
}
