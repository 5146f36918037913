"""The package without a GPU: loading, argument errors, the row-major to column-major
mapping (through a stand-in for the library), the library's own errors (a misaligned
pointer; no CUDA driver) and tune()'s key texts."""

import ctypes
import os
import unittest

import gemmtune
from gemmtune import _gemm, _lib


class Fake:
    """A device array by __cuda_array_interface__ alone (nothing behind the address)."""

    def __init__(self, shape, typestr="<f4", ptr=0x7F0000000000, strides=None):
        es = int(typestr[2:])
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": typestr, "data": (ptr, False), "version": 3,
            "strides": None if strides is None else tuple(s * es for s in strides)}


class Recorder:
    """Stands in for the library: records the entry called and its arguments."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def f(*args):
            self.calls.append((name, args))
            return 0
        return f


def have_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


class Loading(unittest.TestCase):
    def test_version_and_path(self):
        v = gemmtune.version()
        self.assertEqual(len(v), 3)
        self.assertTrue(all(isinstance(x, int) for x in v))
        self.assertTrue(os.path.exists(gemmtune.library_path()))

    def test_stats_and_mode(self):
        s = gemmtune.stats()
        for name in ("calls", "tunes", "compiles", "staged"):
            self.assertIn(name, s)
            self.assertGreaterEqual(s[name], 0)
        gemmtune.set_mode("cached")
        gemmtune.set_mode("tune")
        with self.assertRaises(ValueError):
            gemmtune.set_mode("fast")


class Arguments(unittest.TestCase):
    def test_inner_sizes(self):
        with self.assertRaisesRegex(ValueError, "inner sizes differ"):
            gemmtune.gemm(Fake((4, 5)), Fake((6, 7)), Fake((4, 7)))

    def test_types(self):
        with self.assertRaisesRegex(TypeError, "one type"):
            gemmtune.gemm(Fake((4, 5)), Fake((5, 7), "<f8"), Fake((4, 7)))
        with self.assertRaisesRegex(TypeError, "c is float64"):
            gemmtune.gemm(Fake((4, 5)), Fake((5, 7)), Fake((4, 7), "<f8"))
        with self.assertRaisesRegex(TypeError, "neither"):
            gemmtune.gemm([[1.0]], Fake((1, 1)), Fake((1, 1)))
        with self.assertRaisesRegex(TypeError, "element type"):
            gemmtune.gemm(Fake((4, 5), "<i4"), Fake((5, 7)), Fake((4, 7)))

    def test_c(self):
        with self.assertRaisesRegex(ValueError, "c is 4x6, want 4x7"):
            gemmtune.gemm(Fake((4, 5)), Fake((5, 7)), Fake((4, 6)))
        with self.assertRaisesRegex(ValueError, "PyTorch or CuPy"):
            gemmtune.gemm(Fake((4, 5)), Fake((5, 7)))
        with self.assertRaisesRegex(ValueError, "beta != 0 needs c"):
            gemmtune.gemm(Fake((4, 5)), Fake((5, 7)), beta=1.0)

    def test_shapes_and_strides(self):
        with self.assertRaisesRegex(ValueError, "dimensions"):
            gemmtune.gemm(Fake((4, 5, 1)), Fake((5, 7)), Fake((4, 7)))
        with self.assertRaisesRegex(ValueError, "one of them must be 1"):
            gemmtune.gemm(Fake((4, 5), strides=(10, 2)), Fake((5, 7)), Fake((4, 7)))

    def test_compute(self):
        with self.assertRaisesRegex(ValueError, "float32 inputs"):
            gemmtune.gemm(Fake((4, 5), "<f8"), Fake((5, 7), "<f8"), Fake((4, 7), "<f8"),
                          compute="tf32")
        with self.assertRaisesRegex(ValueError, "compute must be"):
            gemmtune.gemm(Fake((4, 5)), Fake((5, 7)), Fake((4, 7)), compute="fp8")


class Mapping(unittest.TestCase):
    """Row-major calls as the column-major library receives them."""

    def setUp(self):
        self.saved = _lib._lib
        _lib._load()
        self.rec = Recorder()
        _lib._lib = self.rec

    def tearDown(self):
        _lib._lib = self.saved

    def call(self, *args, **kw):
        gemmtune.gemm(*args, **kw)
        return self.rec.calls[-1]

    def test_row_major(self):
        A, B, C = Fake((4, 5), ptr=0x1000), Fake((5, 7), ptr=0x2000), Fake((4, 7), ptr=0x3000)
        name, a = self.call(A, B, C, alpha=2.0)
        # C^T = B^T A^T: M = 7, N = 4, K = 5; B first (ld 7), then A (ld 5); ldc 7.
        self.assertEqual(name, "gemm_tuned")
        self.assertEqual(a[:5], (0, 0, 7, 4, 5))
        self.assertEqual((a[6].value, a[7], a[8].value, a[9], a[11].value, a[12]),
                         (0x2000, 7, 0x1000, 5, 0x3000, 7))
        self.assertEqual(a[5], 2.0)

    def test_transposes(self):
        # a stored 5x4 used as a.T, b stored 7x5 used as b.T.
        A, B, C = Fake((5, 4), ptr=0x1000), Fake((7, 5), ptr=0x2000), Fake((4, 7), ptr=0x3000)
        name, a = self.call(A, B, C, trans_a=True, trans_b=True)
        self.assertEqual(a[:5], (1, 1, 7, 4, 5))
        self.assertEqual((a[7], a[9]), (5, 4))

    def test_column_major(self):
        # Fortran-ordered a (strides 1, 4) and c (strides 1, 4): C = A B, M = 4, N = 7.
        A = Fake((4, 5), ptr=0x1000, strides=(1, 4))
        B = Fake((5, 7), ptr=0x2000)
        C = Fake((4, 7), ptr=0x3000, strides=(1, 4))
        name, a = self.call(A, B, C)
        self.assertEqual(a[:5], (0, 1, 4, 7, 5))
        self.assertEqual((a[6].value, a[7], a[8].value, a[9], a[12]), (0x1000, 4, 0x2000, 7, 4))

    def test_padded_rows(self):
        A = Fake((4, 5), ptr=0x1000, strides=(8, 1))
        name, a = self.call(A, Fake((5, 7)), Fake((4, 7)))
        self.assertEqual(a[9], 8)

    def test_types(self):
        name, a = self.call(Fake((4, 5), "<f8"), Fake((5, 7), "<f8"), Fake((4, 7), "<f8"))
        self.assertEqual(name, "gemm_tuned_d")
        name, a = self.call(Fake((4, 5), "<f2"), Fake((5, 7), "<f2"), Fake((4, 7), "<f4"))
        self.assertEqual(name, "gemm_tuned_ex")
        self.assertEqual((a[7], a[10], a[14], a[16]), (_lib.R_16F, _lib.R_16F, _lib.R_32F,
                                                       _lib.COMPUTE_32F))
        name, a = self.call(Fake((4, 5)), Fake((5, 7)), Fake((4, 7)), compute="tf32")
        self.assertEqual((name, a[16]), ("gemm_tuned_ex", _lib.COMPUTE_32F_FAST_TF32))


class LibraryErrors(unittest.TestCase):
    def test_misaligned_pointer(self):
        # Checked before any GPU work: argument 7 (A) of gemm_tuned.
        with self.assertRaises(gemmtune.GemmtuneError) as e:
            gemmtune.gemm(Fake((4, 5), ptr=0x7F0000000002), Fake((5, 7)), Fake((4, 7)))
        self.assertEqual(e.exception.status, 1)
        self.assertEqual(e.exception.name, "INVALID_VALUE")
        self.assertIn("argument", e.exception.message)

    @unittest.skipIf(have_driver(), "a CUDA driver is installed")
    def test_no_driver(self):
        with self.assertRaises(gemmtune.GemmtuneError) as e:
            gemmtune.gemm(Fake((4, 5)), Fake((5, 7)), Fake((4, 7)))
        self.assertEqual(e.exception.name, "NO_DRIVER")
        self.assertIn("libcuda", str(e.exception))


class Tune(unittest.TestCase):
    def test_key_texts(self):
        self.assertEqual(_gemm._key_shape((2, 3, 4)), "3x2x4:NN")
        self.assertEqual(_gemm._key_shape((2, 3, 4, True, False)), "3x2x4:NT")
        self.assertEqual(_gemm._key_shape("5x6x7:TN"), "5x6x7:TN")
        with self.assertRaises(ValueError):
            _gemm._key_shape((0, 3, 4))

    def test_bad_dtype(self):
        with self.assertRaises(ValueError):
            gemmtune.tune([(2, 3, 4)], dtype="int8")

    @unittest.skipUnless(os.environ.get("GEMMTUNE_EXE"), "no gemmtune command given")
    def test_command_errors_reach_python(self):
        with self.assertRaisesRegex(gemmtune.GemmtuneError, "gemmtune tune failed"):
            gemmtune.tune(["0x1x1"], dtype="f32")


if __name__ == "__main__":
    unittest.main()
