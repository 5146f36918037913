// gemm_wgmma.cu: gemmtune's Hopper tensor-core GEMM family for tf32, f16, bf16 and
// f32_3xtf32 ("wgmma"), sm_90a only: warpgroup MMA (wgmma.mma_async) reading both operands from
// shared memory that the tensor memory accelerator (TMA) fills, 128-byte swizzled, on an
// mbarrier pipeline, with one producer warpgroup and CW consumer warpgroups.
//
// Compiled only at run time by NVRTC for sm_90a, one program per configuration; problem
// and configuration arrive as -D macros (common.cuh lists them; tuner/kcfg.c holds their
// table and constraints and mirrors the shared-memory size derived here).
//
// C = alpha * op(A) * op(B) + beta * C, column-major. Persistent: the grid holds at most
// one block per SM (tuner/kcfg.c's gt_kcfg_grid), and block b computes the BM x BN tiles
// b, b + gridDim.x, ... (gt::tile_of's order), so that its producer loads the next tile's
// first stages while the consumers store the last one's C.
// Parameters as this family reads them:
//   BM: the tile's rows of C (m): the instruction's N (64, 128, 192 or 256);
//   BN: its columns (n): CW consumer warpgroups of WN = BN / CW columns each, every one
//       TN instructions of 64 (WM = BM);
//   TM: blocks per cluster (CL, 1 or 2). With 2, the two blocks of a cluster compute
//       vertically adjacent tiles (the same columns n): each loads half of the B tile
//       and multicasts it to both (TMA .multicast::cluster), halving B's L2 traffic
//       (the tuner decides whether that pays);
//   BK: k per stage, 128 bytes of it (64 for f16/bf16, 32 for tf32); STAGES: stages;
//   VEC: the alignment class; under 16 bytes (TMA needs 16-byte aligned addresses and
//       strides) the operands are first copied to aligned memory (PACK, below), as are
//       tf32 operands stored without k contiguous, transposed;
//   SPLIT: splits of K (blockIdx.y), each a run of KPS K steps; the partial tiles meet in
//       the library's workspace, the last split of a tile to arrive adds them in split
//       order (common.cuh's layout; consumers only, on named barrier 1).
// Threads: 128 (CW + 1).
// Instruction: m64nBMk16 (f16, bf16) or m64nBMk8 (tf32), f32 accumulators, issued with
// the operands swapped as in gemm_mma.cu: D^T = op(B)^T op(A)^T. The instruction's "A"
// (64 rows) is 64 columns n of op(B), its "B" (BM columns) is BM rows m of op(A). A
// thread's accumulators d[4 j + 2 h + e] (PTX ISA's m64nNk16 D layout; warp w of the
// warpgroup, g = lane / 4, t = lane % 4) are then C(m = 8 j + 2 t + e, n = 16 w + 8 h + g):
// pairs of consecutive rows of column-major C.
//
// Shared memory, per stage an A tile then a B tile, each as TMA writes it with 128-byte
// swizzle (rows of 128 bytes; 16-byte units of row r XOR-ed with r % 8; atoms of 8 rows,
// 1024 bytes, so every tile starts 1024-aligned):
//   operand read with k contiguous ("K-major": A when TA, B when !TB, or a transposed
//     copy): R rows (m or n) of BK k, one TMA box {BK, R} (B with clusters: each block's
//     R / CL rows); descriptor: SBO 1024 (8 rows), k slice s at +32 s bytes (16 k of
//     16-bit, 8 of tf32).
//   operand read with m or n contiguous ("MN-major", 16-bit only: wgmma's transpose bits;
//     tf32 operands so stored are transposed first): R / 64 chunks, each BK rows of 64
//     elements (one TMA box {64, BK}, 128 B x BK); descriptor: LBO = the chunk pitch
//     (BK x 128), SBO 1024 (8 k rows), k slice s at +16 x 128 s bytes.
//   Bytes: STAGES (BM + BN) BK sizeof(TI), plus 1024 so the base can be aligned, plus
//   128 for the mbarriers after the tiles.
// TMA fills what lies past M, N or K with zeros, so odd sizes need no bounds checks in
// the main loop; only the epilogue checks.
//
// Pipeline: full[s] (the producer's expected bytes arrived) and empty[s] (every consumer
// warp of every block of the cluster is done with the stage: the others' copies of B
// write into it too) mbarriers per stage, used round after round across the block's
// tiles. One producer thread waits for empty, posts the stage's bytes and issues
// its TMA copies; consumers wait for full, issue the stage's wgmma and commit them as one
// group, then wait until at most that group is in flight and release the previous stage
// (a tile's last stage once its wgmma are done, before the epilogue). The producer
// warpgroup gives registers to the consumers (setmaxnreg).
//
// f32_3xtf32 (X3): fp32 operands, each element x taken as a high part h (x with its low 13
// mantissa bits cleared: the tf32 instruction reads the fp32 bits as stored and ignores
// those, so h is the stage itself) and a low part l = x - h (exact in fp32), rounded to
// tf32. Every stage has a second copy, at LOW bytes after it, that warps 1 to 3 of the
// producer warpgroup fill with the low parts once TMA has filled the stage (split_stage:
// each 16 bytes of the stage to the same offset of the copy, so the copy has the stage's
// swizzle and descriptors; then the ready[s] mbarrier), then a * b is la hb + ha lb + ha hb:
// three instructions (common.cuh's low_part; CUTLASS's 3xTF32, la lb left out), into a
// partial sum per K step that is added to the accumulators in fp32 (see the main loop).
// An inf or NaN element gets a low part of zero.
//
// Epilogue: the consumers store their own accumulators. 16-bit C with beta 0 in the
// 16-byte class (WIDE), in an exact-shape kernel where M is a multiple of 8 and the
// staging fits (EPI_TMA): each warpgroup writes 64 x 64 boxes of C to shared memory with
// stmatrix and its thread 0 stores them by TMA (asynchronously, so the last box's store
// overlaps the next tile). Other WIDE keys, and every generic kernel, store from registers
// in runs of 8 rows (wide_store). Otherwise pairs of rows (store_rows2), C read for beta.
#include "common.cuh"

