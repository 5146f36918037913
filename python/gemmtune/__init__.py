"""gemmtune: run-time autotuned GEMM on NVIDIA GPUs, from Python.

A thin layer over the installed C library (libgemmtune.so) through ctypes: no compiler,
no build step, the library's own cache, modes and pre-warmed files apply unchanged.
ctypes rather than cffi: it is in the standard library, and the C API is a handful of
plain functions.

    import torch, gemmtune
    a = torch.randn(77, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    y = gemmtune.gemm(a, w, trans_b=True)          # y = a @ w.T, row-major like torch

Arrays are any object with ``__cuda_array_interface__`` (PyTorch, CuPy, Numba) or
DLPack (``__dlpack__``, through PyTorch or CuPy when one of them is installed),
two-dimensional, row-major or column-major (one unit stride). The call runs on the
framework's current stream. Errors of the library are ``GemmtuneError`` with its status
and message; arguments that are wrong before the library sees them raise ``ValueError``
or ``TypeError``.
"""

from ._lib import GemmtuneError, library_path, version
from ._gemm import gemm, set_mode, stats, tune

__all__ = ["GemmtuneError", "gemm", "library_path", "set_mode", "stats", "tune", "version"]
