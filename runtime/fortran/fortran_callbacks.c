// The Fortran entry points the generator leaves to hand: procedures that take
// a user's Fortran procedure (reduction ops, error handlers, attribute copy
// and delete functions, generalized requests), attribute values (which
// Fortran holds as INTEGER(KIND=MPI_ADDRESS_KIND) numbers where C holds
// pointers), and the predefined callbacks Fortran passes by name.
//
// A Fortran procedure takes every argument by reference and handles as
// Fortran integers, so a C callback cannot call it directly: each kind gets a
// C trampoline that converts. Where MPI gives the callback no way to find the
// Fortran procedure (keyvals, generalized requests), the C extra_state is a
// small record holding the procedures and the user's own extra_state.
#include <stdint.h>

#include "fortran_support.h"

// libloom's Fortran-flavoured creators (exported for this library only).
int loom_f_op_create(void *fortran_fn, int commute, MPI_Op *op);
int loom_f_comm_create_errhandler(void *fortran_fn, MPI_Errhandler *errhandler);
int loom_f_session_create_errhandler(void *fortran_fn, MPI_Errhandler *errhandler);
int loom_f_win_create_errhandler(void *fortran_fn, MPI_Errhandler *errhandler);

#define LOOM_F_BOTH(ret, name, params, args)                                     \
  static ret loom_fh_##name(int prof, params);                                  \
  ret mpi_##name##_(params) { return loom_fh_##name(0, args); }                 \
  ret pmpi_##name##_(params) { return loom_fh_##name(1, args); }                \
  static ret loom_fh_##name(int prof, params)

#define P(...) __VA_ARGS__

// ------------------------------------------------------------ reduction ops

LOOM_F_BOTH(void, op_create, P(void *user_fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror),
            P(user_fn, commute, op, ierror)) {
  (void)prof;
  MPI_Op c = MPI_OP_NULL;
  int rc = loom_f_op_create(user_fn, *commute != 0, &c);
  if (rc == MPI_SUCCESS) *op = MPI_Op_toint(c);
  *ierror = rc;
}

// ----------------------------------------------------------- error handlers

LOOM_F_BOTH(void, comm_create_errhandler, P(void *fn, MPI_Fint *errhandler, MPI_Fint *ierror),
            P(fn, errhandler, ierror)) {
  (void)prof;
  MPI_Errhandler c = MPI_ERRHANDLER_NULL;
  int rc = loom_f_comm_create_errhandler(fn, &c);
  if (rc == MPI_SUCCESS) *errhandler = MPI_Errhandler_toint(c);
  *ierror = rc;
}

LOOM_F_BOTH(void, session_create_errhandler,
            P(void *fn, MPI_Fint *errhandler, MPI_Fint *ierror), P(fn, errhandler, ierror)) {
  (void)prof;
  MPI_Errhandler c = MPI_ERRHANDLER_NULL;
  int rc = loom_f_session_create_errhandler(fn, &c);
  if (rc == MPI_SUCCESS) *errhandler = MPI_Errhandler_toint(c);
  *ierror = rc;
}

LOOM_F_BOTH(void, win_create_errhandler, P(void *fn, MPI_Fint *errhandler, MPI_Fint *ierror),
            P(fn, errhandler, ierror)) {
  (void)prof;
  MPI_Errhandler c = MPI_ERRHANDLER_NULL;
  int rc = loom_f_win_create_errhandler(fn, &c);
  if (rc == MPI_SUCCESS) *errhandler = MPI_Errhandler_toint(c);
  *ierror = rc;
}

// ------------------------------------------------------------------ keyvals

typedef void FCopyFn(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Aint *, MPI_Fint *,
                     MPI_Fint *);
typedef void FDeleteFn(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Fint *);
typedef void FCopyFn77(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                       MPI_Fint *);
typedef void FDeleteFn77(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);

