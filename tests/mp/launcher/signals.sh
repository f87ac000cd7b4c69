#!/bin/bash
# SIGTERM/SIGINT/SIGHUP sent to loomrun reach every rank; loomrun exits
# 128+signal with nothing left. SIGUSR1 is only forwarded. A rank ignoring
# SIGTERM is SIGKILLed after LOOM_KILL_GRACE_MS.
source "$(dirname "$0")/lib.sh"
N=${1:-4}

for sig in TERM INT HUP; do
  note "SIG$sig to loomrun with $N ranks"
  start_job -n "$N" "$LT_CLIENT" sleep "--marker=$MARK"
  wait_lines "^ready [0-9]+$" "$N"
  kill -"$sig" "$PID"
  wait_job
  num=$(kill -l "$sig")
  expect_rc $((128 + num))
  expect_err "^loomrun: received signal $num \(.*\); terminating $N ranks?$"
  expect_faster_than 5000
  expect_clean
done

note "the ranks get the signal itself (SIGINT kills a rank that ignores SIGTERM at once)"
export LOOM_KILL_GRACE_MS=4000
start_job -n 2 "$LT_CLIENT" stubborn "--marker=$MARK"
wait_lines "^ready [0-9]+$" 2
t0=$(date +%s%N)
kill -INT "$PID"
wait_job
ms=$((($(date +%s%N) - t0) / 1000000))
expect_rc 130
[ "$ms" -lt 2000 ] || fail "SIGINT was not forwarded as SIGINT (job took $ms ms to end)"
expect_clean

note "SIGTERM to a job whose ranks ignore it: SIGKILL after the grace period"
export LOOM_KILL_GRACE_MS=300
start_job -n 2 "$LT_CLIENT" stubborn "--marker=$MARK"
wait_lines "^ready [0-9]+$" 2
t0=$(date +%s%N)
kill -TERM "$PID"
wait_job
ms=$((($(date +%s%N) - t0) / 1000000))
expect_rc 143
[ "$ms" -ge 250 ] && [ "$ms" -lt 2500 ] || fail "teardown took $ms ms (grace 300 ms)"
expect_clean

note "a second SIGTERM during the grace period kills at once"
export LOOM_KILL_GRACE_MS=10000
start_job -n 2 "$LT_CLIENT" stubborn "--marker=$MARK"
wait_lines "^ready [0-9]+$" 2
t0=$(date +%s%N)
kill -TERM "$PID"
sleep 0.2
kill -TERM "$PID"
wait_job
ms=$((($(date +%s%N) - t0) / 1000000))
expect_rc 143
[ "$ms" -lt 3000 ] || fail "second SIGTERM did not escalate ($ms ms)"
expect_clean

note "SIGUSR1 is forwarded, the job goes on"
start_job -n 2 bash -c 'trap "echo usr1 \$PMIX_RANK; exit 0" USR1; echo ready $PMIX_RANK; while :; do sleep 0.05; done' "$MARK"
wait_lines "^ready [0-9]+$" 2
kill -USR1 "$PID"
wait_job
expect_rc 0
expect_out_count "^usr1 [01]$" 2
expect_clean

finish
