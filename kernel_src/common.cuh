// common.cuh: what every GEMM kernel family of gemmtune shares, included by each family's
// source (NVRTC is given this file as the header "common.cuh").
//
// Problem and configuration arrive as -D macros; their names, ranges and constraints are
// described once, in the parameter table of tuner/kcfg.c, which also mirrors the derived
// sizes used here (shared memory, workspace, grid):
//   problem: GT_DT (base/key.h's gt_dtype: 0 f32, 1 f64, 2 tf32, 3 f16, 4 f16_f32, 5 bf16,
//            6 bf16_f32, 7 f32_3xtf32) GT_M GT_N GT_K (exact sizes; absent with
//            GT_GENERIC) GT_OPA GT_OPB
//            (0 N, 1 T) GT_BETA0 (beta == 0: C is never read) GT_ALIGN (the alignment
//            class in bytes: every pointer and leading dimension is a multiple of it)
//   config:  GT_BM GT_BN GT_BK (block tile and K step) GT_WM GT_WN (warp tile) GT_TM GT_TN
//            (thread tile, or MMA fragments per warp) GT_STAGES (shared-memory stages)
//            GT_VEC (global vector width in elements) GT_SPLIT (split-K factor)
//            GT_RASTER (tile rows per rasterization group; 1 = plain column order)
//            GT_MINB (minimum resident blocks per SM, for __launch_bounds__)
//            GT_GENERIC (1: a shape-generic kernel, M, N and K its last arguments; 0 or
//            absent: an exact-shape kernel, M, N and K compile-time constants)
//            GT_SMEM_CHECK (the dynamic shared memory the launch gives; each family
//            static_asserts that it matches its layout)
//   library: GT_WS_COUNTERS (split-K tile counters at the start of the workspace)
//            GT_SPLIT_GROUP (splits per group of split-K's reduction: SPLIT for one level)
// The kernel ABI, the same for every family (TI: elements of A and B, TC: of C, T: the
// compute type, of alpha, beta and the split-K partials):
//   gt_gemm(const TI *A, long long lda, const TI *B, long long ldb, TC *C, long long ldc,
//           T alpha, T beta, T *ws, [WGMMA: its three tensor maps,] long long m,
//           long long n, long long k)
//   grid (GM * GN, SPLIT), block NT threads, dynamic shared memory as tuner/kcfg.c says.
//   m, n and k are read only by a generic kernel; an exact one takes them unread, so
//   one launch serves both.
#pragma once

#include "types.cuh"

#ifndef GT_GENERIC
#define GT_GENERIC 0
#endif

