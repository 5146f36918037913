"""gemmtune from Python with PyTorch tensors: y = x @ w.T as nn.Linear computes it.
    pip install ./python && python3 examples/gemm.py"""
import torch

import gemmtune

x = torch.randn(77, 4096, device="cuda", dtype=torch.bfloat16)
w = torch.randn(14336, 4096, device="cuda", dtype=torch.bfloat16)
y = gemmtune.gemm(x, w, trans_b=True)
ref = x.float() @ w.float().T
err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
print("max relative error %.2e; stats %s" % (err, gemmtune.stats()))
