/*
 * bench.c: gemmtune-bench, gemmtune against cuBLAS and cuBLASLt, shape by shape, in one data
 * type per run (--dtype): fp32 (gemm_tuned vs cublasSgemm, the default), fp64 (gemm_tuned_d
 * vs cublasDgemm), a tensor-core type (gemm_tuned_ex vs cublasGemmEx with the same types:
 * tf32, f16, f16_f32, bf16, bf16_f32), or fp32 emulated on tensor cores (f32_3xtf32:
 * gemm_tuned_ex vs cublasSgemm); the table DTYPES below. Every type is also run through
 * cublasLtMatmul with the types and compute type of the cuBLAS column (f32_3xtf32: true
 * fp32), best of its heuristic's algorithms: what a tuner of the TunableOp kind would
 * run. One method for all; the type is a run-time choice (element sizes and a switch at
 * the few call sites that need it).
 *
 * Method, per shape (column-major, alpha = 1, beta = 0):
 *  1. Inputs. A and B hold full-entropy uniform values in (-1, 1), made on the host from a
 *     fixed-seed splitmix64 stream (fill_random): every significand bit random, none zero,
 *     then copied to the device once.
 *  2. Cold call. The first gemm_tuned() (gemm_tuned_d(), gemm_tuned_ex()) for a shape is
 *     timed by wall clock (CLOCK_MONOTONIC, device synchronized before and after),
 *     because it may tune (compile, time, verify) or load a winner from the SQLite cache;
 *     gt_get_stats() deltas say which. This is the price a caller pays once per shape.
 *  3. Correctness. cuBLAS computes the same product with CUBLAS_DEFAULT_MATH set
 *     explicitly, so TF32 (fp32) and FP64 emulation (fp64) are off: the reference is
 *     true fp32, or true fp64. The tensor-core types name their compute type in the
 *     cublasGemmEx call (CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32 for tf32),
 *     CUBLAS_GEMM_DEFAULT. The relative Frobenius error ||C_gt - C_cublas|| / ||C_cublas||
 *     is summed on the host in double; above the type's bound (err_bound(): the reasoning
 *     is above DTYPES), or not finite, the shape fails and is not timed.
 *  4. cuBLASLt search. cublasLtMatmulAlgoGetHeuristic is asked for up to LT_MAX_ALGOS
 *     algorithms with a workspace of LT_WORKSPACE_BYTES; each one the heuristic returns
 *     is timed as in 5 with LT_SEARCH_REPS timed runs (one that fails is skipped); the
 *     fastest is checked against cuBLAS with the same bound (if it fails, the next
 *     fastest, and so on) and is the cuBLASLt column. A failure here blanks that column
 *     only; the shape's pass or fail is gemmtune's.
 *  5. Timing. One stream for all. Each set is `warmup` untimed runs, then `reps` timed
 *     runs (more for small problems, whose times are short and noisy: up to 200). Before
 *     every timed run a scratch buffer of twice the L2 size is written (cudaMemsetAsync on
 *     the same stream), so each run starts with A, B and C out of L2, as a call does
 *     that follows other work; the start event is recorded after that write, so the
 *     write is not in the timed interval. Each run sits between its own pair of CUDA
 *     events and the set reports the median, which resists outliers (clock ramps, other
 *     tenants). Sets run gt, cuBLAS, cuBLASLt, then again in that order, and each
 *     library keeps its better median, so slow drift (clocks, heat) does not favour
 *     whichever ran first.
 *  6. Floor. The time no kernel can beat on an H100-class part: the larger of the
 *     compulsory traffic e_ab(MK+KN) + e_c MN bytes at 3.0e12 B/s (e = the element sizes
 *     of A/B and of C: 4 fp32 and tf32, 8 fp64, 2 f16 and bf16, 4 for the C of f16_f32
 *     and bf16_f32) and 2MNK flops at the type's ceiling: 67e12 FLOP/s for fp32 (FFMA)
 *     and fp64 (FP64 tensor cores), 495e12 for tf32, 990e12 for f16/bf16 (dense tensor
 *     cores), 165e12 for f32_3xtf32 (tf32's over three instructions). "%floor" is how
 *     close gt gets to it.
 *  7. Summary. For each reference (cuBLAS, cuBLASLt), the geometric mean of
 *     ratio = reference time / gt time over the shapes where both were measured, and the
 *     minimum ratio of each class of shape (shape_class() below: small, skinny/flat,
 *     large-K, large, other), the worst case being what a user of that kind of shape
 *     risks.
 *
 * Owns: nothing beyond its own allocations. This is the only file that calls cuBLAS or
 * cuBLASLt (bench/mock/mock.c stands in for them, to check this file without a GPU).
 * Exit status: 0 all shapes ok, 1 a shape failed or CUDA failed or no device, 2 usage.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_MONOTONIC under -std=c11 */
#endif
#include <cublasLt.h>
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

/* The cuBLASLt search: how many algorithms the heuristic is asked for, the workspace they
 * may use, and the timed runs of each (its winner is then timed like the others). */
enum { LT_MAX_ALGOS = 16, LT_SEARCH_REPS = 5 };
#define LT_WORKSPACE_BYTES ((size_t)32 << 20)

/* The most timed runs of a set; small problems get up to this many. */
enum { MAX_REPS = 200 };

/* Which pair of functions a type calls: gemm_tuned/cublasSgemm, gemm_tuned_d/cublasDgemm,
 * gemm_tuned_ex/cublasGemmEx with the types of dtype_info, or gemm_tuned_ex/cublasSgemm
 * (f32_3xtf32: fp32 emulated, against cuBLAS's true fp32). */
typedef enum { CALL_S, CALL_D, CALL_EX, CALL_EX_S } call_kind;

/* The data type: all that differs between types outside the call sites. */
typedef struct {
    const char *name;           /* --dtype and the JSON "dtype" */
    call_kind call;             /* the switch at the call sites */
    gt_datatype ab, c;          /* element types of A and B, and of C */
    gt_compute_type compute;
    cudaDataType cu_ab, cu_c;   /* the same three for cublasGemmEx and cublasLtMatmul */
    cublasComputeType_t cu_compute;
    double err_floor;           /* correctness bound: max(err_floor, 8 err_u sqrt(K)) */
    double err_u;               /* unit roundoff of the accumulation */
    double peak_flops;          /* FLOP/s ceiling of the floor */
    double peak_bytes;          /* B/s ceiling of the floor */
    const char *gt_name, *blas_name, *note;
} dtype_info;

