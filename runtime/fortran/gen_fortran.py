#!/usr/bin/env python3
"""Generate Loom's Fortran bindings from one description of MPI's procedures.

    gen_fortran.py MPI_H FUNCTIONS_JSON OUTDIR

Inputs:
  MPI_H           include/mpi.h: the C prototypes (parameter C types) and the
                  constants (their values, shared by C and Fortran in the ABI).
  FUNCTIONS_JSON  runtime/fortran/mpi-functions.json: each procedure's
                  parameters with their semantic kind, direction and array
                  length, as the MPI Forum publishes them.
Outputs (in OUTDIR):
  mpif.h                  constants and function types for `include 'mpif.h'`
                          (valid as fixed and as free form source)
  mpi.f90                 module mpi: the constants and an explicit interface
                          for every procedure
  mpi_f08.f90             module mpi_f08: handle types, constants, operators,
                          and a generic procedure for every procedure
  fortran_wrappers.c      the C entry points every Fortran call lands in
                          (mpi_send_, pmpi_send_, ...): handle, string,
                          logical, status and sentinel conversions

A Fortran handle is the C handle's MPI_Xxx_toint number, and a Fortran status
has the C status's layout, so most conversions are cheap. Procedures whose
Fortran form needs more than the table below knows (callbacks, attribute
values) are written by hand in fortran_callbacks.c and listed in HAND_WRITTEN.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api"))
import gen_unsupported  # noqa: E402  (its mpi.h prototype parser)

HANDLES = ["Comm", "Datatype", "Errhandler", "File", "Group", "Info", "Message", "Op",
           "Request", "Session", "Win"]
HANDLE_C = {"MPI_" + h: h for h in HANDLES}
# The MPI_Xxx_toint / fromint name of each handle kind (the ABI's).
ABI = {h: ("Type" if h == "Datatype" else h) for h in HANDLES}

# Procedures with callbacks or attribute values: fortran_callbacks.c defines
# their Fortran entry points; the generator only declares them.
HAND_WRITTEN = {
    "MPI_Op_create", "MPI_Comm_create_errhandler", "MPI_Session_create_errhandler",
    "MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Keyval_create",
    "MPI_Comm_get_attr", "MPI_Comm_set_attr", "MPI_Type_get_attr", "MPI_Type_set_attr",
    "MPI_Attr_get", "MPI_Attr_put", "MPI_Grequest_start", "MPI_Info_get_string",
}
# Procedures left out of Fortran (with the reason, printed by --why).
SKIP = {
    "MPI_Comm_spawn": "dynamic processes: string arrays",
    "MPI_Comm_spawn_multiple": "dynamic processes: string arrays",
    "MPI_Info_create_env": "argv",
    "MPI_Pcontrol": "varargs: hand-written",
    "MPI_Sizeof": "Fortran-only: hand-written in the modules",
    "MPI_Status_f082f": "Fortran-only: hand-written in the modules",
    "MPI_Status_f2f08": "Fortran-only: hand-written in the modules",
    "MPI_F_sync_reg": "Fortran-only: hand-written",
    "MPI_Register_datarep": "MPI-IO data representations: callbacks",
    "MPI_Win_create_keyval": "callbacks of an unsupported chapter",
    "MPI_Win_create_errhandler": "callbacks of an unsupported chapter",
    "MPI_File_create_errhandler": "callbacks of an unsupported chapter",
    "MPI_Win_get_attr": "attribute values of an unsupported chapter",
    "MPI_Win_set_attr": "attribute values of an unsupported chapter",
    "MPI_Abi_get_fortran_booleans": "C-only in practice (void* logicals)",
    "MPI_Abi_set_fortran_booleans": "C-only in practice (void* logicals)",
}

INT_KIND = {"int": "INTEGER", "MPI_Aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
            "MPI_Offset": "INTEGER(KIND=MPI_OFFSET_KIND)",
            "MPI_Count": "INTEGER(KIND=MPI_COUNT_KIND)", "MPI_Fint": "INTEGER"}
C_OF_INT = {"int": "MPI_Fint", "MPI_Aint": "MPI_Aint", "MPI_Offset": "MPI_Offset",
            "MPI_Count": "MPI_Count", "MPI_Fint": "MPI_Fint"}


class Unbindable(Exception):
    pass


def parse_c_param(text):
    """'const int recvcounts[]' -> (base, stars, is_array, name, const)."""
    t = text.strip()
    if t in ("void", "..."):
        return None
    m = re.match(r"^(const\s+)?([A-Za-z_]\w*)\s*(\**)\s*([A-Za-z_]\w*)\s*(\[\](?:\[[0-9]+\])?)?$", t)
    if not m:
        raise Unbindable("cannot parse C parameter '%s'" % t)
    return {"base": m.group(2), "stars": len(m.group(3)), "array": bool(m.group(5)),
            "name": m.group(4), "const": bool(m.group(1)), "text": t}


def text_of(c):
    return c.get("text", "")


def split_params(text):
    return [p for p in (x.strip() for x in text.split(",")) if p and p != "void"]


class Param:
    """One Fortran-visible parameter: how C receives it from Fortran, how it
    is converted for the C call and back, and its Fortran declarations."""

    def __init__(self, fn, d, c):
        self.fn, self.d, self.c = fn, d, c
        self.name = d["name"]
        self.kind = d["kind"]
        self.dir = d.get("param_direction", "in")
        self.length = d.get("length")
        self.decl = []      # C wrapper parameter declarations
        self.hidden = []    # trailing hidden-length parameters
        self.pre = []       # C statements before the call
        self.arg = None     # C expression for the call
        self.post = []      # C statements after the call (always)
        self.post_ok = []   # C statements after a successful call
        self.ftype = None   # Fortran type for the mpi module
        self.f08type = None
        self.fdims = ""     # Fortran dimension spec, e.g. "(*)"
        self.choice = False
        self.string = False
        self.logical = False


def c_len_expr(fn, length, cparams_by_name):
    """The C expression for an array length named in the description."""
    if length is None or isinstance(length, list):
        return None
    if length in cparams_by_name:
        return "(*%s)" % length
    if re.match(r"^[0-9]+$", length):
        return length
    if length.startswith("MPI_"):
        return length
    return None


def build_param(fn, d, c, cparams):
    p = Param(fn, d, c)
    n = p.name
    base, stars, arr = c["base"], c["stars"], c["array"]
    is_ptr = stars > 0 or arr
    out = p.dir in ("out", "inout")
    kind = p.kind
    lenx = c_len_expr(fn, p.length, cparams)
    intent = {"in": "IN", "out": "OUT", "inout": "INOUT"}[p.dir]
    p.intent = intent
    # Choice buffers.
    if kind == "BUFFER" and base == "void":
        p.choice = True
        p.decl = ["void *%s" % n]
        p.arg = "loom_f_buf(%s)" % n
        p.ftype = "TYPE(*)"
        p.fdims = "(*)"
        return p
    if kind in ("C_BUFFER", "C_BUFFER2") and base == "void":
        # Fortran passes the INTEGER(KIND=MPI_ADDRESS_KIND) or TYPE(C_PTR)
        # that receives the address: C writes the address into it.
        p.decl = ["void *%s" % n]
        p.arg = n
        p.ftype = "INTEGER(KIND=MPI_ADDRESS_KIND)"
        p.f08type = "TYPE(C_PTR)"
        return p
    if base == "char" and stars + arr == 1:
        p.string = True
        p.decl = ["char *%s" % n]
        p.hidden = ["size_t %s_len" % n]
        p.ftype = "CHARACTER(LEN=*)"
        if c["const"] or p.dir == "in":
            p.pre = ["char *%s_c = loom_f_str_in(%s, %s_len, %d);" %
                     (n, n, n, 1 if fn.startswith("MPI_Info") else 0)]
            p.arg = "%s_c" % n
            p.post = ["free(%s_c);" % n]
        else:
            size = "loom_f_str_out_size(%s_len)" % n
            if fn == "MPI_Info_get" and n == "value":
                size = "(size_t)(*valuelen > 0 ? *valuelen : 0) + %s_len + 1" % n
            p.pre = ["size_t %s_cap = %s;" % (n, size),
                     "char *%s_c = (char *)calloc(%s_cap, 1);" % (n, n)]
            p.arg = "%s_c" % n
            p.post_ok = ["loom_f_str_out(%s_c, %s, %s_len);" % (n, n, n)]
            p.post = ["free(%s_c);" % n]
        return p
    if base == "MPI_Status":
        p.decl = ["MPI_Fint *%s" % n]
        if arr or (p.length is not None):
            p.arg = "loom_f_statuses(%s)" % n
            p.fdims = "(MPI_STATUS_SIZE,*)"
            p.f08dims = "(*)"
        else:
            p.arg = "loom_f_status(%s)" % n
            p.fdims = "(MPI_STATUS_SIZE)"
        p.ftype = "INTEGER"
        p.f08type = "TYPE(MPI_Status)"
        return p
    if base in HANDLE_C:
        h = HANDLE_C[base]
        a = ABI[h]
        p.ftype = "INTEGER"
        p.f08type = "TYPE(MPI_%s)" % h
        p.decl = ["MPI_Fint *%s" % n]
        if not is_ptr:
            p.arg = "MPI_%s_fromint(*%s)" % (a, n)
            return p
        if arr or p.length is not None:
            if lenx is None:
                if h == "Datatype" and "alltoallw" in fn.lower():
                    lenx = "loom_f_peer_count(MPI_Comm_fromint(*comm), %d)" % (
                        (1 if n.startswith("recv") else 0) | (2 if "neighbor" in fn else 0))
                else:
                    raise Unbindable("%s.%s: handle array of unknown length '%s'" %
                                     (fn, n, p.length))
            p.fdims = "(*)"
            p.pre = ["int %s_n = %s;" % (n, lenx),
                     "MPI_%s *%s_c = (MPI_%s *)loom_f_alloc(%s_n, sizeof(MPI_%s));" %
                     (h, n, h, n, h)]
            if p.dir != "out":
                p.pre.append("for (int i = 0; i < %s_n; i++) %s_c[i] = MPI_%s_fromint(%s[i]);"
                             % (n, n, a, n))
            p.arg = "%s_c" % n
            back = "for (int i = 0; i < %s_n; i++) %s[i] = MPI_%s_toint(%s_c[i]);" % (n, n, a, n)
            if p.dir == "inout":
                p.post.append(back)
            elif p.dir == "out":
                p.post_ok.append(back)
            p.post.append("free(%s_c);" % n)
            return p
        # A single handle by pointer: out or inout.
        if p.dir == "in":  # const MPI_Xxx* in C (rare)
            p.pre = ["MPI_%s %s_c = MPI_%s_fromint(*%s);" % (h, n, a, n)]
        else:
            p.pre = ["MPI_%s %s_c = MPI_%s_fromint(*%s);" % (h, n, a, n)]
        p.arg = "&%s_c" % n
        if p.dir == "inout":
            p.post = ["*%s = MPI_%s_toint(%s_c);" % (n, a, n)]
        elif p.dir == "out":
            p.post_ok = ["*%s = MPI_%s_toint(%s_c);" % (n, a, n)]
        return p
    if base in INT_KIND:
        ct = C_OF_INT[base]
        if kind == "LOGICAL":
            p.logical = True
            p.ftype = "LOGICAL"
            p.decl = ["MPI_Fint *%s" % n]
            if not is_ptr:
                p.arg = "(*%s != 0)" % n
                return p
            if arr or p.length is not None:
                if lenx is None and fn == "MPI_Cart_sub":
                    lenx = "loom_f_cartdim(MPI_Comm_fromint(*comm))"
                if lenx is None:
                    raise Unbindable("%s.%s: logical array of unknown length" % (fn, n))
                p.fdims = "(*)"
                p.pre = ["int %s_n = %s;" % (n, lenx),
                         "int *%s_c = (int *)loom_f_alloc(%s_n, sizeof(int));" % (n, n)]
                if p.dir != "out":
                    p.pre.append("for (int i = 0; i < %s_n; i++) %s_c[i] = (%s[i] != 0);" %
                                 (n, n, n))
                p.arg = "%s_c" % n
                if out:
                    p.post_ok.append("for (int i = 0; i < %s_n; i++) %s[i] = %s_c[i] ? 1 : 0;" %
                                     (n, n, n))
                p.post.append("free(%s_c);" % n)
                return p
            p.pre = ["int %s_c = (p_in_%s);" % (n, n)] if False else ["int %s_c = 0;" % n]
            p.arg = "&%s_c" % n
            p.post_ok = ["*%s = %s_c ? 1 : 0;" % (n, n)]
            return p
        p.ftype = INT_KIND[base]
        p.decl = ["%s *%s" % (ct, n)]
        if not is_ptr:
            p.arg = "*%s" % n
            return p
        if arr or p.length is not None:
            p.fdims = "(*)"
        if c["array"] and "[3]" in text_of(c):
            p.fdims = "(3,*)"
            p.arg = "(int (*)[3])%s" % n
            return p
        if kind == "WEIGHT":
            p.arg = "loom_f_weights(%s)" % n
        elif kind == "ERROR_CODE" and arr:
            p.arg = "loom_f_errcodes(%s)" % n
        else:
            p.arg = n
        # 1-based request indices in Fortran.
        if kind == "INDEX" and p.dir == "out" and re.search(r"(any|some)$", fn):
            if arr or p.length is not None:
                cnt = "outcount"
                p.post_ok = ["for (int i = 0; i < *%s; i++) %s[i] += 1;" % (cnt, n)]
                p.post_ok = ["if (*%s != MPI_UNDEFINED) for (int i = 0; i < *%s; i++) %s[i] += 1;"
                             % (cnt, cnt, n)]
            else:
                p.post_ok = ["if (*%s != MPI_UNDEFINED) *%s += 1;" % (n, n)]
        return p
    if base == "void" and kind in ("ATTRIBUTE_VAL", "EXTRA_STATE"):
        raise Unbindable("%s.%s: attribute value (hand-written)" % (fn, n))
    if base.endswith("_function") or base.endswith("_function_c"):
        # Callbacks of unsupported chapters: passed through as they are.
        p.decl = ["void *%s" % n]
        p.arg = "(%s *)%s" % (base, n)
        p.ftype = "EXTERNAL"
        p.callback = True
        return p
    if base == "double":
        p.ftype = "DOUBLE PRECISION"
        p.decl = ["double *%s" % n]
        p.arg = n if is_ptr else "*%s" % n
        return p
    raise Unbindable("%s.%s: C type %s%s (kind %s)" % (fn, n, base, "*" * stars, kind))


RET_C = {"double": ("double", "DOUBLE PRECISION"),
         "MPI_Aint": ("MPI_Aint", "INTEGER(KIND=MPI_ADDRESS_KIND)")}


class Proc:
    def __init__(self, name, cname, ret, params, large):
        self.name, self.cname, self.ret, self.params, self.large = name, cname, ret, params, large

    @property
    def fname(self):  # the Fortran external's name: mpi_send (mpi_send_c)
        return self.cname.lower()


def bind(desc, protos):
    """Match each described procedure with its C prototype(s)."""
    procs, skipped = [], {}
    for d in desc["procedures"]:
        name = d["name"]
        attrs = set(d["attrs"])
        if "callback" in attrs or "f90_expressible" not in attrs:
            continue
        if name in SKIP:
            skipped[name] = SKIP[name]
            continue
        for large in (False, True):
            cname = name + ("_c" if large else "")
            if cname not in protos:
                if not large:
                    skipped[name] = "not in mpi.h"
                continue
            if large and not any(q.get("kind", "").startswith("POLY") for q in d["params"]):
                continue
            ret, ctext = protos[cname]
            if name in HAND_WRITTEN:
                if not large:
                    procs.append(Proc(name, cname, ret, None, large))
                continue
            try:
                procs.append(build_proc(d, cname, ret, ctext, large))
            except Unbindable as e:
                skipped[cname] = str(e)
    return procs, skipped


def build_proc(d, cname, ret, ctext, large):
    cps = []
    for t in split_params(ctext):
        cp = parse_c_param(t)
        if cp is not None:
            cps.append(cp)
    dps = [q for q in d["params"] if "c_parameter" not in q.get("suppress", "")
           and (large or not q.get("large_only"))]
    if len(cps) != len(dps):
        raise Unbindable("%s: %d C parameters, %d described" % (cname, len(cps), len(dps)))
    cparams = {c["name"]: c for c in cps}
    params = []
    for dq, cp in zip(dps, cps):
        if "f90_parameter" in dq.get("suppress", ""):
            params.append(("null", cp))
            continue
        params.append(build_param(cname, dq, cp, cparams))
    return Proc(d["name"], cname, ret, params, large)


# --------------------------------------------------------------------------- C


def gen_c(procs):
    out = ["/* Generated by runtime/fortran/gen_fortran.py: do not edit. */",
           '#include "fortran_support.h"', ""]
    for pr in procs:
        if pr.params is None:
            continue
        fparams = [p for p in pr.params if not isinstance(p, tuple)]
        decls = [x for p in fparams for x in p.decl]
        hidden = [x for p in fparams for x in p.hidden]
        if pr.ret == "int":
            decls.append("MPI_Fint *ierror")
        sig = ", ".join(decls + hidden) or "void"
        args = []
        for p in pr.params:
            if isinstance(p, tuple):
                args.append("NULL" if p[1]["stars"] else "0")
            else:
                args.append(p.arg)
        fwd = ", ".join([p.name for p in fparams] + (["ierror"] if pr.ret == "int" else []) +
                        [h.split()[-1] for h in hidden])
        low = pr.cname.lower()
        if pr.ret in RET_C:
            ct = RET_C[pr.ret][0]
            out.append("static %s loom_fw_%s(int prof%s) {" % (ct, low, (", " + sig) if decls else ""))
            out.append("  return prof ? P%s(%s) : %s(%s);" % (pr.cname, ", ".join(args), pr.cname,
                                                             ", ".join(args)))
            out.append("}")
            for pre, prof in (("", 0), ("p", 1)):
                out.append("%s %s%s_(%s) { return loom_fw_%s(%d%s); }" %
                           (ct, pre, low, sig, low, prof, (", " + fwd) if fwd else ""))
            out.append("")
            continue
        if pr.ret != "int":
            continue
        out.append("static void loom_fw_%s(int prof, %s) {" % (low, sig))
        for p in fparams:
            out += ["  " + s for s in p.pre]
        a = ", ".join(args)
        out.append("  int rc = prof ? P%s(%s) : %s(%s);" % (pr.cname, a, pr.cname, a))
        oks = [s for p in fparams for s in p.post_ok]
        if oks:
            out.append("  if (rc == MPI_SUCCESS) {")
            out += ["    " + s for s in oks]
            out.append("  }")
        for p in fparams:
            out += ["  " + s for s in p.post]
        out.append("  if (ierror) *ierror = rc;")
        out.append("}")
        for pre, prof in (("", 0), ("p", 1)):
            out.append("void %s%s_(%s) { loom_fw_%s(%d, %s); }" % (pre, low, sig, low, prof, fwd))
            if has_cptr(pr) and not pr.large:
                out.append("void %s%s_cptr_(%s) { loom_fw_%s(%d, %s); }" %
                           (pre, low, sig, low, prof, fwd))
        out.append("")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------- constants


def parse_constants(mpih):
    """(name, int value, C type or None) of each integer-valued #define."""
    text = mpih
    consts = []
    seen = {}
    for m in re.finditer(r"^#define\s+(MPI_\w+)\s+(.+?)\s*(?:/\*.*)?$", text, re.M):
        name, val = m.group(1), m.group(2).strip()
        mm = re.match(r"^\(\((MPI_\w+)\)\s*(-?(?:0x[0-9a-fA-F]+|[0-9]+))\)$", val)
        if mm:
            consts.append((name, int(mm.group(2), 0), mm.group(1)))
            seen[name] = consts[-1]
            continue
        mm = re.match(r"^\(?(-?(?:0x[0-9a-fA-F]+|[0-9]+))\)?$", val)
        if mm:
            consts.append((name, int(mm.group(1), 0), None))
            seen[name] = consts[-1]
            continue
        if val in seen:
            consts.append((name, seen[val][1], seen[val][2]))
            seen[name] = consts[-1]
    return consts


