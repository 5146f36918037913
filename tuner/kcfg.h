/*
 * kcfg.h: the kernel family's parameters, described once.
 *
 * One table (gt_kparams) gives each tunable parameter its name, its place in the
 * canonical text, its allowed values and its meaning. From it come the candidate space
 * (tuner/space.c), the NVRTC options (-DGT_<NAME>=v), the canonical text stored in the
 * cache ("f0_128x64x8_w64x32_t8x4_s2_v4_k1_r1", "..._r1_g1" for a shape-generic kernel), its parser, and the `--help` text of the command.
 * Constraints are named predicates with their reason; "legal" ones decide whether a
 * configuration can run correctly at all (checked for every configuration read from a
 * cache file), "prune" ones only keep the tuner from timing hopeless candidates.
 */
#ifndef GT_KCFG_H
#define GT_KCFG_H

#include <stddef.h>

#include "key.h"

/* Kernel families, one source each in kernel_src/. */
enum {
    GT_FAM_SIMT = 0, /* gemm_simt.cu: FFMA / DFMA, f32 and f64 */
    GT_FAM_DMMA = 1, /* gemm_dmma.cu: f64 tensor cores (mma.sync m8n8k4), sm_80 and later */
    GT_FAM_MMA = 2,  /* gemm_mma.cu: tf32, f16, bf16, f32_3xtf32 tensor cores (mma.sync), sm_80+ */
    GT_FAM_WGMMA = 3, /* gemm_wgmma.cu: tf32, f16, bf16 (and f32_3xtf32) warpgroup MMA fed by
                         TMA, sm_90a only */
    GT_FAM_GEMV = 4,  /* gemm_gemv.cu: byte-bound shapes (one of M and N at most 16), every
                         type, FMA in the compute type */
};

/* One configuration of a family (the macros of kernel_src/common.cuh). */
typedef struct gt_kcfg {
    int fam;         /* GT_FAM_* */
    int bm, bn, bk;  /* block tile and K step */
    int wm, wn;      /* warp tile (WGMMA: of a consumer warpgroup, WM = BM) */
    int tm, tn;      /* thread tile (SIMT); m8n8 fragments per warp (DMMA); m8 and n16
                        fragments per warp (MMA); WGMMA: 1 and instructions of 64 columns
                        per consumer warpgroup */
    int stages;      /* shared-memory stages */
    int vec;         /* global vector width in elements */
    int split;       /* split-K factor */
    int raster;      /* tile rows per rasterization group (1: plain column order) */
    int tcore;       /* GEMV: 1 multiplies on tensor cores (mma.sync), 0 with FMA */
    int generic;     /* 1: M, N and K are the kernel's arguments (one binary serves every
                        shape of the key's class); 0: compiled for the exact shape */
} gt_kcfg;

#define GT_KPARAM_MAX_VALUES 24

typedef struct gt_kparam {
    const char *name;   /* option GT_<NAME>, also the name in --help */
    const char *sep;    /* text before the value in the canonical string */
    size_t offset;      /* into gt_kcfg */
    int values[GT_KPARAM_MAX_VALUES];
    int nvalues;
    const char *help;
    int optional;       /* 1: the canonical text omits it at its first value, and the
                           parser takes that value when it is absent */
} gt_kparam;

extern const gt_kparam gt_kparams[];
extern const int gt_nkparams;

/* What a configuration is checked against: the problem and the device's limits. */
typedef struct gt_klimits {
    int max_threads_per_block;
    int smem_per_block;       /* shared memory per block, with the opt-in */
    int regs_per_block;
    int regs_per_sm;
    int sm_count;
    double dram_rate;         /* the device's DRAM peak over the H100 SXM's (3.35 TB/s),
                               * from its memory clock and bus width; 0: 1 (the cost
                               * model's rates are the H100's) */
} gt_klimits;

enum { GT_KC_LEGAL = 1, GT_KC_PRUNE = 2 };

typedef struct gt_kconstraint {
    const char *name;
    int kind;             /* GT_KC_LEGAL or GT_KC_PRUNE */
    const char *reason;
    int (*ok)(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim);
} gt_kconstraint;

extern const gt_kconstraint gt_kconstraints[];
extern const int gt_nkconstraints;

static inline int gt_kcfg_get(const gt_kcfg *c, int i) {
    return *(const int *)((const char *)c + gt_kparams[i].offset);
}
static inline void gt_kcfg_set(gt_kcfg *c, int i, int v) {
    *(int *)((char *)c + gt_kparams[i].offset) = v;
}