/* Correctness bounds on ||C_gt - C_ref||_F / ||C_ref||_F with full-entropy inputs in
 * (-1, 1): max(err_floor, 8 u sqrt(K)), u = 2^-24 for an fp32 accumulation, 2^-53 fp64.
 * - f32, f64: two correct GEMMs differ by the order of their sums. A sum of K products of
 *   random sign, added one by one, is off by about u sqrt(K) / 3 of its value (each
 *   addition errs by up to u/2 of the partial sum, which grows as sqrt(k); fp32 FMA chains
 *   on these inputs, simulated: 1.4e-7 at K = 64, 1.2e-6 at 4096, 4.8e-6 at 65536);
 *   blocked and split-K orders are off by less. 8 u sqrt(K) is 20 times or more the
 *   difference of two such orders, yet an fp32 kernel that rounds its inputs to tf32
 *   (4e-4 to 7e-4 in the result) fails for any K below 500000. The floors, 1e-5 and
 *   1e-12, rule below K = 440 and K = 1.2e6.
 * - tf32: both libraries round A and B to tf32 (10 stored mantissa bits) inside the
 *   kernel. Where one rounds to nearest and the other truncates (the tensor cores read
 *   the top 19 bits of an fp32 operand), the products differ by a shrink of up to 2^-10
 *   and a spread, independent across products: about 8e-4 in the result for any K
 *   (simulated: 7.4e-4 to 8.2e-4 for K from 64 to 65536). Where both truncate, only the
 *   order of the sums differs (1e-6). 5e-3 covers either.
 * - f16, bf16 (16-bit C): the products of 16-bit inputs are exact in fp32 (11 x 11 and
 *   8 x 8 significant bits fit in 24), so the fp32 results differ by the order of the
 *   sums (about 1e-6) and the final rounding to the output type mostly agrees. cuBLAS may
 *   add split-K partials in the output type (its default math allows that), each
 *   rounding by up to half an ulp (2^-11 relative for fp16, 2^-8 for bf16; about 0.58
 *   of that RMS): 4e-4 (fp16) and 3e-3 (bf16) for a few partials. The bounds, 2e-3 and
 *   1e-2, leave room for those, not for a wrong result.
 * - f16_f32, bf16_f32 (fp32 C): exact products again, so only the order of the fp32 sums
 *   differs, as in f32; the floor is 1e-4 because the tensor cores add the products of
 *   one instruction with a single rounding (truncation on some parts), less evenly than
 *   FFMA does.
 * - f32_3xtf32 against true fp32: each emulated product is off by at most about 2^-20
 *   relative (the low x low term and the rounding of the low parts are dropped), errors
 *   independent across products, so about 3e-7 in the result, below f32's own bound. */
static const dtype_info DTYPES[] = {
    {"f32", CALL_S, GT_R_32F, GT_R_32F, GT_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, 1e-5, 0x1p-24, 67e12, 3.0e12, "gemm_tuned", "cublasSgemm",
     "fp32, TF32 off"},
    {"f64", CALL_D, GT_R_64F, GT_R_64F, GT_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F,
     CUBLAS_COMPUTE_64F, 1e-12, 0x1p-53, 67e12, 3.0e12, "gemm_tuned_d", "cublasDgemm",
     "fp64, cuBLAS DMMA, emulation off"},
    {"tf32", CALL_EX, GT_R_32F, GT_R_32F, GT_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F_FAST_TF32, 5e-3, 0x1p-24, 495e12, 3.0e12, "gemm_tuned_ex",
     "cublasGemmEx", "fp32 A/B/C, TF32 tensor cores, COMPUTE_32F_FAST_TF32"},
    {"f16", CALL_EX, GT_R_16F, GT_R_16F, GT_COMPUTE_32F, CUDA_R_16F, CUDA_R_16F,
     CUBLAS_COMPUTE_32F, 2e-3, 0x1p-24, 990e12, 3.0e12, "gemm_tuned_ex", "cublasGemmEx",
     "fp16 A/B/C, COMPUTE_32F"},
    {"f16_f32", CALL_EX, GT_R_16F, GT_R_32F, GT_COMPUTE_32F, CUDA_R_16F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, 1e-4, 0x1p-24, 990e12, 3.0e12, "gemm_tuned_ex", "cublasGemmEx",
     "fp16 A/B, fp32 C, COMPUTE_32F"},
    {"bf16", CALL_EX, GT_R_16BF, GT_R_16BF, GT_COMPUTE_32F, CUDA_R_16BF, CUDA_R_16BF,
     CUBLAS_COMPUTE_32F, 1e-2, 0x1p-24, 990e12, 3.0e12, "gemm_tuned_ex", "cublasGemmEx",
     "bf16 A/B/C, COMPUTE_32F"},
    {"bf16_f32", CALL_EX, GT_R_16BF, GT_R_32F, GT_COMPUTE_32F, CUDA_R_16BF, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, 1e-4, 0x1p-24, 990e12, 3.0e12, "gemm_tuned_ex", "cublasGemmEx",
     "bf16 A/B, fp32 C, COMPUTE_32F"},
    /* cuBLAS has no fp32 emulation on the H100: the comparison is with its true fp32
     * (cublasSgemm, and cuBLASLt with CUBLAS_COMPUTE_32F), and the floor's ceiling is
     * tf32's over three instructions. */
    {"f32_3xtf32", CALL_EX_S, GT_R_32F, GT_R_32F, GT_COMPUTE_32F_EMULATED_3XTF32, CUDA_R_32F,
     CUDA_R_32F, CUBLAS_COMPUTE_32F, 1e-5, 0x1p-24, 165e12, 3.0e12, "gemm_tuned_ex",
     "cublasSgemm", "fp32 A/B/C, gemmtune COMPUTE_32F_EMULATED_3XTF32 vs cuBLAS fp32 (TF32 off)"},
};
enum { NDTYPES = sizeof DTYPES / sizeof DTYPES[0] };

/* The multiple of u sqrt(K) in the bound. */
#define ERR_K_FACTOR 8.0

static double err_bound(const dtype_info *dt, int64_t k)
{
    return fmax(dt->err_floor, ERR_K_FACTOR * dt->err_u * sqrt((double)k));
}

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

/* One shape's results; times in microseconds, NAN where not measured. lt_pick is the
 * winner's rank in the heuristic's list (0: cuBLASLt's own first choice), -1 for none. */
typedef struct {
    shape s;
    double gt_us, cublas_us, lt_us, cold_s, rel_err, lt_rel_err, max_err, floor_us;
    int lt_returned, lt_algos, lt_pick;
    const char *bound, *source, *cls;
    int tuned, ok;
    long long compiles; /* NVRTC compiles during the cold call */
    int specialized;    /* the cold call's generic kernel gave way to its exact-shape twin
                           (gt_set_specialize) before the check and the timing */
} result;

/* What lives for the whole run: handles, the stream, the L2 flush buffer, cuBLASLt's
 * workspace, and the run settings. */
typedef struct {
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    cudaStream_t stream;
    void *flush;          /* passed over before each timed run, so that L2 holds none of A, B, C */
    size_t flush_bytes;   /* twice the L2 size */
    float *flush_sum;     /* clean flush: where the read pass's sum goes (device memory) */
    int flush_write;      /* 1: the flush writes the buffer (memset), leaving L2 full of dirty
                             lines that the timed call then writes back as it evicts them;
                             0 (default): it reads the buffer (cublasSasum), so L2 is clean,
                             as after a layer that read its weights */
    void *lt_ws;          /* cuBLASLt workspace, LT_WORKSPACE_BYTES */
    int use_lt, warmup, reps;
} bench_env;

