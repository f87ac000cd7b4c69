#!/bin/bash
# -x VAR[=value]: exported to every rank, later -x wins, a bare name takes
# loomrun's value, an unset bare name is warned about and skipped.
source "$(dirname "$0")/lib.sh"

export LT_FROM_ENV="value from loomrun's environment"
unset LT_NOT_SET
note "-x VAR=value, -x VAR, -x of an unset variable, repeated -x"
run_job -n 3 -x LT_A=alpha -x LT_FROM_ENV -x LT_NOT_SET -x LT_B=1 -x LT_B=2 -x LT_EMPTY= \
  "$LT_CLIENT" env LT_A LT_FROM_ENV LT_NOT_SET LT_B LT_EMPTY "--marker=$MARK"
expect_rc 0
expect_out_count "^rank [0-2] LT_A=alpha$" 3
expect_out_count "^rank [0-2] LT_FROM_ENV=value from loomrun's environment$" 3
expect_out_count "^rank [0-2] LT_NOT_SET unset$" 3
expect_out_count "^rank [0-2] LT_B=2$" 3
expect_out_count "^rank [0-2] LT_EMPTY=$" 3
expect_err "^loomrun: warning: -x LT_NOT_SET: .*not set"
expect_clean

note "-x overrides what loomrun sets (LOOM_OVERSUBSCRIBE)"
run_job -n 2 -x LOOM_OVERSUBSCRIBE=1 "$LT_CLIENT" env LOOM_OVERSUBSCRIBE "--marker=$MARK"
expect_rc 0
expect_out_count "LOOM_OVERSUBSCRIBE=1$" 2
expect_clean

# loomrun confined to one CPU (util-linux taskset): two ranks oversubscribe it.
ONE_CORE="$WORK/loomrun-on-cpu0"
printf '#!/bin/sh\nexec taskset -c 0 "%s" "$@"\n' "$LOOMRUN" > "$ONE_CORE"
chmod +x "$ONE_CORE"

note "oversubscribed ranks get glibc.pthread.rseq=0 added to GLIBC_TUNABLES"
GLIBC_TUNABLES=glibc.malloc.arena_max=2 LOOMRUN="$ONE_CORE" run_job -n 2 \
  "$LT_CLIENT" env LOOM_OVERSUBSCRIBE GLIBC_TUNABLES "--marker=$MARK"
expect_rc 0
expect_out_count "^rank [01] LOOM_OVERSUBSCRIBE=1$" 2
expect_out_count "^rank [01] GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.pthread.rseq=0$" 2
expect_clean

note "a GLIBC_TUNABLES that names the rseq tunable is the user's; a rank per core gets none"
GLIBC_TUNABLES=glibc.pthread.rseq=1 LOOMRUN="$ONE_CORE" run_job -n 2 \
  "$LT_CLIENT" env GLIBC_TUNABLES "--marker=$MARK"
expect_rc 0
expect_out_count "^rank [01] GLIBC_TUNABLES=glibc.pthread.rseq=1$" 2
expect_clean
unset GLIBC_TUNABLES
LOOMRUN="$ONE_CORE" run_job -n 1 "$LT_CLIENT" env LOOM_OVERSUBSCRIBE GLIBC_TUNABLES "--marker=$MARK"
expect_rc 0
expect_out "^rank 0 LOOM_OVERSUBSCRIBE=0$"
expect_out "^rank 0 GLIBC_TUNABLES unset$"
expect_clean

note "a value with '=' and spaces survives"
run_job -n 1 -x "LT_EQ=a=b c" "$LT_CLIENT" env LT_EQ "--marker=$MARK"
expect_rc 0
expect_out "^rank 0 LT_EQ=a=b c$"
expect_clean

note "loomrun's own environment is inherited"
LT_INHERITED=yes run_job -n 2 "$LT_CLIENT" env LT_INHERITED "--marker=$MARK"
expect_rc 0
expect_out_count "LT_INHERITED=yes$" 2
expect_clean

finish
