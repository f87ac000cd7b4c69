"""Errors: Loom's message reaches Python as a RuntimeError; the environment
set up on import; the entry point torch loads the backend through."""
import importlib.metadata
import os
import pathlib
import shutil
import sys
import tempfile
import tomllib

import pytest
import torch
import torch.distributed as dist

import torch_loom

HERE = os.path.dirname(os.path.abspath(__file__))


def backend():
    return dist.group.WORLD._get_backend(torch.device("cpu"))


def test_env_from_mpi(world):
    rank, n, _ = world
    assert os.environ["RANK"] == str(rank) and os.environ["WORLD_SIZE"] == str(n)
    assert torch_loom.rank() == rank and torch_loom.world_size() == n
    assert 0 <= int(os.environ["LOCAL_RANK"]) < int(os.environ["LOCAL_WORLD_SIZE"])
    ports = [None] * n
    dist.all_gather_object(ports, os.environ["MASTER_PORT"])
    assert len(set(ports)) == 1
    assert dist.get_backend() == "loom"


def test_preset_rank_must_match_mpi(world):
    rank, n, _ = world
    torch_loom._check_env("RANK", rank)  # equal: fine
    os.environ["RANK"], saved = str(rank + 1), os.environ["RANK"]
    try:
        with pytest.raises(RuntimeError, match="loomrun"):
            torch_loom._check_env("RANK", rank)
    finally:
        os.environ["RANK"] = saved


def test_other_device_rejected(world):
    t = torch.empty(4, device="meta")
    with pytest.raises(RuntimeError, match="tensor on meta.*serves CPU and CUDA tensors"):
        backend().allreduce([t])


def test_unsupported_op_dtype(world):
    with pytest.raises(RuntimeError, match="BAND is not supported on dtype Float"):
        dist.all_reduce(torch.ones(2), op=dist.ReduceOp.BAND)
    with pytest.raises(RuntimeError, match="AVG is not supported"):
        dist.all_reduce(torch.ones(2, dtype=torch.int32), op=dist.ReduceOp.AVG)
    with pytest.raises(RuntimeError, match="expected 4 x 3|elements"):
        out = torch.zeros(dist.get_world_size() * 3 + 1)
        dist.all_gather_into_tensor(out, torch.zeros(3))


def test_mpi_error_string(world):
    rank, n, _ = world
    # An invalid rank and an invalid tag fail inside Loom: its error string comes through.
    with pytest.raises(RuntimeError, match=r"loom: MPI_Isend failed: .*rank"):
        backend().send([torch.ones(1)], n + 3, 0)
    with pytest.raises(RuntimeError, match=r"loom: MPI_Irecv failed: .*tag"):
        backend().recv([torch.ones(1)], 0, -5)


def test_entry_point(world):
    # The pyproject's torch.distributed.backends entry point, as an installed
    # dist-info would carry it, resolves to the registration function.
    with open(os.path.join(HERE, "..", "..", "python", "pyproject.toml"), "rb") as f:
        eps = tomllib.load(f)["project"]["entry-points"]["torch.distributed.backends"]
    assert eps == {"loom": "torch_loom:register"}
    tmp_path = pathlib.Path(tempfile.mkdtemp(prefix="torch_loom_ep"))
    info = tmp_path / "torch_loom-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch-loom\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[torch.distributed.backends]\nloom = torch_loom:register\n")
    sys.path.insert(0, str(tmp_path))
    try:
        found = [e for e in importlib.metadata.entry_points(group="torch.distributed.backends")
                 if e.name == "loom"]
        assert found and found[0].load() is torch_loom.register
        found[0].load()()  # idempotent
        assert "loom" in dist.Backend.backend_list
    finally:
        sys.path.remove(str(tmp_path))
        shutil.rmtree(tmp_path)


def test_timeout_names_the_op_and_the_ranks_missing(world):
    """An op that outlives the group's timeout raises on the ranks in it,
    naming the op, its collective number and the ranks that had not joined;
    the group is then aborted. destroy_process_group ends work in flight."""
    import datetime
    rank, n, _ = world
    if n < 2:
        pytest.skip("needs 2 ranks")
    last = n - 1
    g = dist.new_group(list(range(n)), timeout=datetime.timedelta(seconds=2))
    t = torch.ones(4)
    dist.all_reduce(t, group=g)  # collective number 1, everyone
    if rank != last:
        w = dist.all_reduce(t, group=g, async_op=True)  # number 2: the last rank stays out
        with pytest.raises(RuntimeError, match=rf"allreduce \(collective number 2 of group .*\) did not "
                           rf"complete within 2000 ms.*had not joined it: {last}\."):
            w.wait()
        with pytest.raises(RuntimeError, match="on an aborted group"):
            dist.all_reduce(t, group=g)
    dist.barrier()
    if rank == last:
        dist.all_reduce(t, group=g)  # meets the others' op, which MPI still runs
    dist.barrier()
    # shutdown with an op in flight: it fails, nothing hangs
    g2 = dist.new_group(list(range(n)), timeout=datetime.timedelta(seconds=1))
    w = dist.all_reduce(torch.ones(2), group=g2, async_op=True) if rank != last else None
    dist.destroy_process_group(g2)
    if w is not None:
        with pytest.raises(RuntimeError, match="shut down with this op in flight|did not complete"):
            w.wait()
    dist.barrier()
    if rank == last:
        pass  # g2 is gone here; the others' op stays in MPI until the job ends
