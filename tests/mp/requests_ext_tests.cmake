# Requests added in MPI 4.0-5.0: MPI_Request_get_status_all/_any/_some,
# MPI_Isendrecv(_replace), generalized requests, the MPI_Status accessors
# (requests_ext), at 1-5 ranks and as a singleton.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
loom_mp_program(mp_requests_ext progs/requests_ext.c)
loom_mp_test(mp.requests_ext.singleton TIMEOUT 60
             COMMAND --stdout-count "^requests_ext: rank 0: [0-9]+ checks passed$=1"
             -- $<TARGET_FILE:mp_requests_ext>)
foreach(n 1 2 3 4 5)
  loom_mp_test(mp.requests_ext.${n} TIMEOUT 120
               COMMAND --stdout-count "^requests_ext: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_requests_ext>)
endforeach()
