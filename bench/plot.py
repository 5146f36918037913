#!/usr/bin/env python3
"""plot.py: a bar chart of gemmtune-bench results, ratio to cuBLAS per shape, as a PNG.

Usage: python3 bench/plot.py [--ref cublas|cublaslt|both] OUT.png A.json [B.json ...]

Each JSON file is one `gemmtune-bench --json` run of one dtype (f32, f64, tf32, f16,
f16_f32, bf16, bf16_f32, f32_3xtf32; files without a "dtype" field are f32). --ref picks
the reference: cublas (the default: "ratio", cuBLAS's default algorithm), cublaslt
("ratio_lt", the best cuBLASLt algorithm of the heuristic's list), or both (two bars per
file). One horizontal bar per shape and series (a file against a reference), grouped by
shape (shapes in the order of the first file, then any new ones of later files), one
colour per series with a legend that names each file's dtype (and the file where two share
one), the reference where both are drawn, and the geomean; the subtitle lists the dtypes.
The x axis is log2: a bar starts at the line ratio = 1 and goes right when gemmtune is
faster (ratio = reference time / gemmtune time > 1), left when it is slower, so 2x faster
and 2x slower are bars of equal length. A shape that failed is marked FAIL; one that
passed without a cuBLASLt time is marked n/a. Files without cuBLASLt figures have no
cuBLASLt series.

Standard library only: the PNG is written with zlib and struct, the text with a built-in
5x7 bitmap font.
"""
import json
import math
import os
import struct
import sys
import zlib

# ---- 5x7 font (5x8 with the descenders of g j p q y): 5 column bytes per character,
# bit 0 at the top, ASCII 0x20..0x7E ----
_FONT_HEX = (
    "0000000000 00005f0000 0007000700 147f147f14 242a7f2a12 2313086462 3649552250 0005030000"
    " 001c224100 0041221c00 142a1c2a14 08083e0808 0050300000 0808080808 0060600000 2010080402"
    " 3e5149453e 00427f4000 4261514946 2141454b31 1814127f10 2745454539 3c4a494930 0171090503"
    " 3649494936 064949291e 0036360000 0056360000 0814142222 1414141414 2222141408 0201510906"
    " 3249794136 7e1111117e 7f49494936 3e41414122 7f4141221c 7f49494941 7f09090101 3e41415132"
    " 7f0808087f 00417f4100 2040413f01 7f08142241 7f40404040 7f0204027f 7f0408107f 3e4141413e"
    " 7f09090906 3e4151215e 7f09192946 4649494931 01017f0101 3f4040403f 0718601807 7f2018207f"
    " 6314081463 0304780403 6151494543 007f414100 0204081020 0041417f00 0402010204 4040404040"
    " 0001020400 2054545478 7f48444438 3844444420 384444487f 3854545418 087e090102 98a4a4a47c"
    " 7f08040478 00447d4000 4080807d00 007f102844 00417f4000 7c04180478 7c08040478 3844444438"
    " fc24242418 18242424fc 7c08040408 4854545420 043f444020 3c4040207c 0c3040300c 3c4030403c"
    " 4428102844 9ca0a0a07c 4464544c44 0008364100 00007f0000 0041360800 0201020402"
)
FONT = {chr(0x20 + i): bytes.fromhex(h) for i, h in enumerate(_FONT_HEX.split())}
GLYPH_W, GLYPH_H, ADVANCE = 5, 8, 6  # pixels at scale 1 (row 7: descenders); ADVANCE has the gap


class Canvas:
    """An RGB image in a bytearray, with rectangles and text."""

    def __init__(self, w, h, bg=(255, 255, 255)):
        self.w, self.h = w, h
        self.px = bytearray(bytes(bg) * (w * h))

    def rect(self, x0, y0, x1, y1, c):
        """Fill [x0, x1) x [y0, y1), clipped to the image."""
        x0, x1 = max(0, int(round(x0))), min(self.w, int(round(x1)))
        y0, y1 = max(0, int(round(y0))), min(self.h, int(round(y1)))
        if x0 >= x1 or y0 >= y1:
            return
        row = bytes(c) * (x1 - x0)
        for y in range(y0, y1):
            o = (y * self.w + x0) * 3
            self.px[o:o + len(row)] = row

    def text(self, x, y, s, c=(0, 0, 0), scale=2):
        """Draw s with its top-left corner at (x, y); unknown characters print as '?'."""
        for i, ch in enumerate(s):
            cols = FONT.get(ch, FONT["?"])
            gx = x + i * ADVANCE * scale
            for cx, bits in enumerate(cols):
                for cy in range(GLYPH_H):
                    if bits >> cy & 1:
                        self.rect(gx + cx * scale, y + cy * scale, gx + (cx + 1) * scale,
                                  y + (cy + 1) * scale, c)

    def png(self, path):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3])
                       for y in range(self.h))

        def chunk(kind, data):
            return (struct.pack(">I", len(data)) + kind + data +
                    struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
            f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)))
            f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
            f.write(chunk(b"IEND", b""))


