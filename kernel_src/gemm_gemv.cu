// gemm_gemv.cu: the GEMV family (GT_FAM 4), for GEMMs bound by the bytes they read: one of M
// and N small (a decode step's tokens against a weight matrix, a row vector), or a tiny
// output with a huge K. Every data type, every op pair, FMA arithmetic in the compute type
// (f32 for the 16-bit types, tf32 and f32_3xtf32: exact fp32 products).
//
// The problem as this family sees it: a long side L (M or N) and a small side S (the other,
// at most BS), so that C (L x S, or its transpose) = W (L x K) times X (K x S):
//   LM (BM >= BN): L = M, W = op(A), X = op(B), C[l + s ldc];
//   else:          L = N, W = op(B)^T, X = op(A)^T, C[s + l ldc].
// W is the large operand and is read once, with a streaming hint, in chunks of 16 bytes (WV
// elements) along its contiguous dimension: one 16-byte load where W's pointer and leading
// dimension are 16-byte aligned (checked at run time: a key's alignment class may be
// narrower only because of the small operand, e.g. a row vector's leading dimension of
// 1), else loads of VEC elements, the class's width. X is small and read through L1.
// Parameters (tuner/kcfg.c's table, which states the legal values):
//   BM x BN   the block's tile of C: BL rows of L, and BS >= S on the small side;
//   WM x WN   the warp's: WL rows of L (the small side whole: WS = BS);
//   TM        vector steps each lane has in flight per row (UNROLL);
//   TN        warps along K in a block (KWARPS), their sums added through shared memory;
//   VEC       the alignment class's width: W's loads where it is not 16-byte aligned;
//   TCORE     1: DOT on tensor cores (below), 16-bit inputs, sm_80 and later;
//   SPLIT     blocks along K, reduced in order in the workspace (common.cuh's splitk_reduce);
//   BK = 64   the unit K is split in; STAGES and RASTER take their first values, unused.
// Two layouts, by which dimension of W is contiguous (a property of the key):
//   DOT (W contiguous along K): a warp owns WL rows; its lanes, and the block's KWARPS
//     warps, take interleaved vectors along K; each lane keeps WL x BS sums, then the warp
//     adds its lanes' (a butterfly).
//   AXPY (W contiguous along L): WL = 32 WV, each lane owns WV consecutive rows, LWARPS
//     warps side by side along L (one contiguous stretch of BL rows per k); the KWARPS
//     warps of each take k = kw, kw + KWARPS, ...; each lane keeps WV x BS sums.
//   TCORE (DOT only): each warp's 16 rows are the A operand of mma.sync m16n8k16 (row major,
//     as W is stored) and X's columns the B operand, in 1 or 2 tiles of 8. A lane loads 16
//     bytes (8 consecutive k) of rows g and g + 8 (g = lane / 4) and of X's column g, and
//     feeds them to two instructions as the k that its fragment positions stand for
//     (2t, 2t + 1, 2t + 8, 2t + 9 with t = lane % 4): a renaming of k that A and B share,
//     so every product is the right one, and each 16-byte load is whole.
// Every sum is taken in an order fixed by the configuration, so results are
// deterministic: the lanes' and warps' partials in index order, the splits in split order.
// Shared memory (dynamic, GT_SMEM_CHECK): KWARPS x BL x BS partial sums of the compute type.
#include "common.cuh"

using namespace gt;

