# Persistent collectives (MPI_*_init; runtime/api/persistent_coll_api.cc):
# every one started several times with new data, MPI_Startall, Test/Wait,
# MPI_Request_free, wrong arguments (pcoll), at 1-5 ranks and as a
# singleton; at 4 ranks also with the shared-memory algorithms forced (the
# persistent activations must still pick message-based ones).
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
loom_mp_program(mp_pcoll progs/pcoll.c)
loom_mp_test(mp.pcoll.singleton TIMEOUT 60
             COMMAND --stdout-count "^pcoll: rank 0: [0-9]+ checks passed$=1"
             -- $<TARGET_FILE:mp_pcoll>)
foreach(n 1 2 3 4 5)
  loom_mp_test(mp.pcoll.${n} TIMEOUT 120
               COMMAND --stdout-count "^pcoll: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_pcoll>)
endforeach()
foreach(n 3 4)
  loom_mp_test(mp.pcoll.shm.${n} TIMEOUT 120
               COMMAND --stdout-count "^pcoll: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_COLL_BCAST=shm -x LOOM_COLL_ALLGATHER=shm
               -x LOOM_COLL_ALLREDUCE=shm -x LOOM_COLL_BARRIER=shm -x LOOM_COLL_REDUCE=shm
               $<TARGET_FILE:mp_pcoll>)
  loom_mp_test(mp.pcoll.v1.${n} TIMEOUT 120
               COMMAND --stdout-count "^pcoll: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_COLL_BCAST=binomial -x LOOM_COLL_GATHER=binomial
               -x LOOM_COLL_SCATTER=binomial -x LOOM_COLL_ALLGATHER=bruck
               -x LOOM_COLL_ALLTOALL=bruck -x LOOM_COLL_ALLTOALLV=pairwise
               -x LOOM_COLL_ALLTOALLW=pairwise $<TARGET_FILE:mp_pcoll>)
endforeach()
