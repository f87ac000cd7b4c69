"""The loom backend on device tensors: every op and dtype against the CPU
path on the same data, and NCCL's stream contract (ordering after the
current stream, wait() without a host block, tensor lifetime, futures,
coalescing, graph capture).

On a GPU the device is cuda; without one, with LOOM_DEVICE_MOCK=1, it is
the mock device "loommock" (tests/torch/mock_device), whose memory faults on
host access and whose streams run asynchronously. Skipped otherwise."""
import os
import time

import pytest
import torch
import torch.distributed as dist

from conftest import data
from test_collectives import ALL, FLOATS, ops_for, small

R = dist.ReduceOp
MOCK = os.environ.get("LOOM_DEVICE_MOCK") == "1"
DEV = "loommock" if MOCK else ("cuda" if torch.cuda.is_available() else None)
pytestmark = pytest.mark.skipif(DEV is None, reason="no device: no CUDA, and LOOM_DEVICE_MOCK is not 1")

if MOCK:
    import mock_device
    mock = mock_device.load()


def dev(t):
    return t.to(DEV)


def stream_sleep(ms):
    """Holds the current stream for `ms` milliseconds (the host goes on)."""
    if MOCK:
        mock.sleep_on_stream(ms)
    else:
        torch.cuda._sleep(int(ms * 2_000_000))  # cycles: >= ms at <= 2 GHz


def sync_all():
    """Waits for every stream; raises if the device saw a bad access."""
    if MOCK:
        mock.synchronize_all()
    else:
        torch.cuda.synchronize()


def check(got, exp, msg=""):
    torch.testing.assert_close(got.cpu(), exp, msg=msg)


def test_allreduce_every_op_and_dtype(world):
    rank, n, _ = world
    for dtype in ALL:
        for op in ops_for(dtype):
            kw = small(dtype, op)
            x = data(rank, (5, 7), dtype, **kw)
            c = x.clone()
            dist.all_reduce(c, op=op)
            d = dev(x)
            dist.all_reduce(d, op=op)
            check(d, c, f"{dtype} {op}")
    for dtype in FLOATS:
        for factor in (0.5, torch.tensor([2.0], dtype=dtype)):
            x = data(rank, (33,), dtype)
            c = x.clone()
            dist.all_reduce(c, op=dist._make_nccl_premul_sum(factor))
            d = dev(x)
            dist.all_reduce(d, op=dist._make_nccl_premul_sum(factor))
            check(d, c, f"premul {dtype}")
    # non-contiguous view: staged, copied back on the communication stream
    base = dev(data(rank, (6, 4), torch.float32))
    dist.all_reduce(base.t(), op=R.AVG)
    c = data(rank, (6, 4), torch.float32)
    dist.all_reduce(c, op=R.AVG)
    check(base, c)