namespace gt {

#if GT_DT == 1
typedef double T;
#else
typedef float T;
#endif
// Storage of A and B (TI) and of C (TC), by GT_DT (base/key.h's table).
#if GT_DT == 3 || GT_DT == 4
typedef f16 TI;
#elif GT_DT == 5 || GT_DT == 6
typedef bf16 TI;
#else
typedef T TI;
#endif
#if GT_DT == 3
typedef f16 TC;
#elif GT_DT == 5
typedef bf16 TC;
#else
typedef T TC;
#endif

constexpr bool TA = GT_OPA != 0, TB = GT_OPB != 0, BETA0 = GT_BETA0 != 0;
constexpr int BM = GT_BM, BN = GT_BN, BK = GT_BK, WM = GT_WM, WN = GT_WN, TM = GT_TM,
              TN = GT_TN, STAGES = GT_STAGES, VEC = GT_VEC, SPLIT = GT_SPLIT,
              RASTER = GT_RASTER;
constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, NT = 32 * WARPS_M * WARPS_N;
constexpr int ES = (int)sizeof(T);
// Split-K tile counters at the start of the workspace: tuner/kcfg.c passes its number.
constexpr int WS_COUNTERS = GT_WS_COUNTERS;
// Split-K's reduction adds SPLIT_GROUP partials per group, then SPLIT_GROUPS group sums
// (tuner/kcfg.c, gt_kcfg_split_group, picks the group; SPLIT_GROUPS == 1: one level).
constexpr int SPLIT_GROUP = GT_SPLIT_GROUP, SPLIT_GROUPS = SPLIT / SPLIT_GROUP;

static_assert(BM % WM == 0 && BN % WN == 0, "warp tile must divide block tile");
static_assert(SPLIT % SPLIT_GROUP == 0, "split-K's groups divide the splits");

// ---- the problem's sizes ----

// M, N and K, the tiles of C (GM x GN) and the K steps (KT in all, KPS per split): in an
// exact-shape kernel static constants (every check against them folds away at compile
// time), in a generic one the kernel's arguments. Kernels and helpers read them through
// one `shape` made at the kernel's start, so the same code serves both.
// M_DIV, N_DIV, K_DIV: BM divides M (BN N, BK K), known at compile time; a generic
// kernel assumes they may not and keeps every bounds check.
#if GT_GENERIC
struct shape {
    static constexpr bool M_DIV = false, N_DIV = false, K_DIV = false;
    long long M, N, K;
    int GM, GN, KT, KPS;
    __device__ __forceinline__ shape(long long m, long long n, long long k)
        : M(m), N(n), K(k), GM((int)((m + BM - 1) / BM)), GN((int)((n + BN - 1) / BN)),
          KT((int)((k + BK - 1) / BK)), KPS((KT + SPLIT - 1) / SPLIT) {}
#else
struct shape {
    static constexpr long long M = GT_M, N = GT_N, K = GT_K;
    static constexpr bool M_DIV = M % BM == 0, N_DIV = N % BN == 0, K_DIV = K % BK == 0;
    static constexpr int GM = (int)((M + BM - 1) / BM), GN = (int)((N + BN - 1) / BN);
    static constexpr int KT = (int)((K + BK - 1) / BK);   // K steps of the whole problem
    static constexpr int KPS = (KT + SPLIT - 1) / SPLIT;  // K steps per split
    __device__ __forceinline__ shape(long long, long long, long long) {}
    // A generic kernel's launch checks these per shape (tuner/kcfg.c's constraints).
    static_assert(SPLIT >= 1 && (SPLIT - 1) * KPS < KT, "every split must have K steps");
    static_assert(SPLIT == 1 || GM * GN * (SPLIT_GROUPS > 1 ? 1 + SPLIT_GROUPS : 1) <= WS_COUNTERS,
                  "split-K needs a counter per tile and per group of splits");
#endif
    // A and B as stored: rows (contiguous) x columns.
    __device__ __forceinline__ long long rows_a() const { return TA ? K : M; }
    __device__ __forceinline__ long long cols_a() const { return TA ? M : K; }
    __device__ __forceinline__ long long rows_b() const { return TB ? N : K; }
    __device__ __forceinline__ long long cols_b() const { return TB ? K : N; }
};

template <bool C, class X, class Y> struct pick { typedef X type; };
template <class X, class Y> struct pick<false, X, Y> { typedef Y type; };

// A compile-time int as a type, for generic lambdas (the tensor-core families).
template <int V> struct ic { static constexpr int value = V; };
// Calls f(ic<0>()) or f(ic<1>()): b is a constant after unrolling, so the register buffer
// that f indexes with it is a compile-time index.
template <class F> __device__ __forceinline__ void with_buf(int b, F f) {
    if (b) f(ic<1>());
    else f(ic<0>());
}

// ---- f32_3xtf32 (GT_DT 7): fp32 operands as a high and a low tf32 part ----

// The high part of x is x itself: a tf32 instruction reads the fp32 bits as stored and
// ignores the low 13 mantissa bits (truncation, never rounding up to inf). The low part is
// x - h, exact in fp32, rounded to nearest tf32; zero for inf and NaN, whose high part is
// x itself. a * b is then la hb + ha lb + ha hb (CUTLASS's 3xTF32; la lb, at most 2^-20
// |a b|, is left out). gemm_wgmma.cu and gemm_mma.cu use it.
__device__ __forceinline__ unsigned low_part(unsigned x) {
    const float l = __uint_as_float(x) - __uint_as_float(x & 0xffffe000u);
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(l));
    return (x & 0x7f800000u) == 0x7f800000u ? 0u : r;
}

// ---- vectors of V elements of T ----

// V consecutive elements, moved in pieces of at most 16 bytes (float4, double2).
template <int V> __device__ __forceinline__ void ld_vec(const T *p, T *r) {
    constexpr int P = 16 / ES < V ? 16 / ES : V;  // elements per piece
#pragma unroll
    for (int o = 0; o < V; o += P) {
        if constexpr (P * ES == 16) {
            float4 v = *reinterpret_cast<const float4 *>(p + o);
            const T *e = reinterpret_cast<const T *>(&v);
#pragma unroll
            for (int q = 0; q < P; ++q) r[o + q] = e[q];
        } else if constexpr (P * ES == 8) {
            float2 v = *reinterpret_cast<const float2 *>(p + o);
            const T *e = reinterpret_cast<const T *>(&v);
#pragma unroll
            for (int q = 0; q < P; ++q) r[o + q] = e[q];
        } else {
            r[o] = p[o];
        }
    }
}

template <int V> __device__ __forceinline__ void st_vec(T *p, const T *r) {
    constexpr int P = 16 / ES < V ? 16 / ES : V;
#pragma unroll
    for (int o = 0; o < V; o += P) {
        if constexpr (P * ES == 16) {
            float4 v;
            T *e = reinterpret_cast<T *>(&v);
#pragma unroll
            for (int q = 0; q < P; ++q) e[q] = r[o + q];
            *reinterpret_cast<float4 *>(p + o) = v;
        } else if constexpr (P * ES == 8) {
            float2 v;
            T *e = reinterpret_cast<T *>(&v);
#pragma unroll
            for (int q = 0; q < P; ++q) e[q] = r[o + q];
            *reinterpret_cast<float2 *>(p + o) = v;
        } else {
            p[o] = r[o];
        }
    }
}

// The shared-memory address of a generic pointer into shared memory (ldmatrix, TMA,
// mbarriers, wgmma descriptors).
__device__ __forceinline__ unsigned saddr(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// ---- global -> shared copies: cp.async on sm_80 and later, a plain copy before ----

// Copies BYTES (4, 8 or 16) from global g to shared s, of which only `valid` bytes are
// read; the rest of the destination is zero-filled. g must be a valid address even when
// valid == 0 (callers clamp it to the matrix base).
template <int BYTES, class E> __device__ __forceinline__ void cp_async(E *s, const E *g, int valid) {
#if __CUDA_ARCH__ >= 800
    unsigned sa = saddr(s);
    if constexpr (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(g),
                     "r"(valid));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(sa), "l"(g),
                     "n"(BYTES), "r"(valid));
#else
    constexpr int NE = BYTES / (int)sizeof(E);
#pragma unroll
    for (int q = 0; q < NE; ++q) s[q] = q * (int)sizeof(E) < valid ? g[q] : E{};
#endif
}

__device__ __forceinline__ void cp_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most PENDING committed groups are still in flight.
template <int PENDING> __device__ __forceinline__ void cp_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
#endif
}

