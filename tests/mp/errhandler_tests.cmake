# User error handlers on communicators and user error classes/codes/strings
# (errhandler), at 1-5 ranks and as a singleton.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
loom_mp_program(mp_errhandler progs/errhandler.c)
loom_mp_test(mp.errhandler.singleton TIMEOUT 60
             COMMAND --stdout-count "^errhandler: rank 0: [0-9]+ checks passed$=1"
             -- $<TARGET_FILE:mp_errhandler>)
foreach(n 1 2 3 4 5)
  loom_mp_test(mp.errhandler.${n} TIMEOUT 120
               COMMAND --stdout-count "^errhandler: rank [0-9]+: [0-9]+ checks passed$=${n}"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_errhandler>)
endforeach()
