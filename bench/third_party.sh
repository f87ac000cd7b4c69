#!/usr/bin/env bash
# Builds third-party MPI benchmarks, unmodified, against Loom and runs them
# once, to show what compiles, links and runs. Neither suite is in a package
# registry: give their source trees by path (never committed to Loom).
#
#   bench/third_party.sh [--osu DIR] [--imb DIR] [--build BUILD_DIR] [--ranks N]
#
#   --osu DIR    OSU Micro-Benchmarks 7.x source tree (with its configure)
#   --imb DIR    Intel MPI Benchmarks source tree (top Makefile, src_cpp/)
#   --build DIR  Loom build or install tree with bin/mpicc (default: build)
#   --ranks N    ranks per OSU/IMB job (default 2; collectives also at 4)
#
# Each suite is configured and built in BUILD_DIR/third_party/ from a copy of
# its tree. Every OSU program runs once with its defaults (pt2pt and
# one-sided at 2 ranks, collectives at --ranks and 4, the congestion tests at
# 4 ranks on 2 simulated nodes); IMB-MPI1 and IMB-NBC
# run their whole default lists with a short time limit per size. Prints one
# line per program: built or not, and the run's result (ok, or its exit code
# and the first error line); a summary at the end. A suite whose tree is not
# given or absent is skipped with a clear line.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
osu= imb= build=$here/../build ranks=2
LOOMRUN_EXTRA=  # extra loomrun options of one job
while [ $# -gt 0 ]; do
  case "$1" in
    --osu) osu=$2; shift 2 ;;
    --imb) imb=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "third_party.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd) || exit 2
mpicc=$build/bin/mpicc mpicxx=$build/bin/mpicxx loomrun=$build/bin/loomrun
[ -x "$mpicc" ] && [ -x "$loomrun" ] || { echo "no $mpicc or $loomrun: build Loom first" >&2; exit 2; }
work=$build/third_party
mkdir -p "$work"
nok=0 nfail=0 nbuilt=0 nunbuilt=0

# run NAME RANKS CMD...: one job with a timeout; one line of result.
run() {
  local name=$1 n=$2; shift 2
  local log=$work/logs/$name.$n.log
  mkdir -p "$work/logs"
  timeout 300 "$loomrun" -n "$n" $LOOMRUN_EXTRA "$@" > "$log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then
    printf '  %-34s %2d ranks  ok\n' "$name" "$n"; nok=$((nok + 1))
  else
    local why
    why=$(grep -m1 -E "MPI_ERR|error|Error|ERROR|Abort|abort" "$log" | cut -c1-110)
    [ $rc -eq 124 ] && why="timed out after 300 s"
    printf '  %-34s %2d ranks  exit %d: %s\n' "$name" "$n" "$rc" "${why:-see $log}"
    nfail=$((nfail + 1))
  fi
}

if [ -z "$osu" ]; then
  echo "OSU: skipped (no --osu DIR given)"
elif [ ! -x "$osu/configure" ]; then
  echo "OSU: skipped ($osu has no configure script)"
else
  echo "OSU Micro-Benchmarks from $osu:"
  rm -rf "$work/osu" && mkdir -p "$work/osu"
  (cd "$work/osu" && "$(cd "$osu" && pwd)/configure" CC="$mpicc" CXX="$mpicxx" \
     > configure.log 2>&1 && make -k -j"$(nproc)" > make.log 2>&1)
  echo "  (configure + make: $work/osu/{configure,make}.log)"
  for src in $(cd "$osu/c/mpi" && find . -name 'osu_*.c' | sort); do
    dir=$(dirname "$src") prog=$(basename "$src" .c)
    # Only the programs the suite's own Makefile builds (not its helper
    # sources, nor files a copy of the tree may carry besides).
    grep -qE "(^|[[:space:]])${prog}([[:space:]]|$)" "$osu/c/mpi/$dir/Makefile.am" 2>/dev/null ||
      continue
    bin=$work/osu/c/mpi/$dir/$prog
    if [ ! -x "$bin" ]; then
      printf '  %-34s not built\n' "$prog"; nunbuilt=$((nunbuilt + 1)); continue
    fi
    nbuilt=$((nbuilt + 1))
    case "$dir" in
      ./collective*) run "$prog" "$ranks" "$bin"; [ "$ranks" -ne 4 ] && run "$prog" 4 "$bin" ;;
      ./startup*) run "$prog" "$ranks" "$bin" ;;
      # fan-in/out need ranks on more than one node: 2 simulated ones.
      ./pt2pt/congestion*) LOOMRUN_EXTRA="--nodes 2" run "$prog" 4 "$bin" ;;
      *) run "$prog" 2 "$bin" ;;
    esac
  done
fi

if [ -z "$imb" ]; then
  echo "IMB: skipped (no --imb DIR given)"
elif [ ! -d "$imb/src_cpp" ]; then
  echo "IMB: skipped ($imb has no src_cpp/)"
else
  echo "Intel MPI Benchmarks from $imb:"
  rm -rf "$work/imb" && cp -a "$imb" "$work/imb"
  for t in MPI1 NBC; do
    if make -C "$work/imb" CC="$mpicc" CXX="$mpicxx" "IMB-$t" > "$work/imb/make.$t.log" 2>&1 &&
       [ -x "$work/imb/IMB-$t" ]; then
      nbuilt=$((nbuilt + 1))
      run "IMB-$t" "$ranks" "$work/imb/IMB-$t" -time 0.2 -msglog 0:16 -iter_policy off -iter 50
    else
      printf '  %-34s not built (%s)\n' "IMB-$t" "$work/imb/make.$t.log"
      nunbuilt=$((nunbuilt + 1))
    fi
  done
fi

echo "summary: $nbuilt built, $nunbuilt not built; $nok runs ok, $nfail failed (logs: $work/logs)"