// ---- which tile of C a block computes ----

// Block b of the GMX x GN tiles (GMX: GM, or fewer rows of larger units). RASTER == 1:
// column of tiles after column of tiles. Otherwise tiles come in groups of RASTER tile
// rows, each group walked column by column, so that the blocks resident at one time share
// A rows and B columns in L2.
__device__ __forceinline__ void tile_of(int GMX, int GN, int b, int &im, int &in) {
    if (RASTER <= 1 || GMX <= RASTER) {
        im = b % GMX;
        in = b / GMX;
    } else {
        const int per_group = RASTER * GN;
        const int g = b / per_group, first = g * RASTER;
        const int rows = GMX - first < RASTER ? GMX - first : RASTER;
        const int r = b - g * per_group;
        im = first + r % rows;
        in = r / rows;
    }
}

// ---- split-K: deterministic reduction in the library's workspace ----

// Workspace layout (tuner/kcfg.c, gt_kcfg_workspace_bytes and gt_kcfg_split_counters,
// mirrors it): WS_COUNTERS unsigned counters first (tile t's at t; with two levels, group
// g's of tile t at GM * GN + t * SPLIT_GROUPS + g), then partials [tile][split][NACC][P] of
// T. The counters start at zero (the library zeroes the workspace when it allocates it)
// and the block that finds itself last sets its counter back to zero. They sit at a fixed
// place so that plans of different shapes can share one stream's workspace: another
// plan's partials never land on them.
//
// Every block stores its partial sums. One level (SPLIT_GROUPS == 1): the last block of a
// tile to arrive adds all SPLIT partials in split order 0, 1, ... Two levels: the last
// block of each group of SPLIT_GROUP consecutive splits adds the group's partials in
// split order and stores the sum in the group's first slot; the last of those adds the
// group sums in group order. Either way every element is summed in an order fixed by the
// configuration, so the result does not depend on which block came last. The last block
// reads partials one SM at a time while the rest of the GPU may be idle: 32 splits of a
// 128 x 128 f32 tile are 2 MiB, about 20 us on the H100 read by one block, and two levels
// of 8 and 4 read 12 of them (dev/variants.py's `noreduce` measures the cost).
// Returns true for the block that must write the tile (always when SPLIT == 1), with acc
// then holding the full sums.
// Taking part: P threads, this one `tid` among them; BAR 0 is the whole block (P = NT,
// __syncthreads), another BAR a named barrier of the P threads (WGMMA's consumers,
// the producer warpgroup apart). A block may call it again for another tile (WGMMA is
// persistent): the third barrier keeps thread 0 from setting `last` again before every
// thread has read it.
template <int BAR, int P> __device__ __forceinline__ void splitk_sync() {
    if constexpr (BAR == 0) __syncthreads();
    else asm volatile("bar.sync %0, %1;\n" ::"n"(BAR), "n"(P) : "memory");
}

