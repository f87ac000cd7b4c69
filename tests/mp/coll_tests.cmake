# Collectives through loomrun at 1, 2, 3, 4, 5 and 8 ranks.
loom_mp_program(mp_coll_barrier progs/coll_barrier.c)
foreach(n 1 2 3 4 5 8)
  loom_mp_test(mp.coll.barrier.${n} COMMAND --stdout-count "^coll_barrier: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_coll_barrier>)
endforeach()
