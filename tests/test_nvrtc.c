/*
 * test_nvrtc.c: NVRTC compilation of the GEMM kernel family (runtime/rtc.c, tuner/kern.c),
 * no GPU needed: NVRTC runs on the CPU and the CUDA toolkit is a build requirement, so
 * a missing NVRTC is a failure, not a skip.
 *
 * Cases: the NVRTC version and architecture choice (gt_rtc_pick_arch); a source with a
 * syntax error fails with GT_NVRTC_ERROR and keeps its log; an architecture below every
 * supported one is refused without compiling; and, for a few shapes (odd ones included)
 * and both sm_80 (A100 limits) and sm_90 (H100 limits), every candidate of
 * gt_space_build's default budget (32) plus the fallback configuration (gt_kcfg_default)
 * compiles on a thread pool to a cubin (an ELF image for EM_CUDA, built for the requested
 * architecture according to its ELF flags). gt_get_stats().compiles
 * must count every compile. Timings are printed as TAP comments.
 *
 * By default a set compiles a third of its candidates (every third in rank order, and the
 * first of each family) and the fallback; with --all (test nvrtc_all, suite 'sweep') every
 * candidate, about 730 compiles and 70 s on 16 cores.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemmtune.h"
#include "kcfg.h"
#include "kern.h"
#include "kernel_sources.h"
#include "key.h"
#include "log.h"
#include "pool.h"
#include "rtc.h"
#include "space.h"
#include "fixtures.h"
#include "tap.h"

/* ===== helpers ===== */

/* gt_tune_opts_default's max_candidates when GEMMTUNE_TUNE_MAX_CANDIDATES is unset. */
#define DEFAULT_MAX_CANDIDATES 32

/* ELF e_machine of a CUDA cubin. */
#define EM_CUDA 190

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t compiles_now(void) {
    gt_stats s;
    memset(&s, 0, sizeof s);
    gt_get_stats(&s);
    return s.compiles;
}



/* 1 when the image looks like a cubin: ELF magic, and e_machine EM_CUDA. */
static int is_cubin(const void *image, size_t size) {
    const unsigned char *b = image;
    if (!b || size < 20) return 0;
    if (b[0] != 0x7f || b[1] != 'E' || b[2] != 'L' || b[3] != 'F') return 0;
    /* e_machine: 2 bytes at offset 18, in the byte order that EI_DATA (byte 5) gives. */
    unsigned machine = b[5] == 2 ? (unsigned)(b[18] << 8 | b[19]) : (unsigned)(b[19] << 8 | b[18]);
    return machine == EM_CUDA;
}

/* The SM architecture a cubin was built for, from its ELF header; -1 when unreadable.
 * e_flags holds it: bits 8..15 since the CUDA ELF ABI version 8 (CUDA 12.8 on), the low
 * byte before that. */
static int cubin_arch(const void *image, size_t size) {
    const unsigned char *b = image;
    if (!is_cubin(image, size) || b[5] != 1) return -1; /* little-endian only */
    size_t off = b[4] == 2 ? 48 : 36;                   /* ELF64 : ELF32 */
    if (size < off + 4) return -1;
    uint32_t flags = (uint32_t)b[off] | (uint32_t)b[off + 1] << 8 | (uint32_t)b[off + 2] << 16 |
                     (uint32_t)b[off + 3] << 24;
    return b[8] >= 8 ? (int)((flags >> 8) & 0xff) : (int)(flags & 0xff);
}

/* ===== compiling a candidate set on the pool ===== */

typedef struct {
    const gt_key *key;
    int arch;
    const gt_kcfg *cfgs;
    gt_rtc_result *res;
    gt_status *status;
    double *seconds;
} compile_job;

static void compile_one(int i, void *user) {
    compile_job *job = user;
    double t0 = now_s();
    job->status[i] = gt_kern_compile(&job->cfgs[i], job->key, job->arch, &job->res[i]);
    job->seconds[i] = now_s() - t0;
}

typedef struct {
    int opa, opb;
    long long m, n, k;
    int align, beta0;
    int dtype; /* gt_dtype; 0 is f32 */
} shape;