// The Fortran procedures of one keyval and the user's extra_state. Lives as
// long as the process (MPI does not tell a keyval's callbacks it is freed).
typedef struct {
  void *copy, *del;
  MPI_Aint extra;
  int kind;  // 0 communicator, 1 datatype, 2 MPI_Keyval_create (INTEGER values), 3 window
} FKeyval;

// The predefined callbacks, callable from Fortran by name. Passing one of
// them to a create_keyval call selects C's predefined behaviour directly.
void mpi_comm_null_copy_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Aint *e, MPI_Aint *in, MPI_Aint *out,
                            MPI_Fint *flag, MPI_Fint *ierr) {
  (void)o, (void)k, (void)e, (void)in, (void)out;
  *flag = 0;
  *ierr = MPI_SUCCESS;
}
void mpi_comm_dup_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Aint *e, MPI_Aint *in, MPI_Aint *out,
                      MPI_Fint *flag, MPI_Fint *ierr) {
  (void)o, (void)k, (void)e;
  *out = *in;
  *flag = 1;
  *ierr = MPI_SUCCESS;
}
void mpi_comm_null_delete_fn_(MPI_Fint *c, MPI_Fint *k, MPI_Aint *v, MPI_Aint *e, MPI_Fint *ierr) {
  (void)c, (void)k, (void)v, (void)e;
  *ierr = MPI_SUCCESS;
}
void mpi_type_null_copy_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Aint *e, MPI_Aint *in, MPI_Aint *out,
                            MPI_Fint *flag, MPI_Fint *ierr) {
  mpi_comm_null_copy_fn_(o, k, e, in, out, flag, ierr);
}
void mpi_type_dup_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Aint *e, MPI_Aint *in, MPI_Aint *out,
                      MPI_Fint *flag, MPI_Fint *ierr) {
  mpi_comm_dup_fn_(o, k, e, in, out, flag, ierr);
}
void mpi_type_null_delete_fn_(MPI_Fint *c, MPI_Fint *k, MPI_Aint *v, MPI_Aint *e, MPI_Fint *ierr) {
  mpi_comm_null_delete_fn_(c, k, v, e, ierr);
}
void mpi_win_null_copy_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Aint *e, MPI_Aint *in, MPI_Aint *out,
                           MPI_Fint *flag, MPI_Fint *ierr) {
  mpi_comm_null_copy_fn_(o, k, e, in, out, flag, ierr);
}
void mpi_win_dup_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Aint *e, MPI_Aint *in, MPI_Aint *out,
                     MPI_Fint *flag, MPI_Fint *ierr) {
  mpi_comm_dup_fn_(o, k, e, in, out, flag, ierr);
}
void mpi_win_null_delete_fn_(MPI_Fint *c, MPI_Fint *k, MPI_Aint *v, MPI_Aint *e, MPI_Fint *ierr) {
  mpi_comm_null_delete_fn_(c, k, v, e, ierr);
}
void mpi_null_copy_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Fint *e, MPI_Fint *in, MPI_Fint *out,
                       MPI_Fint *flag, MPI_Fint *ierr) {
  (void)o, (void)k, (void)e, (void)in, (void)out;
  *flag = 0;
  *ierr = MPI_SUCCESS;
}
void mpi_dup_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Fint *e, MPI_Fint *in, MPI_Fint *out,
                 MPI_Fint *flag, MPI_Fint *ierr) {
  (void)o, (void)k, (void)e;
  *out = *in;
  *flag = 1;
  *ierr = MPI_SUCCESS;
}
void mpi_null_delete_fn_(MPI_Fint *c, MPI_Fint *k, MPI_Fint *v, MPI_Fint *e, MPI_Fint *ierr) {
  (void)c, (void)k, (void)v, (void)e;
  *ierr = MPI_SUCCESS;
}

