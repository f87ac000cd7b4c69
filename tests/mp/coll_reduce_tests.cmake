# Reduction collectives through loomrun at 1, 2, 3, 4, 5 and 8 ranks, once
# with the selector's own choices and once per forced algorithm set, so that
# every reduction algorithm runs (an algorithm that cannot take a call, e.g.
# the ring with a non-commutative op, falls back to the rules).
loom_mp_program(mp_coll_reduce progs/coll_reduce.c)
target_link_libraries(mp_coll_reduce PRIVATE m)

set(_red_auto "")
set(_red_a -x LOOM_COLL_REDUCE=binomial -x LOOM_COLL_ALLREDUCE=recursive_doubling
    -x LOOM_COLL_REDUCE_SCATTER=ring -x LOOM_COLL_REDUCE_SCATTER_BLOCK=ring
    -x LOOM_COLL_SCAN=recursive_doubling -x LOOM_COLL_EXSCAN=recursive_doubling)
set(_red_b -x LOOM_COLL_REDUCE=linear -x LOOM_COLL_ALLREDUCE=ring
    -x LOOM_COLL_REDUCE_SCATTER=reduce_scatterv -x LOOM_COLL_REDUCE_SCATTER_BLOCK=reduce_scatterv
    -x LOOM_COLL_SCAN=linear -x LOOM_COLL_EXSCAN=linear)
set(_red_c -x LOOM_COLL_ALLREDUCE=rabenseifner)
set(_red_d -x LOOM_COLL_ALLREDUCE=reduce_bcast -x COLL_REDUCE_QUICK=1)
# Shared memory with 4 KiB slots (many pipelined steps), and the rules
# without shared memory.
set(_red_shm -x LOOM_COLL_SHM_SLOT=4096 -x LOOM_COLL_REDUCE=shm -x LOOM_COLL_ALLREDUCE=shm
    -x LOOM_COLL_REDUCE_SCATTER_BLOCK=shm)
set(_red_noshm -x LOOM_COLL_SHM=0)
set(_red_cma -x LOOM_COLL_ALLREDUCE=cma -x LOOM_COLL_REDUCE=cma -x LOOM_COLL_SHM_SLOT=4096)
foreach(n 1 2 3 4 5 8)
  foreach(v auto a b c d shm noshm cma)
    loom_mp_test(mp.coll.reduce.${v}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^coll_reduce: rank [0-9]+ ok=${n}"
                 -- ${LOOMRUN} -n ${n} ${_red_${v}} $<TARGET_FILE:mp_coll_reduce>)
  endforeach()
endforeach()
# Message algorithms whose large folded receives may be streamed by their
# sender: with LOOM_SHM_NT=auto from 1 byte, every size class's second
# message is the streamed probe (p2p/stream_choice.h).
foreach(n 2 3 5)
  loom_mp_test(mp.coll.reduce.nt_auto.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_reduce: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_COLL_SHM=0 -x LOOM_SHM_NT=auto -x LOOM_SHM_NT_MIN=1
               -x LOOM_SHM_EAGER_MAX=256 $<TARGET_FILE:mp_coll_reduce>)
endforeach()
