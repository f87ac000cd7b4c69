#!/bin/bash
# --timeout: exit status 124, a message naming the ranks still running, all
# of them killed (SIGKILL after LOOM_KILL_GRACE_MS for those ignoring SIGTERM).
source "$(dirname "$0")/lib.sh"

note "--timeout 1 with 3 sleeping ranks"
run_job -n 3 --timeout 1 "$LT_CLIENT" sleep "--marker=$MARK"
expect_rc 124
expect_err "^loomrun: timeout after 1 s; ranks still running: 0 1 2$"
expect_out_count "^ready [0-2]$" 3
[ "$ELAPSED_MS" -ge 900 ] || fail "timeout fired early (${ELAPSED_MS} ms)"
expect_faster_than 3000
expect_clean

note "--timeout names only the ranks still running"
run_job -n 4 --timeout 1 bash -c 'case $PMIX_RANK in 1|3) exit 0;; esac; exec -a "$0" sleep 30' "$MARK"
expect_rc 124
expect_err "^loomrun: timeout after 1 s; ranks still running: 0 2$"
expect_clean

note "--timeout 0.5 with ranks that ignore SIGTERM (grace 300 ms)"
LOOM_KILL_GRACE_MS=300 run_job -n 2 --timeout 0.5 "$LT_CLIENT" stubborn "--marker=$MARK"
expect_rc 124
expect_err "^loomrun: timeout after 0.5 s; ranks still running: 0 1$"
[ "$ELAPSED_MS" -ge 750 ] || fail "SIGKILL came before the grace period (${ELAPSED_MS} ms)"
expect_faster_than 2500
expect_clean

note "a job that ends before its timeout is unaffected"
run_job -n 2 --timeout 30 "$LT_CLIENT" hello "--marker=$MARK"
expect_rc 0
expect_out_count "^hello from rank" 2
expect_faster_than 2000
expect_clean

finish
