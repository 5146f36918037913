/*
 * kern.c: compile, load and launch one GEMM kernel of a family (kern.h).
 * Owns the modules it loads until gt_kern_unload.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kern.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "kernel_sources.h"
#include "load.h"
#include "log.h"
#include "space.h"
#include "work.h"

/* The source of each family (kcfg.h, GT_FAM_*); each defines gt_gemm. */
static const char *family_source(const gt_kcfg *cfg) {
    return cfg->fam == GT_FAM_GEMV   ? gt_src_gemm_gemv
           : cfg->fam == GT_FAM_WGMMA  ? gt_src_gemm_wgmma
           : cfg->fam == GT_FAM_MMA  ? gt_src_gemm_mma
           : cfg->fam == GT_FAM_DMMA ? gt_src_gemm_dmma
                                     : gt_src_gemm_simt;
}

/* A program text's part before the configuration: key's class (generic) or problem, then
 * the options' revision, "f32|NT|a16|b0|o2|". Its length, or -1 where it does not fit. */
static int program_prefix(const gt_key *key, int generic, char *buf, size_t size) {
    /* A generic kernel is the same program for every shape of the class. */
    int n = generic ? gt_key_class(key, buf, size) : gt_key_problem(key, buf, size);
    if (n < 0 || (size_t)n >= size) return -1;
    int m = snprintf(buf + n, size - (size_t)n, "|o%d|", GT_KCFG_OPTIONS_REV);
    return m < 0 || (size_t)(n + m) >= size ? -1 : n + m;
}

void gt_kern_program(const gt_kcfg *cfg, const gt_key *key, gt_program *p) {
    memset(p, 0, sizeof *p);
    char c[64];
    gt_kcfg_format(cfg, c, sizeof c);
    int n = program_prefix(key, cfg->generic, p->text, sizeof p->text);
    if (n >= 0) snprintf(p->text + n, sizeof p->text - (size_t)n, "%s", c);
    snprintf(p->name, sizeof p->name, "%s.cu", c);
    p->source = family_source(cfg);
    p->noptions = gt_kcfg_options(cfg, key, p->storage, p->options, GT_PROGRAM_MAX_OPTIONS);
    p->specific = cfg->fam == GT_FAM_WGMMA;
}

typedef struct have_row {
    char text[128]; /* the configuration's text, the program's last part (as a cache's
                       config column, db.h's GT_DB_CONFIG_MAX) */
    gt_kcfg cfg;
} have_row;

typedef struct have_acc {
    size_t skip;  /* the class prefix's length */
    have_row *rows;
    int max, n;
} have_acc;

static int add_have(const char *text, void *user) {
    have_acc *a = user;
    if (a->n >= a->max) return 1;
    have_row *r = &a->rows[a->n];
    if (gt_kcfg_parse(text + a->skip, &r->cfg, NULL, 0) != 0 || !r->cfg.generic) return 0;
    r->cfg.generic = 0;
    snprintf(r->text, sizeof r->text, "%s", text + a->skip);
    a->n++;
    return 0;
}

static int by_text(const void *x, const void *y) {
    return strcmp(((const have_row *)x)->text, ((const have_row *)y)->text);
}

int gt_kern_generic_have(const gt_key *key, int arch, gt_kcfg *out, int max) {
    char prefix[128];
    int n = program_prefix(key, 1, prefix, sizeof prefix);
    if (n < 0 || max <= 0) return 0;
    /* Each cache lists its programs sorted; a program held by two caches (the user's
     * and the in-memory one) is listed twice, once by each. Sorted together and made
     * unique here: n log n, where a search of the list per program took 0.3 ms for a
     * prebuilt class of 400. */
    have_acc a = {.skip = (size_t)n, .max = 2 * max};
    a.rows = malloc(sizeof *a.rows * (size_t)a.max);
    if (!a.rows) return 0;
    gt_load_programs(prefix, arch, add_have, &a);
    qsort(a.rows, (size_t)a.n, sizeof *a.rows, by_text);
    int nout = 0;
    for (int i = 0; i < a.n && nout < max; i++)
        if (i == 0 || strcmp(a.rows[i].text, a.rows[i - 1].text) != 0) out[nout++] = a.rows[i].cfg;
    free(a.rows);
    return nout;
}

