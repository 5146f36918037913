/*
 * held_sim.c: what the tuner's stop where the best has held (gt_tune_best_held) and its
 * screening would have done on wide tunings of training shapes (no GPU needed). For each
 * key of a cache text (`gemmtune export`, e.g. the widetrain-DT.txt files of bench/runs:
 * every candidate of a wide search timed), the timed candidates are put in the cost model's
 * order (uncorrected), the first N (default 32, the default budget's count) are "timed" in
 * that order, and the rule is asked after each; where it stops, the best found so far is
 * set against the best of all N. Also counts the candidates screening would have given 3
 * runs (first run taken as the median: an upper bound of what screening keeps).
 *
 * Build (from the repository root, after tools/build.sh):
 *        cc -std=c11 -Ibase -Ituner -Icache -Iruntime -Iinclude -Itests dev/held_sim.c build/libgemmtune.a \
 *            /usr/local/cuda/lib64/libnvrtc.so -lsqlite3 -ldl -lpthread -lm \
 *            -o /tmp/held_sim
 * Usage: [HELD_MARGIN=M] [HELD_ORDER=1] /tmp/held_sim FILE [N]
 *        (M: another margin than the tuner's; HELD_ORDER: the tuner's own list, widened past
 *        one group, in place of the model's first N of the file)
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

static gt_tune_cand cands[MAXC];
static int ncands;

static int by_est(const void *a, const void *b) {
    const gt_tune_cand *p = a, *q = b;
    return p->est_us < q->est_us ? -1 : p->est_us > q->est_us;
}

/* gt_tune_best_held with another margin (HELD_MARGIN), to see what a margin would cost. */
static double margin_env;
static int held(const gt_tune_cand *c, int n) {
    if (margin_env <= 0) return gt_tune_best_held(c, n);
    int timed = 0, left = 0;
    double best = 0, least = 0;
    for (int i = 0; i < n; i++) {
        if (c[i].status != GT_TR_OK) continue;
        timed++;
        if (best == 0 || c[i].time_us < best) best = c[i].time_us;
        double r = c[i].time_us / c[i].est_us;
        if (least == 0 || r < least) least = r;
    }
    if (timed < GT_TUNE_HELD_MIN) return 0;
    for (int i = 0; i < n; i++) {
        if (c[i].status != GT_TR_NOT_TIMED) continue;
        if (c[i].est_us * least * margin_env <= best) return 0;
        left++;
    }
    return left > 0;
}

static int nkeys, nheld, skipped;
static gt_key cur_key;
static double log_loss;
static int screened_total, timed_total;

static void finish(const char *key_text, int list) {
    if (ncands == 0) return;
    int n = 0;
    if (getenv("HELD_ORDER")) {
        /* The tuner's own list (gt_tune_order over the model's first 4 x list, no seeds),
         * each with its time from the file; keys where the file lacks more than an eighth
         * of the list are left out. */
        gt_cand *space = NULL;
        gt_space_counts counts;
        int ns = gt_space_build(&cur_key, &h100, 4 * list, 0, &space, &counts);
        gt_kcfg order[MAXC];
        int no = ns > 0 ? gt_tune_order(space, ns, NULL, 0, list, order) : 0;
        static gt_tune_cand found[MAXC];
        for (int i = 0; i < no; i++)
            for (int j = 0; j < ncands; j++)
                if (gt_kcfg_listed(&cands[j].cfg, 1, &order[i])) {
                    found[n++] = cands[j];
                    break;
                }
        free(space);
        if (n < no - no / 8 || n == 0) {
            skipped++;
            ncands = 0;
            return;
        }
        memcpy(cands, found, sizeof cands[0] * (size_t)n);
    } else {
        qsort(cands, (size_t)ncands, sizeof cands[0], by_est);
        n = ncands < list ? ncands : list;
    }
    double best_all = 0;
    for (int i = 0; i < n; i++)
        if (best_all == 0 || cands[i].time_us < best_all) best_all = cands[i].time_us;
    gt_tune_cand run[MAXC];
    for (int i = 0; i < n; i++) {
        run[i] = cands[i];
        run[i].status = GT_TR_NOT_TIMED;
    }
    double best = 0;
    int stop = n;
    for (int i = 0; i < n; i++) {
        screened_total += gt_tune_screens(cands[i].time_us, best) &&
                          gt_tune_screen_stands(cands[i].time_us, best);
        timed_total++;
        run[i].status = GT_TR_OK;
        if (best == 0 || cands[i].time_us < best) best = cands[i].time_us;
        if (held(run, n)) {
            stop = i + 1;
            break;
        }
    }
    nkeys++;
    if (stop < n) {
        nheld++;
        log_loss += log(best_all / best);
        printf("%-60s held after %2d of %2d: best %.1f us, of all %d %.1f us (%.3f)\n", key_text,
               stop, n, best, n, best_all, best_all / best);
    }
    ncands = 0;
}

/* One key of the file: its timed candidates with the model's estimates, then finish. */
static void each(const char *key_text, const gt_key *key, const gt_kcfg *cfgs,
                 const double *times, int n, void *user) {
    cur_key = *key;
    ncands = 0;
    for (int j = 0; j < n && ncands < MAXC; j++) {
        gt_tune_cand *c = &cands[ncands];
        memset(c, 0, sizeof *c);
        c->cfg = cfgs[j];
        c->time_us = times[j];
        c->est_us = gt_space_estimate_us(&c->cfg, key, &h100);
        if (c->est_us > 0) ncands++;
    }
    finish(key_text, *(const int *)user);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: held_sim FILE [N]\n");
        return 2;
    }
    const int list = argc > 2 ? atoi(argv[2]) : 32;
    margin_env = getenv("HELD_MARGIN") ? atof(getenv("HELD_MARGIN")) : 0;
    if (cachetext_read(argv[1], each, (void *)&list) != 0) return 1;
    if (skipped) printf("%d keys left out: the file lacks the tuner's list\n", skipped);
    printf("%d keys, stopped early on %d; best at the stop against the list's best: geomean "
           "%.4f; screened %d of %d timed\n",
           nkeys, nheld, nheld ? exp(log_loss / nheld) : 1.0, screened_total, timed_total);
    return 0;
}
