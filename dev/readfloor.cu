// readfloor.cu: how fast can one kernel launch read a byte-bound GEMM's large operand?
// Issue 26 sets decode steps against bytes / 3.0 TB/s; this times a kernel that only reads
// (and sums, so the loads stay) a buffer of each size, as the bench times a GEMM: CUDA events
// around one launch, L2 emptied before each by reading twice its size of other data, median
// of 41. Variants: loads in flight per thread (U), the load's cache hint (cs: __ldcs as
// gemm_gemv.cu reads W; l2: ld.global.nc.L1::no_allocate.L2::256B, which fetches 256 bytes
// into L2 a request; nc: __ldg), threads per block, blocks per SM, and how a block walks the
// buffer (grid-stride, or one contiguous part per block as GEMV's rows are). Also an empty
// kernel: the events' own cost. Then GEMV kernels that read the 33.6 MB weight the way the
// fastest pure read does (GEMV_WALK below: y = W x, bf16, K = 4096), checked against a host
// reference: whether a decode step or a row vector can reach the pure read's time. Not a
// test; dev/gpu_dev.sh readfloor builds and runs it.
// Build: nvcc -O3 -arch=sm_90 -o readfloor dev/readfloor.cu
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cmath>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

template <int HINT> __device__ __forceinline__ uint4 ld(const uint4 *p) {
    if constexpr (HINT == 0) return __ldcs(p);
    else if constexpr (HINT == 1) {
        uint4 v;
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
        return v;
    } else return __ldg(p);
}

// Sums the vectors i, i + T, ... below end, U loads in flight at a time.
template <int U, int HINT>
__device__ __forceinline__ unsigned read_run(const uint4 *w, long long i, long long end, long long T) {
    unsigned s = 0;
    for (; i + (U - 1) * T < end; i += U * T) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = ld<HINT>(w + i + u * T);
#pragma unroll
        for (int u = 0; u < U; ++u) s += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < end; i += T) { uint4 v = ld<HINT>(w + i); s += v.x ^ v.y ^ v.z ^ v.w; }
    return s;
}

// Grid-stride: thread t reads vectors t, t + T, ... (T all threads).
template <int U, int HINT> __global__ void rd_stride(const uint4 *w, long long n, unsigned *out) {
    const long long T = (long long)gridDim.x * blockDim.x;
    const unsigned s = read_run<U, HINT>(w, (long long)blockIdx.x * blockDim.x + threadIdx.x, n, T);
    if (s == 0x9e3779b9u) out[0] = s;
}

// Blocked: block b reads its own contiguous part, its threads side by side.
template <int U, int HINT> __global__ void rd_block(const uint4 *w, long long n, unsigned *out) {
    const long long per = (n + gridDim.x - 1) / gridDim.x;
    const long long b0 = blockIdx.x * per, b1 = min(n, b0 + per);
    const unsigned s = read_run<U, HINT>(w, b0 + threadIdx.x, b1, blockDim.x);
    if (s == 0x9e3779b9u) out[0] = s;
}

__global__ void flush_read(const uint4 *f, long long n, unsigned *out) {
    unsigned s = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) { uint4 v = f[i]; s += v.x ^ v.w; }
    if (s == 0x9e3779b9u) out[0] = s;
}
__global__ void empty_kernel() {}
__global__ void fill(uint4 *w, long long n, unsigned seed) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        w[i] = make_uint4(x, x * 7u + 1u, x ^ 0xabcdu, x + 3u);
    }
}

// GEMV_WALK: y = W x with W L x K bf16 row-major (K contiguous, the DOT layout of a decode
// step and of a row vector), x and y in f32 sums. The grid strides over rows as the fastest
// pure read strides over vectors: at each step the whole grid reads one contiguous window
// (block b takes rows b R ... b R + R - 1, then those G R further). A row of K = 4096 is 512
// vectors of 16 bytes: each of the T threads takes 512 / T of them, R rows at a time with
// their loads in flight together, and keeps its part of x in registers. The block adds its
// threads' sums (warp butterfly, then the warps' sums through shared memory, double
// buffered so that one barrier a step suffices).
constexpr int GV_K = 4096, GV_VECS = GV_K / 8;
template <int T, int R>
__global__ void __launch_bounds__(T) gv_walk(const uint4 *w, const float *x, long long L, float *y) {
    constexpr int U = GV_VECS / T, NW = T / 32;
    __shared__ float red[2][R][NW];
    float xr[U][8];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int q = 0; q < 8; ++q) xr[u][q] = x[(threadIdx.x + u * T) * 8 + q];
    const int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    int par = 0;
    for (long long r0 = (long long)blockIdx.x * R; r0 < L; r0 += (long long)gridDim.x * R, par ^= 1) {
        uint4 v[R][U];
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int u = 0; u < U; ++u)
                v[r][u] = r0 + r < L ? __ldcs(w + (r0 + r) * GV_VECS + threadIdx.x + u * T) : make_uint4(0, 0, 0, 0);
        float s[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            s[r] = 0.f;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const __nv_bfloat162 *e = reinterpret_cast<const __nv_bfloat162 *>(&v[r][u]);
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const float2 f = __bfloat1622float2(e[q]);
                    s[r] += f.x * xr[u][2 * q] + f.y * xr[u][2 * q + 1];
                }
            }