def text_w(s, scale=2):
    return len(s) * ADVANCE * scale - scale if s else 0


COLORS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
          (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]
BLACK, GREY, LIGHT, RED = (0, 0, 0), (110, 110, 110), (225, 225, 225), (200, 0, 0)


def shape_key(r):
    return (r["m"], r["n"], r["k"], r.get("opa", "N"), r.get("opb", "N"))


def shape_label(key):
    m, n, k, a, b = key
    return "%dx%dx%d %s%s" % (m, n, k, a, b)


def uniq(xs):
    out = []
    for x in xs:
        if x and x not in out:
            out.append(x)
    return out


def load(paths):
    runs = []
    for p in paths:
        try:
            with open(p) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            raise SystemExit("plot.py: %s: %s" % (p, e))
        if not isinstance(d, dict) or not isinstance(d.get("shapes"), list):
            raise SystemExit("plot.py: %s: no \"shapes\" list (not a gemmtune-bench JSON?)" % p)
        d["_path"] = p
        runs.append(d)
    return runs


# The references: the per-shape ratio key, the geomean key, the name in labels.
REFS = {"cublas": ("ratio", "geomean_ratio", "cuBLAS"),
        "cublaslt": ("ratio_lt", "geomean_ratio_lt", "cuBLASLt best")}


def make_series(runs, refs):
    """(label, ratio by shape, ok by shape) per file and reference, files first; a file
    without the reference's ratio key (written before cuBLASLt was measured) is left out."""
    dtypes = [r.get("dtype", "f32") for r in runs]
    series = []
    for r, dt in zip(runs, dtypes):
        name = dt if dtypes.count(dt) == 1 else "%s %s" % (
            dt, os.path.splitext(os.path.basename(r["_path"]))[0])
        for ref in refs:
            key, gkey, rname = REFS[ref]
            if not any(key in s for s in r["shapes"]):
                continue
            g = r.get(gkey)
            label = name + (" vs " + rname if len(refs) > 1 else "")
            label += "  (geomean %.3f)" % g if isinstance(g, (int, float)) else ""
            ratio = {shape_key(s): s.get(key) for s in r["shapes"]}
            ok = {shape_key(s): s.get("ok", s.get("ratio") is not None) for s in r["shapes"]}
            series.append((label, ratio, ok))
    return series


