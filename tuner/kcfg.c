/*
 * kcfg.c: the parameter table, its text form and its constraints (kcfg.h).
 * The only file that knows the families' parameters; adding one is one row of gt_kparams
 * plus its use in kernel_src/common.cuh and the families' sources.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kcfg.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== the table ===== */

/* Tile sizes reachable as warps x lanes x thread tile (1..8, odd included), up to 256; 512
 * and 1024 for GEMV's rows only (warp_layout). */
#define TILE_VALUES {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 512, 1024}, 24

const gt_kparam gt_kparams[] = {
    {"FAM", "f", offsetof(gt_kcfg, fam), {0, 1, 2, 3, 4}, 5,
     "kernel family: 0 SIMT (FFMA/DFMA), 1 DMMA (f64 tensor cores, sm_80+), 2 MMA (tf32, "
     "f16, bf16, f32_3xtf32 tensor cores, sm_80+), 3 WGMMA (tf32, f16, bf16, f32_3xtf32 warpgroup MMA "
     "with TMA, sm_90a), 4 GEMV (byte-bound shapes, every type: BM x BN holds the long side's "
     "rows and the small side whole, WM x WN a warp's, TM vector loads in flight per row, TN "
     "warps along K, BK 64)", 0},
    {"BM", "_", offsetof(gt_kcfg, bm), TILE_VALUES, "block tile rows (of C per block)", 0},
    {"BN", "x", offsetof(gt_kcfg, bn), TILE_VALUES, "block tile columns", 0},
    {"BK", "x", offsetof(gt_kcfg, bk), {8, 16, 32, 64}, 4,
     "K step: depth of one shared-memory stage (64: MMA only)", 0},
    {"WM", "_w", offsetof(gt_kcfg, wm), TILE_VALUES, "warp tile rows", 0},
    {"WN", "x", offsetof(gt_kcfg, wn), TILE_VALUES, "warp tile columns", 0},
    {"TM", "_t", offsetof(gt_kcfg, tm), {1, 2, 3, 4, 5, 6, 8, 16}, 8,
     "thread tile rows (SIMT; 16 only as SIMT's 16 x 8 with A transposed); 8-row fragments "
     "per warp along M (DMMA, MMA); blocks per cluster, 1 or 2, the pair sharing B's tile by "
     "TMA multicast (WGMMA)", 0},
    {"TN", "x", offsetof(gt_kcfg, tn), {1, 2, 3, 4, 5, 6, 8}, 7,
     "thread tile columns (SIMT); fragments along N: 8 columns (DMMA), 16 (MMA)", 0},
    {"STAGES", "_s", offsetof(gt_kcfg, stages), {2, 3, 4, 5}, 4,
     "shared-memory stages (cp.async runs STAGES - 1 steps ahead on sm_80+)", 0},
    {"VEC", "_v", offsetof(gt_kcfg, vec), {1, 2, 4, 8}, 4,
     "global vector width in elements (the alignment class must allow it)", 0},
    {"SPLIT", "_k", offsetof(gt_kcfg, split),
     {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512}, 18,
     "split-K factor: blocks per tile, reduced in order in the library's workspace", 0},
    {"RASTER", "_r", offsetof(gt_kcfg, raster), {1, 4, 8, 16}, 4,
     "tile rows per rasterization group (L2 reuse); 1: column order", 0},
    {"TCORE", "_c", offsetof(gt_kcfg, tcore), {0, 1}, 2,
     "GEMV: 1 multiplies on tensor cores (mma.sync m16n8k16: 16-bit inputs, the large operand "
     "contiguous along K, sm_80+), warps of 16 rows and the small side in tiles of 8 or 16; 0 "
     "(omitted from the text): FMA", 1},
    {"GENERIC", "_g", offsetof(gt_kcfg, generic), {0, 1}, 2,
     "1: shape-generic, M, N and K are the kernel's arguments and one binary serves every "
     "shape of the class (device, types, ops, alignment, beta == 0); 0 (omitted from the "
     "text): compiled for the exact shape", 1},
};
const int gt_nkparams = (int)(sizeof gt_kparams / sizeof gt_kparams[0]);

/* ===== derived values ===== */

/* Bytes of an element of A and B (SIMT and DMMA: of C too), and of an accumulator (the
 * compute type: split-K partials). */
static int esize(const gt_key *key) { return gt_dtype_in_size(key->dtype); }
static int acc_size(const gt_key *key) { return key->dtype == GT_DT_F64 ? 8 : 4; }
static long long cdiv(long long a, long long b) { return (a + b - 1) / b; }

/* GEMV (gemm_gemv.cu, which states the same rules). */
int gt_kcfg_gemv_long_m(const gt_kcfg *c) { return c->bm >= c->bn; }
int gt_key_gemv_dot(const gt_key *key, int long_m) { return long_m ? key->opa : !key->opb; }
int gt_kcfg_gemv_dot(const gt_kcfg *c, const gt_key *key) {
    return gt_key_gemv_dot(key, gt_kcfg_gemv_long_m(c));
}
/* Rows of the long side per block and per warp, and the small side's tile. */
static int gemv_bl(const gt_kcfg *c) { return gt_kcfg_gemv_long_m(c) ? c->bm : c->bn; }
static int gemv_wl(const gt_kcfg *c) { return gt_kcfg_gemv_long_m(c) ? c->wm : c->wn; }
static int gemv_bs(const gt_kcfg *c) { return gt_kcfg_gemv_long_m(c) ? c->bn : c->bm; }
void gt_kcfg_gemv_tile(const gt_kcfg *c, int *bl, int *wl, int *bs) {
    *bl = gemv_bl(c), *wl = gemv_wl(c), *bs = gemv_bs(c);
}
int gt_kcfg_gemv_wv(const gt_key *key) { return 16 / gt_dtype_in_size(key->dtype); }
/* Sums per tile a split-K partial holds: the block's NACC x threads (gemm_gemv.cu). */
static long long gemv_tile_sums(const gt_kcfg *c) {
    long long t = gt_kcfg_threads(c), out = (long long)gemv_bl(c) * gemv_bs(c);
    return cdiv(out, t) * t;
}

/* WGMMA: a producer warpgroup and BN / WN consumer warpgroups. */
int gt_kcfg_threads(const gt_kcfg *c) {
    if (c->fam == GT_FAM_WGMMA) return 128 * (c->bn / c->wn + 1);
    if (c->fam == GT_FAM_GEMV)
        return 32 * (gt_kcfg_gemv_long_m(c) ? c->bm / c->wm : c->bn / c->wn) * c->tn;
    return 32 * (c->bm / c->wm) * (c->bn / c->wn);
}

