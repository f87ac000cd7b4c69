#include "p2p/protocol.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/log.h"
#include "core/params.h"

namespace loom::p2p {

Kind selectProtocol(size_t bytes, bool contiguous, const ProtocolLimits& lim) {
  const size_t eager = std::min(lim.eagerMax, lim.maxPayload);
  if (bytes <= std::min(lim.inlineMax, eager)) return Kind::kInline;
  // A read takes one contiguous range; a non-contiguous sender streams
  // packed chunks instead.
  const bool getPossible = lim.get && contiguous;
  const bool inWindow = getPossible && bytes >= lim.getMin && bytes <= lim.getMax;
  if (bytes <= eager)
    return lim.getBelowEager && lim.rndv == RndvMode::kAuto && inWindow ? Kind::kRtsGet
                                                                         : Kind::kEager;
  switch (lim.rndv) {
    case RndvMode::kGet:
      return getPossible ? Kind::kRtsGet : Kind::kRtsPipeline;
    case RndvMode::kPipeline:
      return Kind::kRtsPipeline;
    case RndvMode::kAuto:
      break;
  }
  return inWindow ? Kind::kRtsGet : Kind::kRtsPipeline;
}

Protocol selectProtocol(size_t bytes, bool contiguous, device::MemKind mem,
                        const ProtocolLimits& lim) {
  if (mem == device::MemKind::kHost)
    return {selectProtocol(bytes, contiguous, lim), Staging::kNone};
  // A device range is one piece only when the type is contiguous; an empty
  // message has nothing to copy.
  if (contiguous && bytes > 0) {
    if (lim.ipc && bytes >= lim.ipcMin) return {Kind::kRtsIpc, Staging::kNone};
    // Eager messages travel in one record: staged whole, they cost one
    // device copy either way.
    const size_t eager = std::min(lim.eagerMax, lim.maxPayload);
    if (bytes > eager && bytes >= lim.devPipelineMin)
      return {Kind::kRtsPipeline, Staging::kChunked};
  }
  return {selectProtocol(bytes, contiguous, lim), Staging::kWhole};
}

size_t deviceChunk(size_t bytes, const ProtocolLimits& lim) {
  if (bytes < lim.devPipelineMin || lim.devChunk == 0) return std::max<size_t>(bytes, 1);
  return lim.devChunk;
}

void setDeviceLimits(ProtocolLimits* lim, bool sameNode) {
  auto size = [](const char* name, int64_t floor) {
    return static_cast<size_t>(std::max<int64_t>(floor, params::getInt(name)));
  };
  lim->ipc = sameNode && params::getBool("LOOM_DEVICE_IPC");
  lim->ipcMin = size("LOOM_DEVICE_IPC_MIN", 1);
  lim->devPipelineMin = size("LOOM_DEVICE_PIPELINE_MIN", 1);
  lim->devChunk = size("LOOM_DEVICE_PIPELINE_CHUNK", 4096);
}

std::string describeLimits(const char* name, const ProtocolLimits& L, size_t chunk) {
  char buf[360];
  char upto[48] = "";
  if (L.getMax != SIZE_MAX) std::snprintf(upto, sizeof upto, " to %zu B", L.getMax);
  std::snprintf(buf, sizeof buf,
                "%s: inline <= %zu B, eager <= %zu B, rendezvous %s (reads %s from %zu B%s%s, "
                "%zu B pieces x %d), pipeline chunks of %zu B",
                name, L.inlineMax, std::min(L.eagerMax, L.maxPayload),
                L.rndv == RndvMode::kAuto ? "auto" : L.rndv == RndvMode::kGet ? "get" : "pipeline",
                L.get ? "on" : "off", L.getMin, upto,
                L.getBelowEager && L.getMin <= L.eagerMax ? " also below the eager limit" : "",
                L.readChunk, L.readDepth,
                std::min(chunk, L.maxPayload));
  return buf;
}

std::string describeDeviceLimits(const ProtocolLimits& L) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "device buffers: IPC %s from %zu B, staged in chunks of %zu B from %zu B",
                L.ipc ? "on" : "off", L.ipcMin, L.devChunk, L.devPipelineMin);
  return buf;
}

RndvMode parseRndv(const char* param) {
  const std::string v = params::getString(param);
  if (v == "get") return RndvMode::kGet;
  if (v == "pipeline") return RndvMode::kPipeline;
  if (v != "auto") log::warn("%s=%s is not auto, get or pipeline; using auto", param, v.c_str());
  return RndvMode::kAuto;
}

const char* kindName(Kind k) {
  switch (k) {
    case Kind::kInline: return "inline";
    case Kind::kEager: return "eager";
    case Kind::kRtsGet: return "rndv-get";
    case Kind::kRtsPipeline: return "rndv-pipeline";
    case Kind::kRtsIpc: return "rndv-ipc";
    case Kind::kAck: return "ack";
    case Kind::kCts: return "cts";
    case Kind::kData: return "data";
    case Kind::kFin: return "fin";
  }
  return "?";
}

}  // namespace loom::p2p
