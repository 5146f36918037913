/*
 * kcfg.c: the parameter table, its text form and its constraints (kcfg.h).
 * The only file that knows the family's parameters; adding one is one row of gt_kparams
 * plus its use in kernel_src/gemm_f32.cu.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== the table ===== */

const gt_kparam gt_kparams[] = {
    {"BM", "", offsetof(gt_kcfg, bm), {16, 32, 64, 128, 256}, 5,
     "block tile rows (of C per block)"},
    {"BN", "x", offsetof(gt_kcfg, bn), {16, 32, 64, 128, 256}, 5,
     "block tile columns"},
    {"BK", "x", offsetof(gt_kcfg, bk), {8, 16, 32}, 3,
     "K step: depth of one shared-memory stage"},
    {"TM", "_t", offsetof(gt_kcfg, tm), {1, 2, 4, 8}, 4,
     "thread tile rows (registers of C per thread)"},
    {"TN", "x", offsetof(gt_kcfg, tn), {1, 2, 4, 8}, 4,
     "thread tile columns"},
    {"VEC", "_v", offsetof(gt_kcfg, vec), {1, 2, 4}, 3,
     "global load/store vector width in floats (the alignment class must allow it)"},
};
const int gt_nkparams = (int)(sizeof gt_kparams / sizeof gt_kparams[0]);

/* ===== derived values ===== */

int gt_kcfg_threads(const gt_kcfg *c) { return (c->bm / c->tm) * (c->bn / c->tn); }

/* Two stages of A (BK x (BM + pad)) and B (BK x (BN + pad)); an operand whose contiguous
 * dimension is k gets 4 floats of padding (PADA / PADB in the kernel). */
int gt_kcfg_smem_bytes(const gt_kcfg *c, const gt_key *key) {
    int pada = key->opa ? 4 : 0, padb = key->opb ? 0 : 4;
    return 2 * c->bk * (c->bm + pada + c->bn + padb) * 4;
}

/* Accumulators, one column of A and row of B fragments, the staged global loads, and
 * about 24 for addresses and loop state. A guide for pruning; ptxas decides. */
int gt_kcfg_regs_estimate(const gt_kcfg *c) {
    int t = gt_kcfg_threads(c);
    int staged = t ? (c->bm * c->bk + c->bn * c->bk) / t : 0;
    return c->tm * c->tn + c->tm + c->tn + staged + 24;
}

void gt_kcfg_grid(const gt_kcfg *c, const gt_key *key, unsigned grid[3], unsigned block[3]) {
    /* One dimension over all tiles (the kernel recovers the tile from blockIdx.x). */
    grid[0] = (unsigned)(((key->m + c->bm - 1) / c->bm) * ((key->n + c->bn - 1) / c->bn));
    grid[1] = grid[2] = 1;
    block[0] = (unsigned)gt_kcfg_threads(c);
    block[1] = block[2] = 1;
}

size_t gt_kcfg_workspace_bytes(const gt_kcfg *c, const gt_key *key) {
    (void)c, (void)key;
    return 0;
}

int gt_kcfg_same_order(const gt_kcfg *c) {
    (void)c;
    return 1;
}

/* ===== constraints ===== */

static int in_table(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim) {
    (void)key, (void)lim;
    for (int i = 0; i < gt_nkparams; i++) {
        int v = gt_kcfg_get(c, i), found = 0;
        for (int j = 0; j < gt_kparams[i].nvalues; j++) found |= gt_kparams[i].values[j] == v;
        if (!found) return 0;
    }
    return 1;
}
static int tile_divides(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k, (void)l;
    return c->bm % c->tm == 0 && c->bn % c->tn == 0;
}
static int whole_warps(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k;
    int t = gt_kcfg_threads(c);
    return t % 32 == 0 && t >= 32 && t <= l->max_threads_per_block;
}
static int whole_vectors(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k, (void)l;
    int t = gt_kcfg_threads(c), v = c->vec;
    return c->bm % v == 0 && c->bn % v == 0 && c->bk % v == 0 && (c->bm * c->bk / v) % t == 0 &&
           (c->bn * c->bk / v) % t == 0;
}
static int aligned(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    return c->vec * 4 <= k->align;
}
static int smem_fits(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    return gt_kcfg_smem_bytes(c, k) <= l->smem_per_block;
}
static int regs_fit(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k;
    int r = gt_kcfg_regs_estimate(c);
    return r <= 255 && r * gt_kcfg_threads(c) <= l->regs_per_block;
}
static int grid_fits(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    return ((k->m + c->bm - 1) / c->bm) * ((k->n + c->bn - 1) / c->bn) <= 2147483647LL;
}
static long long pow2ceil(long long x) {
    long long p = 1;
    while (p < x) p *= 2;
    return p;
}
static int tile_not_idle(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    return c->bm <= (pow2ceil(k->m) > 16 ? pow2ceil(k->m) : 16) &&
           c->bn <= (pow2ceil(k->n) > 16 ? pow2ceil(k->n) : 16);
}
static int widest_vector(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    int widest = k->align / 4 > 4 ? 4 : k->align / 4;
    return c->vec == (widest < 1 ? 1 : widest);
}
static int enough_work_per_thread(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k, (void)l;
    int t = gt_kcfg_threads(c);
    return c->tm * c->tn >= 4 || (t >= 64 && t <= 256);
}
static int reasonable_block(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k, (void)l;
    int t = gt_kcfg_threads(c);
    return t >= 64 && t <= 512;
}

