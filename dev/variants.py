"""variants.py: named edits of the sources for dev/variants.sh and dev/gpu_dev.sh's mma3
(experiments only: each answers one question about where the time goes).

Usage: variants.py TREE [NAME...]: TREE becomes a fresh copy of the repository (build
directories and outputs left out) with the named edits applied in order ("base": none).
An edit replaces one text that must occur exactly once in its file: when the source
changes under it, it fails rather than patch the wrong place."""
import os
import shutil
import sys

W = "kernel_src/gemm_wgmma.cu"
EDITS = {
    # The SIMT launch bound without its count of copies under 16 bytes (the bound before
    # it counted them): narrow tiles such as f32 4099x257x3001 TT's 96 x 24 with 6 x 6
    # threads spill again (112 bytes at 128 registers), for a side by side with "base".
    "minbold": ("tuner/kcfg.c", "    if (c->vec * esize(key) < 16)\n", "    if (0)\n"),
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
    "noreduce": ("kernel_src/common.cuh", "last = arrived == of - 1;", "last = arrived == 0xffffffffu;"),
    # Split-K's reduction in one level whatever the splits.
    "flat": ("tuner/kcfg.c", "    if (c->split <= 8) return c->split < 1 ? 1 : c->split;",
             "    if (c->split <= 64) return c->split < 1 ? 1 : c->split;"),
    "mma3nolow": ("kernel_src/gemm_mma.cu", "la[j][v] = low_part(fa[b][j][v]);", "la[j][v] = fa[b][j][v];"),
}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def skip(d, names):
    """Not copied: the top level's build directories, script outputs and version control."""
    if os.path.abspath(d) != ROOT:
        return [n for n in names if n == "__pycache__"]
    return [n for n in names if n.startswith("build") or n.endswith("-out") or n in (".git", ".device")]


def apply(tree, name):
    path, old, new = EDITS[name]
    p = os.path.join(tree, path)
    s = open(p).read()
    if s.count(old) != 1:
        sys.exit(f"variants.py: {name}: the text to replace is not in {path} exactly once")
    open(p, "w").write(s.replace(old, new))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tree, names = sys.argv[1], sys.argv[2:]
    unknown = [n for n in names if n != "base" and n not in EDITS]
    if unknown:
        sys.exit(f"variants.py: unknown edit(s) {' '.join(unknown)}; known: {' '.join(sorted(EDITS))}")
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(ROOT, tree, ignore=skip)
    for name in names:
        if name != "base":
            apply(tree, name)


if __name__ == "__main__":
    main()
