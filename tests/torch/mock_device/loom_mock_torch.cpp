// A torch device for the loom backend's tests without a GPU: PrivateUse1
// (renamed "loommock" by mock_device.py) over Loom's mock device
// (LOOM_DEVICE_MOCK=1, tests/gpu/loom_mock*.h).
//
// What makes it a fair stand-in for CUDA, for what the backend relies on:
// - Memory comes from loom_mock_device_malloc: libloom treats it as device
//   memory, and the host faults on any direct access to it. A tensor freed
//   is unmapped at once (no caching allocator), so a backend that lets go
//   of a tensor its queued work still uses reads unmapped memory.
// - Streams are Loom's mock streams (a thread each that runs queued work in
//   order); the stream's native handle is what MPIX_Stream_create accepts as
//   a "cudaStream_t" under the mock. Events are marks queued on a stream;
//   blocking a stream on an event queues a wait on it. So "ordered after the
//   current stream" and "the host does not wait" are observable.
// - The few kernels the backend and the tests need (copy_, fill_, zero_,
//   div_, mul_, add_) run on the current stream, asynchronously: each one
//   mirrors the storages it touches into host memory on the stream's
//   thread, runs the CPU kernel there and writes the result back.
//   Everything else is refused with an error naming the op.
//
// Test machinery, not a device: one device (index 0), no autograd kernels.
#include <torch/extension.h>

#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

extern "C" {
void* loom_mock_device_malloc(size_t bytes);
void loom_mock_device_free(void* p);
void loom_mock_device_memcpy(void* dst, const void* src, size_t bytes);
void* loom_mock_stream_create(void);
int loom_mock_stream_synchronize(void* stream);
int loom_mock_stream_launch(void* stream, void (*fn)(void*), void* arg);
}

namespace loommock {
namespace {

constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

// ---------------------------------------------------------------- memory

void freeMem(void* p) {
  if (p) loom_mock_device_free(p);
}

struct MockAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    void* p = n ? loom_mock_device_malloc(n) : nullptr;
    TORCH_CHECK(!n || p, "loommock: no mock device memory for ", n,
                " bytes (is LOOM_DEVICE_MOCK=1 set?)");
    return {p, p, &freeMem, c10::Device(kType, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &freeMem; }
  void copy_data(void* dst, const void* src, std::size_t n) const override {
    loom_mock_device_memcpy(dst, src, n);
  }
};

MockAllocator gAllocator;
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &gAllocator);

// ---------------------------------------------------------------- streams

// Stream ids: 0 is the device's default stream, the others come from
// getStreamFromGlobalPool / getNewStream. Handles are created on first use
// and never destroyed (their threads outlive the tests).
std::mutex gStreamsMu;
std::vector<void*> gStreams;  // by id
int64_t gPoolNext = 0;
thread_local c10::StreamId tCurrent = 0;
std::atomic<bool> gCapturing{false};  // set_capturing: streams report graph capture

void* handleOf(c10::StreamId id) {
  std::lock_guard<std::mutex> lock(gStreamsMu);
  if (static_cast<size_t>(id) >= gStreams.size()) gStreams.resize(id + 1, nullptr);
  void*& h = gStreams[id];
  if (!h) {
    h = loom_mock_stream_create();
    TORCH_CHECK(h, "loommock: no mock stream (is LOOM_DEVICE_MOCK=1 set?)");
  }
  return h;
}

c10::StreamId newStreamId() {
  std::lock_guard<std::mutex> lock(gStreamsMu);
  c10::StreamId id = static_cast<c10::StreamId>(std::max<size_t>(gStreams.size(), 1));
  gStreams.resize(id + 1, nullptr);
  return id;
}

c10::Stream streamOf(c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kType, 0), id);
}

// Runs fn on the stream's thread, in order with what is queued there.
void launch(c10::StreamId id, std::function<void()> fn) {
  auto* heap = new std::function<void()>(std::move(fn));
  int rc = loom_mock_stream_launch(
      handleOf(id),
      [](void* a) {
        auto* f = static_cast<std::function<void()>*>(a);
        (*f)();
        delete f;
      },
      heap);
  if (rc != 0) {
    delete heap;
    TORCH_CHECK(false, "loommock: cannot queue work on a mock stream");
  }
}

// ---------------------------------------------------------------- events

