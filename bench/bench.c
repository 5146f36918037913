/*
 * bench.c: gemmtune-bench, gemmtune against cuBLAS, shape by shape, in one data type per
 * run (--dtype): fp32 (gemm_tuned vs cublasSgemm, the default), fp64 (gemm_tuned_d vs
 * cublasDgemm), or a tensor-core type (gemm_tuned_ex vs cublasGemmEx with the same types:
 * tf32, f16, f16_f32, bf16, bf16_f32), or fp32 emulated on tensor cores (f32_3xtf32:
 * gemm_tuned_ex vs cublasSgemm); the table DTYPES below. One method for all; the
 * type is a run-time choice (element sizes and a switch at the few call sites that need it).
 *
 * Method (the llm.c harness: reference first, then time):
 *  1. Cold call. The first gemm_tuned() (gemm_tuned_d(), gemm_tuned_ex()) for a shape is
 *     timed by wall clock (CLOCK_MONOTONIC, device synchronized before and after),
 *     because it may tune (compile, time, verify) or load a winner from the SQLite cache;
 *     gt_get_stats() deltas say which. This is the price a caller pays once per shape.
 *  2. Correctness. cuBLAS computes the same product with CUBLAS_DEFAULT_MATH set
 *     explicitly, so TF32 (fp32) and FP64 emulation (fp64) are off: the reference is
 *     true fp32, or true fp64 (cuBLAS DGEMM on sm_80+ uses FP64 tensor cores, DMMA,
 *     which are full fp64 but sum over K in another order). The tensor-core types name
 *     their compute type in the cublasGemmEx call (CUBLAS_COMPUTE_32F, or
 *     CUBLAS_COMPUTE_32F_FAST_TF32 for tf32), CUBLAS_GEMM_DEFAULT. Their inputs have 8
 *     significant bits (odd multiples of 1/256), exact in tf32, fp16 and bf16, so both
 *     libraries multiply the same numbers exactly. The relative Frobenius error
 *     ||C_gt - C_cublas|| / ||C_cublas|| is summed on the host in double; above the
 *     type's bound (1e-4 fp32, 1e-10 fp64, 5e-3 tf32, 2e-3 f16, 1e-2 bf16, 1e-4 for
 *     f16_f32 and bf16_f32), or not finite, the shape fails and is not timed.
 *  3. Timing. One stream for both libraries. Each set is `warmup` untimed runs, then
 *     `reps` runs (more for small problems, whose times are short and noisy), each
 *     between its own pair of CUDA events, so the launch gaps of the host are not
 *     counted; the median resists outliers (clock ramps, other tenants). Sets run
 *     gt, cuBLAS, gt, cuBLAS and each library keeps its better median, so slow drift
 *     (clocks, heat) does not favour whichever ran first. Inputs stay warm in L2
 *     between runs, for both libraries alike.
 *  4. Floor. The time no kernel can beat on an H100-class part: the larger of the
 *     compulsory traffic e_ab(MK+KN) + e_c MN bytes at 3.0e12 B/s (e = the element sizes
 *     of A/B and of C: 4 fp32 and tf32, 8 fp64, 2 f16 and bf16, 4 for the C of f16_f32
 *     and bf16_f32) and 2MNK flops at the type's ceiling: 67e12 FLOP/s for fp32 (FFMA)
 *     and fp64 (FP64 tensor cores), 495e12 for tf32 and 990e12 for f16/bf16 (dense
 *     tensor cores). "%floor" is how close gt gets to it.
 *  5. Summary. The geometric mean of ratio = cuBLAS time / gt time over the shapes that
 *     passed, and the minimum ratio of each class of shape (shape_class() below:
 *     small, skinny/flat, large-K, large, other), the worst case being what a user of
 *     that kind of shape risks.
 *
 * Owns: nothing beyond its own allocations. This is the only file that uses cuBLAS.
 * Exit status: 0 all shapes ok, 1 a shape failed or CUDA failed or no device, 2 usage.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_MONOTONIC under -std=c11 */
#endif
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemmtune.h"

/* Which pair of functions a type calls: gemm_tuned/cublasSgemm, gemm_tuned_d/cublasDgemm,
 * gemm_tuned_ex/cublasGemmEx with the types of dtype_info, or gemm_tuned_ex/cublasSgemm
 * (f32_3xtf32: fp32 emulated, against cuBLAS's true fp32, on the same full-precision
 * random inputs as f32). */
typedef enum { CALL_S, CALL_D, CALL_EX, CALL_EX_S } call_kind;

/* The data type: all that differs between types outside the call sites. */
typedef struct {
    const char *name;           /* --dtype and the JSON "dtype" */
    call_kind call;             /* the switch at the call sites */
    gt_datatype ab, c;          /* element types of A and B, and of C */
    gt_compute_type compute;
    cudaDataType cu_ab, cu_c;   /* the same three for cublasGemmEx */
    cublasComputeType_t cu_compute;
    double max_rel_err;         /* correctness bound vs cuBLAS */
    double peak_flops;          /* FLOP/s ceiling of the floor */
    double peak_bytes;          /* B/s ceiling of the floor */
    const char *gt_name, *blas_name, *note;
} dtype_info;