const gt_kconstraint gt_kconstraints[] = {
    {"in_table", GT_KC_LEGAL, "every parameter takes a value of the table", in_table},
    {"tile_divides", GT_KC_LEGAL, "the thread tile divides the block tile", tile_divides},
    {"whole_warps", GT_KC_LEGAL,
     "a block is whole warps and within the device's threads per block", whole_warps},
    {"whole_vectors", GT_KC_LEGAL,
     "each thread loads the same number of whole vectors of each operand tile", whole_vectors},
    {"aligned", GT_KC_LEGAL, "vector accesses are legal only within the alignment class",
     aligned},
    {"smem_fits", GT_KC_LEGAL, "two stages of shared memory fit the static 48 KiB limit",
     smem_fits},
    {"regs_fit", GT_KC_LEGAL, "registers fit a thread (255) and a block", regs_fit},
    {"grid_fits", GT_KC_LEGAL, "the grid holds at most 2^31 - 1 blocks", grid_fits},
    {"tile_not_idle", GT_KC_PRUNE,
     "a block tile larger than the next power of two of the problem computes nothing",
     tile_not_idle},
    {"widest_vector", GT_KC_PRUNE,
     "a narrower vector than the alignment allows only moves fewer bytes per load",
     widest_vector},
    {"reasonable_block", GT_KC_PRUNE,
     "64 to 512 threads: fewer starve latency hiding, more limit registers per thread",
     reasonable_block},
    {"enough_work_per_thread", GT_KC_PRUNE,
     "a thread tile under 4 outputs is only worth it in small blocks",
     enough_work_per_thread},
};
const int gt_nkconstraints = (int)(sizeof gt_kconstraints / sizeof gt_kconstraints[0]);

const gt_kconstraint *gt_kcfg_check(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim,
                                    int kinds) {
    /* Every predicate divides by these: a configuration with a zero or negative one is
     * refused first, as outside the table, whichever kinds were asked for. */
    if (c->bm <= 0 || c->bn <= 0 || c->bk <= 0 || c->tm <= 0 || c->tn <= 0 || c->vec <= 0 ||
        c->tm > c->bm || c->tn > c->bn)
        return &gt_kconstraints[0];
    for (int i = 0; i < gt_nkconstraints; i++) {
        if (!(gt_kconstraints[i].kind & kinds)) continue;
        if (!gt_kconstraints[i].ok(c, key, lim)) return &gt_kconstraints[i];
    }
    return NULL;
}

/* ===== text form ===== */

int gt_kcfg_format(const gt_kcfg *c, char *buf, size_t size) {
    size_t n = 0;
    for (int i = 0; i < gt_nkparams; i++)
        n += (size_t)snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, "%s%d",
                              gt_kparams[i].sep, gt_kcfg_get(c, i));
    return (int)n;
}

