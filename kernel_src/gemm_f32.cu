// gemm_f32.cu: gemmtune's fp32 SIMT GEMM kernel family, version 1 ("simt1").
//
// Compiled only at run time by NVRTC, one program per configuration; every parameter
// arrives as a -D macro. Their names, ranges and constraints are described once, in the
// parameter table of src/kcfg.c; the shared-memory size derived below is mirrored there
// (gt_kcfg_smem_bytes) so that the space can be pruned before anything compiles.
//   problem: GT_M GT_N GT_K (exact sizes), GT_OPA GT_OPB (0 = N, 1 = T), GT_BETA0
//   config:  GT_BM GT_BN (block tile), GT_BK (K step), GT_TM GT_TN (thread tile),
//            GT_VEC (global vector width in floats, allowed by the alignment class)
// Computes C = alpha * op(A) * op(B) + beta * C, column-major, one BM x BN tile of C per
// block, a TM x TN register tile per thread, two shared-memory stages fed through
// registers, so the global loads of step k+1 overlap the arithmetic of step k.
// Where a tile divides the shape, every bounds check folds away at compile time.

namespace {

constexpr int M = GT_M, N = GT_N, K = GT_K;
constexpr bool TA = GT_OPA != 0, TB = GT_OPB != 0, BETA0 = GT_BETA0 != 0;
constexpr int BM = GT_BM, BN = GT_BN, BK = GT_BK, TM = GT_TM, TN = GT_TN, VEC = GT_VEC;
constexpr int TXN = BM / TM, TYN = BN / TN, NT = TXN * TYN;
// Rows (columns) of the thread tile read from shared memory as one vector.
constexpr int RVM = TM % 4 == 0 ? 4 : TM % 2 == 0 ? 2 : 1;
constexpr int RVN = TN % 4 == 0 ? 4 : TN % 2 == 0 ? 2 : 1;
// An operand whose contiguous dimension is k is written into shared memory by columns;
// 4 floats of padding keep rows 16-byte aligned and spread those writes over banks.
constexpr int PADA = TA ? 4 : 0;
constexpr int PADB = TB ? 0 : 4;
constexpr int LDSA = BM + PADA, LDSB = BN + PADB;
constexpr int KT = (K + BK - 1) / BK;
// Blocks along M. The grid is one-dimensional over all GM x GN tiles (column of tiles by
// column of tiles), so that no shape that fits in memory exceeds a grid limit.
constexpr int GM = (M + BM - 1) / BM;
// Width of the epilogue's vector accesses to C.
constexpr int SV = RVM < VEC ? RVM : VEC;

static_assert(BM % TM == 0 && BN % TN == 0, "thread tile must divide block tile");

template <bool C, class X, class Y> struct pick { typedef X type; };
template <class X, class Y> struct pick<false, X, Y> { typedef Y type; };

template <int V> __device__ __forceinline__ void ld_global(const float *p, float *r) {
    if constexpr (V == 4) {
        float4 v = __ldg(reinterpret_cast<const float4 *>(p));
        r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
    } else if constexpr (V == 2) {
        float2 v = __ldg(reinterpret_cast<const float2 *>(p));
        r[0] = v.x; r[1] = v.y;
    } else {
        r[0] = __ldg(p);
    }
}

template <int V> __device__ __forceinline__ void ld_vec(const float *p, float *r) {
    if constexpr (V == 4) {
        float4 v = *reinterpret_cast<const float4 *>(p);
        r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
    } else if constexpr (V == 2) {
        float2 v = *reinterpret_cast<const float2 *>(p);
        r[0] = v.x; r[1] = v.y;
    } else {
        r[0] = *p;
    }
}

template <int V> __device__ __forceinline__ void st_vec(float *p, const float *r) {
    if constexpr (V == 4) *reinterpret_cast<float4 *>(p) = make_float4(r[0], r[1], r[2], r[3]);
    else if constexpr (V == 2) *reinterpret_cast<float2 *>(p) = make_float2(r[0], r[1]);
    else p[0] = r[0];
}

// One operand tile in flight: CONT elements along the operand's contiguous (stored)
// dimension, STR along the other; EC and ES are the global extents of those dimensions.
// TRANS: shared memory is indexed [c][s] (contiguous dimension is k), else [s][c].
template <int CONT, int STR, int EC, int ES, bool TRANS, int LDS> struct Tile {
    static constexpr int VPR = CONT / VEC;       // vectors per stored row of the tile
    static constexpr int PER = CONT * STR / VEC / NT;
    static_assert(CONT % VEC == 0 && (CONT * STR / VEC) % NT == 0, "loader shape");
    float r[PER][VEC];

    __device__ __forceinline__ void load(const float *__restrict__ g, long long ld, int c0,
                                         int s0, int tid) {
#pragma unroll
        for (int l = 0; l < PER; ++l) {
            const int v = tid + l * NT;
            const int c = (v % VPR) * VEC, s = v / VPR;
            const int gc = c0 + c, gs = s0 + s;
            const float *p = g + gc + (long long)gs * ld;
            const bool in_s = (ES % STR == 0) || gs < ES;
            if ((EC % CONT == 0 || gc + VEC <= EC) && in_s) {
                ld_global<VEC>(p, r[l]);
            } else {
#pragma unroll
                for (int q = 0; q < VEC; ++q) r[l][q] = (in_s && gc + q < EC) ? p[q] : 0.0f;
            }
        }
    }

    __device__ __forceinline__ void store(float *sm, int tid) const {
#pragma unroll
        for (int l = 0; l < PER; ++l) {
            const int v = tid + l * NT;
            const int c = (v % VPR) * VEC, s = v / VPR;
            if constexpr (TRANS) {
#pragma unroll
                for (int q = 0; q < VEC; ++q) sm[(c + q) * LDS + s] = r[l][q];
            } else {
                st_vec<VEC>(&sm[s * LDS + c], r[l]);
            }
        }
    }
};

// op(A) tile: BM x BK. Stored A is M x K (N) or K x M (T).
typedef typename pick<TA, Tile<BK, BM, K, M, true, LDSA>, Tile<BM, BK, M, K, false, LDSA>>::type
    TileA;
// op(B) tile: BK x BN. Stored B is K x N (N) or N x K (T).
typedef typename pick<TB, Tile<BN, BK, N, K, false, LDSB>, Tile<BK, BN, K, N, true, LDSB>>::type
    TileB;

} // namespace

