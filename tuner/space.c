/*
 * space.c: candidate generation and ranking (space.h).
 *
 * Generation walks the structure of the families rather than the whole product of the
 * table: for SIMT, a thread tile (TM x TN), a lane layout (LM x LN = 32), a warp grid
 * (1, 2 or 4 warps each way) give the warp and block tiles; for DMMA and MMA, fragments
 * per warp and the warp grid. Each is crossed with BK, stages, split-K and rasterization and
 * given the widest vector; every constraint of tuner/kcfg.c then decides.
 *
 * The cost model is deliberately simple: arithmetic time from waves of blocks on the SMs
 * at an efficiency set by the thread tile (FMAs per shared-memory load) and occupancy,
 * against memory time from the bytes that must move (compulsory, the tiles' re-reads
 * through L2, and split-K's partials); the larger wins, plus a launch. It only has to put
 * the good candidates in the first few dozen; timing decides among them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rates of an H100-class part per SM (FLOP/us) and for the device (bytes/us); only
 * ratios matter for ranking. */
#define SM_FFMA_PER_US (2.0 * 128 * 1.755e3)
#define SM_DFMA_PER_US (2.0 * 64 * 1.755e3)
#define SM_DMMA_PER_US (2.0 * 128 * 1.755e3)
/* mma.sync f16/bf16 on an H100 SM: about 1024 FMA per clock (about 60% of wgmma's
 * dense rate); tf32 half of it. */
#define SM_HMMA_PER_US (2.0 * 1024 * 1.755e3)
/* wgmma: about twice mma.sync's rate (790 TFLOP/s measured by cuBLAS on 132 SMs). */
#define SM_HGMMA_PER_US (2.0 * 2048 * 1.755e3)
#define DRAM_BYTES_PER_US 3.0e6
/* The H100 SXM's memory, which DRAM_BYTES_PER_US was measured on (gt_space_dram_rate). */
#define H100_MEM_CLOCK_KHZ 2619000.0
#define H100_MEM_BUS_BITS 5120.0
#define L2_BYTES_PER_US 5.5e6
#define LAUNCH_US 3.0
/* Split-K's reduction per SM (bytes/us; about 16 bytes a clock): see below. */
#define SM_REDUCE_BYTES_PER_US 2.8e4
#define OVERLAP_LOSS 0.25
/* One round trip of a K step's copies (global memory to shared, then the barrier that
 * publishes them), in microseconds, for DMMA's floor below: what f64 1024 x 128 x 1024
 * NN's 32 x 32 tiles show with L2 emptied (time x (STAGES - 1) / K steps: 0.86 us in 3
 * stages, 1.1 in 4; H100). May be set at compile time, for dev/select_loo.c's trials. */
#ifndef STEP_LATENCY_US
#define STEP_LATENCY_US 1.0
#endif
/* MMA's copies narrower than cp.async's 4 bytes (16-bit elements in the 2-byte class) are
 * single-element loads through registers, and their count bounds the kernel: about this
 * many warp-wide loads per SM per microsecond. H100, every MMA candidate of nine bf16
 * shapes of bench/train.txt's odd ladder timed (1,018 timings): median 102, 100 to 125 per
 * shape, flat across tile sizes, stages and BK. */
#define SM_NARROW_LOADS_PER_US 105.0
/* The same bound holds MMA's copies of one 4-byte element (tf32 in the 4-byte class: a
 * cp.async of 4 bytes each), at about 80 warp-wide copies per SM per microsecond. H100,
 * generic tf32 MMA tiles in the 4-byte class chosen by mode cached (bench/README.md,
 * "tf32 in the 4-byte class"): 79 to 84 per SM on 997 x 1009 x 1013 TT, 4099 x 257 x 3001
 * TT and 123 x 4567 x 891 NN, 69 on 12544 x 64 x 147 NN (launch included). Without the
 * term the model rates those MMA tiles above WGMMA's packed ones, which run 2 to 3 times
 * faster. */
#define SM_NARROW4_LOADS_PER_US 80.0

double gt_space_dram_rate(int mem_clock_khz, int bus_bits) {
    if (mem_clock_khz <= 0 || bus_bits <= 0) return 0.0;
    double r = ((double)mem_clock_khz * bus_bits) / (H100_MEM_CLOCK_KHZ * H100_MEM_BUS_BITS);
    return fabs(r - 1.0) < 0.05 ? 1.0 : r;
}

/* The device's DRAM rate: the H100's, scaled by the device's peak (lim->dram_rate). */
static double dram_us_rate(const gt_klimits *lim) {
    return DRAM_BYTES_PER_US * (lim->dram_rate > 0 ? lim->dram_rate : 1.0);
}

static double cdivd(double a, double b) { return ceil(a / b); }

/* GEMV (gemm_gemv.cu): the bytes of W, X's re-reads by each tile through L2 and C, at
 * DRAM's rate scaled by the bytes in flight (about 64 KiB per SM reach it on the H100:
 * bf16 LM heads with 60 KiB ran at 2 TB/s, f32 ones with twice that at 2.9), against the FMAs (the small side padded to its tile) and
 * the 16-bit conversions at about 70% of the FMA pipe's rate. */