static_assert((GT_DT >= 2 && GT_DT <= 6) || GT_DT == 7,
              "gemm_wgmma is the tf32, f16, bf16 and f32_3xtf32 family");
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

namespace gt {
namespace wgm {

constexpr bool X3 = GT_DT == 7;               // f32_3xtf32: high and low tf32 parts
constexpr bool TF32 = GT_DT == 2 || X3;        // tf32 instructions
constexpr int ESI = (int)sizeof(TI), ESC = (int)sizeof(TC);
constexpr int CW = BN / WN;              // consumer warpgroups
constexpr int NTW = 128 * (CW + 1);      // threads of the block
constexpr int KS = TF32 ? 8 : 16;        // k of one instruction
constexpr int NS = BK / KS;              // instructions along k per stage
constexpr int RA = BM / 2;               // accumulators per thread and instruction
// tf32 reads only K-major operands: those stored otherwise are read from a transposed
// copy (PACK, below). KMA, KMB: A, B as read have k contiguous.
constexpr bool TPA = TF32 && !TA, TPB = TF32 && TB;
constexpr bool KMA = TA || TPA, KMB = !TB || TPB;
// Transpose bits: the instruction's A is op(B)^T, K-major when B is read k contiguous.
constexpr int TNSP_A = KMB ? 0 : 1, TNSP_B = KMA ? 0 : 1;
static_assert(BK * ESI == 128, "a stage row is one 128-byte swizzle row");
constexpr int CL = TM;                   // blocks per cluster
static_assert(WM == BM && (CL == 1 || CL == 2) && WN == 64 * TN && (CW == 1 || CW == 2), "tile layout");
static_assert(CL == 1 || BN % (64 * CL) == 0, "B splits into whole 64-column chunks per block");
static_assert(BM % 64 == 0 && BM <= 256, "instruction N of 64 to 256");
static_assert(!TF32 || (KMA && KMB), "tf32 operands must be K-major");
static_assert(VEC * ESI <= 16, "vectors of at most 16 bytes");
constexpr int SA = BM * BK * ESI, SB = BN * BK * ESI, STAGE = SA + SB;
// X3: the low parts of stage s at LOW bytes after it (1024-aligned: STAGE is a multiple
// of 8 KiB); TILES: the bytes of all stages (and their low parts).
constexpr int LOW = STAGES * STAGE, TILES = (X3 ? 2 : 1) * STAGES * STAGE;
// C is stored in pairs of consecutive rows where its alignment class allows. 16-bit C
// with beta zero where it allows 16 bytes (WIDE): through shared memory and TMA stores
// (EPI_TMA) where M is known to be a multiple of 8 (an exact-shape kernel) and two staging
// boxes per consumer warpgroup fit beside the stages, else from registers in runs of 8
// rows (wide_store).
constexpr bool PAIR = VEC * ESI >= 2 * ESC;
constexpr bool WIDE = BETA0 && ESC == 2 && VEC * ESI >= 16;
// Tiles, the 1024 bytes their alignment may cost, the epilogue's staging boxes (EPI_BOX
// bytes each: 64 rows m of 128 bytes by 64 columns n, 1024-aligned as the tiles are),
// then the 2 STAGES mbarriers (in 128 bytes). 232448: sm_90's per-block opt-in limit.
constexpr int EPI_BOX = 64 * 64 * 2, SMEM_BASE = TILES + 1024 + 128;
// TMA stores whole 16-byte chunks: with M not a multiple of 8 the last one of each column
// would write past M (into C's padding or the next column), so such M store from registers,
// as does a generic kernel, whose M may be any (tuner/kcfg.c's gt_kcfg_wgmma_tma_store
// decides the same, sizing shared memory and passing C's tensor map only for EPI_TMA).
#if GT_GENERIC
constexpr bool EPI_TMA = false;
#else
constexpr bool EPI_TMA = WIDE && shape::M % 8 == 0 && SMEM_BASE + CW * 2 * EPI_BOX <= 232448;
#endif
constexpr int EPI_BYTES = EPI_TMA ? CW * 2 * EPI_BOX : 0;
constexpr int SMEM_BYTES = SMEM_BASE + EPI_BYTES;
static_assert(8 * (X3 ? 3 : 2) * STAGES <= 128, "mbarriers fit their 128 bytes");
// X3: the producer warpgroup's warps 1 to 3 write the low parts (split_stage).
constexpr int SPLITTERS = 96;
#ifdef GT_SMEM_CHECK
static_assert(GT_SMEM_CHECK == SMEM_BYTES, "caller's shared-memory size differs from the kernel's");
#endif

// PACK: gt_pack first copies an operand into the workspace, and the tensor maps read the
// copy (tuner/kcfg.c's gt_kcfg_pack_layout mirrors the layout): COPY as stored, with the
// leading dimension rounded up to 16 bytes, when the alignment class is under TMA's 16
// bytes (odd leading dimensions); TRANSPOSE (tf32, TPA/TPB) with k contiguous. In
// common.cuh's workspace layout (from ws_copies on): A's copy, then B's (pack_layout).
enum { P_NONE = 0, P_COPY = 1, P_TRANSPOSE = 2 };
constexpr bool UNALIGNED = VEC * ESI < 16;
constexpr int PMA = TPA ? P_TRANSPOSE : UNALIGNED ? P_COPY : P_NONE,
              PMB = TPB ? P_TRANSPOSE : UNALIGNED ? P_COPY : P_NONE;
// The copies' leading dimensions (lda, ldb, in elements) and workspace offsets (off_a,
// off_b, in bytes) for shape s. The copies of A and B as stored (shape's rows_ and
// cols_): a transposed one swaps rows and columns.
struct pack_layout {
    long long lda, ldb, off_a, off_b;
    __device__ __forceinline__ explicit pack_layout(const shape &s) {
        const long long pra = TPA ? s.cols_a() : s.rows_a(), pca = TPA ? s.rows_a() : s.cols_a();
        const long long prb = TPB ? s.cols_b() : s.rows_b();
        lda = pack_ld(pra, ESI);
        ldb = pack_ld(prb, ESI);
        off_a = ws_copies(s);
        off_b = off_a + (PMA ? pack_span(lda, pca, ESI) : 0);
    }
};

#if GT_DT == 2 || GT_DT == 7
#define WG_KIND "k8.f32.tf32.tf32"
#define WG_TNSP(a, b) ""
#elif GT_DT == 5 || GT_DT == 6
#define WG_KIND "k16.f32.bf16.bf16"
#define WG_TNSP(a, b) ", %" #a ", %" #b
#else
#define WG_KIND "k16.f32.f16.f16"
#define WG_TNSP(a, b) ", %" #a ", %" #b
#endif

// One wgmma of N = BM columns: d += A(desc da) * B(desc db), or with SD = 0 (the scale-d
// predicate false) d = A * B.
template <int N> struct wg;
template <> struct wg<64> {
    template <int SD = 1>
    static __device__ __forceinline__ void mma(float (&d)[32], unsigned long long da, unsigned long long db) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %36, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64" WG_KIND " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1" WG_TNSP(34, 35) ";\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
            : "l"(da), "l"(db), "n"(TNSP_A), "n"(TNSP_B), "n"(SD));
    }
};
template <> struct wg<128> {
    template <int SD = 1>
    static __device__ __forceinline__ void mma(float (&d)[64], unsigned long long da, unsigned long long db) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %68, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128" WG_KIND " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1" WG_TNSP(66, 67) ";\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
            : "l"(da), "l"(db), "n"(TNSP_A), "n"(TNSP_B), "n"(SD));
    }
};
template <> struct wg<192> {
    template <int SD = 1>
    static __device__ __forceinline__ void mma(float (&d)[96], unsigned long long da, unsigned long long db) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %100, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n192" WG_KIND " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1" WG_TNSP(98, 99) ";\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
            : "l"(da), "l"(db), "n"(TNSP_A), "n"(TNSP_B), "n"(SD));
    }
};
template <> struct wg<256> {
    template <int SD = 1>
    static __device__ __forceinline__ void mma(float (&d)[128], unsigned long long da, unsigned long long db) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %132, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256" WG_KIND " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1" WG_TNSP(130, 131) ";\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
            : "l"(da), "l"(db), "n"(TNSP_A), "n"(TNSP_B), "n"(SD));
    }
};

