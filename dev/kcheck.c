/*
 * kcheck.c: correctness and timing harness for one gemmtune kernel source, standalone
 * (CUDA driver API + NVRTC, no part of the library).
 *
 *   kcheck KERNEL.cu M N K opA opB f32|f64|tf32 beta0 CONFIG [/ CONFIG]...
 *   CONFIG: KEY=VALUE words, e.g. BM=64 BN=64 BK=16 WM=32 WN=32 TM=4 TN=4 STAGES=3 VEC=2
 *           SPLIT=1 RASTER=1 MINB=1 SMEM=bytes NACC=32 (SPLIT_GROUP: split-K's group of
 *           splits, default SPLIT: one level)
 *
 * Every KEY=VALUE becomes -DGT_KEY=VALUE, except these, which only kcheck reads:
 *   SMEM  dynamic shared memory bytes of the launch (also passed as -DGT_SMEM_CHECK, which
 *         a kernel may static_assert against its own size)
 *   NACC  accumulators per thread (split-K workspace size; default TM*TN*2)
 *   NT    threads per block (default 32 * (BM/WM) * (BN/WN))
 *   FUNC  kernel name (default gt_gemm)
 *   DUMP  write the cubin to this path
 * The problem macros GT_DT GT_M GT_N GT_K GT_OPA GT_OPB GT_BETA0 come from the command
 * line (GENERIC=1: a generic kernel, the sizes passed as arguments only). The source's
 * directory must hold common.cuh and types.cuh (given to NVRTC as headers of those names).
 *
 * For each CONFIG: compile with -arch=sm_<cc> -std=c++17 -default-device, fill A, B, C
 * with random values in [-1, 1) (never 0; C's padding rows hold a sentinel, and with
 * beta0 C is all NaN so that reading it shows), launch grid (GM*GN, SPLIT) x NT, compare
 * every output with a host float64 reference (relative Frobenius error, max abs error;
 * pass below 1e-12 for f64, 1e-5 for f32; NaN fails; the padding must be untouched;
 * tf32, for gemm_mma.cu: fp32 storage, GT_DT=2, the reference on the operands truncated
 * to tf32 as the tensor cores read them, pass below 1e-4 and no element off by more than
 * 1e-3 sqrt(K), which a k slice read wrong exceeds),
 * launch again from the same C (split-K counters must have been reset: results must be
 * bit-identical), then time 20 launches with CUDA events and print one line:
 *   config, PASS/FAIL, rel err, max abs err, median us, TFLOP/s, registers, local bytes.
 * Exit status: 0 all passed, 1 a check failed, 2 usage or setup error.
 *
 * Environment: KCHECK_NOTIME=1 skips the timing (e.g. under compute-sanitizer);
 * KCHECK_REPS=n timed launches (default 20); KCHECK_FLUSH=1 reads 256 MiB of other data
 * before each timed launch (L2 clean, the operands in DRAM: timings as calls meet the GPU); KCHECK_NVRTC=option one more NVRTC option; KCHECK_ARCH=nn compiles for sm_nn without a
 * GPU and prints ptxas's resource report (compile-only mode); KCHECK_SEED=n.
 *
 * Build: cc -O2 -std=c11 dev/kcheck.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64
 *        -lcuda -lnvrtc -lm -lpthread -o kcheck
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <math.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXKV 48
/* Split-K tile counters at the start of the workspace: the library's number
 * (GT_KCFG_WS_COUNTERS in tuner/kcfg.h); kcheck stands alone, so it repeats it. */
#define KC_WS_COUNTERS 4096

static void die(const char *what) {
    fprintf(stderr, "kcheck: %s\n", what);
    exit(2);
}

