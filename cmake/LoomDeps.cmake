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
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)   # "native" needs a GPU at build time
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(LOOM_HAVE_CUDA ON)
  elseif(LOOM_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "LOOM_WITH_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