// An event is a counter of records queued and one of records reached.
struct Event {
  std::atomic<uint64_t> reached{0};
  uint64_t recorded = 0;
};
using EventRef = std::shared_ptr<Event>;

EventRef& eventOf(void* e) { return *static_cast<EventRef*>(e); }

// ---------------------------------------------------------------- the guard

struct MockGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kType; }
  c10::Device exchangeDevice(c10::Device d) const override {
    TORCH_CHECK(d.index() <= 0, "loommock: one device only, got ", d);
    return c10::Device(kType, 0);
  }
  c10::Device getDevice() const override { return c10::Device(kType, 0); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.index() <= 0, "loommock: one device only, got ", d);
  }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device) const override { return streamOf(tCurrent); }
  c10::Stream getDefaultStream(c10::Device) const override { return streamOf(0); }
  c10::Stream getStreamFromGlobalPool(c10::Device, bool) const override {
    // A small pool, handed out round robin as CUDA's is.
    static std::vector<c10::StreamId> pool;
    std::lock_guard<std::mutex> lock(poolMu_);
    if (pool.size() < 4) pool.push_back(newStreamId());
    return streamOf(pool[gPoolNext++ % pool.size()]);
  }
  c10::Stream getNewStream(c10::Device, int) const override { return streamOf(newStreamId()); }
  c10::Stream exchangeStream(c10::Stream s) const override {
    c10::Stream old = streamOf(tCurrent);
    tCurrent = s.id();
    return old;
  }
  void* getStreamNativeHandle(const c10::Stream s) const override { return handleOf(s.id()); }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
  // An override where torch's guard has it (not in torch 2.11).
  bool isStreamCapturing(const c10::Stream&) const { return gCapturing.load(); }

  void destroyEvent(void* e, const c10::DeviceIndex) const noexcept override {
    delete static_cast<EventRef*>(e);
  }
  void record(void** e, const c10::Stream& s, const c10::DeviceIndex, const c10::EventFlag) const override {
    if (!*e) *e = new EventRef(std::make_shared<Event>());
    EventRef ev = eventOf(*e);
    const uint64_t v = ++ev->recorded;
    launch(s.id(), [ev, v] { ev->reached.store(v, std::memory_order_release); });
  }
  void block(void* e, const c10::Stream& s) const override {
    if (!e) return;
    EventRef ev = eventOf(e);
    const uint64_t v = ev->recorded;
    if (v == 0) return;
    launch(s.id(), [ev, v] {
      while (ev->reached.load(std::memory_order_acquire) < v)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    });
  }
  bool queryEvent(void* e) const override {
    if (!e) return true;
    EventRef& ev = eventOf(e);
    return ev->reached.load(std::memory_order_acquire) >= ev->recorded;
  }
  void synchronizeEvent(void* e) const override {
    while (!queryEvent(e)) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  bool queryStream(const c10::Stream& s) const override {
    c10::Event ev(kType);
    ev.record(s);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    return ev.query();
  }
  void synchronizeStream(const c10::Stream& s) const override {
    TORCH_CHECK(loom_mock_stream_synchronize(handleOf(s.id())) == 0,
                "loommock: a copy queued on the stream failed");
  }
  void synchronizeDevice(const c10::DeviceIndex) const override {
    std::vector<void*> all;
    {
      std::lock_guard<std::mutex> lock(gStreamsMu);
      all = gStreams;
    }
    bool failed = false;
    for (void* h : all)
      if (h && loom_mock_stream_synchronize(h) != 0) failed = true;
    TORCH_CHECK(!failed, "loommock: a copy queued on a stream failed (freed or unmapped memory?)");
  }

 private:
  mutable std::mutex poolMu_;
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, MockGuardImpl);

struct MockHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return 1; }
  at::Device getDeviceFromPtr(void*) const override { return at::Device(kType, 0); }
  void resizePrivateUse1Bytes(const c10::Storage& s, size_t n) const override {
    TORCH_CHECK(n <= s.nbytes(), "loommock: cannot grow a storage");
  }
};

// ---------------------------------------------------------------- kernels

bool onMock(const at::Tensor& t) { return t.defined() && t.device().type() == kType; }