#define CU(call)                                                                         \
    do {                                                                                 \
        CUresult r_ = (call);                                                            \
        if (r_ != CUDA_SUCCESS) {                                                        \
            const char *s_ = NULL;                                                       \
            cuGetErrorString(r_, &s_);                                                   \
            fprintf(stderr, "kcheck: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                    s_ ? s_ : "?");                                                      \
            return -1;                                                                   \
        }                                                                                \
    } while (0)

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(s);
        return NULL;
    }
    s[n] = 0;
    fclose(f);
    return s;
}

/* ---- random numbers: splitmix64 ---- */
static uint64_t rng_state;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* uniform in [-1, 1), never 0 (nor tiny) */
static double rnd(void) {
    for (;;) {
        double u = (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
        if (fabs(u) > 1e-6) return u;
    }
}

/* ---- the problem ---- */
static double tf32_trunc(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u &= ~0x1fffu;
    memcpy(&f, &u, 4);
    return f;
}

typedef struct {
    long long m, n, k;
    int ta, tb, f64, tf32, beta0;
    double alpha, beta;
    long long lda, ldb, ldc; /* set per VEC */
} problem;

/* host reference: C = alpha * op(A) op(B) + beta * C0, column-major M x N (ld M) */
typedef struct {
    const double *at, *bt; /* op(A) as M x K rows (k contiguous), op(B)^T as N x K rows */
    const double *c0;      /* original C (ld ldc), NULL when beta0 */
    double *ref;
    long long m, n, k, ldc;
    double alpha, beta;
    int nthreads, id;
} ref_job;

static void *ref_worker(void *p) {
    ref_job *j = p;
    const long long M = j->m, N = j->n, K = j->k;
    /* columns in blocks of 4 over threads; rows in blocks of 4 */
    for (long long n0 = 4 * j->id; n0 < N; n0 += 4 * j->nthreads) {
        int nb = N - n0 < 4 ? (int)(N - n0) : 4;
        for (long long m0 = 0; m0 < M; m0 += 4) {
            int mb = M - m0 < 4 ? (int)(M - m0) : 4;
            double s[4][4] = {{0}};
            const double *a[4], *b[4];
            for (int i = 0; i < 4; i++) a[i] = j->at + (m0 + (i < mb ? i : 0)) * K;
            for (int q = 0; q < 4; q++) b[q] = j->bt + (n0 + (q < nb ? q : 0)) * K;
            for (long long k = 0; k < K; k++) {
                double av[4] = {a[0][k], a[1][k], a[2][k], a[3][k]};
                double bv[4] = {b[0][k], b[1][k], b[2][k], b[3][k]};
                for (int i = 0; i < 4; i++)
                    for (int q = 0; q < 4; q++) s[i][q] += av[i] * bv[q];
            }
            for (int q = 0; q < nb; q++)
                for (int i = 0; i < mb; i++) {
                    long long m = m0 + i, n = n0 + q;
                    double v = j->alpha * s[i][q];
                    if (j->c0) v += j->beta * j->c0[m + n * j->ldc];
                    j->ref[m + n * M] = v;
                }
        }
    }
    return NULL;
}

/* ---- one configuration ---- */
typedef struct {
    char key[MAXKV][32];
    char val[MAXKV][64];
    int n;
} kvlist;

static const char *kv_get(const kvlist *kv, const char *key) {
    for (int i = 0; i < kv->n; i++)
        if (!strcmp(kv->key[i], key)) return kv->val[i];
    return NULL;
}
static long long kv_int(const kvlist *kv, const char *key, long long dflt) {
    const char *v = kv_get(kv, key);
    return v ? atoll(v) : dflt;
}

static int is_special(const char *k) {
    return !strcmp(k, "SMEM") || !strcmp(k, "NACC") || !strcmp(k, "NT") || !strcmp(k, "FUNC") ||
           !strcmp(k, "DUMP");
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* data shared by all configurations of one invocation (VEC-dependent parts rebuilt) */
typedef struct {
    problem p;
    const char *src, *hdr, *hdr_types, *src_name;
    int cc_major, cc_minor, have_gpu;
    /* host copies, by VEC (index 0: VEC 1, 1: VEC 2), built lazily */
    int built_vec;
    void *hA, *hB, *hC;         /* as stored, element type f32/f64 */
    double *ref;                /* M x N */
    size_t bytesA, bytesB, bytesC;
    CUdeviceptr dA, dB, dC, dC0;
    double *at, *bt, *c0d;      /* reference inputs (double) */
    CUdeviceptr flush_buf, flush_sink; /* KCHECK_FLUSH */
    long long flush_n;
} world;

static long long round_up(long long x, long long v) { return (x + v - 1) / v * v; }

/* (Re)build data for vector width vec: leading dimensions, host arrays, reference. */
static int build_data(world *w, int vec) {
    problem *p = &w->p;
    if (w->built_vec == vec) return 0;
    if (w->dA) {
        cuMemFree(w->dA);
        cuMemFree(w->dB);
        cuMemFree(w->dC);
        cuMemFree(w->dC0);
        w->dA = w->dB = w->dC = w->dC0 = 0;
    }
    free(w->hA), free(w->hB), free(w->hC), free(w->ref), free(w->at), free(w->bt), free(w->c0d);
    const long long M = p->m, N = p->n, K = p->k;
    long long ar = p->ta ? K : M, ac = p->ta ? M : K; /* stored A rows x cols */
    long long br = p->tb ? N : K, bc = p->tb ? K : N;
    p->lda = round_up(ar > 0 ? ar : 1, vec);
    p->ldb = round_up(br > 0 ? br : 1, vec);
    p->ldc = round_up(M > 0 ? M : 1, vec);
    size_t es = p->f64 ? 8 : 4;
    w->bytesA = (size_t)(p->lda * ac) * es;
    w->bytesB = (size_t)(p->ldb * bc) * es;
    w->bytesC = (size_t)(p->ldc * N) * es;
    w->hA = malloc(w->bytesA ? w->bytesA : 8);
    w->hB = malloc(w->bytesB ? w->bytesB : 8);
    w->hC = malloc(w->bytesC ? w->bytesC : 8);
    w->at = malloc((size_t)(M * K) * 8 + 8);
    w->bt = malloc((size_t)(N * K) * 8 + 8);
    w->c0d = malloc((size_t)(p->ldc * N) * 8 + 8);
    w->ref = malloc((size_t)(M * N) * 8 + 8);
    if (!w->hA || !w->hB || !w->hC || !w->at || !w->bt || !w->c0d || !w->ref) die("out of host memory");
    /* values: the same random stream for every vec, so the numbers do not depend on ld;
     * padding rows (beyond the matrix) get a sentinel */
    rng_state = (uint64_t)atoll(getenv("KCHECK_SEED") ? getenv("KCHECK_SEED") : "12345");
    const double pad = 7777.0;
#define FILL(h, rows, cols, ld)                                                           \
    for (long long c = 0; c < (cols); c++)                                                \
        for (long long r = 0; r < (ld); r++) {                                            \
            double v = r < (rows) ? rnd() : pad;                                          \
            if (p->f64) ((double *)(h))[r + c * (ld)] = v;                                \
            else ((float *)(h))[r + c * (ld)] = (float)v;                                 \
        }
    FILL(w->hA, ar, ac, p->lda);
    FILL(w->hB, br, bc, p->ldb);
    FILL(w->hC, M, N, p->ldc);
#undef FILL
#define GETV(h, i) (p->f64 ? ((double *)(h))[i] : (double)((float *)(h))[i])
/* An operand as the kernel's arithmetic reads it (tf32: the low 13 mantissa bits dropped). */
#define GETOP(h, i) (p->tf32 ? tf32_trunc(((float *)(h))[i]) : GETV(h, i))
    for (long long m = 0; m < M; m++)
        for (long long k = 0; k < K; k++)
            w->at[m * K + k] = p->ta ? GETOP(w->hA, k + m * p->lda) : GETOP(w->hA, m + k * p->lda);
    for (long long n = 0; n < N; n++)
        for (long long k = 0; k < K; k++)
            w->bt[n * K + k] = p->tb ? GETOP(w->hB, n + k * p->ldb) : GETOP(w->hB, k + n * p->ldb);
    for (long long i = 0; i < p->ldc * N; i++) w->c0d[i] = GETV(w->hC, i);
#undef GETOP
#undef GETV
    if (p->beta0) { /* C must never be read: NaN inside the matrix */
        for (long long c = 0; c < N; c++)
            for (long long r = 0; r < M; r++) {
                if (p->f64) ((double *)w->hC)[r + c * p->ldc] = NAN;
                else ((float *)w->hC)[r + c * p->ldc] = NAN;
            }
    }
    /* reference, threaded */
    int nth = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nth < 1) nth = 1;
    if (nth > 64) nth = 64;
    pthread_t th[64];
    ref_job jobs[64];
    for (int i = 0; i < nth; i++) {
        jobs[i] = (ref_job){w->at, w->bt, p->beta0 ? NULL : w->c0d, w->ref, M, N, K, p->ldc,
                            p->alpha, p->beta, nth, i};
        pthread_create(&th[i], NULL, ref_worker, &jobs[i]);
    }
    for (int i = 0; i < nth; i++) pthread_join(th[i], NULL);
    if (w->have_gpu) {
        CU(cuMemAlloc(&w->dA, w->bytesA ? w->bytesA : 8));
        CU(cuMemAlloc(&w->dB, w->bytesB ? w->bytesB : 8));
        CU(cuMemAlloc(&w->dC, w->bytesC ? w->bytesC : 8));
        CU(cuMemAlloc(&w->dC0, w->bytesC ? w->bytesC : 8));
        CU(cuMemcpyHtoD(w->dA, w->hA, w->bytesA));
        CU(cuMemcpyHtoD(w->dB, w->hB, w->bytesB));
        CU(cuMemcpyHtoD(w->dC0, w->hC, w->bytesC));
    }
    w->built_vec = vec;
    return 0;
}

/* Returns 0 pass, 1 fail, -1 setup error. */
/* KCHECK_FLUSH=1: before each timed launch, a kernel reads 256 MiB of other data (over
 * twice the L2 of any GPU kcheck runs on), leaving L2 clean and the operands in DRAM only,
 * as gemmtune-bench's default flush does. Compiled once per process. */
static const char flush_src[] =
    "extern \"C\" __global__ void flush(const int4 *p, long long n, int *sink) {\n"
    "    int acc = 0;\n"
    "    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;\n"
    "         i += (long long)gridDim.x * blockDim.x) { int4 v = __ldcg(p + i); acc ^= v.x ^ v.w; }\n"
    "    if (acc == 0x7fffffff) *sink = acc;\n"
    "}\n";
static CUfunction flush_kernel(world *w, int arch) {
    static CUfunction fn = NULL;
    if (fn) return fn;
    nvrtcProgram prog;
    char a[32];
    snprintf(a, sizeof a, "-arch=sm_%d", arch);
    const char *o[1] = {a};
    if (nvrtcCreateProgram(&prog, flush_src, "flush.cu", 0, NULL, NULL) != NVRTC_SUCCESS ||
        nvrtcCompileProgram(prog, 1, o) != NVRTC_SUCCESS)
        die("flush kernel: compile failed");
    size_t n = 0;
    nvrtcGetCUBINSize(prog, &n);
    char *cubin = malloc(n);
    nvrtcGetCUBIN(prog, cubin);
    nvrtcDestroyProgram(&prog);
    CUmodule mod;
    if (cuModuleLoadData(&mod, cubin) != CUDA_SUCCESS) die("flush kernel: load failed");
    free(cubin);
    if (cuModuleGetFunction(&fn, mod, "flush") != CUDA_SUCCESS) die("flush kernel: no function");
    w->flush_n = (256LL << 20) / 16;
    if (cuMemAlloc(&w->flush_buf, (size_t)w->flush_n * 16) != CUDA_SUCCESS ||
        cuMemsetD8(w->flush_buf, 1, (size_t)w->flush_n * 16) != CUDA_SUCCESS ||
        cuMemAlloc(&w->flush_sink, 4) != CUDA_SUCCESS)
        die("flush kernel: 256 MiB buffer");
    return fn;
}

static int run_config(world *w, const kvlist *kv) {
    problem *p = &w->p;
    char cfgs[1024] = "";
    for (int i = 0; i < kv->n; i++) {
        if (!strcmp(kv->key[i], "DUMP")) continue;
        size_t l = strlen(cfgs);
        snprintf(cfgs + l, sizeof cfgs - l, "%s%s=%s", l ? "," : "", kv->key[i], kv->val[i]);
    }
    char shape[128];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld:%c%c %s%s", p->m, p->n, p->k, p->ta ? 'T' : 'N',
             p->tb ? 'T' : 'N', p->f64 ? "f64" : p->tf32 ? "tf32" : "f32", p->beta0 ? " beta0" : "");

    long long BM = kv_int(kv, "BM", 0), BN = kv_int(kv, "BN", 0), WM = kv_int(kv, "WM", 0),
              WN = kv_int(kv, "WN", 0), TM = kv_int(kv, "TM", 0), TN = kv_int(kv, "TN", 0);
    long long VEC = kv_int(kv, "VEC", 1), SPLIT = kv_int(kv, "SPLIT", 1), SMEM = kv_int(kv, "SMEM", 0);
    if (BM <= 0 || BN <= 0 || WM <= 0 || WN <= 0) {
        fprintf(stderr, "kcheck: config needs BM BN WM WN\n");
        return -1;
    }
    long long NT = kv_int(kv, "NT", 32 * (BM / WM) * (BN / WN));
    long long NACC = kv_int(kv, "NACC", TM * TN * 2);
    const char *func = kv_get(kv, "FUNC") ? kv_get(kv, "FUNC") : "gt_gemm";
    long long GM = (p->m + BM - 1) / BM, GN = (p->n + BN - 1) / BN;

    /* ---- compile ---- */
    char opt[MAXKV + 16][96];
    const char *opts[MAXKV + 16];
    int no = 0;
    int arch = w->have_gpu ? w->cc_major * 10 + w->cc_minor : atoi(getenv("KCHECK_ARCH"));
    snprintf(opt[no++], 96, "-arch=sm_%d", arch);
    snprintf(opt[no++], 96, "-std=c++17");
    snprintf(opt[no++], 96, "-default-device");
    if (!w->have_gpu) snprintf(opt[no++], 96, "--ptxas-options=-v");
    /* One more NVRTC option, e.g. "--ptxas-options=-O1" (experiments on code generation). */
    if (getenv("KCHECK_NVRTC") && *getenv("KCHECK_NVRTC")) snprintf(opt[no++], 96, "%s", getenv("KCHECK_NVRTC"));
    snprintf(opt[no++], 96, "-DGT_DT=%d", p->f64 ? 1 : p->tf32 ? 2 : 0);
    /* A generic kernel (GENERIC=1) takes the sizes as its last arguments only. */
    if (!kv_get(kv, "GENERIC") || !strcmp(kv_get(kv, "GENERIC"), "0")) {
        snprintf(opt[no++], 96, "-DGT_M=%lld", p->m);
        snprintf(opt[no++], 96, "-DGT_N=%lld", p->n);
        snprintf(opt[no++], 96, "-DGT_K=%lld", p->k);
    }
    snprintf(opt[no++], 96, "-DGT_OPA=%d", p->ta);
    snprintf(opt[no++], 96, "-DGT_OPB=%d", p->tb);
    snprintf(opt[no++], 96, "-DGT_BETA0=%d", p->beta0);
    if (SMEM) snprintf(opt[no++], 96, "-DGT_SMEM_CHECK=%lld", SMEM);
    snprintf(opt[no++], 96, "-DGT_WS_COUNTERS=%d", KC_WS_COUNTERS);
    /* Split-K's reduction in one level unless the config says SPLIT_GROUP (the library
     * picks it: tuner/kcfg.c, gt_kcfg_split_group). */
    if (!kv_get(kv, "SPLIT_GROUP")) snprintf(opt[no++], 96, "-DGT_SPLIT_GROUP=%lld", kv_int(kv, "SPLIT", 1));
    for (int i = 0; i < kv->n; i++)
        if (!is_special(kv->key[i])) snprintf(opt[no++], 96, "-DGT_%s=%s", kv->key[i], kv->val[i]);
    for (int i = 0; i < no; i++) opts[i] = opt[i];

    nvrtcProgram prog;
    const char *hdrs[2] = {w->hdr, w->hdr_types}, *hnames[2] = {"common.cuh", "types.cuh"};
    if (nvrtcCreateProgram(&prog, w->src, w->src_name, 2, hdrs, hnames) != NVRTC_SUCCESS) {
        fprintf(stderr, "kcheck: nvrtcCreateProgram failed\n");
        return -1;
    }
    nvrtcResult cr = nvrtcCompileProgram(prog, no, opts);
    size_t logn = 0;
    nvrtcGetProgramLogSize(prog, &logn);
    char *log = malloc(logn + 1);
    log[0] = 0;
    if (logn) nvrtcGetProgramLog(prog, log);
    if (cr != NVRTC_SUCCESS) {
        printf("%-16s %-30s FAIL compile: %s\n", shape, cfgs, nvrtcGetErrorString(cr));
        fprintf(stderr, "%s\n", log);
        free(log);
        nvrtcDestroyProgram(&prog);
        return 1;
    }
    size_t cubin_n = 0;
    nvrtcGetCUBINSize(prog, &cubin_n);
    char *cubin = malloc(cubin_n);
    nvrtcGetCUBIN(prog, cubin);
    nvrtcDestroyProgram(&prog);
    const char *dump = kv_get(kv, "DUMP");
    if (dump) {
        FILE *f = fopen(dump, "wb");
        if (f) {
            fwrite(cubin, 1, cubin_n, f);
            fclose(f);
        }
    }
    if (!w->have_gpu) {
        /* compile-only: ptxas's report (registers, spills) from the log */
        char *line = strstr(log, "Used");
        char *sp = strstr(log, "bytes stack frame");
        char buf[256] = "";
        if (sp) {
            while (sp > log && sp[-1] != '\n') sp--;
            char *e = strchr(sp, '\n');
            snprintf(buf, sizeof buf, "%.*s", e ? (int)(e - sp) : 200, sp);
        }
        char *e = line ? strchr(line, '\n') : NULL;
        printf("%-16s %-30s compiled: %.*s |%s\n", shape, cfgs, line ? (e ? (int)(e - line) : 200) : 0,
               line ? line : "", buf);
        free(log);
        free(cubin);
        return 0;
    }
    free(log);

    /* ---- load ---- */
    if (build_data(w, (int)VEC) < 0) return -1;
    CUmodule mod;
    CUfunction fn;
    CU(cuModuleLoadData(&mod, cubin));
    free(cubin);
    CU(cuModuleGetFunction(&fn, mod, func));
    int regs = 0, local = 0, sstatic = 0;
    CU(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
    CU(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn));
    CU(cuFuncGetAttribute(&sstatic, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
    if (SMEM > 48 * 1024) {
        CUresult r = cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)SMEM);
        if (r != CUDA_SUCCESS) {
            printf("%-16s %-30s FAIL smem %lld bytes not allowed\n", shape, cfgs, SMEM);
            cuModuleUnload(mod);
            return 1;
        }
    }
    int occ = 0;
    cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, (int)NT, (size_t)SMEM);

    size_t es = p->f64 ? 8 : 4;
    /* the library's layout (common.cuh): KC_WS_COUNTERS counters, then the partials */
    size_t wsbytes = SPLIT > 1 ? (size_t)(GM * GN * SPLIT * NACC * NT) * es + (size_t)KC_WS_COUNTERS * 4 : 0;
    CUdeviceptr dws = 0;
    if (wsbytes) {
        CU(cuMemAlloc(&dws, wsbytes));
        CU(cuMemsetD8(dws, 0, wsbytes));
    }
    double alpha = p->alpha, beta = p->beta0 ? 0.0 : p->beta;
    float alphaf = (float)alpha, betaf = (float)beta;
    long long lda = p->lda, ldb = p->ldb, ldc = p->ldc, gm = p->m, gn = p->n, gk = p->k;
    /* The kernel ABI of common.cuh: the sizes last, read only by a generic kernel. */
    void *args[12] = {&w->dA, &lda, &w->dB, &ldb, &w->dC, &ldc, p->f64 ? (void *)&alpha : (void *)&alphaf,
                      p->f64 ? (void *)&beta : (void *)&betaf, &dws, &gm, &gn, &gk};
    unsigned gx = (unsigned)(GM * GN), gy = (unsigned)SPLIT;

    /* ---- check: two launches from the same C ---- */
    void *out1 = malloc(w->bytesC + 8), *out2 = malloc(w->bytesC + 8);
    int fail = 0;
    const char *why = "";
    for (int rep = 0; rep < 2; rep++) {
        CU(cuMemcpyDtoD(w->dC, w->dC0, w->bytesC));
        CUresult lr = cuLaunchKernel(fn, gx, gy, 1, (unsigned)NT, 1, 1, (unsigned)SMEM, 0, args, NULL);
        if (lr == CUDA_SUCCESS) lr = cuCtxSynchronize();
        if (lr != CUDA_SUCCESS) {
            const char *s = NULL;
            cuGetErrorString(lr, &s);
            printf("%-16s %-30s FAIL launch: %s\n", shape, cfgs, s ? s : "?");
            exit(1); /* the context may be unusable */
        }
        CU(cuMemcpyDtoH(rep ? out2 : out1, w->dC, w->bytesC));
    }
    double num = 0, den = 0, maxabs = 0;
    long long bad_pad = 0, nonfinite = 0;
    for (long long n = 0; n < p->n; n++)
        for (long long r = 0; r < ldc; r++) {
            long long i = r + n * ldc;
            double v = p->f64 ? ((double *)out1)[i] : (double)((float *)out1)[i];
            if (r >= p->m) {
                if (v != 7777.0) bad_pad++;
                continue;
            }
            double ref = w->ref[r + n * p->m];
            if (!isfinite(v)) {
                nonfinite++;
                continue;
            }
            double d = v - ref;
            num += d * d;
            den += ref * ref;
            if (fabs(d) > maxabs) maxabs = fabs(d);
        }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    double tol = p->f64 ? 1e-12 : p->tf32 ? 1e-4 : 1e-5;
    if (nonfinite) fail = 1, why = " (non-finite outputs)";
    else if (bad_pad) fail = 1, why = " (wrote C's padding rows)";
    else if (!(rel < tol)) fail = 1, why = " (error)";
    else if (p->tf32 && !(maxabs <= 1e-3 * sqrt((double)p->k))) fail = 1, why = " (an element off)";
    else if (memcmp(out1, out2, w->bytesC)) fail = 1, why = " (second launch differs)";
    free(out1), free(out2);

    /* ---- timing ---- */
    double med_us = 0;
    const char *fl = getenv("KCHECK_FLUSH");
    CUfunction flush_fn = (fl && atoi(fl)) ? flush_kernel(w, arch) : NULL;
    const char *nt = getenv("KCHECK_NOTIME");
    if (!(nt && atoi(nt))) {
        int reps = getenv("KCHECK_REPS") ? atoi(getenv("KCHECK_REPS")) : 20;
        if (reps < 1) reps = 1;
        CUevent ev[2 * 200];
        if (reps > 200) reps = 200;
        for (int i = 0; i < 2 * reps; i++) CU(cuEventCreate(&ev[i], CU_EVENT_DEFAULT));
        for (int i = 0; i < 3; i++) CU(cuLaunchKernel(fn, gx, gy, 1, (unsigned)NT, 1, 1, (unsigned)SMEM, 0, args, NULL));
        for (int i = 0; i < reps; i++) {
            if (flush_fn) {
                void *fa[] = {&w->flush_buf, &w->flush_n, &w->flush_sink};
                CU(cuLaunchKernel(flush_fn, 264, 1, 1, 512, 1, 1, 0, 0, fa, NULL));
            }
            CU(cuEventRecord(ev[2 * i], 0));
            CU(cuLaunchKernel(fn, gx, gy, 1, (unsigned)NT, 1, 1, (unsigned)SMEM, 0, args, NULL));
            CU(cuEventRecord(ev[2 * i + 1], 0));
        }
        CU(cuCtxSynchronize());
        float t[200];
        for (int i = 0; i < reps; i++) CU(cuEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]));
        qsort(t, (size_t)reps, sizeof t[0], cmp_float);
        med_us = 1000.0 * (reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]));
        for (int i = 0; i < 2 * reps; i++) cuEventDestroy(ev[i]);
    }
    double tflops = med_us > 0 ? 2.0 * p->m * p->n * p->k / (med_us * 1e-6) / 1e12 : 0;
    printf("%-16s %-30s %s%s rel=%.2e maxabs=%.2e us=%.1f TFLOPs=%.2f regs=%d local=%d smem=%lld+%d occ=%d\n",
           shape, cfgs, fail ? "FAIL" : "PASS", why, rel, maxabs, med_us, tflops, regs, local, SMEM,
           sstatic, occ);
    fflush(stdout);
    if (dws) cuMemFree(dws);
    cuModuleUnload(mod);
    return fail;
}

