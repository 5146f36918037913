// aux_f32.cu: gemmtune's helper kernels, compiled once per context by NVRTC with no
// problem baked in. Version 1.
//   gt_scale_f32   C = beta * C (or 0 when beta0): the k == 0 / alpha == 0 path
//   gt_fill_f32    random uniform values in [-1, 1) (or one constant) for tuning inputs
//   gt_ref_f32     the reference: float64 dot products for a sample of rows x columns,
//                  deliberately the simplest correct code, one thread per output
//   gt_cmp_f32     sums of squared differences and of squared reference values, and
//                  a count of non-finite outputs, for the relative Frobenius error

extern "C" __global__ void gt_scale_f32(float *C, long long ldc, long long m, long long n,
                                        float beta, int beta0) {
    for (long long j = blockIdx.y; j < n; j += gridDim.y)
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m;
             i += (long long)gridDim.x * blockDim.x) {
            float *p = C + i + j * ldc;
            *p = beta0 ? 0.0f : beta * *p;
        }
}

// splitmix64 of (seed, index): independent of the launch shape, so a fill is
// reproducible.
__device__ __forceinline__ unsigned long long mix(unsigned long long z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

extern "C" __global__ void gt_fill_f32(float *p, long long count, unsigned long long seed,
                                       int constant, float value) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        if (constant) {
            p[i] = value;
        } else {
            unsigned long long h = mix(seed * 0x100000001b3ull + (unsigned long long)i);
            // 24 random bits -> [-1, 1): exact in float, never all zeros.
            p[i] = (float)((long long)(h >> 40) - (1ll << 23)) * (1.0f / (1 << 23));
        }
    }
}

extern "C" __global__ void gt_ref_f32(int opa, int opb, long long m, long long n, long long k,
                                      double alpha, const float *A, long long lda,
                                      const float *B, long long ldb, double beta,
                                      const float *C0, long long ldc, int beta0,
                                      const int *rows, int nr, const int *cols, int nc,
                                      double *out) {
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

extern "C" __global__ void gt_cmp_f32(const float *C, long long ldc, const int *rows, int nr,
                                      const int *cols, int nc, const double *ref, double *acc) {
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    double d2 = 0.0, r2 = 0.0, bad = 0.0;
    if (idx < (long long)nr * nc) {
        const float v = C[rows[idx % nr] + (long long)cols[idx / nr] * ldc];
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
