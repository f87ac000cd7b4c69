#!/usr/bin/env python3
"""Writes the entry points of every MPI function that include/mpi.h declares
and no source file of runtime/api defines yet.

It reads which PMPI_ functions the entry-point archive (loom_api) defines
with nm, so an entry point written any way at all (a macro, a template) counts.
Each generated PMPI_Foo reports MPI_ERR_UNSUPPORTED_OPERATION through the
error handler that the standard names for its first argument and MPI_Foo is
its weak alias, exactly like a hand-written entry point. The same run writes
the table behind `loom-info --unsupported`. An entry point disappears from the
generated file as soon as loom_api defines it.

    gen_unsupported.py --header include/mpi.h --nm nm --archive libloom_api.a --out stubs.cc
"""
import argparse
import re
import subprocess
import sys

# Prototypes as include/mpi.h writes them: one declaration per statement,
# MPI_ name first (the PMPI_ twin follows it).
PROTO = re.compile(r"^([A-Za-z_][A-Za-z_0-9 ]*?[ *])(MPI_[A-Za-z0-9_]+)\s*\(([^;]*)\)\s*;",
                   re.M | re.S)
DEFINED = re.compile(r"^[0-9a-f]*\s+[TW]\s+(?:PMPI_|LOOM_IMPL_)([A-Za-z0-9_]+)$", re.M)

# The area each missing function belongs to, first match wins: what
# `loom-info --unsupported` groups by and what the error message names.
AREAS = [
    ("tools interface (MPI_T)", r"MPI_T_"),
    ("MPI-IO (files)", r"MPI_File_|MPI_Register_datarep"),
    ("one-sided communication (windows)",
     r"MPI_Win_|MPI_R?[Pp]ut|MPI_R?[Gg]et(_c|_accumulate)?$|MPI_R?[Aa]ccumulate|MPI_Rget|"
     r"MPI_Fetch_and_op|MPI_Compare_and_swap|MPI_Get_accumulate"),
    ("dynamic processes",
     r"MPI_Comm_spawn|MPI_Open_port|MPI_Close_port|MPI_Comm_accept|MPI_Comm_connect|"
     r"MPI_Comm_disconnect|MPI_Comm_join|MPI_(Un)?[Pp]ublish_name|MPI_Lookup_name|"
     r"MPI_Comm_get_parent"),
    ("process topologies",
     r"MPI_Cart|MPI_Graph|MPI_Dist_graph|MPI_Dims_create|MPI_Topo_test|MPI_I?[Nn]eighbor_"),
    ("intercommunicators", r"MPI_Intercomm_|MPI_Comm_remote_"),
    ("buffered-mode buffers", r"MPI_(Buffer|Comm|Session)_(i?flush|attach|detach)"),
    ("sessions", r"MPI_Session_|MPI_Group_from_session_pset"),
    ("partitioned communication", r"MPI_Psend_init|MPI_Precv_init|MPI_Pready|MPI_Parrived"),
    ("info objects", r"MPI_Info_|MPI_Comm_[gs]et_info"),
    ("persistent collectives", r"MPI_(?!([BRS]s|S)end_init|Recv_init)[A-Z][a-z_]*_init(_c)?$"),
    ("datatypes", r"MPI_Type_|MPI_(Un)?[Pp]ack_external"),
    ("attributes (MPI-1 names)", r"MPI_(Attr|Keyval)_"),
    ("large-count (_c) variants", r".*_c$"),
]


def area_of(name):
    for area, pattern in AREAS:
        if re.match(pattern, name):
            return area
    return "other"


INTEROP = "/* ======================== Fortran interoperability"


def parse_header(text):
    """(return type, name, parameter text) of each MPI_ prototype, in order:
    the C API's, up to the Fortran interoperability section (whose functions
    fortran_interop_api.cc defines and which are not among MPI 5.0's 664)."""
    text = text.split(INTEROP)[0]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for m in PROTO.finditer(text):
        ret = " ".join(m.group(1).split())
        if ret.startswith(("typedef", "#")):
            continue
        params = " ".join(m.group(3).split())
        out.append((ret, m.group(2), params))
    return out


def first_param(params):
    first = params.split(",")[0].strip()
    m = re.match(r"(?:const\s+)?(MPI_[A-Za-z]+)\s+\**\s*([A-Za-z_0-9]+)$", first)
    return (m.group(1), m.group(2)) if m else (None, None)


def stub(ret, name, params):
    if ret != "int" or name.endswith("_toint"):
        sys.exit("gen_unsupported.py: %s returns a value, not an error code: it needs a "
                 "real implementation" % name)
    kind, arg = first_param(params)
    # The object whose error handler the standard invokes: a communicator
    # argument's own; files default to MPI_ERRORS_RETURN; tool (MPI_T)
    # functions never invoke a handler; everything else MPI_COMM_WORLD's.
    if name.startswith("MPI_T_"):
        how = "loom::api::Unsupported::kTool, nullptr"
    elif kind == "MPI_File" or name.startswith("MPI_File_"):
        how = "loom::api::Unsupported::kReturn, nullptr"
    elif kind == "MPI_Comm" and not params.split(",")[0].strip().startswith("MPI_Comm *"):
        how = "loom::api::Unsupported::kComm, %s" % arg
    else:
        how = "loom::api::Unsupported::kWorld, nullptr"
    return ('extern "C" int P%s(%s) {\n'
            '  return loom::api::unsupported("%s", "%s", %s);\n'
            '}\nLOOM_WEAK_ALIAS(%s)\n' % (name, params, name, area_of(name), how, name))