def test_rooted_and_data_movement(world):
    rank, n, _ = world
    for root in range(n):
        for dtype in (torch.float32, torch.bfloat16, torch.int64):
            x = data(rank, (9,), dtype, root)
            c, d = x.clone(), dev(x)
            dist.reduce(c, dst=root, op=R.SUM)
            dist.reduce(d, dst=root, op=R.SUM)
            if rank == root:
                check(d, c, f"reduce {dtype} root {root}")
        d = dev(data(rank, (3, 5), torch.float16, 7))
        dist.broadcast(d, src=root)
        check(d, data(root, (3, 5), torch.float16, 7))
        # gather and scatter
        x = data(rank, (4,), torch.int32, 3)
        outs = [dev(torch.zeros(4, dtype=torch.int32)) for _ in range(n)] if rank == root else None
        dist.gather(dev(x), outs, dst=root)
        if rank == root:
            for r in range(n):
                check(outs[r], data(r, (4,), torch.int32, 3))
        ins = [dev(data(r, (2, 3), torch.float64, 9)) for r in range(n)] if rank == root else None
        out = dev(torch.zeros(2, 3, dtype=torch.float64))
        dist.scatter(out, ins, src=root)
        check(out, data(rank, (2, 3), torch.float64, 9))
    # all_gather: list (uneven), tensor, and FSDP2's in-place form
    outs = [dev(torch.zeros(r + 1)) for r in range(n)]
    dist.all_gather(outs, dev(torch.full((rank + 1,), float(rank))))
    for r in range(n):
        check(outs[r], torch.full((r + 1,), float(r)))
    big = dev(torch.zeros(n * 6, dtype=torch.bfloat16))
    dist.all_gather_into_tensor(big, dev(data(rank, (6,), torch.bfloat16, 5)))
    check(big, torch.cat([data(r, (6,), torch.bfloat16, 5) for r in range(n)]))
    host = torch.zeros(n * 6)
    host[rank * 6:(rank + 1) * 6] = data(rank, (6,), torch.float32, 6)
    big = dev(host)
    dist.all_gather_into_tensor(big, big[rank * 6:(rank + 1) * 6])
    check(big, torch.cat([data(r, (6,), torch.float32, 6) for r in range(n)]))
    # reduce_scatter: tensor (SUM, AVG, PREMUL_SUM), list (uneven)
    for op in (R.SUM, R.AVG, dist._make_nccl_premul_sum(0.5)):
        x = data(rank, (n * 4,), torch.float32, 3)
        c, d = torch.zeros(4), dev(torch.zeros(4))
        dist.reduce_scatter_tensor(c, x.clone(), op=op)
        dx = dev(x)
        dist.reduce_scatter_tensor(d, dx, op=op)
        check(d, c, f"reduce_scatter_tensor {op}")
        check(dx, x)  # the input is left as it was
    ins = [data(rank, (r + 2,), torch.float16, 10 + r) for r in range(n)]
    c, d = torch.zeros(rank + 2, dtype=torch.float16), dev(torch.zeros(rank + 2, dtype=torch.float16))
    dist.reduce_scatter(c, [t.clone() for t in ins])
    dist.reduce_scatter(d, [dev(t) for t in ins])
    check(d, c)
    # all_to_all_single with uneven splits (MoE dispatch), and the list form
    in_splits = [(rank + r) % 3 + 1 for r in range(n)]
    out_splits = [(r + rank) % 3 + 1 for r in range(n)]
    x = torch.arange(sum(in_splits) * 2, dtype=torch.float32).reshape(-1, 2) + 100 * rank
    c = torch.zeros(sum(out_splits), 2)
    dist.all_to_all_single(c, x, out_splits, in_splits)
    d = dev(torch.zeros(sum(out_splits), 2))
    dist.all_to_all_single(d, dev(x), out_splits, in_splits)
    check(d, c)
    outs_c = [torch.zeros(r + 1, dtype=torch.int16) for r in range(n)]
    ins_c = [torch.full((rank + 1,), rank * 10 + r, dtype=torch.int16) for r in range(n)]
    dist.all_to_all(outs_c, ins_c)
    outs_d = [dev(torch.zeros(r + 1, dtype=torch.int16)) for r in range(n)]
    dist.all_to_all(outs_d, [dev(t) for t in ins_c])
    for a, b in zip(outs_d, outs_c):
        check(a, b)


def test_point_to_point(world):
    rank, n, _ = world
    if n < 2:
        pytest.skip("needs 2 ranks")
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    t = dev(torch.full((1000,), float(rank)))
    r = dev(torch.zeros(1000))
    # the stream waits in a blocking send: alternate the order by parity
    if rank % 2 == 0:
        dist.send(t, nxt)
        dist.recv(r, prv)
    else:
        dist.recv(r, prv)
        dist.send(t, nxt)
    check(r, torch.full((1000,), float(prv)))
    # receive from any source: the sender is known once the stream got there
    if rank == 0:
        got = set()
        for _ in range(n - 1):
            buf = dev(torch.zeros(3, dtype=torch.int64))
            src = dist.recv(buf)
            check(buf, torch.full((3,), src, dtype=torch.int64))
            got.add(src)
        assert got == set(range(1, n))
    else:
        dist.send(dev(torch.full((3,), rank, dtype=torch.int64)), 0)