def plot(out, runs, refs):
    keys = []
    for r in runs:
        for s in r["shapes"]:
            if shape_key(s) not in keys:
                keys.append(shape_key(s))
    series = make_series(runs, refs)
    if not series:
        raise SystemExit("plot.py: no file has the ratios asked for (--ref %s)" % "/".join(refs))
    # ratio[series][shape]: a number, None (failed or not measured), or missing (not in
    # that file)
    ratio = [sr[1] for sr in series]
    vals = [v for d in ratio for v in d.values() if isinstance(v, (int, float)) and v > 0]
    lo = 2.0 ** math.floor(math.log2(min(vals + [0.5])))
    hi = 2.0 ** math.ceil(math.log2(max(vals + [2.0])))

    S = 2                                    # text scale: 10x14-pixel glyphs
    nf = len(series)
    bar_h, gap = 19, 12
    label_w = max(text_w(shape_label(k), S) for k in keys) + 20
    pad = text_w("0.000 ", S) + 6            # room for a value beside the longest bar
    refname = "cuBLAS and cuBLASLt" if len(refs) > 1 else REFS[refs[0]][2]
    title = "gemmtune vs %s: ratio = %s time / gemmtune time (> 1: gemmtune faster)" % (
        refname, "reference" if len(refs) > 1 else REFS[refs[0]][2])
    gpus = uniq("%s (cc %s, %s SMs)" % (r["gpu"].get("name", "?"), r["gpu"].get("cc", "?"),
                                         r["gpu"].get("sms", "?"))
                if isinstance(r.get("gpu"), dict) else None for r in runs)
    dates = uniq((r.get("date") or "")[:10] for r in runs)
    dtypes = uniq(r.get("dtype", "f32") for r in runs)
    subtitle = "  |  ".join([", ".join(dtypes), "; ".join(gpus) or "GPU ?",
                             ", ".join(dates) or "date ?"])
    W = max(1100, label_w + 2 * pad + 700, text_w(title, S) + 20, text_w(subtitle, S) + 20)
    # legend entries flow left to right and wrap
    legend, lx, ly = [], 10, 0
    for i, lab in enumerate(sr[0] for sr in series):
        w = 22 + text_w(lab, S) + 30
        if lx > 10 and lx + w > W - 10:
            lx, ly = 10, ly + 22
        legend.append((lx, ly, lab))
        lx += w
    title_h, legend_h, axis_h = 64, ly + 40, 64
    top = title_h + legend_h
    group_h = nf * bar_h + gap
    H = top + len(keys) * group_h + axis_h
    xa, xb = label_w + pad, W - pad - 10     # where lo and hi fall
    frame0, frame1 = label_w, W - 10

    def X(v):
        return xa + (math.log2(v) - math.log2(lo)) / (math.log2(hi) - math.log2(lo)) * (xb - xa)

    c = Canvas(W, H)
    # title: what is plotted, then dtype / GPU / date from the JSON files
    c.text(10, 10, title, BLACK, S)
    c.text(10, 36, subtitle, GREY, S)
    for i, (lx, ly, lab) in enumerate(legend):
        y = title_h + 4 + ly
        c.rect(lx, y, lx + 14, y + 14, COLORS[i % len(COLORS)])
        c.text(lx + 22, y, lab, BLACK, S)

    # grid: a line at each power of two, a fainter one at 1.5 times each
    plot_y0, plot_y1 = top, top + len(keys) * group_h
    e = math.log2(lo)
    while 2.0 ** e <= hi * 1.0001:
        v = 2.0 ** e
        c.rect(X(v), plot_y0, X(v) + 1, plot_y1, LIGHT)
        if v * 1.5 < hi:
            c.rect(X(v * 1.5), plot_y0, X(v * 1.5) + 1, plot_y1, (242, 242, 242))
        t = ("%g" % v)
        c.rect(X(v), plot_y1, X(v) + 1, plot_y1 + 6, BLACK)
        c.text(X(v) - text_w(t, S) / 2, plot_y1 + 10, t, BLACK, S)
        e += 1
    axis_label = "ratio to %s, log2 scale (bars start at 1; right = gemmtune faster)" % refname
    c.text((frame0 + frame1 - text_w(axis_label, S)) / 2, plot_y1 + 34, axis_label, GREY, S)

    # bars
    x1 = X(1.0)
    for gi, key in enumerate(keys):
        gy = top + gi * group_h + gap // 2
        lab = shape_label(key)
        c.text(label_w - 12 - text_w(lab, S), gy + (nf * bar_h - GLYPH_H * S) / 2, lab, BLACK, S)
        for fi in range(nf):
            y0 = gy + fi * bar_h
            y1 = y0 + bar_h - 2
            ty = y0 + (bar_h - 2 - GLYPH_H * S) / 2
            if key not in ratio[fi]:
                continue
            v = ratio[fi][key]
            if not isinstance(v, (int, float)) or v <= 0:
                if series[fi][2].get(key):
                    c.text(x1 + 6, ty, "n/a", GREY, S)
                else:
                    c.text(x1 + 6, ty, "FAIL", RED, S)
                continue
            xv = X(v)
            col = COLORS[fi % len(COLORS)]
            c.rect(min(x1, xv), y0, max(x1, xv) + 1, y1, col)
            t = "%.3f" % v
            tx = xv + 6 if v >= 1 else xv - 6 - text_w(t, S)
            c.text(tx, ty, t, BLACK, S)
    # frame and the line at 1.0, drawn last so bars do not cover them
    c.rect(frame0, plot_y0, frame1, plot_y0 + 1, GREY)
    c.rect(frame0, plot_y1, frame1, plot_y1 + 1, BLACK)
    c.rect(frame0, plot_y0, frame0 + 1, plot_y1, GREY)
    c.rect(frame1 - 1, plot_y0, frame1, plot_y1, GREY)
    c.rect(x1 - 1, plot_y0 - 4, x1 + 1, plot_y1 + 4, BLACK)
    c.png(out)


USAGE = "usage: python3 bench/plot.py [--ref cublas|cublaslt|both] OUT.png A.json [B.json ...]"


def main(argv):
    args = argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    refs = ["cublas"]
    if args and args[0] == "--ref":
        if len(args) < 2 or args[1] not in ("cublas", "cublaslt", "both"):
            print(USAGE, file=sys.stderr)
            return 2
        refs = ["cublas", "cublaslt"] if args[1] == "both" else [args[1]]
        args = args[2:]
    if len(args) < 2:
        print(USAGE, file=sys.stderr)
        return 2
    runs = load(args[1:])
    if not any(r["shapes"] for r in runs):
        print("plot.py: no shapes in the input", file=sys.stderr)
        return 1
    plot(args[0], runs, refs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
