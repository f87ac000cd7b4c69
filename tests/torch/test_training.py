"""Training through the loom backend: DDP against single-process training on
the full batch, FSDP2 (fully_shard) on a transformer block, and an MoE
all_to_all_single dispatch/combine round trip; on CPU tensors, and on CUDA
tensors where a GPU is present (every rank on the same one)."""
import copy

import pytest
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

GLOBAL_BATCH = 24  # divisible by 1, 2, 3 and 4 ranks
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
on_devices = pytest.mark.parametrize("device", DEVICES)


def batches(steps, din, dout, seed=0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(GLOBAL_BATCH, din, generator=g).to(device),
             torch.randn(GLOBAL_BATCH, dout, generator=g).to(device)) for _ in range(steps)]


def mlp():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 4))


def train_ddp(hook=None, steps=20, device="cpu"):
    rank, n = dist.get_rank(), dist.get_world_size()
    ref = mlp().to(device)
    ids = [torch.device(device).index or 0] if device != "cpu" else None
    # several buckets: allreduces overlap the backward pass
    model = DDP(copy.deepcopy(ref), device_ids=ids, bucket_cap_mb=0.01)
    if hook is not None:
        model.register_comm_hook(None, hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.05)
    per = GLOBAL_BATCH // n
    for x, y in batches(steps, 16, 4, device=device):
        opt.zero_grad()
        nn.functional.mse_loss(model(x[rank * per:(rank + 1) * per]), y[rank * per:(rank + 1) * per]).backward()
        opt.step()
        ref_opt.zero_grad()
        nn.functional.mse_loss(ref(x), y).backward()
        ref_opt.step()
    return model.module, ref


def same_on_every_rank(model):
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    allv = [torch.zeros_like(flat) for _ in range(dist.get_world_size())]
    dist.all_gather(allv, flat)
    for v in allv:
        assert torch.equal(v, flat)


@on_devices
def test_ddp_matches_single_process(world, device):
    model, ref = train_ddp(device=device)
    same_on_every_rank(model)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-5)


@on_devices
def test_ddp_fp16_and_bf16_compress_hooks(world, device):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as hooks
    for hook in (hooks.fp16_compress_hook, hooks.bf16_compress_hook):
        model, ref = train_ddp(hook, steps=5, device=device)
        same_on_every_rank(model)
        for p, q in zip(model.parameters(), ref.parameters()):
            torch.testing.assert_close(p, q, rtol=2e-2, atol=2e-2)


def block():
    torch.manual_seed(2)
    return nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                      batch_first=True)


@on_devices
def test_fsdp2_transformer_block(world, device):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    rank, n = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh(device, (n,))
    ref = block().to(device)
    model = copy.deepcopy(ref)
    fully_shard(model.linear1, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(3)
    per = GLOBAL_BATCH // n
    for _ in range(4):
        x = torch.randn(GLOBAL_BATCH, 5, 32, generator=g).to(device)
        opt.zero_grad()
        loss = model(x[rank * per:(rank + 1) * per]).pow(2).mean()
        loss.backward()
        opt.step()
        ref_opt.zero_grad()
        ref_loss = ref(x).pow(2).mean()
        ref_loss.backward()
        ref_opt.step()
        dist.all_reduce(loss := loss.detach().clone(), op=dist.ReduceOp.AVG)
        torch.testing.assert_close(loss, ref_loss.detach(), rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.full_tensor(), q.detach(), rtol=1e-4, atol=1e-5, msg=name)


@on_devices
def test_moe_all_to_all_dispatch_combine(world, device):
    """Each rank holds one expert (scale by rank + 1). Tokens go to their
    expert through all_to_all_single with uneven splits and come back."""
    rank, n = dist.get_rank(), dist.get_world_size()
    g = torch.Generator().manual_seed(100 + rank)
    tokens = torch.randn(37 + 5 * rank, 8, generator=g).to(device)
    expert = torch.randint(0, n, (tokens.shape[0],), generator=g).to(device)
    order = torch.argsort(expert, stable=True)
    send = tokens[order]
    send_counts = torch.bincount(expert, minlength=n)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)  # one count per peer
    recv = torch.empty(int(recv_counts.sum()), 8, device=device)
    dist.all_to_all_single(recv, send, recv_counts.tolist(), send_counts.tolist())
    out = recv * (rank + 1)  # the expert
    back = torch.empty_like(send)
    dist.all_to_all_single(back, out, send_counts.tolist(), recv_counts.tolist())
    combined = torch.empty_like(tokens)
    combined[order] = back
    torch.testing.assert_close(combined, tokens * (expert + 1).unsqueeze(1).float())
