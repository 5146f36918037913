/*
 * gemmtune.h: the public API of gemmtune, a run-time autotuned GEMM for NVIDIA GPUs.
 *
 * gemm_tuned() (single precision, BLAS sgemm), gemm_tuned_d() (double, dgemm) and
 * gemm_tuned_ex() (typed, in the manner of cublasGemmEx: tf32, f16, bf16, 3xTF32)
 * compute C = alpha * op(A) * op(B) + beta * C, column-major, on device memory. The
 * first call for a shape tunes a kernel for it (NVRTC, CUDA events, verification) and
 * stores the winner in an SQLite cache; later calls, in this process or any other, use
 * the winner.
 *
 * This header needs no CUDA header: device pointers are plain pointers and a stream is
 * a void * (a CUstream or cudaStream_t; NULL is the default stream).
 *
 * Thread safety: every function may be called from any thread at any time, except
 * gt_release, which must not overlap other calls.
 * The library never prints (unless GEMMTUNE_LOG asks it to) and never exits.
 *
 * ABI policy: within one major version, functions are only added, never changed;
 * enum values are only appended.
 */
#ifndef GEMMTUNE_H
#define GEMMTUNE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GT_VERSION_MAJOR 0
#define GT_VERSION_MINOR 1
#define GT_VERSION_PATCH 0
#define GT_VERSION_STRING "0.1.0"

/* Status codes, stated once: name, value, message. */
#define GT_STATUS_MAP(XX)                                                                  \
    XX(SUCCESS, 0, "success")                                                              \
    XX(INVALID_VALUE, 1, "invalid argument")                                               \
    XX(NO_DRIVER, 2, "no CUDA driver")                                                     \
    XX(NO_DEVICE, 3, "no CUDA device")                                                     \
    XX(CUDA_ERROR, 4, "CUDA driver call failed")                                           \
    XX(NVRTC_ERROR, 5, "NVRTC compilation failed")                                         \
    XX(OUT_OF_MEMORY, 6, "out of memory")                                                  \
    XX(CACHE_ERROR, 7, "cache file unusable")                                              \
    XX(NOT_SUPPORTED, 8, "not supported")                                                  \
    XX(LAUNCH_FAILED, 9, "kernel launch failed")                                           \
    XX(VERIFY_FAILED, 10, "result failed verification")                                    \
    XX(NO_CANDIDATE, 11, "no usable kernel candidate")                                     \
    XX(INTERNAL, 12, "internal error")

typedef enum {
#define GT_STATUS_ENUM(name, value, text) GT_##name = value,
    GT_STATUS_MAP(GT_STATUS_ENUM)
#undef GT_STATUS_ENUM
} gt_status;

/* op(X): N = as stored, T = transposed, C = conjugate-transposed (the same as T for
 * real types, as in BLAS). */
typedef enum { GT_OP_N = 0, GT_OP_T = 1, GT_OP_C = 2 } gt_op;

/*
 * C = alpha * op(A) * op(B) + beta * C, single precision, column-major.
 * op(A) is m x k, op(B) is k x n, C is m x n. A, B, C are device pointers; lda, ldb,
 * ldc are in elements. Argument positions (for gt_last_error_arg) follow BLAS sgemm:
 * 1 opA, 2 opB, 3 m, 4 n, 5 k, 6 alpha, 7 A, 8 lda, 9 B, 10 ldb, 11 beta, 12 C,
 * 13 ldc, 14 stream.
 *
 * BLAS rules: a negative size or a leading dimension below its minimum returns
 * GT_INVALID_VALUE and launches nothing; m == 0 or n == 0 returns at once;
 * k == 0 or alpha == 0 gives C = beta * C without reading A or B; beta == 0 never
 * reads C, so NaN already in C does not appear in the result.
 * The call is asynchronous with respect to the host, like a kernel launch, except the
 * first call for a shape in mode tune without async tuning, which tunes and so
 * synchronizes the stream. Thread-safe: any number of threads may call it at once.
 */
gt_status gemm_tuned(gt_op opA, gt_op opB, int64_t m, int64_t n, int64_t k, float alpha,
                     const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                     float *C, int64_t ldc, void *stream);

/*
 * The same in double precision (BLAS dgemm): the same arguments, rules, positions and
 * thread safety, with double data and scalars. Its shapes are tuned and cached apart
 * from gemm_tuned's (the key holds the data type, f64). On sm_80 and later the tuner
 * also tries FP64 tensor-core (DMMA) kernels, which sum over K in another order.
 */