int gt_kcfg_parse(const char *text, gt_kcfg *c, char *why, size_t whysize) {
    memset(c, 0, sizeof *c);
    const char *p = text;
    for (int i = 0; i < gt_nkparams; i++) {
        size_t sl = strlen(gt_kparams[i].sep);
        if (strncmp(p, gt_kparams[i].sep, sl) != 0) {
            snprintf(why, whysize, "'%s': expected '%s' before %s", text, gt_kparams[i].sep,
                     gt_kparams[i].name);
            return -1;
        }
        p += sl;
        if (*p < '0' || *p > '9') {
            snprintf(why, whysize, "'%s': %s needs a number", text, gt_kparams[i].name);
            return -1;
        }
        char *end;
        long v = strtol(p, &end, 10);
        int found = 0;
        for (int j = 0; j < gt_kparams[i].nvalues; j++) found |= gt_kparams[i].values[j] == v;
        if (!found || end - p > 6) {
            snprintf(why, whysize, "'%s': %s = %ld is not an allowed value", text,
                     gt_kparams[i].name, v);
            return -1;
        }
        gt_kcfg_set(c, i, (int)v);
        p = end;
    }
    if (*p) {
        snprintf(why, whysize, "'%s': unexpected text '%s' after the last parameter", text, p);
        return -1;
    }
    return 0;
}

void gt_kcfg_limits_generic(const gt_key *key, gt_klimits *lim) {
    lim->max_threads_per_block = 1024;
    lim->smem_per_block = 48 * 1024;
    lim->regs_per_block = 65536;
    lim->regs_per_sm = 65536;
    lim->sm_count = key->sm_count;
}

int gt_kcfg_validate(const char *text, const gt_key *key, const gt_klimits *lim, gt_kcfg *out,
                     char *why, size_t whysize) {
    char reason[256];
    if (gt_kcfg_parse(text, out, reason, sizeof reason) != 0) {
        snprintf(why, whysize, "configuration %s", reason);
        return -1;
    }
    const gt_kconstraint *bad = gt_kcfg_check(out, key, lim, GT_KC_LEGAL);
    if (bad) {
        snprintf(why, whysize, "configuration '%s' breaks %s: %s", text, bad->name, bad->reason);
        return -1;
    }
    return 0;
}

/* ===== options and defaults ===== */

int gt_kcfg_options(const gt_kcfg *c, const gt_key *key, char storage[][64], const char **opts,
                    int max) {
    int n = 0;
#define OPT(...)                                             \
    do {                                                     \
        if (n < max) {                                       \
            snprintf(storage[n], 64, __VA_ARGS__);           \
            opts[n] = storage[n];                            \
            n++;                                             \
        }                                                    \
    } while (0)
    OPT("-DGT_M=%lld", (long long)key->m);
    OPT("-DGT_N=%lld", (long long)key->n);
    OPT("-DGT_K=%lld", (long long)key->k);
    OPT("-DGT_OPA=%d", key->opa);
    OPT("-DGT_OPB=%d", key->opb);
    OPT("-DGT_BETA0=%d", key->beta0);
    for (int i = 0; i < gt_nkparams; i++) OPT("-DGT_%s=%d", gt_kparams[i].name, gt_kcfg_get(c, i));
#undef OPT
    return n;
}

void gt_kcfg_default(gt_kcfg *c, const gt_key *key) {
    /* 256 threads, 2 vectors per thread per operand at any width: legal for every shape
     * and alignment, and not slow on large ones. */
    c->bm = 64;
    c->bn = 64;
    c->bk = 8;
    c->tm = 4;
    c->tn = 4;
    c->vec = key->align >= 16 ? 2 : 1;
}

int gt_kcfg_help(char *buf, size_t size) {
    int n = 0;
#define OUT(...) n += snprintf(buf + (n < (int)size ? n : (int)size), (size_t)n < size ? size - (size_t)n : 0, __VA_ARGS__)
    OUT("Kernel parameters (canonical text: BMxBNxBK_tTMxTN_vVEC, e.g. 128x64x8_t8x4_v4):\n");
    for (int i = 0; i < gt_nkparams; i++) {
        OUT("  %-4s %s; values:", gt_kparams[i].name, gt_kparams[i].help);
        for (int j = 0; j < gt_kparams[i].nvalues; j++) OUT(" %d", gt_kparams[i].values[j]);
        OUT("\n");
    }
    OUT("Constraints (legal: checked for every configuration; prune: tuner only):\n");
    for (int i = 0; i < gt_nkconstraints; i++)
        OUT("  %-22s %-5s %s\n", gt_kconstraints[i].name,
            gt_kconstraints[i].kind == GT_KC_LEGAL ? "legal" : "prune", gt_kconstraints[i].reason);
#undef OUT
    return n;
}
