# loomrun's own tests: exit codes, messages, signals, stdio, timeouts,
# bindings, cleanup. They drive loomrun with lt_client, a plain PMIx client
# that misbehaves on request, so they do not depend on the MPI library.
# Included from tests/mp/CMakeLists.txt.
set(LT_DIR ${CMAKE_CURRENT_LIST_DIR}/launcher)

add_executable(lt_client ${LT_DIR}/lt_client.c)
target_link_libraries(lt_client PRIVATE PkgConfig::PMIX)
set_target_properties(lt_client PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# loom_launcher_test(<name> <script> [args...])
function(loom_launcher_test name script)
  add_test(NAME launcher.${name} COMMAND bash ${LT_DIR}/${script} ${ARGN})
  set_tests_properties(launcher.${name} PROPERTIES
    TIMEOUT 60
    LABELS "mp;launcher"
    ENVIRONMENT "LOOMRUN=$<TARGET_FILE:loomrun>;LT_CLIENT=$<TARGET_FILE:lt_client>")
endfunction()

# 8 ranks oversubscribe a 2-core machine on purpose.
foreach(n 1 2 3 4 8)
  loom_launcher_test(ok.${n} job_ok.sh ${n})
  loom_launcher_test(fail.${n} job_fail.sh ${n})
endforeach()
foreach(n 2 8)
  loom_launcher_test(stdio.${n} stdio.sh ${n})
endforeach()
loom_launcher_test(signals.3 signals.sh 3)
loom_launcher_test(signals.8 signals.sh 8)
loom_launcher_test(timeout timeout.sh)
loom_launcher_test(export export.sh)
loom_launcher_test(options options.sh)
loom_launcher_test(bindings bindings.sh)
loom_launcher_test(cleanup cleanup.sh)
