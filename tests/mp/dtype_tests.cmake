# Datatypes: envelope/contents for every combiner, match_size / f90 /
# value_index / names, datatype and MPI-1 attributes, external32 packing,
# darray layouts and darray/subarray messages between ranks.
# Included by tests/mp/CMakeLists.txt (loom_mp_program, loom_mp_test, LOOMRUN).
foreach(prog dtype_contents dtype_named dtype_attr dtype_external dtype_darray)
  loom_mp_program(mp_${prog} progs/${prog}.c)
  loom_mp_test(mp.${prog}.singleton TIMEOUT 60
               COMMAND --stdout-count "^${prog}: rank 0: [0-9]+ checks passed$=1"
               -- $<TARGET_FILE:mp_${prog}>)
  foreach(n 1 2 3)
    loom_mp_test(mp.${prog}.${n} TIMEOUT 120
                 COMMAND --stdout-count "^${prog}: rank [0-9]+: [0-9]+ checks passed$=${n}"
                 -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_${prog}>)
  endforeach()
endforeach()
