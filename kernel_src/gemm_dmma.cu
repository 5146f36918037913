// gemm_dmma.cu: gemmtune's fp64 tensor-core GEMM kernel family ("dmma"), sm_80 and later.
//
// Compiled only at run time by NVRTC, one program per configuration; problem and
// configuration arrive as -D macros (common.cuh lists them; tuner/kcfg.c holds their table
// and constraints and mirrors the shared-memory size derived here).
//
// C = alpha * op(A) * op(B) + beta * C, column-major. One BM x BN tile of C per block
// (gt::tile_of), split z = blockIdx.y of SPLIT along K. WARPS_M x WARPS_N warps, each a
// WM x WN warp tile of TM x TN 8x8 fragments, TM = WM / 8, TN = WN / 8.
//
// Tensor-core instruction. The MMA is issued with the operands swapped, D^T = op(B)^T
// op(A)^T: the instruction's "A" (row) operand is an 8-wide slice of op(B)^T (rows = n),
// its "B" (col) operand an 8-wide slice of op(A)^T (cols = m). Then a thread's two
// accumulators of a fragment are two consecutive rows m, m + 1 of one column n of C, so
// the epilogue stores 16-byte vectors of column-major C. Fragment layouts (PTX ISA, mma
// .f64; g = lane / 4, t = lane % 4):
//   m8n8k4:  a: (row g, k t)   b: (k t, col g)   d0, d1: (row g, col 2t), (row g, col 2t+1)
//   m16n8kK (sm_90, K = 4, 8): a[v]: (row g + 8 (v % 2), k t + 4 (v / 2)),
//            b[v]: (k t + 4 v, col g), d[v]: (row g + 8 (v / 2), col 2t + v % 2)
// so an m16n8kK is exactly 2 x K/4 m8n8k4 instructions over fragments n (j, j + 1) and K/4
// consecutive k slices of 4: the same fragment registers feed every shape. The shape (MMA
// below): on sm_90 with TN even one of the wide shapes, m16n8k8 where it fits, else
// m16n8k4 (FITS_K8), which run much faster there than m8n8k4 (SASS DMMA.8x8x4);
// otherwise m8n8k4.
//
// Shared memory: dynamic, STAGES stages, each an A tile then a B tile, kept in the
// operand's global orientation (so 16-byte cp.async copies land unchanged) with 4 doubles
// of padding per row:
//   A: TA ? [BM][BK + 4] (k contiguous) : [BK][BM + 4] (m contiguous)
//   B: TB ? [BK][BN + 4] (n contiguous) : [BN][BK + 4] (k contiguous)
//   bytes = STAGES * 8 * ((TA ? BM * (BK + 4) : BK * (BM + 4)) + (TB ? BK * (BN + 4) : BN * (BK + 4)))
// A fragment load (8-byte LDS, two half-warp wavefronts) reads 4 rows x 4 consecutive
// doubles (k-contiguous tiles) or 4 k-rows x 4 consecutive m (n) (mn-contiguous tiles);
// a row pitch of 4 or 12 (mod 16) doubles puts those 16 doubles on 16 distinct bank
// pairs, so every fragment load is conflict-free for all four op combinations (BK and BM,
// BN are multiples of 4 and 8, so BK + 4, BM + 4 and BN + 4 are 4 or 12 mod 16).
//
// Pipeline: STAGES - 1 K steps in flight through cp.async (zero-fill past M, N, K); one
// __syncthreads per K step. In exact kernels (FRAG_DB below), fragments are
// double-buffered in registers by instruction group: the next group of k slices is read
// from shared memory while the tensor cores work on the current one; 2 * KG * (TM + TN)
// doubles (KG = k slices of 4 per instruction: 1 for m8n8k4 and m16n8k4, 2 for m16n8k8).
// Generic kernels read each group just before its instructions (FRAG_DB below says why;
// COVER_FIRST says what the last group of a step waits for).
// In an exact-shape kernel, where a tile divides the problem, every bounds check folds at
// compile time; a generic kernel (GT_GENERIC) keeps them all and reads M, N and K from its
// arguments.
#include "common.cuh"

