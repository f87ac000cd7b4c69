// Language interoperability (MPI 5.0 section 19.3): MPI_Xxx_f2c/c2f for every
// handle kind, the status conversions between C, Fortran (mpif.h / mpi) and
// mpi_f08, and the storage of the sentinels Fortran passes by address.
//
// A Fortran handle is the handle's MPI_Xxx_toint number, so f2c/c2f are
// fromint/toint and a handle survives any number of round trips. All three
// status forms have the same eight-integer layout; the conversions copy.
//
// The sentinels (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, ... in
// Fortran) are common blocks. Their storage is defined here and exported:
// when a Fortran executable declares the common block, the dynamic linker
// makes its copy the only one, so the address Fortran passes is the address
// libloom_fortran compares against, and MPI_F_STATUS_IGNORE (C) points at it.
#include <mpi.h>

#include <cstring>

#include "api/runtime.h"
#include "core/status.h"

extern "C" {
MPI_Fint loom_f_bottom_[1];
MPI_Fint loom_f_in_place_[1];
MPI_Fint loom_f_buffer_automatic_[1];
MPI_Fint loom_f_status_ignore_[MPI_F_STATUS_SIZE];
MPI_Fint loom_f_statuses_ignore_[MPI_F_STATUS_SIZE];
MPI_Fint loom_f_errcodes_ignore_[1];
MPI_Fint loom_f_unweighted_[1];
MPI_Fint loom_f_weights_empty_[1];
char loom_f_argv_null_[1];
char loom_f_argvs_null_[1];

MPI_Fint* MPI_F_STATUS_IGNORE = loom_f_status_ignore_;
MPI_Fint* MPI_F_STATUSES_IGNORE = loom_f_statuses_ignore_;
MPI_F08_status* MPI_F08_STATUS_IGNORE = reinterpret_cast<MPI_F08_status*>(loom_f_status_ignore_);
MPI_F08_status* MPI_F08_STATUSES_IGNORE =
    reinterpret_cast<MPI_F08_status*>(loom_f_statuses_ignore_);
}

static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
              "a Fortran status has the C status's layout");
static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "an mpi_f08 status too");

#define LOOM_F2C(Kind, Type)                                                            \
  extern "C" Type PMPI_##Kind##_f2c(MPI_Fint h) { return PMPI_##Kind##_fromint(h); }  \
  LOOM_WEAK_ALIAS(MPI_##Kind##_f2c)                                                   \
  extern "C" MPI_Fint PMPI_##Kind##_c2f(Type h) { return PMPI_##Kind##_toint(h); }    \
  LOOM_WEAK_ALIAS(MPI_##Kind##_c2f)

LOOM_F2C(Comm, MPI_Comm)
LOOM_F2C(Type, MPI_Datatype)
LOOM_F2C(Errhandler, MPI_Errhandler)
LOOM_F2C(File, MPI_File)
LOOM_F2C(Group, MPI_Group)
LOOM_F2C(Info, MPI_Info)
LOOM_F2C(Message, MPI_Message)
LOOM_F2C(Op, MPI_Op)
LOOM_F2C(Request, MPI_Request)
LOOM_F2C(Session, MPI_Session)
LOOM_F2C(Win, MPI_Win)

namespace {

// Copy one eight-integer status into another. The ignore sentinels (C's
// null MPI_STATUS_IGNORE, Fortran's common blocks) are not statuses: the
// standard makes converting them erroneous, so they are MPI_ERR_ARG.
int copyStatus(const void* from, void* to, const char* fn) {
  bool ignored = !from || !to || from == loom_f_status_ignore_ || to == loom_f_status_ignore_ ||
                 from == loom_f_statuses_ignore_ || to == loom_f_statuses_ignore_;
  if (ignored)
    return loom::api::raise(nullptr,
                            loom::errorf(MPI_ERR_ARG, "a status argument is NULL or an ignore "
                                                      "sentinel"),
                            fn);
  std::memmove(to, from, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

}  // namespace

#define LOOM_STATUS_CONV(Name, From, To)                                  \
  extern "C" int PMPI_Status_##Name(const From* in, To* out) {           \
    return copyStatus(in, out, "MPI_Status_" #Name);                      \
  }                                                                       \
  LOOM_WEAK_ALIAS(MPI_Status_##Name)

LOOM_STATUS_CONV(f2c, MPI_Fint, MPI_Status)
LOOM_STATUS_CONV(c2f, MPI_Status, MPI_Fint)
LOOM_STATUS_CONV(f082c, MPI_F08_status, MPI_Status)
LOOM_STATUS_CONV(c2f08, MPI_Status, MPI_F08_status)
LOOM_STATUS_CONV(f082f, MPI_F08_status, MPI_Fint)
LOOM_STATUS_CONV(f2f08, MPI_Fint, MPI_F08_status)
