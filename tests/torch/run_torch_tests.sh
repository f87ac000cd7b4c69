#!/usr/bin/env bash
# Runs the torch_loom pytest suite under loomrun at each rank count:
#
#   tests/torch/run_torch_tests.sh BUILD_DIR [RANKS...]     (default ranks: 1 2 3 4)
#
# The torch venv comes from setup_venv.sh (exit 77, skip, when PyPI cannot be
# reached); the extension is compiled once before the jobs. Then the device
# tests (test_device.py) run on the mock torch device at 2 and 3 ranks. Rank
# 0's pytest output is printed; the other ranks' go to
# BUILD_DIR/torch-tests/rankR.NAME.log and are shown when a job fails. A job
# that hangs is killed after 300 s.
set -uo pipefail
build=$(cd "${1:?usage: run_torch_tests.sh BUILD_DIR [RANKS...]}" && pwd)
shift
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2 3 4)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)

py=$("$here/setup_venv.sh" "$build")
rc=$?
[ $rc -eq 0 ] || exit $rc
[ -x "$build/bin/loomrun" ] && [ -e "$build/lib/libloom.so" ] || {
  echo "FAIL: $build has no bin/loomrun or lib/libloom.so (build targets loom loomrun)"; exit 1; }

export PATH=$build/bin:$PATH LOOM_PREFIX=$build TORCH_LOOM_BUILD_DIR=$build/torch-loom-ext
export PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1
logs=$build/torch-tests
mkdir -p "$logs"
export TORCH_LOOM_LOGS=$logs

TORCH_LOOM_BUILD_ONLY=1 "$py" -m torch_loom._build 2>&1 | grep -v "No CUDA runtime" || {
  echo "FAIL: the torch_loom extension did not build"; exit 1; }

# The mock torch device (tests/torch/mock_device) for the device tests
# without a GPU: compiled once here too.
LOOM_DEVICE_MOCK=1 TORCH_LOOM_BUILD_ONLY=1 PYTHONPATH=$here:$PYTHONPATH \
  "$py" -c 'import mock_device; mock_device.load()' > "$logs/mock-build.log" 2>&1 || {
  cat "$logs/mock-build.log"; echo "FAIL: the loommock torch device did not build"; exit 1; }

status=0 passed=0 failed=0
# run_job NAME N ENV... -- PYTEST_ARGS...: one loomrun job of pytest at N ranks.
run_job() {
  local name=$1 n=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  rm -f "$logs"/rank*."$name".log
  local start=$(date +%s)
  env "${envs[@]}" timeout 300 "$build/bin/loomrun" -n "$n" sh -c '
    if [ "${PMIX_RANK:-0}" = 0 ]; then exec "$@"; fi
    exec "$@" > "$TORCH_LOOM_LOGS/rank$PMIX_RANK.'"$name"'.log" 2>&1' sh \
    "$py" -m pytest -q -p no:cacheprovider -o faulthandler_timeout=120 "$@" 2>&1 | grep -v "No CUDA runtime" | tee "$logs/rank0.$name.log"
  local rc=${PIPESTATUS[0]}
  local summary=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$logs/rank0.$name.log" | tail -1)
  local p=$(grep -oE '[0-9]+ passed' <<<"$summary" | grep -oE '[0-9]+')
  local f=$(grep -oE '[0-9]+ failed' <<<"$summary" | grep -oE '[0-9]+')
  passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
  echo "$name: exit $rc, $(( $(date +%s) - start )) s: ${summary:-no pytest summary}"
  if [ $rc -ne 0 ]; then
    status=1
    [ -n "$f" ] || failed=$((failed + 1))
    for l in "$logs"/rank*."$name".log; do [ "$l" = "$logs/rank0.$name.log" ] || { echo "--- $l"; tail -30 "$l"; }; done
  fi
}

for n in "${ranks[@]}"; do
  run_job "$n" "$n" -- "$here"
done
# Device tensors on the mock device (its memory faults on host access; its
# streams run asynchronously), at 2 and 3 ranks.
for n in 2 3; do
  run_job "mock$n" "$n" LOOM_DEVICE_MOCK=1 -- "$here/test_device.py"
