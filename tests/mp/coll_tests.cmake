# Collectives through loomrun at 1, 2, 3, 4, 5 and 8 ranks.
loom_mp_program(mp_coll_barrier progs/coll_barrier.c)
foreach(n 1 2 3 4 5 8)
  loom_mp_test(mp.coll.barrier.${n} COMMAND --stdout-count "^coll_barrier: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_barrier>)
  loom_mp_test(mp.coll.barrier.dissemination.${n}
               COMMAND --stdout-count "^coll_barrier: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_COLL_BARRIER=dissemination
               $<TARGET_FILE:mp_coll_barrier>)
endforeach()

# The shared-memory collectives' own cases (coll/shm/), forced at every
# size, with the default slot and with 4 KiB slots (large messages in many
# pipelined steps); and with the rules' choices.
loom_mp_program(mp_coll_shm progs/coll_shm.c)
set(_shm_all -x LOOM_COLL_BARRIER=shm -x LOOM_COLL_BCAST=shm -x LOOM_COLL_REDUCE=shm
    -x LOOM_COLL_ALLREDUCE=shm -x LOOM_COLL_ALLGATHER=shm)
foreach(n 1 2 3 4 5 8)
  loom_mp_test(mp.coll.shm.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_shm: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} ${_shm_all} $<TARGET_FILE:mp_coll_shm>)
  loom_mp_test(mp.coll.shm.slot4k.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_shm: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} ${_shm_all} -x LOOM_COLL_SHM_SLOT=4096
               $<TARGET_FILE:mp_coll_shm>)
  # Two slots per rank (every step waits for the slowest rank) and 64 (ranks
  # run far ahead, as oversubscribed nodes get by default).
  foreach(depth 2 64)
    loom_mp_test(mp.coll.shm.depth${depth}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^coll_shm: rank [0-9]+ ok=${n}"
                 -- ${LOOMRUN} -n ${n} ${_shm_all} -x LOOM_COLL_SHM_SLOT=4096
                 -x LOOM_COLL_SHM_DEPTH=${depth} $<TARGET_FILE:mp_coll_shm>)
  endforeach()
  loom_mp_test(mp.coll.shm.cma.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_shm: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_COLL_ALLREDUCE=cma $<TARGET_FILE:mp_coll_shm>)
  loom_mp_test(mp.coll.shm.auto.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_shm: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_shm>)
endforeach()
# The rules pick the shared-memory algorithms on one node.
loom_mp_test(mp.coll.shm.selected TIMEOUT 60
             COMMAND --stderr-re "allreduce, 8 bytes, 3 ranks: shm"
             -- ${LOOMRUN} -n 3 -x LOOM_DEBUG=coll $<TARGET_FILE:mp_coll_shm>)

# Overlapping send and receive buffers: MPI_ERR_BUFFER before anything starts
# (gather and scatter at the root only), the communicator usable afterwards.
loom_mp_program(mp_coll_alias progs/coll_alias.c)
foreach(n 1 2 3 4)
  loom_mp_test(mp.coll.alias.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_alias: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_alias>)
endforeach()

# Ranks whose counts differ in small calls: MPI_ERR_TRUNCATE where it must
# be seen, the communicator usable after; different step counts poison it.
loom_mp_program(mp_coll_lengths progs/coll_lengths.c)
foreach(n 2 3 4)
  loom_mp_test(mp.coll.lengths.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_lengths: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_lengths>)
endforeach()

# Ranks that disagree about the root (or the collective) on the message-based
# algorithms get an error instead of hanging (ShmColl::checkCall).
loom_mp_program(mp_coll_mismatch progs/coll_mismatch.c)
foreach(n 2 3 4 5)
  loom_mp_test(mp.coll.mismatch.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_mismatch: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_mismatch>)
endforeach()
# 2 MiB per rank: where ranks outnumber cores, the shared-memory bcast and
# scatter root runs 64 steps of 16 KiB ahead within a call (shm_steps.h,
# rootWindow), so 1 MiB calls rely on the root's look at the peers already
# in the call, and 2 MiB calls on its wait at step 64.
foreach(n 3 4)
  loom_mp_test(mp.coll.mismatch.2m.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_mismatch: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_mismatch> 524288)
endforeach()
# A bcast whose ranks pass different counts (root 16 MiB, the others 40 B),
# then an allreduce: no rank may hang (the ranks may pick different
# algorithms for the bcast), with the rules and with each bcast algorithm.
loom_mp_program(mp_coll_truncate progs/coll_truncate.c)
foreach(n 2 3 4)
  foreach(alg rules shm binomial scatter_allgather linear)
    if(alg STREQUAL "rules")
      set(force "")
    else()
      set(force -x LOOM_COLL_BCAST=${alg})
    endif()
    loom_mp_test(mp.coll.truncate.${alg}.${n} TIMEOUT 30
                 COMMAND --stdout-count "^coll_truncate: rank [0-9]+ ok$=${n}"
                 -- ${LOOMRUN} -n ${n} ${force} $<TARGET_FILE:mp_coll_truncate>)
  endforeach()
  # Other mismatches where the ranks pick different algorithms.
  foreach(mode root-small root-small-shm reduce allgather)
    loom_mp_test(mp.coll.truncate.${mode}.${n} TIMEOUT 30
                 COMMAND --stdout-count "^coll_truncate: rank [0-9]+ ok$=${n}"
                 -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_truncate> ${mode})
  endforeach()
endforeach()

# Ranks split into virtual nodes of two (the hierarchical and flat message
# algorithms of several nodes): the calls' signatures still live in the real
# node's segment.
foreach(n 4 5)
  loom_mp_test(mp.coll.mismatch.virtual.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_mismatch: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_COLL_VIRTUAL_NODE_SIZE=2
               $<TARGET_FILE:mp_coll_mismatch>)
  loom_mp_test(mp.coll.mismatch.virtual_64k.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_mismatch: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_COLL_VIRTUAL_NODE_SIZE=2
               $<TARGET_FILE:mp_coll_mismatch> 16384)
endforeach()
foreach(n 2 3)
  loom_mp_test(mp.coll.mismatch.linear.${n} TIMEOUT 120
               COMMAND --stdout-count "^coll_mismatch: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_COLL_BCAST=binomial -x LOOM_COLL_REDUCE=linear
               -x LOOM_COLL_GATHER=linear -x LOOM_COLL_SCATTER=linear
               $<TARGET_FILE:mp_coll_mismatch>)
endforeach()
