#!/usr/bin/env python3
"""Every function include/mpi.h declares is exported by libloom.so under its
MPI_ and its PMPI_ name, and mpi.h declares all 664 C functions of MPI 5.0.

    check_symbols.py include/mpi.h build/lib/libloom.so [nm]"""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "runtime", "api"))
import gen_unsupported  # noqa: E402  (its header parser)

header, lib = sys.argv[1], sys.argv[2]
nm = sys.argv[3] if len(sys.argv) > 3 else "nm"
with open(header) as f:
    names = [n for _, n, _ in gen_unsupported.parse_header(f.read())]
out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True,
                     text=True).stdout
exported = set(re.findall(r"\s[TW]\s+(P?MPI_\w+)$", out, re.M))
missing = [s for n in names for s in (n, "P" + n) if s not in exported]
problems = []
if len(set(names)) != 664:
    problems.append("mpi.h declares %d distinct MPI_ functions, MPI 5.0 has 664" % len(set(names)))
if missing:
    problems.append("not exported by %s: %s" % (lib, " ".join(missing)))
if problems:
    sys.exit("\n".join(problems))
print("all %d functions exported as MPI_ and PMPI_" % len(names))
