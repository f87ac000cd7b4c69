// What module.cpp (the Python module) needs of the backend in
// loom_backend.cpp, whose class stays private to that file.
#pragma once

#include <mpi.h>

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <vector>

namespace torch_loom {

// A backend over `comm` (which it owns and frees), rank and size as torch
// gave them; `store` (its ranks publish their progress there, for timeout
// messages; may be null), the timeout of its ops (0: none) and torch's
// name of the group.
c10::intrusive_ptr<c10d::Backend> makeBackend(MPI_Comm comm, int rank, int size,
                                              const c10::intrusive_ptr<c10d::Store>& store,
                                              std::chrono::milliseconds timeout, const std::string& name);
// A communicator of `ranks` (ranks of `parent`), made by those ranks alone
// (MPI_Comm_create_group), errors returned; the caller holds no lock.
MPI_Comm subComm(MPI_Comm parent, const std::vector<int>& ranks);
// The communicator of a loom backend (an error for any other backend).
MPI_Comm backendComm(const c10::intrusive_ptr<c10d::Backend>& b);
// `iters` times the backend's allreduce() + wait() from C++, no GIL held.
void backendAllreduce(const c10::intrusive_ptr<c10d::Backend>& b, at::Tensor t, int iters);
// The MPI type a reduction of this dtype uses.
MPI_Datatype reduceTypeOf(at::ScalarType t);
// v as an MPI int count, or an error naming `what`.
int countOf(int64_t v, const char* what);

}  // namespace torch_loom
