# Intercommunicators: constructors, queries, point-to-point, merge, split,
# create (inter_comm), and every collective with its MPI_I* form and the
# rooted cases MPI_ROOT / MPI_PROC_NULL (inter_coll). Two sides need two
# ranks; the singleton and 1-rank runs check the wrong-argument paths only.
# Included by tests/mp/CMakeLists.txt.
foreach(prog inter_comm inter_coll)
  loom_mp_program(mp_${prog} progs/${prog}.c)
  loom_mp_test(mp.${prog}.singleton TIMEOUT 60
               COMMAND --stdout-count "^${prog}: rank 0: [0-9]+ checks passed$=1"
               -- $<TARGET_FILE:mp_${prog}>)
  foreach(n 1 2 3 4 5)
    loom_mp_test(mp.${prog}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^${prog}: rank [0-9]+: [0-9]+ checks passed$=${n}"
                 -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_${prog}>)
  endforeach()
endforeach()
