// The Python module torch_loom._C: MPI start and stop, the facts the
// package's import needs (ranks, node-local ranks, a broadcast string), the
// backend creator torch calls for every process group, and the raw entries
// the benchmark compares the backend against.
#include <mpi.h>

#include <torch/extension.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <pybind11/chrono.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "engine.h"
#include "loom_backend.h"

namespace torch_loom {
namespace {

// (local rank, local size): the ranks sharing this node.
std::pair<int, int> localRankSize() {
  std::lock_guard<std::mutex> lock(Engine::get().mpi());
  MPI_Comm node;
  checkMpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
           "MPI_Comm_split_type");
  int r, s;
  MPI_Comm_rank(node, &r);
  MPI_Comm_size(node, &s);
  MPI_Comm_free(&node);
  return {r, s};
}

std::mutex gInitMu;
bool gInitialized = false;

int initMpi() {
  std::lock_guard<std::mutex> g(gInitMu);
  int provided = MPI_THREAD_SERIALIZED;
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    checkMpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    TORCH_CHECK(provided >= MPI_THREAD_SERIALIZED,
                "loom: MPI_Init_thread gave thread level ", provided, ", the backend needs MPI_THREAD_SERIALIZED");
  } else {
    MPI_Query_thread(&provided);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const bool first = !gInitialized;
  gInitialized = true;
  // Once, at import, where every rank calls this (later calls come from
  // backend creations, which only a group's members make): a collective on
  // MPI_COMM_WORLD here would wait for the others forever.
  if (first) {
    // The node's cores, not this rank's binding (a bound rank sees one).
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    Engine::get().setOversubscribed(cpus > 0 && localRankSize().second > cpus);
  }
  Engine::get().start();
  return provided;
}

void finalizeMpi() {
  std::lock_guard<std::mutex> g(gInitMu);
  if (!gInitialized) return;
  gInitialized = false;
  Engine::get().stop();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    std::lock_guard<std::mutex> lock(Engine::get().mpi());
    MPI_Finalize();
  }
}

std::pair<int, int> worldRankSize() {
  std::lock_guard<std::mutex> lock(Engine::get().mpi());
  int r, s;
  checkMpi(MPI_Comm_rank(MPI_COMM_WORLD, &r), "MPI_Comm_rank");
  checkMpi(MPI_Comm_size(MPI_COMM_WORLD, &s), "MPI_Comm_size");
  return {r, s};
}

// Rank root's string, on every rank of MPI_COMM_WORLD.
std::string bcastString(const std::string& s, int root) {
  std::lock_guard<std::mutex> lock(Engine::get().mpi());
  int len = static_cast<int>(s.size());
  checkMpi(MPI_Bcast(&len, 1, MPI_INT, root, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = s;
  out.resize(len);
  checkMpi(MPI_Bcast(out.data(), len, MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}

int64_t allreduceMaxInt(int64_t v) {
  std::lock_guard<std::mutex> lock(Engine::get().mpi());
  int64_t out = 0;
  checkMpi(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

c10::intrusive_ptr<c10d::Backend> createBackend(const c10d::DistributedBackendOptions& o, py::object) {
  initMpi();
  auto [wrank, wsize] = worldRankSize();
  std::vector<int> ranks(o.global_ranks_in_group.begin(), o.global_ranks_in_group.end());
  bool whole = ranks.empty();
  if (static_cast<int>(ranks.size()) == wsize) {
    whole = true;
    for (int i = 0; i < wsize; ++i) whole = whole && ranks[i] == i;
  }
  if (whole) {
    TORCH_CHECK(o.group_rank == wrank && o.group_size == wsize, "loom: torch.distributed says rank ",
                o.group_rank, " of ", o.group_size, " but Loom's MPI_COMM_WORLD has rank ", wrank, " of ",
                wsize, ": start the job with loomrun -n N (or srun --mpi=pmix), and let RANK/WORLD_SIZE "
                "match MPI's");
  }
  MPI_Comm comm = MPI_COMM_NULL;
  if (whole) {
    std::lock_guard<std::mutex> lock(Engine::get().mpi());
    checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  } else {
    // Collective over the members only: torch creates no backend on non-members.
    comm = subComm(MPI_COMM_WORLD, ranks);
  }
  TORCH_CHECK(comm != MPI_COMM_NULL, "loom: rank ", wrank, " is not in the group being created");
  int r, s;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &s);
  TORCH_CHECK(r == o.group_rank && s == o.group_size, "loom: group rank/size ", o.group_rank, "/",
              o.group_size, " from torch disagree with the communicator's ", r, "/", s);
  auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(o.timeout);
  return makeBackend(comm, r, s, o.store, timeout, o.group_id);
}

// The benchmark's baselines: the same SUM over the same bytes with no Work,
// future or torch dispatch. raw_allreduce: blocking MPI_Allreduce;
// raw_iallreduce: MPI_Iallreduce + MPI_Wait; backend_allreduce: the backend's
// allreduce() + wait() from C++ (no Python or dispatcher in between).
void rawAllreduce(MPI_Comm comm, at::Tensor& t, MPI_Datatype type, int n, bool nonblocking) {
  std::lock_guard<std::mutex> lock(Engine::get().mpi());
  if (!nonblocking) {
    checkMpi(MPI_Allreduce(MPI_IN_PLACE, t.data_ptr(), n, type, MPI_SUM, comm), "MPI_Allreduce");
    return;
  }
  MPI_Request req;
  checkMpi(MPI_Iallreduce(MPI_IN_PLACE, t.data_ptr(), n, type, MPI_SUM, comm, &req), "MPI_Iallreduce");
  checkMpi(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
}

void rawAllreduceLoop(const c10::intrusive_ptr<c10d::Backend>& b, at::Tensor t, int iters, bool nonblocking) {
  MPI_Comm comm = backendComm(b);
  TORCH_CHECK(t.is_contiguous() && t.device().is_cpu(), "raw_allreduce: contiguous CPU tensor");
  MPI_Datatype type = reduceTypeOf(t.scalar_type());
  int n = countOf(t.numel(), "element count");
  py::gil_scoped_release nogil;
  for (int i = 0; i < iters; ++i) rawAllreduce(comm, t, type, n, nonblocking);
}

}  // namespace
}  // namespace torch_loom

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  using namespace torch_loom;
  m.doc() = "Loom (MPI) backend for torch.distributed";
  m.def("init", &initMpi, "MPI_Init_thread(SERIALIZED) once; returns the thread level");
  m.def("finalize", &finalizeMpi, "stops the progress thread, then MPI_Finalize");
  m.def("world_rank_size", &worldRankSize);
  m.def("local_rank_size", &localRankSize);
  m.def("bcast_string", &bcastString, py::arg("s"), py::arg("root") = 0);
  m.def("allreduce_max_int", &allreduceMaxInt);
  m.def("create_backend", &createBackend, py::arg("opts"), py::arg("backend_options"));
  m.def("raw_allreduce", &rawAllreduceLoop, py::arg("backend"), py::arg("tensor"), py::arg("iters") = 1,
        py::arg("nonblocking") = false);
  m.def("backend_allreduce", &backendAllreduce, py::arg("backend"), py::arg("tensor"), py::arg("iters") = 1);
}
