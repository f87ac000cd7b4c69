# Info objects, communicator hints, MPI_Alloc_mem, the ABI queries, sessions
# and group-based communicator creation. Singleton and loomrun -n 1..5.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
set(LOOM_INFO_TEST_RANKS 1 2 3 4 5)
foreach(prog info_objects abi_queries)
  loom_mp_program(mp_${prog} progs/${prog}.c)
  loom_mp_test(mp.${prog}.singleton TIMEOUT 60
               COMMAND --stdout-count "^${prog}: rank 0: [0-9]+ checks passed$=1"
               -- $<TARGET_FILE:mp_${prog}> one two)
  foreach(n ${LOOM_INFO_TEST_RANKS})
    loom_mp_test(mp.${prog}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^${prog}: rank [0-9]+: [0-9]+ checks passed$=${n}"
                 -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_${prog}> one two)
  endforeach()
endforeach()

# Sessions alone and next to MPI_Init, in both orders.
loom_mp_program(mp_sessions progs/sessions.c)
foreach(mode sessions world-first session-first)
  loom_mp_test(mp.sessions.${mode}.singleton TIMEOUT 60
               COMMAND --stdout-count "^sessions: rank 0: [0-9]+ checks passed$=1"
               -- $<TARGET_FILE:mp_sessions> ${mode})
  foreach(n ${LOOM_INFO_TEST_RANKS})
    loom_mp_test(mp.sessions.${mode}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^sessions: rank [0-9]+: [0-9]+ checks passed$=${n}"
                 -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_sessions> ${mode})
  endforeach()
endforeach()