static_assert(GT_DT == 1, "gemm_dmma is the fp64 family: GT_DT must be 1");

#ifndef GT_MINB
#define GT_MINB 1
#endif

namespace gt {
namespace dmma {

// ---- configuration ----

static_assert(TM * 8 == WM && TN * 8 == WN, "TM = WM / 8 and TN = WN / 8");
static_assert(BK % 4 == 0 && BK >= 4, "BK must be a multiple of 4");
static_assert(STAGES >= 2, "at least two shared-memory stages");
static_assert(VEC == 1 || VEC == 2, "VEC is 1 or 2 doubles");
static_assert(NT >= 32 && NT <= 1024, "1 to 32 warps");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr bool WIDE_MMA = true;  // m16n8k{4,8}.f64: PTX ISA 7.8, sm_90
#else
constexpr bool WIDE_MMA = false;
#endif
// The wide shape on sm_90: m16n8k8, which issues half the instructions of m16n8k4 for the
// same work and runs the same tile 5 to 10% faster (H100, 4096^3, 128 x 128 tiles of 4 x 8
// or 8 x 4 fragments; cuBLAS's DGEMM issues m16n8k8 too). Warp tiles of 32 or more
// fragments fit its two fragment buffers in 255 registers only without split-K, with
// 16-byte copies, and where each thread's copies per stage are few (8 at most) or need no
// bounds checks (the tile divides the problem); elsewhere ptxas spills (DMMA kernels that
// spill are refused, tuner/kern.c), so those take m16n8k4, as generic kernels of such
// tiles do, and so do blocks of BK 32 under 8 warps (tuner/kcfg.c's dmma_k8_block refuses
// m16n8k8 there).
// m16n8k8 gives the bits of two m16n8k4 over its two halves of k, in order
// (dev/dmma_bits.cu: 270 million results on the H100), so an exact kernel and its generic
// twin agree whichever shape each takes.
constexpr bool FITS_K8 = TM * TN < 32 ||
                         (!GT_GENERIC && SPLIT == 1 && VEC == 2 && (BK != 32 || NT >= 256) &&
                          ((BM + BN) * BK <= 8 * VEC * NT ||
                           (shape::M_DIV && shape::N_DIV && shape::K_DIV)));
constexpr int DEFAULT_MMA_SM90 = FITS_K8 ? 3 : 2;
// The instruction: 1 m8n8k4, 2 m16n8k4, 3 m16n8k8. The wide shapes need sm_90 and TN even.
constexpr int MMA = (!WIDE_MMA || TN % 2 != 0) ? 1 : DEFAULT_MMA_SM90;
constexpr int KG = MMA == 3 ? 2 : 1;  // k slices of 4 per instruction
constexpr int NG = BK / (4 * KG);                     // instruction groups per K step
static_assert(NG * 4 * KG == BK, "K step must hold whole instruction groups");
// GT_MMA_CHECK (tests/test_nvrtc.c): the instruction the caller expects.
#ifdef GT_MMA_CHECK
static_assert(GT_MMA_CHECK == MMA, "the instruction shape differs from the caller's");
#endif

constexpr int NACC = TM * TN * 2;  // accumulators per thread

// An instruction group's instructions: unit u of fragment row i is one instruction per k
// slice (m8n8k4: fragment column u; the wide shapes: the column pair 2u, 2u + 1). The
// units (t % TM, t % NU), t < max(TM, NU), read every fragment of the group between them
// (each row i and each unit's columns at least once): the step may issue them before its
// barrier (COVER_FIRST below says why).
constexpr int NU = MMA == 1 ? TN : TN / 2;
constexpr int NCOVER = TM > NU ? TM : NU;
__device__ constexpr bool covers(int i, int u) {
    for (int t = 0; t < NCOVER; ++t)
        if (t % TM == i && t % NU == u) return true;
    return false;
}
__device__ constexpr bool covers_all() {
    for (int i = 0; i < TM; ++i) {
        bool row = false;
        for (int u = 0; u < NU; ++u) row = row || covers(i, u);
        if (!row) return false;
    }
    for (int u = 0; u < NU; ++u) {
        bool unit = false;
        for (int i = 0; i < TM; ++i) unit = unit || covers(i, u);
        if (!unit) return false;
    }
    return true;
}
static_assert(covers_all(), "the covering instructions read every fragment row and column");
enum { ALL = 0, COVER = 1, REST = 2 };

// Shared memory (see the header comment). Element (c, s) of a tile stored with c along
// the contiguous dimension sits at s * LD + c.
constexpr int LDA = TA ? BK + 4 : BM + 4;
constexpr int LDB = TB ? BN + 4 : BK + 4;
constexpr int SA = (TA ? BM : BK) * LDA;  // doubles of one stage's A tile
constexpr int SB = (TB ? BK : BN) * LDB;
constexpr int STAGE = SA + SB;
constexpr int SMEM_BYTES = STAGES * STAGE * 8;
static_assert(SA % 2 == 0 && STAGE % 2 == 0, "stages stay 16-byte aligned");
#ifdef GT_SMEM_CHECK
static_assert(GT_SMEM_CHECK == SMEM_BYTES, "caller's shared-memory size differs from the kernel's");
#endif


// ---- global -> shared: one operand tile of CONT (contiguous) x STR (strided) ----
// EC, ES: the matrix's extents along those dimensions (C_EXACT: CONT divides EC, S_EXACT:
// STR divides ES); LD: the tile's shared row pitch.
template <int CONT, int STR, bool C_EXACT, bool S_EXACT, int LD>
__device__ __forceinline__ void load_tile(double *sm, const double *__restrict__ g, long long ld,
                                          int c0, int s0, int tid_in, long long EC, long long ES) {
    constexpr int VPR = CONT / VEC;  // copies per stored row
    constexpr int TOTAL = VPR * STR;
    constexpr int PER = (TOTAL + NT - 1) / NT;
    static_assert(CONT % VEC == 0, "tile rows hold whole vectors");
    // The thread index through an opaque move: the compiler then recomputes each copy's
    // address at each K step (a few integer instructions) instead of keeping PER 64-bit
    // pointers and predicates live across the main loop.
    int tid;
    asm volatile("mov.b32 %0, %1;\n" : "=r"(tid) : "r"(tid_in));
#pragma unroll
    for (int l = 0; l < PER; ++l) {
        const int v = tid + l * NT;
        if (TOTAL % NT != 0 && v >= TOTAL) break;
        const int c = (v % VPR) * VEC, s = v / VPR;
        const int gc = c0 + c, gs = s0 + s;
        const double *src = g + gc + (long long)gs * ld;
        int bytes = VEC * 8;
        if constexpr (!(C_EXACT && S_EXACT)) {
            int n = VEC;
            if constexpr (!C_EXACT) n = EC - gc >= VEC ? VEC : EC - gc > 0 ? (int)(EC - gc) : 0;
            if constexpr (!S_EXACT) n = gs < ES ? n : 0;
            bytes = n * 8;
            if (n == 0) src = g;  // nothing read; keep the address inside the matrix
        }
        cp_async<VEC * 8>(sm + s * LD + c, src, bytes);
    }
}

// ---- tensor-core instructions (operands already swapped: a = op(B)^T, b = op(A)^T) ----

__device__ __forceinline__ void mma884(double *d, double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
}

// d0: fragment (i, j), d1: fragment (i, j + 1)
__device__ __forceinline__ void mma1684(double *d0, double *d1, double a0, double a1, double b) {
    asm volatile(
        "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};\n"
        : "+d"(d0[0]), "+d"(d0[1]), "+d"(d1[0]), "+d"(d1[1])
        : "d"(a0), "d"(a1), "d"(b));
}

__device__ __forceinline__ void mma1688(double *d0, double *d1, const double (&a)[4],
                                        const double (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(d0[0]), "+d"(d0[1]), "+d"(d1[0]), "+d"(d1[1])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}

}  // namespace dmma
}  // namespace gt

extern "C" __global__ void __launch_bounds__(gt::NT, GT_MINB)
    gt_gemm(const double *__restrict__ A, long long lda, const double *__restrict__ B,
            long long ldb, double *__restrict__ C, long long ldc, double alpha, double beta,
            double *ws, long long gt_m, long long gt_n, long long gt_k) {
    using namespace gt;
    using namespace gt::dmma;
    const shape sh(gt_m, gt_n, gt_k);
    const long long M = sh.M, N = sh.N, K = sh.K;
    extern __shared__ __align__(16) unsigned char smem[];
    double *const sm = reinterpret_cast<double *>(smem);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % WARPS_M, wn = warp / WARPS_M;
    const int g = lane >> 2, t = lane & 3;
    int im, in;
    tile_of(sh.GM, sh.GN, blockIdx.x, im, in);
    const int m0 = im * BM, n0 = in * BN;
    const int z = SPLIT > 1 ? (int)blockIdx.y : 0;
    const int kbeg = z * sh.KPS;
    const int nk = SPLIT == 1 ? sh.KT : (sh.KT - kbeg < sh.KPS ? sh.KT - kbeg : sh.KPS);

    // One stage: K step ks (absolute) into stage st.
    // in (ic<1>): the operand's tile of this K step lies inside its matrix, so its copies
    // need no bounds checks. An exact kernel knows that at compile time (the *_DIV flags)
    // and passes ic<0>; a generic one asks per tile and K step (load_stage): most are
    // interior.
    auto load_a = [&](double *sa, int k0, auto in) {
        constexpr bool I = decltype(in)::value;
        if constexpr (TA)
            load_tile<BK, BM, shape::K_DIV || I, shape::M_DIV || I, LDA>(sa, A, lda, k0, m0, tid, K, M);
        else
            load_tile<BM, BK, shape::M_DIV || I, shape::K_DIV || I, LDA>(sa, A, lda, m0, k0, tid, M, K);
    };
    auto load_b = [&](double *sb, int k0, auto in) {
        constexpr bool I = decltype(in)::value;
        if constexpr (TB)
            load_tile<BN, BK, shape::N_DIV || I, shape::K_DIV || I, LDB>(sb, B, ldb, n0, k0, tid, N, K);
        else
            load_tile<BK, BN, shape::K_DIV || I, shape::N_DIV || I, LDB>(sb, B, ldb, k0, n0, tid, K, N);
    };
    auto load_stage = [&](int st, int ks) {
        double *sa = sm + st * STAGE, *sb = sa + SA;
        const int k0 = ks * BK;
#if GT_GENERIC
        const bool k_in = k0 + BK <= K;
        if (k_in && m0 + BM <= M) load_a(sa, k0, ic<1>());
        else load_a(sa, k0, ic<0>());
        if (k_in && n0 + BN <= N) load_b(sb, k0, ic<1>());
        else load_b(sb, k0, ic<0>());
#else
        load_a(sa, k0, ic<0>());
        load_b(sb, k0, ic<0>());
#endif
    };

    // This thread's fragment element offsets inside a stage (k slice 0, fragment 0).
    const int fa0 = TA ? (wm * WM + g) * LDA + t : t * LDA + wm * WM + g;
    const int fb0 = SA + (TB ? t * LDB + wn * WN + g : (wn * WN + g) * LDB + t);

    double acc[NACC];
#pragma unroll
    for (int e = 0; e < NACC; ++e) acc[e] = 0.0;

    // The instructions of fragment row i (m side) of one group: FA(q, j) gives the n-side
    // fragment j of k slice q, FB(q) the m-side fragment i of k slice q. PART selects
    // them: ALL, COVER (covers(i, u) below: instructions that read every fragment of the
    // group between them) or REST (the others).
    auto mma_row = [&](int i, auto FA, auto FB, auto partc) {
        constexpr int PART = decltype(partc)::value;
        auto take = [&](int u) { return PART == ALL || covers(i, u) == (PART == COVER); };
        if constexpr (MMA == 1) {
#pragma unroll
            for (int q = 0; q < KG; ++q)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    if (take(j)) mma884(&acc[(i * TN + j) * 2], FA(q, j), FB(q));
        } else if constexpr (MMA == 2) {
#pragma unroll
            for (int q = 0; q < KG; ++q)
#pragma unroll
                for (int j = 0; j < TN; j += 2)
                    if (take(j / 2))
                        mma1684(&acc[(i * TN + j) * 2], &acc[(i * TN + j + 1) * 2], FA(q, j),
                                FA(q, j + 1), FB(q));
        } else {
#pragma unroll
            for (int j = 0; j < TN; j += 2) {
                if (!take(j / 2)) continue;
                const double a[4] = {FA(0, j), FA(0, j + 1), FA(1, j), FA(1, j + 1)};
                const double b[2] = {FB(0), FB(1)};
                mma1688(&acc[(i * TN + j) * 2], &acc[(i * TN + j + 1) * 2], a, b);
            }
        }
    };
    // Shared-memory offsets of fragments, k slice s of the step.
    auto off_a = [&](int s, int i) { return fa0 + (TA ? i * 8 * LDA + s * 4 : s * 4 * LDA + i * 8); };
    auto off_b = [&](int s, int j) { return fb0 + (TB ? s * 4 * LDB + j * 8 : j * 8 * LDB + s * 4); };

    // Prologue: STAGES - 1 K steps in flight, the first one waited for.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nk) load_stage(s, kbeg + s);
        cp_commit();
    }
    cp_wait<STAGES - 2>();
    __syncthreads();
    int rst = 0, wst = STAGES - 1;  // stage read in this step, stage written in this step