// After this thread's stores: arrives at *count, one of `of` arrivals. True in every
// thread of the last block to arrive (which sets the counter back to zero), whose loads
// then see every arrived block's stores.
// sm_70 and later: one acquire-release atomic by thread 0 after the barrier (release is
// cumulative: it carries the stores the barrier ordered before it; the barrier after it
// carries its acquire to the block's other threads), the pattern of CUTLASS's
// semaphore, instead of a fence in every thread.
// Before sm_70: a fence in every thread on each side of a relaxed atomic.
template <int BAR, int P>
__device__ __forceinline__ bool splitk_arrive(unsigned *count, unsigned of, int tid) {
    __shared__ unsigned last;
#if __CUDA_ARCH__ < 700
    __threadfence();
#endif
    splitk_sync<BAR, P>();
    if (tid == 0) {
#if __CUDA_ARCH__ >= 700
        unsigned arrived;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;\n"
                     : "=r"(arrived)
                     : "l"(count)
                     : "memory");
#else
        const unsigned arrived = atomicAdd(count, 1u);
#endif
        last = arrived == of - 1;
        if (last) *count = 0;  // ready for the next launch
    }
    splitk_sync<BAR, P>();
    const bool mine = last;
    splitk_sync<BAR, P>();
#if __CUDA_ARCH__ < 700
    if (mine) __threadfence();
#endif
    return mine;
}

// Largest divisor of n that is at most d (at least 1).
__host__ __device__ constexpr int divisor_upto(int n, int d) {
    return d <= 1 ? 1 : n % d == 0 ? d : divisor_upto(n, d - 1);
}

