// Buffered sends: the buffer the user attaches with MPI_Buffer_attach, and
// the messages MPI_Bsend/MPI_Ibsend/MPI_Bsend_init copy into it.
//
// Each message occupies its packed size plus MPI_BSEND_OVERHEAD bytes of the
// attached buffer from the moment it is copied until the engine has sent
// it; the space is then free again. Loom keeps its bookkeeping outside the
// user's buffer, so the overhead is pure accounting: a buffer sized by the
// standard's formula (sum of MPI_Pack_size + MPI_BSEND_OVERHEAD) is enough.
#pragma once

#include <cstdint>

#include "core/comm.h"
#include "core/datatype.h"
#include "core/status.h"

namespace loom::api {

// Copies `count` elements of `type` at `buf` into the attached buffer and
// starts sending the copy to comm rank `dest`; once it returns, `buf` may be
// reused. MPI_ERR_BUFFER when no buffer is attached or it lacks the room
// (after one progress pass to reclaim the space of finished sends).
Status bufferedSend(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm);

// Waits until every buffered send has left the attached buffer (what
// MPI_Buffer_detach and MPI_Finalize need).
void flushBufferedSends();

}  // namespace loom::api