#pragma unroll
            for (int o = 16; o > 0; o /= 2) s[r] += __shfl_xor_sync(0xffffffffu, s[r], o);
            if (lane == 0) red[par][r][wid] = s[r];
        }
        __syncthreads();
        if (threadIdx.x < R && r0 + threadIdx.x < L) {
            float t = 0.f;
#pragma unroll
            for (int j = 0; j < NW; ++j) t += red[par][threadIdx.x][j];
            y[r0 + threadIdx.x] = t;
        }
    }
}
__global__ void fill_bf16(__nv_bfloat16 *w, long long n, unsigned seed) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned h = ((unsigned)i ^ seed) * 2654435761u;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        w[i] = __float2bfloat16((float)(h >> 8) / 8388608.0f - 1.0f);
    }
}
typedef void (*gv_t)(const uint4 *, const float *, long long, float *);
struct gv_variant { const char *name; gv_t k; int t; };

typedef void (*kern_t)(const uint4 *, long long, unsigned *);
struct variant { const char *name; kern_t k; int hint, u, blocked; };

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    const int sms = p.multiProcessorCount;
    const long long fl_n = 2LL * p.l2CacheSize / 16;
    const long long sizes[] = {4096LL * 4096 * 2, 14336LL * 4096 * 2, 128256LL * 4096 * 2};
    const long long maxn = sizes[2] / 16;
    uint4 *w, *f;
    unsigned *out;
    CK(cudaMalloc(&w, maxn * 16));
    CK(cudaMalloc(&f, fl_n * 16));
    CK(cudaMalloc(&out, 64));
    fill<<<1024, 256>>>(w, maxn, 1u);
    fill<<<1024, 256>>>(f, fl_n, 2u);
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("%s, %d SMs, L2 %d MB; floor at 3.0 TB/s; median of 41, L2 emptied by a read before each\n",
           p.name, sms, p.l2CacheSize >> 20);
    auto time_it = [&](auto launch) {
        std::vector<float> t;
        for (int r = 0; r < 44; ++r) {
            flush_read<<<sms * 4, 512>>>(f, fl_n, out);
            cudaEventRecord(e0);
            launch();
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (r >= 3) t.push_back(ms * 1000.f);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    };
    printf("empty kernel: %.2f us\n", time_it([&] { empty_kernel<<<1, 32>>>(); }));
    const variant vs[] = {
        {"stride cs U2", rd_stride<2, 0>, 0, 2, 0}, {"stride cs U4", rd_stride<4, 0>, 0, 4, 0},
        {"stride cs U8", rd_stride<8, 0>, 0, 8, 0}, {"stride l2 U4", rd_stride<4, 1>, 1, 4, 0},
        {"stride l2 U8", rd_stride<8, 1>, 1, 8, 0}, {"stride nc U4", rd_stride<4, 2>, 2, 4, 0},
        {"block cs U2", rd_block<2, 0>, 0, 2, 1},   {"block cs U4", rd_block<4, 0>, 0, 4, 1},
        {"block cs U8", rd_block<8, 0>, 0, 8, 1},   {"block l2 U4", rd_block<4, 1>, 1, 4, 1},
        {"block l2 U8", rd_block<8, 1>, 1, 8, 1},
    };
    const int threads[] = {128, 256, 512};
    const int bps[] = {1, 2, 4, 8};
    for (long long bytes : sizes) {
        const long long n = bytes / 16;
        const double floor_us = bytes / 3.0e6;
        printf("\n== %.1f MB, floor %.1f us\n", bytes / 1e6, floor_us);
        float best = 1e30f;
        char bestname[128] = "";
        for (const variant &v : vs)
            for (int th : threads)
                for (int b : bps) {
                    if (th * b > 2048) continue;
                    const int grid = sms * b;
                    float us = time_it([&] { v.k<<<grid, th>>>(w, n, out); });
                    if (cudaGetLastError() != cudaSuccess) { printf("launch failed\n"); return 1; }
                    printf("%-14s %3d threads x %2d blocks/SM: %8.2f us  %.2f TB/s  %.2f x floor\n",
                           v.name, th, b, us, bytes / (us * 1e6), us / floor_us);
                    if (us < best) { best = us; snprintf(bestname, sizeof bestname, "%s %d x %d", v.name, th, b); }
                }
        printf("BEST %.1f MB: %s %.2f us = %.2f x floor (%.2f TB/s)\n", bytes / 1e6, bestname, best,
               best / floor_us, bytes / (best * 1e6));
    }

    // GEMV_WALK on 4096 x 4096 and 14336 x 4096 bf16 weights, checked against the host.
    const gv_variant gvs[] = {
        {"walk T128 R1", gv_walk<128, 1>, 128}, {"walk T128 R2", gv_walk<128, 2>, 128},
        {"walk T256 R1", gv_walk<256, 1>, 256}, {"walk T256 R2", gv_walk<256, 2>, 256},
        {"walk T512 R1", gv_walk<512, 1>, 512}, {"walk T512 R2", gv_walk<512, 2>, 512},
    };
    for (long long L : {4096LL, 14336LL}) {
        const long long nw = L * GV_K, bytes = nw * 2;
        const double floor_us = bytes / 3.0e6;
        __nv_bfloat16 *wb = reinterpret_cast<__nv_bfloat16 *>(w);
        fill_bf16<<<1024, 256>>>(wb, nw, 7u);
        std::vector<float> hx(GV_K);
        for (int k = 0; k < GV_K; ++k) hx[k] = (float)((k * 37 % 101) - 50) / 50.0f + 0.013f;
        float *dx, *dy;
        CK(cudaMalloc(&dx, GV_K * 4));
        CK(cudaMalloc(&dy, L * 4));
        CK(cudaMemcpy(dx, hx.data(), GV_K * 4, cudaMemcpyHostToDevice));
        std::vector<__nv_bfloat16> hw(nw);
        CK(cudaMemcpy(hw.data(), wb, bytes, cudaMemcpyDeviceToHost));
        std::vector<double> ref(L);
        for (long long l = 0; l < L; ++l) {
            double a = 0;
            for (int k = 0; k < GV_K; ++k) a += (double)__bfloat162float(hw[l * GV_K + k]) * hx[k];
            ref[l] = a;
        }
        printf("\n== GEMV_WALK %lld x %d bf16, %.1f MB, floor %.1f us\n", L, GV_K, bytes / 1e6, floor_us);
        float best = 1e30f;
        char bestname[128] = "";
        for (const gv_variant &v : gvs)
            for (int b : bps) {
                if (v.t * b > 2048) continue;
                CK(cudaMemset(dy, 0xff, L * 4));
                v.k<<<sms * b, v.t>>>(reinterpret_cast<const uint4 *>(w), dx, L, dy);
                CK(cudaDeviceSynchronize());
                std::vector<float> hy(L);
                CK(cudaMemcpy(hy.data(), dy, L * 4, cudaMemcpyDeviceToHost));
                double err = 0;
                for (long long l = 0; l < L; ++l) err = std::max(err, std::fabs(hy[l] - ref[l]) / (1.0 + std::fabs(ref[l])));
                const bool ok = err < 1e-4;
                float us = time_it([&] { v.k<<<sms * b, v.t>>>(reinterpret_cast<const uint4 *>(w), dx, L, dy); });
                printf("%-14s %2d blocks/SM: %8.2f us  %.2f TB/s  %.2f x floor  %s (max rel err %.1e)\n", v.name, b,
                       us, bytes / (us * 1e6), us / floor_us, ok ? "ok" : "WRONG", err);
                if (ok && us < best) { best = us; snprintf(bestname, sizeof bestname, "%s x %d", v.name, b); }
            }
        printf("BEST GEMV_WALK %lld: %s %.2f us = %.2f x floor\n", L, bestname, best, best / floor_us);
        CK(cudaFree(dx));
        CK(cudaFree(dy));
    }
    return 0;
}