/* The cuBLASLt problem of one shape: descriptors (C's layout serves for D too, the
 * product being written in place with beta = 0) and the heuristic's answer. */
typedef struct {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t heur[LT_MAX_ALGOS];
    int nheur;
} lt_problem;

/* Everything one timed run needs, so a set can run any library. A and B hold
 * elements of dt->ab, the C buffers elements of dt->c. */
typedef struct {
    const bench_env *env;
    const dtype_info *dt;
    shape s;
    int64_t lda, ldb, ldc;
    const void *A, *B;
    void *C_gt, *C_cublas, *C_lt;
    const lt_problem *lt;
    const cublasLtMatmulAlgo_t *algo; /* the algorithm LIB_LT runs */
} run_ctx;

enum { LIB_GT, LIB_CUBLAS, LIB_LT, NLIBS };
static const char *const LIB_NAMES[NLIBS] = {"gemmtune", "cuBLAS", "cuBLASLt"};

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

/* cuBLAS and cuBLASLt share the status type and its strings. */
static int blas_ok(cublasStatus_t e, const char *what)
{
    if (e == CUBLAS_STATUS_SUCCESS) return 1;
    fprintf(stderr, "gemmtune-bench: %s failed: %s\n", what, cublasGetStatusString(e));
    return 0;
}

/* After a library call failed: whether the device still works (a fault is sticky and
 * fails the synchronization; a refused launch is not). */
static int device_usable(cudaStream_t stream)
{
    (void)cudaGetLastError();
    return CUDA_OK(cudaStreamSynchronize(stream));
}

/* cudaFree that reports a failure; NULL is a no-op. */
static void free_dev(void *p)
{
    if (p) CUDA_OK(cudaFree(p));
}

/* ---- argument and shape parsing ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: gemmtune-bench [--dtype T] [--file SHAPES] [--json OUT.json] "
               "[--reps N] [--warmup N] [--device I] [--no-lt] [--flush read|write] [--help]\n"
               "  [MxNxK[:AB] ...]\n"
               "  --dtype: f32 (gemm_tuned vs cublasSgemm, default), f64 (gemm_tuned_d vs "
               "cublasDgemm),\n"
               "    or gemm_tuned_ex vs cublasGemmEx: tf32, f16, f16_f32, bf16, bf16_f32\n"
               "    or gemm_tuned_ex (COMPUTE_32F_EMULATED_3XTF32) vs cublasSgemm: f32_3xtf32\n"
               "    (each also against cublasLtMatmul, best of up to %d heuristic algorithms)\n"
               "  --reps N: timed runs per set, at least (small shapes get more, up to %d); "
               "default 20\n"
               "  --warmup N: untimed runs before each set; default 3\n"
               "  --no-lt: skip the cuBLASLt search and column\n"
               "  --flush: how L2 is emptied before each timed run: read (default) passes over\n"
               "    twice L2's size of other data, leaving L2 clean; write writes it, leaving\n"
               "    dirty lines that the timed call must write back as it evicts them\n"
               "  SHAPES: lines 'M N K opA opB' (op N or T), '#' starts a comment\n"
               "  MxNxK[:AB]: a shape on the command line, ops default to NN\n",
            LT_MAX_ALGOS, MAX_REPS);
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

/* Full-entropy inputs, uniform in (-1, 1), stored as elements of type t. fp64 takes the
 * odd multiples of 2^-53 (53 random bits per value), fp32 the odd multiples of 2^-24 (24
 * random bits, two values per splitmix64 step): every significand bit is random, the
 * values are exact in the type, symmetric about 0 and never zero. fp16 and bf16 round
 * such an fp32 value to nearest even, so all their significand bits are random too; none
 * is zero (2^-24, the smallest magnitude, is fp16's least subnormal and a normal bf16),
 * a few round to +-1. 8192^2 inputs take a fraction of a second. */
static void fill_random(void *buf, size_t n, uint64_t seed, gt_datatype t)
{
    if (t == GT_R_64F) {
        double *x = buf;
        for (size_t i = 0; i < n; i++) {
            int64_t u = (int64_t)(splitmix64(&seed) >> 11); /* 53 bits */
            x[i] = (double)(2 * u + 1 - ((int64_t)1 << 53)) * 0x1p-53;
        }
        return;
    }
    uint64_t z = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 2 == 0) z = splitmix64(&seed);
        int32_t u = (int32_t)(z >> (32 * (i % 2)) & 0xFFFFFF); /* 24 bits of each half */
        float v = (float)(2 * u + 1 - (1 << 24)) * 0x1p-24f;
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

/* ||x - ref||_F / ||ref||_F over n elements of type t, summed in double (the absolute
 * norm where ref is all zero; NaN or inf when either holds one). */
