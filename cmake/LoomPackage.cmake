# Compiler wrappers (loomcc, loomcxx and the mpicc/mpicxx links), the
# pkg-config file and the CMake package. Wrappers find Loom relative to
# themselves, so build/bin/loomcc works before any install.

function(loom_wrapper name envvar compiler libdir outdir)
  set(WRAPPER ${name})
  set(ENVVAR ${envvar})
  set(DEFAULT_COMPILER ${compiler})
  set(LIBDIR ${libdir})
  configure_file(${CMAKE_SOURCE_DIR}/scripts/loomcc.in ${outdir}/${name} @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                 GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endfunction()

# The default compilers are the plain names, as users expect (cc, c++).
set(_build_bin ${CMAKE_BINARY_DIR}/bin)
set(_inst_stage ${CMAKE_BINARY_DIR}/install-stage)
loom_wrapper(loomcc LOOM_CC cc lib ${_build_bin})
loom_wrapper(loomcxx LOOM_CXX c++ lib ${_build_bin})
loom_wrapper(loomcc LOOM_CC cc ${CMAKE_INSTALL_LIBDIR} ${_inst_stage})
loom_wrapper(loomcxx LOOM_CXX c++ ${CMAKE_INSTALL_LIBDIR} ${_inst_stage})

foreach(pair "mpicc;loomcc" "mpicxx;loomcxx" "mpic++;loomcxx")
  list(GET pair 0 link)
  list(GET pair 1 target)
  file(CREATE_LINK ${target} ${_build_bin}/${link} SYMBOLIC)
  file(CREATE_LINK ${target} ${_inst_stage}/${link} SYMBOLIC)
endforeach()
install(PROGRAMS ${_inst_stage}/loomcc ${_inst_stage}/loomcxx DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${_inst_stage}/mpicc ${_inst_stage}/mpicxx ${_inst_stage}/mpic++
        DESTINATION ${CMAKE_INSTALL_BINDIR})

# pkg-config: relocatable through ${pcfiledir}.
file(RELATIVE_PATH _pc_to_prefix
     ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${CMAKE_SOURCE_DIR}/cmake/loom.pc.in ${CMAKE_BINARY_DIR}/loom.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/loom.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CMake package: find_package(Loom) gives the imported target Loom::loom.
include(CMakePackageConfigHelpers)
install(EXPORT LoomTargets NAMESPACE Loom:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Loom)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/LoomConfig.cmake.in
  ${CMAKE_BINARY_DIR}/LoomConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Loom)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/LoomConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/LoomConfig.cmake ${CMAKE_BINARY_DIR}/LoomConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Loom)
