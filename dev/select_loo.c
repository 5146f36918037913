/*
 * select_loo.c: no GPU. Leave-one-out check of the selector on cache texts (the built-in
 * defaults' files): each tuned key is hidden in turn, the selector chooses for it from the
 * rest of its class (every other key's winner and timings), and the choice's own measured
 * time on the hidden key (its T line) is set against that key's best. Prints per key the
 * ratio best / chosen ("-" where the hidden key never timed the choice) and, per data
 * type, the geometric mean over the keys where it did.
 *
 * Build (from the repository root, after tools/build.sh):
 *        cc -std=c11 -D_DEFAULT_SOURCE -O2 -Ibase -Ituner -Itests -Iinclude -Icache -Iruntime \
 *            -Isrc -I/usr/local/cuda/include dev/select_loo.c build/libgemmtune.a \
 *            -L/usr/local/cuda/lib64 -lnvrtc -lsqlite3 -ldl -lpthread -lm -o /tmp/select_loo
 *        Other weights of the selector: add tuner/select.c before the library and
 *        -DGT_SELECT_W0=3.0 (or GT_SELECT_DOUBT, GT_SELECT_SIGMA; select.h).
 * Usage: /tmp/select_loo FILE.txt... [DTYPE]; with LOO_MODEL set, the cost model's pick
 * among each key's timed candidates (its fastest estimate) instead of the selector's; with
 * LOO_FIX, the model corrected (tuner/modelfix.h) by a fit to every other key of the data
 * type and alignment class, in either. LOO_ORDER=T: the tuner's order instead (below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "kcfg.h"
#include "modelfix.h"
#include "select.h"
#include "space.h"
#include "tune.h"

#define MAXKEYS 2048
#define MAXT 600

typedef struct {
    gt_key key;
    char klass[128];
    int nt;
    char cfg[MAXT][GT_SELECT_CONFIG_MAX];
    int ok[MAXT];
    double us[MAXT];
    char winner[GT_SELECT_CONFIG_MAX];
    double win_us;
    int file; /* which file on the command line it came from, 0 first */
    char id[256]; /* the W line's key text */
} tkey;

static tkey *keys;
/* The device's limits: the H100's, with LOO_DRAM_RATE as the model's DRAM rate (1.44 for
 * an H200, gt_space_dram_rate) where set. */
static gt_klimits lim;
static int nkeys, nfiles;

/* Drops a generic twin's suffix: the selector's choices are named without it. */
static void plain(const char *in, char *out, size_t size) {
    gt_kcfg c;
    char why[128];
    if (gt_kcfg_parse(in, &c, why, sizeof why) == 0) {
        c.generic = 0;
        gt_kcfg_format(&c, out, size);
    } else {
        snprintf(out, size, "%s", in);
    }
}

static void load(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return;
    }
    char line[1024];
    tkey *cur = NULL;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *fld[16];
        int nf = 0;
        for (char *p = line, *t; nf < 16 && (t = strsep(&p, "\t"));) fld[nf++] = t;
        if (nf >= 6 && strcmp(fld[0], "W") == 0 && nkeys < MAXKEYS) {
            /* LOO_WIDE: a key of a later file met again in another later file (wide
             * tunings of one list by two rankings) gathers both files' timings. */
            cur = NULL;
            if (nfiles > 0 && getenv("LOO_WIDE"))
                for (int j = 0; j < nkeys && !cur; j++)
                    if (keys[j].file > 0 && strcmp(keys[j].id, fld[1]) == 0) cur = &keys[j];
            if (cur) {
                char w[GT_SELECT_CONFIG_MAX];
                plain(fld[4], w, sizeof w);
                if (atof(fld[5]) < cur->win_us) snprintf(cur->winner, sizeof cur->winner, "%s", w), cur->win_us = atof(fld[5]);
                continue;
            }
            cur = &keys[nkeys];
            memset(cur, 0, sizeof *cur);
            if (gt_key_parse(fld[1], &cur->key, NULL, 0) != 0) {
                cur = NULL;
                continue;
            }
            gt_key_class(&cur->key, cur->klass, sizeof cur->klass);
            plain(fld[4], cur->winner, sizeof cur->winner);
            cur->win_us = atof(fld[5]);
            cur->file = nfiles;
            snprintf(cur->id, sizeof cur->id, "%s", fld[1]);
            nkeys++;
        } else if (nf >= 4 && strcmp(fld[0], "T") == 0 && cur && cur->nt < MAXT) {
            if (strcmp(fld[2], "not_timed") == 0) continue;
            plain(fld[1], cur->cfg[cur->nt], GT_SELECT_CONFIG_MAX);
            cur->ok[cur->nt] = strcmp(fld[2], "ok") == 0;
            cur->us[cur->nt] = atof(fld[3]);
            cur->nt++;
        }
    }
    fclose(f);
    nfiles++;
}

