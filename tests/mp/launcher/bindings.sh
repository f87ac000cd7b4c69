#!/bin/bash
# --bind-to and --report-bindings: what is reported is what the rank gets.
source "$(dirname "$0")/lib.sh"

# Prints "<rank> <cpus allowed>" from inside each rank.
AFFINITY='echo "$PMIX_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'

# check_reported_matches: every "rank R bound to core C (cpus L)" line agrees
# with rank R's actual affinity in $OUT.
check_reported_matches() {
  local r c l actual
  while read -r r c l; do
    actual=$(awk -v r="$r" '$1 == r { print $2 }' "$OUT")
    [ "$actual" = "$l" ] || fail "rank $r reported cpus $l but runs on $actual"
  done < <(sed -nE 's/^loomrun: rank ([0-9]+) bound to core ([0-9]+) \(cpus ([0-9,-]+)\)$/\1 \2 \3/p' "$ERR")
}

note "default binding at 1 rank"
run_job -n 1 --report-bindings bash -c "$AFFINITY" "$MARK"
expect_rc 0
expect_err "^loomrun: rank 0 bound to core 0 \(cpus [0-9,-]+\)$"
check_reported_matches

note "--bind-to core, oversubscribed (8 ranks): rank i on core i mod cores"
run_job -n 8 --bind-to core --report-bindings bash -c "$AFFINITY" "$MARK"
expect_rc 0
[ "$(grep -c 'bound to core' "$ERR")" = 8 ] || { fail "expected 8 bound ranks"; show; }
check_reported_matches
cores=$(sed -nE 's/.*bound to core ([0-9]+) .*/\1/p' "$ERR" | sort -u | wc -l)
for r in $(seq 0 7); do
  expect_err "^loomrun: rank $r bound to core $((r % cores)) "
done

note "--bind-to none"
run_job -n 2 --bind-to none --report-bindings bash -c "$AFFINITY" "$MARK"
expect_rc 0
expect_err "^loomrun: rank 0 not bound$"
expect_err "^loomrun: rank 1 not bound$"
mine=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)
[ "$(awk '{print $2}' "$OUT" | sort -u)" = "$mine" ] || fail "unbound ranks should inherit loomrun's cpus ($mine)"

note "a fake topology (HWLOC_SYNTHETIC): 4 cores of 2 PUs, reported, not applied"
export HWLOC_SYNTHETIC="core:4 pu:2"
run_job -n 4 --report-bindings "$LT_CLIENT" env LOOM_OVERSUBSCRIBE "--marker=$MARK"
expect_rc 0
for r in 0 1 2 3; do expect_err "^loomrun: rank $r bound to core $r \(cpus $((2 * r))-$((2 * r + 1))\)$"; done
expect_out_count "LOOM_OVERSUBSCRIBE=0$" 4
run_job -n 5 --report-bindings "$LT_CLIENT" env LOOM_OVERSUBSCRIBE "--marker=$MARK"
expect_rc 0
expect_out_count "LOOM_OVERSUBSCRIBE=1$" 5
[ "$(grep -c 'not bound$' "$ERR")" = 5 ] || { fail "oversubscribed unevenly: not bound by default"; show; }
run_job -n 8 --report-bindings "$LT_CLIENT" env LOOM_OVERSUBSCRIBE "--marker=$MARK"
expect_rc 0
expect_out_count "LOOM_OVERSUBSCRIBE=1$" 8
for r in $(seq 0 7); do expect_err "^loomrun: rank $r bound to core $((r % 4)) "; done
unset HWLOC_SYNTHETIC
expect_clean

finish
