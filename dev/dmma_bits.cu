// dmma_bits.cu: GPU (sm_90). Does one m16n8k8 f64 MMA give the same bits as two m16n8k4
// over its two halves of k, in order (and as m16n8k16 and four m8n8k4)? Random operands
// of full entropy and mixed magnitude, many trials; prints the number of differing results.
// Build and run: nvcc -arch=sm_90 -o /tmp/dmma_bits dev/dmma_bits.cu && /tmp/dmma_bits
#include <cstdio>
#include <cstdint>
#include <cstring>

__device__ void mma1684(double *d, const double *a, const double *b) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(b[0]));
}
__device__ void mma1688(double *d, const double *a, const double *b) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}

__device__ uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
__device__ double rnd(uint64_t s) {  // (-1, 1) times 2^e, e in [-8, 8]: mixed magnitudes
    uint64_t r = mix(s);
    double v = (double)(r >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
    int e = (int)((r >> 3) % 17) - 8;
    return ldexp(v, e);
}

// Per warp and trial: a 16x8 (rows x k) and 8x8 (k x cols) product into C, both ways.
// m16n8k8's a[v]: (row g + 8 (v % 2), k t + 4 (v / 2)), b[v]: (k t + 4 v, col g).
// The same product as two m16n8k4: k 0..3 then k 4..7, a[v] (row g + 8 v, k t), b (k t, col g).
__global__ void kern(unsigned long long *diff, int trials) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const uint64_t base = (uint64_t)(blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * 1000003ull;
    unsigned long long nd = 0;
    for (int tr = 0; tr < trials; tr++) {
        const uint64_t s = (base + tr) * 7919ull;
        auto A = [&](int r, int k) { return rnd(s * 131 + r * 8 + k); };
        auto B = [&](int k, int c) { return rnd(s * 131 + 1000 + k * 8 + c); };
        double c0[4], c1[4];
        for (int v = 0; v < 4; v++) c0[v] = c1[v] = rnd(s * 131 + 5000 + lane * 4 + v);
        double a8[4] = {A(g, t), A(g + 8, t), A(g, t + 4), A(g + 8, t + 4)};
        double b8[2] = {B(t, g), B(t + 4, g)};
        mma1688(c0, a8, b8);
        double a4lo[2] = {A(g, t), A(g + 8, t)}, b4lo[1] = {B(t, g)};
        double a4hi[2] = {A(g, t + 4), A(g + 8, t + 4)}, b4hi[1] = {B(t + 4, g)};
        mma1684(c1, a4lo, b4lo);
        mma1684(c1, a4hi, b4hi);
        for (int v = 0; v < 4; v++) nd += __double_as_longlong(c0[v]) != __double_as_longlong(c1[v]);
    }
    atomicAdd(diff, nd);
}

int main() {
    unsigned long long *d, h = 0;
    cudaMalloc(&d, sizeof *d);
    cudaMemset(d, 0, sizeof *d);
    const int blocks = 264, warps = 4, trials = 2000;
    kern<<<blocks, 32 * warps>>>(d, trials);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("m16n8k8 against two m16n8k4: %llu of %llu results differ in some bit (%s)\n", h,
           (unsigned long long)blocks * warps * 32 * 4 * trials, cudaGetErrorString(e));
    return e != cudaSuccess;
}
