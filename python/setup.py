"""Builds torch_loom._C at install time: `pip install --no-build-isolation ./python`
(torch extensions build against the torch already installed, so pip must not
build in an isolated environment with another torch).

Loom is found as at import (LOOM_PREFIX, else the `loomrun` on PATH) and its
prefix is recorded in torch_loom/_prefix.py, so the installed package needs
neither at run time and its first import compiles nothing."""
import os
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
    # torch_loom/_build.py alone (importing the package would start MPI).
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "torch_loom_build", os.path.join(here, "torch_loom", "_build.py"))
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    try:
        return build.loom_prefix()
    except RuntimeError as e:
        sys.exit(str(e))


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