static int copy_tramp(MPI_Fint h, int keyval, void *extra, void *in, void *out, int *flag) {
  FKeyval *kv = (FKeyval *)extra;
  MPI_Fint k = keyval, f = 0, ierr = MPI_SUCCESS;
  if (kv->kind == 2) {  // MPI_Keyval_create: INTEGER values
    MPI_Fint e = (MPI_Fint)kv->extra, vin = (MPI_Fint)(intptr_t)in, vout = 0;
    ((FCopyFn77 *)kv->copy)(&h, &k, &e, &vin, &vout, &f, &ierr);
    if (ierr == MPI_SUCCESS && f) *(void **)out = (void *)(intptr_t)vout;
  } else {
    MPI_Aint vin = (MPI_Aint)in, vout = 0;
    ((FCopyFn *)kv->copy)(&h, &k, &kv->extra, &vin, &vout, &f, &ierr);
    if (ierr == MPI_SUCCESS && f) *(void **)out = (void *)vout;
  }
  *flag = (ierr == MPI_SUCCESS && f) ? 1 : 0;
  return ierr;
}

static int delete_tramp(MPI_Fint h, int keyval, void *value, void *extra) {
  FKeyval *kv = (FKeyval *)extra;
  MPI_Fint k = keyval, ierr = MPI_SUCCESS;
  if (kv->kind == 2) {
    MPI_Fint e = (MPI_Fint)kv->extra, v = (MPI_Fint)(intptr_t)value;
    ((FDeleteFn77 *)kv->del)(&h, &k, &v, &e, &ierr);
  } else {
    MPI_Aint v = (MPI_Aint)value;
    ((FDeleteFn *)kv->del)(&h, &k, &v, &kv->extra, &ierr);
  }
  return ierr;
}

static int comm_copy_tramp(MPI_Comm c, int keyval, void *extra, void *in, void *out, int *flag) {
  return copy_tramp(MPI_Comm_toint(c), keyval, extra, in, out, flag);
}
static int comm_delete_tramp(MPI_Comm c, int keyval, void *value, void *extra) {
  return delete_tramp(MPI_Comm_toint(c), keyval, value, extra);
}
static int type_copy_tramp(MPI_Datatype t, int keyval, void *extra, void *in, void *out,
                           int *flag) {
  return copy_tramp(MPI_Type_toint(t), keyval, extra, in, out, flag);
}
static int type_delete_tramp(MPI_Datatype t, int keyval, void *value, void *extra) {
  return delete_tramp(MPI_Type_toint(t), keyval, value, extra);
}

static int win_copy_tramp(MPI_Win w, int keyval, void *extra, void *in, void *out, int *flag) {
  return copy_tramp(MPI_Win_toint(w), keyval, extra, in, out, flag);
}
static int win_delete_tramp(MPI_Win w, int keyval, void *value, void *extra) {
  return delete_tramp(MPI_Win_toint(w), keyval, value, extra);
}

static FKeyval *new_keyval(void *copy, void *del, MPI_Aint extra, int kind) {
  FKeyval *kv = (FKeyval *)loom_f_alloc(1, sizeof(FKeyval));
  kv->copy = copy;
  kv->del = del;
  kv->extra = extra;
  kv->kind = kind;
  return kv;
}

// Which C copy function a Fortran copy procedure stands for.
static MPI_Comm_copy_attr_function *comm_copy_of(void *f) {
  if (f == (void *)mpi_comm_null_copy_fn_ || f == (void *)mpi_null_copy_fn_)
    return MPI_COMM_NULL_COPY_FN;
  if (f == (void *)mpi_comm_dup_fn_ || f == (void *)mpi_dup_fn_) return MPI_COMM_DUP_FN;
  return comm_copy_tramp;
}
static MPI_Comm_delete_attr_function *comm_delete_of(void *f) {
  if (f == (void *)mpi_comm_null_delete_fn_ || f == (void *)mpi_null_delete_fn_)
    return MPI_COMM_NULL_DELETE_FN;
  return comm_delete_tramp;
}