static double rel_err(const void *x, const void *ref, size_t n, gt_datatype t)
{
    double diff2 = 0, ref2 = 0;
    for (size_t i = 0; i < n; i++) {
        double g = elem(x, i, t), b = elem(ref, i, t), d = g - b;
        diff2 += d * d, ref2 += b * b;
    }
    return ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* ---- runs ---- */

/* alpha = 1, beta = 0, in the compute type of c->dt (float but for f64). LIB_LT runs
 * c->algo on c->lt's descriptors. */
static int launch(const run_ctx *c, int lib)
{
    const shape *s = &c->s;
    const dtype_info *dt = c->dt;
    const bench_env *env = c->env;
    int f64 = dt->call == CALL_D;
    const float onef = 1.0f, zerof = 0.0f;
    const double oned = 1.0, zerod = 0.0;
    if (lib == LIB_GT) {
        gt_op a = s->opa == 'T' ? GT_OP_T : GT_OP_N, b = s->opb == 'T' ? GT_OP_T : GT_OP_N;
        gt_status st =
            dt->call == CALL_EX || dt->call == CALL_EX_S
                ? gemm_tuned_ex(a, b, s->m, s->n, s->k, &onef, c->A, dt->ab, c->lda, c->B, dt->ab,
                                c->ldb, &zerof, c->C_gt, dt->c, c->ldc, dt->compute, env->stream)
            : f64 ? gemm_tuned_d(a, b, s->m, s->n, s->k, 1.0, c->A, c->lda, c->B, c->ldb, 0.0,
                                 c->C_gt, c->ldc, env->stream)
                  : gemm_tuned(a, b, s->m, s->n, s->k, 1.0f, c->A, c->lda, c->B, c->ldb, 0.0f,
                               c->C_gt, c->ldc, env->stream);
        if (st == GT_SUCCESS) return 1;
        fprintf(stderr, "gemmtune-bench: %s failed: %s: %s\n", dt->gt_name,
                gt_status_string(st), gt_last_error());
        return 0;
    }
    if (lib == LIB_LT)
        return blas_ok(cublasLtMatmul(env->lt, c->lt->op, f64 ? (const void *)&oned : &onef,
                                      c->A, c->lt->a, c->B, c->lt->b,
                                      f64 ? (const void *)&zerod : &zerof, c->C_lt, c->lt->c,
                                      c->C_lt, c->lt->c, c->algo, env->lt_ws, LT_WORKSPACE_BYTES,
                                      env->stream),
                       "cublasLtMatmul");
    cublasOperation_t a = s->opa == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t b = s->opb == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (dt->call == CALL_EX)
        return blas_ok(cublasGemmEx(env->blas, a, b, (int)s->m, (int)s->n, (int)s->k, &onef, c->A,
                                    dt->cu_ab, (int)c->lda, c->B, dt->cu_ab, (int)c->ldb, &zerof,
                                    c->C_cublas, dt->cu_c, (int)c->ldc, dt->cu_compute,
                                    CUBLAS_GEMM_DEFAULT),
                       "cublasGemmEx");
    if (f64)
        return blas_ok(cublasDgemm(env->blas, a, b, (int)s->m, (int)s->n, (int)s->k, &oned, c->A,
                                   (int)c->lda, c->B, (int)c->ldb, &zerod, c->C_cublas,
                                   (int)c->ldc),
                       "cublasDgemm");
    return blas_ok(cublasSgemm(env->blas, a, b, (int)s->m, (int)s->n, (int)s->k, &onef, c->A,
                               (int)c->lda, c->B, (int)c->ldb, &zerof, c->C_cublas, (int)c->ldc),
                   "cublasSgemm");
}

/* Evicts A, B and C from L2 before timed run i: writes the flush buffer (a different byte
 * each time, so no write is a repeat of the last) or reads it whole with cublasSasum, the
 * sum going to device memory so that nothing waits on the host. */
static int flush_l2(const bench_env *env, int i)
{
    if (env->flush_write)
        return CUDA_OK(cudaMemsetAsync(env->flush, i & 0xFF, env->flush_bytes, env->stream));
    int ok = BLAS_OK(cublasSetPointerMode(env->blas, CUBLAS_POINTER_MODE_DEVICE));
    ok = ok && BLAS_OK(cublasSasum(env->blas, (int)(env->flush_bytes / sizeof(float)),
                                    (const float *)env->flush, 1, env->flush_sum));
    return BLAS_OK(cublasSetPointerMode(env->blas, CUBLAS_POINTER_MODE_HOST)) && ok;
}

/* One set: `warmup` untimed runs, then `reps` timed runs, each after an L2 flush (the
 * scratch write, outside the timed interval) and between its own pair of events; the
 * median in us, or -1. All work is enqueued before the host waits, so the GPU never
 * idles on the host between runs. */
static double time_set(const run_ctx *c, int lib, int warmup, int reps)
{
    const bench_env *env = c->env;
    double med = -1;
    cudaEvent_t *ev = calloc((size_t)reps * 2, sizeof *ev);
    float *ms = calloc((size_t)reps, sizeof *ms);
    int made = 0, destroy_failed = 0;
    if (!ev || !ms) {
        fprintf(stderr, "gemmtune-bench: out of host memory\n");
        goto out;
    }
    for (; made < 2 * reps; made++)
        if (!CUDA_OK(cudaEventCreate(&ev[made]))) goto out;
    for (int i = 0; i < warmup; i++)
        if (!launch(c, lib)) goto out;
    for (int i = 0; i < reps; i++) {
        if (!flush_l2(env, i) || !CUDA_OK(cudaEventRecord(ev[2 * i], env->stream)) || !launch(c, lib) ||
            !CUDA_OK(cudaEventRecord(ev[2 * i + 1], env->stream)))
            goto out;
    }
    if (!CUDA_OK(cudaEventSynchronize(ev[2 * reps - 1]))) goto out;
    for (int i = 0; i < reps; i++)
        if (!CUDA_OK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]))) goto out;
    qsort(ms, (size_t)reps, sizeof *ms, cmp_float);
    med = 1e3 * (reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]));
out:
    while (made > 0) destroy_failed |= cudaEventDestroy(ev[--made]) != cudaSuccess;
    if (destroy_failed) {
        (void)cudaGetLastError();
        fprintf(stderr, "gemmtune-bench: cudaEventDestroy failed\n");
    }
    free(ev);
    free(ms);
    return med;
}

/* ---- cuBLASLt ---- */

static void lt_destroy(lt_problem *p)
{
    if (p->pref) BLAS_OK(cublasLtMatmulPreferenceDestroy(p->pref));
    if (p->c) BLAS_OK(cublasLtMatrixLayoutDestroy(p->c));
    if (p->b) BLAS_OK(cublasLtMatrixLayoutDestroy(p->b));
    if (p->a) BLAS_OK(cublasLtMatrixLayoutDestroy(p->a));
    if (p->op) BLAS_OK(cublasLtMatmulDescDestroy(p->op));
    memset(p, 0, sizeof *p);
}

/* The descriptors of c's problem and the heuristic's algorithms for them (p->nheur, up to
 * LT_MAX_ALGOS). Column-major; op(A) is M x K, stored as M x K (N) or K x M (T), op(B)
 * K x N likewise; the compute type is the cuBLAS column's, the scale type fp64 for f64
 * and fp32 for the others. Returns 0 after a failure, which it has reported; p then holds
 * what was made, for lt_destroy. */
static int lt_create(const run_ctx *c, lt_problem *p)
{
    const shape *s = &c->s;
    const dtype_info *dt = c->dt;
    int32_t ta = s->opa == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    int32_t tb = s->opb == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    uint64_t ws = LT_WORKSPACE_BYTES, m = (uint64_t)s->m, n = (uint64_t)s->n, k = (uint64_t)s->k;
    cudaDataType scale = dt->call == CALL_D ? CUDA_R_64F : CUDA_R_32F;
    memset(p, 0, sizeof *p);
    if (!BLAS_OK(cublasLtMatmulDescCreate(&p->op, dt->cu_compute, scale)) ||
        !BLAS_OK(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta,
                                                sizeof ta)) ||
        !BLAS_OK(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb,
                                                sizeof tb)) ||
        !BLAS_OK(cublasLtMatrixLayoutCreate(&p->a, dt->cu_ab, ta == CUBLAS_OP_N ? m : k,
                                            ta == CUBLAS_OP_N ? k : m, c->lda)) ||
        !BLAS_OK(cublasLtMatrixLayoutCreate(&p->b, dt->cu_ab, tb == CUBLAS_OP_N ? k : n,
                                            tb == CUBLAS_OP_N ? n : k, c->ldb)) ||
        !BLAS_OK(cublasLtMatrixLayoutCreate(&p->c, dt->cu_c, m, n, c->ldc)) ||
        !BLAS_OK(cublasLtMatmulPreferenceCreate(&p->pref)) ||
        !BLAS_OK(cublasLtMatmulPreferenceSetAttribute(
            p->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) ||
        !BLAS_OK(cublasLtMatmulAlgoGetHeuristic(c->env->lt, p->op, p->a, p->b, p->c, p->c,
                                                p->pref, LT_MAX_ALGOS, p->heur, &p->nheur)))
        return 0;
    if (p->nheur < 0 || p->nheur > LT_MAX_ALGOS) { /* never, by the API; guards heur[] */
        fprintf(stderr, "gemmtune-bench: cuBLASLt heuristic returned %d algorithms\n", p->nheur);
        p->nheur = 0;
        return 0;
    }
    return 1;
}