gt_status gemm_tuned_d(gt_op opA, gt_op opB, int64_t m, int64_t n, int64_t k, double alpha,
                       const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                       double *C, int64_t ldc, void *stream);

/* Element types of gemm_tuned_ex (cudaDataType's roles; its values are not used, so this
 * header needs no CUDA header). */
typedef enum { GT_R_32F = 0, GT_R_64F = 1, GT_R_16F = 2, GT_R_16BF = 3 } gt_datatype;

/* Compute types of gemm_tuned_ex (cublasComputeType_t's roles). GT_COMPUTE_32F_FAST_TF32
 * rounds fp32 inputs to tf32 (10-bit mantissa) for the tensor cores: faster, less exact,
 * used only when asked for.
 * GT_COMPUTE_32F_EMULATED_3XTF32 emulates fp32 products on the tf32 tensor cores (as
 * CUTLASS's 3xTF32): each element x of A and B is split into a high part h (x with its
 * low 13 mantissa bits cleared) and a low part l = x - h rounded to tf32, and
 * a * b = ha hb + ha lb + la hb is accumulated in fp32. The error of a product is about
 * 2^-20 of |a b| at most, against fp32's 2^-24 per rounding, so over a sum of K products
 * it is close to fp32's own; the tuner verifies every candidate with fp32's tolerance and
 * may also pick an exact fp32 (FFMA) kernel where that is faster. Opt-in, like cuBLAS's
 * fp32 emulation. One difference from fp32 beyond rounding: an inf in A or B gives NaN
 * where fp32 may give inf (inf times a low part of zero). */
typedef enum {
    GT_COMPUTE_32F = 0,
    GT_COMPUTE_64F = 1,
    GT_COMPUTE_32F_FAST_TF32 = 2,
    GT_COMPUTE_32F_EMULATED_3XTF32 = 3,
} gt_compute_type;

/*
 * The typed entry, in the manner of cublasGemmEx: C = alpha * op(A) * op(B) + beta * C,
 * column-major, with the element types of A, B and C and the compute type given.
 * Supported combinations (A and B always have the same type):
 *   A/B       C        compute                    key type   (gemmtune --dtype)
 *   32F       32F      COMPUTE_32F                f32        same as gemm_tuned
 *   32F       32F      COMPUTE_32F_FAST_TF32      tf32
 *   32F       32F      COMPUTE_32F_EMULATED_3XTF32  f32_3xtf32
 *   64F       64F      COMPUTE_64F                f64        same as gemm_tuned_d
 *   16F       16F      COMPUTE_32F                f16
 *   16F       32F      COMPUTE_32F                f16_f32
 *   16BF      16BF     COMPUTE_32F                bf16
 *   16BF      32F      COMPUTE_32F                bf16_f32
 * alpha and beta are host pointers to scalars of the compute type (double for
 * COMPUTE_64F, float for the others). Products accumulate in the compute type; a 16-bit
 * C is rounded once, at the end.
 * tf32, f16 and bf16 run on tensor cores only and need compute capability 8.0 or later;
 * on older devices the call returns GT_NOT_SUPPORTED and changes nothing.
 * Argument positions (gt_last_error_arg) follow cublasGemmEx without its handle:
 * 1 opA, 2 opB, 3 m, 4 n, 5 k, 6 alpha, 7 A, 8 Atype, 9 lda, 10 B, 11 Btype, 12 ldb,
 * 13 beta, 14 C, 15 Ctype, 16 ldc, 17 computeType, 18 stream.
 * A type or compute type outside its enum is GT_INVALID_VALUE; a valid but unsupported
 * combination is GT_NOT_SUPPORTED. These and NULL alpha or beta are checked first, since
 * the types decide the element sizes the other rules use; then every rule of gemm_tuned,
 * in position order (pointers must be aligned to their element size). Each combination
 * is tuned and cached apart.
 */
gt_status gemm_tuned_ex(gt_op opA, gt_op opB, int64_t m, int64_t n, int64_t k,
                        const void *alpha, const void *A, gt_datatype Atype, int64_t lda,
                        const void *B, gt_datatype Btype, int64_t ldb, const void *beta, void *C,
                        gt_datatype Ctype, int64_t ldc, gt_compute_type computeType,
                        void *stream);

