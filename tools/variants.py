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