/* Bounds, f32 and f64: see the method above. The inputs of the tensor-core types are exact
 * in the type and their products exact in fp32, so gemmtune and cuBLAS differ by the order
 * of fp32 sums (about 1e-6 here) and, for a 16-bit C, by its final rounding (at most half
 * an ulp: 2^-11 relative for fp16, 2^-8 for bf16), more where cuBLAS reduces split-K
 * partials in the output type (its default math allows that). The bounds leave room for
 * these, not for a wrong result. */
static const dtype_info DTYPES[] = {
    {"f32", CALL_S, GT_R_32F, GT_R_32F, GT_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, 1e-4, 67e12, 3.0e12, "gemm_tuned", "cublasSgemm", "fp32, TF32 off"},
    {"f64", CALL_D, GT_R_64F, GT_R_64F, GT_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F,
     CUBLAS_COMPUTE_64F, 1e-10, 67e12, 3.0e12, "gemm_tuned_d", "cublasDgemm",
     "fp64, cuBLAS DMMA, emulation off"},
    {"tf32", CALL_EX, GT_R_32F, GT_R_32F, GT_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F_FAST_TF32, 5e-3, 495e12, 3.0e12, "gemm_tuned_ex", "cublasGemmEx",
     "fp32 A/B/C, TF32 tensor cores, COMPUTE_32F_FAST_TF32"},
    {"f16", CALL_EX, GT_R_16F, GT_R_16F, GT_COMPUTE_32F, CUDA_R_16F, CUDA_R_16F,
     CUBLAS_COMPUTE_32F, 2e-3, 990e12, 3.0e12, "gemm_tuned_ex", "cublasGemmEx",
     "fp16 A/B/C, COMPUTE_32F"},
    {"f16_f32", CALL_EX, GT_R_16F, GT_R_32F, GT_COMPUTE_32F, CUDA_R_16F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, 1e-4, 990e12, 3.0e12, "gemm_tuned_ex", "cublasGemmEx",
     "fp16 A/B, fp32 C, COMPUTE_32F"},
    {"bf16", CALL_EX, GT_R_16BF, GT_R_16BF, GT_COMPUTE_32F, CUDA_R_16BF, CUDA_R_16BF,
     CUBLAS_COMPUTE_32F, 1e-2, 990e12, 3.0e12, "gemm_tuned_ex", "cublasGemmEx",
     "bf16 A/B/C, COMPUTE_32F"},
    {"bf16_f32", CALL_EX, GT_R_16BF, GT_R_32F, GT_COMPUTE_32F, CUDA_R_16BF, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, 1e-4, 990e12, 3.0e12, "gemm_tuned_ex", "cublasGemmEx",
     "bf16 A/B, fp32 C, COMPUTE_32F"},
    /* cuBLAS has no fp32 emulation on the H100: the comparison is with its SGEMM, and the
     * floor's ceiling is tf32's over three instructions. */
    {"f32_3xtf32", CALL_EX_S, GT_R_32F, GT_R_32F, GT_COMPUTE_32F_EMULATED_3XTF32, CUDA_R_32F,
     CUDA_R_32F, CUBLAS_COMPUTE_32F, 1e-4, 165e12, 3.0e12, "gemm_tuned_ex", "cublasSgemm",
     "fp32 A/B/C, gemmtune COMPUTE_32F_EMULATED_3XTF32 vs cuBLAS fp32 (TF32 off)"},
};
enum { NDTYPES = sizeof DTYPES / sizeof DTYPES[0] };

/* Bytes per element of a type. */
static size_t type_size(gt_datatype t)
{
    switch (t) {
    case GT_R_64F: return 8;
    case GT_R_16F:
    case GT_R_16BF: return 2;
    case GT_R_32F: break;
    }
    return 4;
}

typedef struct { int64_t m, n, k; char opa, opb; } shape;

typedef struct {
    shape s;
    double gt_us, cublas_us, cold_s, rel_err, floor_us;
    const char *bound, *source, *cls;
    int tuned, ok;
} result;

/* Everything one timed run needs, so a set can run either library. A and B hold
 * elements of dt->ab, the two C buffers elements of dt->c. */
typedef struct {
    cublasHandle_t blas;
    cudaStream_t stream;
    const dtype_info *dt;
    shape s;
    int64_t lda, ldb, ldc;
    const void *A, *B;
    void *C_gt, *C_cublas;
} run_ctx;

/* Shape classes, in the order they are tested and reported: the first that matches. */
static const char *const CLASSES[] = {"small", "skinny/flat", "large-K", "large", "other"};
enum { NCLASSES = sizeof CLASSES / sizeof CLASSES[0] };

/* small: MNK <= 300^3; skinny/flat: min(M,N) <= 128 or K <= 128; large-K: K >= 8 max(M,N);
 * large: every dimension >= 2048 (the big squares and near-squares); other: the rest. */
