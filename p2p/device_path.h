// Native point-to-point paths for device buffers, beside the engine
// (engine.cc calls these; protocol.cc chooses when):
//
//   rndv-ipc        on a node: the sender sends an IpcRts (its buffer's CUDA
//                   IPC handle); the receiver maps the allocation (a cache
//                   keeps it mapped for the next message), copies from it
//                   into its own buffer on a stream (device to device, or to
//                   host), and answers kFin once the copy's fence passed.
//   chunked staging a rndv-pipeline whose device side (either end) passes
//                   through a ChunkPipe (core/device_pipe.h): the sender's
//                   records are fed from pinned slots filled by device
//                   copies running ahead, the receiver's records land in
//                   slots copied to the device while the next ones arrive.
//   direct landing  an eager message into a device receive is copied
//                   straight to the device (no host twin).
//
// A request on these paths keeps its device buffer (r->buf is never a twin)
// and carries kHintDevice in r->hint; its pipeline hangs on r->staged, so
// Request::finish waits for the last copies and frees the slots.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/device.h"
#include "core/request.h"
#include "core/status.h"
#include "p2p/protocol.h"
#include "p2p/transport.h"

namespace loom::p2p::dev {

// Request::hint bit (never sent): the request's buffer is device memory
// handled natively (no host twin).
constexpr uint8_t kHintDevice = 0x40;

// Payload of kRtsIpc.
struct IpcRts {
  device::IpcHandle handle;
  uint64_t addr;  // the sender's pointer (its allocation starts handle.offset before)
};

// A send to another rank is being started with device::active(): its
// protocol by memory kind (selectProtocol) into r->protocol; a device
// buffer staged whole gets its host twin now, one on a native path
// (rndv-ipc, chunked) kHintDevice.
Status prepareSend(Request* r, const ProtocolLimits& lim);

// A receive is being started (p2p::start, imrecv) with device::active():
// a contiguous device buffer that does not fold becomes native
// (kHintDevice); any other device buffer is staged whole, as before.
Status prepareRecv(Request* r);

// Sender of kRtsIpc: fills `body` (room for an IpcRts; *bytes: what to
// send of it) for r's buffer and returns the kind to send: kRtsIpc, or
// kRtsPipeline with an empty RtsBody when the backend gives no handle (the
// receiver then asks for the chunked pipeline).
Kind fillIpcRts(const Request* r, void* body, size_t* bytes);

// Sender streaming a native device buffer (after kCts): the bytes from
// r->transferred on go to `t` as kData records of at most `maxChunk` bytes,
// each copied out of a pinned slot once its device copy passed its fence
// (the first call starts the pipeline, chunk size from t.limits). True when
// every byte is in the transport; false while a device copy runs or the
// transport is full (progress calls again). After a failed copy (the
// request's error is set) the rest goes out as zeros marked kFlagFailed,
// so the receiver ends too.
bool streamSend(Request* r, const Transport& t, size_t maxChunk);

// Receiver: a native device receive answers a rendezvous with kCts for `m`
// bytes; sets up its landing slots (a failure is the receive's error, and
// the data is then dropped as it comes).
void prepareLanding(Request* r, size_t m, const ProtocolLimits& lim);
// Bytes [offset, offset + bytes) of a native device receive arrived.
void land(Request* r, const void* in, size_t bytes, size_t offset);
// A kData record marked kFlagFailed arrived for r: the receive fails.
void senderFailed(Request* r);

// Receiver of kRtsIpc (`body`: the IpcRts), `m` bytes into r's buffer
// (contiguous; host or device): maps the sender's allocation and starts the
// copy. True: the copy runs and poll() completes the receive; false: it
// cannot be mapped (another device, IPC refused): answer kCts instead.
bool ipcTake(Request* r, int srcJob, const void* body, size_t m);

// Copies of ipcTake still running. While there are, a progress poller of
// this file's runs poll(done) with the engine's setCompletion(done).
extern size_t gPending;
void setCompletion(void (*done)(Request*));
// Completes the receives whose copy finished: done(r) (the engine sends
// kFin, then finishes r). Returns how many.
int poll(void (*done)(Request*));

// MPI_Finalize: closes every mapping, destroys the streams.
void finalize();

}  // namespace loom::p2p::dev