# Constants that are C-only (layout of the C status, C-side sentinels).
C_ONLY = re.compile(r"^MPI_(F_|F08_|T_\w+_NULL$|T_PVAR_ALL_HANDLES$|BOTTOM$|IN_PLACE$|"
                    r"BUFFER_AUTOMATIC$|ARGV|ERRCODES_IGNORE$|STATUS|UNWEIGHTED$|"
                    r"WEIGHTS_EMPTY$|\w+_FN(_NULL)?(_C)?$|CONVERSION_FN)")
KIND_OF = {None: "INTEGER", "MPI_Aint": "INTEGER(KIND=MPI_ADDRESS_KIND)"}

SENTINELS = [  # (Fortran name, mpif.h declaration, f08 declaration, common block)
    ("MPI_BOTTOM", "INTEGER MPI_BOTTOM", "INTEGER :: MPI_BOTTOM", "LOOM_F_BOTTOM"),
    ("MPI_IN_PLACE", "INTEGER MPI_IN_PLACE", "INTEGER :: MPI_IN_PLACE", "LOOM_F_IN_PLACE"),
    ("MPI_BUFFER_AUTOMATIC", "INTEGER MPI_BUFFER_AUTOMATIC",
     "INTEGER :: MPI_BUFFER_AUTOMATIC", "LOOM_F_BUFFER_AUTOMATIC"),
    ("MPI_STATUS_IGNORE", "INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)",
     "TYPE(MPI_Status) :: MPI_STATUS_IGNORE", "LOOM_F_STATUS_IGNORE"),
    ("MPI_STATUSES_IGNORE", "INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)",
     "TYPE(MPI_Status) :: MPI_STATUSES_IGNORE(1)", "LOOM_F_STATUSES_IGNORE"),
    ("MPI_ERRCODES_IGNORE", "INTEGER MPI_ERRCODES_IGNORE(1)",
     "INTEGER :: MPI_ERRCODES_IGNORE(1)", "LOOM_F_ERRCODES_IGNORE"),
    ("MPI_UNWEIGHTED", "INTEGER MPI_UNWEIGHTED(1)", "INTEGER :: MPI_UNWEIGHTED(1)",
     "LOOM_F_UNWEIGHTED"),
    ("MPI_WEIGHTS_EMPTY", "INTEGER MPI_WEIGHTS_EMPTY(1)", "INTEGER :: MPI_WEIGHTS_EMPTY(1)",
     "LOOM_F_WEIGHTS_EMPTY"),
    ("MPI_ARGV_NULL", "CHARACTER*1 MPI_ARGV_NULL(1)", "CHARACTER(LEN=1) :: MPI_ARGV_NULL(1)",
     "LOOM_F_ARGV_NULL"),
    ("MPI_ARGVS_NULL", "CHARACTER*1 MPI_ARGVS_NULL(1,1)",
     "CHARACTER(LEN=1) :: MPI_ARGVS_NULL(1,1)", "LOOM_F_ARGVS_NULL"),
]

