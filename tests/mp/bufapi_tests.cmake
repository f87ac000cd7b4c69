# Buffered-mode calls of MPI 5.0 (runtime/api/buffer_api.cc): MPI_Buffer_iflush,
# communicator and session buffers, MPI_BUFFER_AUTOMATIC (bufapi), at 1-5
# ranks and as a singleton.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
loom_mp_program(mp_bufapi progs/bufapi.c)
loom_mp_test(mp.bufapi.singleton TIMEOUT 60
             COMMAND --stdout-count "^bufapi: rank 0: [0-9]+ checks passed$=1"
             -- $<TARGET_FILE:mp_bufapi>)
foreach(n 1 2 3 4 5)
  loom_mp_test(mp.bufapi.${n} TIMEOUT 120
               COMMAND --stdout-count "^bufapi: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_bufapi>)
endforeach()
