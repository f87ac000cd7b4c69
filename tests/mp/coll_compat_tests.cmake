# Collectives as programs written for other MPIs use them: MPI_BOTTOM with
# datatypes of absolute addresses in every data-movement collective (each
# algorithm forced once), and the arithmetic ops on MPI_CHAR.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
loom_mp_program(mp_coll_bottom progs/coll_bottom.c)
loom_mp_program(mp_coll_char progs/coll_char.c)

set(_cb_auto "")
set(_cb_v1 -x LOOM_COLL_BCAST=binomial -x LOOM_COLL_GATHER=binomial
    -x LOOM_COLL_SCATTER=binomial -x LOOM_COLL_ALLGATHER=recursive_doubling
    -x LOOM_COLL_ALLGATHERV=ring -x LOOM_COLL_ALLTOALL=bruck -x LOOM_COLL_ALLTOALLV=pairwise
    -x LOOM_COLL_ALLTOALLW=pairwise)
set(_cb_v2 -x LOOM_COLL_BCAST=scatter_allgather -x LOOM_COLL_GATHER=linear
    -x LOOM_COLL_SCATTER=linear -x LOOM_COLL_ALLGATHER=bruck -x LOOM_COLL_ALLGATHERV=linear
    -x LOOM_COLL_ALLTOALL=pairwise -x LOOM_COLL_ALLTOALLV=linear -x LOOM_COLL_ALLTOALLW=linear)
set(_cb_shm -x LOOM_COLL_BCAST=shm -x LOOM_COLL_ALLGATHER=shm -x LOOM_COLL_GATHER=shm
    -x LOOM_COLL_SCATTER=shm -x LOOM_COLL_ALLTOALL=shm)

foreach(prog coll_bottom coll_char)
  loom_mp_test(mp.${prog}.singleton TIMEOUT 60
               COMMAND --stdout-count "^${prog}: rank 0: [0-9]+ checks passed$=1"
               -- $<TARGET_FILE:mp_${prog}>)
endforeach()
foreach(n 1 2 3 4 5)
  foreach(v auto v1 v2 shm)
    loom_mp_test(mp.coll_bottom.${v}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^coll_bottom: rank [0-9]+: [0-9]+ checks passed$=${n}"
                 -- ${LOOMRUN} -n ${n} ${_cb_${v}} $<TARGET_FILE:mp_coll_bottom>)
  endforeach()
  loom_mp_test(mp.coll_char.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_char: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_char>)
endforeach()
