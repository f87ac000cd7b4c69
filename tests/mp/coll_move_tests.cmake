# Data-movement collectives through loomrun at 1, 2, 3, 4, 5 and 8 ranks.
# Every algorithm is forced at least once: each variant below forces one
# algorithm per collective (LOOM_COLL_<NAME>), "auto" runs the rules. The
# size sweep crosses every threshold of coll/selector.cc at every rank count
# (about 2 s a job even at 8 ranks on 2 cores; `sweep quick` is a shorter
# sweep for manual runs).
loom_mp_program(mp_coll_move progs/coll_move.c)

set(_cm_v1 -x LOOM_COLL_BCAST=binomial -x LOOM_COLL_GATHER=binomial
    -x LOOM_COLL_SCATTER=binomial -x LOOM_COLL_GATHERV=linear -x LOOM_COLL_SCATTERV=linear
    -x LOOM_COLL_ALLGATHER=recursive_doubling -x LOOM_COLL_ALLGATHERV=ring
    -x LOOM_COLL_ALLTOALL=bruck -x LOOM_COLL_ALLTOALLV=pairwise -x LOOM_COLL_ALLTOALLW=pairwise)
set(_cm_v2 -x LOOM_COLL_BCAST=scatter_allgather -x LOOM_COLL_GATHER=linear
    -x LOOM_COLL_SCATTER=linear -x LOOM_COLL_ALLGATHER=bruck -x LOOM_COLL_ALLGATHERV=linear
    -x LOOM_COLL_ALLTOALL=pairwise -x LOOM_COLL_ALLTOALLV=linear -x LOOM_COLL_ALLTOALLW=linear)
set(_cm_v3 -x LOOM_COLL_BCAST=linear -x LOOM_COLL_ALLGATHER=ring -x LOOM_COLL_ALLTOALL=linear)
set(_cm_auto "")
# The shared-memory algorithms (chosen by the rules on one node) with 4 KiB
# slots, so large messages take many pipelined steps; and the rules without
# them.
set(_cm_shm -x LOOM_COLL_SHM_SLOT=4096 -x LOOM_COLL_BCAST=shm -x LOOM_COLL_ALLGATHER=shm
    -x LOOM_COLL_GATHER=shm -x LOOM_COLL_SCATTER=shm -x LOOM_COLL_ALLTOALL=shm)
set(_cm_noshm -x LOOM_COLL_SHM=0)
# The message algorithms with every pipeline message streamed past the caches
# (LOOM_SHM_NT=1 from 1 byte; auto streams only where it measures faster).
set(_cm_nt -x LOOM_COLL_SHM=0 -x LOOM_SHM_NT=1 -x LOOM_SHM_NT_MIN=1 -x LOOM_SHM_EAGER_MAX=1k)
foreach(n 2 3 5)
  loom_mp_test(mp.coll.move.nt.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_move: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} ${_cm_nt} $<TARGET_FILE:mp_coll_move> sweep)
endforeach()

foreach(n 1 2 3 4 5 8)
  set(_mode sweep)
  foreach(v v1 v2 v3 auto shm noshm)
    loom_mp_test(mp.coll.move.${v}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^coll_move: rank [0-9]+ ok=${n}"
                 -- ${LOOMRUN} -n ${n} ${_cm_${v}} $<TARGET_FILE:mp_coll_move> ${_mode})
  endforeach()
  loom_mp_test(mp.coll.move.nonblocking.${n} TIMEOUT 60
               COMMAND --stdout-count "^coll_move: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_move> nonblocking)
  loom_mp_test(mp.coll.move.nonblocking_forced.${n} TIMEOUT 60
               COMMAND --stdout-count "^coll_move: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} ${_cm_v1} $<TARGET_FILE:mp_coll_move> nonblocking)
  loom_mp_test(mp.coll.move.nonblocking_shm.${n} TIMEOUT 60
               COMMAND --stdout-count "^coll_move: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} ${_cm_shm} $<TARGET_FILE:mp_coll_move> nonblocking)
  loom_mp_test(mp.coll.move.errors.${n} TIMEOUT 60
               COMMAND --stdout-count "^coll_move: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_move> errors)
endforeach()