// acc = ((0 + p[0]) + p[STRIDE]) + ... + p[(NP - 1) * STRIDE], p's slots NACC x P apart.
// Loads of D slots are in flight together (up to 64 registers' worth), their additions
// still in slot order: a small tile's reduction waits on L2 once per D slots, not per slot.
template <int NACC, int P, int NP, int STRIDE>
__device__ __forceinline__ void splitk_sum(T (&acc)[NACC], const T *part, int tid) {
    constexpr int D = divisor_upto(NP, NACC >= 64 ? 1 : 64 / NACC);
#pragma unroll
    for (int e = 0; e < NACC; ++e) acc[e] = T(0);
#pragma unroll 1
    for (int s0 = 0; s0 < NP; s0 += D) {
        T v[D][NACC];
#pragma unroll
        for (int d = 0; d < D; ++d) {
            const T *ps = part + (long long)(s0 + d) * STRIDE * NACC * P + tid;
#pragma unroll
            for (int e = 0; e < NACC; ++e) v[d][e] = __ldcg(ps + (long long)e * P);
        }
#pragma unroll
        for (int d = 0; d < D; ++d)
#pragma unroll
            for (int e = 0; e < NACC; ++e) acc[e] += v[d][e];
    }
}

template <int NACC, int P = NT, int BAR = 0>
__device__ __forceinline__ bool splitk_reduce(const shape &s, T (&acc)[NACC], T *ws, int tile,
                                              int z, int tid = (int)threadIdx.x) {
    if constexpr (SPLIT == 1) {
        return true;
    } else {
        unsigned *count = reinterpret_cast<unsigned *>(ws);
        T *part = reinterpret_cast<T *>(count + WS_COUNTERS) + (long long)tile * SPLIT * NACC * P;
#pragma unroll
        for (int e = 0; e < NACC; ++e) part[((long long)z * NACC + e) * P + tid] = acc[e];
        if constexpr (SPLIT_GROUPS == 1) {
            // The block's own partial is read back too, so every element is summed as
            // ((0 + p0) + p1) + ... whichever block is last.
            if (!splitk_arrive<BAR, P>(&count[tile], SPLIT, tid)) return false;
            splitk_sum<NACC, P, SPLIT, 1>(acc, part, tid);
        } else {
            const int g = z / SPLIT_GROUP;
            T *first = part + (long long)g * SPLIT_GROUP * NACC * P;
            if (!splitk_arrive<BAR, P>(&count[s.GM * s.GN + tile * SPLIT_GROUPS + g], SPLIT_GROUP, tid))
                return false;
            splitk_sum<NACC, P, SPLIT_GROUP, 1>(acc, first, tid);
            // Each thread overwrites only the elements it has just read.
#pragma unroll
            for (int e = 0; e < NACC; ++e) first[(long long)e * P + tid] = acc[e];
            if (!splitk_arrive<BAR, P>(&count[tile], SPLIT_GROUPS, tid)) return false;
            splitk_sum<NACC, P, SPLIT_GROUPS, SPLIT_GROUP>(acc, part, tid);
        }
        return true;
    }
}

// The workspace's layout (tuner/kcfg.c's gt_kcfg_pack_layout and gt_kcfg_workspace_bytes
// mirror it): WS_COUNTERS split-K tile counters, the split-K partials (splitk_reduce:
// every split of every tile, in T), then the operands' copies (PACK), from WS_COPIES on,
// each 256-byte aligned.
__device__ __forceinline__ long long ws_copies(const shape &s) {
    const long long partials = SPLIT > 1 ? (long long)s.GM * s.GN * SPLIT * BM * BN * ES : 0;
    return (4LL * WS_COUNTERS + partials + 255) / 256 * 256;
}
// A copy's leading dimension: `rows` elements of `es` bytes rounded up to 16 bytes.
__host__ __device__ constexpr long long pack_ld(long long rows, int es) {
    return (rows + 16 / es - 1) / (16 / es) * (16 / es);
}
// Bytes a copy of `cols` columns takes, up to the next copy (256-byte aligned).
__host__ __device__ constexpr long long pack_span(long long ld, long long cols, int es) {
    return (ld * cols * es + 255) / 256 * 256;
}

