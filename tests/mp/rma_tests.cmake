# One-sided communication (RMA): the programs of progs/rma_*.c, written to
# the MPI standard alone and checked against Open MPI and MPICH (see the
# head of each program and of rma_errors.c for what those peers do
# otherwise):
#   rma_basic   window flavors, Put/Get with fence, derived datatypes, the
#               _c forms, window attributes, name, info, keyvals, errhandlers
#   rma_sync    fence assertions, post/start/complete/wait/test, lock and
#               unlock, lock_all, every flush, Win_sync, Rput/Rget/...
#   rma_atomic  overlapping accumulates with exact results, a Fetch_and_op
#               counter 10,000 x every rank, lock-based read-modify-write,
#               a Compare_and_swap spin lock
#   rma_shared  MPI_Win_allocate_shared: queries, contiguity, loads/stores
#   rma_errors  wrong-epoch and bad-argument calls, by error class
#   rma_dynamic many attached regions, adjacent ones, one attached late
#   rma_sizes   puts and gets of sizes 0, 1, odd, ~200 KB and around a
#               threshold, every epoch kind and flavor, strided against
#               contiguous, range errors, a counter under exclusive locks
# At 1-5 ranks on one node, rma_basic as a singleton too, and, with the
# libfabric transport, at 2, 3 and 5 ranks on 2 simulated nodes.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test,
# LOOMRUN); included more than once (nodes_tests.cmake), it adds nothing.
include_guard(GLOBAL)

set(_rma_progs basic sync atomic shared errors sizes dynamic)
foreach(p ${_rma_progs})
  loom_mp_program(mp_rma_${p} progs/rma_${p}.c)
endforeach()

loom_mp_test(mp.rma.basic.singleton TIMEOUT 60
             COMMAND --stdout-count "^rma_basic: rank 0: [0-9]+ checks passed$=1"
             -- $<TARGET_FILE:mp_rma_basic>)
foreach(p ${_rma_progs})
  foreach(n 1 2 3 4 5)
    loom_mp_test(mp.rma.${p}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^rma_${p}: rank [0-9]+: [0-9]+ checks passed$=${n}"
                 -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_rma_${p}>)
  endforeach()
endforeach()

# Across 2 nodes: ranks placed blockwise, so every window spans both
# transports (rma_shared's node communicators have ranks {1,1}, {2,1},
# {3,2}).
if(LOOM_HAVE_OFI)
  foreach(p ${_rma_progs})
    foreach(n 2 3 5)
      loom_mp_test(mp.rma.${p}.nodes2.${n} TIMEOUT 120
                   COMMAND --stdout-count "^rma_${p}: rank [0-9]+: [0-9]+ checks passed$=${n}"
                   -- ${LOOMRUN} -n ${n} --nodes 2 $<TARGET_FILE:mp_rma_${p}>)
    endforeach()
  endforeach()
endif()

# Across 2 nodes, contiguous puts and gets to the other node's ranks as
# libfabric RMA writes and reads (rma/native.cc) forced for every size
# (ofi), or turned off (noofi: every operation a message), or from 4 KiB
# up with rma_sizes trying 4095, 4096 and 4097 bytes (ofi4k); and RMA over
# the other TCP provider (tcp;ofi_rxm).
if(LOOM_HAVE_OFI)
  foreach(p basic sync atomic errors sizes)
    foreach(n 3 5)
      loom_mp_test(mp.rma.${p}.nodes2.${n}.ofi TIMEOUT 120
                   COMMAND --stdout-count "^rma_${p}: rank [0-9]+: [0-9]+ checks passed$=${n}"
                   -- ${LOOMRUN} -n ${n} --nodes 2 -x LOOM_RMA_OFI=1 -x LOOM_RMA_OFI_MIN=0
                      $<TARGET_FILE:mp_rma_${p}>)
      loom_mp_test(mp.rma.${p}.nodes2.${n}.noofi TIMEOUT 120
                   COMMAND --stdout-count "^rma_${p}: rank [0-9]+: [0-9]+ checks passed$=${n}"
                   -- ${LOOMRUN} -n ${n} --nodes 2 -x LOOM_RMA_OFI=0 $<TARGET_FILE:mp_rma_${p}>)
    endforeach()
  endforeach()
  foreach(n 3 5)
    loom_mp_test(mp.rma.sizes.nodes2.${n}.ofi4k TIMEOUT 120
                 COMMAND --stdout-count "^rma_sizes: rank [0-9]+: [0-9]+ checks passed$=${n}"
                 -- ${LOOMRUN} -n ${n} --nodes 2 -x LOOM_RMA_OFI_MIN=4096
                    $<TARGET_FILE:mp_rma_sizes> 4096)
  endforeach()
  foreach(p sizes sync)
    loom_mp_test(mp.rma.${p}.nodes2.3.rxm TIMEOUT 120
                 COMMAND --stdout-count "^rma_${p}: rank [0-9]+: [0-9]+ checks passed$=3"
                 -- ${LOOMRUN} -n 3 --nodes 2 -x LOOM_OFI_PROVIDER=tcp $<TARGET_FILE:mp_rma_${p}>)
  endforeach()
