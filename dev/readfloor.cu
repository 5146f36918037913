// readfloor.cu: how fast can one kernel launch read a byte-bound GEMM's large operand?
// Issue 26 sets decode steps against bytes / 3.0 TB/s; this times a kernel that only reads
// (and sums, so the loads stay) a buffer of each size, as the bench times a GEMM: CUDA events
// around one launch, L2 emptied before each by reading twice its size of other data, median
// of 41. Variants: loads in flight per thread (U), the load's cache hint (cs: __ldcs as
// gemm_gemv.cu reads W; l2: ld.global.nc.L1::no_allocate.L2::256B, which fetches 256 bytes
// into L2 a request; nc: __ldg), threads per block, blocks per SM, and how a block walks the
// buffer (grid-stride, or one contiguous part per block as GEMV's rows are). Also an empty
// kernel: the events' own cost. Not a test; dev/gpu_dev.sh readfloor builds and runs it.
// Build: nvcc -O3 -arch=sm_90 -o readfloor dev/readfloor.cu
#include <algorithm>
#include <cstdio>
#include <vector>
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
    return 0;
}