static const char *shape_class(const shape *s)
{
    double mnk = (double)s->m * (double)s->n * (double)s->k;
    int64_t mn_min = s->m < s->n ? s->m : s->n, mn_max = s->m > s->n ? s->m : s->n;
    if (mnk <= 300.0 * 300.0 * 300.0) return CLASSES[0];
    if (mn_min <= 128 || s->k <= 128) return CLASSES[1];
    if (s->k >= 8 * mn_max) return CLASSES[2];
    if (mn_min >= 2048 && s->k >= 2048) return CLASSES[3];
    return CLASSES[4];
}

static int class_index(const char *cls)
{
    for (int i = 0; i < NCLASSES; i++)
        if (cls == CLASSES[i]) return i;
    return NCLASSES - 1;
}

enum { LIB_GT, LIB_CUBLAS };

/* ---- error checks: each names the failing call, then the caller skips or exits ---- */

#define CUDA_OK(call) cuda_ok((call), #call)
#define BLAS_OK(call) blas_ok((call), #call)

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return 1;
    (void)cudaGetLastError(); /* clear a non-sticky error (e.g. OOM) so later calls don't see it */
    fprintf(stderr, "gemmtune-bench: %s failed: %s\n", what, cudaGetErrorString(e));
    return 0;
}

static int blas_ok(cublasStatus_t e, const char *what)
{
    if (e == CUBLAS_STATUS_SUCCESS) return 1;
    fprintf(stderr, "gemmtune-bench: %s failed: %s\n", what, cublasGetStatusString(e));
    return 0;
}

/* ---- argument and shape parsing ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: gemmtune-bench [--dtype T] [--file SHAPES] [--json OUT.json] "
               "[--reps N] [--warmup N] [--device I] [--help] [MxNxK[:NT] ...]\n"
               "  --dtype: f32 (gemm_tuned vs cublasSgemm, default), f64 (gemm_tuned_d vs "
               "cublasDgemm),\n"
               "    or gemm_tuned_ex vs cublasGemmEx: tf32, f16, f16_f32, bf16, bf16_f32\n"
               "    or gemm_tuned_ex (COMPUTE_32F_EMULATED_3XTF32) vs cublasSgemm: f32_3xtf32\n"
               "  SHAPES: lines 'M N K opA opB' (op N or T), '#' starts a comment line\n"
               "  MxNxK[:AB]: a shape on the command line, ops default to NN\n");
}

static int parse_op(char c, char *out)
{
    if (c == 'N' || c == 'n') { *out = 'N'; return 1; }
    if (c == 'T' || c == 't') { *out = 'T'; return 1; }
    return 0;
}

static int push_shape(shape **v, size_t *n, size_t *cap, shape s)
{
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) return 0;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        shape *p = realloc(*v, nc * sizeof *p);
        if (!p) return 0;
        *v = p, *cap = nc;
    }
    (*v)[(*n)++] = s;
    return 1;
}

static int parse_positional(const char *arg, shape *s)
{
    long long m, n, k;
    char a, b;
    int used = 0;
    if (sscanf(arg, "%lldx%lldx%lld%n", &m, &n, &k, &used) != 3) return 0;
    const char *ops = arg[used] ? arg + used : ":NN";
    if (ops[0] != ':' || strlen(ops) != 3 || !parse_op(ops[1], &a) || !parse_op(ops[2], &b))
        return 0;
    *s = (shape){m, n, k, a, b};
    return 1;
}

static int read_shape_file(const char *path, shape **v, size_t *n, size_t *cap)
{
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); return 0; }
    char line[512];
    int lineno = 0, good = 1;
    while (good && fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line + strspn(line, " \t\r\n");
        if (*p == '\0' || *p == '#') continue;
        long long m, nn, k;
        char a, b, extra;
        shape s;
        int got = sscanf(p, "%lld %lld %lld %c %c %c", &m, &nn, &k, &a, &b, &extra);
        good = (got == 5 || (got == 6 && extra == '#')) && parse_op(a, &s.opa) &&
               parse_op(b, &s.opb);
        s.m = m, s.n = nn, s.k = k;
        if (good) good = push_shape(v, n, cap, s);
        if (!good) fprintf(stderr, "%s:%d: expected 'M N K opA opB' (op N or T)\n", path, lineno);
    }
    fclose(f);
    return good;
}

/* ---- host helpers ---- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t splitmix64(uint64_t *seed)
{
    uint64_t z = (*seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1) from splitmix64: fp32 takes two 24-bit values per step (the values
 * of earlier runs), fp64 one 53-bit value per step, so every mantissa bit is used.
 * 8192^2 inputs take a fraction of a second. */