static double gemv_estimate_us(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim) {
    int lm = gt_kcfg_gemv_long_m(c), dot = gt_kcfg_gemv_dot(c, key);
    double L = (double)(lm ? key->m : key->n), S = (double)(lm ? key->n : key->m), K = (double)key->k;
    int bl, wl, bs;
    gt_kcfg_gemv_tile(c, &bl, &wl, &bs);
    double es = gt_dtype_in_size(key->dtype), esc = gt_dtype_out_size(key->dtype);
    int t = gt_kcfg_threads(c), sms = lim->sm_count > 0 ? lim->sm_count : 1;
    double tiles = cdivd(L, bl), blocks = tiles * c->split;
    int bps = gt_kcfg_blocks_per_sm(c, key, lim);
    if (bps < 1) bps = 1;
    double resident = fmin(blocks, (double)bps * sms);
    double per_thread = (c->tcore ? 2.0 * c->tm : dot ? (double)c->tm * wl : (double)c->tm) * 16.0;
    double inflight = resident * t * per_thread, want = 65536.0 * sms;
    double mem_eff = inflight >= want ? 1.0 : 0.1 + 0.9 * inflight / want;
    double dram = es * (L * K + S * K) + esc * L * S * (key->beta0 ? 1 : 2);
    double l2 = es * L * K + tiles * es * S * K;
    if (c->split > 1) {
        /* Every block writes its partials and the last of each tile reads them: the
         * workspace less its counters, twice. */
        double part = 2.0 * (double)(gt_kcfg_workspace_bytes(c, key) - 4 * GT_KCFG_WS_COUNTERS);
        dram += part, l2 += part;
    }
    double memory = fmax(dram / (dram_us_rate(lim) * mem_eff), l2 / L2_BYTES_PER_US);
    /* Tensor cores: the products cost nothing beside the bytes, only the loads' issue. */
    double fma = c->tcore ? L * K / 8.0 * (1.0 + bs / 8.0)
                          : L * K * bs * (key->dtype == GT_DT_F64 ? 2.0 : 1.0) + (es < 4 ? L * K : 0.0);
    /* X's loads: one per VEC k and small column (contiguous along K), else one per k,
     * shared by a DOT warp's rows; AXPY: one per k and small column per lane. */
    double xl = c->tcore ? 0.0
                : dot       ? L * K * bs / wl / (c->vec > 1 ? c->vec : 1)
                            : L * K * bs / gt_kcfg_gemv_wv(key);
    double compute = (fma + xl) / (sms * 128.0 * 1.755e3 * 0.7);
    /* A block with work left in only some of its warps at the end (few blocks) idles. */
    double waves = ceil(blocks / ((double)bps * sms));
    double tail = waves > 1 ? 1.0 + 0.5 / waves : 1.0;
    return (fmax(compute, memory) + OVERLAP_LOSS * fmin(compute, memory)) * tail +
           LAUNCH_US * (1.0 + (c->split > 1 ? 0.5 : 0.0));
}

