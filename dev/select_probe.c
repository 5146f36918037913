/*
 * select_probe.c: no GPU. For each shape of a shape file, what the selector chooses on an
 * H100 from the built-in defaults' rows: with the node's generic set held (what mode
 * cached runs after `gemmtune prebuild`) and without it (the whole candidate space), and
 * the cost model's estimate of each. Shows where the held set narrows the choice.
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
        gt_kcfg *set = NULL;
        int nset = gt_prebuild_set(&key, &h100, NULL, rows, nrows, 2, &set);
        gt_kcfg all, held;
        gt_select_info ia, ih;
        int ra = gt_select(&key, &h100, 0, NULL, rows, nrows, &all, &ia);
        int rh = gt_select_have(&key, &h100, 0, NULL, rows, nrows, set, nset, &held, &ih);
        char ta[96] = "-", th[96] = "-";
        if (ra == 0) gt_kcfg_format(&all, ta, sizeof ta);
        if (rh == 0) gt_kcfg_format(&held, th, sizeof th);
        printf("%6lld %6lld %6lld %c%c a%-2d rows %4d set %3d | all %-44s est %8.1f | held %-44s est %8.1f %s\n",
               m, n, k, a, b, align, nrows, nset, ta, ra == 0 ? gt_space_estimate_us(&all, &key, &h100) : -1,
               th, rh == 0 ? gt_space_estimate_us(&held, &key, &h100) : -1,
               strcmp(ta, th) == 0 ? "same" : ih.in_have ? "HELD" : "not held");
        free(rows), free(set);
    }
    return 0;
}