static void add(gt_select_row *r, const tkey *k, const char *cfg, int ok, double us) {
    memset(r, 0, sizeof *r);
    r->m = k->key.m, r->n = k->key.n, r->k = k->key.k, r->beta0 = k->key.beta0;
    snprintf(r->config, sizeof r->config, "%s", cfg);
    r->ok = ok, r->time_us = us;
}

/* The correction as src/dispatch.c fits it, for key hk: every ok timing of the other keys
 * of its data type and alignment class (not key `skip`; files: 0 every file's keys, 1 not
 * the first file's, 2 only the first file's). */
static void fit_others(const tkey *hk, int skip, int files, gt_modelfix *fix) {
    memset(fix, 0, sizeof *fix);
    gt_fix_row *fr = malloc(sizeof *fr * 100000);
    if (!fr) return;
    int nf = 0;
    for (int j = 0; j < nkeys; j++) {
        if (j == skip || (files == 1 && keys[j].file == 0) || (files == 2 && keys[j].file != 0) ||
            keys[j].key.dtype != hk->key.dtype ||
            keys[j].key.align != hk->key.align)
            continue;
        for (int t = 0; t < keys[j].nt && nf < 100000; t++) {
            if (!keys[j].ok[t] || gt_kcfg_parse(keys[j].cfg[t], &fr[nf].cfg, NULL, 0) != 0) continue;
            fr[nf].key = keys[j].key;
            fr[nf].time_us = keys[j].us[t];
            fr[nf].est_us = gt_space_estimate_us(&fr[nf].cfg, &keys[j].key, &lim);
            nf++;
        }
    }
    gt_modelfix_fit(fr, nf, fix);
    free(fr);
}

