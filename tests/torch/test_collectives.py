"""Every op of the loom backend against an expectation computed locally from
all ranks' inputs (conftest.data), and against gloo on the same data."""
import functools

import pytest
import torch
import torch.distributed as dist

from conftest import data

R = dist.ReduceOp
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]
ALL = FLOATS + INTS + [torch.bool]


def expect_reduce(n, op, shape, dtype, seed=0, **kw):
    xs = [data(r, shape, dtype, seed, **kw) for r in range(n)]
    if dtype == torch.bool:
        fold = {R.SUM: torch.logical_or, R.MAX: torch.logical_or, R.BOR: torch.logical_or,
                R.PRODUCT: torch.logical_and, R.MIN: torch.logical_and, R.BAND: torch.logical_and,
                R.BXOR: torch.logical_xor}[op]
        return functools.reduce(fold, xs)
    wide = torch.float64 if dtype.is_floating_point else torch.int64
    ys = [x.to(wide) for x in xs]
    if op in (R.SUM, R.AVG):
        out = sum(ys)
        if op == R.AVG:
            out = out / n
    elif op == R.PRODUCT:
        out = functools.reduce(torch.mul, ys)
    elif op == R.MIN:
        out = functools.reduce(torch.minimum, ys)
    elif op == R.MAX:
        out = functools.reduce(torch.maximum, ys)
    elif op == R.BAND:
        out = functools.reduce(torch.bitwise_and, xs)
    elif op == R.BOR:
        out = functools.reduce(torch.bitwise_or, xs)
    elif op == R.BXOR:
        out = functools.reduce(torch.bitwise_xor, xs)
    return out.to(dtype)


def ops_for(dtype):
    if dtype == torch.bool:
        return [R.SUM, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR]
    if dtype.is_floating_point:
        return [R.SUM, R.AVG, R.PRODUCT, R.MIN, R.MAX]
    return [R.SUM, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR]


def small(dtype, op):
    # PRODUCT of 4 ranks' values must stay inside int8 and exact in fp16.
    return dict(low=1, high=3) if op == R.PRODUCT else {}


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_allreduce_ops(world, dtype):
    rank, n, _ = world
    for op in ops_for(dtype):
        kw = small(dtype, op)
        t = data(rank, (5, 7), dtype, **kw)
        dist.all_reduce(t, op=op)
        torch.testing.assert_close(t, expect_reduce(n, op, (5, 7), dtype, **kw), msg=f"{op}")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_allreduce_premul_sum(world, dtype):
    rank, n, _ = world
    for factor in (0.5, torch.tensor([2.0], dtype=dtype)):
        t = data(rank, (33,), dtype)
        dist.all_reduce(t, op=dist._make_nccl_premul_sum(factor))
        f = float(factor) if not torch.is_tensor(factor) else factor.item()
        torch.testing.assert_close(t, (expect_reduce(n, R.SUM, (33,), torch.float64) * f).to(dtype))


def test_allreduce_noncontiguous_async_future(world):
    rank, n, _ = world
    base = data(rank, (6, 4), torch.float32)
    t = base.t()  # non-contiguous view
    assert not t.is_contiguous()
    w = dist.all_reduce(t, async_op=True)
    got = w.get_future().wait()
    exp = expect_reduce(n, R.SUM, (6, 4), torch.float32)
    torch.testing.assert_close(base, exp)
    torch.testing.assert_close(got[0], exp.t())
    assert w.is_completed() and w.is_success()
    # then() chains run from the progress thread, nobody calls wait()
    fut = dist.all_reduce(torch.ones(3), async_op=True).get_future().then(lambda f: f.value()[0] * 2)
    torch.testing.assert_close(fut.wait(), torch.full((3,), 2.0 * n))