// A tensor's storage mirrored in host memory, and the CPU tensor that sees
// the mirror with the tensor's sizes, strides and offset.
struct Mirror {
  at::Tensor dev;  // keeps the storage alive until the job ran
  std::vector<char> host;
  at::Tensor cpu;

  explicit Mirror(const at::Tensor& t) : dev(t) {}
  void in() {
    const size_t n = dev.storage().nbytes();
    host.resize(n ? n : 1);
    if (n) loom_mock_device_memcpy(host.data(), dev.storage().data(), n);
    cpu = at::from_blob(host.data(), {static_cast<int64_t>(host.size() / dev.element_size())},
                        dev.options().device(at::kCPU))
              .as_strided(dev.sizes(), dev.strides(), dev.storage_offset());
  }
  void out() {
    const size_t n = dev.storage().nbytes();
    if (n) loom_mock_device_memcpy(dev.storage().mutable_data(), host.data(), n);
  }
};

// Queues `op` on the current stream. `tensors` are the op's tensors;
// tensors[0] is the one written. A CPU tensor among them is used as it is
// (the host must not change it before the stream gets there, as with CUDA's
// non-blocking copies).
void onStream(std::vector<at::Tensor> tensors, std::function<void(std::vector<at::Tensor>&)> op) {
  launch(tCurrent, [tensors = std::move(tensors), op = std::move(op)]() mutable {
    std::vector<std::unique_ptr<Mirror>> mirrors;
    std::vector<at::Tensor> args;
    for (auto& t : tensors) {
      if (onMock(t)) {
        mirrors.push_back(std::make_unique<Mirror>(t));
        mirrors.back()->in();
        args.push_back(mirrors.back()->cpu);
      } else {
        mirrors.push_back(nullptr);
        args.push_back(t);
      }
    }
    op(args);
    if (mirrors[0]) mirrors[0]->out();
  });
}

void syncCurrent() {
  TORCH_CHECK(loom_mock_stream_synchronize(handleOf(tCurrent)) == 0,
              "loommock: a copy queued on the stream failed");
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout>, std::optional<at::Device>,
                               std::optional<bool>, std::optional<at::MemoryFormat> mf) {
  constexpr c10::DispatchKeySet ks(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_generic(size, &gAllocator, ks, c10::dtype_or_default(dtype), mf);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout>, std::optional<at::Device>, std::optional<bool>) {
  constexpr c10::DispatchKeySet ks(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_strided_generic(size, stride, &gAllocator, ks, c10::dtype_or_default(dtype));
}

at::Tensor& kcopy_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  TORCH_CHECK(self.sizes() == src.sizes() || src.numel() == 1 || src.dim() <= self.dim(),
              "loommock: copy_ shapes ", self.sizes(), " and ", src.sizes());
  at::Tensor s = src;
  if (!onMock(s) && !s.is_cpu()) s = s.cpu();
  // CPU source: copied now into a private buffer, as a pageable cudaMemcpyAsync
  // stages it before returning.
  if (s.is_cpu()) s = s.clone();
  onStream({self, s}, [](std::vector<at::Tensor>& a) { a[0].copy_(a[1]); });
  if (self.is_cpu() && !non_blocking) syncCurrent();
  return self;
}

at::Tensor k_copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  at::Tensor d = dst;
  kcopy_(d, self, non_blocking);
  return dst;
}

at::Tensor k_copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  TORCH_CHECK(self.sizes() == dst.sizes(), "loommock: _copy_from_and_resize cannot resize");
  return k_copy_from(self, dst, false);
}

at::Tensor& kfill_(at::Tensor& self, const at::Scalar& v) {
  onStream({self}, [v](std::vector<at::Tensor>& a) { a[0].fill_(v); });
  return self;
}

at::Tensor& kzero_(at::Tensor& self) { return kfill_(self, 0); }

at::Tensor& kdiv_(at::Tensor& self, const at::Scalar& v) {
  onStream({self}, [v](std::vector<at::Tensor>& a) { a[0].div_(v); });
  return self;
}

at::Tensor& kmul_(at::Tensor& self, const at::Scalar& v) {
  onStream({self}, [v](std::vector<at::Tensor>& a) { a[0].mul_(v); });
  return self;
}

at::Tensor& kmul_t(at::Tensor& self, const at::Tensor& o) {
  at::Tensor other = o.is_cpu() ? o.clone() : o;
  onStream({self, other}, [](std::vector<at::Tensor>& a) { a[0].mul_(a[1]); });
  return self;
}

