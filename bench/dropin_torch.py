"""dropin_torch.py OUT.pt: PyTorch through cuBLAS, as an unmodified program calls it, for
`tools/gpu_run.sh dropin`, which runs it without and with LD_PRELOAD=libgemmtune_cublas.so.
Saves torch.matmul's and nn.Linear's results (f32, bf16, f16; seeded inputs) and the
output of an LLM-like stack (4 blocks of bf16 Linear 4096 -> 14336 -> 4096 with SiLU, 16
tokens), and prints the stack's median time per forward pass (CUDA events, 50 passes
after a warm-up that also pre-warms gemmtune's cache). With --compare A.pt B.pt: the
largest relative difference per result, against each type's tolerance; exit 1 beyond."""
import sys

import torch

TOL = {torch.float32: 1e-4, torch.bfloat16: 2e-2, torch.float16: 5e-3}


def results():
    torch.manual_seed(0)
    out = {}
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        a = torch.randn(300, 500, device="cuda", dtype=dt)
        b = torch.randn(500, 700, device="cuda", dtype=dt)
        out["matmul_%s" % dt] = (a @ b).float().cpu()
        lin = torch.nn.Linear(500, 256, device="cuda", dtype=dt)
        out["linear_%s" % dt] = lin(a).float().cpu()
    torch.manual_seed(1)
    blocks = [(torch.nn.Linear(4096, 14336, bias=False, device="cuda", dtype=torch.bfloat16),
               torch.nn.Linear(14336, 4096, bias=False, device="cuda", dtype=torch.bfloat16))
              for _ in range(4)]
    x = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)

    def stack(h):
        for up, down in blocks:
            h = h + down(torch.nn.functional.silu(up(h)))
        return h
    with torch.no_grad():
        for _ in range(5):
            y = stack(x)
        times = []
        for _ in range(50):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            y = stack(x)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) * 1e3)
    out["stack"] = y.float().cpu()
    times.sort()
    print("stack: median %.1f us per forward pass (4 blocks, 16 tokens, bf16)" % times[len(times) // 2])
    return out


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        a, b = torch.load(sys.argv[2]), torch.load(sys.argv[3])
        bad = 0
        for k in a:
            rel = ((a[k] - b[k]).abs().max() / (a[k].abs().max() + 1e-30)).item()
            tol = 5e-2 if k == "stack" else next(v for t, v in TOL.items() if str(t) in k)
            print("%-24s max rel diff %.2e (tolerance %.0e)%s" % (k, rel, tol, "" if rel <= tol else "  FAIL"))
            bad += rel > tol
        sys.exit(1 if bad else 0)
    torch.save(results(), sys.argv[1])
