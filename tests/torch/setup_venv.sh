#!/usr/bin/env bash
# Creates (or reuses) the torch venv for the torch_loom tests and benchmark:
#
#   tests/torch/setup_venv.sh BUILD_DIR [NAME]   prints the venv's python on stdout
#
# NAME (default torch-venv) names the venv under BUILD_DIR; LOOM_TORCH_SPEC
# (default torch==2.15.*) the torch it holds.
#
# torch comes from PyPI (the default wheel), with ninja (for
# torch.utils.cpp_extension) and pytest. The venv lives under
# BUILD_DIR/torch-venv and is reused while its marker file names the same
# torch version. Exit 77 (skip) when python3 has no venv module or PyPI
# cannot be reached; exit 1 when the install itself fails.
set -uo pipefail
build=$(cd "${1:?usage: setup_venv.sh BUILD_DIR}" && pwd)
torch_spec=${LOOM_TORCH_SPEC:-torch==2.15.*}
venv=$build/${2:-torch-venv}
marker=$venv/.loom-torch-installed
py=$venv/bin/python

skip() { echo "SKIP: $*" >&2; exit 77; }

if [ -x "$py" ] && [ -f "$marker" ] && [ "$(cat "$marker")" = "$torch_spec" ] \
   && "$py" -c 'import torch, ninja, pytest' >/dev/null 2>&1; then
  echo "$py"; exit 0
fi

python3 -c 'import venv, ensurepip' 2>/dev/null || skip "python3 has no venv/ensurepip (Debian: python3-venv)"
timeout 20 python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/torch/", timeout=15)' \
  >/dev/null 2>&1 || skip "PyPI is unreachable (no package index): torch not installed"

rm -rf "$venv"
python3 -m venv "$venv" || skip "python3 -m venv failed"
log=$build/torch-venv-install.log
start=$(date +%s)
echo "installing $torch_spec, ninja, pytest into $venv (about 3 minutes, 5.4 GB)" >&2
if ! timeout 1800 "$venv/bin/pip" install -q --no-cache-dir "$torch_spec" ninja pytest numpy > "$log" 2>&1; then
  if grep -qiE "could not (find|fetch)|connection|network is unreachable|temporary failure" "$log"; then
    skip "PyPI is unreachable while installing torch"
  fi
  tail -30 "$log" >&2
  echo "FAIL: torch install failed (log: $log)" >&2
  exit 1
fi
echo "$torch_spec" > "$marker"
echo "torch venv ready in $(( $(date +%s) - start )) s" >&2
echo "$py"