def test_allreduce_coalesced(world):
    rank, n, _ = world
    specs = [((4,), 1), ((3, 2), 2), ((5,), 3)]
    ts = [data(rank, shape, torch.float64, s) for shape, s in specs]
    ts[1] = ts[1].t()  # non-contiguous
    with pytest.warns(FutureWarning):
        dist.all_reduce_coalesced(ts, op=R.MAX)
    ts[1] = ts[1].t()
    for t, (shape, s) in zip(ts, specs):
        dt = torch.float64
        torch.testing.assert_close(t, expect_reduce(n, R.MAX, shape, dt, s))


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_broadcast(world, dtype):
    rank, n, _ = world
    for root in range(n):
        t = data(rank, (3, 5), dtype, 7)
        dist.broadcast(t, src=root)
        torch.testing.assert_close(t, data(root, (3, 5), dtype, 7))
    # non-contiguous
    t = data(rank, (4, 6), dtype, 8)[:, ::2]
    dist.broadcast(t, src=n - 1)
    torch.testing.assert_close(t, data(n - 1, (4, 6), dtype, 8)[:, ::2])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
def test_reduce(world, dtype):
    rank, n, _ = world
    for root in range(n):
        for op in (R.SUM, R.MAX) + ((R.AVG,) if dtype.is_floating_point else ()):
            t = data(rank, (9,), dtype, root)
            orig = t.clone()
            dist.reduce(t, dst=root, op=op)
            if rank == root:
                torch.testing.assert_close(t, expect_reduce(n, op, (9,), dtype, root))
            elif op != R.AVG:
                torch.testing.assert_close(t, orig)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_all_gather(world, dtype):
    rank, n, _ = world
    out = [torch.zeros(2, 3, dtype=dtype) for _ in range(n)]
    dist.all_gather(out, data(rank, (2, 3), dtype, 4))
    for r in range(n):
        torch.testing.assert_close(out[r], data(r, (2, 3), dtype, 4))
    # tensor form, and FSDP2's in-place form (input = this rank's block)
    big = torch.zeros(n * 6, dtype=dtype)
    dist.all_gather_into_tensor(big, data(rank, (6,), dtype, 5))
    torch.testing.assert_close(big, torch.cat([data(r, (6,), dtype, 5) for r in range(n)]))
    big = torch.zeros(n * 6, dtype=dtype)
    big[rank * 6:(rank + 1) * 6] = data(rank, (6,), dtype, 6)
    dist.all_gather_into_tensor(big, big[rank * 6:(rank + 1) * 6])
    torch.testing.assert_close(big, torch.cat([data(r, (6,), dtype, 6) for r in range(n)]))


def test_all_gather_uneven_and_coalesced(world):
    rank, n, _ = world
    out = [torch.zeros(r + 1) for r in range(n)]
    dist.all_gather(out, torch.full((rank + 1,), float(rank)))
    for r in range(n):
        torch.testing.assert_close(out[r], torch.full((r + 1,), float(r)))
    outs = [torch.zeros(n * 4), torch.zeros(n * 2, dtype=torch.int64)]
    with dist._coalescing_manager(async_ops=True) as cm:
        dist.all_gather_into_tensor(outs[0], data(rank, (4,), torch.float32, 1))
        dist.all_gather_into_tensor(outs[1], data(rank, (2,), torch.int64, 2))
    cm.wait()
    torch.testing.assert_close(outs[0], torch.cat([data(r, (4,), torch.float32, 1) for r in range(n)]))
    torch.testing.assert_close(outs[1], torch.cat([data(r, (2,), torch.int64, 2) for r in range(n)]))


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64], ids=str)
def test_reduce_scatter(world, dtype):
    rank, n, _ = world
    ops = (R.SUM, R.MAX) + ((R.AVG,) if dtype.is_floating_point else ())
    for op in ops:
        full = expect_reduce(n, op, (n * 4,), dtype, 3)
        out = torch.zeros(4, dtype=dtype)
        dist.reduce_scatter_tensor(out, data(rank, (n * 4,), dtype, 3), op=op)
        torch.testing.assert_close(out, full[rank * 4:(rank + 1) * 4], msg=f"{op}")
        out = torch.zeros(4, dtype=dtype)
        dist.reduce_scatter(out, list(data(rank, (n * 4,), dtype, 3).chunk(n)), op=op)
        torch.testing.assert_close(out, full[rank * 4:(rank + 1) * 4], msg=f"list {op}")
    if dtype.is_floating_point:
        inp = data(rank, (n * 4,), dtype, 3)
        keep = inp.clone()
        out = torch.zeros(4, dtype=dtype)
        dist.reduce_scatter_tensor(out, inp, op=dist._make_nccl_premul_sum(0.5))
        full = expect_reduce(n, R.SUM, (n * 4,), torch.float64, 3) * 0.5
        torch.testing.assert_close(out, full[rank * 4:(rank + 1) * 4].to(dtype))
        torch.testing.assert_close(inp, keep)  # the input is left as it was


