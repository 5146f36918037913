// aux.cu: gemmtune's helper kernels, for every storage and data type, compiled by NVRTC
// with no problem baked in. Each kernel is one template, instantiated under an extern "C"
// name that runtime/devctx.c looks up: scale, fill and cmp per storage type (f32, f64,
// f16, bf16: base/key.h's gt_stype), ref per data type (base/key.h's gt_dtype: the types
// of A/B and of C). Each program holds the instantiations of one type only, chosen by
// -DGT_AUX_ST_<stype> or -DGT_AUX_REF_<dtype> (runtime/devctx.c), and is compiled on first
// need, so that a call compiles only the helpers of its own types, each a small program.
//   gt_scale_<s>   C = beta * C (or 0 when beta0): the k == 0 / alpha == 0 path
//   gt_fill_<s>    random uniform values in [-1, 1) (or one constant) for tuning inputs
//   gt_ref_<d>     the reference: float64 dot products for a patch of rows x columns, and
//                  the scale of each one's roundoff (sum of |a||b|)
//   gt_cmp_<s>     each output against its bound, and the sums of the relative Frobenius
//                  error (tuner/verify.h)
//   gt_pad_<s>     C's padding rows beyond M unchanged, bit for bit
//   gt_round_<s>, gt_copy_<s>   test aids: the mutations of GEMMTUNE_TEST_FAULT
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

// The reference of a patch of outputs: rows[0..nr) x cols[0..nc), summed in float64 one
// product after another (the simplest correct order), 16 x 16 outputs per block with the
// operands staged through shared memory 16 K steps at a time. For each output it writes
// the value, alpha * op(A) op(B) + beta * C0, to ref and the scale of its roundoff,
// |alpha| sum |a||b| + |beta||C0|, to g: a dot product's error is bounded relative to that
// sum, not to the value (verify.h). Launched with 16 x 16 threads; the grid's x runs over
// column blocks, its y (with a stride, for more than 65535 row blocks) over row blocks.
template <typename TI, typename TC>
__device__ void ref(int opa, int opb, long long k, double alpha, const TI *A, long long lda,
                    const TI *B, long long ldb, double beta, const TC *C0, long long ldc0,
                    int beta0, const int *rows, int nr, const int *cols, int nc, double *ref_out,
                    double *g_out) {
    __shared__ double as[16][17], bs[16][17];  // as[row][l], bs[l][col]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long cb = blockIdx.x * 16ll;
    const int jc = (int)(cb + tx < nc ? cb + tx : nc - 1);  // this thread's column (clamped)
    for (long long rb = blockIdx.y * 16ll; rb < nr; rb += gridDim.y * 16ll) {
        const int ir = (int)(rb + ty < nr ? rb + ty : nr - 1);
        double sum = 0.0, mag = 0.0;
        for (long long l0 = 0; l0 < k; l0 += 16) {
            // Thread (tx, ty) stages A(rows[rb + a_r], l0 + a_l) and B(l0 + b_l, cols[cb + b_c]),
            // with the index that runs along memory on tx.
            const int a_r = opa ? ty : tx, a_l = opa ? tx : ty;
            const int b_l = opb ? ty : tx, b_c = opb ? tx : ty;
            const long long ar = rows[rb + a_r < nr ? rb + a_r : nr - 1], al = l0 + a_l;
            const long long bc = cols[cb + b_c < nc ? cb + b_c : nc - 1], bl = l0 + b_l;
            as[a_r][a_l] = al < k ? gt::to_f64(opa ? A[al + ar * lda] : A[ar + al * lda]) : 0.0;
            bs[b_l][b_c] = bl < k ? gt::to_f64(opb ? B[bc + bl * ldb] : B[bl + bc * ldb]) : 0.0;
            __syncthreads();
            for (int l = 0; l < 16; ++l) {
                const double p = as[ty][l] * bs[l][tx];
                sum += p;
                mag += fabs(p);
            }
            __syncthreads();
        }
        if (rb + ty < nr && cb + tx < nc) {
            const long long r = rows[ir], c = cols[jc], o = (rb + ty) + (cb + tx) * (long long)nr;
            const double c0 = beta0 ? 0.0 : beta * gt::to_f64(C0[r + c * ldc0]);
            ref_out[o] = alpha * sum + c0;
            g_out[o] = fabs(alpha) * mag + fabs(c0);
        }
    }
}

