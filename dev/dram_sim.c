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

#include "cachetext.h"
#include "fixtures.h"
#include "kcfg.h"
#include "key.h"
#include "space.h"

#define NDT 8 /* data types (key.h) */

static int nkeys[NDT + 1];
static double logs[NDT + 1][2];
static double rate;
static int pick;

/* The best of times (n) among the first p candidates by estimate e. */
static double best_of_first(const double *e, const double *times, int n, int p) {
    static char used[CACHETEXT_MAX];
    memset(used, 0, (size_t)n);
    double best = 0;
    for (int r = 0; r < p && r < n; r++) {
        int at = -1;
        for (int j = 0; j < n; j++)
            if (!used[j] && (at < 0 || e[j] < e[at])) at = j;
        used[at] = 1;
        if (best == 0 || times[at] < best) best = times[at];
    }
    return best;
}

static void finish(const char *key_text, const gt_key *key, const gt_kcfg *cfgs,
                   const double *times, int n, void *user) {
    (void)user;
    if (n < 2) return;
    static double est[2][CACHETEXT_MAX];
    double best = 0;
    for (int j = 0; j < n; j++)
        if (best == 0 || times[j] < best) best = times[j];
    gt_klimits lim[2] = {h100, h100};
    lim[1].dram_rate = rate;
    for (int v = 0; v < 2; v++)
        for (int j = 0; j < n; j++) est[v][j] = gt_space_estimate_us(&cfgs[j], key, &lim[v]);
    double r0 = best / best_of_first(est[0], times, n, pick);
    double r1 = best / best_of_first(est[1], times, n, pick);
    printf("%-60s H100 rate %.3f  scaled %.3f\n", key_text, r0, r1);
    const int d = key->dtype >= 0 && key->dtype < NDT ? key->dtype : NDT;
    for (int at = d;; at = NDT) {
        nkeys[at]++;
        logs[at][0] += log(r0);
        logs[at][1] += log(r1);
        if (at == NDT) break;
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: dram_sim FILE RATE [P]\n");
        return 2;
    }
    rate = atof(argv[2]);
    pick = argc > 3 ? atoi(argv[3]) : 1;
    if (cachetext_read(argv[1], finish, NULL) != 0) return 1;
    for (int d = 0; d <= NDT; d++)
        if (nkeys[d])
            printf("%s: %d keys, best of the model's first %d against the best timed: H100 rate "
                   "%.4f, DRAM x %.3f %.4f\n",
                   d == NDT ? "all" : gt_dtype_name(d), nkeys[d], pick,
                   exp(logs[d][0] / nkeys[d]), rate, exp(logs[d][1] / nkeys[d]));
    return 0;
}