// Shared-memory matrix descriptor (PTX ISA, wgmma): start address, leading and stride
// byte offsets (each >> 4), 128-byte swizzle (mode 1 in bits 62-63).
__device__ __forceinline__ unsigned long long desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3ffff) >> 4) |
           ((unsigned long long)((lbo & 0x3ffff) >> 4) << 16) |
           ((unsigned long long)((sbo & 0x3ffff) >> 4) << 32) | (1ull << 62);
}

// ---- mbarriers ----
__device__ __forceinline__ void bar_init(unsigned a, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(a), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_expect(unsigned a, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(a), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void bar_arrive(unsigned a) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(a) : "memory");
}
__device__ __forceinline__ void bar_wait(unsigned a, unsigned parity) {
    unsigned ok = 0;
    while (!ok)
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(ok)
            : "r"(a), "r"(parity)
            : "memory");
}

// ---- TMA: one 2-D box at (c0 inner, c1 outer) into shared dst, completing on bar ----
struct alignas(64) tmap { unsigned long long w[16]; };  // CUtensorMap, opaque
__device__ __forceinline__ void tma_load(unsigned dst, const tmap *m, int c0, int c1, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        "[%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(m)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}

// TMA multicast: the same box into every block of mask (same shared offsets), completing
// on each one's mbarrier at bar's offset.
__device__ __forceinline__ void tma_load_mc(unsigned dst, const tmap *m, int c0, int c1, unsigned bar,
                                            unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(m)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
        : "memory");
}