#define GT_REF(name, TI, TC)                                                                \
    extern "C" __global__ void __launch_bounds__(256) gt_ref_##name(                        \
        int opa, int opb, long long k, double alpha, const TI *A, long long lda, const TI *B, \
        long long ldb, double beta, const TC *C0, long long ldc0, int beta0, const int *rows, \
        int nr, const int *cols, int nc, double *ref_out, double *g_out) {                   \
        ref<TI, TC>(opa, opb, k, alpha, A, lda, B, ldb, beta, C0, ldc0, beta0, rows, nr, cols, \
                    nc, ref_out, g_out);                                                     \
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

// The sums of one check, in acc (verify.c zeroes it, and sets first to all ones):
//   d2, r2      squared differences and squared reference values (the relative Frobenius
//               error), over finite outputs
//   nonfinite   outputs that are NaN or Inf
//   over        outputs beyond their bound |C - ref| <= coef * g + u_out * |ref| + floor
//   worst       the largest |C - ref| / bound, as the bits of a non-negative double
//               (their order as unsigned integers is the order of the values)
//   first       the least (row << 32 | col) of an output beyond its bound or non-finite
//   pad         padding elements (rows m .. ldc - 1) whose bits changed (gt_pad_<s>)
struct acc_t {
    double d2, r2, nonfinite, over;
    unsigned long long worst, first, pad, spare;
};

template <typename T>
__device__ void cmp(const T *C, long long ldc, const int *rows, int nr, const int *cols,
                    int nc, const double *ref, const double *g, double coef, double u_out,
                    double floor_abs, acc_t *acc) {
    const long long total = (long long)nr * nc;
    for (long long base = blockIdx.x * (long long)blockDim.x; base < total;
         base += (long long)gridDim.x * blockDim.x) {
        const long long idx = base + threadIdx.x;
        double d2 = 0.0, r2 = 0.0, bad = 0.0, over = 0.0, ratio = 0.0;
        unsigned long long where = ~0ull;
        if (idx < total) {
            const long long r = rows[idx % nr], c = cols[idx / nr];
            const double v = gt::to_f64(C[r + c * ldc]), ref_v = ref[idx];
            const double bound = coef * g[idx] + u_out * fabs(ref_v) + floor_abs;
            if (isfinite(v)) {
                const double e = fabs(v - ref_v);
                d2 = e * e;
                ratio = e / bound;
                if (!(e <= bound)) over = 1.0;
            } else {
                bad = 1.0;
                ratio = __longlong_as_double(0x7ff0000000000000ll);  // +inf
            }
            r2 = ref_v * ref_v;
            if (bad != 0.0 || over != 0.0) where = (unsigned long long)r << 32 | (unsigned long long)c;
        }
        for (int off = 16; off > 0; off >>= 1) {
            d2 += __shfl_down_sync(0xffffffffu, d2, off);
            r2 += __shfl_down_sync(0xffffffffu, r2, off);
            bad += __shfl_down_sync(0xffffffffu, bad, off);
            over += __shfl_down_sync(0xffffffffu, over, off);
            ratio = fmax(ratio, __shfl_down_sync(0xffffffffu, ratio, off));
            const unsigned long long w = __shfl_down_sync(0xffffffffu, where, off);
            where = w < where ? w : where;
        }
        if ((threadIdx.x & 31) == 0) {
            atomicAdd(&acc->d2, d2);
            atomicAdd(&acc->r2, r2);
            if (bad != 0.0) atomicAdd(&acc->nonfinite, bad);
            if (over != 0.0) atomicAdd(&acc->over, over);
            atomicMax(&acc->worst, (unsigned long long)__double_as_longlong(ratio));
            if (where != ~0ull) atomicMin(&acc->first, where);
        }
    }
}

// C's rows m .. ldc - 1 (the padding of each column) against C0's, bit for bit: counts
// the elements that differ into acc->pad. U: an unsigned type of T's size.
template <typename U>
__device__ void pad(const U *C, const U *C0, long long ldc, long long m, long long n,
                    acc_t *acc) {
    const long long rows = ldc - m, total = rows * n;
    unsigned long long diff = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long o = m + i % rows + i / rows * ldc;
        diff += C[o] != C0[o];
    }
    if (diff) atomicAdd(&acc->pad, diff);
}

// Test aids (tuner/tune.c's GEMMTUNE_TEST_FAULT mutations): round count elements to
// `bits` significant bits, to nearest (a kernel that computes in a coarser type), and copy
// the rectangle [r0, r1) x [c0, c1) of src into dst, both of leading dimension ld (a kernel
// that leaves outputs unwritten, or writes one output with its neighbour's value).
template <typename T>
__device__ void round_bits(T *p, long long count, int bits) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        const double x = gt::to_f64(p[i]);
        if (x == 0.0 || !isfinite(x)) continue;
        const double s = ldexp(1.0, bits - 1 - ilogb(x));
        p[i] = gt::from<T>(rint(x * s) / s);
    }
}

template <typename T>
__device__ void copy_rect(T *dst, const T *src, long long ld, long long r0, long long r1,
                          long long c0, long long c1) {
    const long long rows = r1 - r0, total = rows * (c1 - c0);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long o = r0 + i % rows + (c0 + i / rows) * ld;
        dst[o] = src[o];
    }
}

#define GT_CMP(name, T, U)                                                                \
    extern "C" __global__ void gt_cmp_##name(const T *C, long long ldc, const int *rows,   \
                                             int nr, const int *cols, int nc,              \
                                             const double *ref, const double *g,           \
                                             double coef, double u_out, double floor_abs,  \
                                             acc_t *acc) {                                 \
        cmp<T>(C, ldc, rows, nr, cols, nc, ref, g, coef, u_out, floor_abs, acc);           \
    }                                                                                     \
    extern "C" __global__ void gt_pad_##name(const U *C, const U *C0, long long ldc,       \
                                             long long m, long long n, acc_t *acc) {       \
        pad<U>(C, C0, ldc, m, n, acc);                                                     \
    }                                                                                     \
    extern "C" __global__ void gt_round_##name(T *p, long long count, int bits) {          \
        round_bits<T>(p, count, bits);                                                     \
    }                                                                                     \
    extern "C" __global__ void gt_copy_##name(T *dst, const T *src, long long ld,          \
                                              long long r0, long long r1, long long c0,    \
                                              long long c1) {                              \
        copy_rect<T>(dst, src, ld, r0, r1, c0, c1);                                        \
    }
#ifdef GT_AUX_ST_f32
GT_CMP(f32, float, unsigned)
#endif
#ifdef GT_AUX_ST_f64
GT_CMP(f64, double, unsigned long long)
#endif
#ifdef GT_AUX_ST_f16
GT_CMP(f16, f16, unsigned short)
#endif
#ifdef GT_AUX_ST_bf16
GT_CMP(bf16, bf16, unsigned short)
#endif