LOOM_F_BOTH(void, comm_create_keyval,
            P(void *copy_fn, void *delete_fn, MPI_Fint *keyval, MPI_Aint *extra_state,
              MPI_Fint *ierror),
            P(copy_fn, delete_fn, keyval, extra_state, ierror)) {
  FKeyval *kv = new_keyval(copy_fn, delete_fn, *extra_state, 0);
  int rc = (prof ? PMPI_Comm_create_keyval : MPI_Comm_create_keyval)(
      comm_copy_of(copy_fn), comm_delete_of(delete_fn), keyval, kv);
  *ierror = rc;
}

LOOM_F_BOTH(void, keyval_create,
            P(void *copy_fn, void *delete_fn, MPI_Fint *keyval, MPI_Fint *extra_state,
              MPI_Fint *ierror),
            P(copy_fn, delete_fn, keyval, extra_state, ierror)) {
  FKeyval *kv = new_keyval(copy_fn, delete_fn, *extra_state, 2);
  int rc = (prof ? PMPI_Comm_create_keyval : MPI_Comm_create_keyval)(
      comm_copy_of(copy_fn), comm_delete_of(delete_fn), keyval, kv);
  *ierror = rc;
}

LOOM_F_BOTH(void, type_create_keyval,
            P(void *copy_fn, void *delete_fn, MPI_Fint *keyval, MPI_Aint *extra_state,
              MPI_Fint *ierror),
            P(copy_fn, delete_fn, keyval, extra_state, ierror)) {
  FKeyval *kv = new_keyval(copy_fn, delete_fn, *extra_state, 1);
  MPI_Type_copy_attr_function *copy = type_copy_tramp;
  MPI_Type_delete_attr_function *del = type_delete_tramp;
  if (copy_fn == (void *)mpi_type_null_copy_fn_) copy = MPI_TYPE_NULL_COPY_FN;
  if (copy_fn == (void *)mpi_type_dup_fn_) copy = MPI_TYPE_DUP_FN;
  if (delete_fn == (void *)mpi_type_null_delete_fn_) del = MPI_TYPE_NULL_DELETE_FN;
  int rc = (prof ? PMPI_Type_create_keyval : MPI_Type_create_keyval)(copy, del, keyval, kv);
  *ierror = rc;
}

LOOM_F_BOTH(void, win_create_keyval,
            P(void *copy_fn, void *delete_fn, MPI_Fint *keyval, MPI_Aint *extra_state,
              MPI_Fint *ierror),
            P(copy_fn, delete_fn, keyval, extra_state, ierror)) {
  FKeyval *kv = new_keyval(copy_fn, delete_fn, *extra_state, 3);
  MPI_Win_copy_attr_function *copy = win_copy_tramp;
  MPI_Win_delete_attr_function *del = win_delete_tramp;
  if (copy_fn == (void *)mpi_win_null_copy_fn_) copy = MPI_WIN_NULL_COPY_FN;
  if (copy_fn == (void *)mpi_win_dup_fn_) copy = MPI_WIN_DUP_FN;
  if (delete_fn == (void *)mpi_win_null_delete_fn_) del = MPI_WIN_NULL_DELETE_FN;
  int rc = (prof ? PMPI_Win_create_keyval : MPI_Win_create_keyval)(copy, del, keyval, kv);
  *ierror = rc;
}

// --------------------------------------------------------- attribute values

// The predefined communicator attributes hold a pointer to an int in C; in
// Fortran their value is that int.
static int int_valued(int keyval) {
  return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
         keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_UNIVERSE_SIZE || keyval == MPI_APPNUM ||
         keyval == MPI_LASTUSEDCODE;
}

static int comm_get(int prof, MPI_Fint comm, int keyval, MPI_Aint *value, MPI_Fint *flag) {
  void *p = NULL;
  int f = 0;
  int rc = (prof ? PMPI_Comm_get_attr : MPI_Comm_get_attr)(MPI_Comm_fromint(comm), keyval, &p,
                                                           &f);
  if (rc == MPI_SUCCESS) {
    *flag = f ? 1 : 0;
    if (f) *value = int_valued(keyval) ? (MPI_Aint) * (int *)p : (MPI_Aint)p;
  }
  return rc;
}

