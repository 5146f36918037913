// stream_exp.cu: experiment (not part of the library): a persistent "streaming" SIMT
// kernel for tall GEMMs with tiny K and N (65536x64x64 in the suite), timed beside
// cublasSgemm/cublasDgemm in one process. B (K x N) stays in shared memory for the whole
// launch; each block walks its M tiles (blockIdx.x, + gridDim.x, ...) with a ring of
// STAGES A tiles in flight by cp.async, so one tile's loads, another's arithmetic and
// another's stores overlap inside one SM (the library's SIMT kernel runs the shape in
// one wave: every block loads, then computes, then stores, in step).
// Build and run (GPU machine): nvcc -O3 -std=c++17 -arch=sm_90 tools/stream_exp.cu -lcublas
//   -o /tmp/stream_exp && /tmp/stream_exp
// Column-major, C = A * B (alpha 1, beta 0), A M x K (lda M), B K x N (ldb K).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

__device__ __forceinline__ void cp16(void *s, const void *g) {
    unsigned sa = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(g));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
template <class T, int V> struct vec;
template <> struct vec<float, 4> { typedef float4 t; };
template <> struct vec<float, 2> { typedef float2 t; };
template <> struct vec<double, 2> { typedef double2 t; };
// d[0..V) = s[0..V), read as one vector (an element at a time into d, so that d's array
// stays in registers).
template <class T, int V> __device__ __forceinline__ void ld_run(const T *s, T *d) {
    const typename vec<T, V>::t v = *reinterpret_cast<const typename vec<T, V>::t *>(s);
    const T *pv = reinterpret_cast<const T *>(&v);
#pragma unroll
    for (int q = 0; q < V; ++q) d[q] = pv[q];
}

// CS: streaming stores (st.global.cs) for C, which no one rereads.
template <class T, int M, int N, int K, int BM, int NT, int TM, int TN, int WARPS_M, int STAGES,
          bool CS>