static void fill_uniform(void *buf, size_t n, uint64_t seed, int f64)
{
    if (f64) {
        double *x = buf;
        for (size_t i = 0; i < n; i++)
            x[i] = (double)(splitmix64(&seed) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
        return;
    }
    float *x = buf;
    for (size_t i = 0; i < n; i += 2) {
        uint64_t z = splitmix64(&seed);
        x[i] = (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
        if (i + 1 < n) x[i + 1] = (float)(z & 0xFFFFFF) * (2.0f / 16777216.0f) - 1.0f;
    }
}

/* fp32 to fp16 bits, rounding to nearest even (overflow to infinity, NaN kept NaN). */
static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)(x >> 16 & 0x8000);
    uint32_t abs = x & 0x7FFFFFFF;
    if (abs > 0x7F800000) return sign | 0x7E00;     /* NaN */
    if (abs >= 0x477FF000) return sign | 0x7C00;    /* rounds to or above 65536: infinity */
    if (abs < 0x38800000) {                         /* below 2^-14: subnormal or zero */
        if (abs < 0x33000000) return sign;          /* below 2^-25: rounds to zero */
        uint32_t mant = (abs & 0x7FFFFF) | 0x800000, shift = 126 - (abs >> 23);
        uint32_t h = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        h += rest > half || (rest == half && (h & 1));
        return sign | (uint16_t)h;
    }
    uint32_t h = (abs >> 13) - (112u << 10), rest = abs & 0x1FFF; /* rebias 127 -> 15 */
    h += rest > 0x1000 || (rest == 0x1000 && (h & 1));
    return sign | (uint16_t)h;
}

static double f16_to_double(uint16_t h)
{
    int e = h >> 10 & 0x1F, m = h & 0x3FF;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
    return h & 0x8000 ? -v : v;
}

/* fp32 to bf16 bits (the upper half), rounding to nearest even; NaN kept NaN. */
static uint16_t f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7FFFFFFF) > 0x7F800000) return (uint16_t)(x >> 16 | 0x40);
    return (uint16_t)((x + 0x7FFF + (x >> 16 & 1)) >> 16);
}

static double bf16_to_double(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* Inputs of the tensor-core types: odd multiples of 1/256 in (-1, 1), 8 significant bits,
 * so exact in tf32, fp16 and bf16 alike and never zero; four values per splitmix64 step
 * (7 bits of magnitude and a sign bit each). Stored as elements of type t. */
static void fill_exact(void *buf, size_t n, uint64_t seed, gt_datatype t)
{
    uint64_t z = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 4 == 0) z = splitmix64(&seed);
        unsigned u = (unsigned)(z >> (16 * (i % 4))) & 0xFFFF;
        float v = (float)((u & 0x7F) * 2 + 1) * (1.0f / 256.0f) * (u & 0x80 ? -1.0f : 1.0f);
        if (t == GT_R_16F) ((uint16_t *)buf)[i] = f32_to_f16(v);
        else if (t == GT_R_16BF) ((uint16_t *)buf)[i] = f32_to_bf16(v);
        else ((float *)buf)[i] = v;
    }
}

/* Element i of a host buffer of type t, as a double. */
static double elem(const void *buf, size_t i, gt_datatype t)
{
    switch (t) {
    case GT_R_64F: return ((const double *)buf)[i];
    case GT_R_16F: return f16_to_double(((const uint16_t *)buf)[i]);
    case GT_R_16BF: return bf16_to_double(((const uint16_t *)buf)[i]);
    case GT_R_32F: break;
    }
    return (double)((const float *)buf)[i];
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* ---- runs ---- */

/* alpha = 1, beta = 0, in the compute type of c->dt (float but for f64). */
static int launch(const run_ctx *c, int lib)
{
    const shape *s = &c->s;
    const dtype_info *dt = c->dt;
    int f64 = dt->call == CALL_D;
    const float onef = 1.0f, zerof = 0.0f;
    if (lib == LIB_GT) {
        gt_op a = s->opa == 'T' ? GT_OP_T : GT_OP_N, b = s->opb == 'T' ? GT_OP_T : GT_OP_N;
        gt_status st =
            dt->call == CALL_EX || dt->call == CALL_EX_S
                ? gemm_tuned_ex(a, b, s->m, s->n, s->k, &onef, c->A, dt->ab, c->lda, c->B, dt->ab,
                                c->ldb, &zerof, c->C_gt, dt->c, c->ldc, dt->compute, c->stream)
            : f64 ? gemm_tuned_d(a, b, s->m, s->n, s->k, 1.0, c->A, c->lda, c->B, c->ldb, 0.0,
                                 c->C_gt, c->ldc, c->stream)
                  : gemm_tuned(a, b, s->m, s->n, s->k, 1.0f, c->A, c->lda, c->B, c->ldb, 0.0f,
                               c->C_gt, c->ldc, c->stream);
        if (st == GT_SUCCESS) return 1;
        fprintf(stderr, "gemmtune-bench: %s failed: %s: %s\n", dt->gt_name,
                gt_status_string(st), gt_last_error());
        return 0;
    }
    cublasOperation_t a = s->opa == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t b = s->opb == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (dt->call == CALL_EX)
        return BLAS_OK(cublasGemmEx(c->blas, a, b, (int)s->m, (int)s->n, (int)s->k, &onef, c->A,
                                    dt->cu_ab, (int)c->lda, c->B, dt->cu_ab, (int)c->ldb, &zerof,
                                    c->C_cublas, dt->cu_c, (int)c->ldc, dt->cu_compute,
                                    CUBLAS_GEMM_DEFAULT));
    if (f64) {
        const double one = 1.0, zero = 0.0;
        return BLAS_OK(cublasDgemm(c->blas, a, b, (int)s->m, (int)s->n, (int)s->k, &one, c->A,
                                   (int)c->lda, c->B, (int)c->ldb, &zero, c->C_cublas,
                                   (int)c->ldc));
    }
    return BLAS_OK(cublasSgemm(c->blas, a, b, (int)s->m, (int)s->n, (int)s->k, &onef, c->A,
                               (int)c->lda, c->B, (int)c->ldb, &zerof, c->C_cublas, (int)c->ldc));
}

/* One set: warm-up, then `reps` runs each between its own events; median in us, or -1.
 * All events are enqueued before the host waits, so the GPU never idles between runs. */
static double time_set(const run_ctx *c, int lib, int warmup, int reps)
{
    double med = -1;
    cudaEvent_t *ev = calloc((size_t)reps * 2, sizeof *ev);
    float *ms = calloc((size_t)reps, sizeof *ms);
    int made = 0;
    if (!ev || !ms) goto out;
    for (; made < 2 * reps; made++)
        if (!CUDA_OK(cudaEventCreate(&ev[made]))) goto out;
    for (int i = 0; i < warmup; i++)
        if (!launch(c, lib)) goto out;
    for (int i = 0; i < reps; i++) {
        if (!CUDA_OK(cudaEventRecord(ev[2 * i], c->stream)) || !launch(c, lib) ||
            !CUDA_OK(cudaEventRecord(ev[2 * i + 1], c->stream)))
            goto out;
    }
    if (!CUDA_OK(cudaEventSynchronize(ev[2 * reps - 1]))) goto out;
    for (int i = 0; i < reps; i++)
        if (!CUDA_OK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]))) goto out;
    qsort(ms, (size_t)reps, sizeof *ms, cmp_float);
    med = 1e3 * (reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]));
