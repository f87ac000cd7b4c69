# Third-party dependencies. Each appears in exactly one layer:
#   PMIx   -> runtime/core/bootstrap*, launcher/
#   hwloc  -> runtime/core/topology*, launcher/
#   libfabric -> p2p/ofi/ (loaded lazily with dlopen, never linked)
#   CUDA   -> *_cuda.* / *.cu
find_package(PkgConfig REQUIRED)
pkg_check_modules(PMIX REQUIRED IMPORTED_TARGET pmix)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)

# libfabric: only its headers are needed at build time; the library is
# dlopen()ed when a peer is on another node (loading it costs ~200 ms).
set(LOOM_HAVE_OFI OFF)
if(NOT LOOM_WITH_OFI STREQUAL "OFF")
  pkg_check_modules(OFI IMPORTED_TARGET libfabric)
  if(OFI_FOUND)
    set(LOOM_HAVE_OFI ON)
  elseif(LOOM_WITH_OFI STREQUAL "ON")
    message(FATAL_ERROR "LOOM_WITH_OFI=ON but libfabric was not found (apt-get install libfabric-dev)")
  endif()
endif()

set(LOOM_HAVE_CUDA OFF)
if(NOT LOOM_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Turing to Hopper as machine code, plus Hopper's PTX, which the driver
    # compiles for newer GPUs (Blackwell) at first use. "native" would need a
    # GPU at build time. Volta (sm_70) is out: CUDA 13's nvcc no longer
    # targets it (CUDA 12.x does: pass -DCMAKE_CUDA_ARCHITECTURES=70-real;...
    # with such a toolkit). docs/gpu.md has the build times.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 75-real 80-real 86-real 89-real 90)
    endif()
    # cudart linked statically: binaries start where no CUDA is installed.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(LOOM_HAVE_CUDA ON)
  elseif(LOOM_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "LOOM_WITH_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
