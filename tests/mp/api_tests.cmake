# The whole MPI 5.0 C API: every function present (exported, MPI_ and PMPI_),
# the unimplemented ones reporting MPI_ERR_UNSUPPORTED_OPERATION.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
add_test(NAME api.symbols
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_symbols.py
                 ${PROJECT_SOURCE_DIR}/include/mpi.h $<TARGET_FILE:loom> ${CMAKE_NM}
                 ${PROJECT_SOURCE_DIR}/include/mpi-ext.h)
set_tests_properties(api.symbols PROPERTIES TIMEOUT 60 LABELS unit)
if(LOOM_HAVE_FORTRAN)
  # Every procedure of the generated mpi module / mpif.h is in libloom_fortran.
  add_test(NAME api.fortran_symbols
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_fortran_symbols.py
                   ${CMAKE_BINARY_DIR}/runtime/fortran/gen $<TARGET_FILE:loom_fortran>
                   $<TARGET_FILE:loom> ${CMAKE_NM})
  set_tests_properties(api.fortran_symbols PROPERTIES TIMEOUT 60 LABELS "unit;fortran")
endif()

loom_mp_program(mp_api_unsupported progs/api_unsupported.c)
loom_mp_test(mp.api_unsupported.singleton
             COMMAND --stdout-count "checks passed$=1" -- $<TARGET_FILE:mp_api_unsupported>)
foreach(n 1 2 3)
  loom_mp_test(mp.api_unsupported.${n}
               COMMAND --stdout-count "checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_api_unsupported>)
endforeach()
loom_mp_test(mp.api_unsupported.fatal
             COMMAND --exit-nonzero
             --stderr-re "MPI_Open_port: MPI_ERR_UNSUPPORTED_OPERATION: not implemented in Loom yet \\(dynamic processes\\)"
             -- ${LOOMRUN} -n 2 $<TARGET_FILE:mp_api_unsupported> fatal)
loom_mp_test(api.loom_info_unsupported
             COMMAND --stdout-re "of 664 implemented" --stdout-re "^    MPI_Open_port$"
             -- $<TARGET_FILE:loom-info> --unsupported)
