#!/bin/sh
# run_gpu.sh PROBE -- COMMAND...: runs COMMAND (run_expect.sh and its job)
# only when PROBE finds a CUDA device; otherwise exits 77, which CTest
# reports as skipped. The mock is off in these runs: they are the real thing.
probe=$1
shift
[ "$1" = "--" ] && shift
unset LOOM_DEVICE_MOCK
"$probe" || exit 77
exec "$@"