/* Odd sizes, every op pair, every alignment class of f32, beta zero and not. */
static const shape shapes[] = {
    {0, 0, 17, 33, 65, 4, 1, GT_DT_F32},
    {1, 0, 1000, 1000, 1000, 16, 0, GT_DT_F32},
    {0, 1, 4097, 129, 257, 4, 0, GT_DT_F32},
    {0, 1, 16, 4096, 4096, 16, 0, GT_DT_F32},
    {1, 1, 1, 1, 1, 8, 1, GT_DT_F32},
    /* The 4-byte class where SIMT's aligned copies rank first (gt_pack, 4-byte C). */
    {0, 0, 1000, 999, 1001, 4, 0, GT_DT_F32},
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* The tensor-core types (MMA family): every op pair, the 2-byte alignment class of 16-bit
 * types (copies through registers), odd sizes, split-K (large K). */
static const shape tc_shapes[] = {
    {0, 0, 4096, 4096, 4096, 16, 1, GT_DT_BF16},
    {1, 0, 4095, 4095, 4095, 2, 0, GT_DT_F16},
    {0, 1, 1000, 999, 1001, 4, 1, GT_DT_TF32},
    {1, 1, 17, 33, 65, 4, 0, GT_DT_F16_F32},
    {0, 1, 256, 256, 65536, 16, 1, GT_DT_BF16_F32},
    /* tf32 TN in the 4-byte class: WGMMA with its aligned copies (gt_pack). */
    {1, 0, 1001, 999, 1003, 4, 1, GT_DT_TF32},
    /* tf32 NN aligned: WGMMA reads a transposed copy of A. */
    {0, 0, 4096, 4096, 4096, 16, 1, GT_DT_TF32},
    /* f32_3xtf32: WGMMA with low parts (A transposed) beside SIMT; odd, 4-byte class, TN. */
    {0, 0, 4096, 4096, 4096, 16, 1, GT_DT_F32_3XTF32},
    {1, 0, 1001, 999, 1003, 4, 0, GT_DT_F32_3XTF32},
};
#define NTC ((int)(sizeof tc_shapes / sizeof tc_shapes[0]))

static double total_compile_wall, total_compile_cpu, slowest_one;
static int total_compiled;
static int all_candidates; /* --all: every candidate of a set, not a third */

/* Builds the candidate set of (shape, arch) plus the fallback configuration, compiles them
 * all on the pool and checks every result. */
static int compile_set(const shape *sh, int arch) {
    const gt_klimits *lim = arch >= 90 ? &h100 : &a100;
    gt_key key;
    fixture_key(&key, arch, sh->opa, sh->opb, sh->m, sh->n, sh->k, sh->align, sh->beta0);
    key.dtype = sh->dtype;
    char name[96];
    int len = gt_key_shape(&key, name, sizeof name);
    if (sh->dtype != GT_DT_F32) snprintf(name + len, sizeof name - (size_t)len, " %s", gt_dtype_name(sh->dtype));

    gt_cand *cands = NULL;
    gt_space_counts counts;
    int n = gt_space_build(&key, lim, DEFAULT_MAX_CANDIDATES, 0, &cands, &counts);
    TAP_CHECK(n > 0, "%s sm_%d: gt_space_build gave %d candidates", name, arch, n);
    if (n <= 0) {
        free(cands);
        return 0;
    }
    TAP_CHECK(n <= DEFAULT_MAX_CANDIDATES, "%s: %d candidates over the budget", name, n);

    /* The fallback configuration goes last. */
    gt_kcfg *cfgs = calloc((size_t)n + 1, sizeof *cfgs);
    gt_rtc_result *res = calloc((size_t)n + 1, sizeof *res);
    gt_status *status = calloc((size_t)n + 1, sizeof *status);
    double *secs = calloc((size_t)n + 1, sizeof *secs);
    TAP_CHECK(cfgs && res && status && secs, "out of memory");
    if (!cfgs || !res || !status || !secs) {
        free(cfgs), free(res), free(status), free(secs), free(cands);
        return 0;
    }
    /* The sample: every third candidate, and the first of each family, so that each family
     * of the set is compiled. */
    int nset = n, kept = 0;
    unsigned char fam_seen[GT_FAM_GEMV + 1] = {0}; /* the space's families, kcfg.h */
    for (int i = 0; i < n; i++) {
        const int first = !fam_seen[cands[i].cfg.fam];
        fam_seen[cands[i].cfg.fam] = 1;
        if (all_candidates || i % 3 == 0 || first) cfgs[kept++] = cands[i].cfg;
    }
    n = kept;
    gt_kcfg_default(&cfgs[n], &key);
    int njobs = n + 1;
    for (int i = 0; i < njobs; i++) status[i] = GT_INTERNAL;

    uint64_t before = compiles_now();
    compile_job job = {&key, arch, cfgs, res, status, secs};
    double t0 = now_s();
    gt_pool_run(njobs, 0, compile_one, &job);
    double wall = now_s() - t0;
    uint64_t after = compiles_now();
    TAP_CHECK(after - before == (uint64_t)njobs,
              "%s sm_%d: compiles counter went up by %llu for %d compiles", name, arch,
              (unsigned long long)(after - before), njobs);

    double cpu = 0, slowest = 0;
    int ok = 0, wgmma = 0;
    for (int i = 0; i < njobs; i++) {
        char text[64];
        gt_kcfg_format(&cfgs[i], text, sizeof text);
        const char *what = i == n ? "fallback" : "candidate";
        TAP_CHECK(status[i] == GT_SUCCESS, "%s sm_%d %s %s: status %d (%s): %s", name, arch, what,
                  text, status[i], gt_status_string(status[i]), res[i].error);
        TAP_CHECK(res[i].image != NULL && res[i].size > 0, "%s sm_%d %s %s: empty image", name,
                  arch, what, text);
        TAP_CHECK(is_cubin(res[i].image, res[i].size),
                  "%s sm_%d %s %s: image of %zu bytes is not an ELF cubin", name, arch, what,
                  text, res[i].size);
        TAP_CHECK(res[i].image == NULL || cubin_arch(res[i].image, res[i].size) == arch,
                  "%s sm_%d %s %s: cubin for sm_%d", name, arch, what, text,
                  cubin_arch(res[i].image, res[i].size));
        if (status[i] == GT_SUCCESS && cubin_arch(res[i].image, res[i].size) == arch) {
            ok++;
            wgmma += cfgs[i].fam == GT_FAM_WGMMA;
        }
        cpu += secs[i];
        if (secs[i] > slowest) slowest = secs[i];
        gt_rtc_result_free(&res[i]);
        TAP_CHECK(res[i].image == NULL && res[i].log == NULL, "gt_rtc_result_free left pointers");
    }
    printf("# %-18s sm_%d: %2d of %2d candidates (generated %d, pruned %d, ranked out %d) + fallback: "
           "%d/%d compiled (%d WGMMA) in %.2f s wall, %.2f s summed, slowest %.2f s\n",
           name, arch, n, nset, counts.generated, counts.pruned, counts.ranked_out, ok, njobs, wgmma,
           wall, cpu, slowest);
    fflush(stdout);
    total_compile_wall += wall;
    total_compile_cpu += cpu;
    total_compiled += njobs;
    if (slowest > slowest_one) slowest_one = slowest;
    free(cfgs), free(res), free(status), free(secs), free(cands);
    return wgmma;
}

/* ===== cases ===== */

static void nvrtc_version_and_arch_choice(void) {
    const char *v = gt_rtc_version();
    int major = -1, minor = -1;
    TAP_CHECK(v && sscanf(v, "%d.%d", &major, &minor) == 2 && major >= 11,
              "NVRTC version '%s' (NVRTC missing or unusable?)", v ? v : "(null)");
    printf("# NVRTC %s\n", v ? v : "?");
    TAP_CHECK(gt_rtc_pick_arch(90) == 90, "pick_arch(90) = %d", gt_rtc_pick_arch(90));
    TAP_CHECK(gt_rtc_pick_arch(80) == 80, "pick_arch(80) = %d", gt_rtc_pick_arch(80));
    TAP_CHECK(gt_rtc_pick_arch(10) == 0, "pick_arch(10) = %d", gt_rtc_pick_arch(10));
    TAP_CHECK(gt_rtc_pick_arch(0) == 0, "pick_arch(0) = %d", gt_rtc_pick_arch(0));
    /* No sm_91 exists: the newest below it is sm_90. */
    TAP_CHECK(gt_rtc_pick_arch(91) == 90, "pick_arch(91) = %d", gt_rtc_pick_arch(91));
    /* A future device gets the newest architecture NVRTC knows, never one above it. */
    int newest = gt_rtc_pick_arch(100000);
    TAP_CHECK(newest >= 90 && newest < 100000, "pick_arch(100000) = %d", newest);
    TAP_CHECK(gt_rtc_pick_arch(newest) == newest, "pick_arch(%d) = %d", newest,
              gt_rtc_pick_arch(newest));
}

static const char good_src[] =
    "extern \"C\" __global__ void gt_probe(float *x) { x[threadIdx.x] *= 2.0f; }\n";
static const char bad_src[] =
    "extern \"C\" __global__ void gt_probe(float *x) {\n"
    "    x[threadIdx.x] = ;\n"
    "}\n";

/* gt_rtc_warm compiles once per process (the tuner calls it before every pool starts)
 * and is not counted as a compile of ours. */
static void nvrtc_warm_once(void) {
    uint64_t c0 = compiles_now();
    double t0 = now_s();
    gt_rtc_warm(90);
    double t1 = now_s();
    gt_rtc_warm(90);
    gt_rtc_warm(80);
    double t2 = now_s();
    TAP_CHECK(compiles_now() == c0, "compiles %llu -> %llu",
              (unsigned long long)c0, (unsigned long long)compiles_now());
    TAP_CHECK(t2 - t1 < 0.002 && t2 - t1 < t1 - t0,
              "first warm-up %.4f s, the next two %.4f s (expected at once)", t1 - t0, t2 - t1);
    printf("# first warm-up %.3f s, later ones %.6f s\n", t1 - t0, t2 - t1);
}

static void nvrtc_compiles_a_tiny_kernel(void) {
    gt_rtc_result r;
    uint64_t before = compiles_now();
    gt_status s = gt_rtc_compile(good_src, "probe.cu", NULL, 0, 90, &r);
    TAP_CHECK(s == GT_SUCCESS, "status %d: %s", s, r.error);
    TAP_CHECK(is_cubin(r.image, r.size), "image of %zu bytes is not an ELF cubin", r.size);
    TAP_CHECK(cubin_arch(r.image, r.size) == 90, "cubin for sm_%d, want sm_90",
              cubin_arch(r.image, r.size));
    gt_rtc_result_free(&r);
    /* A device NVRTC does not know exactly gets the newest architecture below it. */
    s = gt_rtc_compile(good_src, "probe.cu", NULL, 0, 91, &r);
    TAP_CHECK(s == GT_SUCCESS && cubin_arch(r.image, r.size) == 90,
              "sm_91: status %d, cubin for sm_%d, want sm_90", s, cubin_arch(r.image, r.size));
    gt_rtc_result_free(&r);
    s = gt_rtc_compile(good_src, "probe.cu", NULL, 0, 80, &r);
    TAP_CHECK(s == GT_SUCCESS && cubin_arch(r.image, r.size) == 80,
              "sm_80: status %d, cubin for sm_%d", s, cubin_arch(r.image, r.size));
    TAP_CHECK(compiles_now() - before == 3, "compiles counter +%llu, want +3",
              (unsigned long long)(compiles_now() - before));
    gt_rtc_result_free(&r);
}

static void nvrtc_syntax_error_keeps_log(void) {
    gt_rtc_result r;
    uint64_t before = compiles_now();
    gt_status s = gt_rtc_compile(bad_src, "broken_probe.cu", NULL, 0, 90, &r);
    TAP_CHECK(s == GT_NVRTC_ERROR, "status %d (%s), want GT_NVRTC_ERROR", s,
              gt_status_string(s));
    TAP_CHECK(r.image == NULL && r.size == 0, "a failed compile left an image of %zu bytes",
              r.size);
    TAP_CHECK(r.log != NULL && strstr(r.log, "error") != NULL, "log: %s",
              r.log ? r.log : "(null)");
    TAP_CHECK(r.log == NULL || strstr(r.log, "broken_probe.cu") != NULL,
              "log does not name the program: %s", r.log ? r.log : "(null)");
    TAP_CHECK(r.error[0] != 0 && strstr(r.error, "broken_probe.cu") != NULL, "error line: '%s'",
              r.error);
    const char *last = gt_last_error();
    TAP_CHECK(strstr(last, "broken_probe.cu") != NULL && strstr(last, "error") != NULL,
              "gt_last_error: '%s'", last);
    TAP_CHECK(compiles_now() - before == 1, "compiles counter +%llu, want +1",
              (unsigned long long)(compiles_now() - before));
    gt_rtc_result_free(&r);
    TAP_CHECK(r.log == NULL && r.image == NULL, "gt_rtc_result_free left pointers");
    gt_rtc_result_free(NULL); /* must be harmless */
}

static void nvrtc_unsupported_arch_refused(void) {
    gt_rtc_result r;
    uint64_t before = compiles_now();
    gt_status s = gt_rtc_compile(good_src, "probe.cu", NULL, 0, 10, &r);
    TAP_CHECK(s == GT_NOT_SUPPORTED, "status %d (%s), want GT_NOT_SUPPORTED", s,
              gt_status_string(s));
    TAP_CHECK(r.image == NULL, "an image for sm_10");
    TAP_CHECK(strstr(r.error, "sm_10") != NULL, "error line: '%s'", r.error);
    TAP_CHECK(strstr(gt_last_error(), "sm_10") != NULL, "gt_last_error: '%s'", gt_last_error());
    TAP_CHECK(compiles_now() == before, "a refused compile was counted");
    gt_rtc_result_free(&r);
}

static void nvrtc_kernel_options_reach_the_source(void) {
    /* A configuration that breaks the family's own static_asserts must fail to compile:
     * proof that gt_kern_compile passes the -D options (tile sizes) to the kernel. A
     * thread tile that does not divide the block tile is such a configuration. */
    gt_key key;
    fixture_key(&key, 90, 0, 0, 64, 64, 64, 16, 1);
    gt_kcfg good, bad;
    gt_kcfg_default(&good, &key);
    bad = good;
    bad.tm = 3; /* 64 % 3 != 0 */
    gt_rtc_result r;
    gt_status s = gt_kern_compile(&good, &key, 90, &r);
    TAP_CHECK(s == GT_SUCCESS && is_cubin(r.image, r.size), "default config: status %d: %s", s,
              r.error);
    gt_rtc_result_free(&r);
    s = gt_kern_compile(&bad, &key, 90, &r);
    TAP_CHECK(s != GT_SUCCESS, "a thread tile of 3 rows in 64 compiled (options ignored?)");
    TAP_CHECK(r.image == NULL, "image after a failed compile");
    gt_rtc_result_free(&r);
}

/* The DMMA family's instruction on sm_90 (gemm_dmma.cu's FITS_K8): m16n8k8 (3) where the
 * warp tile's two fragment buffers fit, m16n8k4 (2) for warp tiles of 32 fragments where
 * they would spill (split-K, 8-byte copies, many copies per thread on a tile with edges,
 * BK 32 under 8 warps) and in generic kernels, m8n8k4 (1) where TN is odd. Each program is
 * compiled with -DGT_MMA_CHECK=expected, which the kernel static_asserts. */
static void nvrtc_dmma_instruction(void) {
    static const struct {
        long long m, n, k;
        int align;
        const char *cfg;
        int mma;
    } cases[] = {
        {4096, 4096, 4096, 16, "f1_128x128x16_w32x64_t4x8_s3_v2_k1_r8", 3},
        {4096, 4096, 4096, 16, "f1_128x64x16_w64x32_t8x4_s3_v2_k1_r8", 3},
        {5000, 5000, 5000, 16, "f1_128x128x16_w32x64_t4x8_s3_v2_k1_r8", 3},
        {5000, 5000, 5000, 16, "f1_128x64x16_w64x32_t8x4_s3_v2_k1_r8", 2},
        {5000, 5000, 5000, 16, "f1_256x64x16_w64x32_t8x4_s3_v2_k1_r1", 2},
        {4096, 4096, 4096, 16, "f1_128x128x16_w32x64_t4x8_s3_v2_k4_r1", 2},
        {4096, 4096, 4096, 16, "f1_128x64x32_w64x32_t8x4_s3_v2_k1_r1", 2},
        {4096, 4096, 4096, 16, "f1_128x128x32_w32x64_t4x8_s3_v2_k1_r1", 3},
        {4095, 4095, 4095, 8, "f1_128x128x16_w32x64_t4x8_s3_v1_k1_r8", 2},
        {4096, 4096, 4096, 16, "f1_128x128x16_w32x64_t4x8_s3_v2_k1_r1_g1", 2},
        {1000, 999, 1001, 16, "f1_64x64x16_w32x32_t4x4_s3_v2_k2_r1", 3},
        {1000, 999, 1001, 16, "f1_64x64x16_w32x32_t4x4_s3_v2_k1_r1_g1", 3},
        {1000, 999, 1001, 16, "f1_48x64x16_w48x16_t6x2_s3_v2_k1_r1", 3},
        {1000, 999, 1001, 16, "f1_64x48x16_w32x24_t4x3_s3_v2_k1_r1", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gt_key key;
        fixture_key(&key, 90, 0, 0, cases[i].m, cases[i].n, cases[i].k, cases[i].align, 1);
        key.dtype = GT_DT_F64;
        gt_kcfg c;
        char why[128];
        if (gt_kcfg_parse(cases[i].cfg, &c, why, sizeof why) != 0) {
            TAP_CHECK(0, "%s: %s", cases[i].cfg, why);
            continue;
        }
        gt_program p;
        gt_kern_program(&c, &key, &p);
        TAP_CHECK(p.noptions < GT_PROGRAM_MAX_OPTIONS, "%s: no room for one more option", cases[i].cfg);
        if (p.noptions >= GT_PROGRAM_MAX_OPTIONS) continue;
        snprintf(p.storage[p.noptions], sizeof p.storage[0], "-DGT_MMA_CHECK=%d", cases[i].mma);
        p.options[p.noptions] = p.storage[p.noptions];
        p.noptions++;
        gt_rtc_result r;
        gt_status s = gt_load_compile(&p, 90, &r);
        TAP_CHECK(s == GT_SUCCESS, "%s on %lldx%lldx%lld: not instruction %d: %s", cases[i].cfg,
                  cases[i].m, cases[i].n, cases[i].k, cases[i].mma, r.error);
        gt_rtc_result_free(&r);
        /* and the check itself bites: another instruction must fail to compile */
        snprintf(p.storage[p.noptions - 1], sizeof p.storage[0], "-DGT_MMA_CHECK=%d",
                 cases[i].mma == 3 ? 2 : 3);
        s = gt_load_compile(&p, 90, &r);
        TAP_CHECK(s != GT_SUCCESS, "%s: GT_MMA_CHECK=%d compiled too", cases[i].cfg,
                  cases[i].mma == 3 ? 2 : 3);
        gt_rtc_result_free(&r);
    }
}

static void nvrtc_all_candidates_sm80(void) {
    for (int i = 0; i < NSHAPES; i++) compile_set(&shapes[i], 80);
}

static void nvrtc_all_candidates_sm90(void) {
    for (int i = 0; i < NSHAPES; i++) compile_set(&shapes[i], 90);
}

/* Every candidate of the tensor-core types compiles, for sm_90 and (some) sm_80. */
static void nvrtc_tensor_candidates(void) {
    /* On sm_90 the WGMMA family (sm_90a) is among them: for bf16 4096^3 NN (TMA straight
     * from the operands), f16 4095^3 TN (2-byte class: aligned copies first), tf32 TN
     * (aligned copies) and NN (A's transposed copy), 256x256x65536 (split-K); not in the
     * budget of 17x33x65 (one tile cannot fill the SMs); f32_3xtf32 4096^3 NN. tf32 NT
     * 1000x999x1001 (both operands transposed) and f32_3xtf32 TN 1001x999x1003 are left
     * to the ranking. */
    static const int want_wgmma[NTC] = {1, 1, -1, 0, 1, 1, 1, 1, -1};
    for (int i = 0; i < NTC; i++) {
        int w = compile_set(&tc_shapes[i], 90);
        TAP_CHECK(want_wgmma[i] < 0 || (w > 0) == want_wgmma[i], "tensor shape %d on sm_90: %d WGMMA compiled", i, w);
        if (want_wgmma[i] < 0) printf("# tensor shape %d on sm_90: %d WGMMA compiled\n", i, w);
    }
    int w80 = compile_set(&tc_shapes[1], 80);
    TAP_CHECK(w80 == 0, "sm_80: %d WGMMA compiled", w80);
}

/* The helper kernels compile for every architecture the library may meet (bf16
 * conversions are integer code, so sm_75 too), one program per storage type (scale,
 * fill, cmp, pad, round, copy) and per data type (ref), each holding its own kernels under the names
 * devctx.c looks up, and none of another type's. */
static int has_symbol(const gt_rtc_result *r, const char *name) {
    size_t n = strlen(name);
    const char *p = r->image;
    for (size_t i = 0; r->image && i + n <= r->size; i++)
        if (memcmp(p + i, name, n) == 0 && (i + n == r->size || p[i + n] == 0)) return 1;
    return 0;
}

static void nvrtc_helper_kernels(void) {
    static const int archs[] = {75, 80, 90};
    for (int i = 0; i < 3; i++) {
        for (int t = 0; t < GT_NSTYPES + GT_NDTYPES; t++) {
            int st = t < GT_NSTYPES;
            const char *type = st ? gt_stype_name(t) : gt_dtype_name(t - GT_NSTYPES);
            char opt[64], want[48], other[48];
            snprintf(opt, sizeof opt, "-DGT_AUX_%s_%s", st ? "ST" : "REF", type);
            const char *opts[] = {opt};
            gt_rtc_result res;
            gt_status s = gt_rtc_compile(gt_src_aux, "aux.cu", opts, 1, archs[i], &res);
            int ok = s == GT_SUCCESS && is_cubin(res.image, res.size);
            static const char *const kinds[] = {"scale", "fill", "cmp", "pad", "round", "copy"};
            for (int k = 0; ok && k < (st ? 6 : 1); k++) {
                snprintf(want, sizeof want, "gt_%s_%s", st ? kinds[k] : "ref", type);
                ok = has_symbol(&res, want);
            }
            /* Another type's kernel is not in this program. */
            snprintf(other, sizeof other, "gt_%s_%s", st ? "fill" : "ref",
                     st ? gt_stype_name((t + 1) % GT_NSTYPES)
                        : gt_dtype_name((t - GT_NSTYPES + 1) % GT_NDTYPES));
            ok = ok && !has_symbol(&res, other);
            TAP_CHECK(ok, "helper kernels %s sm_%d: %s (%s)", opt, archs[i], res.error,
                      s == GT_SUCCESS ? want : "compile failed");
            gt_rtc_result_free(&res);
        }
    }
}

int main(int argc, char **argv) {
    all_candidates = argc > 1 && strcmp(argv[1], "--all") == 0;
    double t0 = now_s();
    TAP_RUN(nvrtc_warm_once);
    TAP_RUN(nvrtc_version_and_arch_choice);
    TAP_RUN(nvrtc_compiles_a_tiny_kernel);
    TAP_RUN(nvrtc_syntax_error_keeps_log);
    TAP_RUN(nvrtc_unsupported_arch_refused);
    TAP_RUN(nvrtc_kernel_options_reach_the_source);
    TAP_RUN(nvrtc_dmma_instruction);
    TAP_RUN(nvrtc_all_candidates_sm80);
    TAP_RUN(nvrtc_all_candidates_sm90);
    TAP_RUN(nvrtc_tensor_candidates);
    TAP_RUN(nvrtc_helper_kernels);
    printf("# %d kernel compiles: %.2f s wall, %.2f s summed over threads, slowest %.2f s; "
           "test total %.2f s\n",
           total_compiled, total_compile_wall, total_compile_cpu, slowest_one, now_s() - t0);
    return tap_done();
}