gt_status gt_kern_compile(const gt_kcfg *cfg, const gt_key *key, int arch, gt_rtc_result *out) {
    gt_program p;
    gt_kern_program(cfg, key, &p);
    return gt_load_compile(&p, arch, out);
}

/* The launch of a WGMMA kernel with clusters of TM blocks along x. */
static void cluster_config(const gt_kern *k, CUstream stream, CUlaunchAttribute *attr,
                           CUlaunchConfig *lc) {
    memset(attr, 0, sizeof *attr);
    memset(lc, 0, sizeof *lc);
    attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr->value.clusterDim.x = (unsigned)k->cfg.tm;
    attr->value.clusterDim.y = attr->value.clusterDim.z = 1;
    lc->gridDimX = k->grid[0], lc->gridDimY = k->grid[1], lc->gridDimZ = k->grid[2];
    lc->blockDimX = k->block[0], lc->blockDimY = k->block[1], lc->blockDimZ = k->block[2];
    lc->sharedMemBytes = k->smem;
    lc->hStream = stream;
    lc->attrs = attr;
    lc->numAttrs = 1;
}

/* Fills out from a loaded module of (cfg, key) and checks that it can run; on failure
 * the module stays the caller's (out->module is set only on success). */
static gt_status from_module(CUmodule mod, const gt_kcfg *cfg, const gt_key *key, gt_kern *out) {
    memset(out, 0, sizeof *out);
    CUresult r = gt_cu.module_get_function(&out->fn, mod, "gt_gemm");
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuModuleGetFunction(gt_gemm)");
    gt_kpack pk;
    if (gt_kcfg_pack_layout(cfg, key, &pk) &&
        (r = gt_cu.module_get_function(&out->pack, mod, "gt_pack")) != CUDA_SUCCESS)
        return gt_cu_fail(r, "cuModuleGetFunction(gt_pack)");
    out->cfg = *cfg;
    out->key = *key;
    gt_kcfg_grid(cfg, key, out->grid, out->block);
    out->smem = (unsigned)gt_kcfg_smem_bytes(cfg, key);
    out->ws_bytes = gt_kcfg_workspace_bytes(cfg, key);
    /* Beyond 48 KiB, dynamic shared memory needs the function's opt-in; a kernel's own
     * static shared memory (split-K's flag) counts towards that limit too. */
    if (out->smem > 47 * 1024 &&
        (r = gt_cu.func_set_attribute(out->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      (int)out->smem)) != CUDA_SUCCESS) {
        return gt_cu_fail(r, "cuFuncSetAttribute (dynamic shared memory)");
    }
    if (cfg->fam == GT_FAM_WGMMA && cfg->tm > 1) {
        /* Clusters: the persistent grid holds no more of them than fit at once (SMs of a
         * cluster share a GPC, so that can be fewer than SMs / TM). */
        int n = 0;
        CUlaunchAttribute attr;
        CUlaunchConfig lc;
        cluster_config(out, NULL, &attr, &lc);
        if (!gt_cu.launch_kernel_ex || !gt_cu.occupancy_max_active_clusters) {
            return gt_fail(GT_NOT_SUPPORTED, "the CUDA driver lacks cluster launches (WGMMA with TM %d)", cfg->tm);
        }
        if ((r = gt_cu.occupancy_max_active_clusters(&n, out->fn, &lc)) != CUDA_SUCCESS || n < 1) {
            return r != CUDA_SUCCESS ? gt_cu_fail(r, "cuOccupancyMaxActiveClusters")
                                     : gt_fail(GT_LAUNCH_FAILED, "no cluster of %d blocks fits", cfg->tm);
        }
        gt_log(GT_LOG_DEBUG, "WGMMA clusters of %d: %d fit at once, grid %u blocks", cfg->tm, n, out->grid[0]);
        /* The splits (y) share the clusters that fit. */
        unsigned fit = (unsigned)n / out->grid[1];
        if (fit < 1) fit = 1;
        if (out->grid[0] > fit * (unsigned)cfg->tm) out->grid[0] = fit * (unsigned)cfg->tm;
    }
    int max_threads = 0;
    gt_cu.func_get_attribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, out->fn);
    gt_cu.func_get_attribute(&out->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, out->fn);
    gt_cu.func_get_attribute(&out->local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, out->fn);
    char text[64];
    gt_kcfg_format(cfg, text, sizeof text);
    gt_log(GT_LOG_DEBUG, "loaded %s: %d registers, %d bytes of local memory per thread", text,
           out->regs, out->local);
    if (max_threads < (int)out->block[0]) {
        return gt_fail(GT_LAUNCH_FAILED, "%s: compiled kernel allows %d threads per block, needs %d",
                       text, max_threads, gt_kcfg_threads(cfg));
    }
    /* A DMMA kernel that spills is refused. Every DMMA kernel seen computing wrong
     * results spills (ptxas -O3: 255 registers and some local memory), its bits change
     * from launch to launch, and the same source compiled by ptxas -O2 (no spill) is
     * right, as is every configuration that does not spill (dev/dmma_s2.sh). The cause is
     * not found, so no spilling one is trusted; they are slower anyway. */
    if (cfg->fam == GT_FAM_DMMA && out->local > 0) {
        int local = out->local;
        return gt_fail(GT_LAUNCH_FAILED,
                       "%s: the compiled DMMA kernel spills (%d bytes of local memory per thread); "
                       "spilling DMMA kernels are refused (some computed wrong results)",
                       text, local);
    }
    out->module = mod;
    return GT_SUCCESS;
}

