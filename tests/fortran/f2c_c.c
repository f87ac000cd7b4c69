/* f2c_c.c: C halves of the f2c/c2f tests. Fortran passes MPI_Fint handles
 * (and statuses); each function converts them with MPI_*_f2c, uses the C
 * handle, converts it back with MPI_*_c2f and checks that the value is the
 * same. Return 0 when every check passed, else the number of the failed one
 * (so the Fortran side can say which). F2C_SKIP: not available here. */
#include <mpi.h>
#include <string.h>

#define F2C_SKIP 77

/* Fortran values of C's predefined handles, in a fixed order. */
void ft_predefined(MPI_Fint* out) {
  out[0] = MPI_Comm_c2f(MPI_COMM_WORLD);
  out[1] = MPI_Comm_c2f(MPI_COMM_SELF);
  out[2] = MPI_Comm_c2f(MPI_COMM_NULL);
  out[3] = MPI_Type_c2f(MPI_INTEGER);
  out[4] = MPI_Type_c2f(MPI_DOUBLE_PRECISION);
  out[5] = MPI_Type_c2f(MPI_DATATYPE_NULL);
  out[6] = MPI_Op_c2f(MPI_SUM);
  out[7] = MPI_Group_c2f(MPI_GROUP_EMPTY);
  out[8] = MPI_Request_c2f(MPI_REQUEST_NULL);
  out[9] = MPI_Info_c2f(MPI_INFO_NULL);
  out[10] = MPI_Errhandler_c2f(MPI_ERRORS_RETURN);
  out[11] = MPI_Op_c2f(MPI_MAX);
}

int ft_comm(MPI_Fint f, int* size) {
  MPI_Comm c = MPI_Comm_f2c(f);
  if (c == MPI_COMM_NULL) return 1;
  if (MPI_Comm_size(c, size) != MPI_SUCCESS) return 2;
  if (MPI_Comm_c2f(c) != f) return 3;
  if (MPI_Comm_f2c(MPI_Comm_c2f(c)) != c) return 4;
  return 0;
}

/* A communicator made in C, handed to Fortran. */
MPI_Fint ft_comm_dup(MPI_Fint f) {
  MPI_Comm d;
  if (MPI_Comm_dup(MPI_Comm_f2c(f), &d) != MPI_SUCCESS) return MPI_Comm_c2f(MPI_COMM_NULL);
  MPI_Comm_set_name(d, "dup made in C");
  return MPI_Comm_c2f(d);
}

int ft_type(MPI_Fint f, int* size) {
  MPI_Datatype t = MPI_Type_f2c(f);
  if (MPI_Type_size(t, size) != MPI_SUCCESS) return 1;
  if (MPI_Type_c2f(t) != f) return 2;
  return 0;
}

/* n contiguous copies of a type given by Fortran, committed, back to Fortran. */
MPI_Fint ft_type_contig(int n, MPI_Fint f) {
  MPI_Datatype t;
  MPI_Type_contiguous(n, MPI_Type_f2c(f), &t);
  MPI_Type_commit(&t);
  return MPI_Type_c2f(t);
}

int ft_group(MPI_Fint f, int* size) {
  MPI_Group g = MPI_Group_f2c(f);
  if (MPI_Group_size(g, size) != MPI_SUCCESS) return 1;
  if (MPI_Group_c2f(g) != f) return 2;
  return 0;
}

/* Waits in C for a request made in Fortran; *f becomes the Fortran value of
 * MPI_REQUEST_NULL; the status's source and count are returned. */
int ft_request_wait(MPI_Fint* f, int* source, int* count) {
  MPI_Request q = MPI_Request_f2c(*f);
  MPI_Status st;
  if (q == MPI_REQUEST_NULL) return 1;
  if (MPI_Request_c2f(q) != *f) return 2;
  if (MPI_Wait(&q, &st) != MPI_SUCCESS) return 3;
  if (q != MPI_REQUEST_NULL) return 4;
  *f = MPI_Request_c2f(q);
  *source = st.MPI_SOURCE;
  MPI_Get_count(&st, MPI_INTEGER, count);
  return 0;
}

/* inout = in (op) inout on n Fortran INTEGERs, with an op made in Fortran or a
 * predefined one. */
