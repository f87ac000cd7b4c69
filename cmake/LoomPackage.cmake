# Compiler wrappers (loomcc, loomcxx and the mpicc/mpicxx links; with
# Fortran loomfort and the mpifort/mpif90/mpif77 links), the pkg-config files
# and the CMake package. Wrappers find Loom relative to themselves, so
# build/bin/loomcc works before any install.

# loom_wrapper(name envvar compiler libdir outdir [template]): template
# defaults to scripts/loomcc.in.
function(loom_wrapper name envvar compiler libdir outdir)
  set(WRAPPER ${name})
  set(ENVVAR ${envvar})
  set(DEFAULT_COMPILER ${compiler})
  set(LIBDIR ${libdir})
  set(template ${CMAKE_SOURCE_DIR}/scripts/loomcc.in)
  if(ARGC GREATER 5)
    set(template ${ARGV5})
  endif()
  configure_file(${template} ${outdir}/${name} @ONLY
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

# Fortran: loomfort (default gfortran, $LOOM_FC) and its conventional names.
if(LOOM_HAVE_FORTRAN)
  set(_fort_in ${CMAKE_SOURCE_DIR}/scripts/loomfort.in)
  loom_wrapper(loomfort LOOM_FC gfortran lib ${_build_bin} ${_fort_in})
  loom_wrapper(loomfort LOOM_FC gfortran ${CMAKE_INSTALL_LIBDIR} ${_inst_stage} ${_fort_in})
  foreach(link mpifort mpif90 mpif77)
    file(CREATE_LINK loomfort ${_build_bin}/${link} SYMBOLIC)
    file(CREATE_LINK loomfort ${_inst_stage}/${link} SYMBOLIC)
  endforeach()
  install(PROGRAMS ${_inst_stage}/loomfort DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${_inst_stage}/mpifort ${_inst_stage}/mpif90 ${_inst_stage}/mpif77
          DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# pkg-config: relocatable through ${pcfiledir}.
file(RELATIVE_PATH _pc_to_prefix
     ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${CMAKE_SOURCE_DIR}/cmake/loom.pc.in ${CMAKE_BINARY_DIR}/loom.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/loom.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(LOOM_HAVE_FORTRAN)
  configure_file(${CMAKE_SOURCE_DIR}/cmake/loom-fortran.pc.in ${CMAKE_BINARY_DIR}/loom-fortran.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/loom-fortran.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

# CMake package: find_package(Loom) gives the imported target Loom::loom and,
# when built with Fortran, Loom::loom_fortran (component Fortran).
if(NOT LOOM_HAVE_FORTRAN)
  set(LOOM_HAVE_FORTRAN OFF)
endif()
include(CMakePackageConfigHelpers)
install(EXPORT LoomTargets NAMESPACE Loom:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Loom)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/LoomConfig.cmake.in
  ${CMAKE_BINARY_DIR}/LoomConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Loom)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/LoomConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/LoomConfig.cmake ${CMAKE_BINARY_DIR}/LoomConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Loom)
