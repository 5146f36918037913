// gemm_simt.cu: gemmtune's SIMT GEMM kernel family ("simt2"), fp32 (FFMA) and fp64 (DFMA).
//
// Compiled only at run time by NVRTC, one program per problem and configuration; the
// macros, the ABI and the shared pieces (cp.async, rasterization, split-K) are described
// in common.cuh, the parameters' ranges and constraints in src/kcfg.c.
//
// One block computes a BM x BN tile of C (or, with split-K, its share of K for that
// tile). Its WARPS_M x WARPS_N warps each own a WM x WN warp tile; the 32 lanes of a warp
// are LM x LN, each owning a TM x TN thread tile (any of 1..8, odd sizes included) whose
// rows come in runs of RVM consecutive rows LM * RVM apart, so a warp reads shared memory
// in whole vectors without bank conflicts and writes C in coalesced runs.
// Shared memory holds STAGES stages of op(A) as [k][m] and op(B) as [k][n], filled by
// cp.async (sm_80 and later; plain copies before) STAGES - 1 steps ahead of the
// arithmetic. An operand whose stored contiguous dimension is k is transposed on the
// way in, element by element, and its rows are padded so that those writes spread over
// banks. Fragments are double-buffered in registers: the A column and B row of step
// kk + 1 are read while step kk is multiplied.
// Every output is one accumulator summed over k in increasing order, the same for every
// configuration without split-K, so they all give bit-identical results.
// Where a tile divides the shape, bounds checks fold away at compile time; the K tail is
// zero-filled by the copies.
#include "common.cuh"