namespace {

constexpr bool LM = BM >= BN;
constexpr int BL = LM ? BM : BN, BS = LM ? BN : BM, WL = LM ? WM : WN;
constexpr int UNROLL = TM, KWARPS = TN, LWARPS = BL / WL;
constexpr int NTG = 32 * LWARPS * KWARPS;
constexpr int NOUT = BL * BS, NACC = (NOUT + NTG - 1) / NTG;
constexpr int WV = 16 / (int)sizeof(TI);  // elements of a 16-byte chunk
#ifndef GT_TCORE
#define GT_TCORE 0
#endif
constexpr bool TCORE = GT_TCORE != 0;
constexpr int NT8 = BS >= 8 ? BS / 8 : 1;  // TCORE: tiles of 8 columns of the small side
// W[l][k] and X[k][s] as stored: contiguous along K or not.
constexpr bool W_KCONTIG = LM ? TA : !TB;
constexpr bool X_KCONTIG = LM ? !TB : TA;

static_assert((LM ? WN : WM) == BS, "a warp covers the small side whole");
static_assert(BL % WL == 0, "warp rows divide the block's");
static_assert(W_KCONTIG || WL == 32 * WV, "AXPY: a warp of WV rows a lane");
static_assert(VEC <= WV && WV % VEC == 0, "the class's vectors divide a 16-byte chunk");
static_assert(!TCORE || (W_KCONTIG && sizeof(TI) == 2 && WL == 16 && (BS == 8 || BS == 16)),
              "TCORE: DOT, 16-bit inputs, warps of 16 rows, 8 or 16 columns");
static_assert(BK == 64, "K is split in units of 64");
#ifdef GT_SMEM_CHECK
static_assert(GT_SMEM_CHECK == KWARPS * NOUT * (int)sizeof(T), "GEMV shared memory differs from tuner/kcfg.c's");
#endif

__device__ __forceinline__ T cv(TI x) {
    if constexpr (sizeof(T) == 8) return to_f64(x);
    else return to_f32(x);
}

// One element through the read-only path (a template on E, so only its type's branch is
// compiled: the 16-bit types are tag structs).
template <class E> __device__ __forceinline__ T ld_one(const E *p) {
    if constexpr (sizeof(E) == 2) {
        E e;
        e.x = __ldg(reinterpret_cast<const unsigned short *>(p));
        return cv(e);
    } else {
        return cv(__ldg(p));
    }
}

// V consecutive elements of W from p (aligned to V elements), streamed: W is read once.
template <int V> __device__ __forceinline__ void ld_w(const TI *p, T *r) {
    constexpr int BYTES = V * (int)sizeof(TI);
    if constexpr (BYTES == 16) {
        const uint4 u = __ldcs(reinterpret_cast<const uint4 *>(p));
        const TI *e = reinterpret_cast<const TI *>(&u);
#pragma unroll
        for (int q = 0; q < V; ++q) r[q] = cv(e[q]);
    } else if constexpr (BYTES == 8) {
        const uint2 u = __ldcs(reinterpret_cast<const uint2 *>(p));
        const TI *e = reinterpret_cast<const TI *>(&u);
#pragma unroll
        for (int q = 0; q < V; ++q) r[q] = cv(e[q]);
    } else if constexpr (BYTES == 4 && V > 1) {
        const unsigned u = __ldcs(reinterpret_cast<const unsigned *>(p));
        const TI *e = reinterpret_cast<const TI *>(&u);
#pragma unroll
        for (int q = 0; q < V; ++q) r[q] = cv(e[q]);
    } else {
#pragma unroll
        for (int q = 0; q < V; ++q) r[q] = cv(p[q]);
    }
}

// One 16-byte chunk of W at p (aligned to WV elements within W): one load when WIDE (W is
// 16-byte aligned), else WV / VEC loads of the class's width. A compile-time choice, so that
// a loop's loads issue back to back with no branch between them.
template <bool WIDE> __device__ __forceinline__ void ld_chunk(const TI *p, T *r) {
    if constexpr (WIDE || VEC == WV) {
        ld_w<WV>(p, r);
    } else {
#pragma unroll
        for (int j = 0; j < WV; j += VEC) ld_w<VEC>(p + j, r + j);
    }
}

// TCORE: 16 bytes (8 elements) of W at p as four 32-bit words, in one load when WIDE, else
// in pieces of the class's width.
template <bool WIDE> __device__ __forceinline__ uint4 ld_raw16(const TI *p) {
    if constexpr (WIDE || VEC == WV) {
        return __ldcs(reinterpret_cast<const uint4 *>(p));
    } else {
        uint4 u;
        TI *e = reinterpret_cast<TI *>(&u);
#pragma unroll
        for (int q = 0; q < WV; ++q) e[q] = p[q];
        return u;
    }
}

// TCORE: d += a b, m16n8k16 with f32 accumulators (the 16-bit type of TI).
__device__ __forceinline__ void mma16816(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                         unsigned a3, unsigned b0, unsigned b1) {
#if __CUDA_ARCH__ >= 800
#if GT_DT == 3 || GT_DT == 4
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
#endif
}

// V consecutive elements of X along K at k (a multiple of V): where X is contiguous along
// K, in loads of VEC elements (X keeps the class's alignment), else one by one.
template <int V>
__device__ __forceinline__ void ld_x(const TI *X, long long ldx, long long k, long long s, T (&r)[V]) {
    if constexpr (X_KCONTIG) {
        const TI *p = X + s * ldx + k;
        constexpr int BYTES = VEC * (int)sizeof(TI);
#pragma unroll
        for (int j = 0; j < V; j += VEC) {
            if constexpr (BYTES == 16) {
                const uint4 u = __ldg(reinterpret_cast<const uint4 *>(p + j));
                const TI *e = reinterpret_cast<const TI *>(&u);
#pragma unroll
                for (int q = 0; q < VEC; ++q) r[j + q] = cv(e[q]);
            } else if constexpr (BYTES == 8) {
                const uint2 u = __ldg(reinterpret_cast<const uint2 *>(p + j));
                const TI *e = reinterpret_cast<const TI *>(&u);
#pragma unroll
                for (int q = 0; q < VEC; ++q) r[j + q] = cv(e[q]);
            } else {
#pragma unroll
                for (int q = 0; q < VEC; ++q) r[j + q] = ld_one(p + j + q);
            }
        }
    } else {
#pragma unroll
        for (int q = 0; q < V; ++q) r[q] = ld_one(X + s + (k + q) * ldx);
    }
}

// The output index of row li of the tile and column s: the dimension C stores contiguously
// runs fastest, so the block's stores coalesce.
__device__ __forceinline__ int out_index(int li, int s) { return LM ? s * BL + li : li * BS + s; }

// C = alpha v + beta C at p (a template, so that only the compute type's branch is compiled).
template <class P> __device__ __forceinline__ void store_one(P *p, T v, T alpha, T beta) {
    if constexpr (sizeof(T) == 8) store_c<1>(p, &v, alpha, beta);
    else store_acc<1>(p, &v, alpha, beta);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(NTG, GT_MINB)
    gt_gemm(const TI *__restrict__ A, long long lda, const TI *__restrict__ B, long long ldb,
            TC *__restrict__ C, long long ldc, T alpha, T beta, T *ws, long long gt_m,
            long long gt_n, long long gt_k) {
    const shape sh(gt_m, gt_n, gt_k);
    const long long L = LM ? sh.M : sh.N, S = LM ? sh.N : sh.M, K = sh.K;
    const TI *__restrict__ W = LM ? A : B;
    const TI *__restrict__ X = LM ? B : A;
    const long long ldw = LM ? lda : ldb, ldx = LM ? ldb : lda;
    extern __shared__ __align__(16) unsigned char smem[];
    T *red = reinterpret_cast<T *>(smem);  // [KWARPS][NOUT]

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int tile = blockIdx.x, z = blockIdx.y;
    const long long l0 = (long long)tile * BL;
    // This block's part of K: whole units of BK, the last split taking what is left.
    const long long kb = (long long)z * sh.KPS * BK;
    const long long ke = kb + (long long)sh.KPS * BK < K ? kb + (long long)sh.KPS * BK : K;
    // 16-byte loads of W where its pointer and leading dimension allow them.
    const bool wide = VEC == WV || ((reinterpret_cast<unsigned long long>(W) | (unsigned long long)ldw *
                                     sizeof(TI)) % 16 == 0);

    if constexpr (TCORE) {
        // ---- DOT on tensor cores ----
        const int lw = warp % LWARPS, kw = warp / LWARPS, g = lane / 4, t = lane % 4;
        float acc[NT8][4];
#pragma unroll
        for (int j = 0; j < NT8; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[j][q] = 0.f;
        // Rows g and g + 8 of the warp's 16 (past L: row L - 1, never stored).
        const long long r0 = l0 + lw * 16 + g, r1 = r0 + 8;
        const TI *w0 = W + (r0 < L ? r0 : L - 1) * ldw, *w1 = W + (r1 < L ? r1 : L - 1) * ldw;
        // X's columns g and 8 + g (past S: zeros).
        auto x_words = [&](long long k, int j) -> uint4 {
            const long long s = 8 * j + g;
            uint4 u = make_uint4(0u, 0u, 0u, 0u);
            if (s < S) {
                if constexpr (X_KCONTIG && VEC == WV) {
                    u = __ldg(reinterpret_cast<const uint4 *>(X + s * ldx + k));
                } else {
                    TI *e = reinterpret_cast<TI *>(&u);
#pragma unroll
                    for (int q = 0; q < WV; ++q) e[q] = X_KCONTIG ? X[s * ldx + k + q] : X[s + (k + q) * ldx];
                }
            }
            return u;
        };
        auto mma_step = [&](long long k, uint4 a, uint4 b) {
#pragma unroll
            for (int j = 0; j < NT8; ++j) {
                const uint4 x = x_words(k, j);
                mma16816(acc[j], a.x, b.x, a.y, b.y, x.x, x.y);
                mma16816(acc[j], a.z, b.z, a.w, b.w, x.z, x.w);
            }
        };
        // A warp takes windows of 32 k (its 4 lanes of a row, 8 each), the block's KWARPS
        // warps side by side; the loops run on the window's start, the same in every lane,
        // because mma.sync needs the whole warp.
        constexpr int STEP = 32 * KWARPS;
        const long long kw0 = kb + (long long)kw * 32, lk = (long long)t * WV;
        // A chunk at K's end, zero-filled past it.
        auto edge = [&](long long k, const TI *w) -> uint4 {
            uint4 u = make_uint4(0u, 0u, 0u, 0u);
            TI *e = reinterpret_cast<TI *>(&u);
            for (int q = 0; q < WV && k + q < ke; ++q) e[q] = w[k + q];
            return u;
        };
        auto steps = [&](auto wide_c) {
            constexpr bool WIDE = decltype(wide_c)::value != 0;
            long long kk = kw0;
            for (; kk + (UNROLL - 1) * STEP + 32 <= ke; kk += UNROLL * STEP) {
                uint4 a[UNROLL], b[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    a[u] = ld_raw16<WIDE>(w0 + kk + u * STEP + lk);
                    b[u] = ld_raw16<WIDE>(w1 + kk + u * STEP + lk);
                }
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) mma_step(kk + u * STEP + lk, a[u], b[u]);
            }
            // The rest of K, a window at a time: a lane's chunk whole, or cut at K's end
            // (zero-filled past it); the instructions outside the branches, so that the
            // warp issues them together.
            for (; kk < ke; kk += STEP) {
                const long long k = kk + lk;
                const bool whole = k + WV <= ke;
                uint4 a, b;
                if (whole) a = ld_raw16<WIDE>(w0 + k), b = ld_raw16<WIDE>(w1 + k);
                else a = edge(k, w0), b = edge(k, w1);
#pragma unroll
                for (int j = 0; j < NT8; ++j) {
                    uint4 x;
                    if (whole) {
                        x = x_words(k, j);
                    } else {
                        const long long s = 8 * j + g;
                        x = make_uint4(0u, 0u, 0u, 0u);
                        TI *ex = reinterpret_cast<TI *>(&x);
                        if (s < S)
                            for (int q = 0; q < WV && k + q < ke; ++q)
                                ex[q] = X_KCONTIG ? X[s * ldx + k + q] : X[s + (k + q) * ldx];
                    }
                    mma16816(acc[j], a.x, b.x, a.y, b.y, x.x, x.y);
                    mma16816(acc[j], a.z, b.z, a.w, b.w, x.z, x.w);
                }
            }
        };
        if (wide) steps(ic<1>());
        else steps(ic<0>());
        // The accumulators: rows g (d0, d1) and g + 8 (d2, d3), columns 8 j + 2 t and + 1.
#pragma unroll
        for (int j = 0; j < NT8; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q)
                red[kw * NOUT + out_index(lw * 16 + g + (q >= 2 ? 8 : 0), 8 * j + 2 * t + (q & 1))] = acc[j][q];
    } else if constexpr (W_KCONTIG) {
        // ---- DOT ----
        const int lw = warp % LWARPS, kw = warp / LWARPS;
        T acc[WL][BS];
#pragma unroll
        for (int r = 0; r < WL; ++r)
#pragma unroll
            for (int s = 0; s < BS; ++s) acc[r][s] = T(0);
        // Rows past L read row L - 1 (their sums are never stored).
        const TI *wrow[WL];
#pragma unroll
        for (int r = 0; r < WL; ++r) {
            const long long l = l0 + lw * WL + r;
            wrow[r] = W + (l < L ? l : L - 1) * ldw;
        }
        auto fma_step = [&](long long k, const T (&w)[WL][WV]) {
#pragma unroll
            for (int s = 0; s < BS; ++s) {
                T x[WV];
                if (s < S) ld_x<WV>(X, ldx, k, s, x);
                else
#pragma unroll
                    for (int q = 0; q < WV; ++q) x[q] = T(0);
#pragma unroll
                for (int r = 0; r < WL; ++r)
#pragma unroll
                    for (int q = 0; q < WV; ++q) acc[r][s] += w[r][q] * x[q];
            }
        };
        constexpr int STEP = 32 * KWARPS * WV;  // K the block covers per vector step
        const long long k0 = kb + (long long)(kw * 32 + lane) * WV;
        // UNROLL vector steps with their loads in flight together, then one at a time.
        auto steps = [&](auto wide_c) {
            constexpr bool WIDE = decltype(wide_c)::value != 0;
            long long k = k0;
            for (; k + (UNROLL - 1) * STEP + WV <= ke; k += UNROLL * STEP) {
                T w[UNROLL][WL][WV];
#pragma unroll
                for (int u = 0; u < UNROLL; ++u)
#pragma unroll
                    for (int r = 0; r < WL; ++r) ld_chunk<WIDE>(wrow[r] + k + u * STEP, w[u][r]);
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) fma_step(k + u * STEP, w[u]);
            }
            for (; k + WV <= ke; k += STEP) {
                T w[WL][WV];
#pragma unroll
                for (int r = 0; r < WL; ++r) ld_chunk<WIDE>(wrow[r] + k, w[r]);
                fma_step(k, w);
            }
        };
        if (wide) steps(ic<1>());
        else steps(ic<0>());
        {
            // The last (ke - kb) % WV elements, one per thread of the first few.
            const long long kt = kb + (ke - kb) / WV * WV;
            const long long kk = kt + kw * 32 + lane;
            if (kk < ke) {
#pragma unroll
                for (int s = 0; s < BS; ++s) {
                    const T x = s < S ? cv(X_KCONTIG ? X[s * ldx + kk] : X[s + kk * ldx]) : T(0);
#pragma unroll
                    for (int r = 0; r < WL; ++r) acc[r][s] += cv(wrow[r][kk]) * x;
                }
            }
        }
        // The warp's sums (every lane gets them), then one lane per sum stores it.
#pragma unroll
        for (int r = 0; r < WL; ++r)
#pragma unroll
            for (int s = 0; s < BS; ++s) {
#pragma unroll
                for (int o = 16; o > 0; o /= 2) acc[r][s] += __shfl_xor_sync(0xffffffffu, acc[r][s], o);
                if ((r * BS + s) % 32 == lane) red[kw * NOUT + out_index(lw * WL + r, s)] = acc[r][s];
            }
    } else {
        // ---- AXPY ----
        const int lw = warp % LWARPS, kw = warp / LWARPS;
        const long long l = l0 + (long long)lw * WL + (long long)lane * WV;
        const bool whole = l + WV <= L;
        T acc[WV][BS];
#pragma unroll
        for (int q = 0; q < WV; ++q)
#pragma unroll
            for (int s = 0; s < BS; ++s) acc[q][s] = T(0);
        // MODE 2: 16-byte loads; 1: the class's width; 0: the rows at L's edge one by one.
        auto load = [&](auto mode_c, long long k, T (&w)[WV]) {
            constexpr int MODE = decltype(mode_c)::value;
            const TI *p = W + l + k * ldw;
            if constexpr (MODE > 0) {
                ld_chunk<MODE == 2>(p, w);
            } else {
#pragma unroll
                for (int q = 0; q < WV; ++q) w[q] = l + q < L ? cv(p[q]) : T(0);
            }
        };
        auto fma_step = [&](long long k, const T (&w)[WV]) {
#pragma unroll
            for (int s = 0; s < BS; ++s) {
                const T x = s < S ? ld_one(X_KCONTIG ? X + s * ldx + k : X + s + k * ldx) : T(0);
#pragma unroll
                for (int q = 0; q < WV; ++q) acc[q][s] += w[q] * x;
            }
        };
        auto steps = [&](auto mode_c) {
            long long k = kb + kw;
            for (; k + (UNROLL - 1) * KWARPS < ke; k += UNROLL * KWARPS) {
                T w[UNROLL][WV];
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) load(mode_c, k + u * KWARPS, w[u]);
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) fma_step(k + u * KWARPS, w[u]);
            }
            for (; k < ke; k += KWARPS) {
                T w[WV];
                load(mode_c, k, w);
                fma_step(k, w);
            }
        };
        if (whole && wide) steps(ic<2>());
        else if (whole) steps(ic<1>());
        else if (l < L) steps(ic<0>());
#pragma unroll
        for (int q = 0; q < WV; ++q)
#pragma unroll
            for (int s = 0; s < BS; ++s) red[kw * NOUT + out_index(lw * WL + lane * WV + q, s)] = acc[q][s];
    }
    __syncthreads();

    // The warps' partials added in warp order; this thread's outputs are tid + j NTG.
    T v[NACC];
#pragma unroll
    for (int j = 0; j < NACC; ++j) {
        const int e = tid + j * NTG;
        v[j] = T(0);
        if (e < NOUT)
#pragma unroll
            for (int w = 0; w < KWARPS; ++w) v[j] += red[w * NOUT + e];
    }
    if (!splitk_reduce<NACC, NTG, 0>(sh, v, ws, tile, z, tid)) return;
#pragma unroll
    for (int j = 0; j < NACC; ++j) {
        const int e = tid + j * NTG;
        if (e >= NOUT) continue;
        const int li = LM ? e % BL : e / BS, s = LM ? e / BL : e % BS;
        const long long l = l0 + li;
        if (l >= L || s >= S) continue;
        TC *p = LM ? C + l + s * ldc : C + s + l * ldc;
        store_one(p, v[j], alpha, beta);
    }
}
