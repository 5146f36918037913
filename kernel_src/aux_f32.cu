// aux_f32.cu: gemmtune's helper kernels, compiled once per context by NVRTC with no
// problem baked in. Version 2: each kernel is one template, instantiated for float (f32)
// and double (f64) under an extern "C" name that devctx.c looks up by data type. (The
// file keeps its name so the build's list of kernel files need not change.)
//   gt_scale_<t>   C = beta * C (or 0 when beta0): the k == 0 / alpha == 0 path
//   gt_fill_<t>    random uniform values in [-1, 1) (or one constant) for tuning inputs
//   gt_ref_<t>     the reference: float64 dot products for a sample of rows x columns,
//                  deliberately the simplest correct code, one thread per output
//   gt_cmp_<t>     sums of squared differences and of squared reference values, and
//                  a count of non-finite outputs, for the relative Frobenius error

template <typename T>
__device__ void scale(T *C, long long ldc, long long m, long long n, T beta, int beta0) {
    for (long long j = blockIdx.y; j < n; j += gridDim.y)
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m;
             i += (long long)gridDim.x * blockDim.x) {
            T *p = C + i + j * ldc;
            // beta0 writes zeros without reading: NaN already in C must not survive.
            *p = beta0 ? T(0) : beta * *p;
        }
}

extern "C" __global__ void gt_scale_f32(float *C, long long ldc, long long m, long long n,
                                        float beta, int beta0) {
    scale<float>(C, ldc, m, n, beta, beta0);
}
extern "C" __global__ void gt_scale_f64(double *C, long long ldc, long long m, long long n,
                                        double beta, int beta0) {
    scale<double>(C, ldc, m, n, beta, beta0);
}

// splitmix64 of (seed, index): independent of the launch shape, so a fill is
// reproducible.
__device__ __forceinline__ unsigned long long mix(unsigned long long z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// BITS random bits -> a multiple of 2^-(BITS-1) in [-1, 1): exact in T (BITS is at most
// T's significand), never all zeros. float takes 24 bits; double 53 bits, so f64 inputs
// use the whole significand and products are not exact in any shorter type: a kernel that
// loses precision somewhere shows in the error.
template <typename T, int BITS>
__device__ void fill(T *p, long long count, unsigned long long seed, int constant, T value) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        if (constant) {
            p[i] = value;
        } else {
            unsigned long long h = mix(seed * 0x100000001b3ull + (unsigned long long)i);
            long long r = (long long)(h >> (64 - BITS)) - (1ll << (BITS - 1));
            p[i] = (T)r * ((T)1 / (T)(1ll << (BITS - 1)));
        }
    }
}

extern "C" __global__ void gt_fill_f32(float *p, long long count, unsigned long long seed,
                                       int constant, float value) {
    fill<float, 24>(p, count, seed, constant, value);
}
extern "C" __global__ void gt_fill_f64(double *p, long long count, unsigned long long seed,
                                       int constant, double value) {
    fill<double, 53>(p, count, seed, constant, value);
}

template <typename T>
__device__ void ref(int opa, int opb, long long m, long long n, long long k, double alpha,
                    const T *A, long long lda, const T *B, long long ldb, double beta,
                    const T *C0, long long ldc, int beta0, const int *rows, int nr,
                    const int *cols, int nc, double *out) {
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)nr * nc) return;
    const long long r = rows[idx % nr], c = cols[idx / nr];
    double sum = 0.0;
    for (long long l = 0; l < k; ++l) {
        const double a = opa ? A[l + r * lda] : A[r + l * lda];
        const double b = opb ? B[c + l * ldb] : B[l + c * ldb];
        sum += a * b;
    }
    out[idx] = alpha * sum + (beta0 ? 0.0 : beta * (double)C0[r + c * ldc]);
}

extern "C" __global__ void gt_ref_f32(int opa, int opb, long long m, long long n, long long k,
                                      double alpha, const float *A, long long lda,
                                      const float *B, long long ldb, double beta,
                                      const float *C0, long long ldc, int beta0,
                                      const int *rows, int nr, const int *cols, int nc,
                                      double *out) {
    ref<float>(opa, opb, m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, beta0, rows, nr, cols,
               nc, out);
}
extern "C" __global__ void gt_ref_f64(int opa, int opb, long long m, long long n, long long k,
                                      double alpha, const double *A, long long lda,
                                      const double *B, long long ldb, double beta,
                                      const double *C0, long long ldc, int beta0,
                                      const int *rows, int nr, const int *cols, int nc,
                                      double *out) {
    ref<double>(opa, opb, m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, beta0, rows, nr, cols,
                nc, out);
}

template <typename T>
__device__ void cmp(const T *C, long long ldc, const int *rows, int nr, const int *cols,
                    int nc, const double *ref, double *acc) {
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    double d2 = 0.0, r2 = 0.0, bad = 0.0;
    if (idx < (long long)nr * nc) {
        const double v = C[rows[idx % nr] + (long long)cols[idx / nr] * ldc];
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

extern "C" __global__ void gt_cmp_f32(const float *C, long long ldc, const int *rows, int nr,
                                      const int *cols, int nc, const double *ref, double *acc) {
    cmp<float>(C, ldc, rows, nr, cols, nc, ref, acc);
}
extern "C" __global__ void gt_cmp_f64(const double *C, long long ldc, const int *rows, int nr,
                                      const int *cols, int nc, const double *ref, double *acc) {
    cmp<double>(C, ldc, rows, nr, cols, nc, ref, acc);
}
