/*
 * cublas.c: libgemmtune_cublas.so, the cuBLAS drop-in. Loaded with LD_PRELOAD into an
 * unmodified program, it takes cuBLAS's GEMM entry points and routes each call that
 * gemmtune can do as cuBLAS would to gemm_tuned, gemm_tuned_d or gemm_tuned_ex, on the
 * handle's stream; everything else, and every call gemmtune fails (it writes nothing
 * then), goes to the real cuBLAS, unchanged: found with dlsym(RTLD_NEXT), or, where the
 * program's cuBLAS is outside the global scope (PyTorch's), in that loaded library.
 *
 * Taken: cublasSgemm_v2, cublasDgemm_v2, cublasHgemm, cublasGemmEx and their _64 forms;
 * cublasLtMatmul where its descriptors say a plain GEMM: D in place of C with C's layout,
 * column order, one matrix (no batch), the default epilogue, no scale or amax pointers,
 * C not transposed, host pointer mode, and a compute and scale type of the table below.
 * Routed only with the handle's pointer mode on the host (a device-side alpha cannot be
 * read without a sync) and for the type combinations gemmtune has (gemmtune.h's table):
 * 32F with COMPUTE_32F (exact fp32, whatever the math mode allows) or COMPUTE_32F_FAST_TF32
 * (asked for by the caller), 64F with COMPUTE_64F, 16F and 16BF inputs with a C of their
 * type or 32F and COMPUTE_32F. cublasHgemm and COMPUTE_16F, which cuBLAS accumulates in
 * fp16, run with fp32 accumulation: never less accurate. Legacy compute types (a
 * cudaDataType as the compute type) and every other combination go to cuBLAS. The
 * handle's workspace (cublasSetWorkspace) is not shared: cuBLAS writes it on every call
 * it serves, and gemmtune's split-K counters need bytes that stay zero between its
 * launches (gt_set_workspace), so routed calls use gemmtune's own.
 *
 * GEMMTUNE_CUBLAS=off (read at every call) routes nothing; GEMMTUNE_LOG=info or debug
 * says once per entry and shape which library served it. gemmtune_cublas_counts() gives
 * the counts (for tests and tools).
 *
 * No cuBLAS header is needed: the few types and constants used are cuBLAS's ABI,
 * restated below, so the drop-in builds wherever the library does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gemmtune.h"

/* ===== cuBLAS's ABI (cublas_api.h, library_types.h) ===== */

typedef int cublasStatus_t;
typedef void *cublasHandle_t;
typedef int cublasOperation_t;
typedef int cudaDataType;
typedef int cublasComputeType_t;
typedef int cublasGemmAlgo_t;
typedef void *cudaStream_t;
enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1 };
enum { CUBLAS_POINTER_MODE_HOST = 0 };
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 };
enum { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
enum {
    CUBLAS_COMPUTE_16F = 64,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_COMPUTE_64F = 70,
    CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
};

/* ===== the real cuBLAS ===== */

/* Loaded objects whose file name starts with "libcublas" (cuBLAS and cuBLASLt, any
 * version), gathered by dl_iterate_phdr; dlopen is called only after it returns. */
#define LOADED_MAX 16
struct loaded {
    char path[LOADED_MAX][512];
    int n;
};

static int gather_cublas(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct loaded *l = data;
    const char *path = info->dlpi_name;
    if (!path || !*path || l->n == LOADED_MAX) return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, "libcublas", 9) || strlen(path) >= sizeof l->path[0]) return 0;
    strcpy(l->path[l->n++], path);
    return 0;
}

/* `name` in a cuBLAS already loaded, searched through its own handle: the program's
 * cuBLAS when it is not in the global scope, as where a library opened with RTLD_LOCAL
 * (PyTorch's, loaded by Python) brought it. NULL when none has it. */