def test_reduce_scatter_uneven_and_coalesced(world):
    rank, n, _ = world
    ins = [data(rank, (r + 2,), torch.float32, 10 + r) for r in range(n)]
    out = torch.zeros(rank + 2)
    dist.reduce_scatter(out, ins)
    torch.testing.assert_close(out, expect_reduce(n, R.SUM, (rank + 2,), torch.float32, 10 + rank))
    outs = [torch.zeros(3), torch.zeros(2, dtype=torch.float64)]
    with dist._coalescing_manager(async_ops=True) as cm:
        dist.reduce_scatter_tensor(outs[0], data(rank, (3 * n,), torch.float32, 1))
        dist.reduce_scatter_tensor(outs[1], data(rank, (2 * n,), torch.float64, 2))
    cm.wait()
    torch.testing.assert_close(outs[0], expect_reduce(n, R.SUM, (3 * n,), torch.float32, 1)[rank * 3:rank * 3 + 3])
    torch.testing.assert_close(outs[1], expect_reduce(n, R.SUM, (2 * n,), torch.float64, 2)[rank * 2:rank * 2 + 2])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int8, torch.bool], ids=str)
def test_all_to_all(world, dtype):
    rank, n, _ = world
    # even
    out = torch.zeros(n * 3, 2, dtype=dtype)
    dist.all_to_all_single(out, data(rank, (n * 3, 2), dtype, 1))
    exp = torch.cat([data(r, (n * 3, 2), dtype, 1)[rank * 3:rank * 3 + 3] for r in range(n)])
    torch.testing.assert_close(out, exp)
    # uneven: rank r sends (r + d) % 3 rows to rank d
    def rows(src, dst):
        return (src + dst) % 3
    ins = [rows(rank, d) for d in range(n)]
    outs = [rows(s, rank) for s in range(n)]
    inp = data(rank, (sum(ins), 4), dtype, 2)
    out = torch.zeros(sum(outs), 4, dtype=dtype)
    dist.all_to_all_single(out, inp, output_split_sizes=outs, input_split_sizes=ins)
    parts = []
    for s in range(n):
        src = data(s, (sum(rows(s, d) for d in range(n)), 4), dtype, 2)
        off = sum(rows(s, d) for d in range(rank))
        parts.append(src[off:off + rows(s, rank)])
    torch.testing.assert_close(out, torch.cat(parts))
    # list form
    outl = [torch.zeros(rows(s, rank), dtype=dtype) for s in range(n)]
    dist.all_to_all(outl, [data(rank, (rows(rank, d),), dtype, 20 + d) for d in range(n)])
    for s in range(n):
        torch.testing.assert_close(outl[s], data(s, (rows(s, rank),), dtype, 20 + rank))


def test_gather_scatter(world):
    rank, n, _ = world
    for root in range(n):
        out = [torch.zeros(3, dtype=torch.float64) for _ in range(n)] if rank == root else None
        dist.gather(data(rank, (3,), torch.float64, root), out, dst=root)
        if rank == root:
            for r in range(n):
                torch.testing.assert_close(out[r], data(r, (3,), torch.float64, root))
        got = torch.zeros(2, 2, dtype=torch.int32)
        src = [data(r, (2, 2), torch.int32, 50 + root) for r in range(n)] if rank == root else None
        dist.scatter(got, src, src=root)
        torch.testing.assert_close(got, data(rank, (2, 2), torch.int32, 50 + root))