namespace {
using namespace gt;

constexpr int LM = WM / TM, LN = WN / TN;  // lanes along M and N in a warp
static_assert(WM % TM == 0 && WN % TN == 0 && LM * LN == 32, "a warp is LM x LN lanes");
// Rows (columns) of the thread tile that sit next to each other: read as one vector.
constexpr int RVM = TM % 4 == 0 ? 4 : TM % 2 == 0 ? 2 : 1;
constexpr int RVN = TN % 4 == 0 ? 4 : TN % 2 == 0 ? 2 : 1;
// Padding of a transposed operand's rows (16 bytes): keeps rows vector-aligned and
// moves the element-wise writes of consecutive k onto different banks.
constexpr int PAD = 16 / ES;
constexpr int LDSA = BM + (TA ? PAD : 0), LDSB = BN + (TB ? 0 : PAD);
constexpr int STAGE_A = BK * LDSA, STAGE_B = BK * LDSB;
// Width of the epilogue's accesses to C.
constexpr int SV = RVM < VEC ? RVM : VEC;
constexpr int NACC = TM * TN;
#ifdef GT_SMEM_CHECK
static_assert(GT_SMEM_CHECK == STAGES * (STAGE_A + STAGE_B) * ES,
              "the launch's shared-memory size (src/kcfg.c) differs from the kernel's");
#endif

// Copies one operand tile, BK x BX of op(X), into shared memory laid out [k][x].
// XCONT: x is the stored contiguous dimension (A as stored, B transposed); otherwise k is,
// and the tile is transposed element by element. EX: the operand's extent along x.
template <bool XCONT, int BX, long long EX, int LDS>
__device__ __forceinline__ void load_tile(T *s, const T *__restrict__ g, long long ld, int x0,
                                          int k0, int tid) {
    constexpr int TOTAL = BX * BK / VEC;
    static_assert(TOTAL % NT == 0, "every thread copies the same number of vectors");
    if constexpr (XCONT) {
        constexpr int VPR = BX / VEC;
#pragma unroll
        for (int l = 0; l < TOTAL / NT; ++l) {
            const int v = tid + l * NT;
            const int x = (v % VPR) * VEC, k = v / VPR;
            const int gx = x0 + x, gk = k0 + k;
            int valid = VEC;
            if constexpr (EX % BX != 0) {
                const long long left = EX - gx;
                valid = left <= 0 ? 0 : left < VEC ? (int)left : VEC;
            }
            if constexpr (K % BK != 0)
                if (gk >= K) valid = 0;
            const T *p = valid ? g + gx + (long long)gk * ld : g;
            cp_async<VEC * ES>(&s[k * LDS + x], p, valid * ES);
        }
    } else {
        constexpr int VPR = BK / VEC;
#pragma unroll
        for (int l = 0; l < TOTAL / NT; ++l) {
            const int v = tid + l * NT;
            const int k = (v % VPR) * VEC, x = v / VPR;
            const int gx = x0 + x, gk = k0 + k;
            const bool in_x = EX % BX == 0 || gx < EX;
#pragma unroll
            for (int q = 0; q < VEC; ++q) {
                const bool ok = in_x && (K % BK == 0 || gk + q < K);
                cp_async<ES>(&s[(k + q) * LDS + x], ok ? g + gk + q + (long long)gx * ld : g,
                             ok ? ES : 0);
            }
        }
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(NT, GT_MINB)
    gt_gemm(const T *__restrict__ A, long long lda, const T *__restrict__ B, long long ldb,
            T *__restrict__ C, long long ldc, T alpha, T beta, T *ws) {
    extern __shared__ __align__(16) unsigned char smem[];
    T *As = reinterpret_cast<T *>(smem);
    T *Bs = As + STAGES * STAGE_A;

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int im, in;
    tile_of(blockIdx.x, im, in);
    const int m0 = im * BM, n0 = in * BN, z = blockIdx.y;
    const int kt0 = z * KPS, nk = (kt0 + KPS < KT ? KPS : KT - kt0);
    // This thread's first row and column inside the block tile.
    const int wr = (warp % WARPS_M) * WM + (lane % LM) * RVM;
    const int wc = (warp / WARPS_M) * WN + (lane / LM) * RVN;

    auto load_stage = [&](int kt, int st) {
        load_tile<!TA, BM, M, LDSA>(As + st * STAGE_A, A, lda, m0, kt * BK, tid);
        load_tile<TB, BN, N, LDSB>(Bs + st * STAGE_B, B, ldb, n0, kt * BK, tid);
    };

    T acc[NACC];
#pragma unroll
    for (int e = 0; e < NACC; ++e) acc[e] = T(0);

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nk) load_stage(kt0 + s, s);
        cp_commit();
    }

#pragma unroll 1
    for (int it = 0; it < nk; ++it) {
        cp_wait<STAGES - 2>();
        __syncthreads();
        // The stage refilled here was last read in step it - 1, which every thread
        // finished before the barrier above.
        const int next = it + STAGES - 1;
        if (next < nk) load_stage(kt0 + next, next % STAGES);
        cp_commit();

        const T *as = As + (it % STAGES) * STAGE_A + wr;
        const T *bs = Bs + (it % STAGES) * STAGE_B + wc;
        T a[2][TM], b[2][TN];
        auto frag = [&](int buf, int kk) {
#pragma unroll
            for (int i = 0; i < TM; i += RVM) ld_vec<RVM>(as + kk * LDSA + (i / RVM) * (LM * RVM), &a[buf][i]);
#pragma unroll
            for (int j = 0; j < TN; j += RVN) ld_vec<RVN>(bs + kk * LDSB + (j / RVN) * (LN * RVN), &b[buf][j]);
        };
        frag(0, 0);
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            if (kk + 1 < BK) frag((kk + 1) & 1, kk + 1);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i * TN + j] = fma(a[kk & 1][i], b[kk & 1][j], acc[i * TN + j]);
        }
    }
    cp_wait<0>();

    if (!splitk_reduce<NACC>(acc, ws, blockIdx.x, z)) return;

    // Epilogue: the thread's rows come in runs of RVM, written SV at a time.
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int col = n0 + wc + (j / RVN) * (LN * RVN) + j % RVN;
        if (N % BN != 0 && col >= N) continue;
#pragma unroll
        for (int i = 0; i < TM; i += SV) {
            const int row = m0 + wr + (i / RVM) * (LM * RVM) + i % RVM;
            T *p = C + row + (long long)col * ldc;
            T v[SV];
#pragma unroll
            for (int q = 0; q < SV; ++q) v[q] = acc[(i + q) * TN + j];
            if (M % BM == 0 || row + SV <= M) {
                store_c<SV>(p, v, alpha, beta);
            } else {
#pragma unroll
                for (int q = 0; q < SV; ++q)
                    if (row + q < M) store_c<1>(p + q, &v[q], alpha, beta);
            }
        }
    }
}