/* Step 4 of the method: each algorithm of the heuristic timed (LT_SEARCH_REPS runs), the
 * fastest that matches the reference href (host, nc elements) within `bound` left in
 * c->algo, its rank in r->lt_pick and its error in r->lt_rel_err; c->algo NULL when none
 * ran or none matched. hout is a host buffer of nc elements of C's type. Returns 0 when
 * the CUDA runtime failed (the caller then checks the device), 1 otherwise. */
static int lt_search(run_ctx *c, const lt_problem *p, void *hout, const void *href, size_t nc,
                     double bound, result *r)
{
    const bench_env *env = c->env;
    double t[LT_MAX_ALGOS] = {0};
    int order[LT_MAX_ALGOS] = {0}, n = 0;
    char sh[96];
    snprintf(sh, sizeof sh, "%s %lldx%lldx%lld:%c%c", c->dt->name, (long long)c->s.m,
             (long long)c->s.n, (long long)c->s.k, c->s.opa, c->s.opb);
    c->algo = NULL;
    r->lt_returned = p->nheur;
    for (int i = 0; i < p->nheur; i++) {
        const cublasLtMatmulHeuristicResult_t *h = &p->heur[i];
        if (h->state != CUBLAS_STATUS_SUCCESS || h->workspaceSize > LT_WORKSPACE_BYTES) {
            fprintf(stderr, "gemmtune-bench: %s: cuBLASLt algorithm %d unusable (%s, %zu-byte "
                            "workspace); skipped\n",
                    sh, i, cublasGetStatusString(h->state), h->workspaceSize);
            continue;
        }
        c->algo = &h->algo;
        t[i] = time_set(c, LIB_LT, env->warmup, LT_SEARCH_REPS);
        if (t[i] < 0) {
            if (!device_usable(env->stream)) return 0;
            fprintf(stderr, "gemmtune-bench: %s: cuBLASLt algorithm %d failed; skipped\n", sh, i);
            continue;
        }
        /* insertion into order[], fastest first */
        int j = n++;
        for (; j > 0 && t[order[j - 1]] > t[i]; j--) order[j] = order[j - 1];
        order[j] = i;
    }
    r->lt_algos = n;
    c->algo = NULL;
    size_t bytes = nc * type_size(c->dt->c);
    for (int j = 0; j < n; j++) {
        int i = order[j];
        c->algo = &p->heur[i].algo;
        if (!launch(c, LIB_LT)) {
            if (!device_usable(env->stream)) return 0;
            c->algo = NULL;
            continue;
        }
        if (!CUDA_OK(cudaStreamSynchronize(env->stream)) ||
            !CUDA_OK(cudaMemcpy(hout, c->C_lt, bytes, cudaMemcpyDeviceToHost))) {
            c->algo = NULL;
            return 0;
        }
        double e = rel_err(hout, href, nc, c->dt->c);
        if (isfinite(e) && e <= bound) {
            r->lt_pick = i;
            r->lt_rel_err = e;
            return 1;
        }
        fprintf(stderr, "gemmtune-bench: %s: cuBLASLt algorithm %d: rel err %.3e against "
                        "cuBLAS exceeds %.1e; not used\n",
                sh, i, e, bound);
        c->algo = NULL;
    }
    if (p->nheur > 0)
        fprintf(stderr, "gemmtune-bench: %s: no cuBLASLt algorithm of %d ran and matched "
                        "cuBLAS; no cuBLASLt time\n",
                sh, p->nheur);
    else
        fprintf(stderr, "gemmtune-bench: %s: the cuBLASLt heuristic returned no algorithm; "
                        "no cuBLASLt time\n",
                sh);
    return 1;
}

/* ---- one shape ---- */

/* Runs one shape into r. Returns 0 when the CUDA runtime failed (the caller then checks
 * whether the device is still usable), 1 otherwise; r->ok says whether the shape passed. */
