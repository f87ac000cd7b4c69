# The MPI 4.0 large-count (_c) functions. At small counts every _c function
# is checked against its int twin at 1-4 ranks (bigcount_*.c; bigcount_more:
# persistent and neighbourhood collectives, Isendrecv, partitioned,
# buffers, external32, darray, status); the large
# tests move more than INT_MAX bytes at 2 ranks, on one node and across two
# simulated nodes. Each large test holds about 2 GiB per rank: they share
# the RESOURCE_LOCK bigcount_memory so ctest never runs two at once.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
foreach(prog bigcount_p2p bigcount_type bigcount_coll bigcount_more)
  loom_mp_program(mp_${prog} progs/${prog}.c)
  loom_mp_test(mp.${prog}.singleton TIMEOUT 60
               COMMAND --stdout-count "^${prog}: rank 0: [0-9]+ checks passed$=1"
               -- $<TARGET_FILE:mp_${prog}>)
  foreach(n 1 2 3 4)
    loom_mp_test(mp.${prog}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^${prog}: rank [0-9]+: [0-9]+ checks passed$=${n}"
                 -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_${prog}>)
  endforeach()
endforeach()

loom_mp_program(mp_bigcount_large progs/bigcount_large.c)
set(_bigcount_large p2p bcast)
foreach(mode ${_bigcount_large})
  loom_mp_test(mp.bigcount_large.${mode} TIMEOUT 300
               COMMAND --stdout-count "^bigcount_large: rank [0-9]+ ok$=2"
               -- ${LOOMRUN} -n 2 $<TARGET_FILE:mp_bigcount_large> ${mode})
  set_tests_properties(mp.bigcount_large.${mode} PROPERTIES RESOURCE_LOCK bigcount_memory)
endforeach()
if(LOOM_HAVE_OFI)
  loom_mp_test(mp.bigcount_large.p2p.nodes2 TIMEOUT 300
               COMMAND --stdout-count "^bigcount_large: rank [0-9]+ ok$=2"
               -- ${LOOMRUN} -n 2 --nodes 2 $<TARGET_FILE:mp_bigcount_large> p2p)
  set_tests_properties(mp.bigcount_large.p2p.nodes2 PROPERTIES RESOURCE_LOCK bigcount_memory)
endif()
