#!/usr/bin/env python3
"""Every function include/mpi.h declares is exported by libloom.so under its
MPI_ and its PMPI_ name, and mpi.h declares all 664 C functions of MPI 5.0;
with include/mpi-ext.h, every MPIX_ function it declares is exported as
MPIX_ and PMPIX_ too.

    check_symbols.py include/mpi.h build/lib/libloom.so [nm [include/mpi-ext.h]]"""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "runtime", "api"))
import gen_unsupported  # noqa: E402  (its header parser)

header, lib = sys.argv[1], sys.argv[2]
nm = sys.argv[3] if len(sys.argv) > 3 else "nm"
ext = sys.argv[4] if len(sys.argv) > 4 else None
with open(header) as f:
    header_text = f.read()
names = [n for _, n, _ in gen_unsupported.parse_header(header_text)]
out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True,
                     text=True).stdout
exported = set(re.findall(r"\s[TW]\s+(P?MPIX?_\w+)$", out, re.M))
# The Fortran interoperability functions (f2c/c2f, status conversions).
interop = header_text.split(gen_unsupported.INTEROP)[1]
names_interop = re.findall(r"^int\s+(MPI_Status_\w+)\(", interop, re.M)
names_interop += ["MPI_%s_%s" % (k, d) for k in re.findall(r"^LOOM_F2C_DECL\((\w+),", interop, re.M)
                  for d in ("f2c", "c2f")]
if len(names_interop) != 28:
    sys.exit("expected 28 Fortran interoperability functions in mpi.h, found %d" %
             len(names_interop))
names_ext = []
if ext:
    with open(ext) as f:
        ext_text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    names_ext = sorted(set(re.findall(r"^\s*int\s+(MPIX_\w+)\s*\(", ext_text, re.M)))
    if not names_ext:
        sys.exit("no MPIX_ prototype found in %s" % ext)
missing = [s for n in names + names_interop + names_ext for s in (n, "P" + n) if s not in exported]
problems = []
if len(set(names)) != 664:
    problems.append("mpi.h declares %d distinct MPI_ functions, MPI 5.0 has 664" % len(set(names)))
if missing:
    problems.append("not exported by %s: %s" % (lib, " ".join(missing)))
if problems:
    sys.exit("\n".join(problems))
print("all %d functions exported as MPI_ and PMPI_" % len(names) +
      (", %d MPIX_ functions as MPIX_ and PMPIX_" % len(names_ext) if ext else ""))
