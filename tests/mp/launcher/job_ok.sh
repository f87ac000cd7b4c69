#!/bin/bash
# A job that succeeds, at N ranks: output of every rank, PMIx job info,
# LOOM_OVERSUBSCRIBE consistent with the default binding, clean exit.
# usage: job_ok.sh N
source "$(dirname "$0")/lib.sh"
N=$1
LAST=$((N - 1))

note "hello at $N ranks"
run_job -n "$N" "$LT_CLIENT" hello "--marker=$MARK"
expect_rc 0
expect_out_count "^hello from rank [0-9]+ of $N$" "$N"
for r in $(seq 0 $LAST); do expect_out_count "^hello from rank $r of $N$" 1; done
[ -s "$ERR" ] && { fail "unexpected stderr"; show; }
expect_clean

note "PMIx job info at $N ranks"
run_job -n "$N" "$LT_CLIENT" info "--marker=$MARK"
expect_rc 0
peers=$(seq -s, 0 $LAST)
host=$(hostname)
for r in $(seq 0 $LAST); do
  expect_out "^rank $r job_size=$N$"
  expect_out "^rank $r univ_size=$N$"
  expect_out "^rank $r local_size=$N$"
  expect_out "^rank $r local_peers=$peers$"
  expect_out "^rank $r local_rank=$r$"
  expect_out "^rank $r nodeid=0$"
  expect_out "^rank $r hostname=$host$"
done
expect_clean

note "oversubscription flag and default binding at $N ranks"
run_job -n "$N" --report-bindings "$LT_CLIENT" env LOOM_OVERSUBSCRIBE PMIX_MCA_gds PMIX_RANK "--marker=$MARK"
expect_rc 0
expect_out_count "PMIX_MCA_gds=hash$" "$N"
for r in $(seq 0 $LAST); do expect_out "^rank $r PMIX_RANK=$r$"; done
if grep -q "LOOM_OVERSUBSCRIBE=1" "$OUT"; then
  # more ranks than usable cores: not bound by default
  expect_out_count "LOOM_OVERSUBSCRIBE=1$" "$N"
  [ "$(grep -c 'not bound$' "$ERR")" = "$N" ] || { fail "oversubscribed ranks should not be bound"; show; }
else
  expect_out_count "LOOM_OVERSUBSCRIBE=0$" "$N"
  [ "$(grep -cE 'bound to core [0-9]+ \(cpus [0-9,-]+\)$' "$ERR")" = "$N" ] ||
    { fail "ranks should be bound by default"; show; }
fi
expect_clean

note "a program that never calls PMIx_Init (hostname) at $N ranks"
run_job -n "$N" hostname
expect_rc 0
expect_out_count "^$(hostname)$" "$N"
expect_clean

finish
