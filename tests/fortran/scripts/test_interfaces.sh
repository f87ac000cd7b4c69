#!/usr/bin/env bash
# test_interfaces.sh BINDIR FORTRAN_TEST_DIR
# interfaces_mpi.f90 passes buffers of several types to the same routines of
# the `mpi` module; it must compile WITHOUT -fallow-argument-mismatch (the
# module declares every routine, choice buffers without type checks) and run
# at 1 and 3 ranks. Built here rather than by CMake so that a missing
# interface fails this test, not the whole build.
set -eu
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test_fortran_interfaces: $*" >&2; exit 1; }
fc=${LOOM_FC:-gfortran}
fflags=$("$bin/loomfort" -showme:compile | sed 's/ *-fallow-argument-mismatch//')
ldflags=$("$bin/loomfort" -showme:link)
(cd "$work" && $fc $fflags "$src/interfaces_mpi.f90" -o interfaces_mpi $ldflags) \
  || fail "interfaces_mpi.f90 does not build without -fallow-argument-mismatch"
for n in 1 3; do
  out=$("$bin/loomrun" -n $n "$work/interfaces_mpi") || fail "$n ranks: $out"
  [ "$(echo "$out" | grep -c "^fortran interfaces_mpi: checks passed")" -eq $n ] || fail "$n ranks: $out"
done
echo "test_fortran_interfaces: ok"
