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

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
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

// CUDA, and PrivateUse1 for the tests' mock device (tests/torch/mock_device).
bool isAccelerator(const c10::Device& d) {
  return d.type() == c10::DeviceType::CUDA || d.type() == c10::DeviceType::PrivateUse1;
}

void checkTensor(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.device().is_cpu() || isAccelerator(t.device()), "loom: ", op, " got a tensor on ",
              t.device(), ": the loom backend serves CPU and CUDA tensors");
  TORCH_CHECK(t.layout() == c10::kStrided, "loom: ", op, " needs dense (strided) tensors, got ",
              t.layout());
}

// The one device every tensor of a call is on (the CPU when there are none).
c10::Device placeOf(std::initializer_list<const std::vector<at::Tensor>*> lists, const char* op) {
  std::optional<c10::Device> dev;
  for (const auto* l : lists)
    for (const auto& t : *l) {
      if (!t.defined()) continue;
      if (!dev) dev = t.device();
      TORCH_CHECK(t.device() == *dev, "loom: ", op, " got tensors on ", *dev, " and on ", t.device(),
                  ": one call's tensors must be on one device");
    }
  return dev.value_or(c10::Device(c10::kCPU));
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
  // NCCLPreMulSumSupplement: torch 2.11's name, an alias in later ones.
  auto* s = dynamic_cast<c10d::NCCLPreMulSumSupplement*>(rop.supplement_.get());
  TORCH_CHECK(s, "loom: PREMUL_SUM without its factor");
  at::Tensor out = at::empty_like(in, at::MemoryFormat::Contiguous);
  out.copy_(in);
  if (s->tensor_factor.defined()) return out.mul_(s->tensor_factor.to(in.device()));
  return out.mul_(s->double_factor);
}

// The tensors flattened into one contiguous buffer of their dtype, by
// copies (a cat of in-place copies: works on every device).
at::Tensor catFlat(const std::vector<at::Tensor>& ts, const at::TensorOptions& opts) {
  int64_t total = 0;
  for (const auto& t : ts) total += t.numel();
  at::Tensor flat = at::empty({total}, opts);
  int64_t off = 0;
  for (const auto& t : ts) {
    if (t.numel()) flat.narrow(0, off, t.numel()).copy_(t.reshape({-1}));
    off += t.numel();
  }
  return flat;
}

// Whether CUDA graph capture records `s`. Newer torch asks the device's
// guard; torch 2.11's guard cannot, so there the CUDA runtime that torch
// loaded is asked (cudaStreamIsCapturing; no answer: not capturing).
template <class Impl>
auto capturingVia(const Impl* impl, const c10::Stream& s, int) -> decltype(impl->isStreamCapturing(s)) {
  return impl->isStreamCapturing(s);
}
template <class Impl>
bool capturingVia(const Impl* impl, const c10::Stream& s, long) {
  if (s.device_type() != c10::DeviceType::CUDA) return false;
  using Fn = int (*)(void*, int*);
  static Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "cudaStreamIsCapturing"));
  int status = 0;  // cudaStreamCaptureStatusNone
  return fn && fn(impl->getStreamNativeHandle(s), &status) == 0 && status != 0;
}
bool capturing(const c10::impl::DeviceGuardImplInterface* impl, const c10::Stream& s) {
  return capturingVia(impl, s, 0);
}

// What one MPI call of an op sees: host (MPI_I* with a request) or device
// (MPIX_*_enqueue on a stream communicator; a request only for the
// nonblocking sends and receives of a coalesced group).
struct Ctx {
  bool dev = false;
  bool coalesced = false;
  MPI_Comm comm = MPI_COMM_NULL;  // the group's, or its stream communicator
  MPI_Comm p2p = MPI_COMM_NULL;   // device: the stream communicator of gather/scatter
  MPI_Request* req = nullptr;     // host, or device sends/receives when coalesced
};
using Call = std::function<int(const Ctx&)>;

template <typename T>
std::shared_ptr<std::vector<T>> held(std::vector<T> v) {
  return std::make_shared<std::vector<T>>(std::move(v));
}

// ---------------------------------------------------------------- the backend

class LoomBackend : public c10d::Backend {
 public:
  LoomBackend(MPI_Comm comm, int rank, int size) : Backend(rank, size), comm_(comm) {}
  // Rank and size from the communicator itself.
  LoomBackend(MPI_Comm comm, int, int, bool) : Backend(commRank(comm), commSize(comm)), comm_(comm) {}

  static int commRank(MPI_Comm c) { int r = -1; MPI_Comm_rank(c, &r); return r; }
  static int commSize(MPI_Comm c) { int s = 0; MPI_Comm_size(c, &s); return s; }

  // The group's shared state for timeouts (engine.h, GroupState).
  void setGroup(const c10::intrusive_ptr<c10d::Store>& store, std::chrono::milliseconds timeout,
                const std::string& name) {
    auto g = std::make_shared<GroupState>();
    g->name = name.empty() ? "?" : name;
    g->rank = rank_;
    g->size = size_;
    g->timeoutMs = timeout.count() > 0 ? timeout.count() : 0;
    if (store) {
      try {
        g->store = store->clone();  // the progress thread's own connection
      } catch (...) {
        g->store = store;
      }
    }
    group_ = g;
    Engine::get().addGroup(g);
    options_->timeout = std::chrono::milliseconds(g->timeoutMs.load());
  }

  void setTimeout(std::chrono::milliseconds timeout) override {
    group_->timeoutMs = timeout.count() > 0 ? timeout.count() : 0;
    options_->timeout = timeout;
  }

  uint64_t getSequenceNumberForGroup() override { return group_->issued.load(); }

  // abort(): every op in flight fails now (its waiters raise); later ops
  // fail at once. Operations MPI already started stay with the engine until
  // they end; a device stream stays stopped at an op a peer never joins.
  void abort() override {
    Engine::get().abortGroup(group_, "loom: group '" + group_->name + "' was aborted (abort())");
  }