out:
    while (made > 0) cudaEventDestroy(ev[--made]);
    free(ev);
    free(ms);
    return med;
}

/* Runs one shape into r. Returns 0 when the CUDA runtime failed (the caller then checks
 * whether the device is still usable), 1 otherwise; r->ok says whether the shape passed. */
static int bench_shape(cublasHandle_t blas, cudaStream_t stream, const dtype_info *dt,
                       const shape *s, int warmup, int reps, result *r)
{
    run_ctx c = {blas, stream, dt, *s, s->opa == 'T' ? s->k : s->m, s->opb == 'T' ? s->n : s->k,
                 s->m, NULL, NULL, NULL, NULL};
    size_t na = (size_t)(s->m * s->k), nb = (size_t)(s->k * s->n), nc = (size_t)(s->m * s->n);
    size_t es = type_size(dt->ab), esc = type_size(dt->c); /* A/B and C element bytes */
    void *hA = NULL, *hB = NULL, *hgt = NULL, *hcb = NULL, *dA = NULL, *dB = NULL;
    int cuda_fine = 0;
    double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    double bytes = (double)es * (double)(na + nb) + (double)esc * (double)nc;
    double mem_us = bytes / dt->peak_bytes * 1e6;
    double flop_us = flops / dt->peak_flops * 1e6;
    *r = (result){*s, NAN, NAN, NAN, NAN, fmax(mem_us, flop_us), mem_us >= flop_us ? "mem" : "flop",
                  "-", shape_class(s), 0, 0};
    if (s->m > INT_MAX || s->n > INT_MAX || s->k > INT_MAX) { /* cuBLAS takes int sizes */
        fprintf(stderr, "gemmtune-bench: %lldx%lldx%lld is too large for %s\n", (long long)s->m,
                (long long)s->n, (long long)s->k, dt->blas_name);
        return 1;
    }
    hA = malloc(na * es), hB = malloc(nb * es), hgt = malloc(nc * esc), hcb = malloc(nc * esc);
    if (!hA || !hB || !hgt || !hcb) {
        fprintf(stderr, "gemmtune-bench: out of host memory\n");
        cuda_fine = 1;
        goto out;
    }
    if (dt->call == CALL_EX) {
        fill_exact(hA, na, 0x5EED0001ull, dt->ab);
        fill_exact(hB, nb, 0x5EED0002ull, dt->ab);
    } else {
        fill_uniform(hA, na, 0x5EED0001ull, dt->call == CALL_D);
        fill_uniform(hB, nb, 0x5EED0002ull, dt->call == CALL_D);
    }
    if (!CUDA_OK(cudaMalloc(&dA, na * es)) || !CUDA_OK(cudaMalloc(&dB, nb * es)) ||
        !CUDA_OK(cudaMalloc(&c.C_gt, nc * esc)) || !CUDA_OK(cudaMalloc(&c.C_cublas, nc * esc)) ||
        !CUDA_OK(cudaMemcpy(dA, hA, na * es, cudaMemcpyHostToDevice)) ||
        !CUDA_OK(cudaMemcpy(dB, hB, nb * es, cudaMemcpyHostToDevice)) ||
        !CUDA_OK(cudaDeviceSynchronize()))
        goto out;
    c.A = dA, c.B = dB;

    /* 1. cold call */
    gt_stats before, after;
    gt_get_stats(&before);
    double t0 = now_s();
    int gt_ran = launch(&c, LIB_GT);
    if (!CUDA_OK(cudaDeviceSynchronize())) goto out;
    r->cold_s = now_s() - t0;
    gt_get_stats(&after);
    r->tuned = after.tunes > before.tunes;
    r->source = after.fallbacks > before.fallbacks ? "fallback" : r->tuned ? "tuned"
              : after.cache_hits > before.cache_hits ? "cache"
              : after.plan_hits > before.plan_hits   ? "plan" : "?";
    cuda_fine = 1;
    if (!gt_ran) {
        r->source = "error";
        goto out;
    }

    /* 2. reference and error, before any timing */
    if (!launch(&c, LIB_CUBLAS) ||
        !CUDA_OK(cudaMemcpy(hgt, c.C_gt, nc * esc, cudaMemcpyDeviceToHost)) ||
        !CUDA_OK(cudaMemcpy(hcb, c.C_cublas, nc * esc, cudaMemcpyDeviceToHost))) {
        cuda_fine = 0;
        goto out;
    }
    double diff2 = 0, ref2 = 0;
    for (size_t i = 0; i < nc; i++) {
        double g = elem(hgt, i, dt->c), b = elem(hcb, i, dt->c), d = g - b;
        diff2 += d * d, ref2 += b * b;
    }
    r->rel_err = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    if (!isfinite(r->rel_err) || r->rel_err > dt->max_rel_err) {
        fprintf(stderr, "gemmtune-bench: %s %lldx%lldx%lld:%c%c rel err %.3e exceeds %.0e\n",
                dt->name, (long long)s->m, (long long)s->n, (long long)s->k, s->opa, s->opb,
                r->rel_err, dt->max_rel_err);
        goto out;
    }

    /* 3. timing: short problems get more runs (up to 200) so the median is stable */
    int n = (int)fmax((double)reps, fmin(200.0, (double)reps * 1e9 / flops));
    cuda_fine = 0;
    for (int round = 0; round < 2; round++) {
        double g = time_set(&c, LIB_GT, warmup, n), b = time_set(&c, LIB_CUBLAS, warmup, n);
        if (g < 0 || b < 0) goto out;
        r->gt_us = round == 0 ? g : fmin(r->gt_us, g);
        r->cublas_us = round == 0 ? b : fmin(r->cublas_us, b);
    }
    cuda_fine = 1;
    r->ok = 1;
out:
    cudaFree(dA), cudaFree(dB), cudaFree(c.C_gt), cudaFree(c.C_cublas);
    free(hA), free(hB), free(hgt), free(hcb);
    return cuda_fine;
}

