/*
 * select_probe.c: no GPU. For each shape of a shape file, what the selector chooses on an
 * H100 from the built-in defaults' rows: with the node's generic set held (what mode
 * cached runs after `gemmtune prebuild`) and without it (the whole candidate space), the
 * cost model's estimate of each (corrected, tuner/modelfix.h), and how long the held
 * choice took. Shows where the held set narrows the choice.
 *
 * Build (from the repository root, after tools/build.sh):
 *        cc -std=c11 -Ibase -Ituner -Itests -Iinclude -Icache -Iruntime -Isrc \
 *            -I/usr/local/cuda/include dev/select_probe.c build/libgemmtune.a \
 *            -L/usr/local/cuda/lib64 -lnvrtc -lsqlite3 -ldl -lpthread -lm -o /tmp/select_probe
 * Usage: /tmp/select_probe DTYPE < bench/heldout.txt
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "fixtures.h"
#include "layers.h"
#include "measure.h"
#include "prebuild.h"
#include "select.h"
#include "space.h"

static int align_of(long long ld, int es) {
    int a = 16;
    while (a > 1 && (ld * es) % a) a /= 2;
    return a;
}

int main(int argc, char **argv) {
    int dt = argc > 1 ? gt_dtype_parse(argv[1]) : GT_DT_F32;
    if (dt < 0) return 2;
    /* The rows and the correction a process with no cache file has: the built-in defaults
     * (GEMMTUNE_DEFAULTS=0 and GEMMTUNE_CACHE_PATH: other layers). */
    gt_layers_open();
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        long long m, n, k;
        char a, b;
        if (line[0] == '#' || sscanf(line, "%lld %lld %lld %c %c", &m, &n, &k, &a, &b) != 5) continue;
        int es = gt_dtype_in_size(dt), ec = gt_dtype_out_size(dt);
        long long lda = a == 'T' ? k : m, ldb = b == 'T' ? n : k;
        int al = align_of(lda, es), bl = align_of(ldb, es), cl = align_of(m, ec);
        int align = al < bl ? al : bl;
        align = align < cl ? align : cl;
        gt_key key;
        fixture_key(&key, 90, a == 'T', b == 'T', m, n, k, align, 1);
        key.dtype = dt;
        gt_select_row *rows = NULL;
        int nrows = gt_dispatch_class_rows(&key, &rows);
        gt_modelfix fix;
        gt_dispatch_model_fix(&key, &h100, &fix);
        /* The set is the class's: made once per class (the shapes of a file share few). */
        static gt_key cls[64];
        static gt_kcfg *sets[64];
        static int nsets[64], ncls;
        int c = 0;
        while (c < ncls && !(cls[c].align == key.align && cls[c].opa == key.opa && cls[c].opb == key.opb))
            c++;
        if (c == ncls && ncls < 64) {
            cls[c] = key, ncls++;
            nsets[c] = gt_prebuild_set(&key, &h100, &fix, rows, nrows, 2, &sets[c]);
        }
        gt_kcfg *set = sets[c];
        int nset = nsets[c];
        gt_kcfg all, held;
        gt_select_info ia, ih;
        int ra = gt_select(&key, &h100, 0, &fix, rows, nrows, &all, &ia);
        const double t0 = gt_measure_now_s();
        int rh = gt_select_have(&key, &h100, 0, &fix, rows, nrows, set, nset, &held, &ih);
        const double have_ms = (gt_measure_now_s() - t0) * 1e3;
        char ta[96] = "-", th[96] = "-";
        if (ra == 0) gt_kcfg_format(&all, ta, sizeof ta);
        if (rh == 0) gt_kcfg_format(&held, th, sizeof th);
        printf("%6lld %6lld %6lld %c%c a%-2d rows %4d set %3d %6.2f ms | all %-44s est %8.1f | held %-44s est %8.1f %s\n",
               m, n, k, a, b, align, nrows, nset, have_ms, ta, ra == 0 ? gt_space_estimate_fixed_us(&all, &key, &h100, &fix) : -1,
               th, rh == 0 ? gt_space_estimate_fixed_us(&held, &key, &h100, &fix) : -1,
               strcmp(ta, th) == 0 ? "same" : ih.in_have ? "HELD" : "not held");
        free(rows);
    }
    return 0;
}