LOOM_F_BOTH(void, comm_get_attr,
            P(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag,
              MPI_Fint *ierror),
            P(comm, keyval, value, flag, ierror)) {
  *ierror = comm_get(prof, *comm, *keyval, value, flag);
}

LOOM_F_BOTH(void, attr_get,
            P(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *flag,
              MPI_Fint *ierror),
            P(comm, keyval, value, flag, ierror)) {
  MPI_Aint v = 0;
  *ierror = comm_get(prof, *comm, *keyval, &v, flag);
  if (*ierror == MPI_SUCCESS && *flag) *value = (MPI_Fint)v;
}

LOOM_F_BOTH(void, comm_set_attr,
            P(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *ierror),
            P(comm, keyval, value, ierror)) {
  *ierror = (prof ? PMPI_Comm_set_attr : MPI_Comm_set_attr)(MPI_Comm_fromint(*comm), *keyval,
                                                            (void *)*value);
}

LOOM_F_BOTH(void, attr_put,
            P(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *ierror),
            P(comm, keyval, value, ierror)) {
  *ierror = (prof ? PMPI_Comm_set_attr : MPI_Comm_set_attr)(MPI_Comm_fromint(*comm), *keyval,
                                                            (void *)(intptr_t)*value);
}

LOOM_F_BOTH(void, type_get_attr,
            P(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag,
              MPI_Fint *ierror),
            P(type, keyval, value, flag, ierror)) {
  void *p = NULL;
  int f = 0;
  int rc = (prof ? PMPI_Type_get_attr : MPI_Type_get_attr)(MPI_Type_fromint(*type), *keyval,
                                                           &p, &f);
  if (rc == MPI_SUCCESS) {
    *flag = f ? 1 : 0;
    if (f) *value = (MPI_Aint)p;
  }
  *ierror = rc;
}

LOOM_F_BOTH(void, type_set_attr,
            P(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *ierror),
            P(type, keyval, value, ierror)) {
  *ierror = (prof ? PMPI_Type_set_attr : MPI_Type_set_attr)(MPI_Type_fromint(*type),
                                                            *keyval, (void *)*value);
}

// The predefined window attributes: MPI_WIN_BASE is the address itself in C
// and in Fortran; the others are a pointer to the value in C (an MPI_Aint
// for MPI_WIN_SIZE, ints for the rest) and the value in Fortran.
LOOM_F_BOTH(void, win_get_attr,
            P(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag,
              MPI_Fint *ierror),
            P(win, keyval, value, flag, ierror)) {
  void *p = NULL;
  int f = 0;
  int rc = (prof ? PMPI_Win_get_attr : MPI_Win_get_attr)(MPI_Win_fromint(*win), *keyval, &p,
                                                         &f);
  if (rc == MPI_SUCCESS) {
    *flag = f ? 1 : 0;
    if (f) {
      if (*keyval == MPI_WIN_SIZE)
        *value = *(MPI_Aint *)p;
      else if (*keyval == MPI_WIN_DISP_UNIT || *keyval == MPI_WIN_CREATE_FLAVOR ||
               *keyval == MPI_WIN_MODEL)
        *value = (MPI_Aint) * (int *)p;
      else
        *value = (MPI_Aint)p;
    }
  }
  *ierror = rc;
}

LOOM_F_BOTH(void, win_set_attr,
            P(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *ierror),
            P(win, keyval, value, ierror)) {
  *ierror = (prof ? PMPI_Win_set_attr : MPI_Win_set_attr)(MPI_Win_fromint(*win), *keyval,
                                                          (void *)*value);
}

// ----------------------------------------------------- generalized requests