  // shutdown() (destroy_process_group): lets the ops in flight finish, for
  // at most the group's timeout (10 s without one), then aborts the rest.
  void shutdown() override {
    using Clock = std::chrono::steady_clock;
    const int64_t ms = group_->timeoutMs.load();
    const auto limit = std::chrono::milliseconds(ms > 0 ? ms : 10000);
    const auto until = Clock::now() + limit;
    Engine& engine = Engine::get();
    while (engine.hasPending(group_) && Clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (engine.hasPending(group_))
      engine.abortGroup(group_, "loom: group '" + group_->name + "' was shut down with this op in flight");
  }

  ~LoomBackend() override {
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (dev_ && group_ && group_->aborted()) return;  // its stream may never get past an op
    if (dev_) {
      // What is queued on the communication stream still uses the stream
      // communicators: let it finish first.
      try {
        c10::impl::getDeviceGuardImpl(dev_->device.type())->synchronizeStream(*dev_->stream);
      } catch (...) {
      }
    }
    std::lock_guard<std::mutex> lock(Engine::get().mpi());
    if (dev_) {
      MPI_Comm_free(&dev_->coll);
      MPI_Comm_free(&dev_->p2p);
      MPIX_Stream_free(&dev_->mpix);
    }
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  const std::string getBackendName() const override { return "loom"; }
  MPI_Comm comm() const { return comm_; }

  // dist.split_group: `ranks` (this group's ranks, in the new group's order)
  // become a communicator made by the members alone (MPI_Comm_create_group),
  // so ranks outside every new group need not take part.
  bool supportsSplitting() const override { return true; }
  bool supportsCoalescing() const override { return true; }

  c10::intrusive_ptr<Options> getBackendOptions() override { return options_; }

  c10::intrusive_ptr<c10d::Backend> split(const c10::intrusive_ptr<c10d::Store>&, const std::vector<int>& ranks,
                                          const c10::intrusive_ptr<Options>&) override {
    if (std::find(ranks.begin(), ranks.end(), rank_) == ranks.end()) return {};
    auto b = c10::make_intrusive<LoomBackend>(subComm(comm_, ranks), 0, 0, true);
    b->setGroup(group_->store, std::chrono::milliseconds(group_->timeoutMs.load()), group_->name + "/split");
    if (dev_) b->bind(dev_->device);  // collective over the new group's members
    return b;
  }

  // init_process_group(device_id=...): bind the device now, on every rank.
  void eagerConnectSingleDevice(at::Device device) override {
    if (isAccelerator(device)) bind(device);
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

  // The group's device side (collective over the group: every rank calls it
  // once, in the same order as the group's other collective calls).
  void bind(const c10::Device& device) {
    if (dev_) {
      TORCH_CHECK(sameDevice(dev_->device, device), "loom: this group works on ", dev_->device,
                  ", not ", device, ": one device per process and group");
      return;
    }
    c10::Device d = device;
    auto* impl = c10::impl::getDeviceGuardImpl(d.type());
    if (!d.has_index()) d = impl->getDevice();
    c10::DeviceGuard guard(d);
    auto side = std::make_unique<DeviceSide>(d, impl->getStreamFromGlobalPool(d, /*isHighPriority=*/true));
    side->idle = impl->getStreamFromGlobalPool(d, /*isHighPriority=*/false);
    void* handle = impl->getStreamNativeHandle(*side->stream);
    std::lock_guard<std::mutex> lock(Engine::get().mpi());
    MPI_Info info;
    checkMpi(MPI_Info_create(&info), "MPI_Info_create");
    MPI_Info_set(info, "type", "cudaStream_t");
    MPIX_Info_set_hex(info, "value", &handle, static_cast<int>(sizeof handle));
    int rc = MPIX_Stream_create(info, &side->mpix);
    MPI_Info_free(&info);
    TORCH_CHECK(rc == MPI_SUCCESS, mpiErrorText(rc, "MPIX_Stream_create"),
                MPIX_Query_cuda_support() ? "" : " (this Loom has no device support: built without "
                "CUDA, or no device visible; device tensors need a CUDA build of Loom)");
    checkMpi(MPIX_Stream_comm_create(comm_, side->mpix, &side->coll), "MPIX_Stream_comm_create");
    checkMpi(MPIX_Stream_comm_create(comm_, side->mpix, &side->p2p), "MPIX_Stream_comm_create");
    MPI_Comm_set_errhandler(side->coll, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(side->p2p, MPI_ERRORS_RETURN);
    dev_ = std::move(side);
  }

  // --- coalescing (dist._coalescing_manager, batch_isend_irecv)

  void startCoalescing() override {
    // A group left open (an exception inside _coalescing_manager's block
    // skips endCoalescing): what it queued fails, and this one starts anew.
    if (coalescing_)
      abandonCoalescing("loom: a coalesced group was left open (an error inside it?); its ops were abandoned");
    coalescing_ = true;
    coal_.reset();
    coalReqs_.clear();
  }

  WorkPtr endCoalescing() override {
    TORCH_CHECK(coalescing_, "loom: endCoalescing without startCoalescing");
    if (!coal_) {  // nothing was queued: a Work that is already complete
      coalescing_ = false;
      auto w = newWork(OpType::COALESCED, {}, "coalesced group", c10::Device(c10::kCPU));
      w->complete();
      return w;
    }
    Engine& engine = Engine::get();
    if (!coal_->device()) {
      coalescing_ = false;
      auto w = std::move(coal_);
      coal_.reset();
      {
        std::lock_guard<std::mutex> lock(engine.mpi());
        engine.addPendingLocked(w);
      }
      engine.kick();
      return w;
    }
    DeviceSide& d = *dev_;
    std::string failure;
    {
      std::lock_guard<std::mutex> lock(engine.mpi());
      if (!coalReqs_.empty()) {
        int rc = MPIX_Waitall_enqueue(static_cast<int>(coalReqs_.size()), coalReqs_.data(),
                                      MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS) failure = mpiErrorText(rc, "MPIX_Waitall_enqueue");
        else coalReqs_.clear();
      }
    }
    if (!failure.empty()) {
      abandonCoalescing(failure);
      TORCH_CHECK(false, failure);
    }
    coalescing_ = false;
    auto w = std::move(coal_);
    coal_.reset();
    // The ops' epilogues (copies back of the receives, AVG's divide) come
    // after the wait for the group's sends and receives.
    return finishDevice(w, d, "");
  }

  // --- reductions

  WorkPtr allreduce(std::vector<at::Tensor>& ts, const c10d::AllreduceOptions& opts) override {
    OpScope scope(this);
    const at::Tensor& t = single(ts, "allreduce");
    MPI_Datatype type = reduceType(t.scalar_type());
    MPI_Op op = mpiOp(opts.reduceOp, t.scalar_type());
    auto w = newWork(OpType::ALLREDUCE, ts, "MPI_Iallreduce", t.device());
    at::Tensor buf = contig(t);
    if (opts.reduceOp.op_ == ReduceOp::PREMUL_SUM) buf = preMul(buf, opts.reduceOp);
    int n = toInt(buf.numel(), "element count");
    setEpilogue(*w, t, buf, opts.reduceOp);
    void* p = buf.data_ptr();
    return launch(w, {[=](const Ctx& c) {
      return c.dev ? MPIX_Allreduce_enqueue(MPI_IN_PLACE, p, n, type, op, c.comm)
                   : MPI_Iallreduce(MPI_IN_PLACE, p, n, type, op, c.comm, c.req);
    }});
  }

  WorkPtr allreduce_coalesced(std::vector<at::Tensor>& ts,
                              const c10d::AllreduceCoalescedOptions& opts) override {
    OpScope scope(this);
    auto w = newWork(OpType::ALLREDUCE_COALESCED, ts, "MPI_Iallreduce", placeOf({&ts}, "allreduce_coalesced"));
    std::vector<Call> calls;
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
      calls.push_back([=](const Ctx& c) {
        return c.dev ? MPIX_Allreduce_enqueue(MPI_IN_PLACE, p, n, type, op, c.comm)
                     : MPI_Iallreduce(MPI_IN_PLACE, p, n, type, op, c.comm, c.req);
      });
    }
    w->epilogue = [epis] { for (auto& e : epis) if (e) e(); };
    return launch(w, calls);
  }

  WorkPtr reduce(std::vector<at::Tensor>& ts, const c10d::ReduceOptions& opts) override {
    OpScope scope(this);
    const at::Tensor& t = single(ts, "reduce");
    int root = checkRoot(opts.rootRank);
    MPI_Datatype type = reduceType(t.scalar_type());
    MPI_Op op = mpiOp(opts.reduceOp, t.scalar_type());
    auto w = newWork(OpType::REDUCE, ts, "MPI_Ireduce", t.device());
    at::Tensor buf = preMul(contig(t), opts.reduceOp);
    int n = toInt(buf.numel(), "element count");
    void* p = buf.data_ptr();
    if (rank_ == root) {
      setEpilogue(*w, t, buf, opts.reduceOp);
      return launch(w, {[=](const Ctx& c) {
        return c.dev ? MPIX_Reduce_enqueue(MPI_IN_PLACE, p, n, type, op, root, c.comm)
                     : MPI_Ireduce(MPI_IN_PLACE, p, n, type, op, root, c.comm, c.req);
      }});
    }
    w->keep.push_back(buf);
    return launch(w, {[=](const Ctx& c) {
      return c.dev ? MPIX_Reduce_enqueue(p, nullptr, n, type, op, root, c.comm)
                   : MPI_Ireduce(p, nullptr, n, type, op, root, c.comm, c.req);
    }});
  }

  WorkPtr reduce_scatter(std::vector<at::Tensor>& outs, std::vector<std::vector<at::Tensor>>& ins,
                         const c10d::ReduceScatterOptions& opts) override {
    OpScope scope(this);
    const at::Tensor& out = single(outs, "reduce_scatter");
    TORCH_CHECK(ins.size() == 1 && static_cast<int>(ins[0].size()) == size_,
                "loom: reduce_scatter needs one input list of ", size_, " tensors");
    std::vector<int> counts(size_);
    for (int i = 0; i < size_; ++i) {
      checkTensor(ins[0][i], "reduce_scatter");
      TORCH_CHECK(ins[0][i].scalar_type() == out.scalar_type(), "loom: reduce_scatter dtype mismatch");
      counts[i] = toInt(ins[0][i].numel(), "element count");
    }
    TORCH_CHECK(counts[rank_] == out.numel(), "loom: reduce_scatter output has ", out.numel(),
                " elements, input ", rank_, " has ", counts[rank_]);
    auto w = newWork(OpType::REDUCE_SCATTER, outs, "MPI_Ireduce_scatter", placeOf({&outs, &ins[0]}, "reduce_scatter"));
    MPI_Datatype type = reduceType(out.scalar_type());
    MPI_Op op = mpiOp(opts.reduceOp, out.scalar_type());
    at::Tensor send = preMul(catFlat(ins[0], out.options()), opts.reduceOp);
    at::Tensor buf = contig(out);
    setEpilogue(*w, out, buf, opts.reduceOp);
    w->keep.push_back(send);
    auto cs = held(std::move(counts));
    w->holds.push_back(cs);
    const void* s = send.data_ptr();
    void* r = buf.data_ptr();
    return launch(w, {[=](const Ctx& c) {
      return c.dev ? MPIX_Reduce_scatter_enqueue(s, r, cs->data(), type, op, c.comm)
                   : MPI_Ireduce_scatter(s, r, cs->data(), type, op, c.comm, c.req);
    }});
  }

  WorkPtr _reduce_scatter_base(at::Tensor& out, at::Tensor& in,
                               const c10d::ReduceScatterOptions& opts) override {
    OpScope scope(this);
    auto w = newWork(OpType::_REDUCE_SCATTER_BASE, {out}, "MPI_Ireduce_scatter_block", out.device());
    return launch(w, {reduceScatterBlock(*w, out, in, opts.reduceOp)});
  }

  WorkPtr reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                                          const c10d::ReduceScatterOptions& opts) override {
    OpScope scope(this);
    TORCH_CHECK(outs.size() == ins.size(), "loom: reduce_scatter_tensor_coalesced needs as many outputs as inputs");
    auto w = newWork(OpType::_REDUCE_SCATTER_BASE, outs, "MPI_Ireduce_scatter_block",
                     placeOf({&outs, &ins}, "reduce_scatter_tensor_coalesced"));
    std::vector<Call> calls;
    std::vector<std::function<void()>> epis;
    for (size_t i = 0; i < outs.size(); ++i) {
      calls.push_back(reduceScatterBlock(*w, outs[i], ins[i], opts.reduceOp));
      epis.push_back(std::move(w->epilogue));
      w->epilogue = nullptr;
    }
    w->epilogue = [epis] { for (auto& e : epis) if (e) e(); };
    return launch(w, calls);
  }

  // --- data movement (MPI_BYTE)

  WorkPtr broadcast(std::vector<at::Tensor>& ts, const c10d::BroadcastOptions& opts) override {
    OpScope scope(this);
    const at::Tensor& t = single(ts, "broadcast");
    int root = checkRoot(opts.rootRank);
    auto w = newWork(OpType::BROADCAST, ts, "MPI_Ibcast", t.device());
    at::Tensor buf = contig(t);
    int n = bytesOf(buf);
    copyBackEpilogue(*w, t, buf);
    void* p = buf.data_ptr();
    return launch(w, {[=](const Ctx& c) {
      return c.dev ? MPIX_Bcast_enqueue(p, n, MPI_BYTE, root, c.comm)
                   : MPI_Ibcast(p, n, MPI_BYTE, root, c.comm, c.req);
    }});
  }

  WorkPtr allgather(std::vector<std::vector<at::Tensor>>& outs, std::vector<at::Tensor>& ins,
                    const c10d::AllgatherOptions&) override {
    OpScope scope(this);
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
    auto w = newWork(OpType::ALLGATHER, outs[0], "MPI_Iallgatherv", placeOf({&ins, &outs[0]}, "allgather"));
    at::Tensor send = contig(in);
    at::Tensor flat = at::empty({total}, in.options().dtype(at::kByte));
    w->keep = {send, flat};
    std::vector<at::Tensor> dst = outs[0];
    w->epilogue = [dst, flat, counts, displs] { unflatten(flat, dst, counts, displs); };
    auto cs = held(counts), ds = held(displs);
    w->holds = {cs, ds};
    const void* s = send.data_ptr();
    void* r = flat.data_ptr();
    int mine = counts[rank_];
    return launch(w, {[=](const Ctx& c) {
      return c.dev ? MPIX_Allgatherv_enqueue(s, mine, MPI_BYTE, r, cs->data(), ds->data(), MPI_BYTE, c.comm)
                   : MPI_Iallgatherv(s, mine, MPI_BYTE, r, cs->data(), ds->data(), MPI_BYTE, c.comm, c.req);
    }});
  }

  WorkPtr _allgather_base(at::Tensor& out, at::Tensor& in, const c10d::AllgatherOptions&) override {
    OpScope scope(this);
    auto w = newWork(OpType::_ALLGATHER_BASE, {out}, "MPI_Iallgather", out.device());
    return launch(w, {allgatherBase(*w, out, in)});
  }

  WorkPtr allgather_into_tensor_coalesced(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                                          const c10d::AllgatherOptions&) override {
    OpScope scope(this);
    TORCH_CHECK(outs.size() == ins.size(), "loom: allgather_into_tensor_coalesced needs as many outputs as inputs");
    auto w = newWork(OpType::_ALLGATHER_BASE, outs, "MPI_Iallgather",
                     placeOf({&outs, &ins}, "allgather_into_tensor_coalesced"));
    std::vector<Call> calls;
    std::vector<std::function<void()>> epis;
    for (size_t i = 0; i < outs.size(); ++i) {
      calls.push_back(allgatherBase(*w, outs[i], ins[i]));
      epis.push_back(std::move(w->epilogue));
      w->epilogue = nullptr;
    }
    w->epilogue = [epis] { for (auto& e : epis) if (e) e(); };
    return launch(w, calls);
  }

  // gather and scatter: one MPI call on host tensors; on device tensors the
  // root's messages (Isend/Irecv_enqueue, then one Waitall_enqueue) on the
  // group's second stream communicator, the root's own block a device copy.
  WorkPtr gather(std::vector<std::vector<at::Tensor>>& outs, std::vector<at::Tensor>& ins,
                 const c10d::GatherOptions& opts) override {
    OpScope scope(this);
    const at::Tensor& in = single(ins, "gather");
    int root = checkRoot(opts.rootRank);
    at::Tensor send = contig(in);
    int n = bytesOf(send);
    const void* s = send.data_ptr();
    if (rank_ != root) {
      TORCH_CHECK(outs.empty() || outs[0].empty(), "loom: gather output list given on a non-root rank");
      auto w = newWork(OpType::GATHER, {}, "MPI_Igather", in.device());
      w->keep = {send};
      return launch(w, {[=](const Ctx& c) {
        return c.dev ? MPIX_Send_enqueue(s, n, MPI_BYTE, root, 0, c.p2p)
                     : MPI_Igather(s, n, MPI_BYTE, nullptr, 0, MPI_BYTE, root, c.comm, c.req);
      }});
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
    auto w = newWork(OpType::GATHER, outs[0], "MPI_Igather", placeOf({&ins, &outs[0]}, "gather"));
    at::Tensor flat = at::empty({static_cast<int64_t>(n) * size_}, in.options().dtype(at::kByte));
    w->keep = {send, flat};
    std::vector<at::Tensor> dst = outs[0];
    w->epilogue = [dst, flat, counts, displs] { unflatten(flat, dst, counts, displs); };
    char* r = static_cast<char*>(flat.data_ptr());
    if (!isAccelerator(in.device())) {
      return launch(w, {[=](const Ctx& c) {
        return MPI_Igather(s, n, MPI_BYTE, r, n, MPI_BYTE, root, c.comm, c.req);
      }});
    }
    if (n) flat.narrow(0, static_cast<int64_t>(root) * n, n).copy_(send.reshape({-1}).view(at::kByte));
    return launch(w, {rootMessages(*w, false, r, n)});
  }

  WorkPtr scatter(std::vector<at::Tensor>& outs, std::vector<std::vector<at::Tensor>>& ins,
                  const c10d::ScatterOptions& opts) override {
    OpScope scope(this);
    const at::Tensor& out = single(outs, "scatter");
    int root = checkRoot(opts.rootRank);
    int n = bytesOf(out);
    auto w = newWork(OpType::SCATTER, outs, "MPI_Iscatter",
                     placeOf({&outs, ins.empty() ? &outs : &ins[0]}, "scatter"));
    at::Tensor buf = contig(out);
    copyBackEpilogue(*w, out, buf);
    at::Tensor send;
    if (rank_ == root) {
      TORCH_CHECK(ins.size() == 1 && static_cast<int>(ins[0].size()) == size_,
                  "loom: scatter needs one input list of ", size_, " tensors on the root");
      for (auto& t : ins[0]) {
        checkTensor(t, "scatter");
        TORCH_CHECK(bytesOf(t) == n && t.scalar_type() == out.scalar_type(),
                    "loom: scatter inputs must match the output's dtype and size");
      }
      send = catFlat(ins[0], out.options());
      w->keep.push_back(send);
    } else {
      TORCH_CHECK(ins.empty() || ins[0].empty(), "loom: scatter input list given on a non-root rank");
    }
    const char* s = send.defined() ? static_cast<const char*>(send.data_ptr()) : nullptr;
    void* r = buf.data_ptr();
    if (!isAccelerator(out.device())) {
      return launch(w, {[=](const Ctx& c) {
        return MPI_Iscatter(s, n, MPI_BYTE, r, n, MPI_BYTE, root, c.comm, c.req);
      }});
    }
    if (rank_ != root) {
      return launch(w, {[=](const Ctx& c) {
        return MPIX_Recv_enqueue(r, n, MPI_BYTE, root, 0, c.p2p, MPI_STATUS_IGNORE);
      }});
    }
    if (n) buf.reshape({-1}).view(at::kByte).copy_(send.view(at::kByte).narrow(0, static_cast<int64_t>(root) * n, n));
    return launch(w, {rootMessages(*w, true, const_cast<char*>(s), n)});
  }

  WorkPtr alltoall_base(at::Tensor& out, at::Tensor& in, std::vector<int64_t>& outSplits,
                        std::vector<int64_t>& inSplits, const c10d::AllToAllOptions&) override {
    OpScope scope(this);
    checkTensor(out, "all_to_all_single");
    checkTensor(in, "all_to_all_single");
    TORCH_CHECK(out.scalar_type() == in.scalar_type(), "loom: all_to_all_single dtype mismatch");
    std::vector<int> sc, sd, rc, rd;
    splitBytes(in, inSplits, sc, sd, "input");
    splitBytes(out, outSplits, rc, rd, "output");
    std::vector<at::Tensor> both{out, in};
    auto w = newWork(OpType::ALLTOALL_BASE, {out}, "MPI_Ialltoallv", placeOf({&both}, "all_to_all_single"));
    at::Tensor send = contig(in);
    at::Tensor buf = (out.is_contiguous() && !overlaps(out, send)) ? out : at::empty_like(out, at::MemoryFormat::Contiguous);
    copyBackEpilogue(*w, out, buf);
    w->keep.push_back(send);
    return launch(w, {alltoallvBytes(*w, send.data_ptr(), std::move(sc), std::move(sd), buf.data_ptr(),
                                      std::move(rc), std::move(rd))});
  }

  WorkPtr alltoall(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                   const c10d::AllToAllOptions&) override {
    OpScope scope(this);
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
    const c10::Device dev = placeOf({&outs, &ins}, "alltoall");
    auto w = newWork(OpType::ALLTOALL, outs, "MPI_Ialltoallv", dev);
    at::Tensor send = catFlat(flatIn, at::TensorOptions().dtype(at::kByte).device(dev));
    at::Tensor flat = at::empty({rtot}, send.options());
    w->keep = {send, flat};
    std::vector<at::Tensor> dst = outs;
    w->epilogue = [dst, flat, rc, rd] { unflatten(flat, dst, rc, rd); };
    return launch(w, {alltoallvBytes(*w, send.data_ptr(), std::move(sc), std::move(sd), flat.data_ptr(),
                                      std::move(rc), std::move(rd))});
  }

  // The host waits in a barrier, on any group (NCCL's barrier also blocks
  // the host): MPI_Ibarrier on the group's communicator.
  WorkPtr barrier(const c10d::BarrierOptions&) override {
    OpScope scope(this);
    auto w = newWork(OpType::BARRIER, {}, "MPI_Ibarrier", c10::Device(c10::kCPU));
    return launch(w, {[](const Ctx& c) { return MPI_Ibarrier(c.comm, c.req); }});
  }

  // --- point to point

  WorkPtr send(std::vector<at::Tensor>& ts, int dst, int tag) override {
    OpScope scope(this);
    const at::Tensor& t = single(ts, "send");
    auto w = newWork(OpType::SEND, ts, "MPI_Isend", t.device());
    at::Tensor buf = contig(t);
    int n = bytesOf(buf);
    w->keep.push_back(buf);
    const void* p = buf.data_ptr();
    return launch(w, {[=](const Ctx& c) {
      if (!c.dev) return MPI_Isend(p, n, MPI_BYTE, dst, tag, c.comm, c.req);
      return c.coalesced ? MPIX_Isend_enqueue(p, n, MPI_BYTE, dst, tag, c.comm, c.req)
                         : MPIX_Send_enqueue(p, n, MPI_BYTE, dst, tag, c.comm);
    }});
  }

  WorkPtr recv(std::vector<at::Tensor>& ts, int src, int tag) override {
    OpScope scope(this);
    return recvFrom(ts, src, tag, OpType::RECV);
  }

  WorkPtr recvAnysource(std::vector<at::Tensor>& ts, int tag) override {
    OpScope scope(this);
    return recvFrom(ts, MPI_ANY_SOURCE, tag, OpType::RECVANYSOURCE);
  }

 private:
  // The group's device side (see the file comment).
  struct DeviceSide {
    DeviceSide(c10::Device d, c10::Stream s) : device(d), stream(s) {}
    c10::Device device;
    std::optional<c10::Stream> stream;  // the communication stream
    std::optional<c10::Stream> idle;    // nothing queued: futures' events (engine.h)
    MPIX_Stream mpix = MPIX_STREAM_NULL;
    MPI_Comm coll = MPI_COMM_NULL;  // collectives, the user's send/recv
    MPI_Comm p2p = MPI_COMM_NULL;   // gather and scatter's messages
  };

  static bool sameDevice(const c10::Device& a, const c10::Device& b) {
    return a.type() == b.type() && (!a.has_index() || !b.has_index() || a.index() == b.index());
  }

  c10::intrusive_ptr<LoomWork> newWork(OpType type, std::vector<at::Tensor> outputs, const char* what,
                                       const c10::Device& dev) {
    if (group_ && group_->aborted())
      TORCH_CHECK(false, "loom: ", what, " on an aborted group: ", group_->abortReason());
    std::optional<c10::Device> d;
    if (isAccelerator(dev)) d = dev;
    auto w = c10::make_intrusive<LoomWork>(rank_, type, std::move(outputs), d);
    w->what = what;
    if (group_) {
      w->group = group_;
      w->collective = !(type == OpType::SEND || type == OpType::RECV || type == OpType::RECVANYSOURCE ||
                        type == OpType::COALESCED);
      const int64_t ms = group_->timeoutMs.load();
      if (ms > 0) w->deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    }
    return w;
  }

  int checkRoot(int64_t root) {
    TORCH_CHECK(root >= 0 && root < size_, "loom: root rank ", root, " is outside the group of ", size_);
    return static_cast<int>(root);
  }

  // Starts an op's MPI calls and hands its Work to the engine (or to the
  // open coalesced group). Host: the MPI_I* calls under the MPI mutex.
  // Device: see deviceLaunch.
  WorkPtr launch(const c10::intrusive_ptr<LoomWork>& w, const std::vector<Call>& calls) {
    if (coalescing_) {
      if (!coal_) {
        coal_ = newWork(OpType::COALESCED, {}, "coalesced group",
                        w->device() ? *w->device() : c10::Device(c10::kCPU));
      }
      TORCH_CHECK(w->device().has_value() == coal_->device().has_value(),
                  "loom: a coalesced group mixes CPU and device tensors");
    }
    return w->device() ? deviceLaunch(w, calls) : hostLaunch(w, calls);
  }

  // Opens every op: an exception thrown while a coalesced group is open
  // (a check of the op, an MPI error) abandons the group, whose ops then
  // fail, so that later ops are not swallowed by a group nobody ends
  // (torch skips endCoalescing when its block raises).
  struct OpScope {
    explicit OpScope(LoomBackend* b) : b(b), ex(std::uncaught_exceptions()) {}
    ~OpScope() {
      if (std::uncaught_exceptions() > ex && b->coalescing_) {
        try {
          b->abandonCoalescing("loom: an op inside this coalesced group failed; the group was abandoned");
        } catch (...) {
        }
      }
    }
    LoomBackend* b;
    int ex;
  };

  // The collective's number in the group, taken once its checks passed.
  void count(LoomWork& w) {
    if (w.collective && group_) w.seq = ++group_->issued;
  }

  // Host tensors: the MPI_I* calls under the MPI mutex, the Work to the
  // engine (or its requests into the open coalesced group).
  WorkPtr hostLaunch(const c10::intrusive_ptr<LoomWork>& w, const std::vector<Call>& calls) {
    Engine& engine = Engine::get();
    LoomWork* into = coalescing_ ? coal_.get() : w.get();
    count(*w);
    {
      std::lock_guard<std::mutex> lock(engine.mpi());
      const size_t first = into->reqs.size();
      into->reqs.resize(first + calls.size(), MPI_REQUEST_NULL);
      for (size_t i = 0; i < calls.size(); ++i) {
        Ctx c;
        c.comm = comm_;
        c.req = &into->reqs[first + i];
        int rc = calls[i](c);
        // Requests already started stay with the engine; the Work reports the error.
        if (rc != MPI_SUCCESS) {
          into->reqs.resize(first + i);
          if (i == 0) {
            w->epilogue = nullptr;
            if (w->seq && group_) --group_->issued;  // nothing started
            TORCH_CHECK(false, mpiErrorText(rc, w->what));
          }
          w->epilogue = [msg = mpiErrorText(rc, w->what)] { TORCH_CHECK(false, msg); };
          break;
        }
      }
      if (!coalescing_) engine.addPendingLocked(w);
    }
    if (coalescing_) {
      absorb(*coal_, *w);
      return coal_;
    }
    engine.kick();
    return w;
  }

  // Closes an open coalesced group after an error: what it started fails
  // and stays with the engine until it is done.
  void abandonCoalescing(const std::string& why) {
    coalescing_ = false;
    auto g = std::move(coal_);
    coal_.reset();
    std::vector<MPI_Request> reqs;
    reqs.swap(coalReqs_);
    if (!g) return;
    Engine& engine = Engine::get();
    if (g->device() && dev_) {
      {
        std::lock_guard<std::mutex> lock(engine.mpi());
        if (!reqs.empty())
          (void)MPIX_Waitall_enqueue(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
      }
      try {
        finishOnStream(g, *dev_);
      } catch (...) {
      }
    }
    g->fail(why);
    std::lock_guard<std::mutex> lock(engine.mpi());
    engine.addZombieLocked(g);
  }

  // Moves an op's buffers and epilogue into the open coalesced group.
  static void absorb(LoomWork& group, LoomWork& w) {
    if (w.seq) group.seq = w.seq;  // a timeout names the group's last collective
    group.keep.insert(group.keep.end(), w.keep.begin(), w.keep.end());
    group.holds.insert(group.holds.end(), w.holds.begin(), w.holds.end());
    w.keep.clear();
    w.holds.clear();
    if (w.epilogue) {
      auto before = std::move(group.epilogue);
      auto mine = std::move(w.epilogue);
      group.epilogue = [before, mine] {
        if (before) before();
        mine();
      };
      w.epilogue = nullptr;
    }
  }

  // The group's device side, bound on first use (see the file comment).
  DeviceSide& deviceFor(const c10::Device& d) {
    if (!dev_) bind(d);
    TORCH_CHECK(sameDevice(dev_->device, d), "loom: this group works on ", dev_->device, "; got a tensor on ",
                d, ": one device per process and group");
    return *dev_;
  }

  // Device ops: the prologue already ran on the current stream; order the
  // communication stream after it, queue the calls and the epilogue there,
  // then the end event. Inside a coalesced group the epilogue and the end
  // event wait for endCoalescing (after the group's MPIX_Waitall_enqueue,
  // which the receives' copies back must follow). An error after something
  // was queued fails the Work, which keeps its tensors until the stream is
  // past what was queued.
  WorkPtr deviceLaunch(const c10::intrusive_ptr<LoomWork>& w, const std::vector<Call>& calls) {
    const c10::Device dev = *w->device();
    DeviceSide& d = deviceFor(dev);
    auto* impl = c10::impl::getDeviceGuardImpl(dev.type());
    c10::DeviceGuard deviceGuard(d.device);
    const c10::Stream current = impl->getStream(d.device);
    TORCH_CHECK(!capturing(impl, current), "loom: ", w->what,
                " was called while CUDA graph capture records the current stream: Loom's stream-ordered "
                "operations cannot be captured yet; run the collective outside the captured region");
    c10::Event ready(dev.type());
    ready.record(current);
    ready.block(*d.stream);
    Engine& engine = Engine::get();
    std::string failure;
    count(*w);
    {
      std::lock_guard<std::mutex> lock(engine.mpi());
      for (const Call& call : calls) {
        Ctx c;
        c.dev = true;
        c.coalesced = coalescing_;
        c.comm = d.coll;
        c.p2p = d.p2p;
        MPI_Request req = MPI_REQUEST_NULL;
        c.req = &req;
        int rc = call(c);
        if (rc != MPI_SUCCESS) {
          failure = mpiErrorText(rc, w->what);
          break;
        }
        if (req != MPI_REQUEST_NULL) coalReqs_.push_back(req);
      }
    }
    if (coalescing_) {
      absorb(*coal_, *w);  // its epilogue runs at endCoalescing
      TORCH_CHECK(failure.empty(), failure);  // launch() abandons the group
      return coal_;
    }
    return finishDevice(w, d, failure);
  }

  // The end of queueing a device Work: unless something failed already,
  // its epilogue on the communication stream (its tensors are in keep or
  // the Work's outputs); then the end event, and the Work to the engine, or,
  // failed, kept with its tensors until the stream is past what was queued,
  // and the error raised.
  WorkPtr finishDevice(const c10::intrusive_ptr<LoomWork>& w, DeviceSide& d, std::string failure) {
    if (failure.empty()) {
      try {
        c10::DeviceGuard deviceGuard(d.device);
        c10::StreamGuard onComm(*d.stream);
        if (w->epilogue) w->epilogue();
      } catch (const std::exception& e) {
        failure = std::string("loom: ") + w->what + ": its epilogue failed: " + e.what();
      }
    }
    w->epilogue = nullptr;
    finishOnStream(w, d);
    Engine& engine = Engine::get();
    if (!failure.empty()) {
      w->fail(failure);
      {
        std::lock_guard<std::mutex> lock(engine.mpi());
        engine.addZombieLocked(w);
      }
      TORCH_CHECK(false, failure);
    }
    {
      std::lock_guard<std::mutex> lock(engine.mpi());
      engine.addPendingLocked(w);
    }
    engine.kick();
    return w;
  }


  // The end event of a device Work, after everything queued for it.
  static void finishOnStream(const c10::intrusive_ptr<LoomWork>& w, DeviceSide& d) {
    w->stream = d.stream;
    w->idleStream = d.idle;
    w->end = std::make_unique<c10::Event>(d.device.type());
    w->end->record(*d.stream);
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

  // The root's side of gather (receives) or scatter (sends) on device
  // tensors: one message of `n` bytes per other rank, at base + i * n, then
  // one wait for all of them, queued on the gather/scatter stream
  // communicator.
  Call rootMessages(LoomWork& w, bool send, char* base, int n) {
    auto reqs = std::make_shared<std::vector<MPI_Request>>(size_, MPI_REQUEST_NULL);
    w.holds.push_back(reqs);
    const int me = rank_, size = size_;
    return [=](const Ctx& c) {
      for (int i = 0; i < size; ++i) {
        if (i == me) continue;
        char* at = base + static_cast<int64_t>(i) * n;
        int rc = send ? MPIX_Isend_enqueue(at, n, MPI_BYTE, i, 0, c.p2p, &(*reqs)[i])
                      : MPIX_Irecv_enqueue(at, n, MPI_BYTE, i, 0, c.p2p, &(*reqs)[i]);
        if (rc != MPI_SUCCESS) return rc;
      }
      return MPIX_Waitall_enqueue(size, reqs->data(), MPI_STATUSES_IGNORE);
    };
  }

  // MPI_Ialltoallv / MPIX_Alltoallv_enqueue of bytes; the count and
  // displacement arrays stay with the Work until it is done.
  static Call alltoallvBytes(LoomWork& w, const void* s, std::vector<int> sc, std::vector<int> sd, void* r,
                             std::vector<int> rc, std::vector<int> rd) {
    auto psc = held(std::move(sc)), psd = held(std::move(sd)), prc = held(std::move(rc)), prd = held(std::move(rd));
    w.holds.insert(w.holds.end(), {psc, psd, prc, prd});
    return [=](const Ctx& c) {
      return c.dev ? MPIX_Alltoallv_enqueue(s, psc->data(), psd->data(), MPI_BYTE, r, prc->data(), prd->data(),
                                            MPI_BYTE, c.comm)
                   : MPI_Ialltoallv(s, psc->data(), psd->data(), MPI_BYTE, r, prc->data(), prd->data(),
                                    MPI_BYTE, c.comm, c.req);
    };
  }

  Call allgatherBase(LoomWork& w, at::Tensor& out, at::Tensor& in) {
    checkTensor(out, "all_gather_into_tensor");
    checkTensor(in, "all_gather_into_tensor");
    TORCH_CHECK(out.device() == in.device(), "loom: all_gather_into_tensor got tensors on ", out.device(),
                " and ", in.device());
    TORCH_CHECK(out.scalar_type() == in.scalar_type(), "loom: all_gather_into_tensor dtype mismatch");
    TORCH_CHECK(out.numel() == in.numel() * size_, "loom: all_gather_into_tensor output has ",
                out.numel(), " elements, expected ", size_, " x ", in.numel());
    int n = bytesOf(in);
    at::Tensor buf = contig(out);
    copyBackEpilogue(w, out, buf);
    at::Tensor send = contig(in);
    w.keep.push_back(send);
    void* r = buf.data_ptr();
    // FSDP2 gathers in place: its input is this rank's block of the output.
    const void* s = static_cast<char*>(r) + static_cast<int64_t>(n) * rank_ == send.data_ptr()
                        ? MPI_IN_PLACE : send.data_ptr();
    if (s != MPI_IN_PLACE && overlaps(send, buf)) {
      send = send.clone();
      w.keep.push_back(send);
      s = send.data_ptr();
    }
    return [=](const Ctx& c) {
      return c.dev ? MPIX_Allgather_enqueue(s, n, MPI_BYTE, r, n, MPI_BYTE, c.comm)
                   : MPI_Iallgather(s, n, MPI_BYTE, r, n, MPI_BYTE, c.comm, c.req);
    };
  }

  Call reduceScatterBlock(LoomWork& w, at::Tensor& out, at::Tensor& in, const ReduceOp& rop) {
    checkTensor(out, "reduce_scatter_tensor");
    checkTensor(in, "reduce_scatter_tensor");
    TORCH_CHECK(out.device() == in.device(), "loom: reduce_scatter_tensor got tensors on ", out.device(),
                " and ", in.device());
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
    const void* s = send.data_ptr();
    void* r = buf.data_ptr();
    return [=](const Ctx& c) {
      return c.dev ? MPIX_Reduce_scatter_block_enqueue(s, r, n, type, op, c.comm)
                   : MPI_Ireduce_scatter_block(s, r, n, type, op, c.comm, c.req);
    };
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
    auto w = newWork(type, ts, "MPI_Irecv", t.device());
    at::Tensor buf = contig(t);
    int n = bytesOf(buf);
    copyBackEpilogue(*w, t, buf);
    void* p = buf.data_ptr();
    if (w->device() && src == MPI_ANY_SOURCE) {
      TORCH_CHECK(!coalescing_, "loom: a receive from any source cannot be part of a coalesced group");
      w->anySource = true;
    }
    MPI_Status* st = &w->devStatus;
    return launch(w, {[=](const Ctx& c) {
      if (!c.dev) return MPI_Irecv(p, n, MPI_BYTE, src, tag, c.comm, c.req);
      return c.coalesced ? MPIX_Irecv_enqueue(p, n, MPI_BYTE, src, tag, c.comm, c.req)
                         : MPIX_Recv_enqueue(p, n, MPI_BYTE, src, tag, c.comm, st);
    }});
  }

  MPI_Comm comm_;
  std::shared_ptr<GroupState> group_;
  std::unique_ptr<DeviceSide> dev_;
  bool coalescing_ = false;
  c10::intrusive_ptr<LoomWork> coal_;     // the open coalesced group's Work
  std::vector<MPI_Request> coalReqs_;     // its device sends and receives
  c10::intrusive_ptr<Options> options_ = c10::make_intrusive<Options>("loom");
};

// ---------------------------------------------------------------- entries (loom_backend.h)

}  // namespace

MPI_Datatype reduceTypeOf(at::ScalarType t) { return reduceType(t); }

int countOf(int64_t v, const char* what) { return toInt(v, what); }

MPI_Comm subComm(MPI_Comm parent, const std::vector<int>& ranks) {
  return LoomBackend::subComm(parent, ranks);
}

c10::intrusive_ptr<c10d::Backend> makeBackend(MPI_Comm comm, int rank, int size,
                                              const c10::intrusive_ptr<c10d::Store>& store,
                                              std::chrono::milliseconds timeout, const std::string& name) {
  auto b = c10::make_intrusive<LoomBackend>(comm, rank, size);
  b->setGroup(store, timeout, name);
  return b;
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
