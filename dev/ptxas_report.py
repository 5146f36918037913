#!/usr/bin/env python3
"""ptxas_report.py: no GPU. Registers and spills of kernel programs as ptxas reports them.

For each line on stdin ("DTYPE MxNxK:AB ALIGN BETA0 CONFIG", the form of dev/sass.c and
dev/prebuild_set.c), gets the program's NVRTC options from dev/sass.c's SASS_OPTS mode,
compiles the family's source from kernel_src/ with --ptxas-options=-v for sm_90 and
prints: the line, the launch bound's blocks (GT_MINB), registers, spill stores and loads.
A summary follows: how many spill, and how many of those sit at 255 registers (where no
launch bound can make room). The question it answers: do generic DMMA kernels fit?

Usage (from the repository root, after building /tmp/sass as dev/sass.c says):
    /tmp/prebuild_set f64 NN 16 1 | python3 dev/ptxas_report.py /tmp/sass
"""
import ctypes
import re
import subprocess
import sys

FAMILIES = {'f0': 'gemm_simt', 'f1': 'gemm_dmma', 'f2': 'gemm_mma', 'f3': 'gemm_wgmma'}


def compile_log(nv, family, opts):
    src = open(f'kernel_src/{family}.cu', 'rb').read()
    hdrs = [open('kernel_src/common.cuh', 'rb').read(), open('kernel_src/types.cuh', 'rb').read()]
    prog = ctypes.c_void_p()
    names = (ctypes.c_char_p * 2)(b'common.cuh', b'types.cuh')
    nv.nvrtcCreateProgram(ctypes.byref(prog), src, b'x.cu', 2, (ctypes.c_char_p * 2)(*hdrs), names)
    arch = b'-arch=sm_90a' if family == 'gemm_wgmma' else b'-arch=sm_90'
    o = [x.encode() for x in opts] + [arch, b'-std=c++17', b'-default-device', b'--ptxas-options=-v']
    rc = nv.nvrtcCompileProgram(prog, len(o), (ctypes.c_char_p * len(o))(*o))
    size = ctypes.c_size_t()
    nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nv.nvrtcGetProgramLog(prog, log)
    nv.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, log.value.decode(errors='replace')


def main():
    sass = sys.argv[1] if len(sys.argv) > 1 else '/tmp/sass'
    nv = ctypes.CDLL('libnvrtc.so')
    total = spill = at_cap = 0
    for line in sys.stdin:
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        opts = subprocess.run([sass], input=line, capture_output=True, text=True,
                              env={'SASS_OPTS': '1'}).stdout.split()
        if not opts or not opts[0].startswith('-D'):
            print(f'{line}  (no program: {" ".join(opts)[:80]})')
            continue
        rc, log = compile_log(nv, FAMILIES[line.split()[4][:2]], opts)
        m = re.search(r'Function properties for gt_gemm\s+ptxas\s+\.\s+(\d+) bytes stack frame, '
                      r'(\d+) bytes spill stores, (\d+) bytes spill loads\s+ptxas info\s+: Used '
                      r'(\d+) registers', log)
        if rc != 0 or not m:
            print(f'{line}  (compile failed)')
            continue
        minb = next((o.split('=')[1] for o in opts if o.startswith('-DGT_MINB=')), '?')
        stores, loads, regs = int(m.group(2)), int(m.group(3)), int(m.group(4))
        total += 1
        spill += stores > 0
        at_cap += stores > 0 and regs == 255
        print(f'{line}  minb {minb} regs {regs} spill stores {stores} loads {loads}')
    print(f'# {total} compiled, {spill} spill, {at_cap} of them at 255 registers')


if __name__ == '__main__':
    main()