/* Canonical text, e.g. "f0_128x128x16_w32x64_t8x8_s3_v4_k1_r8". Returns the length needed
 * (like snprintf). */
int gt_kcfg_format(const gt_kcfg *c, char *buf, size_t size);

/* 1 when c is one of list[0..n) (every parameter equal), else 0. */
int gt_kcfg_listed(const gt_kcfg *list, int n, const gt_kcfg *c);
/* Parses canonical text; every value must be one the table allows. Returns 0 on success,
 * else -1 with the reason in why. */
int gt_kcfg_parse(const char *text, gt_kcfg *c, char *why, size_t whysize);

/* Returns NULL when c satisfies every constraint of the kinds in `kinds` (a mask of
 * GT_KC_*), else the first failing constraint. */
const gt_kconstraint *gt_kcfg_check(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim,
                                    int kinds);

/* Limits of the key's compute capability as published (1024 threads and 64 Ki registers
 * per block; shared memory with the opt-in: 99 KiB on 12.x, 227 KiB on 9.x and 10.x,
 * 163 KiB on 8.0 and 8.7, 99 KiB on other 8.x, 96 KiB on 7.0, 64 KiB on 7.5, else
 * 48 KiB); sm_count from the key. For
 * checking a configuration read from a file on a machine without that GPU. */
void gt_kcfg_limits_generic(const gt_key *key, gt_klimits *lim);

/* Parses text and checks every legal constraint for key and lim: 0 when the
 * configuration may be compiled and run, else -1 with a message naming the entry and
 * the reason (the parser's, or the failing constraint's name and reason) in why. */
int gt_kcfg_validate(const char *text, const gt_key *key, const gt_klimits *lim, gt_kcfg *out,
                     char *why, size_t whysize);

/* GEMV (gemm_gemv.cu): the long side is M when BM >= BN, else N; the small side's tile
 * (BS, at most 16) covers that dimension whole. DOT when the large operand is stored
 * contiguous along K, else AXPY (its lanes along the long side). */
int gt_kcfg_gemv_long_m(const gt_kcfg *c);
int gt_kcfg_gemv_dot(const gt_kcfg *c, const gt_key *key);
/* The layout a GEMV kernel takes for key (gemm_gemv.cu's W_KCONTIG). */
int gt_key_gemv_dot(const gt_key *key, int long_m);
/* A GEMV configuration's rows of the long side per block (bl) and per warp (wl), and the
 * small side's tile (bs): gemm_gemv.cu's BL, WL and BS. */
void gt_kcfg_gemv_tile(const gt_kcfg *c, int *bl, int *wl, int *bs);
/* Elements of a 16-byte chunk of key's large operand: what a GEMV lane reads at a time. */
int gt_kcfg_gemv_wv(const gt_key *key);

/* Derived values, computed in one place (mirroring kernel_src/common.cuh and the
 * families' sources). */
int gt_kcfg_threads(const gt_kcfg *c);
/* The launch bound's minimum blocks per SM (GT_MINB): caps registers near the
 * estimate, so that small blocks keep several resident without forcing spills. */
int gt_kcfg_min_blocks(const gt_kcfg *c, const gt_key *key);
int gt_kcfg_smem_bytes(const gt_kcfg *c, const gt_key *key);
/* 1 when a WGMMA configuration stores C through shared memory and TMA (gemm_wgmma.cu's
 * EPI_TMA: 16-bit C, beta 0, the 16-byte class, M a multiple of 8, and two 8 KiB staging
 * boxes per consumer warpgroup fit beside the stages within 227 KiB): its launch then
 * takes a tensor map of C too. */
int gt_kcfg_wgmma_tma_store(const gt_kcfg *c, const gt_key *key);
/* Resident blocks per SM by threads, registers (estimate) and shared memory, at most 32
 * (0 when one does not fit): the occupancy constraint and the cost model both use it. */
int gt_kcfg_blocks_per_sm(const gt_kcfg *c, const gt_key *key, const gt_klimits *lim);
int gt_kcfg_regs_estimate(const gt_kcfg *c, const gt_key *key);
void gt_kcfg_grid(const gt_kcfg *c, const gt_key *key, unsigned grid[3], unsigned block[3]);
/* Split-K tile counters at the start of every workspace (one per tile, and one per group
 * of splits of each tile where the reduction takes two levels, so at most this many per
 * split-K plan); the kernels get the number as -DGT_WS_COUNTERS. */