/* gemm_wgmma.cu, which states the same formulas: unpadded swizzled tiles (f32_3xtf32:
 * each stage twice, the second for the low parts), 1024 bytes to align them, 128 for the
 * mbarriers; with EPI_TMA two 64 x 64 16-bit staging boxes per consumer warpgroup, where
 * they fit within sm_90's 232448 bytes (and M is a multiple of 8). */
#define WGMMA_EPI_BOX (64 * 64 * 2)
#define WGMMA_SMEM_MAX 232448
static int wgmma_smem_base(const gt_kcfg *c, const gt_key *key) {
    int copies = gt_dtype_split3(key->dtype) ? 2 : 1;
    return copies * c->stages * (c->bm + c->bn) * c->bk * esize(key) + 1024 + 128;
}
static int wgmma_staging_bytes(const gt_kcfg *c) { return (c->bn / c->wn) * 2 * WGMMA_EPI_BOX; }

int gt_kcfg_wgmma_tma_store(const gt_kcfg *c, const gt_key *key) {
    /* TMA stores whole 16-byte chunks: M a multiple of 8, or the last chunk of a column
     * would write past it. A generic kernel, compiled without M, stores from registers. */
    if (c->fam != GT_FAM_WGMMA || c->generic || !key->beta0 || gt_dtype_out_size(key->dtype) != 2 ||
        c->vec * esize(key) < 16 || key->m % 8 != 0)
        return 0;
    return wgmma_smem_base(c, key) + wgmma_staging_bytes(c) <= WGMMA_SMEM_MAX;
}

/* SIMT (gemm_simt.cu): STAGES x BK rows of op(A) [k][m] and op(B) [k][n]; an operand
 * whose stored contiguous dimension is k gets 4 elements of padding per row.
 * DMMA (gemm_dmma.cu, which states the same formula): each operand kept in its stored
 * orientation, rows padded by 4 doubles. */
int gt_kcfg_smem_bytes(const gt_kcfg *c, const gt_key *key) {
    /* GEMV: TN warps' partial sums of the tile, in the compute type. */
    if (c->fam == GT_FAM_GEMV) return c->tn * gemv_bl(c) * gemv_bs(c) * acc_size(key);
    if (c->fam == GT_FAM_WGMMA)
        return wgmma_smem_base(c, key) + (gt_kcfg_wgmma_tma_store(c, key) ? wgmma_staging_bytes(c) : 0);
    if (c->fam == GT_FAM_MMA) {
        /* gemm_mma.cu, which states the same formula: each operand in its stored
         * orientation; rows along k padded by 16 bytes, rows along m or n by 8 elements. */
        int es = esize(key), pk = 16 / es;
        int a = key->opa ? c->bm * (c->bk + pk) : c->bk * (c->bm + 8);
        int b = key->opb ? c->bk * (c->bn + 8) : c->bn * (c->bk + pk);
        return c->stages * es * (a + b);
    }
    if (c->fam == GT_FAM_DMMA) {
        int a = key->opa ? c->bm * (c->bk + 4) : c->bk * (c->bm + 4);
        int b = key->opb ? c->bk * (c->bn + 4) : c->bn * (c->bk + 4);
        return c->stages * 8 * (a + b);
    }
    int es = esize(key), pad = 4;
    int lda = c->bm + (key->opa ? pad : 0), ldb = c->bn + (key->opb ? 0 : pad);
    return c->stages * c->bk * (lda + ldb) * es;
}

/* SIMT registers. Unconstrained, ptxas gives a thread about its accumulators, two
 * buffers of A and B fragments, the staged copies of an operand stored with k contiguous
 * (they pass through registers) and about 32 for addresses and loop state; doubles take
 * two. It can squeeze that to the accumulators, the fragments and 16 more without
 * spilling much: 8 x 8 f32 threads in 256-thread blocks fit 128 with no spills under a
 * bound of 2 blocks, and whether 2 blocks or 1 fit an SM decides their speed. */
static int simt_regs_floor(const gt_kcfg *c, const gt_key *key) {
    int w = esize(key) / 4;
    return w * (c->tm * c->tn + 2 * (c->tm + c->tn)) + 16;
}
/* A thread's share of a stage of the operands stored with k contiguous, which pass
 * through registers on their way to shared memory. */
static int simt_staged(const gt_kcfg *c, const gt_key *key) {
    int t = gt_kcfg_threads(c);
    return (key->opa ? c->bm * c->bk / t : 0) + (key->opb ? 0 : c->bn * c->bk / t);
}
static int simt_regs_natural(const gt_kcfg *c, const gt_key *key) {
    return simt_regs_floor(c, key) + esize(key) / 4 * simt_staged(c, key) + 16;
}
/* Registers per thread that b resident blocks leave (allocated in units of 8). */
static int regs_cap(const gt_kcfg *c, int b) {
    int t = gt_kcfg_threads(c);
    if (t <= 0 || b <= 0) return 0; /* no whole warp (whole_warps refuses it) */
    int cap = 65536 / (t * b) / 8 * 8;
    return cap > 255 ? 255 : cap;
}

/* DMMA: fitted to ptxas (gemm_dmma.cu): 2 doubles per fragment and lane, fragments
 * double-buffered over KG k-slices. SIMT: the natural count, or the bound's cap where
 * the launch bound (gt_kcfg_min_blocks) asks for less. A guide; ptxas decides. */
