/*
 * wave_sim.c: which list order gives the best first compile wave (no GPU needed). The
 * default budget compiles about one wave (one candidate per CPU, 15 to 23 on the H100
 * machine) before it is spent, so the first W of the tuner's list are what it times. For
 * each key of a cache text of wide tunings (`gemmtune export`, e.g.
 * bench/runs/2026-11-27-h100-widetrain-DT.txt, the training list: never the held-out
 * one), the tuner's list is built from the model's first 4 x 32 (gt_tune_order, no
 * seeds: the tuner's current order, since GT_TUNE_LEAD_SAME with at most 3 of a SIMT group
 * in its first half), and, in place of it, the model's order with at most CAP (1 to 4)
 * members of one group (gt_kcfg_same_group) taken first, the rest after (no explore
 * quarter), and the tuner's list with its explore quarter interleaved into its first half;
 * each list's first W get their times from the file, and the best of them is set against
 * the best the file holds for the key. Keys where the file lacks more than an eighth of
 * any list's first W are left out. (bench/README.md's figures for "the list before" were
 * this tool's first column before GT_TUNE_LEAD_SAME.)
 *
 * Build (from the repository root, after tools/build.sh):
 *        cc -std=c11 -Ibase -Ituner -Icache -Iruntime -Iinclude -Itests dev/wave_sim.c build/libgemmtune.a \
 *            /usr/local/cuda/lib64/libnvrtc.so -lsqlite3 -ldl -lpthread -lm -o /tmp/wave_sim
 * Usage: /tmp/wave_sim FILE [W]   (default 16)
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
#include "tune.h"

#define MAXC 4096

static int nkeys, skipped;

/* The list with at most cap members of a group in the model-ordered lead (cap 0: the
 * tuner's gt_tune_order). */
static int order_capped(const gt_cand *space, int n, int max, int cap, gt_kcfg *out) {
    if (cap == 0) return gt_tune_order(space, n, NULL, 0, max, out);
    if (cap < 0) {
        /* The tuner's list with its explore quarter interleaved into the lead half: two
         * of the lead, then one group not yet listed. */
        static gt_kcfg t[MAXC];
        int k = gt_tune_order(space, n, NULL, 0, max, t), lead = max - max / 2, explore = max / 4;
        if (k < lead + explore) return k == 0 ? 0 : (memcpy(out, t, sizeof *t * (size_t)k), k);
        int o = 0, l = 0, e = lead;
        while (l < lead || e < lead + explore) {
            for (int r = 0; r < 2 && l < lead; r++) out[o++] = t[l++];
            if (e < lead + explore) out[o++] = t[e++];
        }
        for (int i = lead + explore; i < k; i++) out[o++] = t[i];
        return k;
    }
    static char used[MAXC * 4];
    memset(used, 0, sizeof used);
    int k = 0;
    for (int i = 0; i < n && k < max; i++) {
        int same = 0;
        for (int q = 0; q < k; q++) same += gt_kcfg_same_group(&out[q], &space[i].cfg);
        if (same < cap) out[k++] = space[i].cfg, used[i] = 1;
    }
    for (int i = 0; i < n && k < max; i++)
        if (!used[i]) out[k++] = space[i].cfg;
    return k;
}

/* The best time, of cfgs/times (n), among order's first w; *found: how many of them the
 * file holds. */
static double first_best(const gt_kcfg *order, int no, int w, const gt_kcfg *cfgs,
                         const double *times, int n, int *found) {
    double best = 0;
    *found = 0;
    for (int i = 0; i < no && i < w; i++)
        for (int j = 0; j < n; j++)
            if (gt_kcfg_listed(&cfgs[j], 1, &order[i])) {
                (*found)++;
                if (best == 0 || times[j] < best) best = times[j];
                break;
            }
    return best;
}

/* The orders compared: the tuner's (0), capped at 1 to 4 a group, interleaved (-1). */
static const int caps[] = {0, 1, 2, 3, 4, -1};
#define NCAPS (int)(sizeof caps / sizeof caps[0])
static double log_caps[NCAPS];

static void finish(const char *key_text, const gt_key *key, const gt_kcfg *cfgs,
                   const double *times, int n, void *user) {
    const int w = *(const int *)user;
    if (n == 0) return;
    double best_all = 0;
    for (int j = 0; j < n; j++)
        if (best_all == 0 || times[j] < best_all) best_all = times[j];
    gt_cand *space = NULL;
    gt_space_counts counts;
    int ns = gt_space_build(key, &h100, 4 * 32, 0, &space, &counts);
    static gt_kcfg o[MAXC];
    double best[NCAPS];
    int ok = ns > 0;
    for (int c = 0; c < NCAPS && ok; c++) {
        int no = order_capped(space, ns, 32, caps[c], o), found;
        best[c] = first_best(o, no, w, cfgs, times, n, &found);
        int want = w < no ? w : no;
        ok = found >= want - want / 8 && best[c] > 0;
    }
    free(space);
    if (!ok) {
        skipped++;
        return;
    }
    nkeys++;
    printf("%-60s", key_text);
    for (int c = 0; c < NCAPS; c++) {
        log_caps[c] += log(best_all / best[c]);
        printf(" %.3f", best_all / best[c]);
    }
    printf("\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: wave_sim FILE [W]\n");
        return 2;
    }
    int w = argc > 2 ? atoi(argv[2]) : 16;
    if (cachetext_read(argv[1], finish, &w) != 0) return 1;
    printf("%d keys (%d left out), best of the first %d against the file's best, geomean:", nkeys,
           skipped, w);
    for (int c = 0; c < NCAPS; c++)
        printf(" %s%d %.4f", caps[c] > 0 ? "cap " : caps[c] ? "interleaved" : "list",
               caps[c] > 0 ? caps[c] : 0, exp(log_caps[c] / (nkeys ? nkeys : 1)));
    printf("\n");
    return 0;
}
