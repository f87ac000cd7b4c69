#include "p2p/protocol.h"

#include <algorithm>
#include <string>

#include "core/log.h"
#include "core/params.h"

namespace loom::p2p {

Kind selectProtocol(size_t bytes, bool contiguous, const ProtocolLimits& lim) {
  const size_t eager = std::min(lim.eagerMax, lim.maxPayload);
  if (bytes <= std::min(lim.inlineMax, eager)) return Kind::kInline;
  if (bytes <= eager) return Kind::kEager;
  // A read takes one contiguous range; a non-contiguous sender streams
  // packed chunks instead.
  const bool getPossible = lim.get && contiguous;
  switch (lim.rndv) {
    case RndvMode::kGet:
      return getPossible ? Kind::kRtsGet : Kind::kRtsPipeline;
    case RndvMode::kPipeline:
      return Kind::kRtsPipeline;
    case RndvMode::kAuto:
      break;
  }
  return getPossible && bytes >= lim.getMin ? Kind::kRtsGet : Kind::kRtsPipeline;
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
    case Kind::kAck: return "ack";
    case Kind::kCts: return "cts";
    case Kind::kData: return "data";
    case Kind::kFin: return "fin";
  }
  return "?";
}

}  // namespace loom::p2p
