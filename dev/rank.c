/*
 * rank.c: prints the cost model's ranking of one shape on an H100 (no GPU needed), to
 * compare with what the tuner measured (`gemmtune show`).
 *
 * Build (from the repository root, after tools/build.sh):
 *        cc -std=c11 -Ibase -Ituner -Itests dev/rank.c build/libgemmtune.a \
 *            -lsqlite3 -ldl -lpthread -lm -o /tmp/rank
 * Usage: /tmp/rank DTYPE MxNxK[:AB] [ALIGN [N]]   e.g. /tmp/rank f64 65536x64x64 16 40
 *        (ALIGN: the alignment class in bytes, default 16; N: lines printed, default 30;
 *        CONFIG... after N: also print where those configurations rank; RANK_DRAM_RATE=R:
 *        the model with another device's DRAM rate, gt_klimits.dram_rate, e.g. 1.467 H200)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "kcfg.h"
#include "space.h"

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: rank DTYPE MxNxK[:AB] [ALIGN [N [CONFIG...]]]\n");
        return 2;
    }
    gt_key key;
    long long m, n, k;
    char a = 'N', b = 'N';
    if (sscanf(argv[2], "%lldx%lldx%lld:%c%c", &m, &n, &k, &a, &b) < 3) return 2;
    fixture_key(&key, 90, a == 'T', b == 'T', m, n, k, argc > 3 ? atoi(argv[3]) : 16, 1);
    key.dtype = gt_dtype_parse(argv[1]);
    if (key.dtype < 0) return 2;
    int show = argc > 4 ? atoi(argv[4]) : 30;
    gt_cand *c = NULL;
    gt_space_counts counts;
    const char *mx = getenv("RANK_MAX");
    gt_klimits lim = h100;
    if (getenv("RANK_DRAM_RATE")) lim.dram_rate = atof(getenv("RANK_DRAM_RATE"));
    int total = gt_space_build(&key, &lim, mx ? atoi(mx) : 0, 0, &c, &counts);
    printf("%d legal candidates\n", total);
    for (int i = 0; i < total; i++) {
        char text[96];
        gt_kcfg_format(&c[i].cfg, text, sizeof text);
        int wanted = i < show;
        for (int j = 5; j < argc; j++) wanted |= strcmp(argv[j], text) == 0;
        if (wanted) printf("%5d %-42s %10.2f us\n", i, text, c[i].est_us);
    }
    free(c);
    return 0;
}