int main(int argc, char **argv) {
    if (argc < 10) {
        fprintf(stderr,
                "usage: kcheck KERNEL.cu M N K opA opB f32|f64|tf32 beta0 KEY=VAL... [/ KEY=VAL...]...\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    world w;
    memset(&w, 0, sizeof w);
    w.src_name = argv[1];
    w.src = slurp(argv[1]);
    if (!w.src) die("cannot read the kernel source");
    char hpath[4096];
    snprintf(hpath, sizeof hpath, "%s", argv[1]);
    char *slash = strrchr(hpath, '/');
    if (slash) strcpy(slash + 1, "common.cuh");
    else strcpy(hpath, "common.cuh");
    w.hdr = slurp(hpath);
    if (!w.hdr) die("cannot read common.cuh beside the kernel source");
    /* common.cuh includes types.cuh (the 16-bit types), also beside the kernel source. */
    if (slash) strcpy(slash + 1, "types.cuh");
    else strcpy(hpath, "types.cuh");
    w.hdr_types = slurp(hpath);
    if (!w.hdr_types) die("cannot read types.cuh beside the kernel source");
    problem *p = &w.p;
    p->m = atoll(argv[2]), p->n = atoll(argv[3]), p->k = atoll(argv[4]);
    p->ta = argv[5][0] == 'T' || argv[5][0] == 't';
    p->tb = argv[6][0] == 'T' || argv[6][0] == 't';
    if (!strcmp(argv[7], "f64")) p->f64 = 1;
    else if (!strcmp(argv[7], "f32")) p->f64 = 0;
    else if (!strcmp(argv[7], "tf32")) p->f64 = 0, p->tf32 = 1;
    else die("dtype must be f32, f64 or tf32");
    p->beta0 = atoi(argv[8]) != 0;
    p->alpha = -1.25;
    p->beta = 0.75;
    if (p->m <= 0 || p->n <= 0 || p->k <= 0) die("M, N, K must be positive");

    const char *ka = getenv("KCHECK_ARCH");
    if (ka && *ka) {
        w.have_gpu = 0;
    } else {
        if (cuInit(0) != CUDA_SUCCESS) die("cuInit failed (no GPU? set KCHECK_ARCH for compile-only)");
        CUdevice dev;
        CUcontext ctx;
        if (cuDeviceGet(&dev, 0) != CUDA_SUCCESS) die("no device 0");
        cuDeviceGetAttribute(&w.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        cuDeviceGetAttribute(&w.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) die("no context");
        cuCtxSetCurrent(ctx);
        w.have_gpu = 1;
    }

    int fails = 0, errors = 0;
    kvlist kv;
    kv.n = 0;
    for (int i = 9; i <= argc; i++) {
        if (i == argc || !strcmp(argv[i], "/")) {
            if (kv.n) {
                int r = run_config(&w, &kv);
                if (r < 0) errors++;
                else if (r > 0) fails++;
            }
            kv.n = 0;
            continue;
        }
        char *eq = strchr(argv[i], '=');
        if (!eq || kv.n == MAXKV) die("config words are KEY=VALUE");
        snprintf(kv.key[kv.n], 32, "%.*s", (int)(eq - argv[i]), argv[i]);
        snprintf(kv.val[kv.n], 64, "%s", eq + 1);
        kv.n++;
    }
    return errors ? 2 : fails ? 1 : 0;
}