double gt_space_estimate_us(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim) {
    if (c->fam == GT_FAM_GEMV) return gemv_estimate_us(c, key, lim);
    double M = (double)key->m, N = (double)key->n, K = (double)key->k;
    double es = gt_dtype_in_size(key->dtype), esc = gt_dtype_out_size(key->dtype);
    int t = gt_kcfg_threads(c);
    double gm = cdivd(M, c->bm), gn = cdivd(N, c->bn), tiles = gm * gn;
    double kps = cdivd(cdivd(K, c->bk), c->split) * c->bk; /* K per block */
    double blocks = tiles * c->split;

    int bps = gt_kcfg_blocks_per_sm(c, key, lim);
    if (bps < 1) bps = 1;
    int sms = lim->sm_count > 0 ? lim->sm_count : 1;
    double waves = ceil(blocks / ((double)sms * bps));
    double resident = blocks / sms < bps ? ceil(blocks / sms) : bps;

    double rate, eff;
    if (c->fam == GT_FAM_WGMMA) {
        /* Two consumer warpgroups keep the tensor cores busy while one waits or stores;
         * one leaves gaps. */
        rate = SM_HGMMA_PER_US * (key->dtype == GT_DT_TF32 ? 0.5 : 1.0);
        eff = c->bn / c->wn == 2 ? 0.85 : 0.7;
        /* f32_3xtf32: three tf32 instructions per product, and the consumers split every
         * stage into high and low parts first (shared-memory traffic the instructions
         * also need). */
        if (gt_dtype_split3(key->dtype)) rate = SM_HGMMA_PER_US * 0.5 / 3.0, eff *= 0.85;
        /* Clusters pay for keeping the pair in step; they gain only where L2 limits
         * (below): at bf16 4096^3 and 8192^3 they run level or slower on the H100. */
        if (c->tm > 1) eff *= 0.98;
    } else if (c->fam == GT_FAM_MMA) {
        /* A warp's fragments: TM m8 and TN n16 ones (ldmatrix) feed 2 TM x TN
         * instructions' worth of m8n8 products. */
        rate = SM_HMMA_PER_US * (key->dtype == GT_DT_TF32 ? 0.5 : 1.0);
        /* f32_3xtf32: three tf32 instructions per product, the low parts split in
         * registers and a partial added per k slice. Fitted to the H100, where the best
         * MMA kernels run level with SIMT's (about 47 TFLOP/s at 4096^3): the model ranks
         * them level so that both are timed. */
        if (gt_dtype_split3(key->dtype)) rate = SM_HMMA_PER_US * 0.5 / 3.0 * 1.1;
        double ai = (double)c->tm * 2.0 * c->tn / (c->tm + 2.0 * c->tn);
        eff = ai / (ai + 1.0);
    } else if (c->fam == GT_FAM_DMMA) {
        /* A warp's fragments: TM + TN loads feed TM x TN MMAs. */
        rate = SM_DMMA_PER_US;
        double ai = (double)c->tm * c->tn / (c->tm + c->tn);
        eff = ai / (ai + 0.5);
    } else {
        rate = key->dtype == GT_DT_F64 ? SM_DFMA_PER_US : SM_FFMA_PER_US;
        /* Per warp and k: TM x TN FMA instructions share the issue slot with TM / RVM +
         * TN / RVN shared-memory loads, and those loads take wavefronts (128 bytes of
         * distinct addresses each) of a pipe the SM's 4 schedulers share. */
        int rvm = c->tm % 4 == 0 ? 4 : c->tm % 2 == 0 ? 2 : 1;
        int rvn = c->tn % 4 == 0 ? 4 : c->tn % 2 == 0 ? 2 : 1;
        int lm = c->wm / c->tm, ln = c->wn / c->tn;
        double loads = (double)c->tm / rvm + (double)c->tn / rvn;
        double waves_a = (double)c->tm / rvm * ceil(lm * rvm * es / 128.0);
        double waves_b = (double)c->tn / rvn * ceil(ln * rvn * es / 128.0);
        double fma = (double)c->tm * c->tn * (key->dtype == GT_DT_F64 ? 2.0 : 1.0);
        eff = fma / (fma + loads + 1.0);
        /* Copies of under 16 bytes: more copy instructions and requests per K step. f32
         * 4095^3 (4-byte class) ran at 39 TFLOP/s against 47 for 4096^3 (H100). */
        int vb = c->vec * (int)es;
        eff *= vb >= 16 ? 1.0 : vb == 8 ? 0.92 : 0.83;
        /* A generic kernel (M, N and K its arguments) pays for such copies again: exact
         * and generic twins of five tiles with copies of 4 bytes on five f32 shapes of the
         * 4-byte class ran 1.01 to 1.56 times slower generic, 1.16 in the geometric mean,
         * 1.15 to 1.56 on the two TT shapes; with 16-byte copies of packed operands, 1.06
         * (H100). The model takes 1.2. */
        if (c->generic && vb < 16) eff *= 0.83;
        double smem_eff = fma / (4.0 * (waves_a + waves_b));
        if (smem_eff < 1.0) eff *= smem_eff;
    }
    /* A lone resident block stalls the whole SM at each barrier: on the H100, 256 x 128
     * tiles of 512 threads (one per SM) ran 2-4% slower than 256 x 64 or 128 x 128 tiles
     * of 256 threads (two per SM), and 128 x 256 up to 10%. */
    if (resident == 1 && blocks >= sms) eff *= 0.97;
    double warps = resident * t / 32.0;
    /* A SIMT thread tile over 64 outputs has that many more independent FMAs per k to
     * hide latency with: 16 x 8 tiles in one 256-thread block per SM (8 warps) run level
     * with 8 x 8 ones in two on the H100. */
    if (c->fam == GT_FAM_SIMT && c->tm * c->tn > 64) warps *= c->tm * c->tn / 64.0;
    if (warps < 8) eff *= warps / 8.0;
    else if (warps < 16) eff *= 0.9 + 0.1 * warps / 16.0;
    /* Tile intensity (outputs per operand element loaded): small or thin tiles pay in
     * copies, barriers and L2 requests per FLOP. */
    double inten = (double)c->bm * c->bn / (c->bm + c->bn);
    eff *= inten / (inten + 4.0);
    /* Second-order preferences, so that variants of one tile rank sensibly: SIMT tiles
     * with 2 stages run as fast as with 3 or 4, and faster where an operand is staged
     * through registers; DMMA ones prefer 3 or 4; BK 8 pays a barrier per 8 k; grouping
     * helps big grids. */
    if (c->fam == GT_FAM_SIMT) eff *= c->stages == 2 ? 1.0 : c->stages == 3 ? 0.995 : 0.99;
    else if (c->fam == GT_FAM_MMA) eff *= c->stages == 2 ? 0.97 : c->stages == 5 ? 0.99 : 1.0;
    else if (c->fam == GT_FAM_WGMMA) eff *= c->stages == 2 ? 0.95 : c->stages == 3 ? 0.99 : 1.0;
    else eff *= c->stages == 2 ? 0.995 : c->stages == 3 ? 1.0 : 0.99;
    /* MMA: by bytes per row along k (64: tf32 16, f16 32). */
    /* SIMT: by FMAs per barrier, so 16 x 8 thread tiles with BK 8 count as BK 16. */
    double bk_unit = c->fam == GT_FAM_MMA ? c->bk * es / 4.0
                     : c->fam == GT_FAM_SIMT && c->tm * c->tn > 64 ? c->bk * c->tm * c->tn / 64.0
                                                                  : c->bk;
    eff *= bk_unit < 16 ? 0.97 : bk_unit == 16 ? 1.0 : 0.99;
    if (tiles >= 2.0 * (lim->sm_count > 0 ? lim->sm_count : 1) && gm > 8)
        eff *= c->raster == 8 ? 1.0 : c->raster == 4 ? 0.995 : c->raster == 16 ? 0.99 : 0.98;
    /* Partial tiles waste the arithmetic of their idle part. */
    double flop_block = 2.0 * c->bm * c->bn * kps;
    double compute = waves * flop_block * resident / (rate * eff);

    double dram = es * (M * K + K * N) + esc * M * N * (key->beta0 ? 1 : 2);
    gt_kpack pk;
    int packs = gt_kcfg_pack_layout(c, key, &pk);
    /* WGMMA clusters of TM blocks read each B tile once per cluster. TMA moves a box in
     * rows of 128 bytes; where an operand's column pitch (its leading dimension, taken
     * at its minimum, or its copy's) is not a multiple of 128 bytes, every row spans two
     * lines of L2, which halves the rate L2 gives that operand. bf16 11008 x 4096 x 3000
     * TN (pitch 6000 bytes), 128 x 256 tiles: 669 us alone, 449 us clustered, both 4.7
     * TB/s of the model's L2 bytes; at K = 4096, 474 and 476 us, 9.1 TB/s and more
     * (H100; bench/README.md, "TMA rows across two lines"). */
    double l2_a = 1.0, l2_b = 1.0;
    if (c->fam == GT_FAM_WGMMA) {
        long long pa = packs && pk.mode_a != GT_KPACK_NONE ? pk.lda : key->opa ? key->k : key->m;
        long long pb = packs && pk.mode_b != GT_KPACK_NONE ? pk.ldb : key->opb ? key->n : key->k;
        if ((long long)(pa * es) % 128 != 0) l2_a = 2.0;
        if ((long long)(pb * es) % 128 != 0) l2_b = 2.0;
    }
    double l2 = es * (M * K * gn * l2_a + K * N * gm * l2_b / (c->fam == GT_FAM_WGMMA ? c->tm : 1));
    /* gt_pack reads operands and writes their copies first, in a launch of its own before
     * the GEMM; a transposed copy (through shared memory) reaches less of DRAM's rate. */
    double pack_us = 0.0;
    if (packs)
        for (int o = 0; o < 2; o++) {
            gt_kpack_mode m = o ? pk.mode_b : pk.mode_a;
            double bytes = 2.0 * es * (o ? K * N : M * K);
            pack_us += m == GT_KPACK_NONE ? 0.0 : bytes / (dram_us_rate(lim) * (m == GT_KPACK_TRANSPOSE ? 0.7 : 1.0));
        }
    double reduce_us = 0.0;
    if (c->split > 1) {
        /* Every block writes its partials; the last of each tile reads them back. */
        double acc = key->dtype == GT_DT_F64 ? 8.0 : 4.0;
        double part = acc * tiles * c->split * c->bm * c->bn * 2.0;
        dram += part;
        l2 += part;
        /* And that is serial at the end of each tile: one block writes its partial, the
         * last one reads all SPLIT of them, each at one SM's share of L2 (in two levels,
         * gt_kcfg_split_group: a group's last reads the group's and writes their sum, the
         * last of those reads the group sums). The rate is fitted to the H100 with every
         * candidate of f32 and f64 1024^3 timed (split and unsplit tiles of the same
         * blocks and FLOPs per block). The tensor-core families get half SIMT's rate: at
         * a quarter, DMMA's 128 x 128 tiles in 32 splits, fastest for f64
         * 256x256x65536, rank out of the timed set. */
        int group = gt_kcfg_split_group(c), groups = c->split / group;
        double passes = groups > 1 ? 2.0 + group + groups : 1.0 + c->split;
        reduce_us = acc * c->bm * c->bn * passes /
                    ((c->fam == GT_FAM_SIMT ? 4.0 : 2.0) * SM_REDUCE_BYTES_PER_US);
    }
    /* Without grouping, a wave of blocks sweeps whole tile columns and re-reads A from
     * DRAM once per column; grouping keeps it in L2. */
    if (c->raster == 1 && tiles > 2.0 * sms && gm > 8) dram += es * M * K * (gn / 4.0);
    /* DRAM reaches its rate only with enough bytes in flight (about 32 KiB per SM):
     * the copies of STAGES - 1 stages of every resident block. */
    double inflight = resident * (c->stages - 1) * (double)(c->bm + c->bn) * c->bk * es;
    double mem_eff = inflight >= 32768.0 ? 1.0 : 0.25 + 0.75 * inflight / 32768.0;
    /* MMA's and DMMA's per-thread copies of under 16 bytes reach less of DRAM's rate: bf16
     * 1 x 128256 x 4096 NT in the 2-byte class ran at 0.42 of the rate its bytes allow
     * (MMA 8 x 256 tiles, H100). */
    double narrow_us = 0.0;
    if (c->fam == GT_FAM_MMA || c->fam == GT_FAM_DMMA) {
        int vb = c->vec * (int)es;
        mem_eff *= vb >= 16 ? 1.0 : vb == 8 ? 0.8 : vb == 4 ? 0.6 : 0.45;
        /* Under 4 bytes (gemm_mma.cu's STAGED): each block loads (BM + BN) x kps elements
         * one by one, its SM's share of all of them at the narrow rate. Without this term
         * the model puts such kernels at a quarter to a third of their time (bf16 383 x
         * 6143 x 1535 NN: MMA 192 x 96 tiles estimated 32 us, run in 128; WGMMA, whose
         * packs copy the operands aligned first, estimated 35, run in 46). */
        if (c->fam == GT_FAM_MMA && vb <= 4) {
            double loads = blocks * (c->bm + c->bn) * kps / c->vec / 32.0;
            narrow_us = loads / fmin(blocks, (double)sms) /
                        (vb < 4 ? SM_NARROW_LOADS_PER_US : SM_NARROW4_LOADS_PER_US);
        }
    }
    /* TMA's bulk copies reach about twice the L2 rate of per-thread copies: cuBLAS's
     * 4096^3 bf16 moves 1.6 GB of 256 x 128 tiles through L2 in 170 us. */
    double l2_rate = L2_BYTES_PER_US * (c->fam == GT_FAM_WGMMA ? 2.0 : 1.0);
    double memory = fmax(fmax(dram / (dram_us_rate(lim) * mem_eff), l2 / l2_rate), narrow_us);
    /* Arithmetic and copies overlap only in part (each block first waits for its data,
     * and the last ones compute alone): where memory bounds, a faster kernel still
     * gains. f64 65536 x 64 x 64 (22 us of bytes): DMMA took 29 us, DFMA 44 (H100). */
    double loop = fmax(compute, memory) + OVERLAP_LOSS * fmin(compute, memory);
    /* Little's law per block, DMMA: its copies go straight to shared memory (cp.async), so
     * STAGES - 1 K steps are all a block has in flight, and its K loop takes at least its
     * steps / (STAGES - 1) round trips however few bytes each moves. A floor under the
     * whole loop, not a memory term: a tile whose arithmetic covers its round trips pays
     * nothing for them. Thin tiles on few blocks per SM are bound by it (f64 1024 x 128 x
     * 1024 NN, 32 x 32 tiles, one block per SM, L2 emptied first: 16-deep steps in 4
     * stages 23.5 us, 32-deep 18.7, H100). */
    if (c->fam == GT_FAM_DMMA)
        loop = fmax(loop, waves * (kps / c->bk) / (c->stages > 1 ? c->stages - 1 : 1) *
                              STEP_LATENCY_US);
    return loop + reduce_us + pack_us +
           LAUNCH_US * (1.0 + (c->split > 1 ? 0.5 : 0.0) + (packs ? 1.0 : 0.0));
}