    // Issues the copies of step kt + STAGES - 1 (nothing past the split's last step, but
    // always a commit, so that group counting stays uniform).
    auto prefetch = [&](int kt) {
        if (kt + STAGES - 1 < nk) load_stage(wst, kbeg + kt + STAGES - 1);
        cp_commit();
        wst = wst + 1 == STAGES ? 0 : wst + 1;
    };
    // End of a step's reads: step kt + 1 landed for every thread, and every thread is done
    // reading the stage that the next prefetch overwrites (all its fragment loads of this
    // step were issued before this barrier).
    auto next_stage = [&]() {
        cp_wait<STAGES - 2>();
        __syncthreads();
        rst = rst + 1 == STAGES ? 0 : rst + 1;
        return (const double *)(sm + rst * STAGE);
    };

    // Fragments of one instruction group (KG k slices), double-buffered in exact kernels:
    // the next group is read while this one computes. Generic kernels keep one buffer:
    // their bounds checks take the registers the second one would (double-buffered, most
    // generic kernels with 4 x 8 and 4 x 6 fragments per warp spill at 255 registers;
    // single, none does).
    //
    // The last group of a K step is read before the step's barrier and used after it.
    // Another warp that passes the barrier first refills that stage (the prefetch at the
    // top of the next step), and its zero-filled copies land at once; a fragment load still
    // in flight then reads the refilled stage. On the H100 this gave wrong results, other
    // bits run to run, on tiles with one to three instructions between the loads and the
    // barrier (1 x 2, 3 x 2, 3 x 8, 4 x 6 fragments; 14 of 889 kernels of
    // dev/dmma_sweep.py's tiles, none with one buffer). So where COVER_FIRST holds, the
    // covering instructions of the last group (covers() above: they read every fragment
    // of it) issue before the barrier, and the scoreboard waits for every load of the
    // group before them; the rest issue after it, beside the next stage's first loads:
    // 0 of 889 wrong (dev/dmma_swap.sh; bench/README.md, "DMMA fragments in flight across
    // the barrier"). Warp tiles with TM even and TN a multiple of 4 issue 8 to 16
    // instructions between those loads and the barrier, never failed in any sweep, and
    // keep the schedule without that wait, which runs them 6 to 18% faster on the H100
    // (4096^3 4 x 8: 2,417 us against 2,734 with the covering instructions first).
    constexpr bool COVER_FIRST = !(TM % 2 == 0 && TN % 4 == 0);
    constexpr bool FRAG_DB = !GT_GENERIC;
    double fa[FRAG_DB ? 2 : 1][KG][TM], fb[FRAG_DB ? 2 : 1][KG][TN];
    auto load_frags = [&](auto bc, const double *st, int grp) {
        constexpr int b = decltype(bc)::value;
#pragma unroll
        for (int q = 0; q < KG; ++q) {
#pragma unroll
            for (int i = 0; i < TM; ++i) fa[b][q][i] = st[off_a(grp * KG + q, i)];
#pragma unroll
            for (int j = 0; j < TN; ++j) fb[b][q][j] = st[off_b(grp * KG + q, j)];
        }
    };
    auto mma_group = [&](auto bc, auto partc) {
        constexpr int b = decltype(bc)::value;
#pragma unroll
        for (int i = 0; i < TM; ++i)
            mma_row(
                i, [&](int q, int j) { return fb[b][q][j]; }, [&](int q) { return fa[b][q][i]; },
                partc);
    };
    auto step = [&](int kt, auto parc) {
        constexpr int P = decltype(parc)::value;
        prefetch(kt);
        const double *cur = sm + rst * STAGE;
        if constexpr (FRAG_DB) {
#pragma unroll
            for (int grp = 0; grp < NG; ++grp) {
                const int buf = (P * NG + grp) & 1;
                if (grp == NG - 1) {
                    if constexpr (COVER_FIRST) with_buf(buf, [&](auto c) { mma_group(c, ic<COVER>()); });
                    const double *nxt = next_stage();
                    with_buf(!buf, [&](auto c) { load_frags(c, nxt, 0); });
                    with_buf(buf, [&](auto c) { mma_group(c, ic<COVER_FIRST ? REST : ALL>()); });
                } else {
                    with_buf(!buf, [&](auto c) { load_frags(c, cur, grp + 1); });
                    with_buf(buf, [&](auto c) { mma_group(c, ic<ALL>()); });
                }
            }
        } else {
#pragma unroll
            for (int grp = 0; grp < NG; ++grp) {
                load_frags(ic<0>(), cur, grp);
                mma_group(ic<0>(), ic<ALL>());
            }
            next_stage();
        }
    };
    if constexpr (FRAG_DB) load_frags(ic<0>(), sm, 0);
    if constexpr (NG % 2 == 0) {
        for (int kt = 0; kt < nk; ++kt) step(kt, ic<0>());
    } else {
        for (int kt = 0; kt < nk; kt += 2) {
            step(kt, ic<0>());
            if (kt + 1 < nk) step(kt + 1, ic<1>());
        }
    }
    cp_wait<0>();

    if (!splitk_reduce<NACC>(sh, acc, ws, (int)blockIdx.x, z)) return;

    // Epilogue: fragment (i, j) of this thread holds C rows m, m + 1 of column n.
    constexpr bool M_EXACT = shape::M_DIV, N_EXACT = shape::N_DIV;
    const int mb = m0 + wm * WM + 2 * t, nb = n0 + wn * WN + g;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int n = nb + j * 8;
        if (!N_EXACT && n >= N) continue;
        double *col = C + (long long)n * ldc;
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int m = mb + i * 8;
            store_rows2<M_EXACT, VEC == 2>(sh, col, m, &acc[(i * TN + j) * 2], alpha, beta);
        }
    }
}
