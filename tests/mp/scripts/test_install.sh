#!/usr/bin/env bash
# test_install.sh BUILD_DIR HELLO_SOURCE SOURCE_DIR
# `cmake --install` gives the same layout as the build tree plus pkg-config
# and CMake packages; programs built against the installed tree (through
# mpicc, pkg-config and find_package(Loom)) run under the installed loomrun.
set -eu
build=$1
src=$2
srcdir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test_install: $*" >&2; exit 1; }
p="$work/prefix"
cmake --install "$build" --prefix "$p" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
for f in bin/loomrun bin/mpirun bin/mpiexec bin/loomcc bin/loomcxx bin/mpicc bin/mpicxx \
         bin/loom-info include/mpi.h include/mpi-ext.h man/man1/loomrun.1 man/man7/loom.7 \
         man/man3/MPI_Init.3; do
  [ -e "$p/$f" ] || [ -e "$p/share/$f" ] || fail "$f not installed"
done
libdir=$(cd "$p" && ls -d lib*/libloom.so | head -1 | xargs dirname)
[ -n "$libdir" ] || fail "libloom.so not installed"
[ -f "$p/$libdir/pkgconfig/loom.pc" ] || fail "loom.pc not installed"
[ -f "$p/$libdir/cmake/Loom/LoomConfig.cmake" ] || fail "LoomConfig.cmake not installed"

# Moved prefixes keep working: the wrappers and loom.pc are relocatable.
mv "$p" "$work/moved"
p="$work/moved"
"$p/bin/mpicc" "$src" -o "$work/h1"
PKG_CONFIG_PATH="$p/$libdir/pkgconfig" cc "$src" -o "$work/h2" \
  $(PKG_CONFIG_PATH="$p/$libdir/pkgconfig" pkg-config --cflags --libs loom)
cmake -S "$srcdir/tests/mp/findloom" -B "$work/b" -DCMAKE_PREFIX_PATH="$p" \
  -DHELLO_SOURCE="$src" >"$work/cfg.log" 2>&1 || { cat "$work/cfg.log"; exit 1; }
cmake --build "$work/b" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
for exe in "$work/h1" "$work/h2" "$work/b/user_hello"; do
  out=$("$p/bin/loomrun" -n 2 "$exe")
  [ "$(echo "$out" | grep -c "^Hello from rank")" -eq 2 ] || fail "$exe: $out"
  used=$(readlink -f "$(ldd "$exe" | awk '/libloom/ {print $3}')")
  [ "$used" = "$(readlink -f "$p/$libdir/libloom.so")" ] || fail "$exe uses $used, not the installed libloom"
done
"$p/bin/loom-info" --version | grep -q "^Loom " || fail "installed loom-info broken"
echo "test_install: ok"
