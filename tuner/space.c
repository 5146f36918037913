/*
 * space.c: candidate generation and ranking (space.h).
 *
 * The model is deliberately simple: arithmetic time from waves of blocks on the SMs at
 * an efficiency set by the thread tile (FMAs per shared-memory load) and by occupancy,
 * against memory time from the bytes the tiles re-read; the larger wins. It only has to
 * put the good candidates in the first few dozen; timing decides among them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per-SM fp32 rate (FLOP/us) and memory rates (bytes/us) of a Hopper-class part; only
 * ratios matter for ranking. */
#define SM_FLOP_PER_US (2.0 * 128 * 1.755e3)
#define DRAM_BYTES_PER_US 3.0e6
#define L2_BYTES_PER_US 9.0e6
#define LAUNCH_US 3.0

double gt_space_estimate_us(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim) {
    double M = (double)key->m, N = (double)key->n, K = (double)key->k;
    int t = gt_kcfg_threads(c);
    double gm = ceil(M / c->bm), gn = ceil(N / c->bn), kp = ceil(K / c->bk) * c->bk;
    double blocks = gm * gn;
    int regs = gt_kcfg_regs_estimate(c);
    int by_threads = 2048 / t, by_regs = lim->regs_per_sm / (regs * t);
    int smem = gt_kcfg_smem_bytes(c, key), by_smem = smem ? (228 * 1024) / smem : 32;
    int bps = by_threads;
    if (by_regs < bps) bps = by_regs;
    if (by_smem < bps) bps = by_smem;
    if (bps > 32) bps = 32;
    if (bps < 1) bps = 1;
    int sms = lim->sm_count > 0 ? lim->sm_count : 1;
    double waves = ceil(blocks / ((double)sms * bps));
    double resident = blocks / sms < bps ? ceil(blocks / sms) : bps;
    double ai = (double)c->tm * c->tn / (c->tm + c->tn);
    double eff = ai / (ai + 1.0);
    double warps = resident * t / 32.0;
    if (warps < 8) eff *= warps / 8.0;
    double flop_block = 2.0 * c->bm * c->bn * kp;
    double compute = waves * flop_block * resident / (SM_FLOP_PER_US * eff);
    double dram = 4.0 * (M * K + K * N + M * N * (key->beta0 ? 1 : 2));
    double l2 = 4.0 * (M * K * gn + K * N * gm);
    double memory = fmax(dram / DRAM_BYTES_PER_US, l2 / L2_BYTES_PER_US);
    return fmax(compute, memory) + LAUNCH_US;
}

static int by_estimate(const void *a, const void *b) {
    double x = ((const gt_cand *)a)->est_us, y = ((const gt_cand *)b)->est_us;
    return x < y ? -1 : x > y;
}

int gt_space_build(const gt_key *key, const gt_klimits *lim, int max, int flags, gt_cand **out,
                   gt_space_counts *counts) {
    (void)flags;
    memset(counts, 0, sizeof *counts);
    int total = 1;
    for (int i = 0; i < gt_nkparams; i++) total *= gt_kparams[i].nvalues;
    gt_cand *cands = malloc(sizeof *cands * (size_t)total);
    if (!cands) return -1;
    int n = 0;
    for (int idx = 0; idx < total; idx++) {
        gt_kcfg c;
        int rest = idx;
        for (int i = 0; i < gt_nkparams; i++) {
            gt_kcfg_set(&c, i, gt_kparams[i].values[rest % gt_kparams[i].nvalues]);
            rest /= gt_kparams[i].nvalues;
        }
        counts->generated++;
        if (gt_kcfg_check(&c, key, lim, GT_KC_LEGAL | GT_KC_PRUNE)) {
            counts->pruned++;
            continue;
        }
        cands[n].cfg = c;
        cands[n].est_us = gt_space_estimate_us(&c, key, lim);
        n++;
    }
    qsort(cands, (size_t)n, sizeof *cands, by_estimate);
    if (max > 0 && n > max) {
        counts->ranked_out = n - max;
        n = max;
    }
    counts->kept = n;
    *out = cands;
    return n;
}
