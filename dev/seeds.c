/*
 * seeds.c: no GPU. Which seeds does the tuner's history give each shape of a shape file
 * (gt_select_rank over the class's rows in the cache layers: the user cache on
 * GEMMTUNE_CACHE, GEMMTUNE_CACHE_PATH's files and the built-in defaults), f32 on an H100?
 * Shows whether the GT_TUNE_SEEDS places go to one group (one block tile and split) or to
 * several.
 *
 * Build (from the repository root, after tools/build.sh):
 *        cc -std=c11 -D_DEFAULT_SOURCE -Ibase -Ituner -Itests -Iinclude -Icache -Iruntime \
 *            -Isrc -I/usr/local/cuda/include dev/seeds.c build/libgemmtune.a \
 *            -L/usr/local/cuda/lib64 -lnvrtc -lsqlite3 -ldl -lpthread -lm -o /tmp/seeds
 * Usage: GEMMTUNE_CACHE=/tmp/seeds.db /tmp/seeds < bench/heldout_tq.txt
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dispatch.h"
#include "fixtures.h"
#include "layers.h"
#include "select.h"
#include "tune.h"
static int align_of(long long ld, int es) { int a = 16; while (a > 1 && (ld * es) % a) a /= 2; return a; }
int main(void) {
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        long long m, n, k; char a, b;
        if (line[0] == '#' || sscanf(line, "%lld %lld %lld %c %c", &m, &n, &k, &a, &b) != 5) continue;
        gt_key key;
        int opa = a == 'T', opb = b == 'T';
        long long lda = opa ? k : m, ldb = opb ? n : k;
        int al = align_of(lda, 4); int al2 = align_of(ldb, 4); if (al2 < al) al = al2; int al3 = align_of(m, 4); if (al3 < al) al = al3;
        fixture_key(&key, 90, opa, opb, m, n, k, al, 1);
        gt_select_row *rows = NULL; gt_modelfix fix;
        int nr = gt_dispatch_class_data(&key, &h100, &rows, &fix);
        gt_kcfg seeds[GT_TUNE_SEEDS];
        int ns = nr > 0 ? gt_select_rank(&key, &h100, 0, &fix, rows, nr, seeds, GT_TUNE_SEEDS) : 0;
        printf("%lldx%lldx%lld:%c%c a%d rows %d seeds:", m, n, k, a, b, al, nr);
        for (int i = 0; i < ns; i++) { char t[96]; gt_kcfg_format(&seeds[i], t, sizeof t); printf(" %s", t); }
        printf("\n");
        free(rows);
    }
    return 0;
}
