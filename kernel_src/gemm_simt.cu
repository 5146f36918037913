// gemm_simt.cu: gemmtune's SIMT GEMM kernel family ("simt2"), fp32 (FFMA) and fp64 (DFMA).
//
// Compiled only at run time by NVRTC, one program per problem and configuration; the
// macros, the ABI and the shared pieces (cp.async, rasterization, split-K) are described
// in common.cuh, the parameters' ranges and constraints in tuner/kcfg.c.
//
// One block computes a BM x BN tile of C (or, with split-K, its share of K for that
// tile). Its WARPS_M x WARPS_N warps each own a WM x WN warp tile; the 32 lanes of a warp
// are LM x LN, each owning a TM x TN thread tile (any of 1..8, odd sizes included) whose
// rows come in runs of RVM consecutive rows LM * RVM apart, so a warp reads shared memory
// in whole vectors without bank conflicts and writes C in coalesced runs.
// Shared memory holds STAGES stages of op(A) as [k][m] and op(B) as [k][n], filled
// STAGES - 1 steps ahead of the arithmetic: by cp.async (sm_80 and later; plain copies
// before) where the stored contiguous dimension is m or n; through registers, transposed,
// where it is k (staged_tile), with rows padded so that those writes spread over banks.
// Fragments are double-buffered in registers: the A column and B row of step
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
// Padding of a transposed operand's rows (4 elements): keeps rows vector-aligned and
// spreads staged_tile's writes of neighbouring k over the banks (16 bytes of shift per
// row for f32, 32 for f64, as their 16-byte writes need).
constexpr int PAD = 4;
constexpr int LDSA = BM + (TA ? PAD : 0), LDSB = BN + (TB ? 0 : PAD);
constexpr int STAGE_A = BK * LDSA, STAGE_B = BK * LDSB;
// PACK (tuner/kcfg.c's gt_kcfg_simt_packs): 16-byte vectors on a key of a narrower
// alignment class (odd leading dimensions) read A and B from copies that gt_pack makes
// first in the workspace, leading dimensions rounded up to 16 bytes (common.cuh's
// layout; the launch passes the copies as A and B). C is accessed within the class.
constexpr bool PACK = VEC * ES == 16 && GT_ALIGN < 16;
constexpr int CVEC = !PACK ? VEC : GT_ALIGN >= ES ? GT_ALIGN / ES : 1;
// Width of the epilogue's accesses to C.
constexpr int SV = RVM < CVEC ? RVM : CVEC;
constexpr int NACC = TM * TN;
#ifdef GT_SMEM_CHECK
static_assert(GT_SMEM_CHECK == STAGES * (STAGE_A + STAGE_B) * ES,
              "the launch's shared-memory size (tuner/kcfg.c) differs from the kernel's");
#endif

// Copies one operand tile, BK x BX of op(X), whose stored contiguous dimension is x (A as
// stored, B transposed) into shared memory laid out [k][x], by cp.async. XN: x is N (op(B)),
// else M (op(A)); the operand's extents come from sh. EDGE: the tile may reach past the
// operand (the caller knows; interior tiles, most of them, skip the checks and their
// instructions).
template <int BX, bool XN, int LDS, bool EDGE>
__device__ __forceinline__ void copy_tile(T *s, const T *__restrict__ g, long long ld, int x0,
                                          int k0, int tid, const shape &sh) {
    constexpr bool XDIV = XN ? shape::N_DIV : shape::M_DIV;
    constexpr int TOTAL = BX * BK / VEC, VPR = BX / VEC;
    static_assert(TOTAL % NT == 0, "every thread copies the same number of vectors");
#pragma unroll
    for (int l = 0; l < TOTAL / NT; ++l) {
        const int v = tid + l * NT;
        const int x = (v % VPR) * VEC, k = v / VPR;
        const int gx = x0 + x, gk = k0 + k;
        int valid = VEC;
        if constexpr (EDGE && !XDIV) {
            const long long left = (XN ? sh.N : sh.M) - gx;
            valid = left <= 0 ? 0 : left < VEC ? (int)left : VEC;
        }
        if constexpr (EDGE && !shape::K_DIV)
            if (gk >= sh.K) valid = 0;
        const T *p = valid ? g + gx + (long long)gk * ld : g;
        cp_async<VEC * ES>(&s[k * LDS + x], p, valid * ES);
    }
}