/* A fixed English message for a status. Never NULL. */
const char *gt_status_string(gt_status status);

/* The message of the last failed call made by this thread (empty when none):
 * it names the argument, the driver or NVRTC error, or the cache file. */
const char *gt_last_error(void);

/* BLAS-style position (1-based) of the invalid argument of this thread's last
 * GT_INVALID_VALUE, else 0. */
int gt_last_error_arg(void);

/* Run-time version of the library. */
void gt_version(int *major, int *minor, int *patch);

/* Logging. Levels: 0 off, 1 error, 2 warn, 3 info, 4 debug. By default the level
 * comes from GEMMTUNE_LOG (off/error/warn/info/debug or 0..4) and messages go to
 * stderr; a callback, when set, receives them instead. */
typedef void (*gt_log_fn)(int level, const char *message, void *user);
void gt_set_log_callback(gt_log_fn fn, void *user);
void gt_set_log_level(int level);

/* Upper bound in bytes on the device memory that tuning may take (scratch output,
 * random inputs, reference). 0 restores the default, which is the size of C and one
 * copy of A and B plus 2 x L2; GEMMTUNE_TUNE_MEM_MB sets it from the environment.
 * A device short of it skips tuning and runs the fallback kernel; the call succeeds. */
void gt_set_tune_memory_limit(size_t bytes);

/* What a call does when its shape is in no cache (GEMMTUNE_MODE=tune|cached|off sets
 * it from the environment; gt_set_mode overrides):
 *   GT_MODE_TUNE    tune now (the default), store the winner, run it;
 *   GT_MODE_CACHED  never tune: run the selector's choice from every candidate's timing
 *                   on the tuned shapes of the same device, types, ops and alignment
 *                   class (the nearer in log M, log N, log K, the more it counts) and the
 *                   cost model; with no tuned shape of the class, the cost model's choice;
 *                   the same on every rank that sees the same files;
 *   GT_MODE_OFF     no cache and no tuning: always the safe default kernel.
 * A change applies to shapes first seen afterwards (gt_release forgets the others). */
typedef enum { GT_MODE_TUNE = 0, GT_MODE_CACHED = 1, GT_MODE_OFF = 2 } gt_mode;
/* GT_INVALID_VALUE (nothing changed) for a value outside gt_mode. */
gt_status gt_set_mode(gt_mode mode);
gt_mode gt_get_mode(void);

/* Background tuning (GEMMTUNE_TUNE_ASYNC=1 sets it from the environment): in mode tune,
 * a shape found in no cache runs at once the selector's choice (as mode cached's) among
 * the kernels that sum over K in the default kernel's order (no split-K, no tensor
 * cores), else the default kernel, and is tuned on a worker thread over the same kernels;
 * later calls pick up the winner. Results are identical bit for bit before and after the
 * switch, since every one of those kernels gives the same bits; the winner, which it also
 * stores in the cache, may be slower than a foreground tuning's (`gemmtune tune --force`
 * tunes over every kernel). 0 turns it off. */
void gt_set_tune_async(int on);

/* Exact-shape kernels for shapes run from the selector's choice (GEMMTUNE_SPECIALIZE=0
 * sets it off from the environment; on by default). Such a shape (mode cached; a shape
 * first met under capture in mode cached) first runs its configuration's shape-generic
 * kernel, one binary per class that the node holds, so the call compiles nothing. With
 * this on, the same configuration compiled for the exact shape then takes its place: at
 * once where the binary cache holds it, else once the background thread has compiled it,
 * checked on random data that it gives the generic kernel's bits (else it is refused) and
 * stored it for every later process. Results do not change bit for bit: the two kernels
 * sum every output in the same order. Off, the generic kernel stays. A change applies to
 * shapes first seen afterwards. */
void gt_set_specialize(int on);

/* Returns when the background thread has nothing queued or running (async tuning,
 * exact-shape kernels), or at once when it was never started: for a program that wants
 * the kernels settled before it times or captures a graph, and for tests. */
void gt_wait_background(void);

