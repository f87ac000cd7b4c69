#!/usr/bin/env bash
# slurm_jobs.sh: real Loom jobs launched by Slurm (srun --mpi=pmix) on a
# private two-node cluster that lives on this one host.
#
#   slurm_jobs.sh [--two-node | --no-two-node] [--only RE] [--exec CMD]
#                 [--timeout S] NAME=PROGRAM...
#
# NAME=PROGRAM gives the path of each built test program: hello, p2p_exchange,
# p2p_stress, coll_barrier, coll_move, coll_reduce, faults, bootstrap_exchange
# (tests/mp/progs).
# A job whose program was not given is skipped.
#
#   --two-node     also run the jobs that span both nodes, expecting success
#                  (the default when run by hand). SLURM_TWO_NODE=1/0 in the
#                  environment wins over both flags.
#   --no-two-node  list those jobs as skipped (CTest passes this until Loom
#                  has an inter-node transport; see tests/slurm/CMakeLists.txt)
#   --only RE      run only the jobs whose name matches RE (grep -E)
#   --exec CMD     start the cluster, run `bash -c CMD` with SLURM_CONF set
#                  instead of the jobs, then tear everything down
#   --timeout S    limit of every srun (default 60)
#
# What it does, as root: installs slurm-wlm, munge and libpmix-dev if one of
# them is missing (nothing else touches the system), writes a slurm.conf and a
# munge key into a private temporary directory, starts its own munged (own
# socket), one slurmctld and two slurmd (nodes n1, n2 on 127.0.0.1) on free
# ports, waits until both nodes are idle, runs the jobs, and always stops every
# daemon it started and removes the directory. Every process it starts
# carries a marker in its environment; whatever still carries it at the end
# is killed by pid (so is what a run killed by SIGKILL left behind, at the
# start of the next run).
#
# Prints PASS/FAIL/SKIP per job and ends with "N passed, N failed[, N skipped]".
# Exit: 0 when every job that ran passed, 1 otherwise (a cluster that does
# not come up counts as one failure), 77 when it cannot run here (not root,
# no apt-get, the packages cannot be installed).
set -u

say() { echo "slurm: $*"; }
skip() { say "skipped: $*"; exit 77; }

# ---- arguments -------------------------------------------------------------
two_node=1
only=""
exec_cmd=""
job_timeout=60
declare -A prog=()
while [ $# -gt 0 ]; do
  case "$1" in
    --two-node) two_node=1; shift ;;
    --no-two-node) two_node=0; shift ;;
    --only) only=$2; shift 2 ;;
    --exec) exec_cmd=$2; shift 2 ;;
    --timeout) job_timeout=$2; shift 2 ;;
    *=*) prog[${1%%=*}]=${1#*=}; shift ;;
    *) echo "slurm_jobs.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "${SLURM_TWO_NODE:-}" in
  1|on|yes|true) two_node=1 ;;
  0|off|no|false) two_node=0 ;;
esac

[ "$(id -u)" -eq 0 ] || skip "not root"

script_start=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# ---- one run at a time on this host ------------------------------------------
# Two runs would share nothing (own ports, own munged), but on 2 cores they
# would make each other's timings meaningless. Fd 9 holds the lock; nothing
# this script starts inherits it, so a run killed by SIGKILL releases it.
lock=/run/lock/loom-slurm-jobs.lock
[ -d /run/lock ] || lock=/tmp/loom-slurm-jobs.lock
exec 9>"$lock" || skip "cannot open $lock"
flock -w 300 9 || skip "another run held $lock for 300 s"

