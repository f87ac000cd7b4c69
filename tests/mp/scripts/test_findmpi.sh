#!/usr/bin/env bash
# test_findmpi.sh BINDIR HELLO_SOURCE PROJECT_DIR
# CMake's FindMPI, pointed at Loom's mpicc, finds Loom; the program it builds
# runs under loomrun.
set -eu
bin=$1
src=$2
proj=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake -S "$proj" -B "$work/b" -DMPI_C_COMPILER="$bin/mpicc" -DHELLO_SOURCE="$src" \
  >"$work/cfg.log" 2>&1 || { cat "$work/cfg.log"; exit 1; }
grep -q "MPI_C_LIBRARIES=.*libloom" "$work/cfg.log" || { cat "$work/cfg.log"; echo "FindMPI did not pick libloom" >&2; exit 1; }
grep -q "MPI_C_VERSION=5.0" "$work/cfg.log" || { cat "$work/cfg.log"; echo "FindMPI did not see MPI 5.0" >&2; exit 1; }
cmake --build "$work/b" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
out=$("$bin/loomrun" -n 3 "$work/b/user_hello")
[ "$(echo "$out" | grep -c "^Hello from rank .* of 3")" -eq 3 ] || { echo "$out"; exit 1; }
echo "test_findmpi: ok"
