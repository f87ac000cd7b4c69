#!/usr/bin/env bash
# netns_jobs.sh: Loom jobs whose two simulated nodes talk over a real network
# link: each node's ranks live in a network namespace of their own, and the
# two namespaces are joined by a veth pair (10.213.N.1 <-> 10.213.N.2).
#
#   netns_jobs.sh LOOMRUN EXCHANGE REDUCE STRESS
#
# The ranks start in this namespace (their PMIx connection to loomrun stays
# on its loopback) and enter their node's namespace before they open their
# libfabric endpoint (LOOM_OFI_NETNS), so every message between the nodes
# crosses the veth link, and only it.
#
# Jobs: point-to-point exchange and reductions at 2 and 4 ranks over both
# TCP providers; then the link is cut in the middle of a job (the peer's end
# set down): the job must end by itself, with a message naming a rank on the
# other side, well within its timeout.
#
# Creates and always deletes its namespaces (trap). Needs root and iproute2:
# otherwise skipped with exit 77. Prints PASS/FAIL per job and
# "N passed, N failed".
set -u
say() { echo "netns: $*"; }
[ $# -eq 4 ] || { echo "usage: $0 LOOMRUN EXCHANGE REDUCE STRESS" >&2; exit 2; }
loomrun=$1 exchange=$2 reduce=$3 stress=$4

if [ "$(id -u)" -ne 0 ]; then say "skipped: not root (network namespaces need CAP_SYS_ADMIN)"; exit 77; fi
command -v ip >/dev/null || { say "skipped: no ip command (apt-get install iproute2)"; exit 77; }

# Names unique to this run; a subnet from the run's pid (10.213.0.0/16 is
# used by nothing else here, and never leaves the two namespaces).
tag="loomt$$"
ns0="${tag}-0" ns1="${tag}-1"
net="10.213.$(( $$ % 250 + 1 ))"
work=$(mktemp -d)
cleanup() {
  ip netns del "$ns0" 2>/dev/null
  ip netns del "$ns1" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$ns0" && ip netns add "$ns1" || { say "skipped: cannot create network namespaces"; exit 77; }
ip link add lveth netns "$ns0" type veth peer name lveth netns "$ns1" || {
  say "skipped: cannot create a veth pair"; exit 77; }
ip -n "$ns0" addr add "$net.1/24" dev lveth
ip -n "$ns1" addr add "$net.2/24" dev lveth
for ns in "$ns0" "$ns1"; do
  ip -n "$ns" link set lo up
  ip -n "$ns" link set lveth up
done
# The link's carrier comes up asynchronously; an interface without one is
# not offered by libfabric (the rank would fall back to its loopback).
for i in $(seq 50); do
  ip -n "$ns0" link show lveth | grep -q "state UP" && ip -n "$ns1" link show lveth | grep -q "state UP" && break
  sleep 0.1
done
say "namespaces $ns0 ($net.1) and $ns1 ($net.2) joined by a veth pair"

passed=0 failed=0
# job NAME EXPECT(ok|fail) TIMEOUT REGEX CUT -- loomrun args...
# CUT: 0, or "link:S" (the far end of the veth goes down after S seconds:
# this side loses its carrier too) or "addr:S" (the far namespace drops its
# address: packets still leave, nothing answers).
job() {
  local name=$1 expect=$2 limit=$3 re=$4 cut=$5
  shift 6
  local t0=$(date +%s.%N)
  timeout "$limit" "$loomrun" -x "LOOM_OFI_NETNS=/run/netns/${tag}-%n" "$@" \
      >"$work/out" 2>"$work/err" </dev/null &
  local pid=$!
  case "$cut" in
    link:*) sleep "${cut#*:}"; ip -n "$ns1" link set lveth down ;;
    addr:*) sleep "${cut#*:}"; ip -n "$ns1" addr flush dev lveth ;;
  esac
  wait $pid
  local rc=$? t=$(awk -v a="$t0" -v b="$(date +%s.%N)" "BEGIN{print b-a}")
  case "$cut" in
    link:*) ip -n "$ns1" link set lveth up ;;
    addr:*) ip -n "$ns1" addr add "$net.2/24" dev lveth ;;
  esac
  local ok=1
  if [ "$expect" = ok ]; then
    [ $rc -eq 0 ] || ok=0
    grep -Eq "$re" "$work/out" || ok=0
  else
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || ok=0
    grep -Eq "$re" "$work/err" || ok=0
  fi
  if [ $ok = 1 ]; then
    passed=$((passed + 1))
    printf 'PASS %s (%.1f s, exit %d)\n' "$name" "$t" $rc
  else
    failed=$((failed + 1))
    printf 'FAIL %s (%.1f s, exit %d)\n' "$name" "$t" $rc
    sed 's/^/    out: /' "$work/out" | tail -5
    sed 's/^/    err: /' "$work/err" | tail -10
  fi
}

for prov in net tcp; do
  job "exchange.n2.$prov" ok 120 "^p2p_exchange: rank 1 ok" 0 -- \
      -n 2 --nodes 2 -x "LOOM_OFI_PROVIDER=$prov" "$exchange"
  job "reduce.n4.$prov" ok 120 "^coll_reduce: rank 3 ok" 0 -- \
      -n 4 --nodes 2 -x "LOOM_OFI_PROVIDER=$prov" "$reduce"
done
# Proof that the traffic takes the veth: the ranks' addresses are the
# namespaces' own (LOOM_DEBUG=p2p prints the fabric, 10.213.x.0/24).
job "fabric_is_veth" ok 60 "^p2p_exchange: rank 1 ok" 0 -- \
    -n 2 --nodes 2 -x LOOM_DEBUG=p2p "$exchange" --max 64
grep -q "fabric $net.0/24" "$work/err" || {
  failed=$((failed + 1)); passed=$((passed - 1))
  echo "FAIL fabric_is_veth: the ranks did not use $net.0/24:"; grep "ofi: provider" "$work/err"; }

# The network goes away 2 s into a 60 s job: the ranks must notice (their
# liveness probes find the other node unreachable, or go unanswered for
# LOOM_OFI_PEER_TIMEOUT=5 s) and end the job naming a rank on the other
# node, long before the job's own end.
for prov in net tcp; do
  for cut in link addr; do
    job "${cut}_cut.n4.$prov" fail 45 "rank [0-9]+ on node [^ ]+-n[01] (did not answer|is unreachable)" \
        "$cut:2" -- -n 4 --nodes 2 -x "LOOM_OFI_PROVIDER=$prov" -x LOOM_OFI_PEER_TIMEOUT=5 \
        "$stress" 1 60
  done
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
