// aux.cu: gemmtune's helper kernels, for every storage and data type, compiled by NVRTC
// with no problem baked in. Each kernel is one template, instantiated under an extern "C"
// name that runtime/devctx.c looks up: scale, fill and cmp per storage type (f32, f64,
// f16, bf16: base/key.h's gt_stype), ref per data type (base/key.h's gt_dtype: the types
// of A/B and of C). Each program holds the instantiations of one type only, chosen by
// -DGT_AUX_ST_<stype> or -DGT_AUX_REF_<dtype> (runtime/devctx.c), and is compiled on first
// need, so that a call compiles only the helpers of its own types, each a small program.
//   gt_scale_<s>   C = beta * C (or 0 when beta0): the k == 0 / alpha == 0 path
//   gt_fill_<s>    random uniform values in [-1, 1) (or one constant) for tuning inputs
//   gt_ref_<d>     the reference: float64 dot products for a sample of rows x columns,
//                  deliberately the simplest correct code, one thread per output
//   gt_cmp_<s>     sums of squared differences and of squared reference values, and
//                  a count of non-finite outputs, for the relative Frobenius error
#include "types.cuh"

using gt::bf16;
using gt::f16;

// Scalars arrive as double for every type (runtime/devctx.c), and C is computed in the
// compute type: double for f64, float for the others (beta * C rounded once to C's type).
template <typename T, typename S>
__device__ void scale(T *C, long long ldc, long long m, long long n, double beta, int beta0) {
    for (long long j = blockIdx.y; j < n; j += gridDim.y)
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m;
             i += (long long)gridDim.x * blockDim.x) {
            T *p = C + i + j * ldc;
            // beta0 writes zeros without reading: NaN already in C must not survive.
            *p = beta0 ? gt::from<T>(0.0f) : gt::from<T>((S)beta * (S)gt::to_f64(*p));
        }
}

#define GT_SCALE(name, T, S)                                                              \
    extern "C" __global__ void gt_scale_##name(T *C, long long ldc, long long m, long long n, \
                                               double beta, int beta0) {                 \
        scale<T, S>(C, ldc, m, n, beta, beta0);                                           \
    }
#ifdef GT_AUX_ST_f32
GT_SCALE(f32, float, float)
#endif
#ifdef GT_AUX_ST_f64
GT_SCALE(f64, double, double)
#endif
#ifdef GT_AUX_ST_f16
GT_SCALE(f16, f16, float)
#endif
#ifdef GT_AUX_ST_bf16
GT_SCALE(bf16, bf16, float)
#endif

// splitmix64 of (seed, index): independent of the launch shape, so a fill is
// reproducible.
__device__ __forceinline__ unsigned long long mix(unsigned long long z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// BITS random bits -> a multiple of 2^-(BITS-1) in [-1, 1): exact in T (BITS is at most
// T's significand), never all zeros. float takes 24 bits, f16 11, bf16 8; double 53, so f64
// inputs use the whole significand and products are not exact in any shorter type: a kernel
// that loses precision somewhere shows in the error.
template <typename T, int BITS>
__device__ void fill(T *p, long long count, unsigned long long seed, int constant, double value) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        if (constant) {
            p[i] = gt::from<T>(value);
        } else {
            unsigned long long h = mix(seed * 0x100000001b3ull + (unsigned long long)i);
            long long r = (long long)(h >> (64 - BITS)) - (1ll << (BITS - 1));
            p[i] = gt::from<T>((double)r * (1.0 / (double)(1ll << (BITS - 1))));
        }
    }
}

#define GT_FILL(name, T, BITS)                                                            \
    extern "C" __global__ void gt_fill_##name(T *p, long long count, unsigned long long seed, \
                                              int constant, double value) {              \
        fill<T, BITS>(p, count, seed, constant, value);                                   \
    }
#ifdef GT_AUX_ST_f32
GT_FILL(f32, float, 24)
#endif
#ifdef GT_AUX_ST_f64
GT_FILL(f64, double, 53)
#endif
#ifdef GT_AUX_ST_f16
GT_FILL(f16, f16, 11)
#endif
#ifdef GT_AUX_ST_bf16
GT_FILL(bf16, bf16, 8)
#endif