// One operand's copy into the workspace (PACK: gemm_wgmma.cu and gemm_simt.cu, whose
// gt_pack kernels call it with the layout above): the
// matrix as stored, rows x cols with rows contiguous, to dst with leading dimension ldp,
// a multiple of 16 bytes. One thread per 16 bytes (a grid-stride loop of 256-thread
// blocks along x): the elements down a column read one by one (the source may be aligned
// to an element only), written as one 16-byte store; rows past the matrix's are zeros.
template <class W>
__device__ __forceinline__ void pack_copy(const W *__restrict__ src, long long ld, long long rows,
                                          long long cols, W *__restrict__ dst, long long ldp) {
    constexpr int EPV = 16 / (int)sizeof(W);
    const long long ch = ldp / EPV, units = ch * cols;
    for (long long u = blockIdx.x * 256LL + threadIdx.x; u < units; u += gridDim.x * 256LL) {
        const long long col = u / ch, r0 = (u % ch) * EPV;
        const W *s = src + col * ld + r0;
        alignas(16) W e[EPV];
#pragma unroll
        for (int q = 0; q < EPV; ++q) e[q] = r0 + q < rows ? s[q] : W(0);
        *reinterpret_cast<uint4 *>(dst + col * ldp + r0) = *reinterpret_cast<const uint4 *>(e);
    }
}

// C = alpha * acc + beta * C for V consecutive rows of one column (the caller checks
// bounds).
template <int V> __device__ __forceinline__ void store_c(T *p, const T *acc, T alpha, T beta) {
    T out[V];
    if constexpr (!BETA0) ld_vec<V>(p, out);
#pragma unroll
    for (int q = 0; q < V; ++q) out[q] = BETA0 ? alpha * acc[q] : alpha * acc[q] + beta * out[q];
    st_vec<V>(p, out);
}

// C = alpha * acc + beta * C from f32 accumulators (the tf32, f16 and bf16 families) for N
// consecutive rows of one column (1, or 2 stored as one access), rounded once to C's type.
template <int N>
__device__ __forceinline__ void store_acc(TC *p, const float *acc, float alpha, float beta) {
    constexpr int ESC = (int)sizeof(TC);
    if constexpr (N == 2) {
        float v0 = alpha * acc[0], v1 = alpha * acc[1];
        if constexpr (ESC == 4) {
            if constexpr (!BETA0) {
                const float2 v = *reinterpret_cast<const float2 *>(p);
                v0 += beta * v.x, v1 += beta * v.y;
            }
            *reinterpret_cast<float2 *>(p) = make_float2(v0, v1);
        } else {
            if constexpr (!BETA0) {
                const unsigned v = *reinterpret_cast<const unsigned *>(p);
                const unsigned short h[2] = {(unsigned short)(v & 0xffffu), (unsigned short)(v >> 16)};
                const TC *old = reinterpret_cast<const TC *>(h);
                v0 += beta * to_f32(old[0]), v1 += beta * to_f32(old[1]);
            }
            *reinterpret_cast<unsigned *>(p) = from2<TC>(v0, v1);
        }
    } else {
        p[0] = from<TC>(BETA0 ? alpha * acc[0] : alpha * acc[0] + beta * to_f32(p[0]));
    }
}

// Rows m and m + 1 of one column (col) from acc[0], acc[1]: as one access where C's
// alignment class allows a pair (PAIR), else one by one; at the edge only the rows below
// M. M_EXACT: the caller knows no row lies past M. Accumulators A are f32 (the tf32, f16
// and bf16 families: store_acc) or of the compute type T (DMMA's doubles: store_c).
template <bool M_EXACT, bool PAIR, class A>
__device__ __forceinline__ void store_rows2(const shape &s, TC *__restrict__ col, int m,
                                            const A *acc, A alpha, A beta) {
    const long long M = s.M;
    auto store = [&](int r, auto n) {
        if constexpr (sizeof(A) == 8) store_c<decltype(n)::value>(col + r, acc + (r - m), alpha, beta);
        else store_acc<decltype(n)::value>(col + r, acc + (r - m), alpha, beta);
    };
    if (M_EXACT || m + 1 < M) {
        if constexpr (PAIR) {
            store(m, ic<2>());
        } else {
            store(m, ic<1>());
            store(m + 1, ic<1>());
        }
    } else if (m < M) {
        store(m, ic<1>());
    }
}

}  // namespace gt
