#!/usr/bin/env bash
# Builds mpi4py from PyPI's source distribution with Loom's default mpicc,
# imports it, and runs mpi4py's own test suite under loomrun at 1 and 2 ranks.
#
#   tests/mpi4py/run_mpi4py.sh BUILD_DIR [RANKS...]     (default ranks: 1 2)
#
# Exit 77 (skip) with a clear line when PyPI cannot be reached or Python has
# no venv module. Tests listed in tests/mpi4py/excluded.txt (each with its
# cause: areas Loom does not implement yet) are left out; any other failure
# or error fails this script. The counts of every run are printed.
set -uo pipefail
build=$(cd "${1:?usage: run_mpi4py.sh BUILD_DIR [RANKS...]}" && pwd)
shift
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2)
here=$(cd "$(dirname "$0")" && pwd)
version=4.1.2
work=$build/mpi4py
venv=$work/venv
py=$venv/bin/python

skip() { echo "SKIP: $*"; exit 77; }

python3 -c 'import venv, ensurepip' 2>/dev/null || skip "python3 has no venv/ensurepip (Debian: python3-venv)"
sdist_url=$(timeout 20 python3 - "$version" <<'PY' 2>/dev/null
import json, sys, urllib.request
with urllib.request.urlopen("https://pypi.org/pypi/mpi4py/json", timeout=15) as r:
    d = json.load(r)
print([u["url"] for u in d["releases"][sys.argv[1]] if u["packagetype"] == "sdist"][0])
PY
) || skip "PyPI is unreachable (no package index): mpi4py not built"

mkdir -p "$work"
# mpi4py is rebuilt when Loom's mpi.h changed since the last build (it links
# libloom.so dynamically and every function exists, so a new libloom needs
# no rebuild).
stamp=$work/built.stamp
if [ ! -x "$py" ] || [ ! -f "$stamp" ] || [ "$build/include/mpi.h" -nt "$stamp" ]; then
  rm -rf "$venv" "$stamp"
  python3 -m venv "$venv" || skip "python3 -m venv failed"
  echo "building mpi4py $version with MPICC=$build/bin/mpicc"
  if ! MPICC=$build/bin/mpicc timeout 1200 "$venv/bin/pip" install -q --no-cache-dir \
       --no-binary mpi4py "mpi4py==$version" > "$work/build.log" 2>&1; then
    if grep -qiE "could not (find|fetch)|connection|network is unreachable|temporary failure" \
         "$work/build.log"; then
      skip "PyPI is unreachable while installing build dependencies"
    fi
    tail -40 "$work/build.log"
    echo "FAIL: mpi4py did not build against Loom (log: $work/build.log)"
    exit 1
  fi
  touch "$stamp"
fi

# The test suite comes from the same source distribution.
if [ ! -f "$work/mpi4py-$version/test/main.py" ]; then
  timeout 60 python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
    "$sdist_url" "$work/sdist.tar.gz" || skip "could not download the mpi4py source distribution"
  tar xzf "$work/sdist.tar.gz" -C "$work" || exit 1
fi

version_line=$(cd "$work" && "$py" -c 'from mpi4py import MPI; print(MPI.Get_library_version().strip(), "| MPI", MPI.Get_version())') || {
  echo "FAIL: from mpi4py import MPI"; exit 1; }
echo "import: $version_line"

# excluded.txt: "module" lines leave a whole test module out, other lines are
# mpi4py test-name patterns; comments after '#' give the cause.
sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$here/excluded.txt" > "$work/excluded.all"
grep -v '^module ' "$work/excluded.all" > "$work/excluded.patterns"
skipmods=" $(grep '^module ' "$work/excluded.all" | cut -d' ' -f2 | tr '\n' ' ') "

# One job per test module and rank count, each with its own timeout, so a
# hang names its module. unittest's summary line of every job is summed.
status=0
testdir=$work/mpi4py-$version/test
for n in "${ranks[@]}"; do
  ran=0 failures=0 errors=0 skipped=0 bad=() mods=()
  for mod in $(cd "$testdir" && ls test_*.py | sed 's/\.py$//'); do
    case "$skipmods" in *" $mod "*) continue ;; esac
    mods+=("$mod")
    log=$work/logs/$mod.$n.log
    mkdir -p "$work/logs"
    (cd "$testdir" && timeout 300 "$build/bin/loomrun" -n "$n" "$py" main.py -q \
       --xfile "$work/excluded.patterns" -i "^$mod\\.py\$") > "$log" 2>&1
    rc=$?
    # Every rank prints the summary; take rank 0's (the first).
    r=$(grep -m1 -oE '^Ran [0-9]+ test' "$log" | grep -oE '[0-9]+')
    tail=$(grep -m1 -E '^(OK|FAILED)' "$log")
    f=$(grep -oE 'failures=[0-9]+' <<<"$tail" | cut -d= -f2)
    e=$(grep -oE 'errors=[0-9]+' <<<"$tail" | cut -d= -f2)
    k=$(grep -oE 'skipped=[0-9]+' <<<"$tail" | cut -d= -f2)
    ran=$((ran + ${r:-0})) failures=$((failures + ${f:-0})) errors=$((errors + ${e:-0}))
    skipped=$((skipped + ${k:-0}))
    if [ $rc -ne 0 ] || [ -z "$tail" ]; then
      bad+=("$mod (exit $rc${tail:+: $tail})")
    fi
  done
  echo "ranks $n: ${#mods[@]} modules, ran $ran tests: failures $failures, errors $errors, skipped $skipped"
  if [ ${#bad[@]} -gt 0 ]; then
    status=1
    for b in "${bad[@]}"; do echo "  FAILED: $b"; done
    echo "  (logs: $work/logs/<module>.$n.log)"
  fi
done
exit $status