__global__ void __launch_bounds__(NT) stream_gemm(const T *__restrict__ A, const T *__restrict__ B,
                                                  T *__restrict__ C) {
    constexpr int ES = sizeof(T), V = 16 / ES;  // elements in 16 bytes
    constexpr int WARPS = NT / 32, WARPS_N = WARPS / WARPS_M;
    constexpr int WM = BM / WARPS_M, WN = N / WARPS_N;
    constexpr int LM = WM / TM, LN = WN / TN;
    static_assert(WARPS_M * WARPS_N == WARPS && LM * LN == 32, "lanes");
    constexpr int RVM = TM % V == 0 ? V : 1, RVN = TN % V == 0 ? V : 1;
    constexpr int TILES = M / BM;
    static_assert(M % BM == 0 && BM % V == 0, "exact tiles only in this experiment");
    constexpr int STAGE = K * BM;
    extern __shared__ __align__(16) unsigned char smem[];
    T *Bs = reinterpret_cast<T *>(smem);  // [K][N]
    T *As = Bs + K * N;                   // [STAGES][K][BM]
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;

    auto copy = [&](int tile, int st) {
        constexpr int VPR = BM / V, TOTAL = VPR * K;
        T *s = As + st * STAGE;
        const T *g = A + (long long)tile * BM;
        for (int v = tid; v < TOTAL; v += NT) {
            const int m = (v % VPR) * V, k = v / VPR;
            cp16(&s[k * BM + m], g + m + (long long)k * M);
        }
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        const int tile = blockIdx.x + s * gridDim.x;
        if (tile < TILES) copy(tile, s);
        cp_commit();
    }
    for (int v = tid; v < K * N; v += NT) {
        const int k = v % K, n = v / K;
        Bs[k * N + n] = B[k + (long long)n * K];
    }
    const int wr = (warp % WARPS_M) * WM + (lane % LM) * RVM;
    const int wc = (warp / WARPS_M) * WN + (lane / LM) * RVN;

#pragma unroll 1
    for (int i = 0;; ++i) {
        const int tile = blockIdx.x + i * gridDim.x;
        if (tile >= TILES) break;
        cp_wait<STAGES - 2>();
        __syncthreads();
        const int nt = tile + (STAGES - 1) * gridDim.x;
        if (nt < TILES) copy(nt, (i + STAGES - 1) % STAGES);
        cp_commit();

        const T *as = As + (i % STAGES) * STAGE + wr;
        const T *bs = Bs + wc;
        T acc[TM * TN];
#pragma unroll
        for (int e = 0; e < TM * TN; ++e) acc[e] = T(0);
        // Fragments double-buffered in registers: k + 1's are read while k's multiply.
        T a[2][TM], b[2][TN];
        auto frag = [&](int buf, int k) {
#pragma unroll
            for (int ii = 0; ii < TM; ii += RVM)
                ld_run<T, RVM>(as + k * BM + (ii / RVM) * (LM * RVM), &a[buf][ii]);
#pragma unroll
            for (int jj = 0; jj < TN; jj += RVN)
                ld_run<T, RVN>(bs + k * N + (jj / RVN) * (LN * RVN), &b[buf][jj]);
        };
        frag(0, 0);
#pragma unroll
        for (int k = 0; k < K; ++k) {
            if (k + 1 < K) frag((k + 1) & 1, k + 1);
#pragma unroll
            for (int ii = 0; ii < TM; ++ii)
#pragma unroll
                for (int jj = 0; jj < TN; ++jj)
                    acc[ii * TN + jj] = fma(a[k & 1][ii], b[k & 1][jj], acc[ii * TN + jj]);
        }
        const int m0 = tile * BM;
#pragma unroll
        for (int jj = 0; jj < TN; ++jj) {
            const int col = wc + (jj / RVN) * (LN * RVN) + jj % RVN;
#pragma unroll
            for (int ii = 0; ii < TM; ii += RVM) {
                const int row = m0 + wr + (ii / RVM) * (LM * RVM);
                typename vec<T, RVM>::t v;
                T *pv = reinterpret_cast<T *>(&v);
#pragma unroll
                for (int q = 0; q < RVM; ++q) pv[q] = acc[(ii + q) * TN + jj];
                auto *p = reinterpret_cast<typename vec<T, RVM>::t *>(C + row + (long long)col * M);
                if constexpr (CS) __stcs(p, v);
                else *p = v;
            }
        }
    }
    cp_wait<0>();
}

template <class T> static void ref_check(const std::vector<T> &hA, const std::vector<T> &hB,
                                         const std::vector<T> &hC, int M, int N, int K,
                                         double *err, bool *all_written) {
    double num = 0, den = 0;
    bool ok = true;
    for (int n = 0; n < N; ++n)
        for (int m = 0; m < M; ++m) {
            double s = 0;
            for (int k = 0; k < K; ++k) s += (double)hA[m + (size_t)k * M] * (double)hB[k + (size_t)n * K];
            const double c = hC[m + (size_t)n * M];
            if (!std::isfinite(c)) ok = false;
            num += (c - s) * (c - s), den += s * s;
        }
    *err = std::sqrt(num / den);
    *all_written = ok;
}

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <class F> static float time_us(F launch, int reps = 200) {
    for (int i = 0; i < 10; ++i) launch();
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto &e : ev) CK(cudaEventCreate(&e));
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(ev[2 * i]));
        launch();
        CK(cudaEventRecord(ev[2 * i + 1]));
    }
    CK(cudaEventSynchronize(ev.back()));
    CK(cudaGetLastError());
    std::vector<float> ms(reps);
    for (int i = 0; i < reps; ++i) CK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
    for (auto &e : ev) CK(cudaEventDestroy(e));
    return median(ms) * 1000.f;
}