// ---- clusters ----
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// Every thread of every block of the cluster (divergent threads allowed: not .aligned).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
// Arrive on the mbarrier at shared offset a of block `rank` of the cluster (release at the
// block's scope, as CUTLASS does: the wgmma that read the stage are complete; a cluster-scope
// release in every consumer warp is much slower).
__device__ __forceinline__ void bar_arrive_cluster(unsigned a, unsigned rank) {
    asm volatile(
        "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(a), "r"(rank)
        : "memory");
}

// The producer's copies of one stage (at shared address sa, completing on mbarrier fb):
// k step k0 of the tile at rows m0, columns n0, A's then B's. With clusters, block `rank`
// copies its part of B (BN / CL columns) into every block of the cluster.
__device__ __forceinline__ void load_stage(unsigned sa, unsigned fb, int m0, int n0, int k0,
                                           const tmap *tmA, const tmap *tmB, int rank) {
    const unsigned sb = sa + SA;
    bar_expect(fb, STAGE);
    if constexpr (KMA) {
        tma_load(sa, tmA, k0, m0, fb);
    } else {
#pragma unroll
        for (int c = 0; c < BM / 64; ++c) tma_load(sa + c * BK * 128, tmA, m0 + 64 * c, k0, fb);
    }
    constexpr int PART = BN / CL;  // B's columns per block
    if constexpr (CL == 1) {
        if constexpr (KMB) {
            tma_load(sb, tmB, k0, n0, fb);
        } else {
#pragma unroll
            for (int c = 0; c < BN / 64; ++c) tma_load(sb + c * BK * 128, tmB, n0 + 64 * c, k0, fb);
        }
    } else {
        constexpr unsigned short ALL = (1u << CL) - 1;
        if constexpr (KMB) {
            // Rows of 128 bytes: this block's part starts at row rank PART.
            tma_load_mc(sb + rank * PART * 128, tmB, k0, n0 + rank * PART, fb, ALL);
        } else {
#pragma unroll
            for (int c = 0; c < PART / 64; ++c) {
                const int ch = rank * (PART / 64) + c;
                tma_load_mc(sb + ch * BK * 128, tmB, n0 + 64 * ch, k0, fb, ALL);
            }
        }
    }
}

// Two values rounded to 16-bit C, as one 32-bit word (the lower row first). Only WIDE
// calls it (16-bit C).
__device__ __forceinline__ unsigned pack2(float a, float b) { return from2<TC>(a, b); }
__device__ __forceinline__ unsigned pick4(const unsigned (&w)[4], int i) {
    return i == 0 ? w[0] : i == 1 ? w[1] : i == 2 ? w[2] : w[3];
}
// WIDE epilogue for 4 blocks of 8 rows (j = 4q .. 4q + 3) of one column: lane t of a quad
// holds w[u] = rows 8 (4q + u) + 2t, + 1 (PTX's D layout); after a 4 x 4 exchange among
// the quad (3 shuffles) it holds the 8 rows 8 (4q + t) .. + 7 and stores them as 16 bytes
// at col + r0, r0 = m0 + 32 q + 8 t (rows past M one by one; M_EXACT: the caller knows
// none lies past it). Every lane must call it.
template <bool M_EXACT>
__device__ __forceinline__ void wide_store(TC *col, bool n_in, int r0, const unsigned (&w)[4], int t,
                                           long long M) {
    unsigned o[4] = {w[0], w[1], w[2], w[3]};
#pragma unroll
    for (int r = 1; r < 4; ++r) {
        const unsigned got = __shfl_xor_sync(0xffffffffu, pick4(w, t ^ r), r);
#pragma unroll
        for (int k = 0; k < 4; ++k) o[k] = k == (t ^ r) ? got : o[k];
    }
    if (!n_in) return;
    if (M_EXACT || r0 + 7 < M) {
        *reinterpret_cast<uint4 *>(col + r0) = make_uint4(o[0], o[1], o[2], o[3]);
    } else {
        unsigned short *h = reinterpret_cast<unsigned short *>(col);
#pragma unroll
        for (int e = 0; e < 8; ++e)
            if (r0 + e < M) h[r0 + e] = (unsigned short)(o[e / 2] >> (16 * (e % 2)));
    }
}

