"""The package on the GPU with PyTorch tensors: results against torch.matmul in float32,
float64, bfloat16 and float16, every transpose, row-major and transposed views, C given
with beta, the current stream, and the library's counters. Skipped without PyTorch or a
CUDA device."""

import unittest

import gemmtune

try:
    import torch
    HAVE = torch.cuda.is_available()
except ImportError:  # PyTorch is not installed
    HAVE = False


@unittest.skipUnless(HAVE, "skipped: no CUDA device (or no PyTorch)")
class Torch(unittest.TestCase):
    TOL = {"float32": 1e-4, "float64": 1e-12, "bfloat16": 2e-2, "float16": 5e-3}

    def check(self, got, want, dtype):
        err = (got.double() - want.double()).abs().max().item()
        scale = want.double().abs().max().item() + 1e-30
        self.assertLessEqual(err / scale, self.TOL[dtype], "rel err %.3g" % (err / scale))

    def test_matmul_all_types_and_transposes(self):
        torch.manual_seed(1)
        for name in ("float32", "float64", "bfloat16", "float16"):
            dt = getattr(torch, name)
            for ta in (False, True):
                for tb in (False, True):
                    m, n, k = 77, 130, 300
                    a = torch.randn((k, m) if ta else (m, k), device="cuda", dtype=dt)
                    b = torch.randn((n, k) if tb else (k, n), device="cuda", dtype=dt)
                    want = (a.T if ta else a).double() @ (b.T if tb else b).double()
                    got = gemmtune.gemm(a, b, trans_a=ta, trans_b=tb)
                    torch.cuda.synchronize()
                    self.assertEqual(got.shape, (m, n))
                    self.check(got, want, name)

    def test_views_beta_and_stream(self):
        a = torch.randn(64, 96, device="cuda")
        b = torch.randn(48, 96, device="cuda").T  # a transposed view: strides (1, 96)
        c0 = torch.randn(64, 48, device="cuda")
        c = c0.clone()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            gemmtune.gemm(a, b, c, alpha=0.5, beta=-1.0)
        s.synchronize()
        self.check(c, 0.5 * (a.double() @ b.double()) - c0.double(), "float32")

    def test_linear_layer_and_stats(self):
        before = gemmtune.stats()["calls"]
        x = torch.randn(16, 1024, device="cuda", dtype=torch.bfloat16)
        lin = torch.nn.Linear(1024, 512, bias=False, device="cuda", dtype=torch.bfloat16)
        got = gemmtune.gemm(x, lin.weight, trans_b=True)  # x @ W.T, as nn.Linear
        self.check(got, lin(x), "bfloat16")
        self.assertGreater(gemmtune.stats()["calls"], before)


if __name__ == "__main__":
    unittest.main()
