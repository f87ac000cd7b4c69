"""torch_loom: a torch.distributed backend named "loom" over Loom's MPI.

    import torch_loom                      # MPI init, env defaults, registration
    dist.init_process_group("loom")        # under: loomrun -n 4 python train.py

On import: MPI_Init_thread(MPI_THREAD_SERIALIZED) (MPI_Finalize at exit),
then RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and
MASTER_PORT are set from MPI where the environment lacks them (rank 0 picks a
free port and broadcasts it with its host), so the default env:// rendezvous
builds a TCPStore. Preset RANK/WORLD_SIZE (torchrun style) must agree with
MPI's. The backend is registered for CPU and CUDA tensors with the extended
API, so new_group() builds a sub-communicator of MPI_COMM_WORLD. CUDA tensors
follow NCCL's stream semantics (docs/torch.md).
"""
import atexit
import os
import socket

import torch
import torch.distributed as dist

from . import _build

__all__ = ["register", "rank", "world_size", "extension"]

BACKEND = "loom"
_ext = None
_registered = False


def extension():
    """The C++ module (compiled on first use); MPI is initialised once."""
    global _ext
    if _ext is None:
        m = _build.load()
        m.init()
        atexit.register(m.finalize)
        _ext = m
    return _ext


def rank():
    return extension().world_rank_size()[0]


def world_size():
    return extension().world_rank_size()[1]


def _check_env(name, mpi_value):
    v = os.environ.get(name)
    if v is not None and v != "" and int(v) != mpi_value:
        raise RuntimeError(
            f"torch_loom: {name}={v} but Loom's MPI_COMM_WORLD says {mpi_value}: start the job "
            f"with `loomrun -n N python ...` (or srun --mpi=pmix), not torchrun, and leave "
            f"{name} unset or equal to MPI's")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _setup_env():
    m = extension()
    r, n = m.world_rank_size()
    lr, ln = m.local_rank_size()
    _check_env("RANK", r)
    _check_env("WORLD_SIZE", n)
    os.environ.setdefault("RANK", str(r))
    os.environ.setdefault("WORLD_SIZE", str(n))
    os.environ.setdefault("LOCAL_RANK", str(lr))
    os.environ.setdefault("LOCAL_WORLD_SIZE", str(ln))
    # Every rank must take part in the broadcast or none: agree first.
    need = int("MASTER_ADDR" not in os.environ or "MASTER_PORT" not in os.environ)
    if m.allreduce_max_int(need) == 0:
        return
    host = socket.gethostname()
    port = str(_free_port()) if r == 0 else ""
    root_host = m.bcast_string(host, 0)
    port = m.bcast_string(port, 0)
    addr = "127.0.0.1" if root_host == host else root_host
    os.environ.setdefault("MASTER_ADDR", addr)
    os.environ.setdefault("MASTER_PORT", port)


def _accelerators():
    """The device types the backend registers beyond the CPU: cuda, and the
    tests' mock device when it is loaded (PrivateUse1 renamed "loommock")."""
    devs = ["cuda"]
    pu1 = torch._C._get_privateuse1_backend_name()
    if pu1 != "privateuseone":
        devs.append(pu1)
    return devs


def _device_in_use():
    """The accelerator device this process already works on, if any: the
    group binds it at creation (collective there, where every member takes
    part) instead of at its first op on device tensors."""
    pu1 = torch._C._get_privateuse1_backend_name()
    if pu1 != "privateuseone":
        return torch.device(pu1, 0)
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return torch.device("cuda", torch.cuda.current_device())
    return None


def _create(opts, backend_options):
    b = extension().create_backend(opts, backend_options)
    dev = _device_in_use()
    if b is not None and dev is not None:
        b.eager_connect_single_device(dev)
    return b


def register():
    """Registers the "loom" backend (idempotent); the torch.distributed.backends
    entry point calls this."""
    global _registered
    if _registered or BACKEND in dist.Backend.backend_list:
        _registered = True
        return
    dist.Backend.register_backend(BACKEND, _create, extended_api=True,
                                  devices=["cpu"] + _accelerators())
    _registered = True


if os.environ.get("TORCH_LOOM_BUILD_ONLY") != "1":  # set by `python -m torch_loom._build`
    _setup_env()
    register()