template <class T> struct problem {
    static constexpr int M = 65536, N = 64, K = 64;
    std::vector<T> hA, hB, hC;
    T *A, *B, *C;
    int sms;
    cublasHandle_t h;
    problem() {
        hA.resize((size_t)M * K), hB.resize((size_t)K * N), hC.resize((size_t)M * N);
        srand(7);
        for (auto &x : hA) x = (T)(rand() / (double)RAND_MAX * 2 - 1);
        for (auto &x : hB) x = (T)(rand() / (double)RAND_MAX * 2 - 1);
        CK(cudaMalloc(&A, hA.size() * sizeof(T)));
        CK(cudaMalloc(&B, hB.size() * sizeof(T)));
        CK(cudaMalloc(&C, hC.size() * sizeof(T)));
        CK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(T), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(B, hB.data(), hB.size() * sizeof(T), cudaMemcpyHostToDevice));
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        cublasCreate(&h);
        cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
    }
    float cublas() {
        const T one = 1, zero = 0;
        return time_us([&] {
            if constexpr (sizeof(T) == 4) cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, M, B, K, &zero, C, M);
            else cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, M, B, K, &zero, C, M);
        });
    }
    template <int BM, int NT, int TM, int TN, int WARPS_M, int STAGES, bool CS>
    void run(const char *name, int bps /* blocks per SM, 0: one block per tile */) {
        char tag[96];
        snprintf(tag, sizeof tag, "%s bps%d", name, bps);
        const char *only = getenv("STREAM_ONLY");
        if (only && !strstr(tag, only)) return;
        auto kern = stream_gemm<T, M, N, K, BM, NT, TM, TN, WARPS_M, STAGES, CS>;
        const size_t smem = (size_t)(K * N + STAGES * K * BM) * sizeof(T);
        if (smem > 227 * 1024) {
            printf("%-34s: shared memory %zu too large\n", name, smem);
            return;
        }
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        int occ = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, NT, smem));
        cudaFuncAttributes fa;
        CK(cudaFuncGetAttributes(&fa, kern));
        if (occ == 0) {
            printf("%-34s bps %d: does not fit\n", name, bps);
            return;
        }
        const int tiles = M / BM;
        int grid = bps == 0 ? tiles : std::min(tiles, sms * std::min(bps, occ));
        CK(cudaMemset(C, 0xff, hC.size() * sizeof(T)));  // NaN poison
        kern<<<grid, NT, smem>>>(A, B, C);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(hC.data(), C, hC.size() * sizeof(T), cudaMemcpyDeviceToHost));
        double err;
        bool written;
        ref_check(hA, hB, hC, M, N, K, &err, &written);
        const bool ok = written && err < (sizeof(T) == 4 ? 1e-5 : 1e-13);
        float us = time_us([&] { kern<<<grid, NT, smem>>>(A, B, C); });
        printf("%-34s bps %d occ %d grid %5d regs %3d smem %6zu: %7.2f us  err %.2e %s\n", name, bps,
               occ, grid, fa.numRegs, smem, us, err, ok ? "ok" : "WRONG");
    }
};

#define RUN(P, BM, NT, TM, TN, WM_, ST, CS, BPS) \
    P.template run<BM, NT, TM, TN, WM_, ST, CS>(#BM "x64 nt" #NT " t" #TM "x" #TN " wm" #WM_ " s" #ST " cs" #CS, BPS)

template <class T> static void suite(const char *dt) {
    problem<T> p;
    printf("=== %s 65536x64x64 NN: cuBLAS %.2f us\n", dt, p.cublas());
    for (int bps : {1, 2, 3, 4, 0}) {
        RUN(p, 128, 256, 8, 4, 4, 2, false, bps);
        RUN(p, 128, 256, 8, 4, 4, 3, false, bps);
        RUN(p, 128, 128, 8, 8, 4, 2, false, bps);
        RUN(p, 128, 128, 8, 8, 4, 3, false, bps);
        RUN(p, 256, 256, 8, 8, 8, 2, false, bps);
        RUN(p, 64, 64, 8, 8, 2, 3, false, bps);
        RUN(p, 64, 128, 8, 4, 2, 3, false, bps);
        RUN(p, 64, 256, 4, 4, 4, 3, false, bps);
    }
    printf("=== %s cuBLAS again %.2f us\n", dt, p.cublas());
}

int main() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("skipped: no CUDA device\n");
        return 0;
    }
    suite<float>("f32");
    if (!getenv("STREAM_F32_ONLY")) suite<double>("f64");
    return 0;
}
