#!/usr/bin/env python3
"""Refresh mpi-functions.json, the description of MPI's procedures the Fortran
bindings are generated from, out of the MPI Forum's machine-readable data.

The MPI Forum publishes the standard's procedures, their parameters and each
parameter's semantic kind as data (apis.json, shipped in the `pympistandard`
package on PyPI). This script keeps the facts the generator needs (names,
kinds, directions, array lengths, which language a parameter exists in) and
drops the prose. Run it by hand when a new standard appears:

    python3 -m venv /tmp/v && /tmp/v/bin/pip install pympistandard
    /tmp/v/bin/python runtime/fortran/extract_forum_apis.py [apis.json] > runtime/fortran/mpi-functions.json
"""
import json
import os
import sys

KEEP_ATTRS = ("callback", "c_expressible", "f90_expressible", "f08_expressible", "deprecated",
              "not_with_mpif")
KEEP_PARAM = ("name", "kind", "param_direction", "length", "optional", "suppress", "large_only",
              "pointer")


def forum_data(path):
    if path:
        return path
    import pympistandard  # noqa: F401  (only to find its data file)
    return os.path.join(os.path.dirname(pympistandard.__file__), "data", "apis.json")


def main():
    with open(forum_data(sys.argv[1] if len(sys.argv) > 1 else None)) as f:
        apis = json.load(f)
    out = []
    for key in sorted(apis):
        p = apis[key]
        a = p["attributes"]
        out.append({
            "name": p["name"],
            "return": p["return_kind"],
            "attrs": [k for k in KEEP_ATTRS if a.get(k)],
            "params": [{k: q[k] for k in KEEP_PARAM if q.get(k) not in (None, "", False)}
                       for q in p["parameters"]],
        })
    # One procedure a line, so a new standard's changes read as a diff.
    sys.stdout.write('{"source": "MPI Forum apis.json via pympistandard",\n "procedures": [\n')
    sys.stdout.write(",\n".join(json.dumps(p, separators=(",", ":")) for p in out))
    sys.stdout.write("\n]}\n")


if __name__ == "__main__":
    main()