static void *in_loaded_cublas(const char *name) {
    struct loaded l = {.n = 0};
    dl_iterate_phdr(gather_cublas, &l);
    void *f = NULL;
    for (int i = 0; i < l.n && !f; i++) {
        void *h = dlopen(l.path[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        f = dlsym(h, name);
        dlclose(h); /* drops the reference RTLD_NOLOAD took; the object stays loaded */
    }
    return f;
}

/* The real cuBLAS's `name`: the next definition after this library in the global scope
 * (a program linked against cuBLAS), else the one of a cuBLAS loaded outside it. NULL
 * when no cuBLAS is loaded. Looked up once per entry. */
static void *real(const char *name, void *_Atomic *slot) {
    void *f = atomic_load(slot);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        if (!f) f = in_loaded_cublas(name);
        atomic_store(slot, f);
    }
    return f;
}
#define REAL(type, name)                                                  \
    static void *_Atomic slot_;                                           \
    type fn_ = (type)real(name, &slot_);                                  \
    if (!fn_) return CUBLAS_STATUS_NOT_INITIALIZED

typedef cublasStatus_t (*get_stream_fn)(cublasHandle_t, cudaStream_t *);
typedef cublasStatus_t (*get_mode_fn)(cublasHandle_t, int *);

/* ===== counts and the log ===== */

static atomic_ullong n_routed, n_forwarded, n_fell_back;

/* [0] calls gemmtune served, [1] calls sent to cuBLAS as they came (not routable, or
 * routing off), [2] calls gemmtune failed and cuBLAS then served. */
void gemmtune_cublas_counts(unsigned long long out[3]) {
    out[0] = atomic_load(&n_routed);
    out[1] = atomic_load(&n_forwarded);
    out[2] = atomic_load(&n_fell_back);
}

static int enabled(void) {
    const char *v = getenv("GEMMTUNE_CUBLAS");
    return !(v && (!strcasecmp(v, "off") || !strcmp(v, "0")));
}

static int log_info(void) {
    const char *v = getenv("GEMMTUNE_LOG");
    return v && (!strcasecmp(v, "info") || !strcasecmp(v, "debug") || !strcmp(v, "3") ||
                 !strcmp(v, "4"));
}

/* Once per (entry, shape, ops, types): a line saying who served it. A table of 4096
 * shapes; beyond it, nothing more is said. */
#define SEEN_MAX 4096
static unsigned long long seen[SEEN_MAX];
static int nseen;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *entry, int64_t m, int64_t n, int64_t k, int ta, int tb, int types,
                const char *who) {
    if (!log_info()) return;
    unsigned long long h = 1469598103934665603ull;
    const unsigned long long parts[] = {(unsigned long long)(uintptr_t)entry, (unsigned long long)m,
                                        (unsigned long long)n, (unsigned long long)k,
                                        (unsigned long long)(ta * 4 + tb), (unsigned long long)types,
                                        (unsigned long long)(uintptr_t)who};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) h = (h ^ parts[i]) * 1099511628211ull;
    pthread_mutex_lock(&seen_lock);
    int fresh = 1;
    for (int i = 0; i < nseen && fresh; i++) fresh = seen[i] != h;
    /* Said only when it fits the table; a full table says nothing more. */
    const int said = fresh && nseen < SEEN_MAX;
    if (said) seen[nseen++] = h;
    pthread_mutex_unlock(&seen_lock);
    if (said)
        fprintf(stderr, "gemmtune-cublas: %s %lldx%lldx%lld %c%c: %s\n", entry, (long long)m,
                (long long)n, (long long)k, "NTC"[ta % 3], "NTC"[tb % 3], who);
}

/* ===== routing ===== */

/* The handle's stream when a call on it may be routed: routing on, pointer mode host. */
static int routable(cublasHandle_t h, cudaStream_t *stream) {
    if (!enabled()) return 0;
    static void *_Atomic s_mode, *_Atomic s_stream;
    get_mode_fn get_mode = (get_mode_fn)real("cublasGetPointerMode_v2", &s_mode);
    get_stream_fn get_stream = (get_stream_fn)real("cublasGetStream_v2", &s_stream);
    int mode = -1;
    if (!get_mode || !get_stream || get_mode(h, &mode) != CUBLAS_STATUS_SUCCESS ||
        mode != CUBLAS_POINTER_MODE_HOST || get_stream(h, stream) != CUBLAS_STATUS_SUCCESS)
        return 0;
    return 1;
}

static int op_of(cublasOperation_t o, gt_op *out) {
    if (o != CUBLAS_OP_N && o != CUBLAS_OP_T && o != CUBLAS_OP_C) return 0;
    *out = o == CUBLAS_OP_N ? GT_OP_N : o == CUBLAS_OP_T ? GT_OP_T : GT_OP_C;
    return 1;
}