/* ---- output ---- */

static double tflops(const shape *s, double us)
{
    return 2.0 * (double)s->m * (double)s->n * (double)s->k / (us * 1e-6) / 1e12;
}

static double ratio(const result *r) { return r->ok ? r->cublas_us / r->gt_us : NAN; }

/* The geometric mean of the ratio over the shapes that passed, and each class's
 * minimum ratio (NAN, at -1, when none of the class passed). */
typedef struct {
    double geomean;
    int nok;
    double min[NCLASSES];
    long at[NCLASSES];
    int count[NCLASSES];
} summary;

static summary summarize(const result *res, size_t n)
{
    summary sm = {NAN, 0, {0}, {0}, {0}};
    double logsum = 0;
    for (int c = 0; c < NCLASSES; c++) sm.min[c] = NAN, sm.at[c] = -1;
    for (size_t i = 0; i < n; i++) {
        if (!res[i].ok) continue;
        double q = ratio(&res[i]);
        int c = class_index(res[i].cls);
        logsum += log(q), sm.nok++;
        if (sm.count[c]++ == 0 || q < sm.min[c]) sm.min[c] = q, sm.at[c] = (long)i;
    }
    if (sm.nok) sm.geomean = exp(logsum / sm.nok);
    return sm;
}

static void shape_str(const shape *s, char *b, size_t size)
{
    snprintf(b, size, "%lldx%lldx%lld:%c%c", (long long)s->m, (long long)s->n, (long long)s->k,
             s->opa, s->opb);
}

/* A right-aligned number, or "-" for one never measured. */
static void put_num(int width, const char *fmt, double v)
{
    char b[32] = "-";
    if (isfinite(v)) snprintf(b, sizeof b, fmt, v);
    printf("%*s ", width, b);
}

static void print_header(void)
{
    printf("%6s %6s %6s %2s %10s %10s %6s %8s %8s %6s %8s %-8s %-11s %9s %10s %-4s %s\n", "M",
           "N", "K", "op", "gt_us", "cub_us", "ratio", "gt_TF/s", "cub_TF/s", "%floor", "cold_s",
           "source", "class", "rel_err", "floor_us", "bnd", "check");
}

