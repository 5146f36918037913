// gemm_mma.cu: gemmtune's tensor-core GEMM family for tf32, f16, bf16 and f32_3xtf32
// ("mma"), sm_80 and later: mma.sync with f32 accumulation, fed by ldmatrix from padded
// shared memory that a cp.async pipeline of STAGES stages fills.
//
// Compiled only at run time by NVRTC, one program per configuration; problem and
// configuration arrive as -D macros (common.cuh lists them; tuner/kcfg.c holds their table
// and constraints and mirrors the shared-memory size derived here).
//
// C = alpha * op(A) * op(B) + beta * C, column-major. One BM x BN tile of C per block
// (gt::tile_of), split z = blockIdx.y of SPLIT along K. WARPS_M x WARPS_N warps, each a
// WM x WN warp tile of TM x TN fragments: TM of 8 rows (m), TN of 16 columns (n).
//
// Instruction: m16n8k16 (f16, bf16) or m16n8k8 (tf32), issued with the operands swapped,
// D^T = op(B)^T op(A)^T, as in gemm_dmma.cu: the instruction's row operand ("A", 16 rows)
// is a 16-column slice of op(B) (rows = n), its column operand ("B", 8 columns) an 8-row
// slice of op(A) (columns = m). A thread's accumulators d0, d1 are then rows m, m + 1 of
// one column n of C (d2, d3 the same rows of column n + 8), so the epilogue stores pairs
// of consecutive elements of column-major C. Fragment layouts (PTX ISA; g = lane / 4,
// t = lane % 4; KH = 8 for 16-bit types, 4 for tf32, in elements):
//   row operand a[v]:  (row g + 8 (v % 2), k [2t, 2t + 1] + KH (v / 2))  (tf32: k t + KH (v / 2))
//   col operand b[v]:  (k [2t, 2t + 1] + KH v, col g)                    (tf32: k t + KH v)
//   accumulator d[v]:  (row g + 8 (v / 2), col 2t + v % 2)
// Each is one 8 x 16-byte matrix per register, so ldmatrix loads them: a tile stored with
// k contiguous is read as is, one stored with m (n) contiguous with .trans (16-bit types
// only: tf32 reads those with 32-bit loads, conflict-free thanks to the padding below).
// tf32 operands are the fp32 bits as stored: the tensor core ignores the low 13 mantissa
// bits (truncation), as cuBLAS's tf32 mode does.
//
// Shared memory: dynamic, STAGES stages, each an A tile then a B tile, kept in the
// operand's global orientation so 16-byte cp.async copies land unchanged. Rows along k
// get 16 bytes of padding, rows along m or n 8 elements:
//   A: TA ? [BM][BK + PK] (k contiguous) : [BK][BM + 8] (m contiguous)
//   B: TB ? [BK][BN + 8] (n contiguous) : [BN][BK + PK] (k contiguous)
//   PK = 16 / sizeof(TI); bytes = STAGES * sizeof(TI) * (A + B)
// An ldmatrix phase reads 8 rows at one 16-byte column: with a row pitch that is an odd
// number of 16-byte units (k rows: BK * size + 16; m or n rows of 16-bit types where BM,
// BN are multiples of 16), the 8 rows fall in 8 distinct bank groups.
//
// Pipeline: STAGES - 1 K steps in flight through cp.async (zero-fill past M, N, K); one
// __syncthreads per K step; fragments double-buffered in registers by k slice (the next
// slice is read while the tensor cores work on the current one). Copies narrower than 4
// bytes (16-bit elements with a 2-byte alignment class) go through registers: loaded at
// the start of a K step, stored at its end (load_tile's FETCH and STORE).
// In an exact-shape kernel, where a tile divides the problem, every bounds check folds at
// compile time; a shape-generic kernel (GT_GENERIC) keeps them all.
//
// f32_3xtf32 (X3): fp32 operands read as tf32 ones are; each fragment register x is split
// in registers into its high part (x itself) and low part (common.cuh's low_part), and each
// m16n8k8 product is three instructions, la hb + ha lb + ha hb, small terms first. Unlike
// WGMMA, mma.sync reads the low parts from registers, so operands stored with m or n
// contiguous need no transposed copy. The three sum into a partial of their own, added
// to the accumulator in fp32 (round to nearest) per k slice of 8: the tensor cores round
// each sum toward zero, a bias that grows with K (gemm_wgmma.cu's main loop gives its size).
#include "common.cuh"