/* An IEEE half as float (host side; alpha and beta of Hgemm and COMPUTE_16F). */
static float half_to_float(const void *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    int s = h >> 15, e = (h >> 10) & 31, f = h & 1023;
    float v = e == 0 ? ldexpf((float)f, -24) : e == 31 ? (f ? NAN : INFINITY)
                                                       : ldexpf((float)(f | 1024), e - 25);
    return s ? -v : v;
}

/* gemmtune's data type for cuBLAS's (A/B, C, compute); -1 where it has none. */
static int ex_types(cudaDataType ab, cudaDataType c, cublasComputeType_t ct,
                    gt_datatype *gab, gt_datatype *gc, gt_compute_type *gct) {
    if (ab == CUDA_R_32F && c == CUDA_R_32F && (ct == CUBLAS_COMPUTE_32F || ct == CUBLAS_COMPUTE_32F_FAST_TF32)) {
        *gab = *gc = GT_R_32F;
        *gct = ct == CUBLAS_COMPUTE_32F ? GT_COMPUTE_32F : GT_COMPUTE_32F_FAST_TF32;
        return 0;
    }
    if (ab == CUDA_R_64F && c == CUDA_R_64F && ct == CUBLAS_COMPUTE_64F) {
        *gab = *gc = GT_R_64F, *gct = GT_COMPUTE_64F;
        return 0;
    }
    if ((ab == CUDA_R_16F || ab == CUDA_R_16BF) && (c == ab || c == CUDA_R_32F) &&
        (ct == CUBLAS_COMPUTE_32F || (ct == CUBLAS_COMPUTE_16F && ab == CUDA_R_16F && c == ab))) {
        *gab = ab == CUDA_R_16F ? GT_R_16F : GT_R_16BF;
        *gc = c == CUDA_R_32F ? GT_R_32F : *gab;
        *gct = GT_COMPUTE_32F;
        return 0;
    }
    return -1;
}

/* The outcome of a routed attempt: 1 gemmtune served it; 0 the caller forwards. */
static int served(gt_status s, const char *entry, int64_t m, int64_t n, int64_t k, int ta,
                  int tb, int types) {
    if (s == GT_SUCCESS) {
        atomic_fetch_add(&n_routed, 1);
        say(entry, m, n, k, ta, tb, types, "gemmtune");
        return 1;
    }
    atomic_fetch_add(&n_fell_back, 1);
    say(entry, m, n, k, ta, tb, types, "cuBLAS (gemmtune failed)");
    return 0;
}

static void forwarded(const char *entry, int64_t m, int64_t n, int64_t k, int ta, int tb, int types) {
    atomic_fetch_add(&n_forwarded, 1);
    say(entry, m, n, k, ta, tb, types, "cuBLAS");
}

/* The call through gemmtune's public API: gemm_tuned_d for fp64, else gemm_tuned_ex with
 * float scalars (cuBLAS's halves converted where its compute type is 16F). */
static gt_status call_gemmtune(gt_op oa, gt_op ob, int64_t m, int64_t n, int64_t k,
                               const void *alpha, const void *A, gt_datatype gab, int64_t lda,
                               const void *B, int64_t ldb, const void *beta, void *C,
                               gt_datatype gc, int64_t ldc, gt_compute_type gct,
                               cublasComputeType_t ct, cudaStream_t stream) {
    if (gct == GT_COMPUTE_64F)
        return gemm_tuned_d(oa, ob, m, n, k, *(const double *)alpha, A, lda, B, ldb,
                            *(const double *)beta, C, ldc, stream);
    float al = ct == CUBLAS_COMPUTE_16F ? half_to_float(alpha) : *(const float *)alpha;
    float be = ct == CUBLAS_COMPUTE_16F ? half_to_float(beta) : *(const float *)beta;
    return gemm_tuned_ex(oa, ob, m, n, k, &al, A, gab, lda, B, gab, ldb, &be, C, gc, ldc, gct,
                         stream);
}

/* The typed route of every entry: A/B, C and compute of cuBLAS's kinds, alpha and beta
 * as cuBLAS gives them (of the compute type's scale: float, double or half). */