static void print_row(const result *r)
{
    const shape *s = &r->s;
    int ok = r->ok;
    printf("%6lld %6lld %6lld %c%c ", (long long)s->m, (long long)s->n, (long long)s->k, s->opa,
           s->opb);
    put_num(10, "%.2f", ok ? r->gt_us : NAN);
    put_num(10, "%.2f", ok ? r->cublas_us : NAN);
    put_num(6, "%.3f", ratio(r));
    put_num(8, "%.2f", ok ? tflops(s, r->gt_us) : NAN);
    put_num(8, "%.2f", ok ? tflops(s, r->cublas_us) : NAN);
    put_num(6, "%.1f", ok ? r->floor_us / r->gt_us * 100.0 : NAN);
    put_num(8, "%.3f", r->cold_s);
    printf("%-8s %-11s ", r->source, r->cls);
    put_num(9, "%.2e", r->rel_err);
    put_num(10, "%.2f", r->floor_us);
    printf("%-4s %s\n", r->bound, ok ? "ok" : "FAIL");
    fflush(stdout);
}

static void print_summary(const result *res, const summary *sm)
{
    if (sm->nok) printf("geomean gt/cublas = %.3f over %d shapes\n", sm->geomean, sm->nok);
    else printf("geomean gt/cublas = n/a over 0 shapes\n");
    for (int c = 0; c < NCLASSES; c++) {
        char b[96];
        if (!sm->count[c]) continue;
        shape_str(&res[sm->at[c]].s, b, sizeof b);
        printf("min ratio %-11s = %.3f at %s (%d shape%s)\n", CLASSES[c], sm->min[c], b,
               sm->count[c], sm->count[c] == 1 ? "" : "s");
    }
}

/* JSON has no NaN: a value that was never measured is written as null. */
static void json_num(FILE *f, const char *key, double v, const char *fmt, int last)
{
    fprintf(f, "\"%s\": ", key);
    if (isfinite(v)) fprintf(f, fmt, v);
    else fputs("null", f);
    fputs(last ? "" : ", ", f);
}

static int write_json(const char *path, const struct cudaDeviceProp *p, const dtype_info *dt,
                      const result *res, size_t n, const summary *sm)
{
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); return 0; }
    char date[32];
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    fputs("{\n  \"gpu\": {\"name\": \"", f);
    for (const char *c = p->name; *c; c++) { /* the device name is plain ASCII; escape anyway */
        if (*c == '"' || *c == '\\') fputc('\\', f);
        fputc((unsigned char)*c < 0x20 ? '?' : *c, f);
    }
    fprintf(f, "\", \"cc\": \"%d.%d\", \"sms\": %d},\n", p->major, p->minor,
            p->multiProcessorCount);
    fprintf(f, "  \"date\": \"%s\",\n  \"dtype\": \"%s\",\n", date, dt->name);
    fprintf(f, "  \"reference\": \"%s\", \"max_rel_err\": %.0e,\n", dt->blas_name, dt->max_rel_err);
    fprintf(f, "  \"floor\": {\"flops_per_s\": %.3e, \"bytes_per_s\": %.3e, \"elem_bytes\": %zu, "
               "\"elem_bytes_c\": %zu},\n",
            dt->peak_flops, dt->peak_bytes, type_size(dt->ab), type_size(dt->c));
    fputs("  \"shapes\": [\n", f);
    for (size_t i = 0; i < n; i++) {
        const result *r = &res[i];
        fprintf(f, "    {\"m\": %lld, \"n\": %lld, \"k\": %lld, \"opa\": \"%c\", \"opb\": \"%c\", "
                   "\"dtype\": \"%s\", \"class\": \"%s\", ",
                (long long)r->s.m, (long long)r->s.n, (long long)r->s.k, r->s.opa, r->s.opb,
                dt->name, r->cls);
        json_num(f, "gt_us", r->ok ? r->gt_us : NAN, "%.3f", 0);
        json_num(f, "cublas_us", r->ok ? r->cublas_us : NAN, "%.3f", 0);
        json_num(f, "gt_tflops", r->ok ? tflops(&r->s, r->gt_us) : NAN, "%.4f", 0);
        json_num(f, "cublas_tflops", r->ok ? tflops(&r->s, r->cublas_us) : NAN, "%.4f", 0);
        json_num(f, "ratio", ratio(r), "%.4f", 0);
        json_num(f, "cold_s", r->cold_s, "%.6f", 0);
        fprintf(f, "\"tuned\": %s, \"source\": \"%s\", ", r->tuned ? "true" : "false", r->source);
        json_num(f, "rel_err", r->rel_err, "%.3e", 0);
        json_num(f, "floor_us", r->floor_us, "%.3f", 0);
        json_num(f, "pct_floor", r->ok ? r->floor_us / r->gt_us * 100.0 : NAN, "%.2f", 0);
        fprintf(f, "\"bound\": \"%s\", \"ok\": %s}%s\n", r->bound, r->ok ? "true" : "false",
                i + 1 < n ? "," : "");
    }
    fputs("  ],\n  ", f);
    json_num(f, "geomean_ratio", sm->geomean, "%.4f", 1);
    fputs(",\n  \"class_min_ratio\": {", f);
    for (int c = 0; c < NCLASSES; c++) {
        char b[96] = "";
        if (sm->count[c]) shape_str(&res[sm->at[c]].s, b, sizeof b);
        fprintf(f, "%s\n    \"%s\": {", c ? "," : "", CLASSES[c]);
        json_num(f, "min_ratio", sm->min[c], "%.4f", 0);
        if (sm->count[c]) fprintf(f, "\"shape\": \"%s\", ", b);
        else fputs("\"shape\": null, ", f);
        fprintf(f, "\"shapes\": %d}", sm->count[c]);
    }
    fputs("\n  }\n}\n", f);
    return fclose(f) == 0;
}