endif()

# Windows of user memory with cross-memory attach turned off: operations to
# ranks of the node become messages the target applies (rma/am_target.cc),
# the path windows spanning nodes take, here with every flavor.
foreach(p basic sync atomic)
  loom_mp_test(mp.rma.${p}.nocma.3 TIMEOUT 120
               COMMAND --stdout-count "^rma_${p}: rank [0-9]+: [0-9]+ checks passed$=3"
               -- ${LOOMRUN} -n 3 -x LOOM_RMA_CMA=0 $<TARGET_FILE:mp_rma_${p}>)
endforeach()

# Passive target while the target computes (no MPI call): on one node the
# origins need nothing from it; across nodes and without CMA the progress
# thread serves them (core/progress_async.h); with LOOM_ASYNC_PROGRESS=0
# across nodes the target must stall (the test can fail).
loom_mp_program(mp_rma_passive progs/rma_passive.c)
foreach(n 2 3)
  loom_mp_test(mp.rma.passive.${n} TIMEOUT 60
               COMMAND --stdout-count "^rma_passive: rank [0-9]+ ok$=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_rma_passive> 20)
endforeach()
loom_mp_test(mp.rma.passive.nocma.3 TIMEOUT 60
             COMMAND --stdout-count "^rma_passive: rank [0-9]+ ok$=3"
             -- ${LOOMRUN} -n 3 -x LOOM_RMA_CMA=0 $<TARGET_FILE:mp_rma_passive> 20)
if(LOOM_HAVE_OFI)
  foreach(n 2 3 5)
    loom_mp_test(mp.rma.passive.nodes2.${n} TIMEOUT 60
                 COMMAND --stdout-count "^rma_passive: rank [0-9]+ ok$=${n}"
                 -- ${LOOMRUN} -n ${n} --nodes 2 $<TARGET_FILE:mp_rma_passive> 20)
  endforeach()
  # The origins' gets as RMA reads (forced), or as messages: the target's
  # progress thread completes either while it computes.
  foreach(v "ofi:LOOM_RMA_OFI_MIN=0" "noofi:LOOM_RMA_OFI=0")
    string(REPLACE ":" ";" kv "${v}")
    list(GET kv 0 vname)
    list(GET kv 1 venv)
    loom_mp_test(mp.rma.passive.nodes2.3.${vname} TIMEOUT 60
                 COMMAND --stdout-count "^rma_passive: rank [0-9]+ ok$=3"
                 -- ${LOOMRUN} -n 3 --nodes 2 -x ${venv} $<TARGET_FILE:mp_rma_passive> 20)
  endforeach()
  loom_mp_test(mp.rma.passive.nodes2.stall TIMEOUT 60
               COMMAND --stdout-count "^rma_passive: rank [0-9]+ ok$=2"
               -- ${LOOMRUN} -n 2 --nodes 2 -x LOOM_ASYNC_PROGRESS=0
                  $<TARGET_FILE:mp_rma_passive> 2 stall)
endif()