int gt_kcfg_regs_estimate(const gt_kcfg *c, const gt_key *key) {
    /* WGMMA: one block per SM takes the register file (launch bound 1); the consumers'
     * accumulators are bounded by the wgmma_tile rule instead. */
    if (c->fam == GT_FAM_WGMMA) {
        int r = 65536 / gt_kcfg_threads(c) / 8 * 8;
        return r > 255 ? 255 : r;
    }
    /* MMA: 4 f32 accumulators per m16n8 instruction tile, fragments (2 registers per m8,
     * 4 per n16 fragment) double-buffered, about 52 for addresses and loop state, one per
     * copy of a K step, and one per element where 2-byte copies go through registers
     * (fitted to ptxas for sm_90: 8 x 4 fragments of f16 in 128 x 128 x 32 tiles of 4
     * warps take about 254). */
    if (c->fam == GT_FAM_MMA) {
        int t = gt_kcfg_threads(c), es = esize(key);
        int copies = (c->bm + c->bn) * c->bk / (c->vec * t);
        int staged = c->vec * es < 4 ? (c->bm + c->bn) * c->bk / t : 0;
        /* f32_3xtf32: the low parts of a slice's fragments and, at most, a partial per
         * instruction tile (gemm_mma.cu). */
        int x3 = gt_dtype_split3(key->dtype) ? 2 * c->tm + 4 * c->tn + 4 * c->tm * c->tn : 0;
        return 4 * c->tm * c->tn + 2 * (2 * c->tm + 4 * c->tn) + 52 + copies + staged + x3;
    }
    if (c->fam == GT_FAM_DMMA)
        return 4 * c->tm * c->tn + (c->tm * c->tn >= 32 ? 4 : 8) * (c->tm + c->tn) + 48;
    if (c->fam == GT_FAM_GEMV) {
        /* The sums, the loads in flight (TM vectors per row) and a step's X values, in
         * registers of the compute type, plus about 40 for addresses and loop state. */
        int w = acc_size(key) / 4;
        /* Tensor cores: 4 sums per 8 columns, per step two 16-byte chunks of W and the X
         * fragments (2 registers per 8 columns). */
        if (c->tcore) return 4 * (gemv_bs(c) / 8) + c->tm * (8 + gemv_bs(c) / 4) + 40;
        if (gt_kcfg_gemv_dot(c, key)) {
            int wl = gemv_wl(c), bs = gemv_bs(c);
            return w * (wl * bs + c->tm * wl * gt_kcfg_gemv_wv(key) + gt_kcfg_gemv_wv(key)) + 2 * wl + 40;
        }
        return w * (gt_kcfg_gemv_wv(key) * gemv_bs(c) + c->tm * gt_kcfg_gemv_wv(key) + gemv_bs(c)) + 40;
    }
    int natural = simt_regs_natural(c, key), cap = regs_cap(c, gt_kcfg_min_blocks(c, key));
    return natural < cap ? natural : cap;
}

int gt_kcfg_min_blocks(const gt_kcfg *c, const gt_key *key) {
    if (c->fam == GT_FAM_WGMMA) return 1; /* gemm_wgmma.cu's own launch bound */
    if (c->fam != GT_FAM_SIMT) {
        /* A margin over the estimate: a bound below what ptxas wants spills. MMA's
         * estimate is rougher (address registers vary with the edges), so its margin is
         * wider. */
        int est = gt_kcfg_regs_estimate(c, key), t = gt_kcfg_threads(c);
        int cap = c->fam == GT_FAM_MMA ? est * 3 / 2 : est * 5 / 4;
        if (cap < 64) cap = 64;
        int b = t > 0 ? 65536 / (t * cap) : 1;
        return b < 1 ? 1 : b > 8 ? 8 : b;
    }
    /* SIMT: as many blocks as the squeezed count allows. Copies of under 16 bytes are
     * many (a thread's share of a stage, one element each with VEC 1), and each keeps an
     * address (2 registers) live across the K loop beside the staged values: counted,
     * or ptxas spills into the loop. f32 TT with 4-byte copies: 96 x 24 tiles of 6 x 6
     * threads (30 copies) spilled 112 bytes under 8 blocks' 128 registers and took 167
     * without a bound; 8 x 6 thread tiles of 123 x 4567 x 891 NN ran 49.5 us spilling,
     * 42.8 us with this count (H100; bench/README.md, "Registers of narrow SIMT tiles"). */
    int need = simt_regs_floor(c, key), b = 1;
    if (c->vec * esize(key) < 16)
        need += simt_staged(c, key) + 2 * (c->bm + c->bn) * c->bk / (c->vec * gt_kcfg_threads(c));
    while (b < 8 && regs_cap(c, b + 1) >= need) b++;
    return b;
}

void gt_kcfg_grid(const gt_kcfg *c, const gt_key *key, unsigned grid[3], unsigned block[3]) {
    /* x: every tile (the kernel recovers it, rasterized, from blockIdx.x); y: splits.
     * WGMMA is persistent: one block per SM at most (splits included), each looping
     * over tiles. */
    long long tiles = cdiv(key->m, c->bm) * cdiv(key->n, c->bn);
    if (c->fam == GT_FAM_WGMMA) {
        /* Clusters of TM blocks take TM vertically adjacent tiles each (gemm_wgmma.cu);
         * kern.c lowers this to the clusters that fit at once. */
        long long cl = c->tm, units = cdiv(key->m, c->bm * cl) * cdiv(key->n, c->bn);
        long long most = key->sm_count > 0 ? key->sm_count / (cl * c->split) : units;
        if (most < 1) most = 1;
        tiles = cl * (units < most ? units : most);
    }
    grid[0] = (unsigned)tiles;
    grid[1] = (unsigned)c->split;
    grid[2] = 1;
    block[0] = (unsigned)gt_kcfg_threads(c);
    block[1] = block[2] = 1;
}

/* GT_KCFG_WS_COUNTERS tile counters at a fixed place, then partials [tile][split][BM * BN]
 * (common.cuh, splitk_reduce, which gets the number as GT_WS_COUNTERS). */
#define WS_COUNTERS GT_KCFG_WS_COUNTERS
int gt_kcfg_same_group(const gt_kcfg *a, const gt_kcfg *b) {
    return a->fam == b->fam && a->bm == b->bm && a->bn == b->bn && a->bk == b->bk &&
           a->split == b->split && a->tcore == b->tcore;
}

int gt_kcfg_split_group(const gt_kcfg *c) {
    if (c->split <= 8) return c->split < 1 ? 1 : c->split;
    int g = 1;
    while (g * g < c->split || c->split % g != 0) g++;
    return g;
}

long long gt_kcfg_split_counters(const gt_kcfg *c, const gt_key *key) {
    if (c->split <= 1) return 0;
    long long tiles = cdiv(key->m, c->bm) * cdiv(key->n, c->bn);
    int groups = c->split / gt_kcfg_split_group(c);
    return tiles * (groups > 1 ? 1 + groups : 1);
}

/* Split-K's partial tiles (none without split-K): every split of every tile, in the
 * accumulator type. */
static size_t splitk_partial_bytes(const gt_kcfg *c, const gt_key *key) {
    if (c->split <= 1) return 0;
    long long per_tile = c->fam == GT_FAM_GEMV ? gemv_tile_sums(c) : (long long)c->bm * c->bn;
    return (size_t)(cdiv(key->m, c->bm) * cdiv(key->n, c->bn)) * (size_t)c->split *
           (size_t)per_tile * (size_t)acc_size(key);
}
/* One operand's copy. Stored r x c (r contiguous); when k is not the contiguous
 * dimension (kcont 0), c is k and a transposed copy is c x r. */