# Predefined callback procedures Fortran passes by name (fortran_callbacks.c).
CALLBACK_EXTERNALS = ["MPI_COMM_NULL_COPY_FN", "MPI_COMM_DUP_FN", "MPI_COMM_NULL_DELETE_FN",
                      "MPI_TYPE_NULL_COPY_FN", "MPI_TYPE_DUP_FN", "MPI_TYPE_NULL_DELETE_FN",
                      "MPI_NULL_COPY_FN", "MPI_DUP_FN", "MPI_NULL_DELETE_FN"]


def fortran_consts(consts, version):
    """(declaration type, name, value) of every constant Fortran sees."""
    out = [("INTEGER", "MPI_STATUS_SIZE", "8"), ("INTEGER", "MPI_SOURCE", "1"),
           ("INTEGER", "MPI_TAG", "2"), ("INTEGER", "MPI_ERROR", "3"),
           ("INTEGER", "MPI_ADDRESS_KIND", "8"), ("INTEGER", "MPI_OFFSET_KIND", "8"),
           ("INTEGER", "MPI_COUNT_KIND", "8"), ("INTEGER", "MPI_INTEGER_KIND", "4"),
           ("LOGICAL", "MPI_SUBARRAYS_SUPPORTED", ".FALSE."),
           ("LOGICAL", "MPI_ASYNC_PROTECTS_NONBLOCKING", ".FALSE.")]
    have = {n for _, n, _ in out}
    for name, val, ctype in consts:
        if C_ONLY.match(name) or name in have or name == "MPI_TAG_UB" and False:
            continue
        if name in ("MPI_SOURCE", "MPI_TAG", "MPI_ERROR"):
            continue
        have.add(name)
        if ctype in HANDLE_C or ctype is None or ctype == "MPI_Aint":
            out.append((KIND_OF.get(ctype, "INTEGER"), name, str(val)))
    return out