template <typename TI, typename TC>
__device__ void ref(int opa, int opb, long long m, long long n, long long k, double alpha,
                    const TI *A, long long lda, const TI *B, long long ldb, double beta,
                    const TC *C0, long long ldc, int beta0, const int *rows, int nr,
                    const int *cols, int nc, double *out) {
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)nr * nc) return;
    const long long r = rows[idx % nr], c = cols[idx / nr];
    double sum = 0.0;
    for (long long l = 0; l < k; ++l) {
        const double a = gt::to_f64(opa ? A[l + r * lda] : A[r + l * lda]);
        const double b = gt::to_f64(opb ? B[c + l * ldb] : B[l + c * ldb]);
        sum += a * b;
    }
    out[idx] = alpha * sum + (beta0 ? 0.0 : beta * gt::to_f64(C0[r + c * ldc]));
}

#define GT_REF(name, TI, TC)                                                                \
    extern "C" __global__ void gt_ref_##name(                                               \
        int opa, int opb, long long m, long long n, long long k, double alpha, const TI *A, \
        long long lda, const TI *B, long long ldb, double beta, const TC *C0, long long ldc, \
        int beta0, const int *rows, int nr, const int *cols, int nc, double *out) {          \
        ref<TI, TC>(opa, opb, m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, beta0, rows, nr, \
                    cols, nc, out);                                                          \
    }
#ifdef GT_AUX_REF_f32
GT_REF(f32, float, float)
#endif
#ifdef GT_AUX_REF_f64
GT_REF(f64, double, double)
#endif
#ifdef GT_AUX_REF_tf32
GT_REF(tf32, float, float)
#endif
#ifdef GT_AUX_REF_f16
GT_REF(f16, f16, f16)
#endif
#ifdef GT_AUX_REF_f16_f32
GT_REF(f16_f32, f16, float)
#endif
#ifdef GT_AUX_REF_bf16
GT_REF(bf16, bf16, bf16)
#endif
#ifdef GT_AUX_REF_bf16_f32
GT_REF(bf16_f32, bf16, float)
#endif
#ifdef GT_AUX_REF_f32_3xtf32
GT_REF(f32_3xtf32, float, float)
#endif

template <typename T>
__device__ void cmp(const T *C, long long ldc, const int *rows, int nr, const int *cols,
                    int nc, const double *ref, double *acc) {
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    double d2 = 0.0, r2 = 0.0, bad = 0.0;
    if (idx < (long long)nr * nc) {
        const double v = gt::to_f64(C[rows[idx % nr] + (long long)cols[idx / nr] * ldc]);
        const double ref_v = ref[idx];
        if (isfinite(v)) {
            d2 = (v - ref_v) * (v - ref_v);
        } else {
            bad = 1.0;
        }
        r2 = ref_v * ref_v;
    }
    for (int off = 16; off > 0; off >>= 1) {
        d2 += __shfl_down_sync(0xffffffffu, d2, off);
        r2 += __shfl_down_sync(0xffffffffu, r2, off);
        bad += __shfl_down_sync(0xffffffffu, bad, off);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&acc[0], d2);
        atomicAdd(&acc[1], r2);
        atomicAdd(&acc[2], bad);
    }
}

#define GT_CMP(name, T)                                                                   \
    extern "C" __global__ void gt_cmp_##name(const T *C, long long ldc, const int *rows,   \
                                             int nr, const int *cols, int nc,              \
                                             const double *ref, double *acc) {             \
        cmp<T>(C, ldc, rows, nr, cols, nc, ref, acc);                                      \
    }
#ifdef GT_AUX_ST_f32
GT_CMP(f32, float)
#endif
#ifdef GT_AUX_ST_f64
GT_CMP(f64, double)
#endif
#ifdef GT_AUX_ST_f16
GT_CMP(f16, f16)
#endif
#ifdef GT_AUX_ST_bf16
GT_CMP(bf16, bf16)
#endif
