// What the generated Fortran entry points (fortran_wrappers.c) share: the
// sentinels Fortran passes by address, and the conversions of buffers,
// statuses, strings and arrays between Fortran's and C's conventions.
//
// Fortran passes every argument by reference, so an entry point receives
// pointers; a CHARACTER argument adds a hidden length (size_t, gfortran >= 8)
// after all the others. A handle is its MPI_Xxx_toint number and a status has
// the C status's layout (MPI_F_STATUS_SIZE ints), so they need no copying.
#ifndef LOOM_FORTRAN_SUPPORT_H
#define LOOM_FORTRAN_SUPPORT_H

#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

// The Fortran sentinels: common blocks (/LOOM_F_BOTTOM/, ...) that mpif.h and
// both modules declare; libloom defines their storage (fortran_interop_api.cc),
// and an executable's common block of the same name becomes the one copy.
extern MPI_Fint loom_f_bottom_[1];
extern MPI_Fint loom_f_in_place_[1];
extern MPI_Fint loom_f_buffer_automatic_[1];
extern MPI_Fint loom_f_status_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint loom_f_statuses_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint loom_f_errcodes_ignore_[1];
extern MPI_Fint loom_f_unweighted_[1];
extern MPI_Fint loom_f_weights_empty_[1];
extern char loom_f_argv_null_[1];
extern char loom_f_argvs_null_[1];

static inline void *loom_f_buf(void *p) {
  if (p == (void *)loom_f_bottom_) return MPI_BOTTOM;
  if (p == (void *)loom_f_in_place_) return MPI_IN_PLACE;
  if (p == (void *)loom_f_buffer_automatic_) return MPI_BUFFER_AUTOMATIC;
  return p;
}
static inline MPI_Status *loom_f_status(MPI_Fint *s) {
  return (s == loom_f_status_ignore_ || s == loom_f_statuses_ignore_) ? MPI_STATUS_IGNORE
                                                                       : (MPI_Status *)s;
}
static inline MPI_Status *loom_f_statuses(MPI_Fint *s) {
  return (s == loom_f_statuses_ignore_ || s == loom_f_status_ignore_) ? MPI_STATUSES_IGNORE
                                                                       : (MPI_Status *)s;
}
static inline int *loom_f_weights(MPI_Fint *w) {
  if (w == loom_f_unweighted_) return MPI_UNWEIGHTED;
  if (w == loom_f_weights_empty_) return MPI_WEIGHTS_EMPTY;
  return w;
}
static inline int *loom_f_errcodes(MPI_Fint *e) {
  return e == loom_f_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : e;
}

// A zeroed array of n elements of size bytes (at least one element, so a
// count of 0 still gives a valid pointer); aborts the job if memory is out.
void *loom_f_alloc(int n, size_t size);

// A Fortran string as a C string: trailing blanks dropped (leading blanks too
// when lead is set: info keys and values); the caller frees it.
char *loom_f_str_in(const char *s, size_t len, int lead);
// The C buffer an output string of Fortran length len needs: room for any
// MPI_MAX_* string and the terminating NUL.
size_t loom_f_str_out_size(size_t len);
// A C result into a Fortran string: copied up to len and padded with blanks.
void loom_f_str_out(const char *c, char *f, size_t len);

// The length of the per-peer arrays of an alltoallw-style call on comm: the
// group size, the remote group's on an intercommunicator, or for a
// neighbourhood call (flags & 2) the out degree, the in degree if flags & 1.
int loom_f_peer_count(MPI_Comm comm, int flags);
// The number of dimensions of a Cartesian communicator (0 if it is none).
int loom_f_cartdim(MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif  // LOOM_FORTRAN_SUPPORT_H
