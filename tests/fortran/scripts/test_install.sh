#!/usr/bin/env bash
# test_install.sh BUILD_DIR FORTRAN_TEST_DIR
# The installed tree has the Fortran parts (loomfort and its links, mpif.h,
# mpi.mod, mpi_f08.mod, libloom_fortran, loom-fortran.pc, the man page), and
# programs built against it (loomfort after moving the prefix, pkg-config
# loom-fortran, find_package(Loom COMPONENTS Fortran)) run under the
# installed loomrun and use the installed libraries.
set -eu
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test_fortran_install: $*" >&2; exit 1; }
p="$work/prefix"
cmake --install "$build" --prefix "$p" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
for f in bin/loomfort bin/mpifort bin/mpif90 bin/mpif77 include/mpif.h include/mpi.mod \
         include/mpi_f08.mod man/man1/loomfort.1; do
  [ -e "$p/$f" ] || [ -e "$p/share/$f" ] || fail "$f not installed"
done
libdir=$(cd "$p" && ls -d lib*/libloom_fortran.so | head -1 | xargs dirname)
[ -n "$libdir" ] || fail "libloom_fortran.so not installed"
[ -f "$p/$libdir/pkgconfig/loom-fortran.pc" ] || fail "loom-fortran.pc not installed"

mv "$p" "$work/moved"
p="$work/moved"
"$p/bin/mpifort" "$src/hello_mpi.f90" -o "$work/h1"
export PKG_CONFIG_PATH="$p/$libdir/pkgconfig"
pkg-config --libs loom-fortran | grep -q -- "-lloom_fortran.*-lloom" || fail "pkg-config --libs loom-fortran"
(cd "$work" && gfortran "$src/hello_f08.f90" -o "$work/h2" $(pkg-config --cflags --libs loom-fortran))
cmake -S "$src/findloom" -B "$work/b" -DCMAKE_PREFIX_PATH="$p" -DSRC="$src" \
  >"$work/cfg.log" 2>&1 || { cat "$work/cfg.log"; exit 1; }
cmake --build "$work/b" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
for exe in "$work/h1" "$work/h2" "$work/b/hello_f08"; do
  out=$("$p/bin/loomrun" -n 2 "$exe")
  [ "$(echo "$out" | grep -c "checks passed")" -eq 2 ] || fail "$exe: $out"
  for l in libloom libloom_fortran; do
    used=$(readlink -f "$(ldd "$exe" | awk -v l="$l.so" '$1 ~ "^" l {print $3}')")
    [ "$used" = "$(readlink -f "$p/$libdir/$l.so")" ] || fail "$exe uses $used, not the installed $l"
  done
done
echo "test_fortran_install: ok"
