#!/usr/bin/env bash
# tune_cache.sh: the measured thresholds end to end (core/tune.h), in a
# private cache directory.
#
#   tune_cache.sh LOOMRUN LOOM_INFO HELLO EXCHANGE
#
#  0. A short job (a hello, under LOOM_TUNE_MIN_JOB_MS's default 200 ms)
#     measures nothing and writes no file; LOOM_TUNE_MIN_JOB_MS=0 (exported
#     for the rest) lets every first job measure.
#  1. A first 2-rank job with no cache measures (LOOM_DEBUG=tune says so)
#     and writes tune-<host>.conf; loom-info --tuning then says "cached".
#  2. A second job reads it and measures nothing.
#  3. A corrupt file and a stale key (another kernel) are measured again.
#  4. A place that cannot be written: no measurement, no file, defaults.
#  5. The environment overrides the cache; LOOM_TUNE=0 ignores it.
#  6. An oversubscribed job never measures.
#  7. A cached window (CMA from 16 KiB to 64 KiB, below and across the eager
#     limit) moves every size of p2p_exchange correctly, and so does one
#     that gives every size to CMA.
#  8. loom-info --tune measures at more sizes and rewrites the cache.
set -u
loomrun=$1 info=$2 hello=$3 exchange=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export LOOM_TUNE_CACHE=$dir/cache LOOM_TUNE=auto
unset LOOM_SHM_CMA_MIN LOOM_SHM_CMA_MAX
fail() { echo "tune_cache: FAIL: $*" >&2; exit 1; }
file() { ls "$LOOM_TUNE_CACHE"/tune-*.conf 2>/dev/null | head -1; }
job() { timeout 60 "$loomrun" "$@"; }

# 0. a short job leaves the measurement to a longer one
unset LOOM_TUNE_MIN_JOB_MS
out=$(LOOM_DEBUG=tune job -n 2 "$hello" 2>&1) || fail "short job: $out"
echo "$out" | grep -q "\[tune\] measured" && fail "a hello job measured: $out"
echo "$out" | grep -q "not measuring: the job ran .* ms, under LOOM_TUNE_MIN_JOB_MS=200" ||
  fail "short job did not say why it did not measure: $out"
[ -z "$(file)" ] || fail "short job wrote a cache"
export LOOM_TUNE_MIN_JOB_MS=0

# 1. first job measures
out=$(LOOM_DEBUG=tune job -n 2 "$hello" 2>&1) || fail "first job: $out"
echo "$out" | grep -q "\[tune\] measured in .* us: CMA" || fail "first job did not measure: $out"
f=$(file)
[ -n "$f" ] || fail "no cache file written"
grep -q "^shm_cma_min = " "$f" || fail "cache has no shm_cma_min: $(cat "$f")"
grep -q "^cost_us = " "$f" || fail "cache has no cost"
ls "$LOOM_TUNE_CACHE" | grep -q tmp && fail "temporary file left: $(ls "$LOOM_TUNE_CACHE")"
tuning=$("$info" --tuning) || fail "loom-info --tuning failed"
echo "$tuning" | grep -q "shm_cma_min .*(cached)" || fail "loom-info does not say cached: $tuning"
echo "$tuning" | grep -q "(valid)" || fail "loom-info: cache not valid: $tuning"

# 2. second job reads it
out=$(LOOM_DEBUG=tune job -n 2 "$hello" 2>&1) || fail "second job: $out"
echo "$out" | grep -q "\[tune\] measured" && fail "second job measured again: $out"

# 3. corrupt and stale files are measured again
echo "this is not a cache" > "$f"
"$info" --tuning | grep -q "(corrupt)" || fail "loom-info does not call the file corrupt"
out=$(LOOM_DEBUG=tune job -n 2 "$hello" 2>&1) || fail "job on corrupt cache: $out"
echo "$out" | grep -q "\[tune\] measured" || fail "corrupt cache not measured again: $out"
grep -q "^kernel = " "$f" || fail "corrupt cache not rewritten"
sed -i 's/^kernel = .*/kernel = 0.0-some-other-kernel/' "$f"
"$info" --tuning | grep -q "(stale)" || fail "loom-info does not call the file stale"
out=$(LOOM_DEBUG=tune job -n 2 "$hello" 2>&1) || fail "job on stale cache: $out"
echo "$out" | grep -q "\[tune\] measured" || fail "stale cache not measured again: $out"
grep -q "0.0-some-other-kernel" "$f" && fail "stale cache not rewritten"