static gt_kpack_mode pack_one(int tf32, int kcont, int unaligned, long long r, long long c, int es,
                              long long *rows, long long *cols, long long *ld) {
    gt_kpack_mode m = tf32 && !kcont ? GT_KPACK_TRANSPOSE : unaligned ? GT_KPACK_COPY : GT_KPACK_NONE;
    *rows = m == GT_KPACK_TRANSPOSE ? c : r;
    *cols = m == GT_KPACK_TRANSPOSE ? r : c;
    *ld = cdiv(*rows, 16 / es) * (16 / es);
    return m;
}
int gt_kcfg_widest_vec(const gt_key *key) {
    int es = esize(key), widest = key->align / es;
    if (widest * es > 16) widest = 16 / es;
    return widest < 1 ? 1 : widest;
}
int gt_kcfg_simt_packs(const gt_kcfg *c, const gt_key *key) {
    return c->fam == GT_FAM_SIMT && c->vec * esize(key) == 16 && key->align < 16;
}
int gt_kcfg_pack_layout(const gt_kcfg *c, const gt_key *key, gt_kpack *p) {
    int es = esize(key), unaligned = c->vec * es < 16;
    int tf32 = key->dtype == GT_DT_TF32 || gt_dtype_split3(key->dtype);
    if (gt_kcfg_simt_packs(c, key)) unaligned = 1; /* both operands, as stored */
    else if (c->fam != GT_FAM_WGMMA) return 0;
    /* A is M x K as stored (K x M transposed), B K x N (N x K). */
    p->mode_a = pack_one(tf32, key->opa, unaligned, key->opa ? key->k : key->m,
                         key->opa ? key->m : key->k, es, &p->rows_a, &p->cols_a, &p->lda);
    p->mode_b = pack_one(tf32, !key->opb, unaligned, key->opb ? key->n : key->k,
                         key->opb ? key->k : key->n, es, &p->rows_b, &p->cols_b, &p->ldb);
    if (p->mode_a == GT_KPACK_NONE && p->mode_b == GT_KPACK_NONE) return 0;
    size_t bytes_a = p->mode_a ? (size_t)(p->lda * p->cols_a * es) : 0;
    /* After the split-K counters and partials (none without split-K). */
    p->off_a = ((size_t)WS_COUNTERS * 4 + splitk_partial_bytes(c, key) + 255) / 256 * 256;
    p->off_b = p->off_a + (bytes_a + 255) / 256 * 256;
    p->end = p->off_b + (p->mode_b ? (size_t)(p->ldb * p->cols_b * es) : 0);
    return 1;
}

size_t gt_kcfg_workspace_bytes(const gt_kcfg *c, const gt_key *key) {
    gt_kpack p;
    if (gt_kcfg_pack_layout(c, key, &p)) return p.end;
    if (c->split <= 1) return 0;
    return WS_COUNTERS * 4 + splitk_partial_bytes(c, key);
}

/* Kernels of the default kernel's family (gt_kcfg_default: MMA for the tensor-only
 * types, else SIMT) without split-K add k after k (MMA: one instruction's k slice after
 * another, the same instruction shape in every configuration of a type) into one
 * accumulator per output, whatever the tiles. DMMA picks its instruction shape, and
 * f32_3xtf32's MMA kernels (its default is SIMT) another arithmetic. */
int gt_kcfg_same_order(const gt_kcfg *c, const gt_key *key) {
    int fam = gt_dtype_tensor_only(key->dtype) ? GT_FAM_MMA : GT_FAM_SIMT;
    return c->fam == fam && c->split == 1;
}

/* Largest workspace a configuration may need: a split-K plan keeps one per stream. */
/* 512 MiB: an 8192 x 8192 f32 operand's copy (WGMMA tf32) and the counters fit. */
#define WORKSPACE_MAX ((size_t)512 << 20)

/* ===== constraints ===== */

/* Every value of the table is below TABLE_BITS: a bit set per parameter makes in_table
 * a lookup (the space checks it for every configuration it generates, hundreds of
 * thousands per key; the loop over the values was 40% of building the space). */
#define TABLE_BITS 2048
static unsigned long long table_bits[sizeof gt_kparams / sizeof gt_kparams[0]][TABLE_BITS / 64];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static void table_init(void) {
    for (int i = 0; i < gt_nkparams; i++)
        for (int j = 0; j < gt_kparams[i].nvalues; j++) {
            int v = gt_kparams[i].values[j];
            if (v >= 0 && v < TABLE_BITS) table_bits[i][v / 64] |= 1ull << (v % 64);
        }
}
static int in_table(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim) {
    (void)key, (void)lim;
    pthread_once(&table_once, table_init);
    for (int i = 0; i < gt_nkparams; i++) {
        int v = gt_kcfg_get(c, i);
        if (v < 0 || v >= TABLE_BITS || !(table_bits[i][v / 64] >> (v % 64) & 1)) return 0;
    }
    return 1;
}
int gt_kcfg_family_fits(int fam, const gt_key *k) {
    /* WGMMA needs sm_90a's instructions (9.0 exactly). tf32 reads its operands with k
     * contiguous only: the others are transposed into the workspace first (PACK). */
    if (fam == GT_FAM_WGMMA)
        return (gt_dtype_tensor_only(k->dtype) || gt_dtype_split3(k->dtype)) && k->cc_major == 9 &&
               k->cc_minor == 0;
    /* MMA: f32_3xtf32 too, its low parts split in registers (gemm_mma.cu). */
    if (fam == GT_FAM_MMA)
        return (gt_dtype_tensor_only(k->dtype) || gt_dtype_split3(k->dtype)) && k->cc_major >= 8;
    /* GEMV: FMA in the compute type, every type and device. */
    if (fam == GT_FAM_GEMV) return 1;
    if (gt_dtype_tensor_only(k->dtype)) return 0;
    return fam == GT_FAM_SIMT || (fam == GT_FAM_DMMA && k->dtype == GT_DT_F64 && k->cc_major >= 8);
}
static int family_fits(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    return gt_kcfg_family_fits(c->fam, k);
}
static int warp_layout(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k, (void)l;
    /* TM 16 is SIMT's only: the other families' fragment counts stop at 8. */
    if (c->tm == 16 && c->fam != GT_FAM_SIMT) return 0;
    if (c->fam != GT_FAM_GEMV && (c->bm > 256 || c->bn > 256 || c->wm > 256 || c->wn > 256)) return 0;
    /* GEMV: the small side whole in every warp (at most 16), whole warps along the long
     * side, TM and TN 1, 2, 4 or 8. */
    if (c->fam == GT_FAM_GEMV) {
        int bs = gemv_bs(c), ws = gt_kcfg_gemv_long_m(c) ? c->wn : c->wm;
        return bs <= 16 && (bs & (bs - 1)) == 0 && ws == bs && gemv_bl(c) % gemv_wl(c) == 0 &&
               (c->tm & (c->tm - 1)) == 0 && c->tm <= 8 && (c->tn & (c->tn - 1)) == 0;
    }
    if (c->bm % c->wm || c->bn % c->wn || c->wm % c->tm || c->wn % c->tn) return 0;
    if (c->fam == GT_FAM_DMMA) return c->wm == 8 * c->tm && c->wn == 8 * c->tn;
    if (c->fam == GT_FAM_MMA) return c->wm == 8 * c->tm && c->wn == 16 * c->tn;
    if (c->fam == GT_FAM_WGMMA)
        return c->wm == c->bm && c->wn == 64 * c->tn && c->bm % 64 == 0 &&
               (c->bn / c->wn == 1 || c->bn / c->wn == 2) &&
               (c->tm == 1 || (c->tm == 2 && c->bn % 128 == 0));
    return (c->wm / c->tm) * (c->wn / c->tn) == 32;
}
/* The K step holds whole instructions (MMA: k 16 for f16 and bf16, 8 for tf32); 64 is
 * for MMA's 16-bit types only (128-byte rows). */