double gt_space_estimate_fixed_us(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim,
                                  const gt_modelfix *fix) {
    return gt_space_estimate_us(c, key, lim) * gt_modelfix_factor(fix, c);
}

/* The kept set is compiled and timed in order until the budget is spent, and where
 * split-K ranks first the unsplit quarter of it would come last and go untimed (for f64
 * 128x4096x4096 NT, whose fastest kernel is DMMA 64 x 64 unsplit, estimated 1.15x the
 * best). So an unsplit candidate estimated within GT_SPACE_UNSPLIT_NEAR of the best goes
 * no later than after GT_SPACE_SPLIT_RUN split ones; the rest keep their order (by
 * estimate). */
static void interleave_unsplit(gt_cand *c, int n) {
    if (n < 2) return;
    gt_cand *out = malloc(sizeof *out * (size_t)n);
    unsigned char *used = calloc((size_t)n, 1);
    if (!out || !used) {
        free(out), free(used);
        return; /* the order by estimate stays */
    }
    const double near = c[0].est_us * GT_SPACE_UNSPLIT_NEAR;
    /* Taken ones only ever get marked, so both cursors only move forward. */
    int no = 0, run = 0, next = 0, next_unsplit = 0;
    while (no < n) {
        while (used[next]) next++; /* the next in estimate order (no < n: one is left) */
        while (next_unsplit < n && (used[next_unsplit] || c[next_unsplit].cfg.split != 1 ||
                                    c[next_unsplit].est_us > near))
            next_unsplit++;
        const int i = c[next].cfg.split > 1 && run >= GT_SPACE_SPLIT_RUN && next_unsplit < n
                          ? next_unsplit
                          : next;
        run = c[i].cfg.split > 1 ? run + 1 : 0;
        used[i] = 1;
        out[no++] = c[i];
    }
    memcpy(c, out, sizeof *out * (size_t)n);
    free(out), free(used);
}