static int bench_shape(const bench_env *env, const dtype_info *dt, const shape *s, result *r)
{
    run_ctx c = {.env = env, .dt = dt, .s = *s, .lda = s->opa == 'T' ? s->k : s->m,
                 .ldb = s->opb == 'T' ? s->n : s->k, .ldc = s->m};
    lt_problem lt;
    size_t na = (size_t)(s->m * s->k), nb = (size_t)(s->k * s->n), nc = (size_t)(s->m * s->n);
    size_t es = type_size(dt->ab), esc = type_size(dt->c); /* A/B and C element bytes */
    void *hA = NULL, *hB = NULL, *hout = NULL, *hcb = NULL, *dA = NULL, *dB = NULL;
    int cuda_fine = 0;
    double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    double bytes = (double)es * (double)(na + nb) + (double)esc * (double)nc;
    double mem_us = bytes / dt->peak_bytes * 1e6;
    double flop_us = flops / dt->peak_flops * 1e6;
    memset(&lt, 0, sizeof lt);
    *r = (result){.s = *s, .gt_us = NAN, .cublas_us = NAN, .lt_us = NAN, .cold_s = NAN,
                  .rel_err = NAN, .lt_rel_err = NAN, .max_err = err_bound(dt, s->k),
                  .floor_us = fmax(mem_us, flop_us), .lt_returned = 0, .lt_algos = 0,
                  .lt_pick = -1, .bound = mem_us >= flop_us ? "mem" : "flop", .source = "-",
                  .cls = shape_class(s), .tuned = 0, .ok = 0};
    if (s->m > INT_MAX || s->n > INT_MAX || s->k > INT_MAX) { /* cuBLAS takes int sizes */
        fprintf(stderr, "gemmtune-bench: %lldx%lldx%lld is too large for %s\n", (long long)s->m,
                (long long)s->n, (long long)s->k, dt->blas_name);
        return 1;
    }
    hA = malloc(na * es), hB = malloc(nb * es), hout = malloc(nc * esc), hcb = malloc(nc * esc);
    if (!hA || !hB || !hout || !hcb) {
        fprintf(stderr, "gemmtune-bench: out of host memory\n");
        cuda_fine = 1;
        goto out;
    }
    /* 1. inputs */
    fill_random(hA, na, 0x5EED0001ull, dt->ab);
    fill_random(hB, nb, 0x5EED0002ull, dt->ab);
    if (!CUDA_OK(cudaMalloc(&dA, na * es)) || !CUDA_OK(cudaMalloc(&dB, nb * es)) ||
        !CUDA_OK(cudaMalloc(&c.C_gt, nc * esc)) || !CUDA_OK(cudaMalloc(&c.C_cublas, nc * esc)) ||
        /* zeroed, so that a C read despite beta = 0 holds no NaN */
        (env->use_lt && (!CUDA_OK(cudaMalloc(&c.C_lt, nc * esc)) ||
                         !CUDA_OK(cudaMemset(c.C_lt, 0, nc * esc)))) ||
        !CUDA_OK(cudaMemcpy(dA, hA, na * es, cudaMemcpyHostToDevice)) ||
        !CUDA_OK(cudaMemcpy(dB, hB, nb * es, cudaMemcpyHostToDevice)) ||
        !CUDA_OK(cudaDeviceSynchronize()))
        goto out;
    c.A = dA, c.B = dB;

    /* 2. cold call; the background thread idle first, so that its compiles for earlier
     * shapes are not counted here */
    gt_stats before, after;
    gt_wait_background();
    gt_get_stats(&before);
    double t0 = now_s();
    int gt_ran = launch(&c, LIB_GT);
    if (!CUDA_OK(cudaDeviceSynchronize())) goto out;
    r->cold_s = now_s() - t0;
    gt_get_stats(&after);
    r->tuned = after.tunes > before.tunes;
    r->compiles = (long long)(after.compiles - before.compiles);
    r->source = after.fallbacks > before.fallbacks ? "fallback" : r->tuned ? "tuned"
              : after.cache_hits > before.cache_hits ? "cache"
              : after.nearest > before.nearest       ? "selected"
              : after.plan_hits > before.plan_hits   ? "plan" : "?";
    cuda_fine = 1;
    if (!gt_ran) {
        r->source = "error";
        goto out;
    }
    /* What the shape runs from now on: the exact-shape twin where mode cached's generic
     * kernel gives way to it (what an application sees after its first calls). */
    gt_wait_background();
    gt_get_stats(&after);
    r->specialized = after.specialized > before.specialized;

    /* 3. reference and error, before any timing */
    if (!launch(&c, LIB_CUBLAS) || !CUDA_OK(cudaStreamSynchronize(env->stream)) ||
        !CUDA_OK(cudaMemcpy(hout, c.C_gt, nc * esc, cudaMemcpyDeviceToHost)) ||
        !CUDA_OK(cudaMemcpy(hcb, c.C_cublas, nc * esc, cudaMemcpyDeviceToHost))) {
        cuda_fine = 0;
        goto out;
    }
    r->rel_err = rel_err(hout, hcb, nc, dt->c);
    if (r->specialized) {
        /* The twin gives the cold call's bits (the kernels sum in the same order). */
        void *hspec = malloc(nc * esc);
        int same = hspec && launch(&c, LIB_GT) && CUDA_OK(cudaDeviceSynchronize()) &&
                   CUDA_OK(cudaMemcpy(hspec, c.C_gt, nc * esc, cudaMemcpyDeviceToHost)) &&
                   memcmp(hspec, hout, nc * esc) == 0;
        free(hspec);
        if (!same) {
            fprintf(stderr, "gemmtune-bench: %s %lldx%lldx%lld:%c%c: the exact-shape kernel's "
                            "result differs from the generic one's\n", dt->name, (long long)s->m,
                    (long long)s->n, (long long)s->k, s->opa, s->opb);
            goto out;
        }
    }
    if (!isfinite(r->rel_err) || r->rel_err > r->max_err) {
        fprintf(stderr, "gemmtune-bench: %s %lldx%lldx%lld:%c%c rel err %.3e exceeds %.1e\n",
                dt->name, (long long)s->m, (long long)s->n, (long long)s->k, s->opa, s->opb,
                r->rel_err, r->max_err);
        goto out;
    }

    /* 4. cuBLASLt: the heuristic's algorithms, the fastest that matches cuBLAS */
    cuda_fine = 0;
    if (env->use_lt) {
        c.lt = &lt;
        if (!lt_create(&c, &lt))
            fprintf(stderr, "gemmtune-bench: %s %lldx%lldx%lld:%c%c: no cuBLASLt time\n",
                    dt->name, (long long)s->m, (long long)s->n, (long long)s->k, s->opa, s->opb);
        else if (!lt_search(&c, &lt, hout, hcb, nc, r->max_err, r))
            goto out;
    }

    /* 5. timing: short problems get more runs (up to MAX_REPS) so the median is stable */
    int n = (int)fmax((double)env->reps, fmin((double)MAX_REPS, (double)env->reps * 1e9 / flops));
    double best[NLIBS] = {NAN, NAN, NAN};
    for (int round = 0; round < 2; round++) {
        for (int lib = 0; lib < NLIBS; lib++) {
            if (lib == LIB_LT && !c.algo) continue;
            double t = time_set(&c, lib, env->warmup, n);
            if (t < 0) {
                fprintf(stderr, "gemmtune-bench: %s %lldx%lldx%lld:%c%c: timing %s failed\n",
                        dt->name, (long long)s->m, (long long)s->n, (long long)s->k, s->opa,
                        s->opb, LIB_NAMES[lib]);
                /* cuBLASLt failing leaves its column blank, if the device still works */
                if (lib != LIB_LT || !device_usable(env->stream)) goto out;
                c.algo = NULL, best[LIB_LT] = NAN, r->lt_pick = -1;
                continue;
            }
            best[lib] = round == 0 ? t : fmin(best[lib], t);
        }
    }
    r->gt_us = best[LIB_GT], r->cublas_us = best[LIB_CUBLAS], r->lt_us = best[LIB_LT];
    cuda_fine = 1;
    r->ok = 1;
out:
    lt_destroy(&lt);
    free_dev(dA);
    free_dev(dB);
    free_dev(c.C_gt);
    free_dev(c.C_cublas);
    free_dev(c.C_lt);
    free(hA), free(hB), free(hout), free(hcb);
    return cuda_fine;
}

/* ---- output ---- */

static double tflops(const shape *s, double us)
{
    return 2.0 * (double)s->m * (double)s->n * (double)s->k / (us * 1e-6) / 1e12;
}

/* reference time / gt time (> 1: gemmtune faster), NAN where either is missing. */
static double ratio_of(const result *r, int lib)
{
    double ref = lib == LIB_LT ? r->lt_us : r->cublas_us;
    return r->ok && isfinite(ref) ? ref / r->gt_us : NAN;
}

/* Against one reference: the geometric mean of the ratio over the shapes that have one,
 * and each class's minimum ratio (NAN, at -1, when no shape of the class has one). */
typedef struct {
    double geomean;
    int nok;
    double min[NCLASSES];
    long at[NCLASSES];
    int count[NCLASSES];
} summary;