static int k_step(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    if (c->fam == GT_FAM_WGMMA) return c->bk * esize(k) == 128; /* one swizzle row */
    if (c->fam == GT_FAM_GEMV) return c->bk == 64;
    if (c->fam != GT_FAM_MMA) return c->bk <= 32;
    return esize(k) == 4 ? c->bk <= 32 : c->bk >= 16;
}
static int whole_warps(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k;
    int t = gt_kcfg_threads(c);
    return t >= 32 && t <= l->max_threads_per_block;
}
static int whole_vectors(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    int t = gt_kcfg_threads(c), v = c->vec;
    if (c->fam == GT_FAM_WGMMA) return v * esize(k) <= 16; /* copies: gemm_wgmma.cu */
    if (c->fam == GT_FAM_GEMV) return v * esize(k) <= 16;
    return v * esize(k) <= 16 && c->bm % v == 0 && c->bn % v == 0 && c->bk % v == 0 &&
           (c->bm * c->bk / v) % t == 0 && (c->bn * c->bk / v) % t == 0;
}
static int aligned(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    return c->vec * esize(k) <= k->align || gt_kcfg_simt_packs(c, k);
}
static int smem_fits(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    return gt_kcfg_smem_bytes(c, k) <= l->smem_per_block;
}
static int regs_fit(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    int r = gt_kcfg_regs_estimate(c, k);
    return r <= 255 && r * gt_kcfg_threads(c) <= l->regs_per_block;
}
static int grid_fits(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    return cdiv(k->m, c->bm) * cdiv(k->n, c->bn) <= 2147483647LL && c->split <= 65535;
}
static int split_has_work(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    long long kt = cdiv(k->k, c->bk), kps = cdiv(kt, c->split);
    return (c->split - 1) * kps < kt;
}
static int workspace_fits(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    return gt_kcfg_workspace_bytes(c, k) <= WORKSPACE_MAX &&
           gt_kcfg_split_counters(c, k) <= WS_COUNTERS;
}

/* On sm_90 a DMMA warp tile of under 32 fragments takes m16n8k8 (gemm_dmma.cu; larger
 * ones take it only in blocks of 8 warps or more where BK is 32). With BK 32 in blocks of
 * 4 warps it computed wrong results on the H100 (relative error 0.3 to 0.85, every op
 * pair; dev/kcheck.c reproduced it), and right ones with BK 16, 8 warps or another tile.
 * The cause is not found, so the combination is refused. */
static int dmma_k8_block(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    return c->fam != GT_FAM_DMMA || k->cc_major < 9 || c->tm * c->tn >= 32 || c->bk != 32 ||
           gt_kcfg_threads(c) >= 256;
}

/* DMMA with two stages computes wrong results on the H100 for some tiles and splits (32 x
 * 256 and 32 x 128 tiles of 32 x 64 warp tiles in 24 and 48 splits of f64 300x200x40001
 * NT; dev/dmma_s2.sh reproduces it), and the same tiles with three stages are right. Each
 * failing kernel spills, and tuner/kern.c refuses every DMMA kernel that spills; the root
 * cause is not found, and two stages never win a DMMA tuning, so they are refused too. */
static int dmma_stages(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k, (void)l;
    return c->fam != GT_FAM_DMMA || c->stages >= 3;
}

/* WGMMA: at most 128 accumulators per consumer thread (TN instructions of BM / 2), so
 * that they fit the registers setmaxnreg gives consumers; f32_3xtf32 keeps two sets
 * (the sum and a partial, gemm_wgmma.cu), so at most 96. */
static int wgmma_tile(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    return c->fam != GT_FAM_WGMMA || c->tn * c->bm / 2 <= (gt_dtype_split3(k->dtype) ? 96 : 128);
}

/* GEMV (gemm_gemv.cu): the small side's tile covers it whole; an AXPY warp is 32 lanes of
 * 16 bytes of rows; at most 16 rows per DOT warp; STAGES and RASTER unused, at their first
 * values. */
static int gemv_layout(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    if (c->fam != GT_FAM_GEMV) return !c->tcore;
    int lm = gt_kcfg_gemv_long_m(c);
    if ((lm ? (long long)k->n > c->bn : (long long)k->m > c->bm) || c->stages != 2 || c->raster != 1)
        return 0;
    /* Tensor cores: m16n8k16 (16-bit inputs, sm_80+), with W as the row-major A (contiguous
     * along K), a warp's 16 rows, the small side in 1 or 2 tiles of 8. */
    if (c->tcore)
        return gt_kcfg_gemv_dot(c, k) && esize(k) == 2 && !gt_dtype_split3(k->dtype) &&
               k->cc_major >= 8 && gemv_wl(c) == 16 && (gemv_bs(c) == 8 || gemv_bs(c) == 16);
    if (!gt_kcfg_gemv_dot(c, k)) return gemv_wl(c) == 32 * gt_kcfg_gemv_wv(k);
    return gemv_wl(c) <= 16;
}
/* GEMV: the small side's tile is the smallest power of two that holds it; the sums and
 * the loads in flight stay within 96 registers' worth. */
static int gemv_fit(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    if (c->fam != GT_FAM_GEMV) return 1;
    long long s = gt_kcfg_gemv_long_m(c) ? k->n : k->m;
    int bs = gemv_bs(c);
    if (c->tcore) return bs == (s <= 8 ? 8 : 16) && c->tm * (8 + bs / 4) <= 64;
    if (bs >= 2 * s) return 0;
    int w = acc_size(k) / 4;
    if (gt_kcfg_gemv_dot(c, k)) return w * gemv_wl(c) * (bs + c->tm * gt_kcfg_gemv_wv(k)) <= 96;
    return w * gt_kcfg_gemv_wv(k) * (bs + c->tm) <= 96;
}

