/*
 * prebuild_set.c: no GPU. Prints the set `gemmtune prebuild` would build for one class on
 * an H100 (src/prebuild.h), from the built-in defaults' rows, one program a line in the
 * form dev/sass.c and dev/ptxas_report.py read: "DTYPE 1024x1024x1024:AB ALIGN BETA0
 * CONFIG_g1" (the key's sizes only place it: a generic program has none).
 *
 * Build (from the repository root, after tools/build.sh):
 *        cc -std=c11 -Ibase -Ituner -Itests -Iinclude -Icache -Iruntime -Isrc \
 *            -I/usr/local/cuda/include dev/prebuild_set.c build/libgemmtune.a \
 *            -L/usr/local/cuda/lib64 -lnvrtc -lsqlite3 -ldl -lpthread -lm -o /tmp/prebuild_set
 * Usage: /tmp/prebuild_set DTYPE AB ALIGN [FAMILY]   e.g. /tmp/prebuild_set f64 NN 16 1
 *        (FAMILY: only that family's configurations, 0 SIMT .. 3 WGMMA)
 */
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "fixtures.h"
#include "prebuild.h"

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: prebuild_set DTYPE AB ALIGN [FAMILY]\n");
        return 2;
    }
    gt_key cls;
    fixture_key(&cls, 90, argv[2][0] == 'T', argv[2][1] == 'T', 1024, 1024, 1024, atoi(argv[3]), 1);
    cls.dtype = gt_dtype_parse(argv[1]);
    if (cls.dtype < 0) return 2;
    int fam = argc > 4 ? atoi(argv[4]) : -1;
    gt_select_row *rows = NULL;
    int nrows = gt_dispatch_class_rows(&cls, &rows);
    gt_kcfg *set = NULL;
    int n = gt_prebuild_set(&cls, &h100, NULL, rows, nrows, 2, &set);
    for (int i = 0; i < n; i++) {
        if (fam >= 0 && set[i].fam != fam) continue;
        char text[96];
        gt_kcfg_format(&set[i], text, sizeof text);
        printf("%s 1024x1024x1024:%s %s 1 %s_g1\n", argv[1], argv[2], argv[3], text);
    }
    fprintf(stderr, "%d measured rows, %d configurations\n", nrows, n);
    free(rows), free(set);
    return 0;
}
