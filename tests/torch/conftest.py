"""Every rank of a `loomrun -n N python -m pytest tests/torch` job runs the same
tests in the same order; the "loom" process group is made once per job, with
a gloo group over the same ranks to compare against."""
import os
import sys

import pytest
import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
if os.environ.get("LOOM_DEVICE_MOCK") == "1":
    # The mock torch device (PrivateUse1 "loommock") first: torch_loom
    # registers the backend for it too when it is there at import.
    sys.path.insert(0, os.path.dirname(__file__))
    import mock_device  # noqa: E402
    mock_device.load()
import torch_loom  # noqa: E402  (MPI init, env defaults, registration)


@pytest.fixture(scope="session")
def world():
    if torch.cuda.is_available():
        # One GPU per rank where there are enough, else ranks share them.
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
    if not dist.is_initialized():
        dist.init_process_group("loom")
    gloo = dist.new_group(backend="gloo")
    yield dist.get_rank(), dist.get_world_size(), gloo


@pytest.fixture(autouse=True)
def _in_step(world):
    # A test that failed on one rank must not leave another rank's next
    # collective waiting for a partner.
    yield
    dist.barrier()


def data(rank, shape, dtype, seed=0, low=-4, high=5):
    """Rank `rank`'s input: small integers, so every sum and product is exact
    in every dtype and the reduction order does not matter."""
    g = torch.Generator().manual_seed(1000 * rank + seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype == torch.uint8:
        low = max(low, 0)
    return torch.randint(low, high, shape, generator=g).to(dtype)
