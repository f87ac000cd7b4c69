"""DDP step time and allreduce bus bandwidth, loom vs gloo, in one job:

    loomrun -n N python bench/torch_ddp.py [--out FILE]

(with PYTHONPATH=python and Loom's bin/ on PATH). Both backends run on the
same ranks and data: the default group is loom, a gloo group spans the same
ranks. Also the per-call overhead of the loom backend over a direct
MPI_Allreduce of the same bytes: raw = the extension's MPI_Allreduce under
the backend's mutex, no Work; backend = allreduce()+wait() from C++;
dist = dist.all_reduce from Python (adds torch's dispatcher and Python).
Bus bandwidth is algbw * 2 (n - 1) / n, as nccl-tests report it.
"""
import argparse
import json
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import torch_loom


def timeit(fn, iters, warm=3):
    for _ in range(warm):
        fn()
    dist.barrier()
    t = time.perf_counter()
    for _ in range(iters):
        fn()
    el = (time.perf_counter() - t) / iters
    m = torch.tensor([el], dtype=torch.float64)
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    return m.item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    dist.init_process_group("loom")
    rank, n = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    res = {"ranks": n, "allreduce": [], "ddp": [], "overhead_us": {}}

    for nbytes in [4 << 10, 64 << 10, 1 << 20, 8 << 20, 32 << 20]:
        t = torch.ones(nbytes // 4)
        iters = max(5, min(200, (64 << 20) // nbytes)) // (4 if a.quick else 1)
        row = {"bytes": nbytes}
        for name, g in (("loom", None), ("gloo", gloo)):
            s = timeit(lambda: dist.all_reduce(t, group=g), iters)
            row[name + "_us"] = s * 1e6
            row[name + "_busbw_GBs"] = nbytes / s * 2 * (n - 1) / max(n, 1) / 1e9
        res["allreduce"].append(row)

    torch.manual_seed(0)
    x, y = torch.randn(64, 512), torch.randn(64, 512)
    for cap in [1, 4, 25]:
        row = {"bucket_cap_mb": cap}
        for name, g in (("loom", None), ("gloo", gloo)):
            torch.manual_seed(0)
            model = nn.Sequential(*[m for _ in range(6) for m in (nn.Linear(512, 512), nn.ReLU())])
            ddp = DDP(model, bucket_cap_mb=cap, process_group=g)
            opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
            def step():
                opt.zero_grad()
                nn.functional.mse_loss(ddp(x), y).backward()
                opt.step()
            row[name + "_step_ms"] = timeit(step, 5 if a.quick else 20) * 1e3
        res["ddp"].append(row)

    be = dist.group.WORLD._get_backend(torch.device("cpu"))
    ext = torch_loom.extension()
    t = torch.ones(2)  # 8 bytes: latency-bound
    it = 2000 if not a.quick else 500
    for name, fn in (("raw_mpi_allreduce", lambda: ext.raw_allreduce(be, t, it)),
                     ("raw_mpi_iallreduce_wait", lambda: ext.raw_allreduce(be, t, it, True)),
                     ("backend_allreduce_wait", lambda: ext.backend_allreduce(be, t, it)),
                     ("dist_all_reduce", lambda: [dist.all_reduce(t) for _ in range(it)])):
        res["overhead_us"][name] = timeit(fn, 3, warm=1) / it * 1e6
    o = res["overhead_us"]
    o["backend_minus_raw"] = o["backend_allreduce_wait"] - o["raw_mpi_iallreduce_wait"]
    o["dist_minus_raw"] = o["dist_all_reduce"] - o["raw_mpi_iallreduce_wait"]
    if rank == 0:
        print(json.dumps(res, indent=1))
        if a.out:
            with open(a.out, "w") as f:
                json.dump(res, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
