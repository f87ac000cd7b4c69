#!/bin/bash
# A job whose last rank fails, at N ranks: the exit status is that rank's,
# the message names it, the others are torn down fast, nothing is left.
# usage: job_fail.sh N
source "$(dirname "$0")/lib.sh"
N=$1
R=$((N - 1))
OTHERS=$((N - 1))
if [ "$OTHERS" = 0 ]; then TAIL='$'; elif [ "$OTHERS" = 1 ]; then TAIL="; terminating the other 1 rank$"; else TAIL="; terminating the other $OTHERS ranks$"; fi
export LOOM_KILL_GRACE_MS=500

note "rank $R exits with code 3 (without finalize)"
run_job -n "$N" "$LT_CLIENT" exit "$R" 3 "--marker=$MARK"
expect_rc 3
expect_err "^loomrun: rank $R \(pid [0-9]+\) exited with code 3$TAIL"
expect_faster_than 3000
expect_clean

note "rank $R finalizes, then exits with code 4"
run_job -n "$N" "$LT_CLIENT" exit-finalized "$R" 4 "--marker=$MARK"
expect_rc 4
expect_err "^loomrun: rank $R \(pid [0-9]+\) exited with code 4$TAIL"
expect_clean

note "rank $R dies of SIGSEGV"
run_job -n "$N" "$LT_CLIENT" segv "$R" "--marker=$MARK"
expect_rc 139
expect_err "^loomrun: rank $R \(pid [0-9]+\) was killed by signal 11 \(Segmentation fault\)$TAIL"
expect_faster_than 3000
expect_clean

note "rank $R calls PMIx_Abort(7)"
run_job -n "$N" "$LT_CLIENT" abort "$R" 7 "it went wrong" "--marker=$MARK"
expect_rc 7
expect_err "^loomrun: rank $R \(pid [0-9]+\) called MPI_Abort with code 7: it went wrong$"
[ "$(grep -c '^loomrun:' "$ERR")" = 1 ] || { fail "expected exactly one loomrun message"; show; }
expect_faster_than 3000
expect_clean

note "rank $R calls PMIx_Abort(300): status is the code modulo 256"
run_job -n "$N" "$LT_CLIENT" abort "$R" 300 "big" "--marker=$MARK"
expect_rc 44
expect_err "called MPI_Abort with code 300: big$"
expect_clean

note "rank $R calls PMIx_Abort(0): status 0, as Open MPI's mpirun"
run_job -n "$N" "$LT_CLIENT" abort "$R" 0 "zero" "--marker=$MARK"
expect_rc 0
expect_err "called MPI_Abort with code 0: zero$"
expect_clean

note "rank $R exits 0 without PMIx_Finalize"
run_job -n "$N" "$LT_CLIENT" nofinalize "$R" "--marker=$MARK"
expect_rc 1
expect_err "^loomrun: rank $R \(pid [0-9]+\) exited without calling MPI_Finalize$TAIL"
expect_clean

note "a plain program failing (bash -c 'exit 5' on the last rank, the others wait for a child)"
# The children are named after the marker: the teardown must reach them too
# (they share their rank's process group).
run_job -n "$N" bash -c '[ "$PMIX_RANK" = "$1" ] && exit 5; (exec -a "$0-child" sleep 30) & wait' "$MARK" "$R"
expect_rc 5
expect_err "^loomrun: rank $R \(pid [0-9]+\) exited with code 5$TAIL"
expect_faster_than 3000
expect_clean

finish