typedef struct accept_ctx {
    const gt_kcfg *cfg;
    const gt_key *key;
    gt_kern *out;
} accept_ctx;

/* gt_load_accept: from_module on the loader's module. */
static gt_status accept(CUmodule mod, void *user) {
    accept_ctx *a = user;
    return from_module(mod, a->cfg, a->key, a->out);
}

gt_status gt_kern_load(const void *image, const gt_kcfg *cfg, const gt_key *key, gt_kern *out) {
    accept_ctx a = {cfg, key, out};
    CUmodule mod;
    return gt_load_accept_image(image, "GEMM kernel", accept, &a, &mod);
}

gt_status gt_kern_get(const gt_kcfg *cfg, const gt_key *key, int arch, int use_cache,
                      gt_kern *out) {
    gt_program p;
    gt_kern_program(cfg, key, &p);
    accept_ctx a = {cfg, key, out};
    CUmodule mod;
    int cached = 0;
    gt_status s = gt_load_module(&p, arch, use_cache, accept, &a, &mod, &cached);
    if (s == GT_SUCCESS && cached) gt_stat_add(GT_STAT_CUBIN_HITS, 1);
    return s;
}

/* One operand's TMA descriptor for gemm_wgmma.cu: the matrix as stored (rows x cols of
 * a column-major array with leading dimension ld), and the box one copy moves: 128 bytes
 * of the contiguous dimension by `tile` of the other when k is the contiguous one
 * (kcont), else 128 bytes by BK (the kernel issues one copy per 64 elements). Past the
 * matrix's edges TMA reads zeros. */
static gt_status tensor_map(CUtensorMap *map, const gt_kern *k, CUdeviceptr p, long long ld,
                            long long rows, long long cols, int kcont, int tile) {
    const gt_kcfg *c = &k->cfg;
    int dtype = k->key.dtype, es = gt_dtype_in_size(dtype);
    /* C (tile < 0): 16-bit, boxes of 64 x 64 (the kernel's staging boxes). */
    if (tile < 0) es = gt_dtype_out_size(dtype);
    CUtensorMapDataType dt = es == 4                   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                             : dtype == GT_DT_F16 || dtype == GT_DT_F16_F32
                                 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    cuuint64_t dims[2] = {(cuuint64_t)rows, (cuuint64_t)cols};
    cuuint64_t strides[1] = {(cuuint64_t)ld * (cuuint64_t)es};
    cuuint32_t box[2] = {(cuuint32_t)(128 / es), (cuuint32_t)(tile < 0 ? 64 : kcont ? tile : c->bk)};
    cuuint32_t estr[2] = {1, 1};
    CUresult r = gt_cu.tensor_map_encode_tiled(map, dt, 2, (void *)(uintptr_t)p, dims, strides, box,
                                               estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                               CU_TENSOR_MAP_SWIZZLE_128B,
                                               tile < 0 ? CU_TENSOR_MAP_L2_PROMOTION_NONE
                                                        : CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r == CUDA_SUCCESS) return GT_SUCCESS;
    return gt_cu_fail(r, tile < 0 ? "cuTensorMapEncodeTiled (WGMMA C)"
                                  : "cuTensorMapEncodeTiled (WGMMA operand)");
}

