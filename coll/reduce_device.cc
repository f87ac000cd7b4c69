// Reductions of device buffers: the backend's kernels (CUDA: reduce_cuda.cu;
// the mock: the host loop on its read-write view), and MPI_Reduce_local's
// device path, which stages through host memory whatever the kernels do not
// cover.
#include <string>

#include "coll/op.h"
#include "coll/reduce_cuda.h"
#include "core/device_stage.h"

namespace loom::coll {

#if !LOOM_HAVE_CUDA
// A build without CUDA has no kernels (the CUDA backend never runs there).
DeviceReduceResult reduceCuda(OpKind, BasicKind, int64_t, const void*, void*, int64_t, void*,
                              std::string* why) {
  *why = "built without CUDA";
  return DeviceReduceResult::kUnsupported;
}
#endif

DeviceReduceResult reduceDevice(OpKind op, BasicKind kind, int64_t elemBytes, const void* in,
                                void* io, int64_t n, device::Stream stream, Status* err) {
  switch (device::backend()) {
    case device::Backend::kMock: {
      // The mock's "kernel": the host loop on the read-write view (long
      // double included: it is host arithmetic, but the mock says what the
      // CUDA kernels would, so the staging path runs in its tests too).
      if (kind == BasicKind::kLongDouble || kind == BasicKind::kLongDoubleComplex ||
          kind == BasicKind::kLongDoubleInt)
        return DeviceReduceResult::kUnsupported;
      const void* a = device::hostAlias(in);
      void* b = device::hostAlias(io);
      if (!a || !b) return DeviceReduceResult::kUnsupported;
      // LOOM_DEVICE_MOCK_ASYNC: on one of Loom's own streams the "kernel"
      // runs when the stream gets to it, as a GPU's does.
      struct Job {
        OpKind op;
        BasicKind kind;
        int64_t elemBytes;
        const void* a;
        void* b;
        int64_t n;
        static void run(void* p) {
          auto* j = static_cast<Job*>(p);
          applyPackedHost(j->op, j->kind, j->elemBytes, j->a, j->b, j->n);
          delete j;
        }
      };
      auto* job = new Job{op, kind, elemBytes, a, b, n};
      if (!device::mockEnqueue(stream, Job::run, job)) Job::run(job);
      return DeviceReduceResult::kDone;
    }
    case device::Backend::kCuda: {
      std::string why;
      DeviceReduceResult r = reduceCuda(op, kind, elemBytes, in, io, n, stream.h, &why);
      if (r == DeviceReduceResult::kFailed) *err = errorf(MPI_ERR_OTHER, "%s", why.c_str());
      return r;
    }
    default:
      return DeviceReduceResult::kUnsupported;
  }
}

namespace {

// Both operands through host twins: the host's reduceLocal (any op, any
// type) between copies in and out. A user op sees the host twins: it never
// gets device pointers.
Status reduceStaged(const void* in, void* inout, int64_t count, Datatype* type, Op* op) {
  int64_t lo = 0, hi = 0;
  device::typeSpan(count, type, &lo, &hi);
  device::Stage stage;
  stage.setWhat("a local reduction");
  Status st;
  const void* a = in;
  if (device::isDevice(in) && !(a = stage.add(in, lo, hi, true, &st))) return st;
  void* b = inout;
  if (device::isDevice(inout)) {
    if (!(b = stage.add(inout, lo, hi, true, &st))) return st;
    stage.writes(0, count, type);
  }
  LOOM_TRY(reduceLocal(a, b, count, type, op));
  return stage.finish();
}

}  // namespace

Status reduceLocalDevice(const void* in, void* inout, int64_t count, Datatype* type, Op* op) {
  if (op->kind() != Op::Kind::kUser && type->isContiguous() && device::isDevice(in) &&
      device::isDevice(inout)) {
    const int64_t e = elementBytesOf(type);
    const int64_t n = e > 0 ? static_cast<int64_t>(type->packedSize(count)) / e : 0;
    Status err;
    device::Stream stream{};  // the default stream: ordered after the program's own work there
    DeviceReduceResult r =
        reduceDevice(op->kind(), type->kind(), e, static_cast<const char*>(in) + type->trueLb(),
                     static_cast<char*>(inout) + type->trueLb(), n, stream, &err);
    if (r == DeviceReduceResult::kFailed) return err;
    if (r == DeviceReduceResult::kDone) {
      // MPI_Reduce_local returns with the result in place.
      device::Fence f;
      LOOM_TRY(device::fenceRecord(stream, &f));
      Status st = device::fenceWait(f);
      device::fenceDestroy(f);
      return st;
    }
  }
  return reduceStaged(in, inout, count, type, op);
}

}  // namespace loom::coll