/* The best GEMV candidate goes to GT_SPACE_GEMV_BY at the latest (space.h), so that a budget
 * spent before the end of the list still times it. */
#define GEMV_BY GT_SPACE_GEMV_BY
static void gemv_early(gt_cand *c, int n) {
    int g = 0;
    while (g < n && c[g].cfg.fam != GT_FAM_GEMV) g++;
    if (g >= n || g <= GEMV_BY) return;
    gt_cand best = c[g];
    memmove(&c[GEMV_BY + 1], &c[GEMV_BY], sizeof *c * (size_t)(g - GEMV_BY));
    c[GEMV_BY] = best;
}

/* By estimate, ties broken by the parameters in table order, so that the kept set is
 * the same with every C library's qsort. */
static int by_estimate(const void *a, const void *b) {
    const gt_cand *p = a, *q = b;
    if (p->est_us != q->est_us) return p->est_us < q->est_us ? -1 : 1;
    for (int i = 0; i < gt_nkparams; i++) {
        int x = gt_kcfg_get(&p->cfg, i), y = gt_kcfg_get(&q->cfg, i);
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

typedef struct {
    const gt_key *key;
    const gt_klimits *lim;
    int flags;
    const gt_modelfix *fix; /* the model's correction, or NULL */
    gt_cand *cands;
    int n, cap;
    gt_space_counts *counts;
    /* gt_space_tile_only and gt_space_selective (below), looked up once per build. */
    const gt_kconstraint *tile[8], *fast[4];
} builder;

static int param_index(const char *name) {
    for (int i = 0; i < gt_nkparams; i++)
        if (strcmp(gt_kparams[i].name, name) == 0) return i;
    return -1;
}

/* Constraints that read only the family, the block, warp and thread tiles, the key and
 * the limits (kcfg.c): a tile shape that fails one fails it with every BK, stages, split,
 * raster and vector, so the space tests them once per tile shape rather than once per
 * variant (hundreds of them), without changing what survives (space.h). */
const char *const gt_space_tile_only[] = {"family_fits", "warp_layout", "whole_warps",
                                          "reasonable_block", "warp_not_idle", "dmma_shape",
                                          "enough_work_per_thread", "thread_tile_fits"};
const int gt_space_ntile_only = (int)(sizeof gt_space_tile_only / sizeof gt_space_tile_only[0]);

/* Cheap constraints that reject most variants (split-K and grouping where they cannot
 * help, BK outside the family's steps), tried before the full check: a variant failing
 * one fails gt_kcfg_check too, so the result is the same, only sooner (space.h). */
const char *const gt_space_selective[] = {"split_needed", "raster_useful", "k_step",
                                          "split_has_work"};
const int gt_space_nselective = (int)(sizeof gt_space_selective / sizeof gt_space_selective[0]);

_Static_assert(sizeof gt_space_selective / sizeof gt_space_selective[0] == 4,
               "builder.fast holds 4");
_Static_assert(sizeof gt_space_tile_only / sizeof gt_space_tile_only[0] <= 8,
               "builder.tile holds 8");

/* The constraints named in names[0..n), into out (NULL where none has the name). */
static void lookup(const char *const *names, int n, const gt_kconstraint **out) {
    for (int t = 0; t < n; t++) {
        out[t] = NULL;
        for (int i = 0; i < gt_nkconstraints; i++)
            if (strcmp(gt_kconstraints[i].name, names[t]) == 0) out[t] = &gt_kconstraints[i];
    }
}

/* 1 when c fails one of cs[0..n). */
static int any_fails(const builder *b, const gt_kconstraint *const *cs, int n, const gt_kcfg *c) {
    for (int t = 0; t < n; t++)
        if (cs[t] && !cs[t]->ok(c, b->key, b->lim)) return 1;
    return 0;
}

/* Crosses a tile shape with BK, stages, split and raster; keeps what passes. */
static int add_variants(builder *b, gt_kcfg c) {
    const gt_kparam *pk = &gt_kparams[param_index("BK")], *ps = &gt_kparams[param_index("STAGES")],
                    *pl = &gt_kparams[param_index("SPLIT")], *pr = &gt_kparams[param_index("RASTER")];
    int es = gt_dtype_in_size(b->key->dtype), widest = gt_kcfg_widest_vec(b->key);
    /* SIMT on a narrower class than 16 bytes: also 16-byte vectors from aligned copies
     * of A and B (kcfg.h, gt_kcfg_simt_packs). */
    int packed = c.fam == GT_FAM_SIMT && widest * es < 16 ? 16 / es : 0;
    /* 5 stages are for MMA's short K steps (SIMT and DMMA were as fast with 2 to 4); not
     * generated elsewhere, so their spaces stay as they were. */
    int five = c.fam != GT_FAM_MMA && c.fam != GT_FAM_WGMMA;
    c.vec = widest, c.bk = pk->values[0], c.stages = ps->values[0], c.split = pl->values[0];
    c.raster = pr->values[0];
    if (any_fails(b, b->tile, gt_space_ntile_only, &c)) {
        /* Counted as if each variant had been generated and pruned. */
        int stages = 0;
        for (int is = 0; is < ps->nvalues; is++) stages += !(five && ps->values[is] == 5);
        int variants = (packed ? 2 : 1) * pk->nvalues * stages * pl->nvalues * pr->nvalues;
        b->counts->generated += variants;
        b->counts->pruned += variants;
        return 0;
    }
    /* fast_ok[ik][il][ir]: the selective constraints pass for that BK, split and raster;
     * they read no other variant field, so each combination is tested once per tile
     * shape, not once per stage count and vector as well. */
    unsigned char fast_ok[GT_KPARAM_MAX_VALUES][GT_KPARAM_MAX_VALUES]
                         [GT_KPARAM_MAX_VALUES];
    for (int ik = 0; ik < pk->nvalues; ik++)
        for (int il = 0; il < pl->nvalues; il++)
            for (int ir = 0; ir < pr->nvalues; ir++) {
                c.bk = pk->values[ik], c.split = pl->values[il], c.raster = pr->values[ir];
                fast_ok[ik][il][ir] =
                    !any_fails(b, b->fast, gt_space_nselective, &c);
            }
    for (int iv = 0; iv < (packed ? 2 : 1); iv++)
    for (int ik = 0; ik < pk->nvalues; ik++)
        for (int is = 0; is < ps->nvalues; is++)
            for (int il = 0; il < pl->nvalues; il++)
                for (int ir = 0; ir < pr->nvalues; ir++) {
                    c.vec = iv ? packed : widest;
                    c.bk = pk->values[ik];
                    c.stages = ps->values[is];
                    if (c.stages == 5 && five) continue;
                    c.split = pl->values[il];
                    c.raster = pr->values[ir];
                    b->counts->generated++;
                    if (!fast_ok[ik][il][ir] ||
                        ((b->flags & GT_SPACE_SAME_ORDER) && !gt_kcfg_same_order(&c, b->key)) ||
                        gt_kcfg_check(&c, b->key, b->lim, GT_KC_LEGAL | GT_KC_PRUNE)) {
                        b->counts->pruned++;
                        continue;
                    }
                    if (b->n == b->cap) {
                        int cap = b->cap ? 2 * b->cap : 1024;
                        gt_cand *m = realloc(b->cands, sizeof *m * (size_t)cap);
                        if (!m) return -1;
                        b->cands = m, b->cap = cap;
                    }
                    /* Padding too: two builds compare equal byte for byte. */
                    memset(&b->cands[b->n], 0, sizeof b->cands[b->n]);
                    b->cands[b->n].cfg = c;
                    b->cands[b->n].est_us = gt_space_estimate_fixed_us(&c, b->key, b->lim, b->fix);
                    b->n++;
                }
    return 0;
}

/* Same family, block, warp and thread tiles and split. */
static int same_shape(const gt_kcfg *a, const gt_kcfg *b) {
    return a->fam == b->fam && a->bm == b->bm && a->bn == b->bn && a->wm == b->wm &&
           a->wn == b->wn && a->tm == b->tm && a->tn == b->tn && a->split == b->split;
}
/* Same shape, K step and stages: differs at most in rasterization, which moved the time
 * of the H100's winners by under 1%. */
static int same_but_raster(const gt_kcfg *a, const gt_kcfg *b) {
    return same_shape(a, b) && a->bk == b->bk && a->stages == b->stages;
}

static int in_values(const char *name, int v) {
    const gt_kparam *p = &gt_kparams[param_index(name)];
    for (int j = 0; j < p->nvalues; j++)
        if (p->values[j] == v) return 1;
    return 0;
}

int gt_space_build(const gt_key *key, const gt_klimits *lim, int max, int flags, gt_cand **out,
                   gt_space_counts *counts) {
    return gt_space_build_fixed(key, lim, max, flags, NULL, out, counts);
}

int gt_space_build_fixed(const gt_key *key, const gt_klimits *lim, int max, int flags,
                         const gt_modelfix *fix, gt_cand **out, gt_space_counts *counts) {
    memset(counts, 0, sizeof *counts);
    builder b = {.key = key, .lim = lim, .flags = flags, .fix = fix, .counts = counts};
    lookup(gt_space_tile_only, gt_space_ntile_only, b.tile);
    lookup(gt_space_selective, gt_space_nselective, b.fast);
    static const int warps[] = {1, 2, 4};
    const gt_kparam *ptm = &gt_kparams[param_index("TM")], *ptn = &gt_kparams[param_index("TN")];
    for (int fam = GT_FAM_SIMT; fam <= GT_FAM_GEMV; fam++) {
        gt_kcfg c;
        memset(&c, 0, sizeof c);
        c.fam = fam;
        /* Families that cannot fit the key are not generated. */
        if (!gt_kcfg_family_fits(fam, key)) continue;
        if (fam == GT_FAM_GEMV) {
            /* Each orientation whose small side is at most 16, in the layout the key
             * gives it: DOT warps of WL rows, AXPY warps of 32 lanes of 16 bytes of rows,
             * 1 to 8 of them along the long side; TM loads in flight, TN warps along K. */
            static const int p2[] = {1, 2, 4, 8};
            int wv = gt_kcfg_gemv_wv(key);
            for (int lm = 1; lm >= 0; lm--) {
                long long small = lm ? key->n : key->m;
                if (small > 16) continue;
                int bs = 1;
                while (bs < small) bs *= 2;
                int dot = gt_key_gemv_dot(key, lm);
                for (int iw = 0; iw < (dot ? 4 : 1); iw++)
                    for (int il = 0; il < 4; il++)
                        for (int im = 0; im < 4; im++)
                            for (int in = 0; in < 4; in++) {
                                int wl = dot ? p2[iw] : 32 * wv, bl = wl * p2[il];
                                c.tm = p2[im], c.tn = p2[in];
                                if (lm) c.bm = bl, c.wm = wl, c.bn = c.wn = bs;
                                else c.bn = bl, c.wn = wl, c.bm = c.wm = bs;
                                if (gt_kcfg_gemv_long_m(&c) != lm || !in_values("BM", c.bm) ||
                                    !in_values("BN", c.bn) || !in_values("WM", c.wm) ||
                                    !in_values("WN", c.wn))
                                    continue;
                                if (add_variants(&b, c) != 0) {
                                    free(b.cands);
                                    return -1;
                                }
                            }
                /* Tensor cores (gemv_layout says where): warps of 16 rows, the small side
                 * in tiles of 8 or 16. */
                if (dot && gt_dtype_in_size(key->dtype) == 2 && small <= 16) {
                    int tbs = small <= 8 ? 8 : 16;
                    for (int il = 0; il < 4; il++)
                        for (int im = 0; im < 4; im++)
                            for (int in = 0; in < 4; in++) {
                                c.tm = p2[im], c.tn = p2[in];
                                if (lm) c.bm = 16 * p2[il], c.wm = 16, c.bn = c.wn = tbs;
                                else c.bn = 16 * p2[il], c.wn = 16, c.bm = c.wm = tbs;
                                if (gt_kcfg_gemv_long_m(&c) != lm) continue;
                                c.tcore = 1;
                                int r = add_variants(&b, c);
                                c.tcore = 0;
                                if (r != 0) {
                                    free(b.cands);
                                    return -1;
                                }
                            }
                }
            }
            continue;
        }
        if (fam == GT_FAM_WGMMA) {
            /* Instructions of BM columns, TN per consumer warpgroup, 1 or 2 of those. */
            static const int bms[] = {64, 128, 192, 256};
            /* TM: clusters of 1 or 2 blocks (2: B's tile multicast to the pair). */
            for (int i = 0; i < 4; i++)
                for (int tn = 1; tn <= 2; tn++)
                    for (int cw = 1; cw <= 2; cw++)
                        for (int cl = 1; cl <= 2; cl++) {
                            c.bm = c.wm = bms[i], c.tm = cl, c.tn = tn;
                            c.wn = 64 * tn, c.bn = cw * c.wn;
                            if (add_variants(&b, c) != 0) {
                                free(b.cands);
                                return -1;
                            }
                        }
            continue;
        }
        for (int i = 0; i < ptm->nvalues; i++)
            for (int j = 0; j < ptn->nvalues; j++)
                for (int lm = 1; lm <= 32; lm *= 2)
                    for (int wy = 0; wy < 3; wy++)
                        for (int wx = 0; wx < 3; wx++) {
                            c.tm = ptm->values[i], c.tn = ptn->values[j];
                            if (fam == GT_FAM_DMMA) {
                                if (lm > 1) continue; /* no lane layout: fragments */
                                c.wm = 8 * c.tm, c.wn = 8 * c.tn;
                            } else if (fam == GT_FAM_MMA) {
                                if (lm > 1) continue;
                                c.wm = 8 * c.tm, c.wn = 16 * c.tn;
                            } else {
                                c.wm = lm * c.tm, c.wn = (32 / lm) * c.tn;
                            }
                            c.bm = warps[wy] * c.wm, c.bn = warps[wx] * c.wn;
                            if (!in_values("BM", c.bm) || !in_values("BN", c.bn) ||
                                !in_values("WM", c.wm) || !in_values("WN", c.wn))
                                continue; /* not expressible in the table */
                            if (add_variants(&b, c) != 0) {
                                free(b.cands);
                                return -1;
                            }
                        }
    }
    if (b.n) qsort(b.cands, (size_t)b.n, sizeof *b.cands, by_estimate);
    if (max > 0 && b.n > max) {
        /* The model cannot tell K steps, stages and rasterization of one tile shape
         * apart well: take at most PER_SHAPE of each shape in the first pass, so the
         * budget covers many shapes, then fill up in rank order. */
        enum { PER_SHAPE = 3 };
        /* Split-K's partials are cheap in the model but not always on the device:
         * the first pass also keeps a quarter of the budget for unsplit kernels. */
        int unsplit_want = max / 4, unsplit = 0;
        /* SIMT's 16 x 8 thread tiles (A transposed only) rank level with 8 x 8 ones, which
         * still won on some such shapes: an eighth of the budget at most (at least 1). */
        int big_most = max < 8 ? 1 : max / 8, big = 0;
        /* GEMV and the tile families are ranked by different models: where the shape has
         * GEMV candidates, a quarter of the budget is kept for them. */
        int gemv_want = 0, gemv = 0;
        for (int i = 0; i < b.n; i++) gemv_want += b.cands[i].cfg.fam == GT_FAM_GEMV;
        if (gemv_want > max / 4) gemv_want = max / 4;
        unsigned char *taken = calloc((size_t)b.n, 1);
        gt_cand *keep = malloc(sizeof *keep * (size_t)max);
        if (!taken || !keep) {
            free(taken), free(keep), free(b.cands);
            return -1;
        }
        int nk = 0;
        for (int pass = 0; pass < 2 && nk < max; pass++)
            for (int i = 0; i < b.n && nk < max; i++) {
                if (taken[i]) continue;
                const int is_gemv = b.cands[i].cfg.fam == GT_FAM_GEMV;
                /* (GEMV's quarter is its own, split or not.) */
                if (pass == 0 && !is_gemv && b.cands[i].cfg.split > 1 &&
                    nk - unsplit >= max - unsplit_want)
                    continue; /* the rest is kept for unsplit kernels */
                if (pass == 0 && !is_gemv && nk - gemv >= max - gemv_want) continue;
                const int is_big = b.cands[i].cfg.fam == GT_FAM_SIMT &&
                                   b.cands[i].cfg.tm * b.cands[i].cfg.tn > 64;
                if (is_big && big >= big_most) continue;
                if (pass == 0) {
                    /* Variants of one shape differ in K step or stages first. */
                    int same = 0, raster_only = 0;
                    for (int j = 0; j < nk; j++) {
                        same += same_shape(&keep[j].cfg, &b.cands[i].cfg);
                        raster_only |= same_but_raster(&keep[j].cfg, &b.cands[i].cfg);
                    }
                    if (same >= PER_SHAPE || raster_only) continue;
                }
                taken[i] = 1;
                unsplit += b.cands[i].cfg.split == 1;
                big += is_big;
                gemv += is_gemv;
                keep[nk++] = b.cands[i];
            }
        qsort(keep, (size_t)nk, sizeof *keep, by_estimate);
        interleave_unsplit(keep, nk);
        gemv_early(keep, nk);
        free(taken);
        free(b.cands);
        b.cands = keep;
        counts->ranked_out = b.n - nk;
        b.n = nk;
    }
    counts->kept = b.n;
    *out = b.cands ? b.cands : malloc(sizeof(gt_cand));
    if (!*out) return -1;
    return b.n;
}