// ---- the TMA-store epilogue (EPI_TMA) ----
// Four 8 x 8 matrices of 16-bit values from registers to shared memory: lanes 8q .. 8q + 7
// give the addresses of matrix q's rows, r[q] is this lane's pair of matrix q (row lane / 4,
// columns 2 (lane % 4), + 1).
__device__ __forceinline__ void stmatrix4(unsigned a, const unsigned (&r)[4]) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}
// Shared-memory writes made visible to the async proxy (the TMA store that reads them).
__device__ __forceinline__ void fence_async_smem() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// One box from shared memory at src to C at (m, n); the store joins this thread's bulk group.
__device__ __forceinline__ void tma_store(const tmap *m, unsigned src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                     reinterpret_cast<unsigned long long>(m)),
                 "r"(src), "r"(c0), "r"(c1)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// This thread's committed stores have read their shared memory (READ) or are complete.
template <bool READ> __device__ __forceinline__ void bulk_wait_all() {
    if constexpr (READ) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    else asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
// The 128 threads of consumer warpgroup cw (named barriers 2, 3; 1 is split-K's).
__device__ __forceinline__ void warpgroup_sync(int cw) {
    asm volatile("bar.sync %0, 128;\n" ::"r"(2 + cw) : "memory");
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int P> __device__ __forceinline__ void wg_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(P) : "memory");
}

// X3: the low parts of the stage at shared address sa into its copy at sa + LOW; thread
// ct of NC threads takes every NC-th 16 bytes.
template <int NC> __device__ __forceinline__ void split_stage(unsigned sa, int ct) {
#pragma unroll 2
    for (int i = ct; i < STAGE / 16; i += NC) {
        const unsigned a = sa + 16 * i;
        unsigned v[4];
        asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                     : "r"(a));
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(a + LOW), "r"(low_part(v[0])),
                     "r"(low_part(v[1])), "r"(low_part(v[2])), "r"(low_part(v[3]))
                     : "memory");
    }
}

}  // namespace wgm
}  // namespace gt

