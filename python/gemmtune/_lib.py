"""The C library through ctypes: finding it, its functions' signatures, its errors."""

import ctypes
import ctypes.util
import os
import threading

# gemmtune.h's gt_status values and names (GT_STATUS_MAP).
STATUS_NAMES = {
    0: "SUCCESS", 1: "INVALID_VALUE", 2: "NO_DRIVER", 3: "NO_DEVICE", 4: "CUDA_ERROR",
    5: "NVRTC_ERROR", 6: "OUT_OF_MEMORY", 7: "CACHE_ERROR", 8: "NOT_SUPPORTED",
    9: "LAUNCH_FAILED", 10: "VERIFY_FAILED", 11: "NO_CANDIDATE", 12: "INTERNAL",
    -1: "NO_LIBRARY",  # this package's own: libgemmtune.so could not be loaded
}

# gemmtune.h's enums.
OP_N, OP_T = 0, 1
R_32F, R_64F, R_16F, R_16BF = 0, 1, 2, 3
COMPUTE_32F, COMPUTE_64F, COMPUTE_32F_FAST_TF32, COMPUTE_32F_EMULATED_3XTF32 = 0, 1, 2, 3
MODES = {"tune": 0, "cached": 1, "off": 2}

# gt_stats's fields, in order (gemmtune.h).
STATS_FIELDS = ("calls", "plan_hits", "cache_hits", "tunes", "fallbacks", "compiles",
                "cubin_hits", "nearest", "rejected", "async_tunes", "captured", "deferred",
                "staged")


class GemmtuneError(RuntimeError):
    """A gemmtune call failed: ``status`` (an int, gemmtune.h's gt_status), ``name`` (such
    as ``"NO_DRIVER"``) and the library's message."""

    def __init__(self, status, message):
        self.status = int(status)
        self.name = STATUS_NAMES.get(self.status, "UNKNOWN")
        self.message = message
        super().__init__("gemmtune: %s (%d): %s" % (self.name, self.status, message))


class _Stats(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in STATS_FIELDS]


def _candidates():
    """Where the library may be, in order: $GEMMTUNE_LIBRARY, the loader's search
    (ctypes.util.find_library, which reads ldconfig's cache), the usual prefixes."""
    env = os.environ.get("GEMMTUNE_LIBRARY")
    if env:
        return [env]
    found = ctypes.util.find_library("gemmtune")
    names = [found] if found else []
    for prefix in ("/usr/local/lib", "/usr/local/lib64", "/usr/local/lib/x86_64-linux-gnu",
                   "/usr/lib", "/usr/lib64", "/usr/lib/x86_64-linux-gnu"):
        names.append(os.path.join(prefix, "libgemmtune.so"))
    return names


_lock = threading.Lock()
_lib = None
_path = None


def _load():
    global _lib, _path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for name in _candidates():
            try:
                lib = ctypes.CDLL(name)
            except OSError as e:
                tried.append("%s (%s)" % (name, e))
                continue
            _declare(lib)
            _lib, _path = lib, name
            return lib
        raise GemmtuneError(
            -1,
            "libgemmtune.so not found: install the library (meson install) or set "
            "GEMMTUNE_LIBRARY to its path; tried: " + "; ".join(tried))


def _declare(lib):
    i64, vp, st = ctypes.c_int64, ctypes.c_void_p, ctypes.c_int
    lib.gemm_tuned.argtypes = [st, st, i64, i64, i64, ctypes.c_float, vp, i64, vp, i64,
                               ctypes.c_float, vp, i64, vp]
    lib.gemm_tuned_d.argtypes = [st, st, i64, i64, i64, ctypes.c_double, vp, i64, vp, i64,
                                 ctypes.c_double, vp, i64, vp]
    lib.gemm_tuned_ex.argtypes = [st, st, i64, i64, i64, vp, vp, st, i64, vp, st, i64, vp, vp,
                                  st, i64, st, vp]
    for f in (lib.gemm_tuned, lib.gemm_tuned_d, lib.gemm_tuned_ex):
        f.restype = st
    lib.gt_status_string.argtypes = [st]
    lib.gt_status_string.restype = ctypes.c_char_p
    lib.gt_last_error.argtypes = []
    lib.gt_last_error.restype = ctypes.c_char_p
    lib.gt_set_mode.argtypes = [st]
    lib.gt_set_mode.restype = st
    lib.gt_get_stats.argtypes = [ctypes.POINTER(_Stats)]
    lib.gt_get_stats.restype = None
    lib.gt_version.argtypes = [ctypes.POINTER(ctypes.c_int)] * 3
    lib.gt_version.restype = None


def lib():
    """The loaded library (loaded on first use)."""
    return _load()


def library_path():
    """The path the library was loaded from."""
    _load()
    return _path


def check(status):
    """Raises GemmtuneError for a failing status, with the library's message."""
    if status != 0:
        msg = _load().gt_last_error()
        raise GemmtuneError(status, (msg or b"").decode("utf-8", "replace"))


def version():
    """The library's version as (major, minor, patch)."""
    v = [ctypes.c_int(0) for _ in range(3)]
    _load().gt_version(*[ctypes.byref(x) for x in v])
    return tuple(x.value for x in v)


def get_stats():
    s = _Stats()
    _load().gt_get_stats(ctypes.byref(s))
    return {name: int(getattr(s, name)) for name in STATS_FIELDS}
