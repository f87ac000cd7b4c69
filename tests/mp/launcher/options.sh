#!/bin/bash
# Command-line errors (exit 2 with usage), --help, --version, programs that
# cannot be run (exit 127), mpirun/mpiexec names, option forms.
source "$(dirname "$0")/lib.sh"

bad() {
  note "bad usage: loomrun $*"
  run_job "$@"
  expect_rc 2
  expect_err "^loomrun: "
  expect_err "^usage: loomrun"
  [ -s "$OUT" ] && fail "stdout should be empty"
}
bad
bad -n 2
bad -n 0 true
bad -n -1 true
bad -n abc true
bad -n 2x true
bad -n
bad --bogus true
bad -x 1BAD=2 true
bad --timeout soon true
bad --timeout -1 true
bad --bind-to socket true
bad --tag-output=yes true
expect_clean

note "--help"
run_job --help
expect_rc 0
expect_out "^usage: loomrun"
expect_out "--timeout"

note "--version"
run_job --version
expect_rc 0
expect_out "^loomrun \(Loom\) [0-9]+\.[0-9]+\.[0-9]+$"

note "missing program: 127"
run_job -n 2 "lt-no-such-program-$MARK"
expect_rc 127
expect_err "^loomrun: cannot execute 'lt-no-such-program-$MARK': No such file or directory$"
expect_clean

note "not executable: 127"
touch "$WORK/notexec"
chmod 644 "$WORK/notexec"
run_job -n 2 "$WORK/notexec"
expect_rc 127
expect_err "^loomrun: cannot execute '.*notexec': Permission denied$"
run_job "$WORK"
expect_rc 127
expect_clean

note "program found through PATH, options after the program belong to it"
run_job -n 2 sh -c 'echo "args: $*"' sh -n 5 --timeout
expect_rc 0
expect_out_count "^args: -n 5 --timeout$" 2
expect_clean

note "option forms: -np, --np=, -x VAR=, single-dash long options, --"
run_job -np 2 -tag-output --timeout=30 -oversubscribe --bind-to=none -- "$LT_CLIENT" hello "--marker=$MARK"
expect_rc 0
expect_out_count '^\[[01]\] hello from rank [01] of 2$' 2
expect_clean

note "mpirun and mpiexec are loomrun"
dir=$(dirname "$LOOMRUN")
for name in mpirun mpiexec; do
  if [ -x "$dir/$name" ]; then
    "$dir/$name" -n 2 "$LT_CLIENT" hello "--marker=$MARK" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    expect_rc 0
    expect_out_count "^hello from rank" 2
  else
    fail "$dir/$name missing"
  fi
done
expect_clean

finish
