#!/usr/bin/env python3
"""Every procedure the generated `mpi` module and mpif.h promise exists in
libloom_fortran.so under its Fortran name and its profiling name (mpi_send_,
pmpi_send_), and every MPI function libloom implements that the MPI Forum's
description gives a Fortran form has one.

    check_fortran_symbols.py GEN_DIR libloom_fortran.so libloom.so [nm]"""
import json
import os
import re
import subprocess
import sys

gen, flib, clib = sys.argv[1:4]
nm = sys.argv[4] if len(sys.argv) > 4 else "nm"


def exported(lib):
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    return set(re.findall(r"\s[TW]\s+(\S+)$", out, re.M))


fsyms = exported(flib)
with open(os.path.join(gen, "mpi.f90")) as f:
    mod = f.read()
iface = sorted(set(n.lower() for n in re.findall(r"^    subroutine (MPI_\w+)\(", mod, re.M)))
missing = [s for n in iface for s in (n + "_", "p" + n + "_") if s not in fsyms]
problems = []
if len(iface) < 400:
    problems.append("the mpi module declares only %d procedures" % len(iface))
if missing:
    problems.append("not in libloom_fortran: " + " ".join(missing))
# Every C function libloom defines (not a stub) with a Fortran form is bound.
here = os.path.dirname(os.path.abspath(__file__))
desc = json.load(open(os.path.join(here, "..", "..", "..", "runtime", "fortran",
                                   "mpi-functions.json")))
fortran_forms = {p["name"] for p in desc["procedures"]
                 if "f90_expressible" in p["attrs"] and "callback" not in p["attrs"]}
skipped = {ln.split(":")[0] for ln in open(os.path.join(gen, "fortran_skipped.txt"))}
csyms = exported(clib)
unbound = sorted(n for n in fortran_forms
                 if ("P" + n) in csyms and n not in skipped and n.lower() + "_" not in fsyms)
if unbound:
    problems.append("have a Fortran form but no binding: " + " ".join(unbound))
if problems:
    sys.exit("\n".join(problems))
print("%d Fortran procedures bound (mpi_ and pmpi_), %d left out (fortran_skipped.txt)" %
      (len(iface), len(skipped)))