extern "C" __global__ void __launch_bounds__(gt::wgm::NTW, 1)
    gt_gemm(const gt::TI *__restrict__ A, long long lda, const gt::TI *__restrict__ B,
            long long ldb, gt::TC *__restrict__ C, long long ldc, float alpha, float beta,
            float *ws, const __grid_constant__ gt::wgm::tmap tmA,
            const __grid_constant__ gt::wgm::tmap tmB, const __grid_constant__ gt::wgm::tmap tmC,
            long long gt_m, long long gt_n, long long gt_k) {
    using namespace gt;
    using namespace gt::wgm;
    (void)A, (void)B, (void)lda, (void)ldb, (void)ws;
    const shape sh(gt_m, gt_n, gt_k);
    const long long M = sh.M, N = sh.N;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    // TMA's 128-byte swizzle and the descriptors assume 1024-byte aligned tiles.
    const unsigned base = (saddr(smem_raw) + 1023u) & ~1023u;
    const unsigned epi0 = base + TILES, full0 = epi0 + EPI_BYTES, empty0 = full0 + 8 * STAGES;
    const unsigned ready0 = empty0 + 8 * STAGES;  // X3: a stage's low parts are written

    const int tid = threadIdx.x, wgi = tid / 128;
    // Work units: CL vertically adjacent tiles, one per block of a cluster (gt::tile_of's
    // order over GMC x GN units). With GM odd, a cluster's last block may get a tile past
    // M: it still loads its part of B for the other, computes zeros and stores nothing.
    const int GMC = (sh.GM + CL - 1) / CL, UNITS = GMC * sh.GN;
    const int rank = CL > 1 ? (int)cluster_rank() : 0;
    const int unit0 = blockIdx.x / CL, unit_step = gridDim.x / CL;
    // This block's K steps: split z of SPLIT.
    const int z = SPLIT > 1 ? (int)blockIdx.y : 0, kbeg = z * sh.KPS;
    const int nk = SPLIT == 1 ? sh.KT : (sh.KT - kbeg < sh.KPS ? sh.KT - kbeg : sh.KPS);

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(full0 + 8 * s, 1);
            // Every consumer warp of every block of the cluster releases a stage: the
            // other blocks' copies of B write into it too.
            bar_init(empty0 + 8 * s, 4 * CW * CL);
            if constexpr (X3) bar_init(ready0 + 8 * s, SPLITTERS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // The cluster's mbarriers are ready before any block copies into another.
    if constexpr (CL > 1) cluster_sync(); else __syncthreads();

    if (wgi == 0) {
        // Producer. Its registers go to the consumers.
        if constexpr (CW == 2) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0) {
            int st = 0, it = 0;
            unsigned ph = 0;
            for (int u = unit0; u < UNITS; u += unit_step) {
                int imc, in;
                tile_of(GMC, sh.GN, u, imc, in);
                const int m0 = (imc * CL + rank) * BM, n0 = in * BN;
                for (int kt = kbeg; kt < kbeg + nk; ++kt, ++it) {
                    if (it >= STAGES) bar_wait(empty0 + 8 * st, ph ^ 1);
                    load_stage(base + st * STAGE, full0 + 8 * st, m0, n0, kt * BK, &tmA, &tmB, rank);
                    if (++st == STAGES) st = 0, ph ^= 1;
                }
            }
        } else if (X3 && tid >= 32) {
            // X3: warps 1 to 3 write each stage's low parts once it has landed, then make
            // them visible to the tensor cores (the async proxy) and say so on ready[s].
            // They cannot run a round ahead: the stage is refilled only after the
            // consumers, who wait for ready, release it.
            int st = 0;
            unsigned ph = 0;
            for (int u = unit0; u < UNITS; u += unit_step)
                for (int kt = 0; kt < nk; ++kt) {
                    bar_wait(full0 + 8 * st, ph);
                    split_stage<SPLITTERS>(base + st * STAGE, tid - 32);
                    fence_async_smem();
                    bar_arrive(ready0 + 8 * st);
                    if (++st == STAGES) st = 0, ph ^= 1;
                }
        }
    } else {
        // Consumers.
        if constexpr (CW == 2) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        const int cw = wgi - 1, warp = (tid / 32) % 4, lane = tid % 32;
        // Descriptor pieces: the instruction's A (64 n rows of op(B)), B (BM m rows of op(A)).
        constexpr unsigned A_LBO = KMB ? 16 : BK * 128, B_LBO = KMA ? 16 : BK * 128;
        constexpr unsigned SLICE_A = KMB ? 32 : KS * 128, SLICE_B = KMA ? 32 : KS * 128;
        // No tile row lies past M (every cluster's tiles are inside), no column past N.
#if GT_GENERIC
        constexpr bool M_EXACT = false, N_EXACT = false;
#else
        constexpr bool M_EXACT = shape::M_DIV && shape::GM % CL == 0, N_EXACT = shape::N_DIV;
#endif
        const int g = lane >> 2, t = lane & 3;
        // A stage is free once every consumer warp of the cluster is done with it.
        auto release = [&](int s) {
            if (lane != 0) return;
            if constexpr (CL == 1) {
                bar_arrive(empty0 + 8 * s);
            } else {
#pragma unroll
                for (int r = 0; r < CL; ++r) bar_arrive_cluster(empty0 + 8 * s, (unsigned)r);
            }
        };
        int st = 0;
        unsigned ph = 0;
        // EPI_TMA: this warpgroup's staging boxes, used in turn (round counts them across
        // tiles); its thread 0 issues the stores.
        const unsigned ebuf = epi0 + cw * 2 * EPI_BOX;
        const bool eleader = tid % 128 == 0;
        unsigned round = 0;
        for (int u = unit0; u < UNITS; u += unit_step) {
            int imc, in;
            tile_of(GMC, sh.GN, u, imc, in);
            const int m0 = (imc * CL + rank) * BM, n0 = in * BN;
            float acc[TN][RA];
#pragma unroll
            for (int i = 0; i < TN; ++i)
#pragma unroll
                for (int e = 0; e < RA; ++e) acc[i][e] = 0.0f;

            // One K step into d: wait for the stage, issue its instructions as one group.
            // X3: d is a fresh partial sum (its first instruction does not accumulate).
            auto kstep = [&](float(&d)[TN][RA]) {
                const unsigned sa = base + st * STAGE, sb = sa + SA;
                bar_wait((X3 ? ready0 : full0) + 8 * st, ph);
                wg_fence();
#pragma unroll
                for (int s = 0; s < NS; ++s) {
                    const unsigned long long db = desc(sa + s * SLICE_B, B_LBO, 1024);
#pragma unroll
                    for (int i = 0; i < TN; ++i) {
                        // 64 rows of n: K-major, rows of 128 bytes; MN-major, one chunk.
                        const unsigned row = (unsigned)(cw * TN + i) * (KMB ? 64 * 128 : BK * 128);
                        const unsigned long long da = desc(sb + row + s * SLICE_A, A_LBO, 1024);
                        if constexpr (X3) {
                            const unsigned long long da_lo = desc(sb + LOW + row + s * SLICE_A, A_LBO, 1024);
                            if (s == 0) wg<BM>::template mma<0>(d[i], da_lo, db);
                            else wg<BM>::mma(d[i], da_lo, db);
                            wg<BM>::mma(d[i], da, desc(sa + LOW + s * SLICE_B, B_LBO, 1024));
                        }
                        wg<BM>::mma(d[i], da, db);
                    }
                }
                wg_commit();
            };
            if constexpr (X3) {
                // The tensor cores round each instruction's sum toward zero: over a long K
                // that bias grows with K (relative error 2.9e-5 at 4096^3 and 1.2e-4 at
                // 1024 x 1024 x 32768 against cuBLAS's fp32 when one accumulator took every
                // K step, H100). So each K step sums into a partial of its own, added to acc
                // in fp32 (round to nearest) once complete, as DeepSeek-V3 does for fp8.
                // The wait is for all of it (reading the partial with another group in
                // flight serializes every wgmma, ptxas C7514); the two consumer warpgroups,
                // each at its own pace since the low parts are the producer's work, fill
                // each other's gaps.
                float part[TN][RA];
                for (int kt = 0; kt < nk; ++kt) {
                    kstep(part);
                    wg_wait<0>();
                    release(st);
                    if (++st == STAGES) st = 0, ph ^= 1;
#pragma unroll
                    for (int i = 0; i < TN; ++i)
#pragma unroll
                        for (int e = 0; e < RA; ++e) {
                            // Not before the wait: the instructions write the partial
                            // asynchronously, which the compiler does not know (CUTLASS's
                            // warpgroup_fence_operand).
                            asm volatile("" : "+f"(part[i][e])::"memory");
                            acc[i][e] += part[i][e];
                        }
                }
            } else {
                for (int kt = 0; kt < nk; ++kt) {
                    kstep(acc);
                    // This stage's group may still run; the previous one is done: release it.
                    wg_wait<1>();
                    if (kt > 0) release(st == 0 ? STAGES - 1 : st - 1);
                    if (++st == STAGES) st = 0, ph ^= 1;
                }
                wg_wait<0>();
                // The tile's last stage is free: the producer may fill it during the epilogue.
                release(st == 0 ? STAGES - 1 : st - 1);
            }
            if constexpr (SPLIT > 1) {
                const int im = imc * CL + rank;
                if (im >= sh.GM) continue;  // a cluster's tile past M: nothing to store
                // Consumers only (named barrier 1): the producer warpgroup takes no part.
                if (!splitk_reduce<TN * RA, 128 * CW, 1>(sh, reinterpret_cast<float(&)[TN * RA]>(acc), ws,
                                                         im + in * sh.GM, z, tid - 128))
                    continue;
            }

            // Epilogue: d[4 j + 2 h + e] is C(m0 + 8 j + 2 t + e, n0 + 64 (cw TN + i) + 16 w + 8 h + g).
            if constexpr (EPI_TMA) {
                // Per 64 x 64 box of C (rows m0 + 64 jm, columns of instruction i): the
                // warpgroup writes it to a staging box as TMA's 128-byte swizzle lays it out
                // (row n of 128 bytes of m, 16-byte chunk c at c ^ (n % 8)) with stmatrix, the
                // 8 x 8 matrices being (j, h) pairs: rows n = 16 w + 8 h + 0..7, 8 m of j. Then
                // thread 0 stores it by TMA, which writes nothing past M or N. Before the
                // barrier it waits until the previous box's store has read its staging box,
                // which the box after this one reuses: one barrier per box, and the store of
                // the last box of a tile runs on under the next tile's main loop.
                const int q = lane >> 3, rr = lane & 7;
                const unsigned row = (unsigned)(16 * warp + 8 * (q & 1) + rr) * 128;
#pragma unroll
                for (int i = 0; i < TN; ++i) {
#pragma unroll
                    for (int jm = 0; jm < BM / 64; ++jm, ++round) {
                        const unsigned box = ebuf + (round & 1) * EPI_BOX;
#pragma unroll
                        for (int p = 0; p < 4; ++p) {
                            // Matrices (j, 0), (j, 1), (j + 1, 0), (j + 1, 1), j = 8 jm + 2 p.
                            const float *a = &acc[i][4 * (8 * jm + 2 * p)];
                            unsigned r[4];
#pragma unroll
                            for (int v = 0; v < 4; ++v) r[v] = pack2(alpha * a[2 * v], alpha * a[2 * v + 1]);
                            stmatrix4(box + row + ((unsigned)((2 * p + (q >> 1)) ^ rr) << 4), r);
                        }
                        fence_async_smem();
                        if (eleader) bulk_wait_all<true>();
                        warpgroup_sync(cw);
                        if (eleader) {
                            tma_store(&tmC, box, m0 + 64 * jm, n0 + 64 * (cw * TN + i));
                            bulk_commit();
                        }
                    }
                }
            } else {
                // mex (ic<1>): no row of the tile lies past M. An exact kernel knows whether
                // that holds for every tile (M_EXACT); a generic one asks per tile, so
                // interior tiles store without per-row checks.
                auto store_regs = [&](auto mex) {
                    constexpr bool MX = decltype(mex)::value != 0;
#pragma unroll
                    for (int i = 0; i < TN; ++i) {
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const int n = n0 + 64 * (cw * TN + i) + 16 * warp + 8 * h + g;
                            if constexpr (WIDE) {
                                TC *col = C + (long long)n * ldc;
#pragma unroll
                                for (int q = 0; q < BM / 32; ++q) {
                                    unsigned w[4];
#pragma unroll
                                    for (int v = 0; v < 4; ++v) {
                                        const float *a = &acc[i][4 * (4 * q + v) + 2 * h];
                                        w[v] = pack2(alpha * a[0], alpha * a[1]);
                                    }
                                    wide_store<MX>(col, N_EXACT || n < N, m0 + 32 * q + 8 * t, w, t, M);
                                }
                                continue;
                            }
                            if (!N_EXACT && n >= N) continue;
                            TC *col = C + (long long)n * ldc;
#pragma unroll
                            for (int j = 0; j < BM / 8; ++j) {
                                store_rows2<MX, PAIR>(sh, col, m0 + 8 * j + 2 * t, &acc[i][4 * j + 2 * h],
                                                      alpha, beta);
                            }
                        }
                    }
                };
#if GT_GENERIC
                if (m0 + BM <= M) store_regs(ic<1>());
                else store_regs(ic<0>());
#else
                store_regs(ic<M_EXACT>());
#endif
            }
        }
    }
    // A block's TMA stores are complete (so done reading its shared memory) before it leaves.
    if constexpr (EPI_TMA) {
        if (wgi > 0 && tid % 128 == 0) bulk_wait_all<false>();
    }
    // No block leaves while another may still copy into its shared memory or arrive on
    // its mbarriers.
    if constexpr (CL > 1) cluster_sync();
}