# ---- leftovers of a run that was killed before its cleanup -----------------
# Marker: LOOM_SLURM_RUN=<pid of the script>.<random>.
marker_procs() {  # pids whose environment holds exactly the variable $1
  grep -lsz -- "^$1\$" /proc/[0-9]*/environ 2>/dev/null | sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p'
}
stale=""
for f in $(grep -lsz -- '^LOOM_SLURM_RUN=' /proc/[0-9]*/environ 2>/dev/null); do
  p=${f#/proc/}; p=${p%/environ}
  owner=$(tr '\0' '\n' <"$f" 2>/dev/null | sed -n 's/^LOOM_SLURM_RUN=\([0-9]*\)\..*/\1/p' | head -1)
  [ -n "$owner" ] || continue
  # Its owner is gone (or is no longer this script): a leftover.
  if ! grep -qs slurm_jobs "/proc/$owner/cmdline"; then stale+=" $p"; fi
done
if [ -n "$stale" ]; then
  say "killing processes left by an earlier run:$stale"
  kill -KILL $stale 2>/dev/null
fi
for d in /tmp/loom-slurm.*; do  # their directories, once nothing uses them
  [ -d "$d" ] || continue
  o=$(cat "$d/owner" 2>/dev/null)
  [ -n "$o" ] && grep -qs slurm_jobs "/proc/$o/cmdline" && continue
  rm -rf "$d"
done

# ---- packages --------------------------------------------------------------
# libpmix-dev: Slurm's mpi/pmix plugin loads libpmix.so from it at run time.
packages="slurm-wlm munge libpmix-dev"
missing=""
for p in $packages; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=" $p"
done
if [ -n "$missing" ]; then
  command -v apt-get >/dev/null || skip "apt unavailable (need:$missing)"
  t0=$(date +%s.%N)
  say "installing$missing"
  # No service may start during the install (no init system here, and the
  # packages' own services would run with the system-wide configuration).
  made_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
  fi
  apt_log=$(mktemp)
  ok=0
  if apt-get -o DPkg::Lock::Timeout=300 update >"$apt_log" 2>&1 9>&- &&
     DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y \
       --no-install-recommends $missing >>"$apt_log" 2>&1 9>&-; then
    ok=1
  fi
  [ $made_policy -eq 1 ] && rm -f /usr/sbin/policy-rc.d
  if [ $ok -ne 1 ]; then
    tail -5 "$apt_log" | sed 's/^/slurm: apt: /'
    rm -f "$apt_log"
    skip "apt unavailable (could not install$missing)"
  fi
  rm -f "$apt_log"
  say "installed$missing in $(elapsed "$t0") s"
fi
for b in munged slurmctld slurmd srun sinfo; do
  command -v $b >/dev/null || skip "apt unavailable ($b missing after the install)"
done

# ---- private directory, marker, cleanup ------------------------------------
work=$(mktemp -d /tmp/loom-slurm.XXXXXX) || skip "mktemp failed"
chmod 0755 "$work"
echo $$ >"$work/owner"
# Not exported: only what this run starts carries it (daemons, and through
# them job steps; srun, and through it the tasks), not the script's subshells.
run_marker="LOOM_SLURM_RUN=$$.$RANDOM$RANDOM"
daemons=()   # "name:pid"
job_pid=""   # the job in progress (timeout's pid)
keep_logs=0

# teardown: stops what this run started and removes its directory, once.
# Fails when a process of the run survives SIGKILL.
torn_down=0
teardown() {
  [ $torn_down -eq 1 ] && return 0
  torn_down=1
  # Daemons first, politely (slurmd before slurmctld, munged last), then
  # anything else that still carries this run's marker: job steps, tasks.
  local i pid t0 left ok=0
  t0=$(date +%s.%N)
  # A job still running (interrupted run): timeout passes SIGTERM to srun,
  # which cancels the step while the daemons are still there to do it.
  if [ -n "$job_pid" ] && kill -TERM "$job_pid" 2>/dev/null; then
    for _ in $(seq 30); do kill -0 "$job_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
    pid=${daemons[i]#*:}
    kill -TERM "$pid" 2>/dev/null
  done
  for _ in $(seq 50); do
    left=$(marker_procs "$run_marker" | tr '\n' ' ')
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -n "$left" ]; then
    say "still running 5 s after SIGTERM, killed: $left"
    kill -KILL $left 2>/dev/null
    sleep 0.5
    left=$(marker_procs "$run_marker" | tr '\n' ' ')
    [ -n "$left" ] && { say "error: processes alive after SIGKILL: $left"; ok=1; }
  fi
  if [ $keep_logs -eq 1 ]; then
    for f in "$work"/*.log "$work"/*.out; do
      [ -s "$f" ] || continue
      echo "---- $(basename "$f") (last 15 lines)"
      tail -15 "$f"
    done
  fi
  rm -rf "$work"
  [ ${#daemons[@]} -gt 0 ] &&
    say "stopped ${#daemons[@]} daemons and removed $work in $(elapsed "$t0") s"
  return $ok
}
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  teardown || rc=1
  exit $rc
}
# finish: tears down, then prints the closing line and exits with its verdict.
finish() {
  teardown || failed=$((failed + 1))
  local summary="$passed passed, $failed failed"
  [ $skipped -gt 0 ] && summary+=", $skipped skipped"
  echo "$summary"
  trap - EXIT
  [ $failed -eq 0 ] && exit 0
  exit 1
}
passed=0
failed=0
skipped=0
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM HUP

# ---- configuration and daemons ----------------------------------------------
# Ports: below the kernel's ephemeral range (an outgoing connection's local
# port would make the bind fail), and used by no socket at all right now.
eph_lo=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
[ -n "$eph_lo" ] && [ "$eph_lo" -gt 12000 ] || eph_lo=32768
port_free() { [ -z "$(ss -Htan "sport = :$1" 2>/dev/null)" ]; }
pick_ports() {
  ports=()
  local p
  while [ ${#ports[@]} -lt 3 ]; do
    p=$((10000 + RANDOM % (eph_lo - 10000)))
    case " ${ports[*]} " in *" $p "*) continue ;; esac
    port_free "$p" && ports+=("$p")
  done
}

host=$(hostname -s)
conf=$work/slurm.conf
export SLURM_CONF=$conf
# A user's own Slurm settings must not leak into the jobs.
unset SLURM_JOB_ID SLURM_JOBID SLURM_STEP_ID SLURM_NODELIST SLURM_NTASKS SLURM_NNODES
mkdir -p "$work/munge" "$work/jobs"
write_conf() {
  cat >"$conf" <<EOF
# Written by Loom's tests/slurm/slurm_jobs.sh; removed at the end of the run.
ClusterName=loomtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/socket
StateSaveLocation=$work/ctld
SlurmdSpoolDir=$work/spool-%n
TmpFS=$work/tmpfs-%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd-%n.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[1]} CPUs=2 State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[2]} CPUs=2 State=UNKNOWN
PartitionName=loom Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
EOF
}

# start NAME COMMAND...: in its own session, stdin closed, output to NAME.out.
start() {
  local name=$1; shift
  env "$run_marker" setsid "$@" >"$work/$name.out" 2>&1 </dev/null 9>&- &
  daemons+=("$name:$!")
}
dd if=/dev/urandom of="$work/munge/key" bs=1024 count=1 status=none
chmod 0400 "$work/munge/key"
start munged munged --foreground --force --key-file="$work/munge/key" \
  --socket="$work/munge/socket" --pid-file="$work/munge/pid" \
  --log-file="$work/munged.log" --seed-file="$work/munge/seed"
for _ in $(seq 50); do [ -S "$work/munge/socket" ] && break; sleep 0.1; done
if [ ! -S "$work/munge/socket" ]; then
  keep_logs=1
  say "munged did not start"
  failed=1
  finish
fi

# start_slurm: slurmctld and both slurmd on fresh ports and state; waits
# (15 s at most) for both nodes to be idle. Returns 0 when they are, 2 when a
# daemon lost a race for its port (worth another try), 1 otherwise.
start_slurm() {
  pick_ports
  rm -rf "$work/ctld" "$work"/spool-n? "$work"/tmpfs-n? "$work"/slurm*.log "$work"/slurm*.out
  mkdir -p "$work/ctld" "$work/spool-n1" "$work/spool-n2" "$work/tmpfs-n1" "$work/tmpfs-n2"
  write_conf
  start slurmctld slurmctld -D -f "$conf"
  start slurmd-n1 slurmd -D -f "$conf" -N n1
  start slurmd-n2 slurmd -D -f "$conf" -N n2
  local d
  states=""
  for _ in $(seq 150); do
    states=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u | tr '\n' ' ')
    [ "$states" = "n1 idle n2 idle " ] && return 0
    for d in "${daemons[@]}"; do
      kill -0 "${d#*:}" 2>/dev/null || break 2
    done
    sleep 0.1
  done
  cat "$work"/slurm*.out "$work"/slurm*.log 2>/dev/null | grep -q 'Address already in use' && return 2
  return 1
}
# stop_slurm: ends this attempt's slurmctld and slurmd (munged stays).
stop_slurm() {
  local d keep=()
  for d in "${daemons[@]}"; do
    case "$d" in
      slurm*) kill -KILL "${d#*:}" 2>/dev/null; wait "${d#*:}" 2>/dev/null ;;
      *) keep+=("$d") ;;
    esac
  done
  daemons=("${keep[@]}")
}

t0=$(date +%s.%N)
for try in 1 2 3; do
  start_slurm
  up=$?
  [ $up -eq 2 ] || break
  say "try $try: a port was taken meanwhile (${ports[*]}); again on other ports"
  stop_slurm
done
if [ $up -ne 0 ]; then
  keep_logs=1
  for d in "${daemons[@]}"; do
    kill -0 "${d#*:}" 2>/dev/null || { say "${d%%:*} exited:"; tail -5 "$work/${d%%:*}.out"; }
  done
  say "the nodes did not become idle: ${states:-no answer from slurmctld}"
  failed=1
  finish
fi
say "cluster up in $(elapsed "$t0") s (slurmctld :${ports[0]}, n1 :${ports[1]}, n2 :${ports[2]})"

if [ -n "$exec_cmd" ]; then
  env "$run_marker" bash -c "$exec_cmd" 9>&- &
  job_pid=$!
  wait $job_pid
  exit $?
fi

# ---- jobs ------------------------------------------------------------------

# task_status FILE R: what srun's stderr (FILE) says of task R, from its lines
# "srun: error: NODE: task 3: Killed" / "...: tasks 0-1,4: Exited with exit code 5".
task_status() {
  awk -v r="$2" '
    /^srun: error: [^:]+: tasks? [0-9,-]+: / {
      s = $0; sub(/^srun: error: [^:]+: tasks? /, "", s)
      list = s; sub(/:.*/, "", list)
      st = s; sub(/^[0-9,-]+: /, "", st)
      n = split(list, part, ",")
      for (i = 1; i <= n; i++) {
        if (split(part[i], ab, "-") == 2) { if (r + 0 >= ab[1] + 0 && r + 0 <= ab[2] + 0) print st }
        else if (part[i] + 0 == r + 0) print st
      }
    }' "$1"
}

