# Helpers for loomrun's tests (sourced by every launcher/*.sh).
#
# Environment (set by CTest, see ../launcher_tests.cmake):
#   LOOMRUN    path of the loomrun binary
#   LT_CLIENT  path of lt_client (the scriptable PMIx client)
#
# Each test gets a fresh TMPDIR (loomrun's PMIx directory must be gone from
# it afterwards) and a unique MARK that the test passes on the ranks' command
# line, so `pgrep -f "$MARK"` finds any rank (or child of a rank) left behind.
set -u

: "${LOOMRUN:?LOOMRUN must point to loomrun}"
: "${LT_CLIENT:?LT_CLIENT must point to lt_client}"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/lt.XXXXXX")
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
MARK="lt-mark-$$-$RANDOM"
FAILS=0
# Safety net if a check failed half-way: kill what carries this test's own
# unique marker (by pid), then drop the scratch directory.
cleanup_on_exit() {
  local p
  for p in $(pgrep -f -- "$MARK"); do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup_on_exit EXIT

fail() {
  echo "FAIL: $*" >&2
  FAILS=$((FAILS + 1))
}

note() { echo "--- $*"; }

# run_job ARGS... : runs "$LOOMRUN" ARGS with stdin from /dev/null unless
# STDIN_FILE is set; sets RC, PID, ELAPSED_MS and the files $OUT, $ERR.
OUT="$WORK/stdout"
ERR="$WORK/stderr"
run_job() {
  local start end
  start=$(date +%s%N)
  if [ -n "${STDIN_FILE:-}" ]; then
    "$LOOMRUN" "$@" <"$STDIN_FILE" >"$OUT" 2>"$ERR" &
  else
    "$LOOMRUN" "$@" </dev/null >"$OUT" 2>"$ERR" &
  fi
  PID=$!
  wait "$PID"
  RC=$?
  end=$(date +%s%N)
  ELAPSED_MS=$(((end - start) / 1000000))
}

# start_job ARGS... : like run_job, in the background (stdin /dev/null);
# finish with wait_job.
start_job() {
  JOB_START=$(date +%s%N)
  # Empty the files here, not only in the background job's redirection: that
  # runs whenever the subshell gets the CPU, and until then wait_lines would
  # count the previous job's lines (a loaded machine sent SIGUSR1 to ranks
  # that had not installed their handler yet, seen as exit 138).
  : >"$OUT"
  : >"$ERR"
  "$LOOMRUN" "$@" </dev/null >"$OUT" 2>"$ERR" &
  PID=$!
}
wait_job() {
  wait "$PID"
  RC=$?
  ELAPSED_MS=$((($(date +%s%N) - JOB_START) / 1000000))
}

# wait_lines PATTERN COUNT : waits (up to 10 s) until $OUT has COUNT lines
# matching PATTERN.
wait_lines() {
  local i
  for i in $(seq 500); do
    [ "$(grep -cE "$1" "$OUT" 2>/dev/null)" -ge "$2" ] && return 0
    sleep 0.02
  done
  fail "timed out waiting for $2 lines matching '$1' in stdout"
  return 1
}

show() {
  echo "  exit status: $RC (${ELAPSED_MS} ms)"
  echo "  stdout:"; head -20 "$OUT" | sed 's/^/    /'
  echo "  stderr:"; head -20 "$ERR" | sed 's/^/    /'
}

expect_rc() {
  [ "$RC" = "$1" ] || { fail "exit status $RC, expected $1"; show; }
}

expect_err() {
  grep -qE -- "$1" "$ERR" || { fail "stderr does not match '$1'"; show; }
}

expect_no_err() {
  ! grep -qE -- "$1" "$ERR" || { fail "stderr unexpectedly matches '$1'"; show; }
}

expect_out() {
  grep -qE -- "$1" "$OUT" || { fail "stdout does not match '$1'"; show; }
}

# expect_out_count REGEX N
expect_out_count() {
  local n
  n=$(grep -cE -- "$1" "$OUT")
  [ "$n" = "$2" ] || { fail "stdout has $n lines matching '$1', expected $2"; show; }
}

expect_faster_than() {
  [ "$ELAPSED_MS" -lt "$1" ] || fail "job took ${ELAPSED_MS} ms, expected < $1 ms"
}

# Nothing of the last job may remain: no process carrying MARK, nothing in
# TMPDIR (the PMIx directory), no /dev/shm/loom-loom.<pid>-* segment.
expect_clean() {
  local left
  sleep 0.05  # a SIGKILLed grandchild may take a moment to vanish
  left=$(pgrep -af -- "$MARK" | grep -v "pgrep" || true)
  [ -z "$left" ] || fail "processes left behind: $left"
  left=$(ls -A "$TMPDIR")
  [ -z "$left" ] || fail "TMPDIR not empty: $left"
  left=$(ls /dev/shm 2>/dev/null | grep -F "loom-loom.$PID-" || true)
  [ -z "$left" ] || fail "shared-memory segments left: $left"
}

finish() {
  if [ "$FAILS" -ne 0 ]; then
    echo "$FAILS check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
