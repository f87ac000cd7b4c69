// Device buffers in collective calls (coll_stage.cc): whether a call's
// significant buffers on this rank include device memory, and the same call
// on host twins of them. coll::run does this for every collective
// (blocking, nonblocking, persistent) when no algorithm takes device
// buffers as they are (Algorithm::deviceBuffers, the device rules).
#pragma once

#include <memory>

#include "coll/selector.h"
#include "core/device_stage.h"

namespace loom::coll {

// A buffer this rank's part of `a` reads or writes is device memory.
// Only called when device::active().
bool touchesDevice(const CollArgs& a);
// Every buffer this rank's part of `a` reads or writes is device memory
// (and there is at least one): the device-native algorithms' condition.
bool allOnDevice(const CollArgs& a);

// `*staged`: `a` with its device buffers replaced by host twins (inputs
// copied in); `*out` copies back what the call writes when finished.
Status stageCall(const CollArgs& a, CollArgs* staged, std::unique_ptr<device::Stage>* out);

}  // namespace loom::coll
