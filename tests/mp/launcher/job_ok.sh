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
  # more ranks than usable cores: bound by default only when they are a
  # whole multiple of the cores (each core then takes as many ranks)
  expect_out_count "LOOM_OVERSUBSCRIBE=1$" "$N"
  # usable cores as loomrun counts them (hwloc cores with a PU in our
  # affinity): distinct (package, core) pairs of the CPUs we may run on
  cores=$(python3 -c 'import os
t = "/sys/devices/system/cpu/cpu%d/topology/"
ids = set()
for c in os.sched_getaffinity(0):
    try:
        ids.add(tuple(open(t % c + f).read().strip() for f in ("physical_package_id", "core_id")))
    except OSError:
        ids.add(("cpu", c))
print(len(ids))')
  if [ $((N % cores)) = 0 ]; then
    [ "$(grep -c 'bound to core' "$ERR")" = "$N" ] || { fail "oversubscribed by a multiple of the cores: bound"; show; }
  else
    [ "$(grep -c 'not bound$' "$ERR")" = "$N" ] || { fail "oversubscribed unevenly: not bound"; show; }
  fi
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
