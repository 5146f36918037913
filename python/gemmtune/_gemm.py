"""gemm(), tune(), stats() and set_mode(): row-major arrays onto the column-major C API."""

import ctypes
import os
import shutil
import subprocess

from . import _lib
from ._lib import GemmtuneError

# Element types: name -> (bytes, gemm_tuned_ex's gt_datatype).
_DTYPES = {"float32": (4, _lib.R_32F), "float64": (8, _lib.R_64F),
           "float16": (2, _lib.R_16F), "bfloat16": (2, _lib.R_16BF)}
_TYPESTR = {"<f4": "float32", "<f8": "float64", "<f2": "float16"}
# DLPack's (type code, bits): 2 float, 4 bfloat.
_DLPACK = {(2, 32): "float32", (2, 64): "float64", (2, 16): "float16", (4, 16): "bfloat16"}
_COMPUTE = {None: None, "tf32": _lib.COMPUTE_32F_FAST_TF32,
            "3xtf32": _lib.COMPUTE_32F_EMULATED_3XTF32}


class _View:
    """A two-dimensional device array as the call needs it: address, shape, strides in
    elements, element type, and the framework object (to allocate C and find the
    stream) when there is one."""

    def __init__(self, ptr, shape, strides, dtype, owner, framework):
        self.ptr, self.shape, self.strides = ptr, shape, strides
        self.dtype, self.owner, self.framework = dtype, owner, framework