done
# The oldest torch supported (TORCH_LOOM_OLDEST, default 2.11; "none" skips):
# the extension and the mock device build against it, and the suite passes
# at 2 ranks on CPU tensors and on the mock device.
oldest=${TORCH_LOOM_OLDEST:-2.11}
if [ "$oldest" != none ]; then
  opy=$(LOOM_TORCH_SPEC="torch==$oldest.*" "$here/setup_venv.sh" "$build" "torch-venv-$oldest")
  orc=$?
  if [ $orc -eq 77 ]; then
    echo "torch $oldest: skipped (PyPI unreachable)"
  elif [ $orc -ne 0 ]; then
    echo "torch $oldest: FAIL: its venv could not be made"
    status=1 failed=$((failed + 1))
  elif ! TORCH_LOOM_BUILD_DIR=$build/torch-loom-ext-$oldest TORCH_LOOM_BUILD_ONLY=1 "$opy" -m torch_loom._build \
        > "$logs/build-$oldest.log" 2>&1 ||
       ! TORCH_LOOM_BUILD_DIR=$build/torch-loom-ext-$oldest LOOM_DEVICE_MOCK=1 TORCH_LOOM_BUILD_ONLY=1 \
        PYTHONPATH=$here:$PYTHONPATH "$opy" -c 'import mock_device; mock_device.load()' >> "$logs/build-$oldest.log" 2>&1; then
    grep -E "error" "$logs/build-$oldest.log" | head -20
    echo "torch $oldest: FAIL: the extension or the mock device did not build"
    status=1 failed=$((failed + 1))
  else
    saved_py=$py
    py=$opy
    run_job "torch$oldest" 2 TORCH_LOOM_BUILD_DIR="$build/torch-loom-ext-$oldest" -- "$here"
    run_job "torch$oldest-mock" 2 TORCH_LOOM_BUILD_DIR="$build/torch-loom-ext-$oldest" LOOM_DEVICE_MOCK=1 \
      -- "$here/test_device.py"
    py=$saved_py
  fi
fi

# The package as users install it: built at install time, then imported in
# a job started by loomrun's path, with neither Loom on PATH nor LOOM_PREFIX
# set. The import must compile nothing.
inst=$build/torch-install
rm -rf "$inst" "$inst.ext"
mkdir -p "$inst.ext"
start=$(date +%s)
if ! LOOM_PREFIX=$build "$py" -m pip install -q --no-build-isolation --no-deps --target "$inst" \
     "$src/python" > "$logs/install.log" 2>&1; then
  tail -20 "$logs/install.log"
  echo "install: FAIL: pip install --no-build-isolation ./python failed"
  status=1 failed=$((failed + 1))
else
  rm -rf "$src/python/build" "$src/python/torch_loom/_prefix.py" "$src/python"/*.egg-info
  out=$(cd "$inst" && env -u LOOM_PREFIX -u TORCH_LOOM_BUILD_DIR PATH=/usr/bin:/bin PYTHONPATH="$inst" \
        TORCH_LOOM_BUILD_DIR="$inst.ext" timeout 120 "$build/bin/loomrun" -n 2 "$py" -c '
import torch, torch_loom, torch.distributed as dist
dist.init_process_group("loom")
x = torch.ones(3); dist.all_reduce(x)
assert x.tolist() == [2.0, 2.0, 2.0], x
assert torch_loom.extension().__file__.startswith("'"$inst"'/torch_loom/_C"), torch_loom.extension().__file__
print("installed package ok")
dist.destroy_process_group()' 2>&1)
  if [ "$(grep -c 'installed package ok' <<<"$out")" = 2 ] && [ -z "$(ls -A "$inst.ext")" ]; then
    passed=$((passed + 1))
    echo "install: ok, $(( $(date +%s) - start )) s (built at install; the job compiled nothing)"
  else
    echo "$out" | tail -20
    echo "install: FAIL: the installed package did not run as installed"
    status=1 failed=$((failed + 1))
  fi
fi
echo "torch: $passed passed, $failed failed"
exit $status
