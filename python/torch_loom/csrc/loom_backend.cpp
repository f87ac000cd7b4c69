// The `loom` c10d Backend: every torch.distributed op mapped onto one
// nonblocking MPI call (engine.h has the threading and completion model),
// and the entries loom_backend.h declares for module.cpp (the Python module).
//
// Buffers: reductions use the tensor's own MPI type (MPIX_C_FLOAT16 and
// MPIX_BFLOAT16 for the 16-bit floats); everything else moves MPI_BYTE, so
// any dtype works. A non-contiguous tensor is staged through a contiguous
// copy that the Work's epilogue copies back. List forms (allgather, gather,
// scatter, reduce_scatter, alltoall) go through one flat staging buffer and
// one MPI call (the v-form when the sizes differ).
#include <mpi.h>
#include <mpi-ext.h>

#include <torch/extension.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <pybind11/chrono.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "engine.h"
#include "loom_backend.h"

namespace torch_loom {
namespace {

using c10d::OpType;
using c10d::ReduceOp;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

// ---------------------------------------------------------------- checks

void checkTensor(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.device().is_cpu(), "loom: ", op, " got a tensor on ", t.device(),
              ": the loom backend serves CPU tensors only for now (CUDA tensors come once "
              "Loom's GPU path lands); move the tensor to the CPU or use nccl/gloo for it");
  TORCH_CHECK(t.layout() == c10::kStrided, "loom: ", op, " needs dense (strided) tensors, got ",
              t.layout());
}

const at::Tensor& single(std::vector<at::Tensor>& ts, const char* op) {
  TORCH_CHECK(ts.size() == 1, "loom: ", op, " takes exactly one tensor per call, got ", ts.size());
  checkTensor(ts[0], op);
  return ts[0];
}

int toInt(int64_t v, const char* what) {
  TORCH_CHECK(v >= 0 && v <= INT_MAX, "loom: ", what, " (", v,
              ") exceeds MPI's int count; split the tensor");
  return static_cast<int>(v);
}

int bytesOf(const at::Tensor& t) { return toInt(static_cast<int64_t>(t.nbytes()), "byte count"); }

// The contiguous buffer MPI works on: t itself, or a staging copy.
at::Tensor contig(const at::Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

bool overlaps(const at::Tensor& a, const at::Tensor& b) {
  auto pa = static_cast<const char*>(a.data_ptr()), pb = static_cast<const char*>(b.data_ptr());
  return a.nbytes() && b.nbytes() && pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

// ---------------------------------------------------------------- types and ops

MPI_Datatype reduceType(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return MPI_FLOAT;
    case at::kDouble: return MPI_DOUBLE;
    case at::kHalf: return MPIX_C_FLOAT16;
    case at::kBFloat16: return MPIX_BFLOAT16;
    case at::kChar: return MPI_INT8_T;
    case at::kShort: return MPI_INT16_T;
    case at::kInt: return MPI_INT32_T;
    case at::kLong: return MPI_INT64_T;
    case at::kByte: return MPI_UINT8_T;
    case at::kBool: return MPI_C_BOOL;
    case at::kComplexFloat: return MPI_C_FLOAT_COMPLEX;
    case at::kComplexDouble: return MPI_C_DOUBLE_COMPLEX;
    default: TORCH_CHECK(false, "loom: reductions on dtype ", t, " are not supported");
  }
}

const char* opName(ReduceOp::RedOpType op) {
  switch (op) {
    case ReduceOp::SUM: return "SUM";
    case ReduceOp::AVG: return "AVG";
    case ReduceOp::PRODUCT: return "PRODUCT";
    case ReduceOp::MIN: return "MIN";
    case ReduceOp::MAX: return "MAX";
    case ReduceOp::BAND: return "BAND";
    case ReduceOp::BOR: return "BOR";
    case ReduceOp::BXOR: return "BXOR";
    case ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

// AVG is SUM then a divide, PREMUL_SUM a multiply then SUM. On bool, SUM and
// MAX are a logical or, PRODUCT and MIN a logical and (torch's semantics).
MPI_Op mpiOp(const ReduceOp& rop, at::ScalarType t) {
  const auto op = rop.op_;
  const bool isBool = t == at::kBool;
  const bool isFloat = at::isFloatingType(t) || at::isComplexType(t);
  const bool isComplex = at::isComplexType(t);
  auto reject = [&] {
    TORCH_CHECK(false, "loom: ReduceOp.", opName(op), " is not supported on dtype ", t);
    return MPI_OP_NULL;
  };
  switch (op) {
    case ReduceOp::SUM: return isBool ? MPI_LOR : MPI_SUM;
    case ReduceOp::AVG:
    case ReduceOp::PREMUL_SUM: return isFloat ? MPI_SUM : reject();
    case ReduceOp::PRODUCT: return isBool ? MPI_LAND : MPI_PROD;
    case ReduceOp::MIN: return isComplex ? reject() : isBool ? MPI_LAND : MPI_MIN;
    case ReduceOp::MAX: return isComplex ? reject() : isBool ? MPI_LOR : MPI_MAX;
    case ReduceOp::BAND: return isFloat ? reject() : isBool ? MPI_LAND : MPI_BAND;
    case ReduceOp::BOR: return isFloat ? reject() : isBool ? MPI_LOR : MPI_BOR;
    case ReduceOp::BXOR: return isFloat ? reject() : isBool ? MPI_LXOR : MPI_BXOR;
    default: return reject();
  }
}

// PREMUL_SUM: a scaled copy of `in` (never the user's input, which must stay
// as it was); other ops: `in` itself.
at::Tensor preMul(const at::Tensor& in, const ReduceOp& rop) {
  if (rop.op_ != ReduceOp::PREMUL_SUM) return in;
  auto* s = dynamic_cast<c10d::PreMulSumSupplement*>(rop.supplement_.get());
  TORCH_CHECK(s, "loom: PREMUL_SUM without its factor");
  if (s->tensor_factor.defined()) return in.mul(s->tensor_factor.to(in.device()));
  return in.mul(s->double_factor);
}

// ---------------------------------------------------------------- the backend

class LoomBackend : public c10d::Backend {
 public:
  LoomBackend(MPI_Comm comm, int rank, int size) : Backend(rank, size), comm_(comm) {}
  // Rank and size from the communicator itself.
  LoomBackend(MPI_Comm comm, int, int, bool) : Backend(commRank(comm), commSize(comm)), comm_(comm) {}

  static int commRank(MPI_Comm c) { int r = -1; MPI_Comm_rank(c, &r); return r; }
  static int commSize(MPI_Comm c) { int s = 0; MPI_Comm_size(c, &s); return s; }

  ~LoomBackend() override {
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (!finalized && comm_ != MPI_COMM_NULL) {
      std::lock_guard<std::mutex> lock(Engine::get().mpi());
      MPI_Comm_free(&comm_);
    }
  }

  const std::string getBackendName() const override { return "loom"; }
  MPI_Comm comm() const { return comm_; }

  // dist.split_group: `ranks` (this group's ranks, in the new group's order)
  // become a communicator made by the members alone (MPI_Comm_create_group),
  // so ranks outside every new group need not take part.
  bool supportsSplitting() const override { return true; }

  c10::intrusive_ptr<Options> getBackendOptions() override { return options_; }

  c10::intrusive_ptr<c10d::Backend> split(const c10::intrusive_ptr<c10d::Store>&, const std::vector<int>& ranks,
                                          const c10::intrusive_ptr<Options>&) override {
    if (std::find(ranks.begin(), ranks.end(), rank_) == ranks.end()) return {};
    return c10::make_intrusive<LoomBackend>(subComm(comm_, ranks), 0, 0, true);
  }

  // A communicator of `ranks` (ranks of `parent`), called by those ranks only.
  static MPI_Comm subComm(MPI_Comm parent, const std::vector<int>& ranks) {
    MPI_Comm comm = MPI_COMM_NULL;
    std::lock_guard<std::mutex> lock(Engine::get().mpi());
    MPI_Group all, sub;
    checkMpi(MPI_Comm_group(parent, &all), "MPI_Comm_group");
    int rc = MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &sub);
    MPI_Group_free(&all);
    checkMpi(rc, "MPI_Group_incl");
    // A tag per member list, so creations of different groups never share one.
    uint32_t tag = 2166136261u;
    for (int r : ranks) tag = (tag ^ static_cast<uint32_t>(r)) * 16777619u;
    rc = MPI_Comm_create_group(parent, sub, static_cast<int>(tag & 0x3fffffff), &comm);
    MPI_Group_free(&sub);
    checkMpi(rc, "MPI_Comm_create_group");
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    return comm;
  }

  // --- reductions

  WorkPtr allreduce(std::vector<at::Tensor>& ts, const c10d::AllreduceOptions& opts) override {
    const at::Tensor& t = single(ts, "allreduce");
    MPI_Datatype type = reduceType(t.scalar_type());
    MPI_Op op = mpiOp(opts.reduceOp, t.scalar_type());
    auto w = newWork(OpType::ALLREDUCE, ts, "MPI_Iallreduce");
    at::Tensor buf = contig(t);
    if (opts.reduceOp.op_ == ReduceOp::PREMUL_SUM) buf = preMul(buf, opts.reduceOp);
    int n = toInt(buf.numel(), "element count");
    setEpilogue(*w, t, buf, opts.reduceOp);
    MPI_Request req;
    start(w, [&] { return MPI_Iallreduce(MPI_IN_PLACE, buf.data_ptr(), n, type, op, comm_, &req); },
          req);
    return w;
  }

  WorkPtr allreduce_coalesced(std::vector<at::Tensor>& ts,
                              const c10d::AllreduceCoalescedOptions& opts) override {
    auto w = newWork(OpType::ALLREDUCE_COALESCED, ts, "MPI_Iallreduce");
    std::vector<std::function<int(MPI_Request*)>> calls;
    std::vector<std::function<void()>> epis;
    for (auto& t : ts) {
      checkTensor(t, "allreduce_coalesced");
      MPI_Datatype type = reduceType(t.scalar_type());
      MPI_Op op = mpiOp(opts.reduceOp, t.scalar_type());
      at::Tensor buf = preMul(contig(t), opts.reduceOp);
      int n = toInt(buf.numel(), "element count");
      w->keep.push_back(buf);
      epis.push_back(makeEpilogue(t, buf, opts.reduceOp));
      void* p = buf.data_ptr();
      MPI_Comm c = comm_;
      calls.push_back([=](MPI_Request* r) {
        return MPI_Iallreduce(MPI_IN_PLACE, p, n, type, op, c, r);
      });
    }
    w->epilogue = [epis] { for (auto& e : epis) if (e) e(); };
    startMany(w, calls);
    return w;
  }

  WorkPtr reduce(std::vector<at::Tensor>& ts, const c10d::ReduceOptions& opts) override {
    const at::Tensor& t = single(ts, "reduce");
    int root = checkRoot(opts.rootRank);
    MPI_Datatype type = reduceType(t.scalar_type());
    MPI_Op op = mpiOp(opts.reduceOp, t.scalar_type());
    auto w = newWork(OpType::REDUCE, ts, "MPI_Ireduce");
    at::Tensor buf = preMul(contig(t), opts.reduceOp);
    int n = toInt(buf.numel(), "element count");
    MPI_Request req;
    if (rank_ == root) {
      setEpilogue(*w, t, buf, opts.reduceOp);
      start(w, [&] { return MPI_Ireduce(MPI_IN_PLACE, buf.data_ptr(), n, type, op, root, comm_, &req); }, req);
    } else {
      w->keep.push_back(buf);
      start(w, [&] { return MPI_Ireduce(buf.data_ptr(), nullptr, n, type, op, root, comm_, &req); }, req);
    }
    return w;
  }

  WorkPtr reduce_scatter(std::vector<at::Tensor>& outs, std::vector<std::vector<at::Tensor>>& ins,
                         const c10d::ReduceScatterOptions& opts) override {
    const at::Tensor& out = single(outs, "reduce_scatter");
    TORCH_CHECK(ins.size() == 1 && static_cast<int>(ins[0].size()) == size_,
                "loom: reduce_scatter needs one input list of ", size_, " tensors");
    std::vector<int> counts(size_);
    std::vector<at::Tensor> flat;
    for (int i = 0; i < size_; ++i) {
      checkTensor(ins[0][i], "reduce_scatter");
      TORCH_CHECK(ins[0][i].scalar_type() == out.scalar_type(), "loom: reduce_scatter dtype mismatch");
      counts[i] = toInt(ins[0][i].numel(), "element count");
      flat.push_back(ins[0][i].reshape({-1}));
    }
    TORCH_CHECK(counts[rank_] == out.numel(), "loom: reduce_scatter output has ", out.numel(),
                " elements, input ", rank_, " has ", counts[rank_]);
    MPI_Datatype type = reduceType(out.scalar_type());
    MPI_Op op = mpiOp(opts.reduceOp, out.scalar_type());
    at::Tensor send = preMul(at::cat(flat), opts.reduceOp);
    auto w = newWork(OpType::REDUCE_SCATTER, outs, "MPI_Ireduce_scatter");
    at::Tensor buf = contig(out);
    setEpilogue(*w, out, buf, opts.reduceOp);
    w->keep.push_back(send);
    MPI_Request req;
    start(w, [&] {
      return MPI_Ireduce_scatter(send.data_ptr(), buf.data_ptr(), counts.data(), type, op, comm_, &req);
    }, req);
    return w;
  }

  WorkPtr _reduce_scatter_base(at::Tensor& out, at::Tensor& in,
                               const c10d::ReduceScatterOptions& opts) override {
    auto w = newWork(OpType::_REDUCE_SCATTER_BASE, {out}, "MPI_Ireduce_scatter_block");
    auto call = reduceScatterBlock(*w, out, in, opts.reduceOp);
    MPI_Request req;
    start(w, [&] { return call(&req); }, req);
    return w;
  }

  WorkPtr reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                                          const c10d::ReduceScatterOptions& opts) override {
    TORCH_CHECK(outs.size() == ins.size(), "loom: reduce_scatter_tensor_coalesced needs as many outputs as inputs");
    auto w = newWork(OpType::COALESCED, outs, "MPI_Ireduce_scatter_block");
    std::vector<std::function<int(MPI_Request*)>> calls;
    std::vector<std::function<void()>> epis;
    for (size_t i = 0; i < outs.size(); ++i) {
      calls.push_back(reduceScatterBlock(*w, outs[i], ins[i], opts.reduceOp));
      epis.push_back(std::move(w->epilogue));
      w->epilogue = nullptr;
    }
    w->epilogue = [epis] { for (auto& e : epis) if (e) e(); };
    startMany(w, calls);
    return w;
  }

  // --- data movement (MPI_BYTE)

  WorkPtr broadcast(std::vector<at::Tensor>& ts, const c10d::BroadcastOptions& opts) override {
    const at::Tensor& t = single(ts, "broadcast");
    int root = checkRoot(opts.rootRank);
    auto w = newWork(OpType::BROADCAST, ts, "MPI_Ibcast");
    at::Tensor buf = contig(t);
    int n = bytesOf(buf);
    copyBackEpilogue(*w, t, buf);
    MPI_Request req;
    start(w, [&] { return MPI_Ibcast(buf.data_ptr(), n, MPI_BYTE, root, comm_, &req); }, req);
    return w;
  }

  WorkPtr allgather(std::vector<std::vector<at::Tensor>>& outs, std::vector<at::Tensor>& ins,
                    const c10d::AllgatherOptions&) override {
    const at::Tensor& in = single(ins, "allgather");
    TORCH_CHECK(outs.size() == 1 && static_cast<int>(outs[0].size()) == size_,
                "loom: allgather needs one output list of ", size_, " tensors");
    std::vector<int> counts(size_), displs(size_);
    int64_t total = 0;
    for (int i = 0; i < size_; ++i) {
      checkTensor(outs[0][i], "allgather");
      TORCH_CHECK(outs[0][i].scalar_type() == in.scalar_type(), "loom: allgather dtype mismatch");
      counts[i] = bytesOf(outs[0][i]);
      displs[i] = toInt(total, "byte displacement");
      total += counts[i];
    }
    TORCH_CHECK(counts[rank_] == static_cast<int64_t>(in.nbytes()), "loom: allgather output ", rank_,
                " has ", counts[rank_], " bytes, the input ", in.nbytes());
    auto w = newWork(OpType::ALLGATHER, outs[0], "MPI_Iallgatherv");
    at::Tensor send = contig(in);
    at::Tensor flat = at::empty({total}, in.options().dtype(at::kByte));
    w->keep = {send, flat};
    std::vector<at::Tensor> dst = outs[0];
    w->epilogue = [dst, flat, counts, displs] { unflatten(flat, dst, counts, displs); };
    MPI_Request req;
    start(w, [&] {
      return MPI_Iallgatherv(send.data_ptr(), counts[rank_], MPI_BYTE, flat.data_ptr(), counts.data(),
                             displs.data(), MPI_BYTE, comm_, &req);
    }, req);
    return w;
  }

  WorkPtr _allgather_base(at::Tensor& out, at::Tensor& in, const c10d::AllgatherOptions&) override {
    auto w = newWork(OpType::_ALLGATHER_BASE, {out}, "MPI_Iallgather");
    auto call = allgatherBase(*w, out, in);
    MPI_Request req;
    start(w, [&] { return call(&req); }, req);
    return w;
  }

  WorkPtr allgather_into_tensor_coalesced(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                                          const c10d::AllgatherOptions&) override {
    TORCH_CHECK(outs.size() == ins.size(), "loom: allgather_into_tensor_coalesced needs as many outputs as inputs");
    auto w = newWork(OpType::COALESCED, outs, "MPI_Iallgather");
    std::vector<std::function<int(MPI_Request*)>> calls;
    std::vector<std::function<void()>> epis;
    for (size_t i = 0; i < outs.size(); ++i) {
      calls.push_back(allgatherBase(*w, outs[i], ins[i]));
      epis.push_back(std::move(w->epilogue));
      w->epilogue = nullptr;
    }
    w->epilogue = [epis] { for (auto& e : epis) if (e) e(); };
    startMany(w, calls);
    return w;
  }

  WorkPtr gather(std::vector<std::vector<at::Tensor>>& outs, std::vector<at::Tensor>& ins,
                 const c10d::GatherOptions& opts) override {
    const at::Tensor& in = single(ins, "gather");
    int root = checkRoot(opts.rootRank);
    at::Tensor send = contig(in);
    int n = bytesOf(send);
    MPI_Request req;
    if (rank_ != root) {
      TORCH_CHECK(outs.empty() || outs[0].empty(), "loom: gather output list given on a non-root rank");
      auto w = newWork(OpType::GATHER, {}, "MPI_Igather");
      w->keep = {send};
      start(w, [&] { return MPI_Igather(send.data_ptr(), n, MPI_BYTE, nullptr, 0, MPI_BYTE, root, comm_, &req); }, req);
      return w;
    }
    TORCH_CHECK(outs.size() == 1 && static_cast<int>(outs[0].size()) == size_,
                "loom: gather needs one output list of ", size_, " tensors on the root");
    std::vector<int> counts(size_, n), displs(size_);
    for (int i = 0; i < size_; ++i) {
      checkTensor(outs[0][i], "gather");
      TORCH_CHECK(bytesOf(outs[0][i]) == n && outs[0][i].scalar_type() == in.scalar_type(),
                  "loom: gather outputs must match the input's dtype and size");
      displs[i] = toInt(static_cast<int64_t>(i) * n, "byte displacement");
    }
    auto w = newWork(OpType::GATHER, outs[0], "MPI_Igather");
    at::Tensor flat = at::empty({static_cast<int64_t>(n) * size_}, in.options().dtype(at::kByte));
    w->keep = {send, flat};
    std::vector<at::Tensor> dst = outs[0];
    w->epilogue = [dst, flat, counts, displs] { unflatten(flat, dst, counts, displs); };
    start(w, [&] {
      return MPI_Igather(send.data_ptr(), n, MPI_BYTE, flat.data_ptr(), n, MPI_BYTE, root, comm_, &req);
    }, req);
    return w;
  }

  WorkPtr scatter(std::vector<at::Tensor>& outs, std::vector<std::vector<at::Tensor>>& ins,
                  const c10d::ScatterOptions& opts) override {
    const at::Tensor& out = single(outs, "scatter");
    int root = checkRoot(opts.rootRank);
    int n = bytesOf(out);
    auto w = newWork(OpType::SCATTER, outs, "MPI_Iscatter");
    at::Tensor buf = contig(out);
    copyBackEpilogue(*w, out, buf);
    at::Tensor send;
    if (rank_ == root) {
      TORCH_CHECK(ins.size() == 1 && static_cast<int>(ins[0].size()) == size_,
                  "loom: scatter needs one input list of ", size_, " tensors on the root");
      std::vector<at::Tensor> flat;
      for (auto& t : ins[0]) {
        checkTensor(t, "scatter");
        TORCH_CHECK(bytesOf(t) == n && t.scalar_type() == out.scalar_type(),
                    "loom: scatter inputs must match the output's dtype and size");
        flat.push_back(t.reshape({-1}));
      }
      send = at::cat(flat);
      w->keep.push_back(send);
    } else {
      TORCH_CHECK(ins.empty() || ins[0].empty(), "loom: scatter input list given on a non-root rank");
    }
    MPI_Request req;
    start(w, [&] {
      return MPI_Iscatter(send.defined() ? send.data_ptr() : nullptr, n, MPI_BYTE, buf.data_ptr(), n,
                          MPI_BYTE, root, comm_, &req);
    }, req);
    return w;
  }

  WorkPtr alltoall_base(at::Tensor& out, at::Tensor& in, std::vector<int64_t>& outSplits,
                        std::vector<int64_t>& inSplits, const c10d::AllToAllOptions&) override {
    checkTensor(out, "all_to_all_single");
    checkTensor(in, "all_to_all_single");
    TORCH_CHECK(out.scalar_type() == in.scalar_type(), "loom: all_to_all_single dtype mismatch");
    std::vector<int> sc, sd, rc, rd;
    splitBytes(in, inSplits, sc, sd, "input");
    splitBytes(out, outSplits, rc, rd, "output");
    auto w = newWork(OpType::ALLTOALL_BASE, {out}, "MPI_Ialltoallv");
    at::Tensor send = contig(in);
    at::Tensor buf = (out.is_contiguous() && !overlaps(out, send)) ? out : at::empty_like(out, at::MemoryFormat::Contiguous);
    copyBackEpilogue(*w, out, buf);
    w->keep.push_back(send);
    MPI_Request req;
    start(w, [&] {
      return MPI_Ialltoallv(send.data_ptr(), sc.data(), sd.data(), MPI_BYTE, buf.data_ptr(), rc.data(),
                            rd.data(), MPI_BYTE, comm_, &req);
    }, req);
    return w;
  }

  WorkPtr alltoall(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                   const c10d::AllToAllOptions&) override {
    TORCH_CHECK(static_cast<int>(outs.size()) == size_ && static_cast<int>(ins.size()) == size_,
                "loom: alltoall needs ", size_, " input and output tensors");
    std::vector<int> sc(size_), sd(size_), rc(size_), rd(size_);
    std::vector<at::Tensor> flatIn;
    int64_t stot = 0, rtot = 0;
    for (int i = 0; i < size_; ++i) {
      checkTensor(ins[i], "alltoall");
      checkTensor(outs[i], "alltoall");
      sc[i] = bytesOf(ins[i]);
      sd[i] = toInt(stot, "byte displacement");
      stot += sc[i];
      rc[i] = bytesOf(outs[i]);
      rd[i] = toInt(rtot, "byte displacement");
      rtot += rc[i];
      flatIn.push_back(contig(ins[i]).reshape({-1}).view(at::kByte));
    }
    auto w = newWork(OpType::ALLTOALL, outs, "MPI_Ialltoallv");
    at::Tensor send = flatIn.empty() ? at::empty({0}, at::kByte) : at::cat(flatIn);
    at::Tensor flat = at::empty({rtot}, send.options());
    w->keep = {send, flat};
    std::vector<at::Tensor> dst = outs;
    w->epilogue = [dst, flat, rc, rd] { unflatten(flat, dst, rc, rd); };
    MPI_Request req;
    start(w, [&] {
      return MPI_Ialltoallv(send.data_ptr(), sc.data(), sd.data(), MPI_BYTE, flat.data_ptr(), rc.data(),
                            rd.data(), MPI_BYTE, comm_, &req);
    }, req);
    return w;
  }

  WorkPtr barrier(const c10d::BarrierOptions&) override {
    auto w = newWork(OpType::BARRIER, {}, "MPI_Ibarrier");
    MPI_Request req;
    start(w, [&] { return MPI_Ibarrier(comm_, &req); }, req);
    return w;
  }

  // --- point to point

  WorkPtr send(std::vector<at::Tensor>& ts, int dst, int tag) override {
    const at::Tensor& t = single(ts, "send");
    auto w = newWork(OpType::SEND, ts, "MPI_Isend");
    at::Tensor buf = contig(t);
    int n = bytesOf(buf);
    w->keep.push_back(buf);
    MPI_Request req;
    start(w, [&] { return MPI_Isend(buf.data_ptr(), n, MPI_BYTE, dst, tag, comm_, &req); }, req);
    return w;
  }

  WorkPtr recv(std::vector<at::Tensor>& ts, int src, int tag) override {
    return recvFrom(ts, src, tag, OpType::RECV);
  }

  WorkPtr recvAnysource(std::vector<at::Tensor>& ts, int tag) override {
    return recvFrom(ts, MPI_ANY_SOURCE, tag, OpType::RECVANYSOURCE);
  }

 private:
  c10::intrusive_ptr<LoomWork> newWork(OpType type, std::vector<at::Tensor> outputs, const char* what) {
    auto w = c10::make_intrusive<LoomWork>(rank_, type, std::move(outputs));
    w->what = what;
    return w;
  }

  int checkRoot(int64_t root) {
    TORCH_CHECK(root >= 0 && root < size_, "loom: root rank ", root, " is outside the group of ", size_);
    return static_cast<int>(root);
  }

  // Starts one MPI call under the MPI mutex and hands the Work to the engine.
  template <typename Call>
  void start(const c10::intrusive_ptr<LoomWork>& w, Call&& call, MPI_Request& req) {
    Engine& engine = Engine::get();
    {
      std::lock_guard<std::mutex> lock(engine.mpi());
      int rc = call();
      if (rc != MPI_SUCCESS) {
        w->epilogue = nullptr;
        TORCH_CHECK(false, mpiErrorText(rc, w->what));
      }
      w->reqs.push_back(req);
      engine.addPendingLocked(w);
    }
    engine.kick();
  }

  void startMany(const c10::intrusive_ptr<LoomWork>& w,
                 const std::vector<std::function<int(MPI_Request*)>>& calls) {
    Engine& engine = Engine::get();
    {
      std::lock_guard<std::mutex> lock(engine.mpi());
      w->reqs.resize(calls.size(), MPI_REQUEST_NULL);
      for (size_t i = 0; i < calls.size(); ++i) {
        int rc = calls[i](&w->reqs[i]);
        // Requests already started stay with the engine; the Work reports the error.
        if (rc != MPI_SUCCESS) {
          w->reqs.resize(i);
          if (i == 0) {
            w->epilogue = nullptr;
            TORCH_CHECK(false, mpiErrorText(rc, w->what));
          }
          w->epilogue = [msg = mpiErrorText(rc, w->what)] { TORCH_CHECK(false, msg); };
          break;
        }
      }
      engine.addPendingLocked(w);
    }
    engine.kick();
  }

  // After a reduction into `buf`: AVG's divide, then the copy back into the
  // user's tensor when `buf` is a staging copy.
  std::function<void()> makeEpilogue(const at::Tensor& user, const at::Tensor& buf, const ReduceOp& rop) {
    const bool avg = rop.op_ == ReduceOp::AVG;
    const bool copy = !user.is_same(buf);
    if (!avg && !copy) return nullptr;
    int size = size_;
    return [user, buf, avg, copy, size]() mutable {
      if (avg) buf.div_(size);
      if (copy) user.copy_(buf);
    };
  }

  void setEpilogue(LoomWork& w, const at::Tensor& user, const at::Tensor& buf, const ReduceOp& rop) {
    w.keep.push_back(buf);
    w.epilogue = makeEpilogue(user, buf, rop);
  }

  void copyBackEpilogue(LoomWork& w, const at::Tensor& user, const at::Tensor& buf) {
    w.keep.push_back(buf);
    if (!user.is_same(buf)) {
      at::Tensor u = user;
      w.epilogue = [u, buf]() mutable { u.copy_(buf); };
    }
  }

  static void unflatten(const at::Tensor& flat, const std::vector<at::Tensor>& dst,
                        const std::vector<int>& counts, const std::vector<int>& displs) {
    for (size_t i = 0; i < dst.size(); ++i) {
      at::Tensor d = dst[i];
      if (counts[i] == 0) continue;
      d.copy_(flat.narrow(0, displs[i], counts[i]).view(d.scalar_type()).view(d.sizes()));
    }
  }

  std::function<int(MPI_Request*)> allgatherBase(LoomWork& w, at::Tensor& out, at::Tensor& in) {
    checkTensor(out, "all_gather_into_tensor");
    checkTensor(in, "all_gather_into_tensor");
    TORCH_CHECK(out.scalar_type() == in.scalar_type(), "loom: all_gather_into_tensor dtype mismatch");
    TORCH_CHECK(out.numel() == in.numel() * size_, "loom: all_gather_into_tensor output has ",
                out.numel(), " elements, expected ", size_, " x ", in.numel());
    int n = bytesOf(in);
    at::Tensor buf = contig(out);
    copyBackEpilogue(w, out, buf);
    at::Tensor send = contig(in);
    w.keep.push_back(send);
    MPI_Comm c = comm_;
    void* r = buf.data_ptr();
    // FSDP2 gathers in place: its input is this rank's block of the output.
    const void* s = static_cast<char*>(r) + static_cast<int64_t>(n) * rank_ == send.data_ptr()
                        ? MPI_IN_PLACE : send.data_ptr();
    if (s != MPI_IN_PLACE && overlaps(send, buf)) {
      send = send.clone();
      w.keep.push_back(send);
      s = send.data_ptr();
    }
    return [=](MPI_Request* req) { return MPI_Iallgather(s, n, MPI_BYTE, r, n, MPI_BYTE, c, req); };
  }

  std::function<int(MPI_Request*)> reduceScatterBlock(LoomWork& w, at::Tensor& out, at::Tensor& in,
                                                      const ReduceOp& rop) {
    checkTensor(out, "reduce_scatter_tensor");
    checkTensor(in, "reduce_scatter_tensor");
    TORCH_CHECK(out.scalar_type() == in.scalar_type(), "loom: reduce_scatter_tensor dtype mismatch");
    TORCH_CHECK(in.numel() == out.numel() * size_, "loom: reduce_scatter_tensor input has ", in.numel(),
                " elements, expected ", size_, " x ", out.numel());
    MPI_Datatype type = reduceType(out.scalar_type());
    MPI_Op op = mpiOp(rop, out.scalar_type());
    int n = toInt(out.numel(), "element count");
    at::Tensor send = preMul(contig(in), rop);
    at::Tensor buf = (out.is_contiguous() && !overlaps(out, send)) ? out : at::empty_like(out, at::MemoryFormat::Contiguous);
    w.keep.push_back(send);
    w.keep.push_back(buf);
    w.epilogue = makeEpilogue(out, buf, rop);
    MPI_Comm c = comm_;
    const void* s = send.data_ptr();
    void* r = buf.data_ptr();
    return [=](MPI_Request* req) { return MPI_Ireduce_scatter_block(s, r, n, type, op, c, req); };
  }

  // all_to_all_single's splits (rows of dim 0) as byte counts and displacements.
  void splitBytes(const at::Tensor& t, const std::vector<int64_t>& splits, std::vector<int>& counts,
                  std::vector<int>& displs, const char* which) {
    counts.assign(size_, 0);
    displs.assign(size_, 0);
    const int64_t rows = t.dim() ? t.size(0) : 1;
    const int64_t rowBytes = rows ? static_cast<int64_t>(t.nbytes()) / rows : 0;
    int64_t off = 0;
    if (splits.empty()) {
      TORCH_CHECK(rows % size_ == 0, "loom: all_to_all_single ", which, " has ", rows,
                  " rows, not divisible by the group size ", size_);
    } else {
      TORCH_CHECK(static_cast<int>(splits.size()) == size_, "loom: all_to_all_single needs ", size_,
                  " ", which, " splits, got ", splits.size());
    }
    for (int i = 0; i < size_; ++i) {
      int64_t r = splits.empty() ? rows / size_ : splits[i];
      TORCH_CHECK(r >= 0, "loom: negative ", which, " split");
      counts[i] = toInt(r * rowBytes, "byte count");
      displs[i] = toInt(off, "byte displacement");
      off += r * rowBytes;
    }
    TORCH_CHECK(off == static_cast<int64_t>(t.nbytes()), "loom: all_to_all_single ", which,
                " splits cover ", off / std::max<int64_t>(rowBytes, 1), " rows, the tensor has ", rows);
  }

  WorkPtr recvFrom(std::vector<at::Tensor>& ts, int src, int tag, OpType type) {
    const at::Tensor& t = single(ts, "recv");
    auto w = newWork(type, ts, "MPI_Irecv");
    at::Tensor buf = contig(t);
    int n = bytesOf(buf);
    copyBackEpilogue(*w, t, buf);
    MPI_Request req;
    start(w, [&] { return MPI_Irecv(buf.data_ptr(), n, MPI_BYTE, src, tag, comm_, &req); }, req);
    return w;
  }

  MPI_Comm comm_;
  c10::intrusive_ptr<Options> options_ = c10::make_intrusive<Options>("loom");
};

// ---------------------------------------------------------------- entries (loom_backend.h)

}  // namespace

MPI_Datatype reduceTypeOf(at::ScalarType t) { return reduceType(t); }

int countOf(int64_t v, const char* what) { return toInt(v, what); }

MPI_Comm subComm(MPI_Comm parent, const std::vector<int>& ranks) {
  return LoomBackend::subComm(parent, ranks);
}

c10::intrusive_ptr<c10d::Backend> makeBackend(MPI_Comm comm, int rank, int size) {
  return c10::make_intrusive<LoomBackend>(comm, rank, size);
}

namespace {
LoomBackend& asLoom(const c10::intrusive_ptr<c10d::Backend>& b) {
  auto* lb = dynamic_cast<LoomBackend*>(b.get());
  TORCH_CHECK(lb, "loom: not a loom backend");
  return *lb;
}
}  // namespace

MPI_Comm backendComm(const c10::intrusive_ptr<c10d::Backend>& b) { return asLoom(b).comm(); }

void backendAllreduce(const c10::intrusive_ptr<c10d::Backend>& b, at::Tensor t, int iters) {
  LoomBackend& lb = asLoom(b);
  py::gil_scoped_release nogil;
  std::vector<at::Tensor> v{t};
  c10d::AllreduceOptions opts;
  for (int i = 0; i < iters; ++i) lb.allreduce(v, opts)->wait();
}

}  // namespace torch_loom