int ft_op(MPI_Fint f, const MPI_Fint* in, MPI_Fint* inout, int n) {
  MPI_Op op = MPI_Op_f2c(f);
  int commute = -1;
  if (MPI_Op_c2f(op) != f) return 1;
  if (MPI_Reduce_local(in, inout, n, MPI_INTEGER, op) != MPI_SUCCESS) return 2;
  if (MPI_Op_commutative(op, &commute) != MPI_SUCCESS || commute != 1) return 3;
  return 0;
}

/* Reads key "loomkey" of an info made in Fortran, adds "fromc" = "yes". */
int ft_info(MPI_Fint f, char* value, int* len) {
  MPI_Info info = MPI_Info_f2c(f);
  int flag = 0, buflen = *len;
  if (MPI_Info_c2f(info) != f) return 1;
#if MPI_VERSION >= 4
  if (MPI_Info_get_string(info, "loomkey", &buflen, value, &flag) != MPI_SUCCESS) return 2;
#else
  if (MPI_Info_get(info, "loomkey", buflen - 1, value, &flag) != MPI_SUCCESS) return 2;
#endif
  if (!flag) return 3;
  *len = (int)strlen(value);
  if (MPI_Info_set(info, "fromc", "yes") != MPI_SUCCESS) return 4;
  return 0;
}

int ft_errhandler(MPI_Fint f) {
  MPI_Errhandler e = MPI_Errhandler_f2c(f);
  if (e != MPI_ERRORS_RETURN) return 1;
  if (MPI_Errhandler_c2f(e) != f) return 2;
  return 0;
}

/* A Fortran INTEGER status: to C and back, fields and count preserved. */
int ft_status(const MPI_Fint* fst, MPI_Fint* fout, int* source, int* tag, int* count) {
  MPI_Status st;
  if (MPI_Status_f2c(fst, &st) != MPI_SUCCESS) return 1;
  *source = st.MPI_SOURCE;
  *tag = st.MPI_TAG;
  if (MPI_Get_count(&st, MPI_INTEGER, count) != MPI_SUCCESS) return 2;
  if (MPI_Status_c2f(&st, fout) != MPI_SUCCESS) return 3;
  return 0;
}

/* The MPI 4.0 conversions with TYPE(MPI_Status) (MPI_F08_status). */
#if MPI_VERSION >= 4
int ft_status_f08(const MPI_F08_status* f08, MPI_F08_status* f08out, MPI_Fint* fout,
                  int* source, int* count) {
  MPI_Status st, st2;
  MPI_F08_status back;
  MPI_Fint fst[MPI_F_STATUS_SIZE];
  int c2 = -1;
  if (MPI_Status_f082c(f08, &st) != MPI_SUCCESS) return 1;
  *source = st.MPI_SOURCE;
  if (MPI_Get_count(&st, MPI_INTEGER, count) != MPI_SUCCESS) return 2;
  if (MPI_Status_c2f08(&st, &back) != MPI_SUCCESS) return 3;
  if (MPI_Status_f082c(&back, &st2) != MPI_SUCCESS) return 4;
  if (st2.MPI_SOURCE != st.MPI_SOURCE || st2.MPI_TAG != st.MPI_TAG) return 5;
  MPI_Get_count(&st2, MPI_INTEGER, &c2);
  if (c2 != *count) return 6;
  if (MPI_Status_f082f(f08, fst) != MPI_SUCCESS) return 7;
  if (fst[MPI_F_SOURCE] != st.MPI_SOURCE || fst[MPI_F_TAG] != st.MPI_TAG) return 8;
  if (MPI_Status_f2f08(fst, f08out) != MPI_SUCCESS) return 9;
  if (MPI_Status_f082c(f08out, &st2) != MPI_SUCCESS) return 10;
  MPI_Get_count(&st2, MPI_INTEGER, &c2);
  if (c2 != *count || st2.MPI_SOURCE != st.MPI_SOURCE) return 11;
  memcpy(fout, fst, sizeof fst);
  return 0;
}
#else
int ft_status_f08(const void* f08, void* f08out, MPI_Fint* fout, int* source, int* count) {
  (void)f08; (void)f08out; (void)fout; (void)source; (void)count;
  return F2C_SKIP;
}
#endif