static int route(const char *entry, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                 int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
                 cudaDataType ab, int64_t lda, const void *B, int64_t ldb, const void *beta,
                 void *C, cudaDataType c, int64_t ldc, cublasComputeType_t ct) {
    const int types = ab * 10000 + c * 100 + ct;
    gt_op oa, ob;
    gt_datatype gab, gc;
    gt_compute_type gct;
    cudaStream_t stream;
    if (!op_of(ta, &oa) || !op_of(tb, &ob) || ex_types(ab, c, ct, &gab, &gc, &gct) != 0 ||
        !routable(h, &stream) || !alpha || !beta) {
        forwarded(entry, m, n, k, ta, tb, types);
        return 0;
    }
    gt_status s = call_gemmtune(oa, ob, m, n, k, alpha, A, gab, lda, B, ldb, beta, C, gc, ldc,
                                gct, ct, stream);
    return served(s, entry, m, n, k, ta, tb, types);
}

/* ===== cublasLtMatmul ===== */

typedef void *cublasLtHandle_t, *cublasLtMatmulDesc_t, *cublasLtMatrixLayout_t;
typedef cublasStatus_t (*lt_desc_get_fn)(cublasLtMatmulDesc_t, int, void *, size_t, size_t *);
typedef cublasStatus_t (*lt_layout_get_fn)(cublasLtMatrixLayout_t, int, void *, size_t, size_t *);
typedef cublasStatus_t (*lt_matmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                       const void *, cublasLtMatrixLayout_t, const void *,
                                       cublasLtMatrixLayout_t, const void *, const void *,
                                       cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                       const void *, void *, size_t, cudaStream_t);
/* cublasLt.h's attribute numbers. */
enum { LT_COMPUTE_TYPE = 0, LT_SCALE_TYPE = 1, LT_POINTER_MODE = 2, LT_TRANSA = 3, LT_TRANSB = 4,
       LT_TRANSC = 5, LT_EPILOGUE = 7, LT_A_SCALE = 17, LT_B_SCALE = 18, LT_C_SCALE = 19,
       LT_D_SCALE = 20, LT_AMAX_D = 21 };
enum { LT_TYPE = 0, LT_ORDER = 1, LT_ROWS = 2, LT_COLS = 3, LT_LD = 4, LT_BATCH = 5 };
enum { LT_EPILOGUE_DEFAULT = 1, LT_ORDER_COL = 0 };

/* One matrix layout's type, rows, columns and ld; 0 unless it is one column-major matrix. */
typedef struct {
    int type;
    uint64_t rows, cols;
    int64_t ld;
} lt_layout;

static int lt_get_layout(cublasLtMatrixLayout_t l, lt_layout *out) {
    static void *_Atomic slot;
    lt_layout_get_fn get = (lt_layout_get_fn)real("cublasLtMatrixLayoutGetAttribute", &slot);
    size_t w;
    int32_t order = LT_ORDER_COL, batch = 1;
    uint32_t type = 0;
    if (!get || !l || get(l, LT_TYPE, &type, sizeof type, &w) != 0 ||
        get(l, LT_ROWS, &out->rows, sizeof out->rows, &w) != 0 ||
        get(l, LT_COLS, &out->cols, sizeof out->cols, &w) != 0 ||
        get(l, LT_LD, &out->ld, sizeof out->ld, &w) != 0 ||
        get(l, LT_ORDER, &order, sizeof order, &w) != 0 ||
        get(l, LT_BATCH, &batch, sizeof batch, &w) != 0)
        return 0;
    out->type = (int)type;
    return order == LT_ORDER_COL && batch == 1;
}

/* A descriptor attribute: a 4-byte enum or a pointer (cuBLASLt checks the size), as an
 * unsigned value; 0 when it cannot be read. */
static int lt_get_desc(cublasLtMatmulDesc_t d, int attr, uint64_t *v) {
    static void *_Atomic slot;
    lt_desc_get_fn get = (lt_desc_get_fn)real("cublasLtMatmulDescGetAttribute", &slot);
    size_t w = 0;
    *v = 0;
    if (!get || !d) return 0;
    if (attr >= LT_A_SCALE) {
        void *p = NULL;
        if (get(d, attr, &p, sizeof p, &w) != 0) return 0;
        *v = (uint64_t)(uintptr_t)p;
        return 1;
    }
    uint32_t x = 0;
    if (get(d, attr, &x, sizeof x, &w) != 0) return 0;
    *v = x;
    return 1;
}

