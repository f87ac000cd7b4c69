# Partitioned point-to-point (runtime/api/partitioned_api.cc): MPI_Psend_init,
# MPI_Precv_init, MPI_Pready(_range, _list), MPI_Parrived (part), at 1-4
# ranks and as a singleton.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
loom_mp_program(mp_part progs/part.c)
loom_mp_test(mp.part.singleton TIMEOUT 60
             COMMAND --stdout-count "^part: rank 0: [0-9]+ checks passed$=1"
             -- $<TARGET_FILE:mp_part>)
foreach(n 1 2 3 4)
  loom_mp_test(mp.part.${n} TIMEOUT 120
               COMMAND --stdout-count "^part: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_part>)
endforeach()