static int warp_not_idle(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    /* WGMMA keeps one block per SM, so how many tiles each SM computes (the waves) counts
     * for more than a consumer idle in the edge tiles: 3000^3 bf16 wants 192 x 128 tiles
     * (2.9 waves of 384), whose last column leaves one of two consumers idle. */
    if (c->fam == GT_FAM_WGMMA) return 1;
    long long pm = cdiv(k->m, c->bm) * c->bm, pn = cdiv(k->n, c->bn) * c->bn;
    /* DMMA (and GEMV, whose blocks are small and many): warps idle in the last row or
     * column of tiles are tolerated while they are a small part of the grid (under 1/16
     * of its extent). f64 3000^3 in 128 x 96 tiles
     * idles warps in the last of 24 tile rows, 2% of the arithmetic, and ran in 1136 us
     * against 1187 for the best 64 x 64 tiles the plain rule left; 5000 x 3000 x 2000 in
     * 1216 against 1368 (H100, every candidate timed). SIMT keeps the plain rule: the
     * tiles the wider one admits ranked above faster ones (f32 5000 x 3000 x 2000: 1420
     * us for the best of the top 32 against 1385). */
    if (c->fam == GT_FAM_DMMA || c->fam == GT_FAM_GEMV)
        return (pm - k->m < c->wm || 16 * (pm - k->m) < pm) &&
               (pn - k->n < c->wn || 16 * (pn - k->n) < pn);
    return pm - k->m < c->wm && pn - k->n < c->wn;
}
static int widest_vector(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    return c->vec == gt_kcfg_widest_vec(k) || gt_kcfg_simt_packs(c, k);
}
static int reasonable_block(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k, (void)l;
    int t = gt_kcfg_threads(c);
    return t <= 512;
}
static int dmma_shape(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k, (void)l;
    return c->fam != GT_FAM_DMMA || (c->tn % 2 == 0 && c->tm * c->tn <= 32);
}
/* SIMT: 16-row thread tiles only as 16 x 8 and only where A is transposed, and the
 * accumulators and fragments must fit the registers a thread gets with one block per SM,
 * or ptxas spills them (16 x 8 f32: about 190 of the 255 a 256-thread block allows; a
 * 512-thread block allows 128). On the H100 16 x 8 tiles beat 8 x 8 ones only with A
 * transposed; elsewhere they run level or slower and take longer to compile, which costs
 * the tuning budget; other 16-row pairings have more loads per FMA than 8 x 8. */
static int thread_tile_fits(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)l;
    if (c->fam != GT_FAM_SIMT) return 1;
    return (c->tm != 16 || (c->tn == 8 && k->opa)) && simt_regs_floor(c, k) <= regs_cap(c, 1);
}
static int enough_work_per_thread(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k, (void)l;
    return c->fam != GT_FAM_SIMT || c->tm * c->tn >= 4 || gt_kcfg_threads(c) <= 128;
}
/* A SIMT K step unrolls TM x TN x BK FMAs per thread. Above 1024, NVRTC takes about
 * twice as long per candidate, which pushes cold tuning past its budget, and on the H100
 * BK 32 with 8 x 8 threads does not beat BK 16. */
static int compiles_fast(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    (void)k, (void)l;
    return c->fam != GT_FAM_SIMT || c->tm * c->tn * c->bk <= 1024;
}
int gt_kcfg_blocks_per_sm(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    int t = gt_kcfg_threads(c), r = gt_kcfg_regs_estimate(c, k), s = gt_kcfg_smem_bytes(c, k);
    /* Registers: the SM's file is four, one per scheduler, and a warp's registers (in
     * units of 8 a thread) come from its scheduler's quarter; so a quarter holds whole
     * warps, and the SM four times that. f32 10000 x 200 x 200 TN, 64 x 32 tiles of one
     * warp at 197 registers: 2 warps a quarter, 8 blocks an SM (not 10), and 1,099 blocks
     * ran two waves, 59 us against 37 for 987 blocks of 9000 x 200 x 200 (H100). */
    int wq = (l->regs_per_sm / 4) / (((r + 7) / 8 * 8) * 32), warps = t / 32 > 0 ? t / 32 : 1;
    int b = 2048 / t, br = 4 * wq / warps;
    int smem_sm = l->smem_per_block + 1024; /* per SM, about; the opt-in is close to it */
    int bs = s > 0 ? smem_sm / (s + 1024) : 32;
    if (br < b) b = br;
    if (bs < b) b = bs;
    return b > 32 ? 32 : b;
}
static int occupancy(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    return gt_kcfg_blocks_per_sm(c, k, l) * gt_kcfg_threads(c) / 32 >= 4;
}
/* COSMA-like: the grid should give every SM work, or come as close as the shape allows
 * with 32 x 32 tiles; split-K is only for shapes whose tiles alone cannot. */
static int fills_sms(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    long long tiles = cdiv(k->m, c->bm) * cdiv(k->n, c->bn);
    long long want = l->sm_count / 2, small = cdiv(k->m, 32) * cdiv(k->n, 32);
    if (small < want) want = small;
    return tiles * c->split >= want;
}
static int split_needed(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    if (c->split == 1) return 1;
    long long tiles = cdiv(k->m, c->bm) * cdiv(k->n, c->bn);
    long long kps = cdiv(cdiv(k->k, c->bk), c->split);
    /* GEMV blocks are small and stream, and more of them keep more bytes in flight: up to
     * 16 per SM, at least 2 units of K each. */
    if (c->fam == GT_FAM_GEMV) return tiles * c->split <= 16LL * l->sm_count && kps >= 2;
    return tiles < l->sm_count && tiles * c->split <= 4LL * l->sm_count && kps >= 4;
}
static int raster_useful(const gt_kcfg *c, const gt_key *k, const gt_klimits *l) {
    if (c->raster == 1) return 1;
    long long gm = cdiv(k->m, c->bm), tiles = gm * cdiv(k->n, c->bn);
    return gm > c->raster && tiles >= 2LL * l->sm_count;
}

