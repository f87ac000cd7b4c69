#!/usr/bin/env bash
# run_expect.sh: runs one job and checks how it ended and what it left.
#
#   run_expect.sh [--exit N | --exit-nonzero] [--stdout-re RE] [--stderr-re RE]
#                 [--stdout-count RE=K] -- command [args...]
#
# Checks: the exit status is N (default 0); stdout/stderr match the regular
# expressions (grep -E); RE occurs on exactly K lines of stdout. Then, in
# every case: no process of the job is left (every process started carries a
# unique marker in its environment), the job's private TMPDIR is empty, and
# /dev/shm holds no loom-* file of this job.
set -u
want_exit=0
out_res=()
err_res=()
counts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --exit) want_exit=$2; shift 2 ;;
    --exit-nonzero) want_exit=nonzero; shift ;;
    --stdout-re) out_res+=("$2"); shift 2 ;;
    --stderr-re) err_res+=("$2"); shift 2 ;;
    --stdout-count) counts+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_expect.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
marker="LOOM_TEST_MARKER=$$.$RANDOM.$RANDOM"
mkdir "$work/tmp"
# env execs the command, so $! is loomrun's pid: its job's namespace is
# loom.<pid> and its shared segments are /dev/shm/loom-loom.<pid>-*.
env "$marker" TMPDIR="$work/tmp" "$@" >"$work/out" 2>"$work/err" </dev/null &
pid=$!
wait $pid
rc=$?
fail=0
report() { echo "run_expect.sh: $*" >&2; fail=1; }

if [ "$want_exit" = nonzero ]; then
  [ "$rc" -ne 0 ] || report "exit status 0, expected a failure"
else
  [ "$rc" -eq "$want_exit" ] || report "exit status $rc, expected $want_exit"
fi
for re in "${out_res[@]+"${out_res[@]}"}"; do
  grep -Eq -- "$re" "$work/out" || report "stdout does not match /$re/"
done
for re in "${err_res[@]+"${err_res[@]}"}"; do
  grep -Eq -- "$re" "$work/err" || report "stderr does not match /$re/"
done
for c in "${counts[@]+"${counts[@]}"}"; do
  re=${c%=*}
  k=${c##*=}
  n=$(grep -Ec -- "$re" "$work/out")
  [ "$n" -eq "$k" ] || report "stdout has $n lines matching /$re/, expected $k"
done

# Leftover processes: give a teardown in progress up to 3 s.
leftover=""
for _ in $(seq 30); do
  leftover=$(grep -lsz -- "^$marker\$" /proc/[0-9]*/environ 2>/dev/null | tr '\n' ' ')
  [ -z "$leftover" ] && break
  sleep 0.1
done
[ -z "$leftover" ] || report "processes left behind: $leftover"
left=$(ls -A "$work/tmp")
[ -z "$left" ] || report "files left in TMPDIR: $left"
left_shm=$(ls /dev/shm 2>/dev/null | grep -E "^loom-(loom|singleton)\.$pid-" | tr '\n' ' ')
[ -z "$left_shm" ] || report "files left in /dev/shm: $left_shm"

if [ $fail -ne 0 ]; then
  echo "---- command: $*" >&2
  echo "---- stdout:" >&2; head -c 4000 "$work/out" >&2
  echo "---- stderr:" >&2; head -c 4000 "$work/err" >&2
else
  cat "$work/out"
  cat "$work/err" >&2
fi
rm -rf "$work"
exit $fail