/* What the log says of a cublasLtMatmul: m, n, k and the ops, as far as its descriptors
 * can be read (zeros where not). */
typedef struct {
    int64_t m, n, k;
    int ta, tb;
} lt_shape;

/* Routes a cublasLtMatmul that is a plain GEMM: 1 gemmtune served it, 0 gemmtune refused
 * it (counted; cuBLASLt is to run it), -1 it is not one gemmtune takes. *sh: its shape
 * for the log, also when it is not taken. */
static int lt_route(cublasLtMatmulDesc_t d, const void *alpha, const void *A,
                    cublasLtMatrixLayout_t Ad, const void *B, cublasLtMatrixLayout_t Bd,
                    const void *beta, const void *C, cublasLtMatrixLayout_t Cd, void *D,
                    cublasLtMatrixLayout_t Dd, cudaStream_t stream, lt_shape *sh) {
    uint64_t ct, st, pm, ta = 0, tb = 0, tc, epi, ptr = 0;
    lt_layout la, lb, lc, ld;
    memset(sh, 0, sizeof *sh);
    /* The ops and A's and C's layouts name the shape; read once, for the log and the
     * routing. Not read at all when neither needs them. */
    const int route = enabled() && alpha && beta;
    if (!route && !log_info()) return -1;
    memset(&la, 0, sizeof la), memset(&lc, 0, sizeof lc);
    const int got = lt_get_desc(d, LT_TRANSA, &ta) & lt_get_desc(d, LT_TRANSB, &tb) &
                    lt_get_layout(Ad, &la) & lt_get_layout(Cd, &lc);
    sh->m = (int64_t)lc.rows, sh->n = (int64_t)lc.cols;
    sh->k = (int64_t)(ta == CUBLAS_OP_N ? la.cols : la.rows);
    sh->ta = (int)ta, sh->tb = (int)tb;
    if (!route) return -1;
    int ok = got && lt_get_desc(d, LT_COMPUTE_TYPE, &ct) && lt_get_desc(d, LT_SCALE_TYPE, &st) &&
             lt_get_desc(d, LT_POINTER_MODE, &pm) && lt_get_desc(d, LT_TRANSC, &tc) &&
             lt_get_desc(d, LT_EPILOGUE, &epi) && pm == CUBLAS_POINTER_MODE_HOST &&
             tc == CUBLAS_OP_N && epi == LT_EPILOGUE_DEFAULT && (const void *)D == C &&
             lt_get_layout(Bd, &lb) && lt_get_layout(Dd, &ld) && ld.type == lc.type &&
             ld.rows == lc.rows && ld.cols == lc.cols && ld.ld == lc.ld && la.type == lb.type;
    static const int scales[] = {LT_A_SCALE, LT_B_SCALE, LT_C_SCALE, LT_D_SCALE, LT_AMAX_D};
    for (size_t i = 0; ok && i < sizeof scales / sizeof scales[0]; i++)
        ok = lt_get_desc(d, scales[i], &ptr) && ptr == 0;
    /* The scale type is the compute type's: fp64 for COMPUTE_64F, fp32 otherwise. */
    ok = ok && (int)st == (ct == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F);
    if (!ok) return -1;
    /* op(A) is m x k, op(B) k x n, C m x n. */
    const int64_t m = (int64_t)lc.rows, n = (int64_t)lc.cols;
    const int64_t k = (int64_t)(ta == CUBLAS_OP_N ? la.cols : la.rows);
    const int64_t am = (int64_t)(ta == CUBLAS_OP_N ? la.rows : la.cols);
    const int64_t bk = (int64_t)(tb == CUBLAS_OP_N ? lb.rows : lb.cols);
    const int64_t bn = (int64_t)(tb == CUBLAS_OP_N ? lb.cols : lb.rows);
    if (am != m || bk != k || bn != n) return -1;
    gt_op oa, ob;
    gt_datatype gab, gc;
    gt_compute_type gct;
    const int types = la.type * 10000 + lc.type * 100 + (int)ct;
    if (!op_of((int)ta, &oa) || !op_of((int)tb, &ob) ||
        ex_types(la.type, lc.type, (int)ct, &gab, &gc, &gct) != 0 || ct == CUBLAS_COMPUTE_16F)
        return -1;
    gt_status s = call_gemmtune(oa, ob, m, n, k, alpha, A, gab, la.ld, B, lb.ld, beta, D, gc,
                                lc.ld, gct, (int)ct, stream);
    return served(s, "cublasLtMatmul", m, n, k, (int)ta, (int)tb, types);
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t Ad, const void *B,
                              cublasLtMatrixLayout_t Bd, const void *beta, const void *C,
                              cublasLtMatrixLayout_t Cd, void *D, cublasLtMatrixLayout_t Dd,
                              const void *algo, void *ws, size_t ws_bytes, cudaStream_t stream) {
    lt_shape sh;
    const int r = lt_route(d, alpha, A, Ad, B, Bd, beta, C, Cd, D, Dd, stream, &sh);
    if (r == 1) return CUBLAS_STATUS_SUCCESS;
    if (r < 0) forwarded("cublasLtMatmul", sh.m, sh.n, sh.k, sh.ta, sh.tb, -1);
    REAL(lt_matmul_fn, "cublasLtMatmul");
    return fn_(h, d, alpha, A, Ad, B, Bd, beta, C, Cd, D, Dd, algo, ws, ws_bytes, stream);
}

