# Communicators, groups and attributes: constructors, compare, names,
# attribute callbacks, context-id recycling and isolation, error classes.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
set(LOOM_COMM_TEST_RANKS 1 2 3 4 5 8)
foreach(prog comm_split comm_attr comm_loop comm_errors comm_idup)
  loom_mp_program(mp_${prog} progs/${prog}.c)
  loom_mp_test(mp.${prog}.singleton TIMEOUT 60
               COMMAND --stdout-count "^${prog}: rank 0: [0-9]+ checks passed$=1"
               -- $<TARGET_FILE:mp_${prog}>)
  foreach(n ${LOOM_COMM_TEST_RANKS})
    loom_mp_test(mp.${prog}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^${prog}: rank [0-9]+: [0-9]+ checks passed$=${n}"
                 -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_${prog}>)
  endforeach()
endforeach()