static summary summarize(const result *res, size_t n, int lib)
{
    summary sm = {NAN, 0, {0}, {0}, {0}};
    double logsum = 0;
    for (int c = 0; c < NCLASSES; c++) sm.min[c] = NAN, sm.at[c] = -1;
    for (size_t i = 0; i < n; i++) {
        double q = ratio_of(&res[i], lib);
        if (!isfinite(q) || q <= 0) continue;
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
    printf("%6s %6s %6s %2s %10s %10s %10s %5s %6s %6s %8s %8s %8s %6s %8s %-8s %-11s %9s "
           "%10s %-4s %s\n",
           "M", "N", "K", "op", "gt_us", "cub_us", "lt_us", "lt_n", "ratio", "r_lt", "gt_TF/s",
           "cub_TF/s", "lt_TF/s", "%floor", "cold_s", "source", "class", "rel_err", "floor_us",
           "bnd", "check");
}

static void print_row(const result *r)
{
    const shape *s = &r->s;
    int ok = r->ok;
    char lt_n[16] = "-";
    if (ok && r->lt_pick >= 0) snprintf(lt_n, sizeof lt_n, "%d/%d", r->lt_pick, r->lt_algos);
    else if (ok && r->lt_returned > 0) snprintf(lt_n, sizeof lt_n, "-/%d", r->lt_algos);
    printf("%6lld %6lld %6lld %c%c ", (long long)s->m, (long long)s->n, (long long)s->k, s->opa,
           s->opb);
    put_num(10, "%.2f", ok ? r->gt_us : NAN);
    put_num(10, "%.2f", ok ? r->cublas_us : NAN);
    put_num(10, "%.2f", ok ? r->lt_us : NAN);
    printf("%5s ", lt_n);
    put_num(6, "%.3f", ratio_of(r, LIB_CUBLAS));
    put_num(6, "%.3f", ratio_of(r, LIB_LT));
    put_num(8, "%.2f", ok ? tflops(s, r->gt_us) : NAN);
    put_num(8, "%.2f", ok ? tflops(s, r->cublas_us) : NAN);
    put_num(8, "%.2f", ok ? tflops(s, r->lt_us) : NAN);
    put_num(6, "%.1f", ok ? r->floor_us / r->gt_us * 100.0 : NAN);
    put_num(8, "%.3f", r->cold_s);
    printf("%-8s %-11s ", r->source, r->cls);
    put_num(9, "%.2e", r->rel_err);
    put_num(10, "%.2f", r->floor_us);
    printf("%-4s %s\n", r->bound, ok ? "ok" : "FAIL");
    fflush(stdout);
}

static void print_summary(const result *res, const summary *sm, const char *ref)
{
    if (sm->nok) printf("geomean gt/%s = %.3f over %d shapes\n", ref, sm->geomean, sm->nok);
    else printf("geomean gt/%s = n/a over 0 shapes\n", ref);
    for (int c = 0; c < NCLASSES; c++) {
        char b[96];
        if (!sm->count[c]) continue;
        shape_str(&res[sm->at[c]].s, b, sizeof b);
        printf("min ratio gt/%s %-11s = %.3f at %s (%d shape%s)\n", ref, CLASSES[c], sm->min[c],
               b, sm->count[c], sm->count[c] == 1 ? "" : "s");
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

static int write_json(const char *path, const struct cudaDeviceProp *p, const bench_env *env,
                      const dtype_info *dt, const result *res, size_t n, const summary *sm,
                      const summary *sm_lt)
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
    fprintf(f, "\", \"cc\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %d},\n", p->major, p->minor,
            p->multiProcessorCount, p->l2CacheSize);
    fprintf(f, "  \"date\": \"%s\",\n  \"dtype\": \"%s\",\n", date, dt->name);
    fprintf(f, "  \"reference\": \"%s\", \"reference_lt\": \"cublasLtMatmul\", "
               "\"max_rel_err\": %.1e, \"max_rel_err_sqrt_k\": %.4e,\n",
            dt->blas_name, dt->err_floor, ERR_K_FACTOR * dt->err_u);
    fprintf(f, "  \"method\": {\"warmup\": %d, \"reps_min\": %d, \"reps_max\": %d, "
               "\"sets\": 2, \"l2_flush_bytes\": %zu, \"l2_flush\": \"%s\", \"lt\": %s, "
               "\"lt_max_algos\": %d, "
               "\"lt_search_reps\": %d, \"lt_workspace_bytes\": %zu},\n",
            env->warmup, env->reps, env->reps > MAX_REPS ? env->reps : MAX_REPS, env->flush_bytes,
            env->flush_write ? "write" : "read", env->use_lt ? "true" : "false", LT_MAX_ALGOS,
            LT_SEARCH_REPS, LT_WORKSPACE_BYTES);
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
        json_num(f, "cublaslt_us", r->ok ? r->lt_us : NAN, "%.3f", 0);
        json_num(f, "gt_tflops", r->ok ? tflops(&r->s, r->gt_us) : NAN, "%.4f", 0);
        json_num(f, "cublas_tflops", r->ok ? tflops(&r->s, r->cublas_us) : NAN, "%.4f", 0);
        json_num(f, "cublaslt_tflops", r->ok ? tflops(&r->s, r->lt_us) : NAN, "%.4f", 0);
        json_num(f, "ratio", ratio_of(r, LIB_CUBLAS), "%.4f", 0);
        json_num(f, "ratio_lt", ratio_of(r, LIB_LT), "%.4f", 0);
        fprintf(f, "\"cublaslt_returned\": %d, \"cublaslt_algos\": %d, ", r->lt_returned,
                r->lt_algos);
        json_num(f, "cublaslt_pick", r->ok && r->lt_pick >= 0 ? (double)r->lt_pick : NAN, "%.0f",
                 0);
        json_num(f, "cublaslt_rel_err", r->lt_rel_err, "%.3e", 0);
        json_num(f, "cold_s", r->cold_s, "%.6f", 0);
        fprintf(f, "\"tuned\": %s, \"source\": \"%s\", \"compiles\": %lld, \"specialized\": %s, ",
                r->tuned ? "true" : "false", r->source, r->compiles,
                r->specialized ? "true" : "false");
        json_num(f, "rel_err", r->rel_err, "%.3e", 0);
        json_num(f, "max_rel_err", r->max_err, "%.3e", 0);
        json_num(f, "floor_us", r->floor_us, "%.3f", 0);
        json_num(f, "pct_floor", r->ok ? r->floor_us / r->gt_us * 100.0 : NAN, "%.2f", 0);
        fprintf(f, "\"bound\": \"%s\", \"ok\": %s}%s\n", r->bound, r->ok ? "true" : "false",
                i + 1 < n ? "," : "");
    }
    fputs("  ],\n  ", f);
    json_num(f, "geomean_ratio", sm->geomean, "%.4f", 0);
    json_num(f, "geomean_ratio_lt", sm_lt->geomean, "%.4f", 0);
    fprintf(f, "\"geomean_shapes\": %d, \"geomean_shapes_lt\": %d", sm->nok, sm_lt->nok);
    fputs(",\n  \"class_min_ratio\": {", f);
    for (int c = 0; c < NCLASSES; c++) {
        char b[96] = "", blt[96] = "";
        if (sm->count[c]) shape_str(&res[sm->at[c]].s, b, sizeof b);
        if (sm_lt->count[c]) shape_str(&res[sm_lt->at[c]].s, blt, sizeof blt);
        fprintf(f, "%s\n    \"%s\": {", c ? "," : "", CLASSES[c]);
        json_num(f, "min_ratio", sm->min[c], "%.4f", 0);
        if (sm->count[c]) fprintf(f, "\"shape\": \"%s\", ", b);
        else fputs("\"shape\": null, ", f);
        fprintf(f, "\"shapes\": %d, ", sm->count[c]);
        json_num(f, "min_ratio_lt", sm_lt->min[c], "%.4f", 0);
        if (sm_lt->count[c]) fprintf(f, "\"shape_lt\": \"%s\", ", blt);
        else fputs("\"shape_lt\": null, ", f);
        fprintf(f, "\"shapes_lt\": %d}", sm_lt->count[c]);
    }
    fputs("\n  }\n}\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "gemmtune-bench: writing %s failed\n", path);
        return 0;
    }
    return 1;
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
    bench_env env = {.use_lt = 1, .warmup = 3, .reps = 20};
    int device = 0, rc = 0, ndev = 0, l2 = 0;
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
        else if (!strcmp(a, "--reps") && v) good = parse_int(v, 1, &env.reps), i++;
        else if (!strcmp(a, "--warmup") && v) good = parse_int(v, 0, &env.warmup), i++;
        else if (!strcmp(a, "--device") && v) good = parse_int(v, 0, &device), i++;
        else if (!strcmp(a, "--no-lt")) env.use_lt = 0;
        else if (!strcmp(a, "--flush") && v) {
            good = !strcmp(v, "read") || !strcmp(v, "write");
            env.flush_write = !strcmp(v, "write"), i++;
        }
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
    result *res = calloc(nshapes, sizeof *res);
    size_t done = 0;
    if (!res) {
        fprintf(stderr, "gemmtune-bench: out of host memory\n");
        rc = 1;
        goto out;
    }
    if (device >= ndev) {
        fprintf(stderr, "gemmtune-bench: no device %d (%d found)\n", device, ndev);
        rc = 1;
        goto out;
    }
    if (!CUDA_OK(cudaSetDevice(device)) || !CUDA_OK(cudaGetDeviceProperties(&prop, device)) ||
        !CUDA_OK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device))) {
        rc = 1;
        goto out;
    }
    if (l2 <= 0) {
        fprintf(stderr, "gemmtune-bench: the device reports no L2 size (%d); cannot flush it\n",
                l2);
        rc = 1;
        goto out;
    }
    env.flush_bytes = 2 * (size_t)l2;
    if (!CUDA_OK(cudaStreamCreate(&env.stream)) || !BLAS_OK(cublasCreate(&env.blas)) ||
        !BLAS_OK(cublasSetStream(env.blas, env.stream)) ||
        /* explicit, so TF32 (and FP64 emulation) stay off whatever the environment says */
        !BLAS_OK(cublasSetMathMode(env.blas, CUBLAS_DEFAULT_MATH)) ||
        !CUDA_OK(cudaMalloc(&env.flush, env.flush_bytes)) ||
        !CUDA_OK(cudaMalloc((void **)&env.flush_sum, sizeof(float))) ||
        /* small finite floats (0x01010101), so the read pass's sum is an ordinary one */
        !CUDA_OK(cudaMemset(env.flush, 1, env.flush_bytes)) ||
        (env.use_lt && (!BLAS_OK(cublasLtCreate(&env.lt)) ||
                        !CUDA_OK(cudaMalloc(&env.lt_ws, LT_WORKSPACE_BYTES))))) {
        rc = 1;
        goto out;
    }
    int ver[3];
    gt_version(&ver[0], &ver[1], &ver[2]);
    printf("# gemmtune %d.%d.%d on %s (cc %d.%d, %d SMs, %d MiB L2); dtype %s: %s vs %s (%s)",
           ver[0], ver[1], ver[2], prop.name, prop.major, prop.minor, prop.multiProcessorCount,
           l2 >> 20, dt->name, dt->gt_name, dt->blas_name, dt->note);
    if (env.use_lt)
        printf(" and cublasLtMatmul (best of up to %d heuristic algorithms, %d runs each, "
               "%zu MiB workspace)",
               LT_MAX_ALGOS, LT_SEARCH_REPS, LT_WORKSPACE_BYTES >> 20);
    printf("\n# warmup %d, median of %d+ timed runs, %zu MiB %s before each (L2 "
           "flushed), better of 2 interleaved sets\n",
           env.warmup, env.reps, env.flush_bytes >> 20, env.flush_write ? "written" : "read");
    char sizes[64];
    if (dt->ab == dt->c) snprintf(sizes, sizeof sizes, "%zu-byte elements", type_size(dt->ab));
    else snprintf(sizes, sizeof sizes, "%zu-byte A/B and %zu-byte C elements", type_size(dt->ab),
                  type_size(dt->c));
    printf("# floor: %.0f TFLOP/s, %.1f TB/s, %s; max rel err max(%.0e, %.2e sqrt(K)); "
           "ratio = ref_us / gt_us (> 1: gemmtune faster); lt_n = winner's heuristic rank / "
           "algorithms timed\n",
           dt->peak_flops / 1e12, dt->peak_bytes / 1e12, sizes, dt->err_floor,
           ERR_K_FACTOR * dt->err_u);
    print_header();
    for (; done < nshapes; done++) {
        int cuda_fine = bench_shape(&env, dt, &shapes[done], &res[done]);
        print_row(&res[done]);
        if (!res[done].ok) rc = 1;
        /* a failed allocation leaves the device usable; a fault does not: stop there */
        if (!cuda_fine && !CUDA_OK(cudaDeviceSynchronize())) { done++; break; }
    }
    summary sm = summarize(res, done, LIB_CUBLAS), sm_lt = summarize(res, done, LIB_LT);
    print_summary(res, &sm, "cublas");
    if (env.use_lt) print_summary(res, &sm_lt, "cublaslt");
    if (json && !write_json(json, &prop, &env, dt, res, done, &sm, &sm_lt)) rc = 1;
out:
    if (env.lt && !BLAS_OK(cublasLtDestroy(env.lt))) rc = 1;
    if (env.blas && !BLAS_OK(cublasDestroy(env.blas))) rc = 1;
    free_dev(env.lt_ws);
    free_dev(env.flush);
    free_dev(env.flush_sum);
    if (env.stream && !CUDA_OK(cudaStreamDestroy(env.stream))) rc = 1;
    free(res);
    free(shapes);
    gt_release();
    return rc;
}