// An operand tile whose stored contiguous dimension is k (A transposed, B as stored)
// must be transposed into the [k][x] layout, which cp.async cannot do; element-wise
// copies would cost a 4- or 8-byte request per element. So it passes through registers:
// each thread loads R rows x VEC k (one vector along k per row), and after the
// arithmetic of the current stage writes VEC vectors of R rows along x. R makes the
// shared-memory write 16 bytes where the tile allows.
// Lanes take S consecutive k vectors (one 32-byte sector of a row), then row groups, then
// the rest of k: global reads use whole sectors, and with rows padded by 4 elements each
// quarter warp's writes fall on distinct banks.
template <int BX, bool XN, int LDS> struct staged_tile {
    static constexpr bool XDIV = XN ? shape::N_DIV : shape::M_DIV;
    static constexpr int E = BX * BK / NT;  // elements per thread
    static constexpr int RW = 16 / ES;      // rows in a 16-byte write
    static constexpr int R = (BX % RW == 0 && E % (RW * VEC) == 0) ? RW
                             : (RW >= 2 && BX % 2 == 0 && E % (2 * VEC) == 0) ? 2 : 1;
    static constexpr int KV = BK / VEC;     // vectors along k in a row of the tile
    static constexpr int S0 = 32 / (VEC * ES), S = S0 < KV ? S0 : KV;
    static constexpr int XG = BX / R;       // row groups
    static constexpr int L = XG * KV / NT;  // units (R rows x one k vector) per thread
    static_assert(XG * KV % NT == 0 && KV % S == 0, "every thread stages whole units");
    T r[L * R * VEC];

    __device__ __forceinline__ static void unit(int u, int &xg, int &k) {
        xg = (u / S) % XG;
        k = ((u / (S * XG)) * S + u % S) * VEC;
    }
    // Global -> registers, zeros outside the operand (its extents from sh; checked only on
    // an EDGE tile).
    template <bool EDGE>
    __device__ __forceinline__ void load(const T *__restrict__ g, long long ld, int x0, int k0,
                                         int tid, const shape &sh) {
#pragma unroll
        for (int l = 0; l < L; ++l) {
            int xg, k;
            unit(tid + l * NT, xg, k);
            const int gk = k0 + k;
#pragma unroll
            for (int rr = 0; rr < R; ++rr) {
                const int gx = x0 + xg * R + rr;
                T *d = &r[(l * R + rr) * VEC];
                const T *p = g + gk + (long long)gx * ld;
                const bool in_x = !EDGE || XDIV || gx < (XN ? sh.N : sh.M);
                if (!EDGE || (in_x && (shape::K_DIV || gk + VEC <= sh.K))) {
                    ld_vec<VEC>(p, d);
                } else {
#pragma unroll
                    for (int q = 0; q < VEC; ++q) d[q] = in_x && gk + q < sh.K ? p[q] : T(0);
                }
            }
        }
    }
    // Registers -> shared memory [k][x].
    __device__ __forceinline__ void store(T *s, int tid) const {
#pragma unroll
        for (int l = 0; l < L; ++l) {
            int xg, k;
            unit(tid + l * NT, xg, k);
#pragma unroll
            for (int q = 0; q < VEC; ++q) {
                T v[R];
#pragma unroll
                for (int rr = 0; rr < R; ++rr) v[rr] = r[(l * R + rr) * VEC + q];
                st_vec<R>(&s[(k + q) * LDS + xg * R], v);
            }
        }
    }
};

}  // namespace

