#!/usr/bin/env bash
# kill_launcher.sh: a job whose loomrun dies of SIGKILL, and what it leaves.
#
#   kill_launcher.sh [--when RE] -- loomrun [args...]
#
# With --when, this script kills loomrun (SIGKILL) once its stdout has a line
# matching RE; without, the job is expected to kill loomrun itself (faults
# kill-launcher-* modes). Checks: loomrun died of SIGKILL (status 137); every
# process of the job (each carries a unique marker in its environment) is
# gone within 10 s, although loomrun could not tear anything down (parent-
# death signal for the ranks, the lost PMIx connection for processes below
# them); /dev/shm holds no loom-<nspace>-* name of the job. loomrun's own
# PMIx directory in TMPDIR is expected (nothing could remove it) and dropped.
set -u
when=""
while [ $# -gt 0 ]; do
  case "$1" in
    --when) when=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "kill_launcher.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
marker="LOOM_TEST_MARKER=$$.$RANDOM.$RANDOM"
mkdir "$work/tmp"
: >"$work/out"
env "$marker" TMPDIR="$work/tmp" "$@" >"$work/out" 2>"$work/err" </dev/null &
pid=$!
fail=0
report() { echo "kill_launcher.sh: $*" >&2; fail=1; }

if [ -n "$when" ]; then
  seen=0
  for _ in $(seq 400); do
    if grep -Eq -- "$when" "$work/out"; then seen=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  [ $seen = 1 ] || report "stdout never matched /$when/"
  kill -KILL "$pid" 2>/dev/null
fi
wait "$pid" 2>/dev/null
rc=$?
[ "$rc" -eq 137 ] || report "exit status $rc, expected 137 (loomrun killed by SIGKILL)"

procs() { grep -lsz -- "^$marker\$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | tr '\n' ' '; }
left=""
for _ in $(seq 100); do
  left=$(procs)
  [ -z "$left" ] && break
  sleep 0.1
done
if [ -n "$left" ]; then
  report "processes still running 10 s after loomrun died: $left"
  for p in $left; do kill -KILL "$p" 2>/dev/null; done
fi
left_shm=$(ls /dev/shm 2>/dev/null | grep -E "^loom-loom\.$pid-" | tr '\n' ' ')
if [ -n "$left_shm" ]; then
  report "names left in /dev/shm: $left_shm"
  for f in $left_shm; do rm -f "/dev/shm/$f"; done
fi

if [ $fail -ne 0 ]; then
  echo "---- command: $*" >&2
  echo "---- stdout:" >&2; head -c 4000 "$work/out" >&2
  echo "---- stderr:" >&2; head -c 4000 "$work/err" >&2
else
  echo "loomrun killed; nothing left behind"
fi
rm -rf "$work"
exit $fail