def test_coalesced_groups(world):
    rank, n, _ = world
    ts = [dev(data(rank, (k + 3,), torch.float32, k)) for k in range(3)]
    with dist._coalescing_manager(device=torch.device(DEV), async_ops=True) as cm:
        for t in ts:
            dist.all_reduce(t)
    cm.wait()
    for k, t in enumerate(ts):
        c = data(rank, (k + 3,), torch.float32, k)
        dist.all_reduce(c)
        check(t, c)
    if n < 2:
        return
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    sends = [dev(torch.full((k + 1,), rank * 10.0 + k)) for k in range(4)]
    recvs = [dev(torch.zeros(k + 1)) for k in range(4)]
    ops = [dist.P2POp(dist.isend, s, nxt) for s in sends] + [dist.P2POp(dist.irecv, r, prv) for r in recvs]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    for k, r in enumerate(recvs):
        check(r, torch.full((k + 1,), prv * 10.0 + k))


def test_ordered_after_the_current_stream(world):
    rank, n, _ = world
    t = dev(torch.zeros(64))
    stream_sleep(300)
    t.fill_(rank + 1.0)  # queued behind the sleep: the op must see it
    dist.all_reduce(t)
    check(t, torch.full((64,), n * (n + 1) / 2.0))
    out = dev(torch.zeros(n * 8))
    x = dev(torch.zeros(8))
    stream_sleep(200)
    x.fill_(float(rank))
    dist.all_gather_into_tensor(out, x)
    check(out, torch.arange(n, dtype=torch.float32).repeat_interleave(8))


def test_wait_does_not_block_the_host(world):
    rank, n, _ = world
    t = dev(torch.ones(256))
    stream_sleep(600)
    t0 = time.monotonic()
    w = dist.all_reduce(t, async_op=True)
    w.wait()  # the current stream waits; the host does not
    dt = time.monotonic() - t0
    assert dt < 0.3, f"all_reduce + wait() took {dt:.3f} s on the host"
    assert not w.is_completed()
    check(t, torch.full((256,), float(n)))  # a copy on the current stream, after the op
    deadline = time.monotonic() + 10
    while not w.is_completed():
        assert time.monotonic() < deadline, "the Work never completed"
        time.sleep(0.01)
    assert w.is_success()
    # async_op=False: ordered on the current stream the same way
    stream_sleep(300)
    t0 = time.monotonic()
    dist.all_reduce(t)
    assert time.monotonic() - t0 < 0.25
    check(t, torch.full((256,), float(n * n)))


def test_future_then(world):
    rank, n, _ = world
    t = dev(torch.full((5,), rank + 1.0))
    fut = dist.all_reduce(t, async_op=True).get_future()
    chained = fut.then(lambda f: f.value()[0].mul_(2))
    got = chained.wait()
    check(got, torch.full((5,), n * (n + 1.0)))
    check(fut.value()[0], torch.full((5,), n * (n + 1.0)))


