#!/usr/bin/env bash
# test_wrappers.sh BINDIR FORTRAN_TEST_DIR
# The Fortran wrapper: loomfort and the mpifort/mpif90/mpif77 links exist,
# -show and the -showme:* queries print sensible lines (with
# -fallow-argument-mismatch for gfortran >= 10, not for other compilers),
# and programs in fixed form with mpif.h, with `use mpi` and `use mpi_f08`
# build (also in two steps) and run under loomrun.
set -eu
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test_fortran_wrappers: $*" >&2; exit 1; }

for w in loomfort mpifort mpif90 mpif77; do
  [ -x "$bin/$w" ] || fail "$bin/$w missing"
done
mismatch=""
fc=${LOOM_FC:-gfortran}
if "$fc" --version 2>/dev/null | head -n 1 | grep -q "^GNU Fortran" &&
   [ "$("$fc" -dumpversion | cut -d. -f1)" -ge 10 ]; then
  mismatch=" -fallow-argument-mismatch"
fi

show=$("$bin/mpifort" -show foo.f90 -o foo)
case "$show" in
  "$fc -I"*"/include$mismatch foo.f90 -o foo -L"*"-lloom_fortran -lloom"*) ;;
  *) fail "unexpected -show line: $show" ;;
esac
[ "$("$bin/mpif77" --showme -c foo.f)" = "$fc $("$bin/mpif77" -showme:compile) -c foo.f" ] \
  || fail "-c must not add link flags: $("$bin/mpif77" --showme -c foo.f)"
"$bin/mpif90" -showme:link | grep -q -- "-lloom_fortran -lloom" || fail "-showme:link lacks the libraries"
[ "$("$bin/loomfort" -showme:libs)" = "loom_fortran loom" ] || fail "-showme:libs"
inc=$("$bin/loomfort" -showme:incdirs)
for f in mpif.h mpi.mod mpi_f08.mod; do
  [ -f "$inc/$f" ] || fail "-showme:incdirs ($inc) does not hold $f"
done
LOOM_FC=/usr/bin/env "$bin/mpifort" -show | grep -q "^/usr/bin/env " || fail "LOOM_FC is ignored"
LOOM_FC=/usr/bin/env "$bin/mpifort" -showme:compile | grep -q -- "-fallow-argument-mismatch" &&
  fail "-fallow-argument-mismatch given to a compiler that is not gfortran"
"$bin/loomfort" --version | head -n 1 | grep -q "^loomfort (Loom) " || fail "--version"

# Build and run: one program per wrapper name, one in two steps, and the
# mpif.h argument-mismatch style.
"$bin/mpif77" -O1 "$src/hello_f77.f" -o "$work/hello_f77"
"$bin/mpif90" -O1 -Wall "$src/hello_mpi.f90" -o "$work/hello_mpi"
(cd "$work" && "$bin/mpifort" -c "$src/hello_f08.f90" -o hello_f08.o &&
  "$bin/mpifort" hello_f08.o -o hello_f08)
"$bin/mpif77" "$src/mismatch_f77.f" -o "$work/mismatch_f77"
for exe in hello_f77 hello_mpi hello_f08 mismatch_f77; do
  out=$("$bin/loomrun" -n 2 "$work/$exe")
  [ "$(echo "$out" | grep -c "^fortran $exe: checks passed")" -eq 2 ] || fail "$exe: $out"
done
echo "test_fortran_wrappers: ok"
