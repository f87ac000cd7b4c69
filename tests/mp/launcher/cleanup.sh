#!/bin/bash
# What a job leaves behind: nothing, whichever way it ends.
source "$(dirname "$0")/lib.sh"

note "a crashed rank's /dev/shm/loom-<nspace>-* segment is unlinked"
run_job -n 3 "$LT_CLIENT" shm 1 "--marker=$MARK"
expect_rc 139
expect_err "rank 1 \(pid [0-9]+\) was killed by signal 11"
expect_no_err "/dev/shm"  # the segment was really created
expect_clean

note "a child that outlives its rank (same process group) does not hold the job"
run_job -n 2 "$LT_CLIENT" orphan "--marker=$MARK"
expect_rc 0
expect_faster_than 3000
expect_clean

note "an unusable TMPDIR: clear error, exit 1, nothing started"
TMPDIR="$WORK/does/not/exist" run_job -n 2 "$LT_CLIENT" hello "--marker=$MARK"
expect_rc 1
expect_err "^loomrun: cannot create a temporary directory under"
expect_clean

note "loomrun killed by SIGKILL: the kernel kills the ranks (parent-death signal)"
start_job -n 3 "$LT_CLIENT" sleep "--marker=$MARK"
wait_lines "^ready [0-9]+$" 3
kill -KILL "$PID"
wait "$PID" 2>/dev/null
sleep 0.3
left=$(pgrep -af -- "$MARK" || true)
[ -z "$left" ] || fail "ranks survived loomrun's death: $left"
# Nothing could remove the PMIx directory this time: do it for the next test.
rm -rf "${TMPDIR:?}"/*

finish
