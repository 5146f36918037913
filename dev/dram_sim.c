/*
 * dram_sim.c: does the cost model rank a device's own timings better with its DRAM rate
 * scaled to the device (gt_klimits.dram_rate)? No GPU needed. For each key of a cache
 * text (`gemmtune export`, e.g. data/defaults/h200.txt: the public suite tuned on that
 * device, every candidate of the list timed), the timed candidates are ordered by the
 * model's estimate with dram_rate 1 (the H100's rates) and with RATE; per order, the
 * best time among the model's first P (its pick at P = 1) is set against the key's best.
 * Printed: per key the two picks' ratios, then geometric means per data type and in all.
 *
 * Build (from the repository root, after tools/build.sh):
 *        cc -std=c11 -Ibase -Ituner -Icache -Iruntime -Iinclude -Itests dev/dram_sim.c build/libgemmtune.a \
 *            /usr/local/cuda/lib64/libnvrtc.so -lsqlite3 -ldl -lpthread -lm -o /tmp/dram_sim
 * Usage: /tmp/dram_sim FILE RATE [P]   e.g. /tmp/dram_sim data/defaults/h200.txt 1.467 4
 *        (RATE: the device's DRAM peak over the H100 SXM's; H200: 4.8 / 3.35 = 1.43 by the
 *        data sheets, 1.467 by its memory clock and bus width)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "kcfg.h"
#include "key.h"
#include "space.h"

#define MAXC 4096
#define NDT 8 /* data types (key.h) */

static gt_kcfg cfgs[MAXC];
static double times[MAXC], est[2][MAXC];
static int ncands, nkeys[NDT + 1];
static double logs[NDT + 1][2];
static gt_key cur_key;
static double rate;
static int pick;

/* The best time among the first p candidates by est e. */
static double best_of_first(const double *e, int p) {
    static char used[MAXC];
    memset(used, 0, (size_t)ncands);
    double best = 0;
    for (int r = 0; r < p && r < ncands; r++) {
        int at = -1;
        for (int j = 0; j < ncands; j++)
            if (!used[j] && (at < 0 || e[j] < e[at])) at = j;
        used[at] = 1;
        if (best == 0 || times[at] < best) best = times[at];
    }
    return best;
}

static void finish(const char *key_text) {
    if (ncands < 2) {
        ncands = 0;
        return;
    }
    double best = 0;
    for (int j = 0; j < ncands; j++)
        if (best == 0 || times[j] < best) best = times[j];
    gt_klimits lim[2] = {h100, h100};
    lim[1].dram_rate = rate;
    for (int v = 0; v < 2; v++)
        for (int j = 0; j < ncands; j++) est[v][j] = gt_space_estimate_us(&cfgs[j], &cur_key, &lim[v]);
    double r0 = best / best_of_first(est[0], pick), r1 = best / best_of_first(est[1], pick);
    printf("%-60s H100 rates %.3f  scaled %.3f\n", key_text, r0, r1);
    int d = cur_key.dtype >= 0 && cur_key.dtype < NDT ? cur_key.dtype : NDT;
    for (int t = 0; t < 2; t++) {
        int at = t ? NDT : d;
        if (t && d == NDT) break;
        nkeys[at]++;
        logs[at][0] += log(r0);
        logs[at][1] += log(r1);
    }
    ncands = 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: dram_sim FILE RATE [P]\n");
        return 2;
    }
    rate = atof(argv[2]);
    pick = argc > 3 ? atoi(argv[3]) : 1;
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    char line[4096], key_text[512] = "";
    int have_key = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *fld[8] = {0};
        int nf = 0;
        for (char *p = line; p && nf < 8;) {
            fld[nf++] = p;
            p = strchr(p, '\t');
            if (p) *p++ = 0;
        }
        if (strcmp(fld[0], "W") == 0 && nf > 1) {
            finish(key_text);
            char why[200];
            have_key = gt_key_parse(fld[1], &cur_key, why, sizeof why) == 0;
            snprintf(key_text, sizeof key_text, "%s", fld[1]);
        } else if (strcmp(fld[0], "T") == 0 && nf > 3 && have_key && ncands < MAXC &&
                   strcmp(fld[2], "ok") == 0) {
            char why[200];
            if (gt_kcfg_parse(fld[1], &cfgs[ncands], why, sizeof why) != 0) continue;
            times[ncands] = atof(fld[3]);
            if (times[ncands] > 0) ncands++;
        }
    }
    finish(key_text);
    fclose(f);
    for (int d = 0; d <= NDT; d++)
        if (nkeys[d])
            printf("%s: %d keys, best of the model's first %d against the best timed: H100 rates "
                   "%.4f, DRAM x %.3f %.4f\n",
                   d == NDT ? "all" : gt_dtype_name(d), nkeys[d], pick,
                   exp(logs[d][0] / nkeys[d]), rate, exp(logs[d][1] / nkeys[d]));
    return 0;
}
