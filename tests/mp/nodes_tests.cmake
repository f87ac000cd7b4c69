# Jobs across nodes: the same programs as the one-node tests, with the
# ranks placed blockwise on 2 or 3 simulated nodes (loomrun --nodes), so
# every pair of ranks on different nodes talks through the libfabric
# transport and only ranks of one node share memory. Splits are uneven on
# purpose ({2,1}, {3,2}, {2,1,1}, {3,3,2}, ...), and most ranks have peers
# on both transports, so MPI_ANY_SOURCE receives (p2p_order, p2p_stress,
# p2p_flood) match across shm and ofi at once.
if(NOT LOOM_HAVE_OFI)
  return()
endif()

# loom_nodes_test(<name> <nodes> <ranks> <NAME of "NAME: rank R ok">
#                 [TIMEOUT s] ARGS loomrun-options program args...)
function(loom_nodes_test name k n prefix)
  cmake_parse_arguments(T "" "TIMEOUT" "ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 90)
  endif()
  loom_mp_test(${name} TIMEOUT ${T_TIMEOUT}
               COMMAND --stdout-count "^${prefix}: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} --nodes ${k} ${T_ARGS})
endfunction()

# Every configuration runs the core programs; the "full" ones run every
# point-to-point program and every forced collective algorithm set.
set(_nodes_full 2:3 2:5 3:4 3:8)
set(_nodes_light 2:2 2:4 2:8 3:3 3:5)
foreach(cfg ${_nodes_full} ${_nodes_light})
  string(REPLACE ":" ";" kn ${cfg})
  list(GET kn 0 k)
  list(GET kn 1 n)
  set(t mp.nodes${k}.${n})
  loom_nodes_test(${t}.p2p.order ${k} ${n} p2p_order
                  ARGS $<TARGET_FILE:mp_p2p_order>)
  loom_nodes_test(${t}.p2p.exchange ${k} ${n} p2p_exchange TIMEOUT 120
                  ARGS $<TARGET_FILE:mp_p2p_exchange>)
  loom_nodes_test(${t}.coll.move ${k} ${n} coll_move
                  ARGS $<TARGET_FILE:mp_coll_move> sweep)
  loom_nodes_test(${t}.coll.reduce ${k} ${n} coll_reduce
                  ARGS $<TARGET_FILE:mp_coll_reduce>)
  loom_nodes_test(${t}.coll.barrier ${k} ${n} coll_barrier
                  ARGS $<TARGET_FILE:mp_coll_barrier>)
  if(NOT cfg IN_LIST _nodes_full)
    continue()
  endif()
  foreach(p probe requests count bsend errors)
    loom_nodes_test(${t}.p2p.${p} ${k} ${n} p2p_${p} ARGS $<TARGET_FILE:mp_p2p_${p}>)
  endforeach()
  loom_nodes_test(${t}.p2p.exchange_vector ${k} ${n} p2p_exchange TIMEOUT 120
                  ARGS $<TARGET_FILE:mp_p2p_exchange> --vector)
  loom_nodes_test(${t}.coll.move.nonblocking ${k} ${n} coll_move
                  ARGS $<TARGET_FILE:mp_coll_move> nonblocking)
  # Every algorithm forced (the sets of coll_move_tests.cmake and
  # coll_reduce_tests.cmake), hierarchical ones included, and the rules
  # without shared memory on the nodes.
  foreach(v v1 v2 v3 noshm)
    loom_nodes_test(${t}.coll.move.${v} ${k} ${n} coll_move
                    ARGS ${_cm_${v}} $<TARGET_FILE:mp_coll_move> sweep)
  endforeach()
  foreach(v a b c d noshm)
    loom_nodes_test(${t}.coll.reduce.${v} ${k} ${n} coll_reduce
                    ARGS ${_red_${v}} $<TARGET_FILE:mp_coll_reduce>)
  endforeach()
  loom_nodes_test(${t}.coll.hier.reduce ${k} ${n} coll_reduce
                  ARGS ${_hier_forced} $<TARGET_FILE:mp_coll_reduce>)
  loom_nodes_test(${t}.coll.hier.move ${k} ${n} coll_move
                  ARGS ${_hier_forced} $<TARGET_FILE:mp_coll_move> sweep)
  loom_nodes_test(${t}.coll.hier.barrier ${k} ${n} coll_barrier
                  ARGS ${_hier_forced} $<TARGET_FILE:mp_coll_barrier>)
endforeach()

# Randomized traffic (fixed seeds), ~2 s each.
loom_nodes_test(mp.nodes2.5.p2p.stress 2 5 p2p_stress ARGS $<TARGET_FILE:mp_p2p_stress> 777 2)
loom_nodes_test(mp.nodes3.8.p2p.stress 3 8 p2p_stress ARGS $<TARGET_FILE:mp_p2p_stress> 4242 2)

# Flow control: 100 000 small messages from 7 ranks to a busy rank 0, with
# shm and ofi senders mixed (2 nodes) and with every sender remote (8).
loom_nodes_test(mp.nodes2.8.p2p.flood 2 8 p2p_flood ARGS $<TARGET_FILE:mp_p2p_flood>)
loom_nodes_test(mp.nodes8.8.p2p.flood 8 8 p2p_flood ARGS $<TARGET_FILE:mp_p2p_flood>)
loom_nodes_test(mp.nodes8.8.p2p.flood_rxm 8 8 p2p_flood
                ARGS -x LOOM_OFI_PROVIDER=tcp $<TARGET_FILE:mp_p2p_flood>)

# Every protocol between nodes forced: all rendezvous, rendezvous by
# streamed records, reads in many small pieces, tiny flow-control windows
# and buffer pools, and the other TCP provider.
set(_ofi_protocols
  "all_rndv:LOOM_OFI_EAGER_MAX=0"
  "eager_1k:LOOM_OFI_EAGER_MAX=1k"
  "rndv_pipeline:LOOM_OFI_RNDV=pipeline"
  "small_reads:LOOM_OFI_RNDV_CHUNK=4k,LOOM_OFI_RNDV_DEPTH=2"
  "tiny_windows:LOOM_OFI_CREDITS=2,LOOM_OFI_TX_BUFFERS=8,LOOM_OFI_RX_BUFFERS=8"
  "rxm:LOOM_OFI_PROVIDER=tcp")
foreach(p ${_ofi_protocols})
  string(FIND "${p}" ":" colon)
  string(SUBSTRING "${p}" 0 ${colon} pname)
  math(EXPR from "${colon} + 1")
  string(SUBSTRING "${p}" ${from} -1 penv)
  string(REPLACE "," ";" penv "${penv}")
  set(env)
  foreach(e ${penv})
    list(APPEND env -x ${e})
  endforeach()
  loom_nodes_test(mp.nodes2.3.p2p.exchange_${pname} 2 3 p2p_exchange TIMEOUT 120
                  ARGS ${env} $<TARGET_FILE:mp_p2p_exchange>)
  loom_nodes_test(mp.nodes2.2.p2p.exchange_vector_${pname} 2 2 p2p_exchange TIMEOUT 120
                  ARGS ${env} $<TARGET_FILE:mp_p2p_exchange> --vector)
  loom_nodes_test(mp.nodes2.4.p2p.order_${pname} 2 4 p2p_order
                  ARGS ${env} $<TARGET_FILE:mp_p2p_order>)
  loom_nodes_test(mp.nodes2.4.coll.reduce_${pname} 2 4 coll_reduce
                  ARGS ${env} $<TARGET_FILE:mp_coll_reduce>)
endforeach()

# The rules pick the hierarchical algorithms across real (simulated) nodes.
loom_mp_test(mp.nodes2.4.coll.selected TIMEOUT 60
             COMMAND --stdout-count "^coll_reduce: rank [0-9]+ ok=4"
             --stderr-re "MPI_COMM_WORLD: allreduce, 8 bytes, 4 ranks: hierarchical"
             --stderr-re "MPI_COMM_WORLD: reduce, 524288 bytes, 4 ranks: hierarchical"
             -- ${LOOMRUN} -n 4 --nodes 2 -x LOOM_DEBUG=coll $<TARGET_FILE:mp_coll_reduce>)

# Strangers: a process outside the job that connects to a rank's libfabric
# port and sends junk or Loom-shaped records is never matched and never
# disturbs the job (tests/mp/scripts/stranger.sh, progs/ofi_stranger.cc).
add_executable(ofi_stranger progs/ofi_stranger.cc)
target_link_libraries(ofi_stranger PRIVATE PkgConfig::OFI)
target_include_directories(ofi_stranger PRIVATE ${CMAKE_SOURCE_DIR})
set_target_properties(ofi_stranger PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
foreach(prov net tcp)
  add_test(NAME mp.nodes2.2.stranger.${prov}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scripts/stranger.sh ${LOOMRUN}
                   $<TARGET_FILE:mp_p2p_stress> $<TARGET_FILE:ofi_stranger> ${prov})
  set_tests_properties(mp.nodes2.2.stranger.${prov} PROPERTIES TIMEOUT 90 LABELS mp)
endforeach()

# Ranks that pass different roots, ops or collectives across nodes: the
# signature every collective message carries makes them fail instead of
# hanging or mixing data, and a call that waits a second asks its peers
# (coll/call_probe.h: no shared memory holds the ranks' descriptions
# here); 1 MiB (flat algorithms) and 64 KiB (hierarchical ones). With one
# rank per node at 64 KiB, both "roots" of a bcast or scatter send eagerly
# and complete: nothing waits, nothing can be compared (--undetected-ok).
foreach(cfg 2:2 2:3 2:4 2:5 3:4 3:5)
  string(REPLACE ":" ";" kn ${cfg})
  list(GET kn 0 k)
  list(GET kn 1 n)
  set(_ok "")
  if(k EQUAL n)
    set(_ok --undetected-ok)
  endif()
  loom_nodes_test(mp.nodes${k}.${n}.coll.mismatch ${k} ${n} coll_mismatch TIMEOUT 60
                  ARGS $<TARGET_FILE:mp_coll_mismatch>)
  loom_nodes_test(mp.nodes${k}.${n}.coll.mismatch_64k ${k} ${n} coll_mismatch TIMEOUT 60
                  ARGS $<TARGET_FILE:mp_coll_mismatch> 16384 ${_ok})
endforeach()

# 0 bytes and 2 GiB + 64 KiB between nodes (RMA reads in pieces, and the
# record pipeline), every byte checked; 4 GiB a job, so one at a time.
loom_nodes_test(mp.nodes2.2.p2p.large 2 2 p2p_large TIMEOUT 120 ARGS $<TARGET_FILE:mp_p2p_large>)
loom_nodes_test(mp.nodes2.3.p2p.large_pipeline 2 3 p2p_large TIMEOUT 120
                ARGS -x LOOM_OFI_RNDV=pipeline $<TARGET_FILE:mp_p2p_large>)
set_tests_properties(mp.nodes2.2.p2p.large mp.nodes2.3.p2p.large_pipeline PROPERTIES
                     RESOURCE_LOCK bigmem)

# Faults across nodes: a rank on the other node killed in a rendezvous, a
# rank on the other node calling MPI_Abort, a fatal error there: the job
# ends with the right status and a message naming the rank.
foreach(cfg 2:2 2:3)
  string(REPLACE ":" ";" kn ${cfg})
  list(GET kn 0 k)
  list(GET kn 1 n)
  math(EXPR last "${n} - 1")
  loom_mp_test(mp.nodes${k}.${n}.fault.die_in_rndv TIMEOUT 30 COMMAND --exit 137
               --stderr-re "rank ${last} .*killed by signal 9"
               -- ${LOOMRUN} -n ${n} --nodes ${k} $<TARGET_FILE:mp_faults> die-in-rndv)
  loom_mp_test(mp.nodes${k}.${n}.fault.segv TIMEOUT 30 COMMAND --exit 139
               --stderr-re "rank ${last} .*killed by signal 11"
               -- ${LOOMRUN} -n ${n} --nodes ${k} $<TARGET_FILE:mp_faults> segv)
  loom_mp_test(mp.nodes${k}.${n}.fault.abort TIMEOUT 30 COMMAND --exit 5
               --stderr-re "rank ${last}.*MPI_Abort"
               -- ${LOOMRUN} -n ${n} --nodes ${k} $<TARGET_FILE:mp_faults> abort 5)
  loom_mp_test(mp.nodes${k}.${n}.fault.fatal_comm TIMEOUT 30 COMMAND --exit-nonzero
               --stderr-re "rank ${last}: MPI_Comm_rank: MPI_ERR_COMM"
               -- ${LOOMRUN} -n ${n} --nodes ${k} $<TARGET_FILE:mp_faults> fatal-comm)
endforeach()