/* ===== the entry points ===== */

/* Each entry: route, else the real cuBLAS with the arguments as they came. */
#define ENTRY_BODY(name, ab, c, ct)                                                          \
    if (route(name, h, ta, tb, m, n, k, alpha, A, ab, lda, B, ldb, beta, C, c, ldc, ct))     \
        return CUBLAS_STATUS_SUCCESS

/* The BLAS-style entries: element type T (void for the halves), size type I. */
#define BLAS_ENTRY(name, T, I, ab, c, ct)                                                      \
    typedef cublasStatus_t (*name##_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, \
                                        I, I, I, const T *, const T *, I, const T *, I,       \
                                        const T *, T *, I);                                    \
    cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, \
                        I k, const T *alpha, const T *A, I lda, const T *B, I ldb,             \
                        const T *beta, T *C, I ldc) {                                          \
        ENTRY_BODY(#name, ab, c, ct);                                                          \
        REAL(name##_fn, #name);                                                                \
        return fn_(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                   \
    }

BLAS_ENTRY(cublasSgemm_v2, float, int, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F)
BLAS_ENTRY(cublasSgemm_v2_64, float, int64_t, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F)
BLAS_ENTRY(cublasDgemm_v2, double, int, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F)
BLAS_ENTRY(cublasDgemm_v2_64, double, int64_t, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F)
BLAS_ENTRY(cublasHgemm, void, int, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F)
BLAS_ENTRY(cublasHgemm_64, void, int64_t, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F)

/* cublasGemmEx and its _64 form (size type I); A and B of different types go to cuBLAS. */
#define EX_ENTRY(name, I)                                                                      \
    typedef cublasStatus_t (*name##_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, \
                                        I, I, I, const void *, const void *, cudaDataType, I,  \
                                        const void *, cudaDataType, I, const void *, void *,   \
                                        cudaDataType, I, cublasComputeType_t,                  \
                                        cublasGemmAlgo_t);                                     \
    cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, \
                        I k, const void *alpha, const void *A, cudaDataType at, I lda,         \
                        const void *B, cudaDataType bt, I ldb, const void *beta, void *C,      \
                        cudaDataType cty, I ldc, cublasComputeType_t ct,                       \
                        cublasGemmAlgo_t algo) {                                               \
        if (at == bt) {                                                                        \
            ENTRY_BODY(#name, at, cty, ct);                                                    \
        } else {                                                                               \
            forwarded(#name, m, n, k, ta, tb, -1);                                             \
        }                                                                                      \
        REAL(name##_fn, #name);                                                                \
        return fn_(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, cty, ldc, ct,   \
                   algo);                                                                      \
    }

EX_ENTRY(cublasGemmEx, int)
EX_ENTRY(cublasGemmEx_64, int64_t)