typedef void FQueryFn(MPI_Aint *, MPI_Fint *, MPI_Fint *);
typedef void FFreeFn(MPI_Aint *, MPI_Fint *);
typedef void FCancelFn(MPI_Aint *, MPI_Fint *, MPI_Fint *);
typedef struct {
  void *query, *free, *cancel;
  MPI_Aint extra;
} FGrequest;

static int greq_query(void *extra, MPI_Status *status) {
  FGrequest *g = (FGrequest *)extra;
  MPI_Fint ierr = MPI_SUCCESS;
  ((FQueryFn *)g->query)(&g->extra, (MPI_Fint *)status, &ierr);
  return ierr;
}
static int greq_free(void *extra) {
  FGrequest *g = (FGrequest *)extra;
  MPI_Fint ierr = MPI_SUCCESS;
  ((FFreeFn *)g->free)(&g->extra, &ierr);
  free(g);
  return ierr;
}
static int greq_cancel(void *extra, int complete) {
  FGrequest *g = (FGrequest *)extra;
  MPI_Fint ierr = MPI_SUCCESS, c = complete ? 1 : 0;
  ((FCancelFn *)g->cancel)(&g->extra, &c, &ierr);
  return ierr;
}

LOOM_F_BOTH(void, grequest_start,
            P(void *query_fn, void *free_fn, void *cancel_fn, MPI_Aint *extra_state,
              MPI_Fint *request, MPI_Fint *ierror),
            P(query_fn, free_fn, cancel_fn, extra_state, request, ierror)) {
  FGrequest *g = (FGrequest *)loom_f_alloc(1, sizeof(FGrequest));
  g->query = query_fn;
  g->free = free_fn;
  g->cancel = cancel_fn;
  g->extra = *extra_state;
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = (prof ? PMPI_Grequest_start : MPI_Grequest_start)(greq_query, greq_free, greq_cancel,
                                                             g, &r);
  if (rc == MPI_SUCCESS)
    *request = MPI_Request_toint(r);
  else
    free(g);
  *ierror = rc;
}

// ------------------------------------------------------------------- info

// Fortran's buflen counts characters; C's includes the terminating NUL.
static void info_get_string(int prof, MPI_Fint *info, char *key, MPI_Fint *buflen, char *value,
                            MPI_Fint *flag, MPI_Fint *ierror, size_t key_len, size_t value_len) {
  char *k = loom_f_str_in(key, key_len, 1);
  int cap = *buflen > 0 ? *buflen + 1 : 1;
  char *v = (char *)loom_f_alloc(cap, 1);
  int f = 0, len = cap;
  int rc = (prof ? PMPI_Info_get_string : MPI_Info_get_string)(MPI_Info_fromint(*info), k, &len,
                                                                v, &f);
  if (rc == MPI_SUCCESS) {
    *flag = f ? 1 : 0;
    if (f) {
      loom_f_str_out(v, value, value_len);
      *buflen = len - 1;
    }
  }
  free(k);
  free(v);
  *ierror = rc;
}
void mpi_info_get_string_(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value,
                          MPI_Fint *flag, MPI_Fint *ierror, size_t key_len, size_t value_len) {
  info_get_string(0, info, key, buflen, value, flag, ierror, key_len, value_len);
}
void pmpi_info_get_string_(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value,
                           MPI_Fint *flag, MPI_Fint *ierror, size_t key_len, size_t value_len) {
  info_get_string(1, info, key, buflen, value, flag, ierror, key_len, value_len);
}

// ---------------------------------------------------------------- the rest

// MPI_PCONTROL(LEVEL): no varargs from Fortran.
void mpi_pcontrol_(MPI_Fint *level) { MPI_Pcontrol(*level); }
void pmpi_pcontrol_(MPI_Fint *level) { PMPI_Pcontrol(*level); }

// MPI_F_SYNC_REG(BUF): only its call matters (it stops the compiler keeping
// BUF in a register across it).
void mpi_f_sync_reg_(void *buf) { (void)buf; }
void pmpi_f_sync_reg_(void *buf) { (void)buf; }
