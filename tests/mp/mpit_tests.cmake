# The MPI tools interface (MPI_T): control variables (LOOM_SHM_EAGER_MAX as
# loomrun -x exports it), categories, the absent events, performance
# variables (the p2p counters over shm, and over ofi across two simulated
# nodes), before MPI_Init and after MPI_Finalize.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
loom_mp_program(mp_mpit progs/mpit.c)
loom_mp_test(mp.mpit.singleton TIMEOUT 60
             COMMAND --stdout-count "^mpit: rank 0: [0-9]+ checks passed$=1"
             -- $<TARGET_FILE:mp_mpit>)
foreach(n 1 2 3)
  loom_mp_test(mp.mpit.${n} TIMEOUT 120
               COMMAND --stdout-count "^mpit: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} -x LOOM_SHM_EAGER_MAX=8k $<TARGET_FILE:mp_mpit> 8k shm)
endforeach()
if(LOOM_HAVE_OFI)
  loom_mp_test(mp.mpit.nodes2 TIMEOUT 120
               COMMAND --stdout-count "^mpit: rank [0-9]+: [0-9]+ checks passed$=2"
               -- ${LOOMRUN} -n 2 --nodes 2 $<TARGET_FILE:mp_mpit> 16k ofi)
endif()