# job NAME [--exit N | --exit-nonzero | --exit-any] [--max-seconds S]
#     [--stdout-re RE] [--stderr-re RE] [--stdout-count RE=K] [--stderr-count RE=K]
#     [--task R=STATUS] [--note-stderr-re RE] [--hint TEXT] [--two-node]
#     -- PROGRAM-NAME [srun options...] -- [program args...]
# Runs `srun --mpi=pmix -O [srun options] PROGRAM [args]` under `timeout`,
# then checks its exit status, its output, how long it took, and that no
# process of the job, no file in its TMPDIR and no /dev/shm/loom-* file of it
# is left.
#   --task R=STATUS    srun reports task R as STATUS ("Killed", "Exited with
#                      exit code 5"), alone or within a range of tasks
#   --note-stderr-re   an expectation Loom does not meet under srun yet: a miss
#                      prints a note and does not fail the job
#   --hint TEXT        printed with a failure
#   --two-node         skipped unless the two-node jobs are on
job() {
  local name=$1; shift
  local want_exit=0 max_s="" is_two=0 hint=""
  local -a out_res=() err_res=() out_counts=() err_counts=() note_res=() tasks=() sargs=() pargs=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --exit) want_exit=$2; shift 2 ;;
      --exit-nonzero) want_exit=nonzero; shift ;;
      --exit-any) want_exit=any; shift ;;
      --stdout-re) out_res+=("$2"); shift 2 ;;
      --stderr-re) err_res+=("$2"); shift 2 ;;
      --note-stderr-re) note_res+=("$2"); shift 2 ;;
      --task) tasks+=("$2"); shift 2 ;;
      --hint) hint=$2; shift 2 ;;
      --stdout-count) out_counts+=("$2"); shift 2 ;;
      --stderr-count) err_counts+=("$2"); shift 2 ;;
      --max-seconds) max_s=$2; shift 2 ;;
      --two-node) is_two=1; shift ;;
      --) shift; break ;;
      *) echo "job: unknown option $1" >&2; exit 2 ;;
    esac
  done
  local pname=$1; shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  pargs=("$@")

  if [ -n "$only" ] && ! grep -Eq -- "$only" <<<"$name"; then return; fi
  if [ $is_two -eq 1 ] && [ $two_node -eq 0 ]; then
    echo "SKIP $name (two-node jobs off: --two-node or SLURM_TWO_NODE=1 enables them)"
    skipped=$((skipped + 1)); return
  fi
  local exe=${prog[$pname]:-}
  if [ -z "$exe" ] || [ ! -x "$exe" ]; then
    echo "SKIP $name (program $pname not given)"
    skipped=$((skipped + 1)); return
  fi

  local d="$work/jobs/$name"
  mkdir -p "$d/tmp"
  local jmarker="LOOM_SLURM_JOB=$$.$RANDOM$RANDOM"
  local shm_before
  shm_before=$(ls /dev/shm 2>/dev/null | grep '^loom-' | sort)
  local t0 rc secs
  t0=$(date +%s.%N)
  env "$run_marker" "$jmarker" TMPDIR="$d/tmp" timeout -k 5 "$job_timeout" \
    srun --mpi=pmix -O "${sargs[@]}" "$exe" "${pargs[@]}" >"$d/out" 2>"$d/err" </dev/null 9>&- &
  job_pid=$!
  wait $job_pid  # (not in the foreground: a trapped SIGTERM must not wait for the job)
  rc=$?
  job_pid=""
  secs=$(elapsed "$t0")
  echo "$rc" >"$d/rc"

  local -a why=()
  # timeout(1) says 124 when it sent SIGTERM, 137 when it had to SIGKILL.
  if [ "$rc" -eq 124 ] ||
     { [ "$rc" -eq 137 ] && awk -v s="$secs" -v m="$job_timeout" 'BEGIN { exit !(s >= m) }'; }; then
    why+=("srun did not end within ${job_timeout} s (timeout rc $rc)")
  elif [ "$want_exit" = nonzero ]; then
    [ "$rc" -ne 0 ] || why+=("exit status 0, expected a failure")
  elif [ "$want_exit" != any ]; then
    [ "$rc" -eq "$want_exit" ] || why+=("exit status $rc, expected $want_exit")
  fi
  local re c k n
  for re in "${out_res[@]+"${out_res[@]}"}"; do
    grep -Eq -- "$re" "$d/out" || why+=("stdout does not match /$re/")
  done
  for re in "${err_res[@]+"${err_res[@]}"}"; do
    grep -Eq -- "$re" "$d/err" || why+=("stderr does not match /$re/")
  done
  for c in "${out_counts[@]+"${out_counts[@]}"}"; do
    re=${c%=*}; k=${c##*=}; n=$(grep -Ec -- "$re" "$d/out")
    [ "$n" -eq "$k" ] || why+=("stdout has $n lines matching /$re/, expected $k")
  done
  local got
  for c in "${tasks[@]+"${tasks[@]}"}"; do
    got=$(task_status "$d/err" "${c%%=*}")
    [ "$got" = "${c#*=}" ] || why+=("srun says task ${c%%=*}: '${got:-nothing}', expected '${c#*=}'")
  done
  for c in "${err_counts[@]+"${err_counts[@]}"}"; do
    re=${c%=*}; k=${c##*=}; n=$(grep -Ec -- "$re" "$d/err")
    [ "$n" -eq "$k" ] || why+=("stderr has $n lines matching /$re/, expected $k")
  done
  if [ -n "$max_s" ] && awk -v s="$secs" -v m="$max_s" 'BEGIN { exit !(s > m) }'; then
    why+=("took $secs s, expected at most $max_s s")
  fi
  # Leftovers: give a teardown in progress up to 5 s, then kill them.
  local left=""
  for _ in $(seq 50); do
    left=$(marker_procs "$jmarker" | tr '\n' ' ')
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -n "$left" ]; then
    why+=("processes left behind: $left")
    kill -KILL $left 2>/dev/null
  fi
  local lt
  lt=$(ls -A "$d/tmp")
  [ -z "$lt" ] && rmdir "$d/tmp" || why+=("files left in TMPDIR: $lt")
  local shm_new
  shm_new=$(comm -13 <(echo "$shm_before") <(ls /dev/shm 2>/dev/null | grep '^loom-' | sort) |
            grep '^loom-slurm\.pmix\.' | tr '\n' ' ')
  if [ -n "$shm_new" ]; then
    why+=("files left in /dev/shm: $shm_new")
    for f in $shm_new; do rm -f "/dev/shm/$f"; done
  fi

  local -a notes=()
  for re in "${note_res[@]+"${note_res[@]}"}"; do
    grep -Eq -- "$re" "$d/err" || notes+=("stderr does not match /$re/ (a known gap: not counted)")
  done

  if [ ${#why[@]} -eq 0 ]; then
    echo "PASS $name (${secs} s, exit $rc)"
    for re in "${notes[@]+"${notes[@]}"}"; do echo "    note: $re"; done
    passed=$((passed + 1))
  else
    echo "FAIL $name (${secs} s, exit $rc)"
    for re in "${why[@]}"; do echo "    $re"; done
    [ -n "$hint" ] && echo "    hint: $hint"
    echo "    ---- srun --mpi=pmix -O ${sargs[*]} $exe ${pargs[*]}"
    echo "    ---- stdout (first 30 lines):"; head -30 "$d/out" | sed 's/^/    /'
    echo "    ---- stderr (first 30 lines):"; head -30 "$d/err" | sed 's/^/    /'
    failed=$((failed + 1))
  fi
  # What Slurm and Loom said when a job was meant to fail: kept in the log.
  if [ "$want_exit" != 0 ] && [ ${#why[@]} -eq 0 ]; then
    sed 's/^/    | /' "$d/err" | head -12
  fi
}

# ---- the jobs --------------------------------------------------------------
# Expectations are those of the loomrun tests (tests/mp/*.cmake) for the same
# programs, except where loomrun is the one that speaks: srun names a failed
# task as "srun: error: NODE: task R: Exited with exit code C" or
# "...: task R: Killed", and does not print a PMIx_Abort message.
hello_ok='^Hello from rank [0-9]+ of'

# One node.
for n in 2 3; do
  job hello.N1n$n --stdout-count "$hello_ok $n on n[12]\$=$n" \
    -- hello -N 1 -n $n --export=ALL,EXPECT_SIZE=$n --
done
job p2p_exchange.N1n2 --stdout-count '^p2p_exchange: rank [0-9]+ ok=2' -- p2p_exchange -N 1 -n 2 --
job p2p_stress.N1n3 --stdout-count '^p2p_stress: rank [0-9]+ ok=3' -- p2p_stress -N 1 -n 3 -- 777 2
job coll_barrier.N1n3 --stdout-count '^coll_barrier: rank [0-9]+ ok=3' -- coll_barrier -N 1 -n 3 --
job coll_move.N1n3 --stdout-count '^coll_move: rank [0-9]+ ok=3' -- coll_move -N 1 -n 3 -- sweep
job coll_reduce.N1n2 --stdout-count '^coll_reduce: rank [0-9]+ ok=2' -- coll_reduce -N 1 -n 2 --
# Ranks that fail: the step ends by itself. A rank that aborts (PMIx_Abort)
# makes srun exit with its code; srun's line for that task is a race between
# the rank's own exit and Slurm's SIGKILL ("Exited with exit code C" or
# "Killed"), so it is not checked.
job fault.fatal_comm.N1n3 --exit 5 --stderr-re 'rank 2: MPI_Comm_rank: MPI_ERR_COMM' \
  -- faults -N 1 -n 3 -- fatal-comm
job fault.abort.N1n2 --exit 5 --stderr-re 'rank 1: MPI_Abort called.*on node n1' -- faults -N 1 -n 2 -- abort 5
job fault.no_finalize.N1n2 --exit-nonzero --stderr-re 'rank 1.*without calling MPI_Finalize' \
  -- faults -N 1 -n 2 -- no-finalize
# A rank killed by SIGKILL while its peer waits in a 16 MB rendezvous, without
# -K/--kill-on-bad-exit: Slurm ends the step by itself about 1 s later (its
# PMIx plugin sees a client of the same slurmstepd lose its connection and
# cancels the step; the others die by SIGKILL).
for n in 2 3; do
  job fault.die_in_rndv.N1n$n --exit 137 --max-seconds 20 --task "$((n - 1))=Killed" \
    -- faults -N 1 -n $n -- die-in-rndv
done

# Two nodes, PMIx only (no MPI_Init): every rank is on the node Slurm put it
# on, the PMIx node ids differ, and a fence spans both slurmstepds.
job boot.N2n4 --stdout-count ': ok$=4' \
  --stderr-count 'PMIx client .* of 4, .*node 0 of 2 \(n1\)$=2' \
  --stderr-count 'PMIx client .* of 4, .*node 1 of 2 \(n2\)$=2' \
  -- bootstrap_exchange -N 2 -n 4 --export=ALL,LOOM_DEBUG=boot --
job boot.N2n3 --stdout-count ': ok$=3' \
  --stderr-count 'PMIx client .* of 3, .*node 0 of 2 \(n1\)$=2' \
  --stderr-count 'PMIx client .* of 3, .*node 1 of 2 \(n2\)$=1' \
  -- bootstrap_exchange -N 2 -n 3 --export=ALL,LOOM_DEBUG=boot --

# Two nodes, MPI: they need Loom's inter-node transport (--two-node).
if [ $two_node -eq 0 ]; then
  # A Loom built without libfabric must fail fast and say why (exit 55,
  # MPI_ERR_UNSUPPORTED_OPERATION), not hang.
  job hello.N2n4.no_transport --exit 55 --max-seconds 20 \
    --stderr-re 'built without libfabric' \
    --hint 'exit 0 means MPI_Init works across nodes: turn the two-node jobs on' \
    -- hello -N 2 -n 4 --
fi
for n in 4 3; do
  job hello.N2n$n --two-node --stdout-count "$hello_ok $n on n[12]\$=$n" \
    --stdout-re " on n1\$" --stdout-re " on n2\$" \
    -- hello -N 2 -n $n --export=ALL,EXPECT_SIZE=$n --
done
job p2p_exchange.N2n2 --two-node --stdout-count '^p2p_exchange: rank [0-9]+ ok=2' \
  -- p2p_exchange -N 2 -n 2 --
job p2p_exchange.N2n4 --two-node --stdout-count '^p2p_exchange: rank [0-9]+ ok=4' \
  -- p2p_exchange -N 2 -n 4 -- --max 4194307
job p2p_stress.N2n3 --two-node --stdout-count '^p2p_stress: rank [0-9]+ ok=3' \
  -- p2p_stress -N 2 -n 3 -- 12345 2
job coll_barrier.N2n4 --two-node --stdout-count '^coll_barrier: rank [0-9]+ ok=4' \
  -- coll_barrier -N 2 -n 4 --
job coll_move.N2n4 --two-node --stdout-count '^coll_move: rank [0-9]+ ok=4' \
  -- coll_move -N 2 -n 4 -- sweep
job coll_move.N2n3 --two-node --stdout-count '^coll_move: rank [0-9]+ ok=3' \
  -- coll_move -N 2 -n 3 -- nonblocking
job coll_reduce.N2n3 --two-node --stdout-count '^coll_reduce: rank [0-9]+ ok=3' \
  -- coll_reduce -N 2 -n 3 --
job coll_reduce.N2n4 --two-node --stdout-count '^coll_reduce: rank [0-9]+ ok=4' \
  -- coll_reduce -N 2 -n 4 --
job fault.abort.N2n3 --two-node --exit 3 --stderr-re 'rank 2.*MPI_Abort.*on node n2' -- faults -N 2 -n 3 -- abort 3
# The killed rank shares n2 with rank 2: Slurm ends the step as on one node.
job fault.die_in_rndv.N2n4 --two-node --exit-nonzero --max-seconds 20 --task '3=Killed' \
  -- faults -N 2 -n 4 -- die-in-rndv
# The killed rank is alone on n2: Slurm does NOT end the step then (seen with
# a plain PMIx client: the others ran on until they ended by themselves), so
# rank 0, waiting on n1 in the rendezvous, must notice the lost peer itself
# and fail; otherwise this job hangs until the srun timeout.
job fault.die_in_rndv.N2n2 --two-node --exit-nonzero --max-seconds 20 --task '1=Killed' \
  --stderr-re 'rank 0: .*rank 1 on node n2 is unreachable' \
  -- faults -N 2 -n 2 -- die-in-rndv

say "jobs done $(elapsed "$script_start") s after the start"
finish