#define GT_KCFG_WS_COUNTERS 4096
/* Split-K's reduction (kernel_src/common.cuh, splitk_reduce) adds a tile's SPLIT partials
 * in groups of this many splits, then the group sums: SPLIT itself (one level) up to 8
 * splits, else the smallest divisor of SPLIT at least its square root (16 splits: 4
 * groups of 4), so that the last block to arrive reads 8 partials instead of 16. The
 * kernels get it as -DGT_SPLIT_GROUP. */
int gt_kcfg_split_group(const gt_kcfg *c);
/* 1 where a and b are of one group: the same family, block tile, BK and split-K (and
 * GEMV's tensor-core choice). A group's members differ in warp layout, stages, vector
 * width and rasterization, which the cost model ranks close together (often tied); the
 * tuner's order (tune.c) and its seeds (select.c) each spread their first places over
 * several groups. */
int gt_kcfg_same_group(const gt_kcfg *a, const gt_kcfg *b);
/* Counters a split-K launch uses: one per tile, plus one per group of splits of each
 * tile when the reduction takes two levels; 0 without split-K. */
long long gt_kcfg_split_counters(const gt_kcfg *c, const gt_key *key);
/* Bytes of split-K workspace a launch needs (partials and tile counters); 0 without
 * split-K. */
size_t gt_kcfg_workspace_bytes(const gt_kcfg *c, const gt_key *key);
/* WGMMA reads its operands through TMA, which needs 16-byte aligned strides, and tf32's
 * wgmma reads them with k contiguous only. So before the GEMM an operand may be copied
 * into the workspace (gemm_wgmma.cu's gt_pack, which mirrors this layout): as stored, with
 * the leading dimension rounded up (the alignment class is under 16 bytes), or transposed
 * so that k is contiguous (tf32 and f32_3xtf32 with A not transposed or B transposed).
 * SIMT does the same by choice (gt_kcfg_simt_packs): a configuration whose vectors are
 * 16 bytes on a key of a narrower alignment class reads A and B from such copies
 * (gemm_simt.cu's gt_pack), and C with the class's width. */
typedef enum { GT_KPACK_NONE = 0, GT_KPACK_COPY = 1, GT_KPACK_TRANSPOSE = 2 } gt_kpack_mode;
typedef struct gt_kpack {
    gt_kpack_mode mode_a, mode_b;
    long long lda, ldb;       /* the copies' leading dimensions (rounded up to 16 bytes) */
    long long rows_a, rows_b; /* their rows (the contiguous dimension) */
    long long cols_a, cols_b; /* and columns, as the copies are stored */
    size_t off_a, off_b;      /* byte offsets in the workspace: after the split-K
                                 counters and partials, 256-byte aligned */
    size_t end;               /* bytes of workspace in all */
} gt_kpack;
/* The widest vector, in elements of A and B, that the key's alignment class allows: 16
 * bytes at most, one element at least. */
int gt_kcfg_widest_vec(const gt_key *key);
/* 1 when c is a SIMT configuration that copies A and B first: 16-byte vectors on a key
 * whose alignment class is narrower. */
int gt_kcfg_simt_packs(const gt_kcfg *c, const gt_key *key);
/* 1 (and *p filled) when c copies an operand first, else 0. */
int gt_kcfg_pack_layout(const gt_kcfg *c, const gt_key *key, gt_kpack *p);
/* 1 when family fam (GT_FAM_*) can run key's data type on key's device (the family_fits
 * constraint; the space generates no other family). */
int gt_kcfg_family_fits(int fam, const gt_key *key);
/* 1 when the kernel sums over K in the order of gt_kcfg_default's kernel for key (one k
 * after another into one accumulator per output), so results are bit-identical to it. */
int gt_kcfg_same_order(const gt_kcfg *c, const gt_key *key);

/* The revision of what gt_kcfg_options derives from a configuration (the launch bound,
 * sizes, flags): part of every program's text in the binary cache (tuner/kern.h), so that
 * binaries built under other options, which the kernel source's hash does not tell
 * apart, are never served. test_kcfg's options_revision fails until it is raised with a
 * change to the options. */
#define GT_KCFG_OPTIONS_REV 2

/* The NVRTC -D options of a problem and configuration: writes up to max pointers into
 * opts, backed by storage (at least 64 bytes per option). Returns the count. */
int gt_kcfg_options(const gt_kcfg *c, const gt_key *key, char storage[][64], const char **opts,
                    int max);

/* The safe default: legal for every problem, used when tuning is skipped. */
void gt_kcfg_default(gt_kcfg *c, const gt_key *key);

/* Writes the parameter table and the constraints as help text. */
int gt_kcfg_help(char *buf, size_t size);

#endif
