"""Builds torch_loom._C at install time: `pip install --no-build-isolation ./python`
(torch extensions build against the torch already installed, so pip must not
build in an isolated environment with another torch).

Loom is found as at import (LOOM_PREFIX, else the `loomrun` on PATH) and its
prefix is recorded in torch_loom/_prefix.py, so the installed package needs
neither at run time and its first import compiles nothing."""
import os
import shutil
import sys

from setuptools import setup

here = os.path.dirname(os.path.abspath(__file__))

try:
    import torch  # noqa: F401
    from torch.utils.cpp_extension import BuildExtension, CppExtension
except ImportError:
    sys.exit("torch_loom: torch is not importable here; install torch first, then "
             "`pip install --no-build-isolation ./python` (the extension must be built against "
             "the torch it runs with)")


def loom_prefix():
    cands = []
    if os.environ.get("LOOM_PREFIX"):
        cands.append(os.environ["LOOM_PREFIX"])
    loomrun = shutil.which("loomrun")
    if loomrun:
        cands.append(os.path.dirname(os.path.dirname(os.path.realpath(loomrun))))
    for c in cands:
        if os.path.isfile(os.path.join(c, "include", "mpi.h")) and \
           os.path.exists(os.path.join(c, "lib", "libloom.so")):
            return os.path.abspath(c)
    sys.exit("torch_loom: cannot find Loom (include/mpi.h and lib/libloom.so): set LOOM_PREFIX to "
             "Loom's build or install directory, or put its bin/ (loomrun) on PATH; tried "
             + (", ".join(cands) or "nothing"))


prefix = loom_prefix()
with open(os.path.join(here, "torch_loom", "_prefix.py"), "w") as f:
    f.write('"""Written by setup.py: the Loom this package was built against."""\n')
    f.write(f"LOOM_PREFIX = {prefix!r}\n")

csrc = os.path.join("torch_loom", "csrc")
lib = os.path.join(prefix, "lib")
setup(
    ext_modules=[
        CppExtension(
            "torch_loom._C",
            sources=[os.path.join(csrc, f) for f in ("loom_backend.cpp", "module.cpp", "engine.cpp")],
            include_dirs=[os.path.join(prefix, "include"), os.path.join(here, csrc)],
            library_dirs=[lib],
            libraries=["loom"],
            extra_compile_args=["-O2"],
            extra_link_args=["-Wl,-rpath," + lib],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