# 4. a place that cannot be written (below a regular file, even for root)
touch "$dir/plain"
out=$(LOOM_TUNE_CACHE=$dir/plain/cache LOOM_DEBUG=tune job -n 2 "$hello" 2>&1) ||
  fail "job with unwritable cache: $out"
echo "$out" | grep -q "not measuring: " || fail "unwritable place not reported: $out"
echo "$out" | grep -q "\[tune\] measured" && fail "measured without a place to keep it"
LOOM_TUNE_CACHE=$dir/plain/cache "$info" --tuning | grep -q "shm_cma_min 64M (default)" ||
  fail "unwritable place: defaults not in use"

# 5. environment over cache; LOOM_TUNE=0
LOOM_SHM_CMA_MIN=128k "$info" --tuning | grep -q "shm_cma_min 128K (environment)" ||
  fail "LOOM_SHM_CMA_MIN does not override the cache"
LOOM_SHM_CMA_MAX=1m "$info" --tuning | grep -q "shm_cma_max 1M (environment)" ||
  fail "LOOM_SHM_CMA_MAX does not override the cache"
LOOM_TUNE=0 "$info" --tuning | grep -q "shm_cma_min 64M (default)" || fail "LOOM_TUNE=0 reads the cache"
rm -f "$f"
out=$(LOOM_TUNE=0 LOOM_DEBUG=tune job -n 2 "$hello" 2>&1) || fail "LOOM_TUNE=0 job: $out"
[ -z "$(file)" ] || fail "LOOM_TUNE=0 wrote a cache"

# 6. oversubscribed: never measures
out=$(LOOM_DEBUG=tune job -n 2 -x LOOM_OVERSUBSCRIBE=1 "$hello" 2>&1) || fail "oversubscribed job: $out"
[ -z "$(file)" ] || fail "an oversubscribed job measured"

# 7. data through a cached window, and through CMA at every size
mkdir -p "$LOOM_TUNE_CACHE"
out=$(LOOM_DEBUG=tune job -n 2 "$hello" 2>&1) || fail "job to create the cache: $out"
f=$(file)
sed -i -e 's/^shm_cma_min = .*/shm_cma_min = 16K/' -e 's/^shm_cma_max = .*/shm_cma_max = 64K/' "$f"
out=$(LOOM_DEBUG=p2p job -n 2 "$exchange" 2>&1) || fail "p2p_exchange in a cached window: $out"
echo "$out" | grep -q "reads on from 16384 B to 65536 B also below the eager limit" ||
  fail "the cached window is not in use: $out"
[ "$(echo "$out" | grep -c 'p2p_exchange: rank . ok')" = 2 ] || fail "p2p_exchange: $out"
sed -i -e 's/^shm_cma_min = .*/shm_cma_min = 25/' -e 's/^shm_cma_max = .*/shm_cma_max = none/' "$f"
out=$(job -n 3 "$exchange" 2>&1) || fail "p2p_exchange with CMA at every size: $out"
[ "$(echo "$out" | grep -c 'p2p_exchange: rank . ok')" = 3 ] || fail "p2p_exchange: $out"

# 8. loom-info --tune
rm -f "$f"
out=$(timeout 60 "$info" --tune 2>&1) || fail "loom-info --tune: $out"
echo "$out" | grep -q "shm_cma_min .*(cached)" || fail "loom-info --tune printed no result: $out"
echo "$out" | grep -q "4M  CMA read" || fail "loom-info --tune did not measure up to 4 MiB: $out"
echo "tune_cache: ok"
