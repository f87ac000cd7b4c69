#!/bin/bash
# Output forwarding (whole lines, --tag-output, last partial line) and stdin
# (to rank 0 only; closed or /dev/null stdin must not hang anything).
# usage: stdio.sh N   (N >= 2)
source "$(dirname "$0")/lib.sh"
N=${1:-8}
LAST=$((N - 1))

note "many lines from $N ranks, full stdio buffers: no torn or interleaved line"
run_job -n "$N" "$LT_CLIENT" lines 3000 100 "--marker=$MARK"
expect_rc 0
[ "$(wc -l <"$OUT")" = $((N * 3000)) ] || fail "stdout has $(wc -l <"$OUT") lines"
[ "$(wc -l <"$ERR")" = $((N * 3000)) ] || fail "stderr has $(wc -l <"$ERR") lines"
bad=$(grep -cvE '^<[0-9]+:[0-9]+:[a-z]{100}>$' "$OUT")
[ "$bad" = 0 ] || fail "$bad torn stdout lines"
bad=$(grep -cvE '^\{[0-9]+:[0-9]+:[a-z]{100}\}$' "$ERR")
[ "$bad" = 0 ] || fail "$bad torn stderr lines"
expect_clean

note "--tag-output on stdout and stderr"
run_job -n "$N" --tag-output "$LT_CLIENT" lines 2000 60 "--marker=$MARK"
expect_rc 0
bad=$(grep -cvE '^\[([0-9]+)\] <\1:[0-9]+:[a-z]{60}>$' "$OUT")
[ "$bad" = 0 ] || fail "$bad stdout lines not tagged with their own rank"
bad=$(grep -cvE '^\[([0-9]+)\] \{\1:[0-9]+:[a-z]{60}\}$' "$ERR")
[ "$bad" = 0 ] || fail "$bad stderr lines not tagged with their own rank"
for r in $(seq 0 $LAST); do
  [ "$(grep -c "^\[$r\] " "$OUT")" = 2000 ] || fail "rank $r: wrong number of tagged lines"
done
expect_clean

note "lines longer than a pipe buffer stay whole"
run_job -n 3 "$LT_CLIENT" lines 4 200000 "--marker=$MARK"
expect_rc 0
python3 - "$OUT" <<'PY' || fail "long lines torn"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "", "no final newline"
lines = lines[:-1]
assert len(lines) == 12, len(lines)
for l in lines:
    assert re.fullmatch(r"<\d+:\d+:[a-z]{200000}>", l), l[:40]
PY
expect_clean

note "a last line without newline is completed"
run_job -n 2 --tag-output "$LT_CLIENT" partial "--marker=$MARK"
expect_rc 0
expect_out_count '^\[[01]\] partial from rank [01]$' 2
[ "$(tail -c1 "$OUT" | od -An -c | tr -d ' ')" = '\n' ] || fail "output does not end with a newline"
expect_clean

note "stdin (a pipe) goes to rank 0 only"
printf 'one\ntwo\nthree' >"$WORK/in"
STDIN_FILE="$WORK/in" run_job -n "$N" "$LT_CLIENT" stdin "--marker=$MARK"
expect_rc 0
expect_out "^echo: one$"
expect_out "^echo: two$"
expect_out "^echo: three"
expect_out "rank 0 stdin done$"
expect_out_count "^rank [0-9]+ stdin eof$" "$LAST"
expect_out_count "stdin data" 0
expect_clean

note "a large stdin through a pipe reaches rank 0 intact"
seq 1 200000 >"$WORK/big"
"$LOOMRUN" -n 2 bash -c '[ "$PMIX_RANK" = 0 ] && md5sum || cat' "$MARK" <"$WORK/big" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0
expect_out "^$(md5sum <"$WORK/big" | cut -d' ' -f1)"
expect_clean

note "stdin closed: nothing hangs"
"$LOOMRUN" -n 3 "$LT_CLIENT" stdin "--marker=$MARK" <&- >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0
expect_out "rank 0 stdin done$"
expect_clean

note "stdin a pipe that never closes: ranks that do not read it are not held up"
mkfifo "$WORK/fifo"
exec 8<>"$WORK/fifo"  # read-write: never reaches EOF
STDIN_FILE=/dev/fd/8 run_job -n 2 "$LT_CLIENT" hello "--marker=$MARK"
exec 8<&-
expect_rc 0
expect_out_count "^hello from rank" 2
expect_faster_than 3000

if command -v script >/dev/null; then
  note "stdin a terminal (through script(1)): copied to rank 0"
  printf 'typed\n\004' | script -qec "$LOOMRUN -n 2 $LT_CLIENT stdin --marker=$MARK" /dev/null >"$OUT" 2>&1
  RC=$?
  expect_rc 0
  expect_out "echo: typed"
  expect_out "rank 0 stdin done"
  expect_out "rank 1 stdin eof"
fi
expect_clean

finish