at::Tensor& kdiv_t(at::Tensor& self, const at::Tensor& o) {
  at::Tensor other = o.is_cpu() ? o.clone() : o;
  onStream({self, other}, [](std::vector<at::Tensor>& a) { a[0].div_(a[1]); });
  return self;
}

at::Tensor& kadd_(at::Tensor& self, const at::Tensor& o, const at::Scalar& alpha) {
  at::Tensor other = o.is_cpu() ? o.clone() : o;
  onStream({self, other}, [alpha](std::vector<at::Tensor>& a) { a[0].add_(a[1], alpha); });
  return self;
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  at::Tensor c = at::empty({}, self.options().device(at::kCPU));
  kcopy_(c, self.reshape({}), false);
  return c.item();
}

void refuse(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK(false, "loommock: ", op.schema().operator_name(),
              " is not implemented on the loom mock device (a test-only device); "
              "move the tensor to the CPU first");
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("copy_", kcopy_);
  m.impl("_copy_from", k_copy_from);
  m.impl("_copy_from_and_resize", k_copy_from_and_resize);
  m.impl("fill_.Scalar", kfill_);
  m.impl("zero_", kzero_);
  m.impl("div_.Scalar", kdiv_);
  m.impl("mul_.Scalar", kmul_);
  m.impl("mul_.Tensor", kmul_t);
  m.impl("div_.Tensor", kdiv_t);
  m.impl("add_.Tensor", kadd_);
  m.impl("_local_scalar_dense", local_scalar_dense);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&refuse>()); }

// ---------------------------------------------------------------- for the tests

namespace {

void registerHooks() {
  static MockHooks hooks;
  static bool done = false;
  if (!done && !at::isPrivateUse1HooksRegistered()) at::RegisterPrivateUse1HooksInterface(&hooks);
  done = true;
}

// Queues on the current stream: sleep `delay_ms`, then fill t with v. The
// "slow kernel" the ordering tests put before an op.
void slowFill(at::Tensor t, double v, int delay_ms) {
  TORCH_CHECK(onMock(t), "slow_fill_: a loommock tensor");
  onStream({t}, [v, delay_ms](std::vector<at::Tensor>& a) {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    a[0].fill_(v);
  });
}

// Queues on the current stream a sleep of `ms` (holds everything after it).
void sleepOnStream(int ms) {
  launch(tCurrent, [ms] { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); });
}

void setCapturing(bool on) { gCapturing.store(on); }

// Whether torch's device guard asks about graph capture (so set_capturing
// reaches the backend).
template <class T>
auto asksCapture(const T* g, int) -> decltype(g->isStreamCapturing(std::declval<c10::Stream>()), true) {
  return true;
}
template <class T>
bool asksCapture(const T*, long) {
  return false;
}
bool guardAsksCapture() {
  return asksCapture(static_cast<const c10::impl::DeviceGuardImplInterface*>(nullptr), 0);
}

int64_t currentStream() { return tCurrent; }
void setCurrentStream(int64_t id) {
  handleOf(id);
  tCurrent = id;
}
int64_t newStream() { return newStreamId(); }
void synchronize() { syncCurrent(); }
void synchronizeAll() { MockGuardImpl().synchronizeDevice(0); }

}  // namespace
}  // namespace loommock

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("register_hooks", &loommock::registerHooks);
  m.def("slow_fill_", &loommock::slowFill, py::arg("tensor"), py::arg("value"), py::arg("delay_ms"));
  m.def("sleep_on_stream", &loommock::sleepOnStream, py::arg("ms"));
  m.def("set_capturing", &loommock::setCapturing);
  m.def("guard_asks_capture", &loommock::guardAsksCapture);
  m.def("current_stream", &loommock::currentStream);
  m.def("set_current_stream", &loommock::setCurrentStream);
  m.def("new_stream", &loommock::newStream);
  // A stream's work may drop the last reference of a tensor that has a
  // Python object (which takes the GIL): never wait for a stream holding it.
  m.def("synchronize", &loommock::synchronize, py::call_guard<py::gil_scoped_release>());
  m.def("synchronize_all", &loommock::synchronizeAll, py::call_guard<py::gil_scoped_release>());
}
