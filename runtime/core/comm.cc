#include "core/comm.h"

namespace loom {
Errhandler gErrorsAreFatal{Errhandler::Kind::kFatal, "MPI_ERRORS_ARE_FATAL"};
Errhandler gErrorsAbort{Errhandler::Kind::kAbort, "MPI_ERRORS_ABORT"};
Errhandler gErrorsReturn{Errhandler::Kind::kReturn, "MPI_ERRORS_RETURN"};

Comm::~Comm() {
  magic_ = 0;
  if (collState_ && collStateDeleter) collStateDeleter(collState_);
  if (ownsContextId_) contextIds().give(contextId_);
  Group::release(group_);
  Errhandler::release(errhandler_);
  if (remote_) Group::release(remote_);
  if (local_) Comm::release(local_);
}

void Comm::release(Comm* c) {
  if (--c->refs_ == 0) delete c;
}

void Comm::free(Comm* c) {
  c->magic_ = 0;
  release(c);
}

ContextIdMask::ContextIdMask() {
  for (auto& w : words_) w = ~uint64_t{0};
  take(kWorld);
  take(kSelf);
}

int ContextIdMask::lowestFree(const uint64_t* words) {
  for (int i = 0; i < kWords; ++i)
    if (words[i]) return i * 64 + __builtin_ctzll(words[i]);
  return -1;
}

ContextIdMask& contextIds() {
  static ContextIdMask mask;
  return mask;
}

}  // namespace loom