extern "C" __global__ void __launch_bounds__(NT, GT_MINB)
    gt_gemm(const T *__restrict__ A, long long lda, const T *__restrict__ B, long long ldb,
            T *__restrict__ C, long long ldc, T alpha, T beta, T *ws, long long gt_m,
            long long gt_n, long long gt_k) {
    const shape sh(gt_m, gt_n, gt_k);
    const long long M = sh.M, N = sh.N, K = sh.K;
    extern __shared__ __align__(16) unsigned char smem[];
    T *As = reinterpret_cast<T *>(smem);
    T *Bs = As + STAGES * STAGE_A;

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int im, in;
    tile_of(sh.GM, sh.GN, blockIdx.x, im, in);
    const int m0 = im * BM, n0 = in * BN, z = blockIdx.y;
    const int kt0 = z * sh.KPS, nk = (kt0 + sh.KPS < sh.KT ? sh.KPS : sh.KT - kt0);
    // This thread's first row and column inside the block tile.
    const int wr = (warp % WARPS_M) * WM + (lane % LM) * RVM;
    const int wc = (warp / WARPS_M) * WN + (lane / LM) * RVN;

    // Operands stored with x contiguous go by cp.async STAGES - 1 steps ahead; those
    // stored with k contiguous are read into registers at the same time and written to
    // shared memory after the step's arithmetic.
    staged_tile<BM, false, LDSA> sa;
    staged_tile<BN, true, LDSB> sb;
    // Only tiles that reach past M, N or K need checked copies.
    const bool a_in = shape::M_DIV || m0 + BM <= M, b_in = shape::N_DIV || n0 + BN <= N;
    auto copy_stage = [&](int kt, int st) {
        const bool k_in = shape::K_DIV || (kt + 1) * BK <= K;
        T *as = As + st * STAGE_A, *bs = Bs + st * STAGE_B;
        if (a_in && k_in) {
            if constexpr (!TA) copy_tile<BM, false, LDSA, false>(as, A, lda, m0, kt * BK, tid, sh);
            else sa.template load<false>(A, lda, m0, kt * BK, tid, sh);
        } else {
            if constexpr (!TA) copy_tile<BM, false, LDSA, true>(as, A, lda, m0, kt * BK, tid, sh);
            else sa.template load<true>(A, lda, m0, kt * BK, tid, sh);
        }
        if (b_in && k_in) {
            if constexpr (TB) copy_tile<BN, true, LDSB, false>(bs, B, ldb, n0, kt * BK, tid, sh);
            else sb.template load<false>(B, ldb, n0, kt * BK, tid, sh);
        } else {
            if constexpr (TB) copy_tile<BN, true, LDSB, true>(bs, B, ldb, n0, kt * BK, tid, sh);
            else sb.template load<true>(B, ldb, n0, kt * BK, tid, sh);
        }
    };
    auto store_stage = [&](int st) {
        if constexpr (TA) sa.store(As + st * STAGE_A, tid);
        if constexpr (!TB) sb.store(Bs + st * STAGE_B, tid);
    };

    T acc[NACC];
#pragma unroll
    for (int e = 0; e < NACC; ++e) acc[e] = T(0);

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nk) {
            copy_stage(kt0 + s, s);
            store_stage(s);
        }
        cp_commit();
    }

#pragma unroll 1
    for (int it = 0; it < nk; ++it) {
        cp_wait<STAGES - 2>();
        __syncthreads();
        // The stage refilled here was last read in step it - 1, which every thread
        // finished before the barrier above; the staged part is written to it after this
        // step's arithmetic, and the barrier of step it + 1 publishes it.
        const int next = it + STAGES - 1;
        if (next < nk) copy_stage(kt0 + next, next % STAGES);
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
        if (next < nk) store_stage(next % STAGES);
    }
    cp_wait<0>();

    if (!splitk_reduce<NACC>(sh, acc, ws, blockIdx.x, z)) return;

    // Epilogue: the thread's rows come in runs of RVM, written SV at a time.
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int col = n0 + wc + (j / RVN) * (LN * RVN) + j % RVN;
        if (!shape::N_DIV && col >= N) continue;
#pragma unroll
        for (int i = 0; i < TM; i += SV) {
            const int row = m0 + wr + (i / RVM) * (LM * RVM) + i % RVM;
            T *p = C + row + (long long)col * ldc;
            T v[SV];
#pragma unroll
            for (int q = 0; q < SV; ++q) v[q] = acc[(i + q) * TN + j];
            if (shape::M_DIV || row + SV <= M) {
                store_c<SV>(p, v, alpha, beta);
            } else {
#pragma unroll
                for (int q = 0; q < SV; ++q)
                    if (row + q < M) store_c<1>(p + q, &v[q], alpha, beta);
            }
        }
    }
}

// The copies (PACK), blockIdx.y 0 for A, 1 for B: common.cuh's pack_copy, as stored.
extern "C" __global__ void __launch_bounds__(256)
    gt_pack(const gt::T *__restrict__ A, long long lda, const gt::T *__restrict__ B,
            long long ldb, unsigned char *ws, long long gt_m, long long gt_n, long long gt_k) {
    using namespace gt;
    typedef typename pick<ES == 8, unsigned long long, unsigned>::type W;
    const shape sh(gt_m, gt_n, gt_k);
    const long long lda_p = pack_ld(sh.rows_a(), ES), ldb_p = pack_ld(sh.rows_b(), ES);
    const long long off_a = ws_copies(sh), off_b = off_a + pack_span(lda_p, sh.cols_a(), ES);
    const bool a = blockIdx.y == 0;
    pack_copy<W>(reinterpret_cast<const W *>(a ? A : B), a ? lda : ldb,
                 a ? sh.rows_a() : sh.rows_b(), a ? sh.cols_a() : sh.cols_b(),
                 reinterpret_cast<W *>(ws + (a ? off_a : off_b)), a ? lda_p : ldb_p);
}