static_assert((GT_DT >= 2 && GT_DT <= 6) || GT_DT == 7,
              "gemm_mma is the tf32, f16, bf16 and f32_3xtf32 family");

#ifndef GT_MINB
#define GT_MINB 1
#endif

namespace gt {
namespace mma {

// ---- configuration ----

constexpr bool X3 = GT_DT == 7;     // f32_3xtf32: high and low tf32 parts
constexpr bool TF32 = GT_DT == 2 || X3;
constexpr bool BF16 = GT_DT == 5 || GT_DT == 6;
constexpr int ESI = (int)sizeof(TI), ESC = (int)sizeof(TC);
constexpr int KS = TF32 ? 8 : 16;   // k of one instruction
constexpr int KH = 16 / ESI;        // k of one 16-byte ldmatrix row
constexpr int NS = BK / KS;         // instruction k slices per K step
static_assert(NS * KS == BK, "K step must hold whole instructions");
static_assert(WM == 8 * TM && WN == 16 * TN, "WM = 8 TM and WN = 16 TN");
static_assert(STAGES >= 2, "at least two shared-memory stages");
static_assert(VEC * ESI <= 16, "vectors of at most 16 bytes");
static_assert(NT >= 32 && NT <= 1024, "1 to 32 warps");
constexpr int NACC = TM * TN * 4;   // accumulators per thread

constexpr int PK = 16 / ESI;
constexpr int LDA = TA ? BK + PK : BM + 8;
constexpr int LDB = TB ? BN + 8 : BK + PK;
constexpr int SA = (TA ? BM : BK) * LDA;  // elements of one stage's A tile
constexpr int SB = (TB ? BK : BN) * LDB;
constexpr int STAGE = SA + SB;
constexpr int SMEM_BYTES = STAGES * STAGE * ESI;
static_assert((SA * ESI) % 16 == 0 && (STAGE * ESI) % 16 == 0 && (LDA * ESI) % 16 == 0 &&
                  (LDB * ESI) % 16 == 0,
              "stages and rows stay 16-byte aligned");
#ifdef GT_SMEM_CHECK
static_assert(GT_SMEM_CHECK == SMEM_BYTES, "caller's shared-memory size differs from the kernel's");
#endif
// C is stored in pairs of consecutive rows where the alignment class allows (VEC * ESI
// is at most the class).
constexpr bool PAIR = VEC * ESI >= 2 * ESC;


// ---- global -> shared: one operand tile of CONT (contiguous) x STR (strided) ----
// Copies narrower than cp.async's 4 bytes (STAGED: 16-bit elements in the 2-byte alignment
// class) go through registers in two halves, so that the global loads of a stage are in
// flight while the tensor cores work: FETCH loads this thread's elements into r (at the
// start of a K step), STORE writes them to shared memory (at its end, before the barrier).
// COPY does both at once (the prologue), or issues the cp.async copies.
constexpr bool STAGED = VEC * ESI < 4;
enum { COPY = 0, FETCH = 1, STORE = 2 };
// Copies per thread of a tile of E elements.
template <int E> struct per_thread { static constexpr int value = (E / VEC + NT - 1) / NT; };

// EC, ES: the matrix's extents along those dimensions (C_EXACT: CONT divides EC, S_EXACT:
// STR divides ES, known at compile time); LD: the tile's shared row pitch.
template <int CONT, int STR, bool C_EXACT, bool S_EXACT, int LD, int MODE = COPY>
__device__ __forceinline__ void load_tile(TI *sm, const TI *__restrict__ g, long long ld, int c0,
                                          int s0, int tid_in, long long EC, long long ES,
                                          TI *r = nullptr) {
    constexpr int VPR = CONT / VEC;  // copies per stored row
    constexpr int TOTAL = VPR * STR;
    constexpr int PER = per_thread<CONT * STR>::value;
    static_assert(CONT % VEC == 0, "tile rows hold whole vectors");
    // Through an opaque move: addresses are recomputed per K step rather than kept live
    // (as in gemm_dmma.cu).
    int tid;
    asm volatile("mov.b32 %0, %1;\n" : "=r"(tid) : "r"(tid_in));
#pragma unroll
    for (int l = 0; l < PER; ++l) {
        const int v = tid + l * NT;
        if (TOTAL % NT != 0 && v >= TOTAL) break;
        const int c = (v % VPR) * VEC, s = v / VPR;
        if constexpr (MODE == STORE) {
            sm[s * LD + c] = r[l];
            continue;
        }
        const int gc = c0 + c, gs = s0 + s;
        const TI *src = g + gc + (long long)gs * ld;
        int n = VEC;
        if constexpr (!(C_EXACT && S_EXACT)) {
            if constexpr (!C_EXACT) n = EC - gc >= VEC ? VEC : EC - gc > 0 ? (int)(EC - gc) : 0;
            if constexpr (!S_EXACT) n = gs < ES ? n : 0;
            if (n == 0) src = g;  // nothing read; keep the address inside the matrix
        }
        if constexpr (!STAGED) {
            cp_async<VEC * ESI>(sm + s * LD + c, src, n * ESI);
        } else if constexpr (MODE == FETCH) {
            r[l] = n ? *src : TI{};
        } else {
            sm[s * LD + c] = n ? *src : TI{};
        }
    }
}

// ---- fragments from shared memory ----

__device__ __forceinline__ void ldm_x4(unsigned (&r)[4], const TI *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(saddr(p)));
}
__device__ __forceinline__ void ldm_x4_t(unsigned (&r)[4], const TI *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(saddr(p)));
}
__device__ __forceinline__ void ldm_x2(unsigned (&r)[2], const TI *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(saddr(p)));
}
__device__ __forceinline__ void ldm_x2_t(unsigned (&r)[2], const TI *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(saddr(p)));
}
__device__ __forceinline__ unsigned ld32(const TI *p) {
    return *reinterpret_cast<const unsigned *>(p);
}