// The copies (PACK), blockIdx.y 0 for A, 1 for B. COPY: common.cuh's pack_copy.
// TRANSPOSE: one block per 32 x 32 tile, through shared memory, both sides coalesced.
extern "C" __global__ void __launch_bounds__(256)
    gt_pack(const gt::TI *__restrict__ A, long long lda, const gt::TI *__restrict__ B,
            long long ldb, unsigned char *ws, long long gt_m, long long gt_n, long long gt_k) {
    using namespace gt;
    using namespace gt::wgm;
    typedef typename pick<ESI == 2, unsigned short, unsigned>::type W;
    const shape sh(gt_m, gt_n, gt_k);
    const pack_layout pl(sh);
    const bool a = blockIdx.y == 0;
    const int mode = a ? PMA : PMB;
    const long long rows = a ? sh.rows_a() : sh.rows_b(), cols = a ? sh.cols_a() : sh.cols_b();
    const long long ld = a ? lda : ldb, ldp = a ? pl.lda : pl.ldb;
    const W *src = reinterpret_cast<const W *>(a ? A : B);
    W *dst = reinterpret_cast<W *>(ws + (a ? pl.off_a : pl.off_b));
    if (mode == P_COPY) {
        pack_copy<W>(src, ld, rows, cols, dst, ldp);
    } else if (mode == P_TRANSPOSE) {
        // dst(c, r) = src(r, c): the copy has `cols` rows (contiguous) and `rows` columns.
        __shared__ W tile[32][33];
        const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
        const long long tr = (rows + 31) / 32, tiles = tr * ((cols + 31) / 32);
        for (long long u = blockIdx.x; u < tiles; u += gridDim.x) {
            const long long r0 = (u % tr) * 32, c0 = (u / tr) * 32;
            __syncthreads();
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const long long r = r0 + tx, c = c0 + ty + 8 * q;
                if (r < rows && c < cols) tile[ty + 8 * q][tx] = src[c * ld + r];
            }
            __syncthreads();
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const long long c = c0 + tx, r = r0 + ty + 8 * q;
                if (r < rows && c < cols) dst[r * ldp + c] = tile[tx][ty + 8 * q];
            }
        }
    }
}
#endif
