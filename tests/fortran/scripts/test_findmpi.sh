#!/usr/bin/env bash
# test_findmpi.sh MPIFORT LAUNCHER FORTRAN_TEST_DIR [LIBNAME]
# CMake's FindMPI, pointed at an MPI Fortran wrapper, finds the Fortran
# component with mpif.h and both modules; the three hello programs it builds
# run at 3 ranks under LAUNCHER. LIBNAME (default loom_fortran) must be among
# MPI_Fortran_LIBRARIES. (Also runs against Open MPI: mpifort.openmpi.)
set -eu
fc=$1
launcher=$2
src=$3
lib=${4:-loom_fortran}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { cat "$work/cfg.log" >&2 || true; echo "test_fortran_findmpi: $*" >&2; exit 1; }
cmake -S "$src/findmpi" -B "$work/b" -DMPI_Fortran_COMPILER="$fc" -DSRC="$src" \
  >"$work/cfg.log" 2>&1 || fail "configure failed"
for v in MPI_Fortran_FOUND MPI_Fortran_HAVE_F77_HEADER MPI_Fortran_HAVE_F90_MODULE \
         MPI_Fortran_HAVE_F08_MODULE; do
  grep -Eq -- "-- $v=(TRUE|ON|1)$" "$work/cfg.log" || fail "$v is not true"
done
grep -q "MPI_Fortran_LIBRARIES=.*lib$lib" "$work/cfg.log" || fail "FindMPI did not pick lib$lib"
cmake --build "$work/b" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build failed"; }
for exe in hello_f77 hello_mpi hello_f08; do
  out=$($launcher -n 3 "$work/b/$exe")
  [ "$(echo "$out" | grep -c "^fortran $exe: checks passed")" -eq 3 ] || fail "$exe: $out"
done
echo "test_fortran_findmpi: ok"