/*
 * CUDA Graphs. gemm_tuned, gemm_tuned_d and gemm_tuned_ex may be called on a stream that
 * is being captured (cudaStreamBeginCapture or cuStreamBeginCapture, in any mode, from
 * any thread), and on streams of other threads while a capture runs. The library then
 * does nothing that capture forbids: it never synchronizes the capturing stream, never
 * tunes inside capture, and makes its own non-stream calls (loading a kernel, allocating
 * its workspace) in relaxed capture mode, so they never invalidate a capture.
 *   - A shape with a plan or a cached winner runs it.
 *   - A shape in no cache runs what mode GT_MODE_CACHED would (the selector's choice).
 *     In mode GT_MODE_TUNE it is tuned after the capture: at its first call outside
 *     capture, or, when async tuning is on, on the background worker, in which case it
 *     runs what every pending shape runs (the selector's choice among kernels bit-identical
 *     to the default kernel, so that the worker's winner gives the same bits). The graph
 *     keeps the kernel it captured.
 *   - A kernel that needs a workspace (split-K partials, operand copies) takes the one
 *     given with gt_set_workspace for the stream when it is large enough; else memory the
 *     graph itself allocates and frees in each replay (stream-ordered allocation: the
 *     graph owns it, so replays of different graphs and the stream's later calls never
 *     share it, and replaying any number of times, concurrently with other work, is
 *     safe). A driver without stream-ordered allocation (before CUDA 11.2) gets
 *     GT_NOT_SUPPORTED for such a kernel, with nothing launched, unless a workspace is set.
 * Graphs holding gemmtune kernels must not be launched after gt_release, which unloads
 * the kernels.
 *
 * A workspace for the calls on `stream`, as cublasSetWorkspace: with one that is large
 * enough the library allocates nothing on the call path, in capture or not. stream is a
 * stream of the current context, or NULL (the legacy default stream); the per-thread
 * default stream (CU_STREAM_PER_THREAD) is set per calling thread. ptr is device memory
 * of that context, aligned to 256 bytes, of `bytes` bytes (at least
 * GT_WORKSPACE_MIN_BYTES); ptr NULL gives the stream back to the library's own workspace.
 * The library zeroes the first GT_WORKSPACE_MIN_BYTES on `stream` (split-K tile
 * counters, which every completed launch leaves zero again) and never frees the memory.
 * It must stay allocated, and be used by nothing else, while any launch on the stream
 * made since, or any replay of a graph captured on the stream since, may run; replays of
 * such graphs share it, so they must not run concurrently with one another or with the
 * stream's own work. A call whose kernel needs more than `bytes` uses the library's
 * workspace instead (a warning is logged once per stream). Must not be called while
 * `stream` is capturing. GT_INVALID_VALUE (nothing changed) for a misaligned ptr, too few
 * bytes, or a capturing stream.
 */
#define GT_WORKSPACE_MIN_BYTES 16384
gt_status gt_set_workspace(void *stream, void *ptr, size_t bytes);

/* Counters since the process started, for tests and tools. */
typedef struct gt_stats {
    uint64_t calls;         /* gemm_tuned calls that reached a launch */
    uint64_t plan_hits;     /* found in the in-process plan table */
    uint64_t cache_hits;    /* found in an SQLite cache */
    uint64_t tunes;         /* shapes tuned */
    uint64_t fallbacks;     /* calls that ran the fallback kernel (tuning skipped or failed) */
    uint64_t compiles;      /* NVRTC compilations */
    uint64_t cubin_hits;    /* kernels loaded from the binary cache (no NVRTC) */
    uint64_t nearest;       /* shapes given the selector's choice (mode cached, under capture,
                               async tuning's pending plans) or a nearest shape's winner */
    uint64_t rejected;      /* cache entries refused (bad configuration or binary) */
    uint64_t async_tunes;   /* shapes tuned on the background worker */
    uint64_t captured;      /* calls made on a stream under CUDA Graph capture */
    uint64_t deferred;      /* shapes first met under capture, run without tuning and
                               left to be tuned after it (mode tune) */
    uint64_t staged;        /* calls whose narrow operands ran from aligned copies (the
                               product in the 16-byte class; src/stage.h) */
    uint64_t specialized;   /* shapes whose generic kernel gave way to its exact-shape
                               twin (gt_set_specialize) */
} gt_stats;
void gt_get_stats(gt_stats *out);

/* Unloads every module, frees the library's device memory and closes the cache.
 * Later calls start again from scratch. The one exception to thread safety: no other
 * gemmtune call may run while gt_release does (as with cublasDestroy). */
void gt_release(void);

#ifdef __cplusplus
}
#endif
#endif