def test_barrier_and_p2p(world):
    rank, n, _ = world
    dist.barrier()
    if n == 1:
        return
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    # blocking ring, even ranks send first
    t = torch.zeros(5)
    if rank % 2 == 0:
        dist.send(torch.full((5,), float(rank)), dst=nxt)
        dist.recv(t, src=prv)
    else:
        dist.recv(t, src=prv)
        dist.send(torch.full((5,), float(rank)), dst=nxt)
    torch.testing.assert_close(t, torch.full((5,), float(prv)))
    # isend/irecv with tags, non-contiguous receive buffer
    r = torch.zeros(4, 4)[:, 1]
    reqs = [dist.isend(torch.arange(4.0) + rank, dst=nxt, tag=7), dist.irecv(r, src=prv, tag=7)]
    for q in reqs:
        q.wait()
    torch.testing.assert_close(r, torch.arange(4.0) + prv)
    # batch_isend_irecv
    recv = torch.zeros(3, dtype=torch.int64)
    ops = [dist.P2POp(dist.isend, torch.full((3,), rank), nxt),
           dist.P2POp(dist.irecv, recv, prv)]
    for q in dist.batch_isend_irecv(ops):
        q.wait()
    torch.testing.assert_close(recv, torch.full((3,), prv))
    # receive from any source
    if rank == 0:
        seen = set()
        for _ in range(n - 1):
            t = torch.zeros(1)
            src = dist.recv(t)
            assert t.item() == src
            seen.add(src)
        assert seen == set(range(1, n))
    else:
        dist.send(torch.tensor([float(rank)]), dst=0)


def test_subgroups(world):
    rank, n, _ = world
    evens = list(range(0, n, 2))
    g = dist.new_group(evens)
    if rank in evens:
        t = torch.tensor([float(rank)])
        dist.all_reduce(t, group=g)
        assert t.item() == sum(evens)
        assert dist.get_rank(g) == evens.index(rank)
    else:
        assert g == dist.GroupMember.NON_GROUP_MEMBER
    # every rank in exactly one of two groups, created on all ranks in the same order
    lo, hi = list(range(n // 2)), list(range(n // 2, n))
    groups = [dist.new_group(lo) if lo else None, dist.new_group(hi)]
    mine = groups[0] if rank in lo else groups[1]
    t = torch.ones(2)
    dist.all_reduce(t, group=mine)
    assert t[0].item() == (len(lo) if rank in lo else len(hi))
    out = [torch.zeros(1) for _ in range(dist.get_world_size(mine))]
    dist.all_gather(out, torch.tensor([float(rank)]), group=mine)
    assert [o.item() for o in out] == (lo if rank in lo else hi)
    if n >= 2:
        # broadcast from a group member given by global rank
        members = lo if rank in lo else hi
        t = torch.tensor([float(rank)])
        dist.broadcast(t, src=members[-1], group=mine)
        assert t.item() == members[-1]
    # split_group into the same halves (torch 2.11 splits only a default
    # group bound to a device: init_process_group(device_id=...))
    if dist.group.WORLD.bound_device_id is None and tuple(map(int, torch.__version__.split(".")[:2])) < (2, 12):
        return
    sg = dist.split_group(split_ranks=[r for r in (lo, hi) if r])
    if sg is not None:
        t = torch.ones(1)
        dist.all_reduce(t, group=sg)
        assert t.item() == (len(lo) if rank in lo else len(hi))


def test_same_as_gloo(world):
    rank, n, gloo = world
    def both(fn, exact=True):
        a, b = fn(None), fn(gloo)
        # reductions may add in another order than gloo's
        torch.testing.assert_close(a, b, **({"rtol": 0, "atol": 0} if exact else {}))
    def ar(g):
        t = torch.randn(1000, generator=torch.Generator().manual_seed(rank))
        dist.all_reduce(t, group=g)
        return t
    def ag(g):
        out = torch.zeros(n * 10)
        dist.all_gather_into_tensor(out, torch.randn(10, generator=torch.Generator().manual_seed(rank)), group=g)
        return out
    def rs(g):
        out = torch.zeros(8)
        dist.reduce_scatter_tensor(out, torch.arange(8.0 * n) * (rank + 1), group=g)
        return out
    def a2a(g):
        ins = [(rank + d) % 3 + 1 for d in range(n)]
        outs = [(s + rank) % 3 + 1 for s in range(n)]
        out = torch.zeros(sum(outs), 2)
        dist.all_to_all_single(out, torch.randn(sum(ins), 2, generator=torch.Generator().manual_seed(rank)),
                               outs, ins, group=g)
        return out
    def bc(g):
        t = torch.randn(17, generator=torch.Generator().manual_seed(rank))
        dist.broadcast(t, src=n - 1, group=g)
        return t
    for fn in (ag, a2a, bc):
        both(fn)
    for fn in (ar, rs):
        both(fn, exact=False)