gt_status gt_kern_launch(const gt_kern *k, const gt_gemm *g, CUdeviceptr ws) {
    /* The kernels take addresses as CUdeviceptr and sizes as long long (common.cuh). */
    CUstream stream = (CUstream)g->stream;
    CUdeviceptr A = GT_DPTR(g->A), B = GT_DPTR(g->B), C = GT_DPTR(g->C);
    long long lda = g->lda, ldb = g->ldb, ldc = g->ldc;
    double alpha = g->alpha, beta = g->beta;
    /* Scalars are passed in the kernel's element type. */
    float fa = (float)alpha, fb = (float)beta;
    int f64 = k->key.dtype == GT_DT_F64;
    /* tmc: C's tensor map for a TMA-store epilogue, zeros (unread) otherwise. */
    CUtensorMap tma, tmb, tmc;
    memset(&tmc, 0, sizeof tmc);
    /* The sizes come last (common.cuh's ABI); an exact-shape kernel leaves them unread. */
    long long m = (long long)k->key.m, n = (long long)k->key.n, kk = (long long)k->key.k;
    void *args[] = {&A, &lda, &B, &ldb, &C, &ldc, f64 ? (void *)&alpha : (void *)&fa,
                    f64 ? (void *)&beta : (void *)&fb, &ws, &tma, &tmb, &tmc, &m, &n, &kk};
    /* Families without tensor maps take the sizes right after ws. */
    if (k->cfg.fam != GT_FAM_WGMMA) args[9] = &m, args[10] = &n, args[11] = &kk;
    if (k->ws_bytes && !ws) return gt_fail(GT_INTERNAL, "split-K kernel launched without a workspace");
    const gt_key *key = &k->key;
    /* Operand copies first (the family's gt_pack; y: 0 A, 1 B): one thread per 16 bytes
     * of a plain copy, one block per 32 x 32 tile of a transposed one; at most 16 blocks
     * of 256 per SM. The GEMM then reads the copies. */
    CUdeviceptr ta = A, tb = B;
    long long tlda = lda, tldb = ldb;
    gt_kpack pk;
    int packs = gt_kcfg_pack_layout(&k->cfg, key, &pk);
    if (packs) {
        long long epv = 16 / gt_dtype_in_size(key->dtype), blocks = 1;
        for (int o = 0; o < 2; o++) {
            gt_kpack_mode m = o ? pk.mode_b : pk.mode_a;
            long long rows = o ? pk.rows_b : pk.rows_a, cols = o ? pk.cols_b : pk.cols_a;
            long long ld = o ? pk.ldb : pk.lda;
            long long b = m == GT_KPACK_TRANSPOSE ? ((rows + 31) / 32) * ((cols + 31) / 32)
                          : m == GT_KPACK_COPY    ? (ld / epv * cols + 255) / 256
                                                  : 0;
            if (b > blocks) blocks = b;
        }
        long long cap = 16LL * (key->sm_count > 0 ? key->sm_count : 1);
        void *pargs[] = {&A, &lda, &B, &ldb, &ws, &m, &n, &kk};
        CUresult r = gt_cu.launch_kernel(k->pack, (unsigned)(blocks < cap ? blocks : cap), 2, 1,
                                         256, 1, 1, 0, stream, pargs, NULL);
        if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuLaunchKernel (operand copy)");
        if (pk.mode_a) ta = ws + pk.off_a, tlda = pk.lda;
        if (pk.mode_b) tb = ws + pk.off_b, tldb = pk.ldb;
        /* SIMT takes the copies as its A and B (args points at these). */
        if (k->cfg.fam == GT_FAM_SIMT) A = ta, lda = tlda, B = tb, ldb = tldb;
    }
    if (k->cfg.fam == GT_FAM_WGMMA) {
        /* Descriptors hold the addresses, so they are made per launch (host work of about
         * a microsecond). A is M x K as stored (K x M when transposed), B K x N (N x K). */
        if (!gt_cu.tensor_map_encode_tiled)
            return gt_fail(GT_NOT_SUPPORTED, "the CUDA driver lacks cuTensorMapEncodeTiled (WGMMA)");
        /* A is read with k contiguous (K x M) when stored transposed or copied transposed;
         * B (K x N) when stored as is or copied transposed. */
        int ka = key->opa, kb = !key->opb;
        if (packs) {
            ka |= pk.mode_a == GT_KPACK_TRANSPOSE;
            kb |= pk.mode_b == GT_KPACK_TRANSPOSE;
        }
        /* k-contiguous boxes: A's BM rows; B's BN / TM columns (each block of a cluster
         * copies its part of the tile). */
        gt_status s = ka ? tensor_map(&tma, k, ta, tlda, key->k, key->m, 1, k->cfg.bm)
                         : tensor_map(&tma, k, ta, tlda, key->m, key->k, 0, 0);
        if (s == GT_SUCCESS)
            s = kb ? tensor_map(&tmb, k, tb, tldb, key->k, key->n, 1, k->cfg.bn / k->cfg.tm)
                   : tensor_map(&tmb, k, tb, tldb, key->n, key->k, 0, 0);
        if (s == GT_SUCCESS && gt_kcfg_wgmma_tma_store(&k->cfg, key))
            s = tensor_map(&tmc, k, C, ldc, key->m, key->n, 0, -1);
        if (s != GT_SUCCESS) return s;
    }
    CUresult r;
    if (k->cfg.fam == GT_FAM_WGMMA && k->cfg.tm > 1) {
        CUlaunchAttribute attr;
        CUlaunchConfig lc;
        cluster_config(k, stream, &attr, &lc);
        r = gt_cu.launch_kernel_ex(&lc, k->fn, args, NULL);
    } else {
        r = gt_cu.launch_kernel(k->fn, k->grid[0], k->grid[1], k->grid[2], k->block[0],
                                k->block[1], k->block[2], k->smem, stream, args, NULL);
    }
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuLaunchKernel (GEMM kernel)");
    return GT_SUCCESS;
}

