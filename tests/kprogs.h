/*
 * kprogs.h: kernel programs of GPU tests that check configurations outside tuning
 * (test_generic, test_gemv): the cost model's best of a family for a key, a batch of
 * programs compiled on threads (gt_pool_run; NVRTC is thread-safe) so that a case takes
 * seconds, not a minute, one program run on a problem, and an exact kernel checked
 * against the reference beside its generic twin.
 */
#ifndef GT_TEST_KPROGS_H
#define GT_TEST_KPROGS_H

#include <stdio.h>
#include <stdlib.h>

#include "pool.h"
#include "prob.h"
#include "space.h"
#include "tap.h"

/* The cost model's best candidate of family fam for key, with split-K or without (split),
 * on tensor cores or not (tcore, GEMV's; 0 for the tile families); 0 when it has none. */
static inline int kprogs_best(const gt_key *key, gt_devctx *dc, int fam, int split, int tcore,
                              gt_kcfg *out) {
    gt_klimits lim;
    gt_kern_limits(dc, &lim);
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(key, &lim, 0, 0, &c, &counts), found = 0;
    for (int i = 0; i < n && !found; i++)
        if (c[i].cfg.fam == fam && (c[i].cfg.split > 1) == split && c[i].cfg.tcore == tcore)
            *out = c[i].cfg, found = 1;
    free(c);
    return found;
}

#define KPROGS_MAX 512
typedef struct kprogs {
    int n, arch;
    gt_key key[KPROGS_MAX];
    gt_kcfg cfg[KPROGS_MAX];
    gt_rtc_result res[KPROGS_MAX];
    gt_status st[KPROGS_MAX];
} kprogs;

static inline void kprogs_compile_one(int i, void *user) {
    kprogs *p = user;
    p->st[i] = gt_kern_compile(&p->cfg[i], &p->key[i], p->arch, &p->res[i]);
}

/* Compiles every program of ps for ps->arch. */
static inline void kprogs_compile(kprogs *ps) { gt_pool_run(ps->n, 0, kprogs_compile_one, ps); }

static inline void kprogs_free(kprogs *ps) {
    for (int i = 0; i < ps->n; i++) gt_rtc_result_free(&ps->res[i]);
}

/* Runs program i of ps as call g (into p->dC, after C is reset to C0) and reads C back
 * into p->C; 0 on success, else -1 with the reason in why. */
static inline int kprogs_run(kprogs *ps, int i, prob *p, const gt_gemm *g, char *why, size_t size) {
    gt_kern k;
    gt_status s = ps->st[i];
    if (s == GT_SUCCESS) s = gt_kern_load(ps->res[i].image, &ps->cfg[i], &ps->key[i], &k);
    if (s == GT_SUCCESS) {
        prob_reset_c(p);
        s = gt_kern_run(&k, g, 0);
        if (s == GT_SUCCESS && gt_cu.ctx_synchronize() != CUDA_SUCCESS) s = GT_CUDA_ERROR;
        gt_kern_unload(&k);
    }
    if (s != GT_SUCCESS) {
        snprintf(why, size, "%s: %s", gt_status_string(s), gt_last_error());
        return -1;
    }
    prob_fetch_c(p, p->dC);
    return 0;
}

/* Runs program i of ps as call g on p and grades it against ref; with twin, runs program
 * i + 1 (its generic twin) on the same problem too, grades it and requires the same bits.
 * name begins each failure's message. Returns 1 when every run completed. */
static inline int kprogs_check(kprogs *ps, int i, int twin, prob *p, const gt_gemm *g,
                               const gr_ref *ref, const char *name) {
    char why[400];
    size_t bytes = c_bytes(p);
    void *want = malloc(bytes);
    int ok = kprogs_run(ps, i, p, g, why, sizeof why) == 0;
    TAP_CHECK(ok, "%s: exact kernel: %s", name, why);
    if (ok) {
        gr_result res;
        TAP_CHECK(prob_grade(p, ref, &res) <= 1.0, "%s: exact wrong: %s", name, res.text);
        if (want) memcpy(want, p->C, bytes);
    }
    int gok = ok && (!twin || kprogs_run(ps, i + 1, p, g, why, sizeof why) == 0);
    TAP_CHECK(!ok || gok, "%s: generic kernel: %s", name, why);
    if (gok && twin) {
        gr_result res;
        TAP_CHECK(prob_grade(p, ref, &res) <= 1.0, "%s: generic wrong: %s", name, res.text);
        TAP_CHECK(want && memcmp(want, p->C, bytes) == 0, "%s: generic and exact differ", name);
    }
    free(want);
    return gok;
}

#endif