def fixed_lines(text_lines):
    """Lines valid as fixed form (col 7, <= 72) and as free form."""
    res = []
    for ln in text_lines:
        if ln.startswith("!") or not ln:
            res.append(ln)
            continue
        s = "      " + ln
        if len(s) > 72:
            raise SystemExit("gen_fortran.py: mpif.h line too long: " + s)
        res.append(s)
    return res


def gen_mpif(fconsts, procs):
    lines = ["! mpif.h: Loom's Fortran 77 style include file.",
             "! Generated by runtime/fortran/gen_fortran.py: do not edit.",
             "! Valid as fixed form and as free form source."]
    for typ, name, val in fconsts:
        lines.append("%s %s" % (typ, name))
        lines.append("PARAMETER (%s=%s)" % (name, val))
    for name, fdecl, _, block in SENTINELS:
        lines.append(fdecl)
        lines.append("COMMON /%s/ %s" % (block, name))
    lines += ["DOUBLE PRECISION MPI_WTIME, MPI_WTICK",
              "DOUBLE PRECISION PMPI_WTIME, PMPI_WTICK",
              "EXTERNAL MPI_WTIME, MPI_WTICK, PMPI_WTIME, PMPI_WTICK",
              "INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF",
              "EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF"]
    for cb in CALLBACK_EXTERNALS:
        lines.append("EXTERNAL %s" % cb)
    return "\n".join(fixed_lines(lines)) + "\n"