_Static_assert(GT_WORKSPACE_MIN_BYTES == GT_KCFG_WS_COUNTERS * 4,
               "an application's workspace holds the split-K tile counters");

size_t gt_kern_ws_zero(const gt_kern *k) {
    return k->cfg.split > 1 ? (size_t)GT_KCFG_WS_COUNTERS * 4 : 0;
}

gt_status gt_kern_run(const gt_kern *k, const gt_gemm *g, int capturing) {
    if (!k->ws_bytes) return gt_kern_launch(k, g, 0);
    CUstream stream = (CUstream)g->stream;
    gt_work_lease lease;
    gt_status s = gt_work_get(stream, k->ws_bytes, gt_kern_ws_zero(k), capturing, &lease);
    if (s != GT_SUCCESS) return s;
    s = gt_kern_launch(k, g, lease.ptr);
    gt_work_done(&lease, stream);
    return s;
}

void gt_kern_unload(gt_kern *k) {
    if (k->module) gt_cu.module_unload(k->module);
    k->module = NULL;
    k->fn = NULL;
    k->pack = NULL;
}

void gt_kern_limits(const gt_devctx *dc, gt_klimits *lim) {
    memset(lim, 0, sizeof *lim);
    lim->max_threads_per_block = dc->dev.max_threads_per_block;
    /* Kernels take their shared memory dynamically, with the opt-in beyond 48 KiB. */
    lim->smem_per_block = dc->dev.smem_per_block_optin > dc->dev.smem_per_block
                              ? dc->dev.smem_per_block_optin
                              : dc->dev.smem_per_block;
    lim->regs_per_block = dc->dev.regs_per_block;
    lim->regs_per_sm = dc->dev.regs_per_sm;
    lim->sm_count = dc->dev.sm_count;
    lim->dram_rate = gt_space_dram_rate(dc->dev.mem_clock_khz, dc->dev.mem_bus_bits);
}
