"""Builds (once) and loads the C++ extension torch_loom._C.

An installed package (`pip install --no-build-isolation ./python`) has the
extension built at install time (torch_loom._C) and compiles nothing. From a
source tree the extension is compiled on first use against the installed
torch with torch.utils.cpp_extension.load (ninja) and linked with Loom's
libloom. Loom is found through LOOM_PREFIX (which loomrun gives its ranks),
else the prefix an install recorded, else from the `loomrun` on PATH (its bin/..): that
directory holds include/mpi.h and lib/libloom.so (a build tree or an install
prefix). The build output goes to TORCH_LOOM_BUILD_DIR, else
<Loom prefix>/torch-loom-ext/<torch version> when writable, else
~/.cache/torch_loom/<torch version>; ninja rebuilds only when a source changed,
and concurrent ranks wait on torch's lock while one of them compiles.

`TORCH_LOOM_BUILD_ONLY=1 python -m torch_loom._build` builds the extension
ahead of a job without initialising MPI.
"""
import os
import shutil
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_module = None


def loom_prefix():
    cands = []
    if os.environ.get("LOOM_PREFIX"):  # loomrun sets it for its ranks
        cands.append(os.environ["LOOM_PREFIX"])
    try:  # recorded by an install (setup.py)
        from ._prefix import LOOM_PREFIX as recorded
        cands.append(recorded)
    except ImportError:
        pass
    loomrun = shutil.which("loomrun")
    if loomrun:
        cands.append(os.path.dirname(os.path.dirname(os.path.realpath(loomrun))))
    for c in cands:
        if os.path.isfile(os.path.join(c, "include", "mpi.h")) and \
           os.path.exists(os.path.join(c, "lib", "libloom.so")):
            return os.path.abspath(c)
    raise RuntimeError(
        "torch_loom: cannot find Loom (include/mpi.h and lib/libloom.so): set LOOM_PREFIX to "
        "Loom's build or install directory, or put its bin/ (loomrun) on PATH; tried "
        + (", ".join(cands) or "nothing"))


def build_dir(prefix):
    import torch
    tag = "torch-" + torch.__version__.replace("+", "_")
    if os.environ.get("TORCH_LOOM_BUILD_DIR"):
        d = os.environ["TORCH_LOOM_BUILD_DIR"]
    elif os.access(prefix, os.W_OK):
        d = os.path.join(prefix, "torch-loom-ext", tag)
    else:
        d = os.path.join(os.path.expanduser("~"), ".cache", "torch_loom", tag)
    os.makedirs(d, exist_ok=True)
    return d


def load(verbose=False):
    """Returns the extension module, compiling it first when needed."""
    global _module
    if _module is not None:
        return _module
    try:  # built at install time (pip install --no-build-isolation ./python)
        from . import _C  # type: ignore
        _module = _C
        return _module
    except ImportError:
        pass
    import torch.utils.cpp_extension as ext
    prefix = loom_prefix()
    csrc = os.path.join(_here, "csrc")
    libdir = os.path.join(prefix, "lib")
    _module = ext.load(
        name="torch_loom_C",
        sources=[os.path.join(csrc, f) for f in ("loom_backend.cpp", "module.cpp", "engine.cpp")],
        extra_include_paths=[os.path.join(prefix, "include"), csrc],
        extra_cflags=["-O2"],
        extra_ldflags=["-L" + libdir, "-lloom", "-Wl,-rpath," + libdir],
        build_directory=build_dir(prefix),
        verbose=verbose,
    )
    return _module


if __name__ == "__main__":
    import time
    t = time.time()
    m = load(verbose="-v" in sys.argv)
    print(f"torch_loom: extension ready ({m.__file__}) in {time.time() - t:.1f} s")