// ---- the instruction: d += a * b, f32 accumulators ----

__device__ __forceinline__ void mma_op(float *d, const unsigned (&a)[4], const unsigned (&b)[2]) {
    if constexpr (TF32) {
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else if constexpr (BF16) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

}  // namespace mma
}  // namespace gt

extern "C" __global__ void __launch_bounds__(gt::NT, GT_MINB)
    gt_gemm(const gt::TI *__restrict__ A, long long lda, const gt::TI *__restrict__ B,
            long long ldb, gt::TC *__restrict__ C, long long ldc, float alpha, float beta,
            float *ws, long long gt_m, long long gt_n, long long gt_k) {
    using namespace gt;
    using namespace gt::mma;
    const shape sh(gt_m, gt_n, gt_k);
    const long long M = sh.M, N = sh.N, K = sh.K;
    extern __shared__ __align__(16) unsigned char smem[];
    TI *const sm = reinterpret_cast<TI *>(smem);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % WARPS_M, wn = warp / WARPS_M;
    const int g = lane >> 2, t = lane & 3;
    int im, in;
    tile_of(sh.GM, sh.GN, blockIdx.x, im, in);
    const int m0 = im * BM, n0 = in * BN;
    const int z = SPLIT > 1 ? (int)blockIdx.y : 0;
    const int kbeg = z * sh.KPS;
    const int nk = SPLIT == 1 ? sh.KT : (sh.KT - kbeg < sh.KPS ? sh.KT - kbeg : sh.KPS);

    // Registers of the staged copies (STAGED only).
    TI ra[STAGED ? per_thread<BM * BK>::value : 1], rb[STAGED ? per_thread<BN * BK>::value : 1];
    // in (ic<1>): the operand's tile of this K step lies inside its matrix, so its copies
    // need no bounds checks. An exact kernel knows that at compile time (the *_DIV flags)
    // and passes ic<0>; a generic one asks per tile and K step (load_stage): most are
    // interior.
    auto load_a = [&](TI *sa, int k0, auto modec, auto in) {
        constexpr int MODE = decltype(modec)::value;
        constexpr bool I = decltype(in)::value;
        if constexpr (TA)
            load_tile<BK, BM, shape::K_DIV || I, shape::M_DIV || I, LDA, MODE>(sa, A, lda, k0, m0, tid, K, M, ra);
        else
            load_tile<BM, BK, shape::M_DIV || I, shape::K_DIV || I, LDA, MODE>(sa, A, lda, m0, k0, tid, M, K, ra);
    };
    auto load_b = [&](TI *sb, int k0, auto modec, auto in) {
        constexpr int MODE = decltype(modec)::value;
        constexpr bool I = decltype(in)::value;
        if constexpr (TB)
            load_tile<BN, BK, shape::N_DIV || I, shape::K_DIV || I, LDB, MODE>(sb, B, ldb, n0, k0, tid, N, K, rb);
        else
            load_tile<BK, BN, shape::K_DIV || I, shape::N_DIV || I, LDB, MODE>(sb, B, ldb, k0, n0, tid, K, N, rb);
    };
    auto load_stage = [&](int st, int ks, auto modec) {
        TI *sa = sm + st * STAGE, *sb = sa + SA;
        const int k0 = ks * BK;
#if GT_GENERIC
        const bool k_in = k0 + BK <= K;
        if (k_in && m0 + BM <= M) load_a(sa, k0, modec, ic<1>());
        else load_a(sa, k0, modec, ic<0>());
        if (k_in && n0 + BN <= N) load_b(sb, k0, modec, ic<1>());
        else load_b(sb, k0, modec, ic<0>());
#else
        load_a(sa, k0, modec, ic<0>());
        load_b(sb, k0, modec, ic<0>());
#endif
    };

    // This lane's ldmatrix row address inside a stage (slice 0, fragment 0), in elements.
    // Lane l addresses row l % 8 of matrix q = l / 8.
    const int q = lane >> 3, r8 = lane & 7;
    // Row operand (n, from B): matrices q = (n half q % 2, k half q / 2).
    const int ob = SA + (TB ? ((q >> 1) * KH + r8) * LDB + wn * WN + (q & 1) * 8
                            : (wn * WN + (q & 1) * 8 + r8) * LDB + (q >> 1) * KH);
    // Column operand (m, from A), two m8 fragments per x4: q = (fragment q / 2, k half q % 2).
    const int oa = TA ? (wm * WM + (q >> 1) * 8 + r8) * LDA + (q & 1) * KH
                      : ((q & 1) * KH + r8) * LDA + wm * WM + (q >> 1) * 8;

    float acc[NACC];
#pragma unroll
    for (int e = 0; e < NACC; ++e) acc[e] = 0.0f;

    // Fragments of one k slice: fa (row operand, n) and fb (column operand, m).
    unsigned fa[2][TN][4], fb[2][TM][2];
    auto load_frags = [&](auto bc, const TI *st, int s) {
        constexpr int b = decltype(bc)::value;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            if constexpr (TF32 && TB) {
                // n contiguous: a[v] = (n g + 8 (v % 2), k t + 4 (v / 2))
                const TI *p = st + SA + (s * KS + t) * LDB + wn * WN + j * 16 + g;
#pragma unroll
                for (int v = 0; v < 4; ++v) fa[b][j][v] = ld32(p + (v >> 1) * 4 * LDB + (v & 1) * 8);
            } else if constexpr (TB) {
                ldm_x4_t(fa[b][j], st + ob + s * KS * LDB + j * 16);
            } else {
                ldm_x4(fa[b][j], st + ob + j * 16 * LDB + s * KS);
            }
        }
#pragma unroll
        for (int i = 0; i < TM; i += 2) {
            if constexpr (TF32 && !TA) {
                // m contiguous: b[v] = (k t + 4 v, m g)
#pragma unroll
                for (int f = 0; f < 2 && i + f < TM; ++f) {
                    const TI *p = st + (s * KS + t) * LDA + wm * WM + (i + f) * 8 + g;
                    fb[b][i + f][0] = ld32(p);
                    fb[b][i + f][1] = ld32(p + 4 * LDA);
                }
            } else if (i + 1 < TM) {
                unsigned r[4];
                if constexpr (TA) ldm_x4(r, st + oa + i * 8 * LDA + s * KS);
                else ldm_x4_t(r, st + oa + s * KS * LDA + i * 8);
                fb[b][i][0] = r[0], fb[b][i][1] = r[1], fb[b][i + 1][0] = r[2], fb[b][i + 1][1] = r[3];
            } else {
                // The last, odd fragment: lanes 0-15 address its two k halves (q = 0, 1).
                if constexpr (TA) ldm_x2(fb[b][i], st + oa + i * 8 * LDA + s * KS);
                else ldm_x2_t(fb[b][i], st + oa + s * KS * LDA + i * 8);
            }
        }
    };
    auto mma_slice = [&](auto bc) {
        constexpr int b = decltype(bc)::value;
        if constexpr (X3) {
            unsigned la[TN][4], lb[TM][2];
#pragma unroll
            for (int j = 0; j < TN; ++j)
#pragma unroll
                for (int v = 0; v < 4; ++v) la[j][v] = low_part(fa[b][j][v]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int v = 0; v < 2; ++v) lb[i][v] = low_part(fb[b][i][v]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    float p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    mma_op(p, la[j], fb[b][i]);
                    mma_op(p, fa[b][j], lb[i]);
                    mma_op(p, fa[b][j], fb[b][i]);
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[(i * TN + j) * 4 + e] += p[e];
                }
        } else {
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) mma_op(&acc[(i * TN + j) * 4], fa[b][j], fb[b][i]);
        }
    };

    // Prologue: STAGES - 1 K steps in flight, the first one waited for.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nk) load_stage(s, kbeg + s, ic<COPY>());
        cp_commit();
    }
    cp_wait<STAGES - 2>();
    __syncthreads();
    int rst = 0, wst = STAGES - 1;  // stage read in this step, stage written in this step

    auto step = [&](int kt, auto parc) {
        constexpr int P = decltype(parc)::value;
        // Copies of step kt + STAGES - 1 (always a commit, so group counting is uniform).
        const bool more = kt + STAGES - 1 < nk;
        const int pst = wst;
        if (more) load_stage(wst, kbeg + kt + STAGES - 1, ic<STAGED ? FETCH : COPY>());
        cp_commit();
        wst = wst + 1 == STAGES ? 0 : wst + 1;
        const TI *cur = sm + rst * STAGE;
#pragma unroll
        for (int s = 0; s < NS; ++s) {
            const int buf = (P * NS + s) & 1;
            if (s == NS - 1) {
                // Staged copies land now, a step's arithmetic after their loads left.
                if constexpr (STAGED)
                    if (more) load_stage(pst, 0, ic<STORE>());
                // Step kt + 1 landed for every thread, and every thread is done reading
                // the stage the next prefetch overwrites.
                cp_wait<STAGES - 2>();
                __syncthreads();
                rst = rst + 1 == STAGES ? 0 : rst + 1;
                with_buf(!buf, [&](auto c) { load_frags(c, sm + rst * STAGE, 0); });
            } else {
                with_buf(!buf, [&](auto c) { load_frags(c, cur, s + 1); });
            }
            with_buf(buf, [&](auto c) { mma_slice(c); });
        }
    };
    load_frags(ic<0>(), sm, 0);
    if constexpr (NS % 2 == 0) {
        for (int kt = 0; kt < nk; ++kt) step(kt, ic<0>());
    } else {
        for (int kt = 0; kt < nk; kt += 2) {
            step(kt, ic<0>());
            if (kt + 1 < nk) step(kt + 1, ic<1>());
        }
    }
    cp_wait<0>();

    if (!splitk_reduce<NACC>(sh, acc, ws, (int)blockIdx.x, z)) return;

    // Epilogue: fragment (i, j) holds rows m, m + 1 of columns n (d0, d1) and n + 8 (d2, d3).
    constexpr bool M_EXACT = shape::M_DIV, N_EXACT = shape::N_DIV;
    const int mb = m0 + wm * WM + 2 * t, nb = n0 + wn * WN + g;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int n = nb + j * 16 + h * 8;
            if (!N_EXACT && n >= N) continue;
            TC *col = C + (long long)n * ldc;
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const int m = mb + i * 8;
                store_rows2<M_EXACT, PAIR>(sh, col, m, &acc[(i * TN + j) * 4 + h * 2], alpha, beta);
            }
        }
    }
}
