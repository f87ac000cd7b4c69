# Tests of what a user builds with: wrappers, FindMPI, the installed tree.
set(HELLO_SRC ${CMAKE_CURRENT_SOURCE_DIR}/progs/hello.c)
set(BUILD_BIN ${CMAKE_BINARY_DIR}/bin)
add_test(NAME build.wrappers
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scripts/test_wrappers.sh ${BUILD_BIN} ${HELLO_SRC})
add_test(NAME build.findmpi
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scripts/test_findmpi.sh ${BUILD_BIN} ${HELLO_SRC}
                 ${CMAKE_CURRENT_SOURCE_DIR}/findmpi)
add_test(NAME build.install
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scripts/test_install.sh ${CMAKE_BINARY_DIR}
                 ${HELLO_SRC} ${CMAKE_SOURCE_DIR})
set_tests_properties(build.wrappers build.findmpi build.install
                     PROPERTIES TIMEOUT 180 LABELS "build;mp")

# The benchmark programs keep building and giving correct results against
# Loom: each runs once with tiny sizes and --check (no timing is asserted).
add_test(NAME bench.check
         COMMAND ${CMAKE_COMMAND} -E env LOOM_PREFIX=${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR}/bench/run --check-only --impl loom
                 --out ${CMAKE_BINARY_DIR}/bench-check)
set_tests_properties(bench.check PROPERTIES TIMEOUT 300 LABELS "bench;mp"
                     FAIL_REGULAR_EXPRESSION "SKIP|does not build")

# The one-sided benchmark (not in bench/run's default set): every mode once,
# and the other synchronisations and window flavors on one mode each.
add_test(NAME bench.check.rma
         COMMAND ${CMAKE_COMMAND} -E env LOOM_PREFIX=${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR}/bench/run --check-only --impl loom
                 --bench rma,rma:put_lat:fence:create,rma:get_lat:lock:dynamic,rma:acc_lat:fence
                 --out ${CMAKE_BINARY_DIR}/bench-check-rma)
set_tests_properties(bench.check.rma PROPERTIES TIMEOUT 300 LABELS "bench;mp"
                     FAIL_REGULAR_EXPRESSION "SKIP|does not build|FAIL")
