"""The loom mock device for torch (loom_mock_torch.cpp): torch's PrivateUse1
renamed "loommock", over Loom's mock device. Tests only: it needs
LOOM_DEVICE_MOCK=1 in the environment of every rank.

    from mock_device import load
    mock = load()                     # compiles once, renames PrivateUse1
    t = torch.ones(4).to("loommock")  # mock device memory; the host cannot touch it
"""
import os
import types

import torch

NAME = "loommock"
_mod = None


def load():
    global _mod
    if _mod is not None:
        return _mod
    if os.environ.get("LOOM_DEVICE_MOCK") != "1":
        raise RuntimeError("the loommock device needs LOOM_DEVICE_MOCK=1 (Loom's mock device)")
    # Renamed before torch_loom is imported (below): its import registers the
    # backend for the accelerators torch names then.
    if torch._C._get_privateuse1_backend_name() != NAME:
        torch.utils.rename_privateuse1_backend(NAME)
    import torch.utils.cpp_extension as ext
    import torch_loom._build as b
    prefix = b.loom_prefix()
    libdir = os.path.join(prefix, "lib")
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(b.build_dir(prefix), "loommock")
    os.makedirs(build, exist_ok=True)
    _mod = ext.load(
        name="loom_mock_torch",
        sources=[os.path.join(here, "loom_mock_torch.cpp")],
        extra_cflags=["-O1"],
        extra_ldflags=["-L" + libdir, "-lloom", "-Wl,-rpath," + libdir],
        build_directory=build,
        verbose=False,
    )
    _mod.register_hooks()
    if not hasattr(torch, NAME):
        dm = types.ModuleType("torch." + NAME)
        dm.is_available = lambda: True
        dm.device_count = lambda: 1
        dm.current_device = lambda: 0
        dm.is_initialized = lambda: True
        dm._is_in_bad_fork = lambda: False
        dm.manual_seed_all = lambda seed: None
        dm.synchronize = lambda device=None: _mod.synchronize_all()
        torch._register_device_module(NAME, dm)
    return _mod