int main(int argc, char **argv) {
    keys = calloc(MAXKEYS, sizeof *keys);
    lim = h100;
    if (getenv("LOO_DRAM_RATE")) lim.dram_rate = atof(getenv("LOO_DRAM_RATE"));
    int want = -1;
    for (int i = 1; i < argc; i++) {
        if (gt_dtype_parse(argv[i]) >= 0 && !strchr(argv[i], '/')) want = gt_dtype_parse(argv[i]);
        else load(argv[i]);
    }
    /* LOO_MODEL: the cost model's pick among each key's timed candidates instead. */
    int model_only = getenv("LOO_MODEL") != NULL;
    /* LOO_DUMP: every ok timing as a line (dtype, class, m, n, k, the parameters, the time,
     * the model's estimate) for fitting outside, and nothing else. */
    if (getenv("LOO_DUMP")) {
        printf("dtype klass m n k");
        for (int p = 0; p < gt_nkparams; p++) printf(" %s", gt_kparams[p].name);
        printf(" us est cfg\n");
        for (int h = 0; h < nkeys; h++) {
            tkey *hk = &keys[h];
            if (want >= 0 && hk->key.dtype != want) continue;
            for (int t = 0; t < hk->nt; t++) {
                gt_kcfg tc;
                if (!hk->ok[t] || gt_kcfg_parse(hk->cfg[t], &tc, NULL, 0) != 0) continue;
                printf("%s %s %lld %lld %lld", gt_dtype_name(hk->key.dtype), hk->klass, (long long)hk->key.m,
                       (long long)hk->key.n, (long long)hk->key.k);
                for (int p = 0; p < gt_nkparams; p++) printf(" %d", gt_kcfg_get(&tc, p));
                printf(" %.3f %.3f %s\n", hk->us[t], gt_space_estimate_us(&tc, &hk->key, &lim), hk->cfg[t]);
            }
        }
        return 0;
    }
    /* LOO_ORDER=T: the tuner's candidate order instead of the selector (tuner/tune.c's
     * gt_tune_order over the model's first 4 x 32, corrected as src/dispatch.c fits, seeded
     * as the history seeds with LOO_SEEDS=S, at most S of them): for each key of the first file (its timings a
     * deep search, dev/gpu_dev.sh space), the best time among the first T candidates of the
     * order that it timed, against its best of all. The fit and the seeds come from the
     * other files' keys of its data type and alignment class (and, for the seeds, ops). */
    if (getenv("LOO_ORDER")) {
        const int T = atoi(getenv("LOO_ORDER")) > 0 ? atoi(getenv("LOO_ORDER")) : 20;
        double ls = 0;
        int nk = 0;
        gt_select_row *hr = malloc(sizeof *hr * 100000);
        for (int h = 0; h < nkeys; h++) {
            tkey *hk = &keys[h];
            if (hk->file != 0 || (want >= 0 && hk->key.dtype != want)) continue;
            int n = 0;
            for (int j = 0; j < nkeys; j++) {
                if (keys[j].file == 0 || strcmp(keys[j].klass, hk->klass) != 0) continue;
                for (int t = 0; t < keys[j].nt && n < 99999; t++) add(&hr[n++], &keys[j], keys[j].cfg[t], keys[j].ok[t], keys[j].us[t]);
            }
            gt_modelfix fix;
            memset(&fix, 0, sizeof fix);
            if (getenv("LOO_FIX")) fit_others(hk, -1, 1, &fix);
            gt_kcfg seeds[GT_TUNE_SEEDS];
            /* LOO_SEEDS=S: at most S seeds (the tuner takes GT_TUNE_SEEDS). */
            int want_seeds = getenv("LOO_SEEDS") ? atoi(getenv("LOO_SEEDS")) : 0;
            if (want_seeds > GT_TUNE_SEEDS) want_seeds = GT_TUNE_SEEDS;
            int nseeds = want_seeds > 0 ? gt_select_rank(&hk->key, &lim, 0, &fix, hr, n, seeds, want_seeds) : 0;
            gt_cand *space = NULL;
            gt_space_counts counts;
            int ns = gt_space_build_fixed(&hk->key, &lim, 4 * 32, 0, &fix, &space, &counts);
            gt_kcfg order[32];
            int no = ns > 0 ? gt_tune_order(space, ns, seeds, nseeds, 32, order) : 0;
            free(space);
            double best = 0, got = 0;
            int found = 0;
            for (int t = 0; t < hk->nt; t++)
                if (hk->ok[t] && (best == 0 || hk->us[t] < best)) best = hk->us[t];
            for (int o = 0; o < no && o < T; o++) {
                char text[GT_SELECT_CONFIG_MAX];
                gt_kcfg_format(&order[o], text, sizeof text);
                for (int t = 0; t < hk->nt; t++)
                    if (hk->ok[t] && strcmp(hk->cfg[t], text) == 0) {
                        found++;
                        if (got == 0 || hk->us[t] < got) got = hk->us[t];
                        break;
                    }
            }
            char shape[64];
            gt_key_shape(&hk->key, shape, sizeof shape);
            printf("%-5s %-22s a%-2d fit %5d seeds %d  first %d: %2d timed  best %8.1f  got %8.1f  %.3f\n",
                   gt_dtype_name(hk->key.dtype), shape, hk->key.align, fix.rows, nseeds, T, found, best, got,
                   got > 0 ? best / got : 0);
            if (got > 0) ls += log(best / got), nk++;
        }
        printf("# order: %d keys, geomean best / best of the first %d: %.3f\n", nk, T, nk ? exp(ls / nk) : 0);
        free(hr);
        return 0;
    }
    /* LOO_WIDE: the keys of the first file are the cache (the built-in defaults' file), and
     * each key of the other files (every candidate of a wide search timed, on shapes of a
     * training list: dev/gpu_dev.sh widetrain) is a new shape the selector chooses for from
     * the first file alone, as a process with no cache file does; the choice's time there
     * against the best there. A wide search times the model's first 96 or more (a default
     * tuning 32), so most of the selector's choices are timed there; one that is not is not
     * counted, so a change of the model is judged only on tunings that its own ranking
     * also made (dev/judge_patch.sh's JP_WIDE). */
    /* LOO_WIDE=all: the same keys judged, each chosen from the first file and the other
     * files' other keys as well: what the wide tunings would give if they were shipped
     * beside the defaults. */
    const int wide = getenv("LOO_WIDE") != NULL;
    const int wide_all = wide && strcmp(getenv("LOO_WIDE"), "all") == 0;
    gt_select_row *rows = malloc(sizeof *rows * 100000);
    double lsum[16] = {0};
    int nfound[16] = {0}, ntotal[16] = {0};
    for (int h = 0; h < nkeys; h++) {
        tkey *hk = &keys[h];
        if (want >= 0 && hk->key.dtype != want) continue;
        if (wide && hk->file == 0) continue;
        int n = 0;
        for (int j = 0; j < nkeys; j++) {
            if (j == h || (wide && !wide_all && keys[j].file != 0) || strcmp(keys[j].klass, hk->klass) != 0 ||
                strcmp(keys[j].key.device, hk->key.device) != 0)
                continue;
            add(&rows[n++], &keys[j], keys[j].winner, 1, keys[j].win_us);
            for (int t = 0; t < keys[j].nt; t++) add(&rows[n++], &keys[j], keys[j].cfg[t], keys[j].ok[t], keys[j].us[t]);
        }
        gt_kcfg c;
        gt_select_info info;
        memset(&info, 0, sizeof info);
        char text[GT_SELECT_CONFIG_MAX] = "-", shape[64];
        int r = -1;
        gt_modelfix fix;
        memset(&fix, 0, sizeof fix);
        if (getenv("LOO_FIX")) fit_others(hk, h, wide && !wide_all ? 2 : 0, &fix);
        if (model_only) {
            double be = 0;
            for (int t = 0; t < hk->nt; t++) {
                gt_kcfg tc;
                if (!hk->ok[t] || gt_kcfg_parse(hk->cfg[t], &tc, NULL, 0) != 0) continue;
                double e = gt_space_estimate_fixed_us(&tc, &hk->key, &lim, &fix);
                /* Ties by text, as the selector breaks them (the T lines are fastest first). */
                if (e > 0 && (be == 0 || e < be || (e == be && strcmp(hk->cfg[t], text) < 0)))
                    be = e, snprintf(text, sizeof text, "%s", hk->cfg[t]), r = 0;
            }
            info.from_model = 1;
        } else {
            r = gt_select(&hk->key, &lim, 0, &fix, rows, n, &c, &info);
            if (r == 0) gt_kcfg_format(&c, text, sizeof text);
        }
        double best = 0, got = 0, near = 0;
        gt_kcfg chosen_cfg;
        const int chosen_parsed = gt_kcfg_parse(text, &chosen_cfg, NULL, 0) == 0;
        for (int t = 0; t < hk->nt; t++) {
            if (!hk->ok[t]) continue;
            if (best == 0 || hk->us[t] < best) best = hk->us[t];
            if (strcmp(hk->cfg[t], text) == 0 && (got == 0 || hk->us[t] < got)) got = hk->us[t];
            /* LOO_RASTER: the choice's other rasterizations stand for it where it was not
             * timed itself (a wide tuning times one or two groups of a tile). */
            gt_kcfg tc;
            if (chosen_parsed && gt_kcfg_parse(hk->cfg[t], &tc, NULL, 0) == 0) {
                tc.raster = chosen_cfg.raster;
                if (memcmp(&tc, &chosen_cfg, sizeof tc) == 0 && (near == 0 || hk->us[t] < near)) near = hk->us[t];
            }
        }
        if (got == 0 && getenv("LOO_RASTER")) got = near;
        gt_key_shape(&hk->key, shape, sizeof shape);
        int dt = hk->key.dtype;
        ntotal[dt]++;
        if (got > 0) {
            nfound[dt]++;
            lsum[dt] += log(best / got);
            printf("%-5s %-20s a%-2d rows %5d  %-44s %s  %.3f\n", gt_dtype_name(dt), shape, hk->key.align, n,
                   text, info.from_model ? "model" : "meas ", best / got);
        } else {
            printf("%-5s %-20s a%-2d rows %5d  %-44s %s  -\n", gt_dtype_name(dt), shape, hk->key.align, n, text,
                   info.from_model ? "model" : "meas ");
        }
    }
    for (int d = 0; d < 16; d++)
        if (ntotal[d])
            printf("# %s: %d keys, choice timed on %d: geomean best/chosen %.3f\n", gt_dtype_name(d), ntotal[d],
                   nfound[d], nfound[d] ? exp(lsum[d] / nfound[d]) : 0);
    return 0;
}
