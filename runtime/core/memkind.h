// Memory kind: does a buffer live in host memory or on a GPU?
//
// Collectives and protocols ask this once per call to pick host or CUDA
// code paths. Without a CUDA build, or without a usable device, every
// pointer is host memory and the query costs nothing.
#pragma once

#include <string>

namespace loom::memkind {

enum class Kind { kHost, kDevice };

// True when this build has CUDA support compiled in.
bool cudaBuilt();

// Number of usable CUDA devices (0 without a driver or a GPU; any CUDA
// error counts as "no GPU"). Probed once.
int cudaDevices();

// Where `ptr` lives.
Kind kindOf(const void* ptr);

// "CUDA: built, 0 devices (no driver)" style one-liner for loom-info.
std::string describe();

}  // namespace loom::memkind