def _is_torch(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def _is_cupy(x):
    return type(x).__module__.startswith("cupy")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _from_dlpack(x, name):
    """Reads (without consuming) the DLPack capsule of x; x keeps the memory alive."""
    cap = x.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    t = _DLTensor.from_address(get(cap, b"dltensor"))
    if t.device.device_type not in (2, 13):  # kDLCUDA, kDLCUDAManaged
        raise ValueError("%s: not a CUDA array (DLPack device type %d)" % (name, t.device.device_type))
    dt = _DLPACK.get((t.dtype.code, t.dtype.bits))
    if dt is None or t.dtype.lanes != 1:
        raise TypeError("%s: element type (code %d, %d bits) is not float32, float64, float16 "
                        "or bfloat16" % (name, t.dtype.code, t.dtype.bits))
    if t.ndim != 2:
        raise ValueError("%s: %d dimensions, want 2" % (name, t.ndim))
    shape = (t.shape[0], t.shape[1])
    strides = (t.strides[0], t.strides[1]) if t.strides else (shape[1], 1)
    return _View(t.data + t.byte_offset, shape, strides, dt, x, None)


def _view(x, name):
    if x is None:
        raise ValueError("%s is None" % name)
    if _is_torch(x):
        if not x.is_cuda:
            raise ValueError("%s: a CPU tensor; gemmtune works on CUDA tensors" % name)
        dt = str(x.dtype).replace("torch.", "")
        if dt not in _DTYPES:
            raise TypeError("%s: dtype %s is not float32, float64, float16 or bfloat16" % (name, dt))
        if x.dim() != 2:
            raise ValueError("%s: %d dimensions, want 2" % (name, x.dim()))
        return _View(x.data_ptr(), tuple(x.shape), tuple(x.stride()), dt, x, "torch")
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        dt = _TYPESTR.get(cai.get("typestr"))
        if dt is None:
            raise TypeError("%s: element type %r is not float32, float64 or float16 "
                            "(bfloat16 through PyTorch or DLPack)" % (name, cai.get("typestr")))
        shape = tuple(cai["shape"])
        if len(shape) != 2:
            raise ValueError("%s: %d dimensions, want 2" % (name, len(shape)))
        es = _DTYPES[dt][0]
        st = cai.get("strides")
        if st is None:
            strides = (shape[1], 1)
        else:
            if st[0] % es or st[1] % es:
                raise ValueError("%s: strides %r are not whole elements" % (name, st))
            strides = (st[0] // es, st[1] // es)
        return _View(int(cai["data"][0]), shape, strides, dt, x, "cupy" if _is_cupy(x) else None)
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(x, name)
    raise TypeError("%s: %s has neither __cuda_array_interface__ nor __dlpack__"
                    % (name, type(x).__name__))


def _storage(v, name):
    """(row-major?, ld): v as the column-major library sees it, X^T with ld = the row
    stride when rows are contiguous, X itself with ld = the column stride otherwise."""
    r, c = v.shape
    s0, s1 = v.strides
    if s1 == 1 or c == 1:
        if c == 1 and s1 != 1 and s0 == 1 and r > 1:
            return False, max(s1, r, 1)
        return True, max(s0, c, 1)
    if s0 == 1 or r == 1:
        return False, max(s1, r, 1)
    raise ValueError("%s: strides %r (in elements): one of them must be 1" % (name, v.strides))


def _stream_of(v, stream):
    if stream is not None:
        return int(stream)
    if v.framework == "torch":
        import torch
        return int(torch.cuda.current_stream(v.owner.device).cuda_stream)
    if v.framework == "cupy":
        import cupy
        return int(cupy.cuda.get_current_stream().ptr)
    return 0


def _new_c(like, m, n, dtype):
    if like.framework == "torch":
        import torch
        return torch.empty((m, n), dtype=getattr(torch, dtype), device=like.owner.device)
    if like.framework == "cupy":
        import cupy
        return cupy.empty((m, n), dtype=dtype)
    raise ValueError("c=None needs PyTorch or CuPy inputs to allocate C: pass c")


def gemm(a, b, c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, compute=None,
         out_dtype=None, stream=None):
    """C = alpha * op(a) @ op(b) + beta * C, row-major as NumPy and PyTorch read arrays
    (op(x) = x.T where trans_x), on the framework's current stream (or `stream`, a
    CUstream as an int). Returns C: `c` when given, else a new array of the inputs'
    framework (beta must then be 0). compute: None (exact in the type's compute type),
    "tf32" or "3xtf32" for float32 inputs. out_dtype: "float32" for float16/bfloat16
    inputs with a float32 C when c is None."""
    av, bv = _view(a, "a"), _view(b, "b")
    if av.dtype != bv.dtype:
        raise TypeError("a is %s, b is %s: they must be of one type" % (av.dtype, bv.dtype))
    if compute not in _COMPUTE:
        raise ValueError("compute must be None, 'tf32' or '3xtf32', not %r" % (compute,))
    if compute is not None and av.dtype != "float32":
        raise ValueError("compute=%r needs float32 inputs, not %s" % (compute, av.dtype))
    m, ka = (av.shape[1], av.shape[0]) if trans_a else av.shape
    kb, n = (bv.shape[1], bv.shape[0]) if trans_b else bv.shape
    if ka != kb:
        raise ValueError("op(a) is %dx%d and op(b) is %dx%d: inner sizes differ" % (m, ka, kb, n))
    k = ka
    if c is None:
        if beta != 0:
            raise ValueError("beta != 0 needs c")
        c = _new_c(av, m, n, out_dtype or av.dtype)
    cv = _view(c, "c")
    if cv.shape != (m, n):
        raise ValueError("c is %dx%d, want %dx%d" % (cv.shape + (m, n)))
    half = av.dtype in ("float16", "bfloat16")
    if cv.dtype != av.dtype and not (half and cv.dtype == "float32"):
        raise TypeError("c is %s for %s inputs (want %s%s)" % (
            cv.dtype, av.dtype, av.dtype, " or float32" if half else ""))
    c_row, ldc = _storage(cv, "c")
    ops, lds, ptrs = [], [], []
    # A row-major C is computed as C^T = op(b)^T op(a)^T: the library's M, N are n, m and
    # its first operand is b. An operand stored as X^T (row-major) needs the transpose
    # exactly when the product wants X^T and the storage is X, or the other way round.
    order = ((bv, trans_b, "b"), (av, trans_a, "a")) if c_row else ((av, trans_a, "a"), (bv, trans_b, "b"))
    for v, tr, name in order:
        x_row, ld = _storage(v, name)
        wants_xt = (not tr) if c_row else tr
        ops.append(_lib.OP_T if wants_xt != x_row else _lib.OP_N)
        lds.append(ld)
        ptrs.append(v.ptr)
    M, N = (n, m) if c_row else (m, n)
    s = _stream_of(av, stream)
    lib = _lib.lib()
    vp = ctypes.c_void_p
    if av.dtype == "float32" and cv.dtype == "float32" and compute is None:
        st = lib.gemm_tuned(ops[0], ops[1], M, N, k, alpha, vp(ptrs[0]), lds[0], vp(ptrs[1]),
                            lds[1], beta, vp(cv.ptr), ldc, vp(s))
    elif av.dtype == "float64":
        st = lib.gemm_tuned_d(ops[0], ops[1], M, N, k, alpha, vp(ptrs[0]), lds[0], vp(ptrs[1]),
                              lds[1], beta, vp(cv.ptr), ldc, vp(s))
    else:
        al, be = ctypes.c_float(alpha), ctypes.c_float(beta)
        ct = _COMPUTE[compute] if compute else _lib.COMPUTE_32F
        st = lib.gemm_tuned_ex(ops[0], ops[1], M, N, k, ctypes.byref(al), vp(ptrs[0]),
                               _DTYPES[av.dtype][1], lds[0], vp(ptrs[1]), _DTYPES[bv.dtype][1],
                               lds[1], ctypes.byref(be), vp(cv.ptr), _DTYPES[cv.dtype][1], ldc,
                               ct, vp(s))
    _lib.check(st)
    return c


def set_mode(mode):
    """What a call for a shape in no cache does: "tune", "cached" or "off"."""
    if mode not in _lib.MODES:
        raise ValueError("mode must be one of %s, not %r" % (sorted(_lib.MODES), mode))
    _lib.check(_lib.lib().gt_set_mode(_lib.MODES[mode]))


def stats():
    """The library's counters in this process (gt_get_stats) as a dict."""
    return _lib.get_stats()


def _exe():
    env = os.environ.get("GEMMTUNE_EXE")
    if env:
        return env
    found = shutil.which("gemmtune")
    if found:
        return found
    near = os.path.join(os.path.dirname(os.path.dirname(_lib.library_path())), "bin", "gemmtune")
    if os.path.exists(near):
        return near
    raise GemmtuneError(-1, "the gemmtune command was not found: put it on PATH or set GEMMTUNE_EXE")


_CLI_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
               "f32": "f32", "f64": "f64", "f16": "f16", "bf16": "bf16", "tf32": "tf32",
               "f16_f32": "f16_f32", "bf16_f32": "bf16_f32", "f32_3xtf32": "f32_3xtf32"}


def _key_shape(shape):
    """A row-major (m, n, k[, trans_a, trans_b]) as the column-major key's text that gemm()
    calls with contiguous arrays: M = n, N = m, the first operand b."""
    if isinstance(shape, str):
        return shape
    m, n, k = (int(x) for x in shape[:3])
    ta = bool(shape[3]) if len(shape) > 3 else False
    tb = bool(shape[4]) if len(shape) > 4 else False
    if min(m, n, k) < 1:
        raise ValueError("shape %r: sizes must be positive" % (shape,))
    return "%dx%dx%d:%s%s" % (n, m, k, "T" if tb else "N", "T" if ta else "N")


def tune(shapes, dtype="float32", budget=None, candidates=None, exhaustive=False):
    """Pre-warms the cache for shapes, through the gemmtune command (one process on the
    GPU, the same cache as this process's calls). shapes: row-major (m, n, k) or (m, n, k,
    trans_a, trans_b) tuples as gemm() is called with contiguous arrays, or key texts
    "MxNxK[:AB]" of the column-major API. Returns the command's output."""
    if dtype not in _CLI_DTYPES:
        raise ValueError("dtype %r: one of %s" % (dtype, sorted(_CLI_DTYPES)))
    if isinstance(shapes, (str, tuple)):
        shapes = [shapes]
    args = [_exe(), "tune", "--dtype", _CLI_DTYPES[dtype]]
    if budget is not None:
        args += ["--budget", str(float(budget))]
    if candidates is not None:
        args += ["--candidates", str(int(candidates))]
    if exhaustive:
        args.append("--exhaustive")
    args += [_key_shape(s) for s in shapes]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise GemmtuneError(-1, "gemmtune tune failed (exit %d): %s" % (r.returncode, (r.stderr or r.stdout).strip()))
    return r.stdout
