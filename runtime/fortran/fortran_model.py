"""The model of MPI's procedures the Fortran bindings are generated from.

Each procedure of runtime/fortran/mpi-functions.json (the MPI Forum's
description: parameter kinds, directions, array lengths) is matched with its
C prototype in mpi.h. The result is a Proc whose Params say how the C entry
point receives each argument from Fortran, converts it for the C call and
back, and how the modules declare it. gen_fortran.py writes the C entry
points from this model and fortran_modules.py the Fortran sources.
"""
import re

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
    "MPI_Win_create_errhandler", "MPI_Win_create_keyval", "MPI_Win_get_attr",
    "MPI_Win_set_attr",
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
    "MPI_File_create_errhandler": "callbacks of an unsupported chapter",
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
        # A single handle by pointer. An output's incoming Fortran value is
        # not a handle: no conversion (fromint of a stray number would take
        # the handle table's lock on every MPI_Isend's request).
        if p.dir == "out":
            p.pre = ["MPI_%s %s_c = 0;" % (h, n)]
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
            p.pre = ["int %s_c = 0;" % n]
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


def has_cptr(pr):
    return any(not isinstance(p, tuple) and p.kind == "C_BUFFER" and p.name == "baseptr"
               for p in pr.params)
