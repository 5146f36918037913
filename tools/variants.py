"""variants.py: named edits of the kernel sources for tools/variants.sh (experiments only:
each answers one question about where the time goes). Usage: variants.py NAME TREE."""
import sys

W = "kernel_src/gemm_wgmma.cu"
EDITS = {
    # The epilogue left out: the upper bound of what a faster epilogue can gain.
    "noepi": (W, "            // Epilogue: d[4 j + 2 h + e]",
              "            if (alpha != 0.0f) continue;\n            // Epilogue: d[4 j + 2 h + e]"),
    # The epilogue's work kept, its stores left out (a value random data never gives).
    "nostore": (W, "    if (!n_in) return;", "    if (!n_in || o[0] != 0x7fc17fc1u) return;"),
    # f32_3xtf32's MMA kernels ranked first (their rate in the model times 8), so that a
    # tuning times and verifies them whatever the model thinks of them.
    "mma3first": ("tuner/space.c", "rate = SM_HMMA_PER_US * 0.5 / 3.0 * 1.1;",
                  "rate = SM_HMMA_PER_US * 0.5 / 3.0 * 1.1 * 8.0;"),
    # Experiments on f32_3xtf32's MMA kernels, each on top of mma3first: the three
    # instructions accumulate straight into acc (no partial per k slice); the low parts
    # not computed (wrong results: the cost of splitting).
    "mma3nopart": ("kernel_src/gemm_mma.cu", """                    float p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    mma_op(p, la[j], fb[b][i]);
                    mma_op(p, fa[b][j], lb[i]);
                    mma_op(p, fa[b][j], fb[b][i]);
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[(i * TN + j) * 4 + e] += p[e];""",
                   """                    float *p = &acc[(i * TN + j) * 4];
                    mma_op(p, la[j], fb[b][i]);
                    mma_op(p, fa[b][j], lb[i]);
                    mma_op(p, fa[b][j], fb[b][i]);"""),
    # cp.async with an L2 prefetch hint (the L2 fetches the whole 128- or 256-byte
    # segment around each 16-byte copy): does DRAM move more on the bytes-bound shapes?
    "l2p128": ("kernel_src/common.cuh", "cp.async.cg.shared.global [%0]", "cp.async.cg.shared.global.L2::128B [%0]"),
    "l2p256": ("kernel_src/common.cuh", "cp.async.cg.shared.global [%0]", "cp.async.cg.shared.global.L2::256B [%0]"),
    # Split-K's reduction left out (no block is last; C is never written): what the
    # serial reduction by the last block of each tile costs.
    "noreduce": ("kernel_src/common.cuh", "last = arrived == SPLIT - 1;", "last = arrived == 0xffffffffu;"),
    # Split-K's reduction in one level whatever the splits (as before the two levels).
    "flat": ("src/kcfg.c", "    if (c->split <= 8) return c->split < 1 ? 1 : c->split;",
             "    if (c->split <= 64) return c->split < 1 ? 1 : c->split;"),
    # Split-K's arrival with a fence in every thread (before the acquire-release atomic).
    "fences": ("kernel_src/common.cuh", "#if __CUDA_ARCH__ >= 700\n    splitk_sync<BAR, P>();", "#if 0\n    splitk_sync<BAR, P>();"),
    "mma3nolow": ("kernel_src/gemm_mma.cu", "la[j][v] = low_part(fa[b][j][v]);", "la[j][v] = fa[b][j][v];"),
}

def main():
    name, tree = sys.argv[1], sys.argv[2]
    path, old, new = EDITS[name]
    p = f"{tree}/{path}"
    s = open(p).read()
    if s.count(old) != 1:
        sys.exit(f"variants.py: {name}: the text to replace is not in {path} exactly once")
    open(p, "w").write(s.replace(old, new))

main()