const gt_kconstraint gt_kconstraints[] = {
    {"in_table", GT_KC_LEGAL, "every parameter takes a value of the table", in_table},
    {"family_fits", GT_KC_LEGAL,
     "SIMT is for f32, f64 and f32_3xtf32, DMMA for f64 on sm_80 and later, MMA for tf32, "
     "f16, bf16 and f32_3xtf32 on sm_80 and later, WGMMA for them on 9.0 only",
     family_fits},
    {"warp_layout", GT_KC_LEGAL,
     "tiles of at most 256 (GEMV: 1024); warp tiles divide the block tile; thread tiles divide the warp tile into 32 lanes "
     "(SIMT), or WM = 8 TM and WN = 8 TN fragments (DMMA), WM = 8 TM and WN = 16 TN (MMA), "
     "WM = BM, WN = 64 TN, 1 or 2 consumer warpgroups and clusters of TM = 1 or 2 blocks, "
     "each loading whole 64-column chunks of B (WGMMA)",
     warp_layout},
    {"k_step", GT_KC_LEGAL,
     "BK holds whole MMA instructions (16 for f16 and bf16, 8 for tf32); 64 only for f16 "
     "and bf16; WGMMA: 128 bytes",
     k_step},
    {"whole_warps", GT_KC_LEGAL, "a block is 1 or more warps, within the device's threads per block",
     whole_warps},
    {"whole_vectors", GT_KC_LEGAL,
     "vectors of at most 16 bytes; each thread copies the same number of whole vectors of "
     "each operand tile (WGMMA: no per-thread copies)",
     whole_vectors},
    {"aligned", GT_KC_LEGAL,
     "vector accesses are legal only within the alignment class (SIMT's 16-byte vectors "
     "beyond it read aligned copies of A and B)",
     aligned},
    {"smem_fits", GT_KC_LEGAL, "the shared-memory stages fit the device's per-block limit",
     smem_fits},
    {"regs_fit", GT_KC_LEGAL, "registers fit a thread (255) and a block", regs_fit},
    {"grid_fits", GT_KC_LEGAL, "at most 2^31 - 1 tiles and 65535 splits", grid_fits},
    {"split_has_work", GT_KC_LEGAL, "every split of K gets at least one K step",
     split_has_work},
    {"workspace_fits", GT_KC_LEGAL,
     "at most 512 MiB of workspace (split-K partials, WGMMA's operand copies); split-K: at "
     "most 4096 counters (one per tile, and one per group of splits of each tile where the "
     "reduction takes two levels)",
     workspace_fits},
    {"dmma_k8_block", GT_KC_LEGAL,
     "no DMMA with m16n8k8 (under 32 fragments per warp on sm_90), BK 32 and fewer than 8 "
     "warps: it computed wrong results (cause not found)",
     dmma_k8_block},
    {"dmma_stages", GT_KC_LEGAL,
     "DMMA: at least 3 shared-memory stages (2 computed wrong results)", dmma_stages},
    {"gemv_layout", GT_KC_LEGAL,
     "GEMV: the small side (N where BM >= BN, else M) fits its tile; with the large operand "
     "contiguous along the long side (AXPY) a warp is 32 lanes of 16 bytes of rows, else "
     "(DOT) at most 16 rows; TCORE only as its help says; STAGES 2, RASTER 1",
     gemv_layout},
    {"wgmma_tile", GT_KC_LEGAL,
     "WGMMA: at most 128 accumulators per consumer thread (TN x BM / 2), 96 for f32_3xtf32",
     wgmma_tile},
    {"gemv_fit", GT_KC_PRUNE,
     "GEMV: the small side's tile is the smallest power of two that holds it (TCORE: 8 or "
     "16); sums and loads in flight fit in about 96 registers",
     gemv_fit},
    {"warp_not_idle", GT_KC_PRUNE,
     "no warp computes nothing: the tiles overhang the problem by less than a warp tile "
     "(DMMA and GEMV: or by under 1/16 of the tiled extent; WGMMA exempt: one block per SM, waves "
     "count for more)",
     warp_not_idle},
    {"widest_vector", GT_KC_PRUNE,
     "a narrower vector than the alignment allows only moves fewer bytes per load (or, "
     "SIMT, than 16 bytes from aligned copies)",
     widest_vector},
    {"reasonable_block", GT_KC_PRUNE, "at most 512 threads: more limit registers per thread",
     reasonable_block},
    {"dmma_shape", GT_KC_PRUNE,
     "DMMA warps of even TN (odd TN falls back to the half-rate m8n8k4) and at most 32 "
     "fragments (more spill)",
     dmma_shape},
    {"thread_tile_fits", GT_KC_PRUNE,
     "SIMT: 16-row thread tiles only as 16 x 8 with A transposed; accumulators and fragments "
     "fit the registers a thread gets with one block per SM",
     thread_tile_fits},
    {"enough_work_per_thread", GT_KC_PRUNE,
     "a SIMT thread tile under 4 outputs is only worth it in blocks of at most 128 threads",
     enough_work_per_thread},
    {"compiles_fast", GT_KC_PRUNE,
     "a SIMT K step unrolls at most 1024 FMAs per thread (TM x TN x BK): more doubles the "
     "compile time and did not run faster",
     compiles_fast},
    {"occupancy", GT_KC_PRUNE,
     "registers and shared memory leave at least 4 warps resident per SM", occupancy},
    {"fills_sms", GT_KC_PRUNE,
     "tiles times splits give half the SMs work, or as many blocks as 32 x 32 tiles would",
     fills_sms},
    {"split_needed", GT_KC_PRUNE,
     "split-K only when the tiles are fewer than the SMs, up to 4 blocks per SM, with at "
     "least 4 K steps per split (GEMV: up to 16 blocks per SM, 2 steps)",
     split_needed},
    {"raster_useful", GT_KC_PRUNE,
     "grouped rasterization only for grids of 2 waves or more, taller than the group",
     raster_useful},
};
const int gt_nkconstraints = (int)(sizeof gt_kconstraints / sizeof gt_kconstraints[0]);

const gt_kconstraint *gt_kcfg_check(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim,
                                    int kinds) {
    /* Every predicate divides by these: a configuration with a zero or negative one is
     * refused first, as outside the table, whichever kinds were asked for. */
    if (c->bm <= 0 || c->bn <= 0 || c->bk <= 0 || c->wm <= 0 || c->wn <= 0 || c->tm <= 0 ||
        c->tn <= 0 || c->vec <= 0 || c->stages <= 0 || c->split <= 0 || c->raster <= 0 ||
        c->wm > c->bm || c->wn > c->bn ||
        (c->fam != GT_FAM_GEMV && (c->tm > c->wm || c->tn > c->wn)))
        return &gt_kconstraints[0];
    for (int i = 0; i < gt_nkconstraints; i++) {
        if (!(gt_kconstraints[i].kind & kinds)) continue;
        if (!gt_kconstraints[i].ok(c, key, lim)) return &gt_kconstraints[i];
    }
    return NULL;
}
/* ===== text form ===== */

/* Appends len bytes of t at buf + *n as snprintf would: what fits before the last byte
 * of size, *n counting all of it. */
