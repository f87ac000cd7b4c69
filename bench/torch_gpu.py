"""Device tensors through the loom backend, against gloo on the same ranks
and tensors (gloo takes CUDA tensors by staging them through host memory):

    loomrun -n N python bench/torch_gpu.py [--device cuda] [--sizes 1M:256M] [--out FILE]

(PYTHONPATH=python, LOOM_PREFIX or Loom's bin/ on PATH; on a node with one
GPU every rank shares it: run under CUDA MPS.)

1. allreduce (SUM, float32) from --sizes' low to high bound, doubling: the
   median time of a call over --iters calls, each timed from before the
   call to the end of a device synchronize, for loom and gloo.
2. A DDP training step of an MLP of about --params parameters (CUDA only):
   median step time, loom and gloo.
3. The calling thread's CPU time for an async allreduce of 64 MiB, from the
   call to wait() returning (the host should not wait: near zero), and the
   wall time until the device is done.

--device loommock (LOOM_DEVICE_MOCK=1, tests/torch on PYTHONPATH) rehearses
the script without a GPU: loom only, small sizes; its figures mean nothing.
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def size_of(s):
    m = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * m[s[-1].upper()] if s[-1].upper() in m else int(s)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()
    else:
        import mock_device
        mock_device.load().synchronize_all()


def median_ms(fn, device, iters, warm=2):
    for _ in range(warm):
        fn()
    sync(device)
    dist.barrier()
    times = []
    for _ in range(iters):
        t = time.perf_counter()
        fn()
        sync(device)
        times.append((time.perf_counter() - t) * 1e3)
    m = torch.tensor([statistics.median(times)], dtype=torch.float64)
    dist.all_reduce(m, op=dist.ReduceOp.MAX)  # the slowest rank's median
    return m.item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--sizes", default="1M:256M")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--params", type=float, default=100e6)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.device == "loommock":
        import mock_device
        mock_device.load()
    import torch_loom  # noqa: F401  (MPI init, env, registration)
    if a.device == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
        device = torch.device("cuda", torch.cuda.current_device())
    else:
        device = torch.device(a.device, 0)
    dist.init_process_group("loom", device_id=device if device.type == "cuda" else None)
    rank, n = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo") if device.type == "cuda" else None
    out = {"ranks": n, "device": str(device), "torch": torch.__version__, "allreduce": [], "ddp": {}}
    if device.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(device)

    lo, hi = (size_of(x) for x in a.sizes.split(":"))
    size = lo
    while size <= hi:
        t = torch.ones(size // 4, device=device)
        row = {"bytes": size, "loom_ms": median_ms(lambda: dist.all_reduce(t), device, a.iters)}
        if gloo is not None:
            row["gloo_ms"] = median_ms(lambda: dist.all_reduce(t, group=gloo), device, max(3, a.iters // 3), 1)
            row["gloo_over_loom"] = row["gloo_ms"] / row["loom_ms"]
        out["allreduce"].append(row)
        if rank == 0:
            print(f"allreduce {size >> 20:5d} MiB: loom {row['loom_ms']:8.3f} ms"
                  + (f"  gloo {row['gloo_ms']:8.3f} ms  gloo/loom {row['gloo_over_loom']:6.1f}x"
                     if gloo is not None else ""), flush=True)
        del t
        size *= 2

    # The host's share of an async allreduce of 64 MiB.
    t = torch.ones((64 << 20) // 4, device=device)
    dist.all_reduce(t)
    sync(device)
    dist.barrier()
    c0, w0 = time.thread_time(), time.perf_counter()
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    cpu = time.thread_time() - c0
    sync(device)
    wall = time.perf_counter() - w0
    out["async_64m"] = {"caller_cpu_ms": cpu * 1e3, "wall_ms": wall * 1e3}
    if rank == 0:
        print(f"async allreduce 64 MiB: calling thread CPU {cpu * 1e3:.3f} ms, until done {wall * 1e3:.3f} ms",
              flush=True)
    del t

    if device.type == "cuda":
        width = int((a.params / 4) ** 0.5)  # four width x width layers
        torch.manual_seed(0)
        base = nn.Sequential(*[nn.Linear(width, width) for _ in range(4)]).to(device)
        x = torch.randn(32, width, device=device)
        for name, group in (("loom", None), ("gloo", gloo)):
            model = DDP(base, device_ids=[device.index], process_group=group)
            opt = torch.optim.SGD(model.parameters(), lr=1e-4)

            def step():
                opt.zero_grad()
                model(x).square().mean().backward()
                opt.step()

            out["ddp"][name + "_ms"] = median_ms(step, device, a.steps)
        out["ddp"]["params"] = sum(p.numel() for p in base.parameters())
        out["ddp"]["loom_over_gloo"] = out["ddp"]["loom_ms"] / out["ddp"]["gloo_ms"]
        if rank == 0:
            d = out["ddp"]
            print(f"DDP step, {d['params'] / 1e6:.0f} M parameters: loom {d['loom_ms']:.1f} ms, "
                  f"gloo {d['gloo_ms']:.1f} ms, loom/gloo {d['loom_over_gloo']:.2f}", flush=True)

    if rank == 0 and a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