/* ---- main ---- */

static int parse_int(const char *s, int min, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min || v > 100000) return 0;
    *out = (int)v;
    return 1;
}

static int parse_dtype(const char *s, const dtype_info **out)
{
    for (size_t i = 0; i < NDTYPES; i++)
        if (!strcmp(s, DTYPES[i].name)) { *out = &DTYPES[i]; return 1; }
    return 0;
}

int main(int argc, char **argv)
{
    const char *json = NULL;
    const dtype_info *dt = &DTYPES[0];
    int reps = 20, warmup = 3, device = 0, rc = 0, ndev = 0;
    shape *shapes = NULL;
    size_t nshapes = 0, cap = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        shape s;
        int good = 1;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); free(shapes); return 0; }
        else if (!strcmp(a, "--file") && v) /* read now, so shapes keep command-line order */
            good = read_shape_file(v, &shapes, &nshapes, &cap), i++;
        else if (!strcmp(a, "--json") && v) json = v, i++;
        else if (!strcmp(a, "--dtype") && v) good = parse_dtype(v, &dt), i++;
        else if (!strcmp(a, "--reps") && v) good = parse_int(v, 1, &reps), i++;
        else if (!strcmp(a, "--warmup") && v) good = parse_int(v, 0, &warmup), i++;
        else if (!strcmp(a, "--device") && v) good = parse_int(v, 0, &device), i++;
        else good = a[0] != '-' && parse_positional(a, &s) &&
                    push_shape(&shapes, &nshapes, &cap, s);
        if (!good) {
            fprintf(stderr, "gemmtune-bench: bad argument '%s'\n", a);
            usage(stderr);
            free(shapes);
            return 2;
        }
    }
    if (nshapes == 0) {
        fprintf(stderr, "gemmtune-bench: no shapes (give --file or MxNxK arguments)\n");
        usage(stderr);
        free(shapes);
        return 2;
    }

    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        fprintf(stderr, "gemmtune-bench: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
        free(shapes);
        return 1;
    }
    struct cudaDeviceProp prop;
    cublasHandle_t blas = NULL;
    cudaStream_t stream = NULL;
    result *res = calloc(nshapes, sizeof *res);
    size_t done = 0;
    if (!res || device >= ndev || !CUDA_OK(cudaSetDevice(device)) ||
        !CUDA_OK(cudaGetDeviceProperties(&prop, device)) || !CUDA_OK(cudaStreamCreate(&stream)) ||
        !BLAS_OK(cublasCreate(&blas)) || !BLAS_OK(cublasSetStream(blas, stream)) ||
        /* explicit, so TF32 (and FP64 emulation) stay off whatever the environment says */
        !BLAS_OK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH))) {
        if (device >= ndev)
            fprintf(stderr, "gemmtune-bench: no device %d (%d found)\n", device, ndev);
        rc = 1;
        goto out;
    }
    int ver[3];
    gt_version(&ver[0], &ver[1], &ver[2]);
    printf("# gemmtune %d.%d.%d on %s (cc %d.%d, %d SMs); dtype %s: %s vs %s (%s); warmup %d, "
           "reps %d+\n",
           ver[0], ver[1], ver[2], prop.name, prop.major, prop.minor, prop.multiProcessorCount,
           dt->name, dt->gt_name, dt->blas_name, dt->note, warmup, reps);
    char sizes[64];
    if (dt->ab == dt->c) snprintf(sizes, sizeof sizes, "%zu-byte elements", type_size(dt->ab));
    else snprintf(sizes, sizeof sizes, "%zu-byte A/B and %zu-byte C elements", type_size(dt->ab),
                  type_size(dt->c));
    printf("# floor: %.0f TFLOP/s, %.1f TB/s, %s; max rel err %.0e; "
           "ratio = cub_us / gt_us (> 1: gemmtune faster)\n",
           dt->peak_flops / 1e12, dt->peak_bytes / 1e12, sizes, dt->max_rel_err);
    print_header();
    for (; done < nshapes; done++) {
        int cuda_fine = bench_shape(blas, stream, dt, &shapes[done], warmup, reps, &res[done]);
        print_row(&res[done]);
        if (!res[done].ok) rc = 1;
        /* a failed allocation leaves the device usable; a fault does not: stop there */
        if (!cuda_fine && !CUDA_OK(cudaDeviceSynchronize())) { done++; break; }
    }
    summary sm = summarize(res, done);
    print_summary(res, &sm);
    if (json && !write_json(json, &prop, dt, res, done, &sm)) rc = 1;
out:
    if (blas) cublasDestroy(blas);
    if (stream) cudaStreamDestroy(stream);
    free(res);
    free(shapes);
    gt_release();
    return rc;
}