static void put_text(char *buf, size_t size, size_t *n, const char *t, size_t len) {
    if (*n + 1 < size) {
        const size_t room = size - *n - 1;
        memcpy(buf + *n, t, len < room ? len : room);
    }
    *n += len;
}

/* Written by hand, not by snprintf: a first call's choice formats hundreds of
 * configurations, and snprintf's per-parameter cost was half of it. */
int gt_kcfg_format(const gt_kcfg *c, char *buf, size_t size) {
    size_t n = 0;
    for (int i = 0; i < gt_nkparams; i++) {
        const int v = gt_kcfg_get(c, i);
        if (gt_kparams[i].optional && v == gt_kparams[i].values[0]) continue;
        put_text(buf, size, &n, gt_kparams[i].sep, strlen(gt_kparams[i].sep));
        char digits[16];
        int d = (int)sizeof digits;
        long long u = v < 0 ? -(long long)v : v;
        do digits[--d] = (char)('0' + u % 10), u /= 10;
        while (u);
        if (v < 0) digits[--d] = '-';
        put_text(buf, size, &n, digits + d, sizeof digits - (size_t)d);
    }
    if (size) buf[n < size ? n : size - 1] = 0;
    return (int)n;
}

int gt_kcfg_listed(const gt_kcfg *list, int n, const gt_kcfg *c) {
    for (int i = 0; i < n; i++)
        if (memcmp(&list[i], c, sizeof *c) == 0) return 1;
    return 0;
}

int gt_kcfg_parse(const char *text, gt_kcfg *c, char *why, size_t whysize) {
    memset(c, 0, sizeof *c);
    const char *p = text;
    for (int i = 0; i < gt_nkparams; i++) {
        size_t sl = strlen(gt_kparams[i].sep);
        if (gt_kparams[i].optional && strncmp(p, gt_kparams[i].sep, sl) != 0) {
            gt_kcfg_set(c, i, gt_kparams[i].values[0]);
            continue;
        }
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
        const char *end = p;
        long v = 0;
        for (; *end >= '0' && *end <= '9'; end++)
            if (v < 100000000) v = v * 10 + (*end - '0'); /* longer is refused below */
        int found = 0;
        for (int j = 0; j < gt_kparams[i].nvalues; j++) found |= gt_kparams[i].values[j] == v;
        /* One text per configuration: no leading zeros, an optional parameter's first
         * value left out. */
        if (!found || end - p > 6 || (*p == '0' && end - p > 1) ||
            (gt_kparams[i].optional && v == gt_kparams[i].values[0])) {
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
    /* dram_rate 0: a key does not say its device's memory (the model keeps the H100's). */
    memset(lim, 0, sizeof *lim);
    lim->max_threads_per_block = 1024;
    int cc = key->cc_major * 10 + key->cc_minor, kib = 48;
    if (cc >= 120) kib = 99;
    else if (cc >= 90) kib = 227;
    else if (cc == 80 || cc == 87) kib = 163;
    else if (cc >= 86) kib = 99;
    else if (cc == 70 || cc == 72) kib = 96;
    else if (cc == 75) kib = 64;
    lim->smem_per_block = kib * 1024;
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
    OPT("-DGT_DT=%d", key->dtype);
    /* A generic kernel takes the sizes as arguments: nothing of them is compiled in. */
    if (!c->generic) {
        OPT("-DGT_M=%lld", (long long)key->m);
        OPT("-DGT_N=%lld", (long long)key->n);
        OPT("-DGT_K=%lld", (long long)key->k);
    }
    OPT("-DGT_OPA=%d", key->opa);
    OPT("-DGT_OPB=%d", key->opb);
    OPT("-DGT_BETA0=%d", key->beta0);
    OPT("-DGT_ALIGN=%d", key->align);
    for (int i = 0; i < gt_nkparams; i++) OPT("-DGT_%s=%d", gt_kparams[i].name, gt_kcfg_get(c, i));
    OPT("-DGT_MINB=%d", gt_kcfg_min_blocks(c, key));
    OPT("-DGT_WS_COUNTERS=%d", WS_COUNTERS);
    OPT("-DGT_SPLIT_GROUP=%d", gt_kcfg_split_group(c));
    /* The launch's shared-memory size: each family checks it against its own layout at
     * compile time, so the two descriptions cannot drift apart unnoticed. */
    OPT("-DGT_SMEM_CHECK=%d", gt_kcfg_smem_bytes(c, key));
#undef OPT
    return n;
}

void gt_kcfg_default(gt_kcfg *c, const gt_key *key) {
    int es = esize(key);
    memset(c, 0, sizeof *c);
    if (gt_dtype_tensor_only(key->dtype)) {
        /* MMA, 64 x 64 tiles of 2 x 2 warps of 32 x 32, two instruction k slices per
         * step, 3 stages: legal for every shape and alignment on sm_80 and later (the
         * types need it; api.c refuses them below), each thread copying whole vectors of
         * 16 bytes at most. */
        c->fam = GT_FAM_MMA;
        c->bm = 64, c->bn = 64, c->bk = es == 4 ? 16 : 32;
        c->wm = 32, c->wn = 32;
        c->tm = 4, c->tn = 2;
        c->stages = 3;
        c->vec = gt_kcfg_widest_vec(key);
        c->split = 1;
        c->raster = 1;
        return;
    }
    /* SIMT, 256 threads (2 x 4 warps of 8 x 4 lanes, 4 x 4 each), 2 stages, no split:
     * legal for every shape, alignment and device, and not slow on large ones. The
     * vector is 8 bytes at most so each thread copies whole vectors of a 64 x 8 tile. */
    c->fam = GT_FAM_SIMT;
    c->bm = 64, c->bn = 64, c->bk = 8;
    c->wm = 32, c->wn = 16;
    c->tm = 4, c->tn = 4;
    c->stages = 2;
    c->vec = key->align >= 8 ? 8 / es : 1;
    c->split = 1;
    c->raster = 1;
}

int gt_kcfg_help(char *buf, size_t size) {
    int n = 0;
#define OUT(...) n += snprintf(buf + (n < (int)size ? n : (int)size), (size_t)n < size ? size - (size_t)n : 0, __VA_ARGS__)
    OUT("Kernel parameters (canonical text: fFAM_BMxBNxBK_wWMxWN_tTMxTN_sSTAGES_vVEC_kSPLIT_rRASTER,\n"
        "e.g. f0_128x128x16_w32x64_t8x8_s3_v4_k1_r8):\n");
    for (int i = 0; i < gt_nkparams; i++) {
        OUT("  %-6s %s; values:", gt_kparams[i].name, gt_kparams[i].help);
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
