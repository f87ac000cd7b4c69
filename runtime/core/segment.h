// Shared-memory segments that no name outlives: one rank of a node creates
// a segment, the others of the node map it (the shm transport's rings, a
// communicator's shared-memory collectives).
//
// By default (LOOM_SHM_SEGMENT=auto) the segment is a memfd, never named in
// /dev/shm: the creator publishes its pid and descriptor number (a Handle),
// and the others take the descriptor with pidfd_open + pidfd_getfd, or
// where that is refused (Yama's ptrace_scope >= 1 denies the "attach"
// access pidfd_getfd needs) by opening /proc/<pid>/fd/<fd> (a "read" access
// Yama allows). The memory goes away with the last mapping, whoever dies
// when: nothing is ever left in /dev/shm, even after a SIGKILL of the
// launcher or of any rank. The creator keeps its descriptor open until every
// peer has taken it (release()).
//
// Where that cannot work (no memfd_create, a process that is not dumpable,
// or LOOM_SHM_SEGMENT=name), the segment is /dev/shm/<name> (mode 0600,
// created exclusively) and the last rank to map it unlinks it (the callers
// count mappings in the segment). A rank killed between creation and the
// last mapping then leaves the name behind; loomrun removes
// loom-<nspace>-* after the job, other launchers may not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace loom::segment {

// What the creator publishes for the others (over PMIx or in a message).
struct Handle {
  int32_t pid = 0;  // the creator
  int32_t fd = -1;  // its descriptor of the memfd; -1: the segment is named
};

// One mapping of a segment.
struct Segment {
  void* base = nullptr;
  size_t bytes = 0;
  int fd = -1;       // the creator's memfd, open until release()
  std::string name;  // a named segment's name ("/loom-..."), until unlinked
};

// Creates a segment of `bytes` (zero-filled) and maps it; `name` is used
// only when it must be named. *handle is what the others need to map it.
Status create(const std::string& name, size_t bytes, Segment* seg, Handle* handle);

// Maps the segment `handle` describes (created as `name`, of `bytes`).
Status attach(const std::string& name, size_t bytes, const Handle& handle, Segment* seg);

// The creator, once every peer has mapped the segment: closes its memfd
// (nothing can take it any more; the mappings keep the memory).
void release(Segment* seg);

// Removes a named segment's name (the last rank to map it calls this).
void unlinkName(Segment* seg);

// Unmaps (and releases) the segment.
void unmap(Segment* seg);

// Whether segments are memfds ("fd") or named ("name"), as decided for this
// process (LOOM_SHM_SEGMENT, probed once).
const char* modeName();

}  // namespace loom::segment
