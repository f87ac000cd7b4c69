#!/usr/bin/env bash
# test_wrappers.sh BINDIR HELLO_SOURCE
# The compiler wrappers: -show and the -showme:* queries print sensible lines,
# and a program built with mpicc/loomcc runs under loomrun.
set -eu
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test_wrappers: $*" >&2; exit 1; }

for w in loomcc mpicc loomcxx mpicxx; do
  [ -x "$bin/$w" ] || fail "$bin/$w missing"
done
[ -x "$bin/mpirun" ] && [ -x "$bin/mpiexec" ] || fail "mpirun/mpiexec links missing"

show=$("$bin/mpicc" -show foo.c -o foo)
case "$show" in
  "cc -I"*"/include foo.c -o foo -L"*"-lloom"*) ;;
  *) fail "unexpected -show line: $show" ;;
esac
[ "$("$bin/loomcc" --showme -c foo.c)" = "$("$bin/loomcc" -showme:compile | sed 's/^/cc /') -c foo.c" ] \
  || fail "-c must not add link flags: $("$bin/loomcc" --showme -c foo.c)"
"$bin/mpicc" -showme:link | grep -q -- "-lloom" || fail "-showme:link lacks -lloom"
[ -f "$("$bin/mpicc" -showme:incdirs)/mpi.h" ] || fail "-showme:incdirs does not hold mpi.h"
"$bin/mpicxx" -show | grep -q "^c++ " || fail "mpicxx does not use c++"
LOOM_CC=gcc "$bin/mpicc" -show | grep -q "^gcc " || fail "LOOM_CC is ignored"

# Build C and C++ programs and run them.
"$bin/mpicc" -O2 -Wall -Werror "$src" -o "$work/hello_c"
cp "$src" "$work/hello.cc"
"$bin/mpicxx" -O2 -Wall -Werror "$work/hello.cc" -o "$work/hello_cxx"
"$bin/mpicc" -c "$src" -o "$work/hello.o" && "$bin/mpicc" "$work/hello.o" -o "$work/hello_o"
for exe in hello_c hello_cxx hello_o; do
  out=$("$bin/mpirun" -n 2 "$work/$exe")
  [ "$(echo "$out" | grep -c "^Hello from rank")" -eq 2 ] || fail "$exe: $out"
done
echo "test_wrappers: ok"
