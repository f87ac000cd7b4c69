# The hierarchical collectives (coll/*/*_hierarchical.cc) through loomrun,
# on virtual nodes: LOOM_COLL_VIRTUAL_NODE_SIZE=k makes each block of k job
# ranks a node, so 3, 4, 5 and 8 ranks on nodes of 2 and 3 give even,
# uneven ({2,1}, {3,2}, {3,3,2}) and single-rank nodes. The programs of
# coll_tests.cmake, coll_reduce_tests.cmake and coll_move_tests.cmake check
# every result; here they run with the hierarchical algorithms forced
# (sizes 0, 1, odd, up to 1 MB; calls they cannot take, such as a
# non-commutative reduce or a split communicator with one rank per node,
# fall back to the rules), with the rules alone, and once with the debug
# log showing that the rules pick them. About 30 s of jobs in all.
if(NOT TARGET mp_coll_reduce OR NOT TARGET mp_coll_move OR NOT TARGET mp_coll_barrier)
  return()
endif()

set(_hier_forced -x LOOM_COLL_BARRIER=hierarchical -x LOOM_COLL_BCAST=hierarchical
    -x LOOM_COLL_REDUCE=hierarchical -x LOOM_COLL_ALLREDUCE=hierarchical
    -x LOOM_COLL_ALLGATHER=hierarchical)
foreach(n 3 4 5 8)
  foreach(k 2 3)
    set(_vn -x LOOM_COLL_VIRTUAL_NODE_SIZE=${k})
    loom_mp_test(mp.coll.hier.reduce.${n}.node${k} TIMEOUT 60
                 COMMAND --stdout-count "^coll_reduce: rank [0-9]+ ok=${n}"
                 -- ${LOOMRUN} -n ${n} ${_vn} ${_hier_forced} $<TARGET_FILE:mp_coll_reduce>)
    loom_mp_test(mp.coll.hier.move.${n}.node${k} TIMEOUT 60
                 COMMAND --stdout-count "^coll_move: rank [0-9]+ ok=${n}"
                 -- ${LOOMRUN} -n ${n} ${_vn} ${_hier_forced} $<TARGET_FILE:mp_coll_move> sweep)
    loom_mp_test(mp.coll.hier.nonblocking.${n}.node${k} TIMEOUT 30
                 COMMAND --stdout-count "^coll_move: rank [0-9]+ ok=${n}"
                 -- ${LOOMRUN} -n ${n} ${_vn} ${_hier_forced} $<TARGET_FILE:mp_coll_move>
                 nonblocking)
    loom_mp_test(mp.coll.hier.barrier.${n}.node${k} TIMEOUT 30
                 COMMAND --stdout-count "^coll_barrier: rank [0-9]+ ok=${n}"
                 -- ${LOOMRUN} -n ${n} ${_vn} ${_hier_forced} $<TARGET_FILE:mp_coll_barrier>)
  endforeach()
endforeach()

# The rules alone on virtual nodes (hierarchical up to their limits, flat
# beyond, shared memory nowhere since no communicator is on one node).
foreach(n 5 8)
  loom_mp_test(mp.coll.hier.auto.reduce.${n} TIMEOUT 60
               COMMAND --stdout-count "^coll_reduce: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_COLL_VIRTUAL_NODE_SIZE=3 $<TARGET_FILE:mp_coll_reduce>)
  loom_mp_test(mp.coll.hier.auto.move.${n} TIMEOUT 60
               COMMAND --stdout-count "^coll_move: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_COLL_VIRTUAL_NODE_SIZE=3 $<TARGET_FILE:mp_coll_move>
               sweep quick)
endforeach()

# The rules pick the hierarchical algorithms on 2 nodes of 2 ranks, and
# the flat ones beyond their size limits (rank 0 logs every decision).
loom_mp_test(mp.coll.hier.selected.reduce TIMEOUT 30
             COMMAND --stdout-count "^coll_reduce: rank [0-9]+ ok=4"
             --stderr-re "MPI_COMM_WORLD: allreduce, 8 bytes, 4 ranks: hierarchical"
             --stderr-re "MPI_COMM_WORLD: allreduce, 524288 bytes, 4 ranks: rabenseifner"
             --stderr-re "MPI_COMM_WORLD: reduce, 524288 bytes, 4 ranks: hierarchical"
             -- ${LOOMRUN} -n 4 -x LOOM_COLL_VIRTUAL_NODE_SIZE=2 -x LOOM_DEBUG=coll
             $<TARGET_FILE:mp_coll_reduce>)
loom_mp_test(mp.coll.hier.selected.move TIMEOUT 30
             COMMAND --stdout-count "^coll_move: rank [0-9]+ ok=4"
             --stderr-re "MPI_COMM_WORLD: bcast, 13 bytes, 4 ranks: hierarchical"
             --stderr-re "MPI_COMM_WORLD: allgather, 257 bytes, 4 ranks: hierarchical"
             --stderr-re "MPI_COMM_WORLD: allgather, 32769 bytes, 4 ranks: ring"
             -- ${LOOMRUN} -n 4 -x LOOM_COLL_VIRTUAL_NODE_SIZE=2 -x LOOM_DEBUG=coll
             $<TARGET_FILE:mp_coll_move> sweep quick)
loom_mp_test(mp.coll.hier.selected.barrier TIMEOUT 30
             COMMAND --stdout-count "^coll_barrier: rank [0-9]+ ok=5"
             --stderr-re "MPI_COMM_WORLD: barrier, 0 bytes, 5 ranks: hierarchical"
             -- ${LOOMRUN} -n 5 -x LOOM_COLL_VIRTUAL_NODE_SIZE=2 -x LOOM_DEBUG=coll
             $<TARGET_FILE:mp_coll_barrier>)

# A fake machine of two packages (HWLOC_SYNTHETIC, for loomrun and the
# ranks): the ranks load it, and the hierarchical algorithms run on it.
# One core a package, as many cores as CI has: with more fake cores than
# real ones the job would not count as oversubscribed and would spin.
# hwloc cannot tell where a process is bound in a synthetic topology, so
# the ranks publish no package and the trees skip that level; the unit
# tests (coll_hier_test.cc) cover package-ordered trees.
loom_mp_test(mp.coll.hier.synthetic.4 TIMEOUT 30
             COMMAND --stdout-count "^coll_reduce: rank [0-9]+ ok=4"
             --stderr-re "rank 3: \\[topo\\] 2 packages, 1 NUMA node, 2 cores"
             -- env "HWLOC_SYNTHETIC=package:2 core:1 pu:1" ${LOOMRUN} -n 4
             -x LOOM_COLL_VIRTUAL_NODE_SIZE=2 -x LOOM_DEBUG=topo ${_hier_forced}
             -x COLL_REDUCE_QUICK=1 $<TARGET_FILE:mp_coll_reduce>)
if(TARGET loom-info)
  loom_mp_test(mp.coll.hier.synthetic.loom_info TIMEOUT 30
               COMMAND --stdout-re "2 packages, 1 NUMA node, 4 cores, 4 PUs"
               -- env "HWLOC_SYNTHETIC=package:2 core:2 pu:1" $<TARGET_FILE:loom-info> --topology)
endif()