extern "C" __global__ void __launch_bounds__(NT)
    gt_gemm_f32(const float *__restrict__ A, long long lda, const float *__restrict__ B,
                long long ldb, float *__restrict__ C, long long ldc, float alpha, float beta) {
    __shared__ __align__(16) float As[2][BK * LDSA];
    __shared__ __align__(16) float Bs[2][BK * LDSB];
    const int tid = threadIdx.x;
    const int m0 = (int)(blockIdx.x % GM) * BM, n0 = (int)(blockIdx.x / GM) * BN;
    const int tx = tid % TXN, ty = tid / TXN;

    TileA ta;
    TileB tb;
    auto load = [&](int k0) {
        if constexpr (TA) ta.load(A, lda, k0, m0, tid); else ta.load(A, lda, m0, k0, tid);
        if constexpr (TB) tb.load(B, ldb, n0, k0, tid); else tb.load(B, ldb, k0, n0, tid);
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    load(0);
    ta.store(As[0], tid);
    tb.store(Bs[0], tid);
    __syncthreads();

    for (int kt = 0; kt < KT; ++kt) {
        const int cur = kt & 1;
        if (kt + 1 < KT) load((kt + 1) * BK);
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i += RVM)
                ld_vec<RVM>(&As[cur][kk * LDSA + (i / RVM) * (TXN * RVM) + tx * RVM], &a[i]);
#pragma unroll
            for (int j = 0; j < TN; j += RVN)
                ld_vec<RVN>(&Bs[cur][kk * LDSB + (j / RVN) * (TYN * RVN) + ty * RVN], &b[j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (kt + 1 < KT) {
            // Safe without a barrier before it: every thread finished reading buffer
            // cur ^ 1 before the barrier that closed the previous step.
            ta.store(As[cur ^ 1], tid);
            tb.store(Bs[cur ^ 1], tid);
        }
        __syncthreads();
    }

    // Epilogue: the thread's rows come in runs of RVM, written SV at a time.
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int col = n0 + (j / RVN) * (TYN * RVN) + ty * RVN + j % RVN;
        if (N % BN != 0 && col >= N) continue;
#pragma unroll
        for (int i = 0; i < TM; i += SV) {
            const int row = m0 + (i / RVM) * (TXN * RVM) + tx * RVM + i % RVM;
            float *p = C + row + (long long)col * ldc;
            float out[SV];
            if (M % BM == 0 || row + SV <= M) {
                if constexpr (!BETA0) ld_vec<SV>(p, out);
#pragma unroll
                for (int q = 0; q < SV; ++q)
                    out[q] = BETA0 ? alpha * acc[i + q][j] : alpha * acc[i + q][j] + beta * out[q];
                st_vec<SV>(p, out);
            } else {
#pragma unroll
                for (int q = 0; q < SV; ++q)
                    if (row + q < M)
                        p[q] = BETA0 ? alpha * acc[i + q][j] : alpha * acc[i + q][j] + beta * p[q];
            }
        }
    }
}
