// Reduction operations: MPI_Op_create(_c), MPI_Op_free, MPI_Op_commutative.
// Errors here concern no communicator: they go to MPI_COMM_WORLD's handler.
#include <mpi.h>

#include "api/runtime.h"
#include "coll/op.h"

using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;
using loom::coll::Op;

namespace {

int create(MPI_User_function* fn, MPI_User_function_c* fnC, int commute, MPI_Op* op,
           const char* name) {
  if (!requireRunning(name)) return MPI_ERR_OTHER;
  if (!fn && !fnC) return raise(nullptr, errorf(MPI_ERR_ARG, "user_fn is NULL"), name);
  if (!op) return raise(nullptr, errorf(MPI_ERR_ARG, "op is NULL"), name);
  *op = loom::coll::toHandle(Op::create(fn, fnC, commute != 0));
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return create(user_fn, nullptr, commute, op, "MPI_Op_create");
}
LOOM_WEAK_ALIAS(MPI_Op_create)

extern "C" int PMPI_Op_create_c(MPI_User_function_c* user_fn, int commute, MPI_Op* op) {
  return create(nullptr, user_fn, commute, op, "MPI_Op_create_c");
}
LOOM_WEAK_ALIAS(MPI_Op_create_c)

// MPI_Op_create from Fortran (libloom_fortran): the function takes Fortran
// handles. Exported for the bindings only.
extern "C" int loom_f_op_create(void* fortran_fn, int commute, MPI_Op* op) {
  int rc = create(reinterpret_cast<MPI_User_function*>(fortran_fn), nullptr, commute, op,
                  "MPI_Op_create");
  if (rc == MPI_SUCCESS) {
    loom::coll::gTypeToFortran = PMPI_Type_toint;
    loom::coll::toOp(*op)->setFortran();
  }
  return rc;
}

extern "C" int PMPI_Op_free(MPI_Op* op) {
  const char* fn = "MPI_Op_free";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!op) return raise(nullptr, errorf(MPI_ERR_ARG, "op is NULL"), fn);
  Op* o = loom::coll::toOp(*op);
  if (!o) return raise(nullptr, errorf(MPI_ERR_OP, "invalid op"), fn);
  if (o->isPredefined())
    return raise(nullptr, errorf(MPI_ERR_OP, "%s is predefined and cannot be freed", o->name()),
                 fn);
  // The handle dies now; a pending collective's reference keeps the object.
  o->markUserFreed();
  o->release();
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Op_free)

extern "C" int PMPI_Op_commutative(MPI_Op op, int* commute) {
  const char* fn = "MPI_Op_commutative";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Op* o = loom::coll::toOp(op);
  if (!o) return raise(nullptr, errorf(MPI_ERR_OP, "invalid op"), fn);
  if (!commute) return raise(nullptr, errorf(MPI_ERR_ARG, "commute is NULL"), fn);
  *commute = o->commutative() ? 1 : 0;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Op_commutative)