def wrapped(ret, params):
    """Whether an entry point goes through a generated wrapper that takes the
    API lock (core/progress_async.h): every function returning an error code,
    except the variadic MPI_Pcontrol. Functions returning a value (MPI_Wtime,
    MPI_Aint_add, the _toint/_fromint conversions) touch no shared state."""
    return ret == "int" and "..." not in params


def param_names(params):
    names = []
    if params.strip() in ("", "void"):
        return names
    for p in params.split(","):
        p = re.sub(r"(\[[^\]]*\])+\s*$", "", p.strip())
        m = re.search(r"([A-Za-z_][A-Za-z_0-9]*)\s*$", p)
        names.append(m.group(1))
    return names


def names_header(protos):
    """The renames every source of runtime/api is compiled with: the
    implementation of MPI_Foo is defined as LOOM_IMPL_Foo (its weak MPI_
    alias as LOOM_IMPLW_Foo, unexported), and the generated PMPI_Foo
    wrapper calls it under the API lock."""
    lines = ["// Generated by runtime/api/gen_unsupported.py from include/mpi.h. Do not edit.",
             "#pragma once", "#define LOOM_API_WRAPPED 1"]
    for ret, name, params in protos:
        if wrapped(ret, params):
            base = name[4:]
            lines.append("#define P%s LOOM_IMPL_%s" % (name, base))
            lines.append("#define %s LOOM_IMPLW_%s" % (name, base))
    return "\n".join(lines) + "\n"


def wrapper(ret, name, params):
    base = name[4:]
    args = ", ".join(param_names(params))
    return ('extern "C" int LOOM_IMPL_%s(%s);\n'
            'extern "C" int P%s(%s) {\n'
            '  if (__builtin_expect(!loom::progress::asyncOn(), 1)) {\n'
            '    loom::progress::enterUnlockedCall();\n'
            '    int rc = LOOM_IMPL_%s(%s);\n'
            '    loom::progress::leaveUnlockedCall();\n'
            '    return rc;\n'
            '  }\n'
            '  loom::progress::ApiGuard guard;\n'
            '  return LOOM_IMPL_%s(%s);\n'
            '}\nLOOM_WEAK_ALIAS(%s)\n' % (base, params, name, params, base, args, base, args, name))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--header", required=True)
    ap.add_argument("--out")
    ap.add_argument("--nm")
    ap.add_argument("--archive")
    ap.add_argument("--names-header")
    args = ap.parse_args()
    with open(args.header) as f:
        text = f.read()
    protos = parse_header(text)
    if args.names_header:
        out = names_header(protos)
        try:
            with open(args.names_header) as f:
                if f.read() == out:
                    return
        except OSError:
            pass
        with open(args.names_header, "w") as f:
            f.write(out)
        return
    interop = set(re.findall(r"\b(MPI_\w+)\(", text.split(INTEROP)[1]))
    interop |= {"MPI_%s_%s" % (k, d) for k in re.findall(r"^LOOM_F2C_DECL\((\w+),", text, re.M)
                for d in ("f2c", "c2f")}
    symbols = subprocess.run([args.nm, "--defined-only", args.archive], check=True,
                             capture_output=True, text=True).stdout
    defined = {"MPI_" + n for n in DEFINED.findall(symbols)}
    declared = {name for _, name, _ in protos}
    stray = sorted(defined - declared - interop)
    if stray:
        sys.exit("gen_unsupported.py: defined but not declared in mpi.h: " + ", ".join(stray))
    wrapped_names = {n for _, n, _ in protos} & set(
        "MPI_" + n for n in re.findall(r"^[0-9a-f]*\s+T\s+LOOM_IMPL_([A-Za-z0-9_]+)$", symbols, re.M))
    missing = [p for p in protos if p[1] not in defined]
    lines = [
        "// Generated by runtime/api/gen_unsupported.py from include/mpi.h: the",
        "// MPI functions no source of runtime/api defines yet. Do not edit.",
        "#include \"api/unsupported.h\"",
        "#include \"core/progress_async.h\"",
        "",
        "#pragma GCC diagnostic ignored \"-Wunused-parameter\"",
        "",
    ]
    for ret, name, params in missing:
        lines.append(stub(ret, name, params))
    lines.append("// The implemented entry points, each under the API lock while asynchronous")
    lines.append("// progress runs (core/progress_async.h).")
    for ret, name, params in protos:
        if name in wrapped_names:
            lines.append(wrapper(ret, name, params))
    lines.append("namespace loom::api {")
    lines.append("const UnsupportedFunction kUnsupportedFunctions[] = {")
    for _, name, _ in missing:
        lines.append('    {"%s", "%s"},' % (name, area_of(name)))
    lines.append("    {nullptr, nullptr},")
    lines.append("};")
    lines.append("const int kImplementedFunctions = %d;" % (len(protos) - len(missing)))
    lines.append("}  // namespace loom::api")
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