def wrap(line, indent="  "):
    """Free-form continuation at 100 columns."""
    if len(line) <= 100:
        return [line]
    parts, cur = [], line
    while len(cur) > 100:
        cut = cur.rfind(", ", 0, 95)
        if cut < 0:
            cut = cur.rfind(" ", 0, 95)
        parts.append(cur[:cut + 1] + " &")
        cur = indent + "    " + cur[cut + 1:].lstrip()
    parts.append(cur)
    return parts


def f_consts_block(fconsts):
    out = []
    for typ, name, val in fconsts:
        out += wrap("  %s, PARAMETER :: %s = %s" % (typ, name, val))
    return out


def iface_decls(pr, f08=False):
    """Fortran dummy declarations of a generated procedure."""
    decls = []
    uses_choice = False
    for p in pr.params:
        if isinstance(p, tuple):
            continue
        t = (p.f08type or p.ftype) if f08 else p.ftype
        dims = getattr(p, "f08dims", p.fdims) if f08 and p.f08type == "TYPE(MPI_Status)" else p.fdims
        if p.choice:
            uses_choice = True
            if f08:
                decls.append("TYPE(*), DIMENSION(..)%s :: %s" %
                             (", INTENT(IN)" if p.intent == "IN" else "", p.name))
            else:
                decls.append("!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % p.name)
                decls.append("TYPE(*), DIMENSION(*) :: %s" % p.name)
            continue
        if t == "EXTERNAL":
            decls.append("EXTERNAL :: %s" % p.name)
            continue
        if not f08 and p.kind == "C_BUFFER2":
            # MPI_BUFFER_DETACH(BUFFER_ADDR, ...): codes pass the buffer
            # they attached; the address is written into its first bytes.
            decls.append("!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % p.name)
            decls.append("TYPE(*), DIMENSION(*) :: %s" % p.name)
            continue
        if f08 and t == "TYPE(MPI_Status)" and p.fdims == "(MPI_STATUS_SIZE)":
            dims = ""
        decls.append("%s, INTENT(%s) :: %s%s" % (t, p.intent, p.name, dims))
    return decls, uses_choice


def has_cptr(pr):
    return any(not isinstance(p, tuple) and p.kind == "C_BUFFER" and p.name == "baseptr"
               for p in pr.params)


def gen_mpi_module(fconsts, procs):
    out = ["! Module mpi. Generated by runtime/fortran/gen_fortran.py: do not edit.",
           "module mpi", "  implicit none", "  private :: loom_mpi_unused"]
    out += f_consts_block(fconsts)
    for name, _, _, block in SENTINELS:
        decl = [s for n, s, _, _ in SENTINELS if n == name][0]
        out.append("  " + decl)
        out.append("  COMMON /%s/ %s" % (block, name))
    out += ["  integer, parameter :: loom_mpi_unused = 0",
            "  interface",
            "    double precision function MPI_WTIME()", "    end function",
            "    double precision function MPI_WTICK()", "    end function",
            "    double precision function PMPI_WTIME()", "    end function",
            "    double precision function PMPI_WTICK()", "    end function",
            "    function MPI_AINT_ADD(base, disp)",
            "      import :: MPI_ADDRESS_KIND",
            "      integer(kind=MPI_ADDRESS_KIND) :: MPI_AINT_ADD",
            "      integer(kind=MPI_ADDRESS_KIND), intent(in) :: base, disp", "    end function",
            "    function MPI_AINT_DIFF(addr1, addr2)",
            "      import :: MPI_ADDRESS_KIND",
            "      integer(kind=MPI_ADDRESS_KIND) :: MPI_AINT_DIFF",
            "      integer(kind=MPI_ADDRESS_KIND), intent(in) :: addr1, addr2",
            "    end function"]
    generic = []
    for pr in procs:
        if pr.large or pr.ret != "int" or pr.params is None:
            continue
        names = [p.name for p in pr.params if not isinstance(p, tuple)] + ["ierror"]
        decls, _ = iface_decls(pr)
        body = wrap("    subroutine %s(%s)" % (pr.cname.upper(), ", ".join(names)), "    ")
        body.append("      import")
        body.append("      implicit none")
        for dl in decls:
            body += wrap("      " + dl, "      ")
        body.append("      INTEGER, INTENT(OUT) :: ierror")
        body.append("    end subroutine")
        if not has_cptr(pr):
            out += body
            continue
        # MPI_ALLOC_MEM and the window allocations: the address comes back
        # in an INTEGER(KIND=MPI_ADDRESS_KIND) or, through the _CPTR
        # specific, in a TYPE(C_PTR), under one generic name.
        cptr = [ln.replace("INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(OUT) :: baseptr",
                           "TYPE(C_PTR), INTENT(OUT) :: baseptr") for ln in body]
        cptr[0] = cptr[0].replace(pr.cname.upper() + "(", pr.cname.upper() + "_CPTR(")
        cptr.insert(1, "      use, intrinsic :: iso_c_binding, only: c_ptr")
        generic += ["  interface %s" % pr.cname.upper()] + body + cptr + ["  end interface"]
    out += ["    subroutine MPI_F_SYNC_REG(buf)",
            "      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf",
            "      TYPE(*), DIMENSION(*) :: buf",
            "    end subroutine",
            "  end interface"] + generic + ["  external :: " + ", ".join(CALLBACK_EXTERNALS),
            "contains",
            "  subroutine MPI_SIZEOF(x, size, ierror)",
            "    class(*), dimension(..), intent(in) :: x",
            "    integer, intent(out) :: size, ierror",
            "    size = storage_size(x) / 8",
            "    ierror = MPI_SUCCESS",
            "  end subroutine",
            "end module mpi"]
    return "\n".join(out) + "\n"


# -------------------------------------------------------------------- mpi_f08


def gen_f08(fconsts, procs):
    out = ["! Module mpi_f08. Generated by runtime/fortran/gen_fortran.py: do not edit.",
           "module mpi_f08", "  use, intrinsic :: iso_c_binding", "  implicit none",
           "  private :: c_ptr, c_null_ptr, c_int, c_size_t, "
           "c_char, c_loc, c_associated, c_f_pointer, c_intptr_t, c_funptr, c_funloc"]
    for h in HANDLES:
        out += ["  type, bind(c) :: MPI_%s" % h, "    integer :: MPI_VAL", "  end type"]
    out += ["  type, bind(c) :: MPI_Status",
            "    integer :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
            "    integer :: MPI_internal(5)", "  end type"]
    for typ, name, val, ctype in fconsts_f08(fconsts):
        if ctype in HANDLE_C:
            out += wrap("  type(MPI_%s), parameter :: %s = MPI_%s(%s)" %
                        (HANDLE_C[ctype], name, HANDLE_C[ctype], val))
        else:
            out += wrap("  %s, parameter :: %s = %s" % (typ, name, val))
    for name, _, f08decl, block in SENTINELS:
        out.append("  " + f08decl)
        out.append("  common /%s/ %s" % (block, name))
    # Handle comparison operators.
    out.append("  interface operator(==)")
    out.append("    module procedure " + ", ".join("loom_eq_%s" % h.lower() for h in HANDLES))
    out.append("  end interface")
    out.append("  interface operator(/=)")
    out.append("    module procedure " + ", ".join("loom_ne_%s" % h.lower() for h in HANDLES))
    out.append("  end interface")
    out.append("  private :: " + ", ".join("loom_eq_%s, loom_ne_%s" % (h.lower(), h.lower())
                                          for h in HANDLES))
    # Buffer helpers (fortran_support.c).
    out += ["  interface",
            "    function loom_f08_buffer(buf, mode, tmp, ierr) bind(c, name='loom_f08_buffer')",
            "      import :: c_ptr, c_int",
            "      type(*), dimension(..) :: buf",
            "      integer(c_int), value :: mode",
            "      type(c_ptr) :: tmp",
            "      integer(c_int) :: ierr",
            "      type(c_ptr) :: loom_f08_buffer",
            "    end function",
            "    subroutine loom_f08_leave(buf, tmp, mode) bind(c, name='loom_f08_leave')",
            "      import :: c_ptr, c_int",
            "      type(*), dimension(..) :: buf",
            "      type(c_ptr), value :: tmp",
            "      integer(c_int), value :: mode",
            "    end subroutine",
            "    double precision function MPI_Wtime() bind(c, name='MPI_Wtime')",
            "    end function",
            "    double precision function MPI_Wtick() bind(c, name='MPI_Wtick')",
            "    end function",
            "    function MPI_Aint_add(base, disp) bind(c, name='MPI_Aint_add')",
            "      import :: MPI_ADDRESS_KIND",
            "      integer(kind=MPI_ADDRESS_KIND) :: MPI_Aint_add",
            "      integer(kind=MPI_ADDRESS_KIND), value :: base, disp",
            "    end function",
            "    function MPI_Aint_diff(addr1, addr2) bind(c, name='MPI_Aint_diff')",
            "      import :: MPI_ADDRESS_KIND",
            "      integer(kind=MPI_ADDRESS_KIND) :: MPI_Aint_diff",
            "      integer(kind=MPI_ADDRESS_KIND), value :: addr1, addr2",
            "    end function",
            "  end interface"]
    # Private bind(c) interfaces to the C entry points, and the generics.
    generics = {}
    bodies = []
    ifaces = []
    sigs = {}
    for pr in procs:
        if pr.ret != "int":
            continue
        # A large-count form whose Fortran dummies have the same types and
        # kinds as the plain one (MPI_Aint and MPI_Count are both 8 bytes)
        # cannot be told apart in a generic: the plain form serves both.
        sig = f08_signature(pr)
        if pr.large and sigs.get(pr.name) == sig:
            continue
        sigs[pr.name] = sig
        specific = "%s_f08%s" % (pr.name, "c" if pr.large else "")
        generics.setdefault(pr.name, []).append(specific)
        ifaces += c_iface(pr)
        bodies += f08_body(pr, specific)
    out.append("  interface")
    out += ifaces
    out.append("  end interface")
    for g, specs in sorted(generics.items()):
        out.append("  interface %s" % g)
        out += wrap("    module procedure " + ", ".join(specs), "    ")
        out.append("  end interface")
    out.append("  external :: " + ", ".join(CALLBACK_EXTERNALS))
    out.append("contains")
    for h in HANDLES:
        lo = h.lower()
        for op, nm in (("==", "eq"), ("/=", "ne")):
            out += ["  elemental logical function loom_%s_%s(a, b)" % (nm, lo),
                    "    type(MPI_%s), intent(in) :: a, b" % h,
                    "    loom_%s_%s = a%%MPI_VAL %s b%%MPI_VAL" % (nm, lo, op),
                    "  end function"]
    out += F08_HAND
    out += bodies
    out.append("end module mpi_f08")
    return "\n".join(out) + "\n"


F08_HAND = [
    "  subroutine MPI_Status_f2f08(f_status, f08_status, ierror)",
    "    integer, intent(in) :: f_status(MPI_STATUS_SIZE)",
    "    type(MPI_Status), intent(out) :: f08_status",
    "    integer, optional, intent(out) :: ierror",
    "    f08_status%MPI_SOURCE = f_status(1)",
    "    f08_status%MPI_TAG = f_status(2)",
    "    f08_status%MPI_ERROR = f_status(3)",
    "    f08_status%MPI_internal = f_status(4:8)",
    "    if (present(ierror)) ierror = MPI_SUCCESS",
    "  end subroutine",
    "  subroutine MPI_Status_f082f(f08_status, f_status, ierror)",
    "    type(MPI_Status), intent(in) :: f08_status",
    "    integer, intent(out) :: f_status(MPI_STATUS_SIZE)",
    "    integer, optional, intent(out) :: ierror",
    "    f_status(1) = f08_status%MPI_SOURCE",
    "    f_status(2) = f08_status%MPI_TAG",
    "    f_status(3) = f08_status%MPI_ERROR",
    "    f_status(4:8) = f08_status%MPI_internal",
    "    if (present(ierror)) ierror = MPI_SUCCESS",
    "  end subroutine",
    "  subroutine MPI_F_sync_reg(buf)",
    "    type(*), dimension(..), asynchronous :: buf",
    "  end subroutine",
] + [
    # MPI_SIZEOF(X, SIZE, IERROR): the size in bytes of one element of X.
    "  subroutine MPI_Sizeof(x, size, ierror)",
    "    class(*), dimension(..), intent(in) :: x",
    "    integer, intent(out) :: size",
    "    integer, optional, intent(out) :: ierror",
    "    size = storage_size(x) / 8",
    "    if (present(ierror)) ierror = MPI_SUCCESS",
    "  end subroutine",
]


def fconsts_f08(fconsts):
    return fconsts  # filled with C types below


def f08_signature(pr):
    if pr.params is None:
        return None
    kinds = {"INTEGER(KIND=MPI_ADDRESS_KIND)": "i8", "INTEGER(KIND=MPI_OFFSET_KIND)": "i8",
             "INTEGER(KIND=MPI_COUNT_KIND)": "i8"}
    return tuple((kinds.get(p.f08type or p.ftype, p.f08type or p.ftype), p.fdims != "")
                 for p in pr.params if not isinstance(p, tuple))


def c_iface(pr):
    """A private bind(c) interface for the C entry point of pr."""
    if pr.params is None:
        return hand_iface(pr)
    names, decls = [], []
    for p in pr.params:
        if isinstance(p, tuple):
            continue
        names.append(p.name)
        if p.choice:
            decls.append("type(c_ptr), value :: %s" % p.name)
        elif p.string:
            decls.append("character(kind=c_char) :: %s(*)" % p.name)
        elif getattr(p, "callback", False):
            decls.append("type(c_funptr), value :: %s" % p.name)
        else:
            t = p.f08type or p.ftype
            dims = p.fdims
            if t == "TYPE(MPI_Status)":
                dims = "" if p.fdims == "(MPI_STATUS_SIZE)" else "(*)"
            decls.append("%s :: %s%s" % (t, p.name, dims))
    names.append("ierror")
    decls.append("integer :: ierror")
    for p in pr.params:
        if not isinstance(p, tuple) and p.string:
            names.append("%s_len" % p.name)
            decls.append("integer(c_size_t), value :: %s_len" % p.name)
    low = pr.cname.lower()
    res = wrap("    subroutine loom_c_%s(%s) bind(c, name='%s_')" % (low, ", ".join(names), low),
               "    ")
    res.append("      import")
    res += ["      " + d for d in decls]
    res.append("    end subroutine")
    return res


def f08_body(pr, specific):
    if pr.params is None:
        return hand_body(pr, specific)
    names, decls, pre, post, call = [], [], [], [], []
    nonblocking = bool(re.match(r"MPI_(I[a-z]|R[a-z]|\w+_init$|\w+_init_c$|Start)", pr.cname)) \
        or pr.cname.endswith("_init") or pr.cname.startswith("MPI_Buffer_attach")
    comm = None
    for p in pr.params:
        if isinstance(p, tuple):
            continue
        if p.f08type == "TYPE(MPI_Comm)" and p.fdims == "" and p.dir == "in" and comm is None:
            comm = p.name
    for p in pr.params:
        if isinstance(p, tuple):
            continue
        names.append(p.name)
        if p.choice:
            asyn = ", asynchronous" if nonblocking else ""
            intent = ", intent(in)" if p.intent == "IN" else ""
            decls.append("type(*), dimension(..)%s%s, target :: %s" % (intent, asyn, p.name))
            decls.append("type(c_ptr) :: %s_p, %s_t" % (p.name, p.name))
            mode = (1 if p.dir in ("in", "inout") else 0) | (2 if p.dir in ("out", "inout") else 0) \
                | (4 if nonblocking else 0)
            pre.append("%s_p = loom_f08_buffer(%s, %d_c_int, %s_t, ierror_c)" %
                       (p.name, p.name, mode, p.name))
            pre.append("if (ierror_c /= MPI_SUCCESS) then")
            if comm:
                pre.append("  call MPI_Comm_call_errhandler(%s, ierror_c)" % comm)
            pre.append("  if (present(ierror)) ierror = ierror_c")
            pre.append("  return")
            pre.append("end if")
            call.append("%s_p" % p.name)
            post.append("call loom_f08_leave(%s, %s_t, %d_c_int)" % (p.name, p.name, mode))
            continue
        if p.string:
            decls.append("character(len=*), intent(%s) :: %s" % (p.intent.lower(), p.name))
            call.append(p.name)
            continue
        if getattr(p, "callback", False):
            decls.append("external :: %s" % p.name)
            call.append("c_funloc(%s)" % p.name)
            continue
        t = p.f08type or p.ftype
        dims = p.fdims
        if t == "TYPE(MPI_Status)":
            dims = "" if p.fdims == "(MPI_STATUS_SIZE)" else "(*)"
        decls.append("%s, intent(%s) :: %s%s" % (t, p.intent.lower(), p.name, dims))
        call.append(p.name)
    call.append("ierror_c")
    for p in pr.params:
        if not isinstance(p, tuple) and p.string:
            call.append("len(%s, kind=c_size_t)" % p.name)
    names.append("ierror")
    body = wrap("  subroutine %s(%s)" % (specific, ", ".join(names)), "  ")
    for d in decls:
        body += wrap("    " + d, "    ")
    body.append("    integer, optional, intent(out) :: ierror")
    body.append("    integer :: ierror_c")
    body += ["    " + s for s in pre]
    body += wrap("    call loom_c_%s(%s)" % (pr.cname.lower(), ", ".join(call)), "    ")
    body += ["    " + s for s in post]
    body.append("    if (present(ierror)) ierror = ierror_c")
    body.append("  end subroutine")
    return body


# Hand-written procedures: their Fortran dummies (mpi and mpi_f08 forms).
HAND_SIG = {
    "MPI_Op_create": [("user_fn", "EXTERNAL", None), ("commute", "LOGICAL", "IN"),
                      ("op", "OP", "OUT")],
    "MPI_Comm_create_errhandler": [("comm_errhandler_fn", "EXTERNAL", None),
                                   ("errhandler", "ERRHANDLER", "OUT")],
    "MPI_Session_create_errhandler": [("session_errhandler_fn", "EXTERNAL", None),
                                      ("errhandler", "ERRHANDLER", "OUT")],
    "MPI_Comm_create_keyval": [("comm_copy_attr_fn", "EXTERNAL", None),
                               ("comm_delete_attr_fn", "EXTERNAL", None),
                               ("comm_keyval", "INTEGER", "OUT"), ("extra_state", "AINT", "IN")],
    "MPI_Type_create_keyval": [("type_copy_attr_fn", "EXTERNAL", None),
                               ("type_delete_attr_fn", "EXTERNAL", None),
                               ("type_keyval", "INTEGER", "OUT"), ("extra_state", "AINT", "IN")],
    "MPI_Keyval_create": [("copy_fn", "EXTERNAL", None), ("delete_fn", "EXTERNAL", None),
                          ("keyval", "INTEGER", "OUT"), ("extra_state", "INTEGER", "IN")],
    "MPI_Comm_get_attr": [("comm", "COMM", "IN"), ("comm_keyval", "INTEGER", "IN"),
                          ("attribute_val", "AINT", "OUT"), ("flag", "LOGICAL", "OUT")],
    "MPI_Comm_set_attr": [("comm", "COMM", "IN"), ("comm_keyval", "INTEGER", "IN"),
                          ("attribute_val", "AINT", "IN")],
    "MPI_Type_get_attr": [("datatype", "DATATYPE", "IN"), ("type_keyval", "INTEGER", "IN"),
                          ("attribute_val", "AINT", "OUT"), ("flag", "LOGICAL", "OUT")],
    "MPI_Type_set_attr": [("datatype", "DATATYPE", "IN"), ("type_keyval", "INTEGER", "IN"),
                          ("attribute_val", "AINT", "IN")],
    "MPI_Attr_get": [("comm", "COMM", "IN"), ("keyval", "INTEGER", "IN"),
                     ("attribute_val", "INTEGER", "OUT"), ("flag", "LOGICAL", "OUT")],
    "MPI_Attr_put": [("comm", "COMM", "IN"), ("keyval", "INTEGER", "IN"),
                     ("attribute_val", "INTEGER", "IN")],
    "MPI_Grequest_start": [("query_fn", "EXTERNAL", None), ("free_fn", "EXTERNAL", None),
                           ("cancel_fn", "EXTERNAL", None), ("extra_state", "AINT", "IN"),
                           ("request", "REQUEST", "OUT")],
    "MPI_Info_get_string": [("info", "INFO", "IN"), ("key", "STRING", "IN"),
                            ("buflen", "INTEGER", "INOUT"), ("value", "STRING", "OUT"),
                            ("flag", "LOGICAL", "OUT")],
}
HAND_TYPES = {"LOGICAL": ("LOGICAL", "LOGICAL"), "INTEGER": ("INTEGER", "INTEGER"),
              "AINT": ("INTEGER(KIND=MPI_ADDRESS_KIND)", "INTEGER(KIND=MPI_ADDRESS_KIND)"),
              "OP": ("INTEGER", "TYPE(MPI_Op)"), "ERRHANDLER": ("INTEGER", "TYPE(MPI_Errhandler)"),
              "COMM": ("INTEGER", "TYPE(MPI_Comm)"), "DATATYPE": ("INTEGER", "TYPE(MPI_Datatype)"),
              "REQUEST": ("INTEGER", "TYPE(MPI_Request)"), "INFO": ("INTEGER", "TYPE(MPI_Info)"),
              "STRING": ("CHARACTER(LEN=*)", "CHARACTER(LEN=*)")}


def hand_iface(pr):
    sig = HAND_SIG[pr.cname]
    names = [n for n, _, _ in sig] + ["ierror"] + [n + "_len" for n, t, _ in sig if t == "STRING"]
    low = pr.cname.lower()
    res = wrap("    subroutine loom_c_%s(%s) bind(c, name='%s_')" % (low, ", ".join(names), low),
               "    ")
    res.append("      import")
    for n, t, _ in sig:
        if t == "EXTERNAL":
            res.append("      type(c_funptr), value :: %s" % n)
        elif t == "STRING":
            res.append("      character(kind=c_char) :: %s(*)" % n)
        else:
            res.append("      %s :: %s" % (HAND_TYPES[t][1], n))
    res.append("      integer :: ierror")
    for n, t, _ in sig:
        if t == "STRING":
            res.append("      integer(c_size_t), value :: %s_len" % n)
    res.append("    end subroutine")
    return res


def hand_body(pr, specific):
    sig = HAND_SIG[pr.cname]
    names = [n for n, _, _ in sig] + ["ierror"]
    body = wrap("  subroutine %s(%s)" % (specific, ", ".join(names)), "  ")
    call = []
    for n, t, intent in sig:
        if t == "EXTERNAL":
            body.append("    external :: %s" % n)
            call.append("c_funloc(%s)" % n)
        else:
            body.append("    %s, intent(%s) :: %s" % (HAND_TYPES[t][1], intent.lower(), n))
            call.append(n)
    call.append("ierror_c")
    call += ["len(%s, kind=c_size_t)" % n for n, t, _ in sig if t == "STRING"]
    body.append("    integer, optional, intent(out) :: ierror")
    body.append("    integer :: ierror_c")
    body += wrap("    call loom_c_%s(%s)" % (pr.cname.lower(), ", ".join(call)), "    ")
    body.append("    if (present(ierror)) ierror = ierror_c")
    body.append("  end subroutine")
    return body


def hand_mpi_iface(pr):
    sig = HAND_SIG[pr.cname]
    names = [n for n, _, _ in sig] + ["ierror"]
    res = wrap("    subroutine %s(%s)" % (pr.cname.upper(), ", ".join(names)), "    ")
    res.append("      import")
    res.append("      implicit none")
    for n, t, intent in sig:
        if t == "EXTERNAL":
            res.append("      external :: %s" % n)
        else:
            res.append("      %s, intent(%s) :: %s" % (HAND_TYPES[t][0], intent, n))
    res.append("      INTEGER, INTENT(OUT) :: ierror")
    res.append("    end subroutine")
    return res


def main():
    mpih_path, desc_path, outdir = sys.argv[1:4]
    with open(mpih_path) as f:
        mpih = f.read()
    with open(desc_path) as f:
        desc = json.load(f)
    protos = {n: (r, p) for r, n, p in gen_unsupported.parse_header(mpih)}
    procs, skipped = bind(desc, protos)
    consts = parse_constants(mpih)
    version = [v for n, v, _ in consts if n == "MPI_VERSION"]
    fconsts = fortran_consts(consts, version)
    ctype_of = {n: t for n, _, t in consts}
    f08consts = [(t, n, v, ctype_of.get(n)) for t, n, v in fconsts]
    global fconsts_f08
    fconsts_f08 = lambda _: f08consts  # noqa: E731
    os.makedirs(outdir, exist_ok=True)
    files = {
        "fortran_wrappers.c": gen_c(procs),
        "mpif.h": gen_mpif(fconsts, procs),
        "mpi.f90": gen_mpi_module_all(fconsts, procs),
        "mpi_f08.f90": gen_f08(fconsts, procs),
        "fortran_skipped.txt": "".join("%s: %s\n" % kv for kv in sorted(skipped.items())),
    }
    for name, text in files.items():
        path = os.path.join(outdir, name)
        old = None
        if os.path.exists(path):
            with open(path) as f:
                old = f.read()
        if old != text:
            with open(path, "w") as f:
                f.write(text)
    if "--why" in sys.argv:
        sys.stdout.write(files["fortran_skipped.txt"])


def gen_mpi_module_all(fconsts, procs):
    text = gen_mpi_module(fconsts, procs)
    hand = []
    for pr in procs:
        if pr.params is None and not pr.large:
            hand += hand_mpi_iface(pr)
    marker = "    subroutine MPI_F_SYNC_REG(buf)\n"
    return text.replace(marker, "\n".join(hand) + "\n" + marker, 1)


if __name__ == "__main__":
    main()