def test_tensor_freed_right_after_the_call(world):
    rank, n, _ = world
    size = 1 << 16
    stream_sleep(300)  # the op runs well after the caller dropped its tensor
    t = dev(torch.full((size,), 1.0))
    w = dist.all_reduce(t, async_op=True)
    del t
    others = [dev(torch.full((size,), 7.0)) for _ in range(4)]
    w.wait()
    sync_all()  # the mock device raises here if the op touched freed memory
    for o in others:
        check(o, torch.full((size,), 7.0))
    # and a gather whose staging tensors are the backend's own
    x = dev(torch.full((size // 4,), float(rank)))
    outs = [dev(torch.zeros(size // 4)) for _ in range(n)]
    w = dist.all_gather(outs, x, async_op=True)
    del x
    w.wait()
    sync_all()
    for r in range(n):
        check(outs[r], torch.full((size // 4,), float(r)))


def test_subgroup_on_device(world):
    rank, n, _ = world
    members = list(range(0, n, 2))
    g = dist.new_group(members)
    if rank in members:
        t = dev(torch.full((4,), float(rank)))
        dist.all_reduce(t, group=g)
        check(t, torch.full((4,), float(sum(members))))


def test_graph_capture_fails_at_once(world):
    t = dev(torch.ones(4))
    if MOCK and not mock.guard_asks_capture():
        pytest.skip("this torch's device guard cannot say a stream is captured (torch 2.11)")
    if MOCK:
        mock.set_capturing(True)
        try:
            with pytest.raises(RuntimeError, match="graph capture"):
                dist.all_reduce(t)
        finally:
            mock.set_capturing(False)
    else:
        g = torch.cuda.CUDAGraph()
        with pytest.raises(RuntimeError, match="graph capture"):
            with torch.cuda.graph(g):
                dist.all_reduce(t)
    dist.all_reduce(t)  # the group still works
    check(t, torch.full((4,), float(world[1])))


def test_timeout_on_device(world):
    """A device op a rank never joins fails on the others after the group's
    timeout (its future and is_completed() say so; the host never waited)."""
    import datetime
    rank, n, _ = world
    if n < 2:
        pytest.skip("needs 2 ranks")
    last = n - 1
    g = dist.new_group(list(range(n)), timeout=datetime.timedelta(seconds=2))
    t = dev(torch.ones(8))
    dist.all_reduce(t, group=g)
    check(t, torch.full((8,), float(n)))
    if rank != last:
        u = dev(torch.ones(8))
        w = dist.all_reduce(u, group=g, async_op=True)
        with pytest.raises(RuntimeError, match=rf"allreduce \(collective number 2 of group .*\) did not "
                           rf"complete within 2000 ms.*had not joined it: {last}\."):
            w.get_future().wait()
        assert w.is_completed() and not w.is_success()
        with pytest.raises(RuntimeError, match="on an aborted group"):
            dist.all_reduce(u, group=g)
    dist.barrier()
    if rank == last:
        dist.all_reduce(dev(torch.ones(8)), group=g)  # the others' op ends with this one
    sync_all()


def test_coalesced_noncontiguous_receive(world):
    """The copy back of a receive staged for a non-contiguous tensor runs
    after the group's wait, not before its data arrived."""
    rank, n, _ = world
    if n < 2:
        pytest.skip("needs 2 ranks")
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    base = dev(torch.zeros(4, 6))
    send = dev(torch.full((4, 3), rank + 1.0))
    if rank % 2:
        time.sleep(0.3)  # the even ranks' receives wait for data a while
    ops = [dist.P2POp(dist.isend, send, nxt), dist.P2POp(dist.irecv, base[:, ::2], prv)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    check(base[:, ::2], torch.full((4, 3), prv + 1.0))
    check(base[:, 1::2], torch.zeros(4, 3))


def test_future_of_a_done_op_waits_for_nothing_later(world):
    """An op's future, once done, does not make its consumers wait for ops
    queued after it (one still waiting for a peer here)."""
    rank, n, _ = world
    if n < 2:
        pytest.skip("needs 2 ranks")
    last = n - 1
    t1, t2 = dev(torch.ones(4)), dev(torch.ones(4))
    stream_sleep(300)  # op 2 is queued before op 1 completes
    t0 = time.monotonic()
    fut = dist.all_reduce(t1, async_op=True).get_future()
    if rank != last:
        w2 = dist.all_reduce(t2, async_op=True)  # the last rank joins 1.5 s later
        fut.wait()
        check(fut.value()[0], torch.full((4,), float(n)))
        dt = time.monotonic() - t0
        assert dt < 1.2, f"op 1's result took {dt:.2f} s: it waited for op 2"
        w2.wait()
    else:
        fut.wait()
        time.sleep(1.5)
        dist.all_reduce(t2)
    check(t2, torch.full((4,), float(n)))


def test_error_inside_a_coalesced_group(world):
    """An op that raises inside _coalescing_manager abandons the group; the
    group's later ops run on their own."""
    rank, n, _ = world
    with pytest.raises(RuntimeError, match="one device"):
        with dist._coalescing_manager(device=torch.device(DEV), async_ops=True):
            dist.all_reduce(dev(torch.ones(3)))
            dist.all_reduce(torch.ones(3))  # a CPU tensor in a device group: refused
    t = dev(torch.ones(3))
    dist.all_reduce(t)
    check(t, torch.full((3,), float(n)))
