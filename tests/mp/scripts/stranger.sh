#!/usr/bin/env bash
# stranger.sh: a process outside the job attacks a rank's libfabric port.
#
#   stranger.sh LOOMRUN STRESS STRANGER PROVIDER
#
# Starts a 2-rank job on 2 simulated nodes running randomized traffic with
# wildcard receives (p2p_stress, which checks every message byte for byte
# and its order), reads the ranks' libfabric addresses from their debug log,
# and turns ofi_stranger loose on each: TCP junk, an idle connection, and
# records shaped like Loom's with wrong secrets. The job must end normally
# (nothing matched, nothing crashed), and each rank must have logged that
# it dropped messages from outside the job.
set -u
[ $# -eq 4 ] || { echo "usage: $0 LOOMRUN STRESS STRANGER PROVIDER" >&2; exit 2; }
loomrun=$1 stress=$2 stranger=$3 prov=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

timeout 60 "$loomrun" -n 2 --nodes 2 -x LOOM_DEBUG=p2p -x "LOOM_OFI_PROVIDER=$prov" \
    "$stress" 4242 6 >"$work/out" 2>"$work/err" </dev/null &
job=$!
addrs=()
for i in $(seq 100); do
  mapfile -t addrs < <(grep -o 'ofi: endpoint fi_sockaddr_in://[0-9.:]*' "$work/err" | awk '{print $3}')
  [ ${#addrs[@]} -ge 2 ] && break
  sleep 0.1
done
[ ${#addrs[@]} -ge 2 ] || { echo "stranger.sh: no endpoint addresses in the log" >&2; cat "$work/err" >&2; exit 1; }
fail=0
for a in "${addrs[@]}"; do
  "$stranger" "$prov" "$a" || { echo "stranger.sh: the stranger could not deliver to $a" >&2; fail=1; }
done
wait $job
rc=$?
cat "$work/out"
if [ $rc -ne 0 ]; then echo "stranger.sh: the job exited $rc" >&2; fail=1; fi
n=$(grep -c '^p2p_stress: rank [01] ok' "$work/out")
[ "$n" -eq 2 ] || { echo "stranger.sh: $n of 2 ranks ok" >&2; fail=1; }
d=$(grep -c 'dropped a' "$work/err")
[ "$d" -ge 2 ] || { echo "stranger.sh: $d ranks logged dropped messages, expected 2" >&2; fail=1; }
[ $fail -eq 0 ] || { sed 's/^/    err: /' "$work/err" | grep -v "\[p2p\]" | tail -20 >&2; exit 1; }
echo "stranger.sh: ok ($prov)"
