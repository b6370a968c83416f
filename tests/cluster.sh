#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cluster.sh - the sweeps of doc/experiments.md "Beyond one machine", run
# for real on the engines the page shows:
#  - GNU parallel (Debian's package `parallel`) runs `--emit-jobs`' commands
#    two at a time;
#  - a single-node Slurm (Debian's slurm-wlm: slurmctld, slurmd, and munge
#    for authentication), started by this test in a temporary folder with
#    its own configuration, ports and munge socket, runs them as a job
#    array submitted with the page's sbatch line;
# and `--collect` of each gives the table and the counters of the same
# sweep run at once.  Where an engine is not installed or cannot start
# (slurmd and munged need root), its part says why and the test is skipped
# (exit 77): it never passes without having run both.
set -u
: "${MMUSIM:=./mmusim}"
here=$(cd "$(dirname "$0")" && pwd)
case "$MMUSIM" in /*) ;; *) MMUSIM=$(pwd)/$MMUSIM ;; esac
exp="$here/golden/cases/sweep-mshrs.ini"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-cluster.XXXXXX")
skipped=""
fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skip() { skipped="$skipped $1"; echo "SKIP: $*"; }

cleanup() {
  pids=""
  for p in slurmctld slurmd munged; do
    [ -f "$tmp/slurm/$p.pid" ] && pids="$pids $(cat "$tmp/slurm/$p.pid")"
  done
  [ -n "$pids" ] && kill $pids 2>/dev/null
  # Gone before their folder is: no daemon of this test outlives it.
  n=0
  for pid in $pids; do
    while kill -0 "$pid" 2>/dev/null && [ $n -lt 100 ]; do
      sleep 0.1
      n=$((n + 1))
    done
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# The counters of results.json without the host figures.
counters() {
  tr -d ' \n' < "$1" | sed -e 's/"host":{[^}]*}//g'
}
same_as_once() { # way
  if ! cmp -s "$tmp/once.txt" "$tmp/$1.txt"; then
    bad "the $1 table differs from the sweep run at once"
    diff -u "$tmp/once.txt" "$tmp/$1.txt"
  elif [ "$(counters "$tmp/once/results.json")" != "$(counters "$tmp/$1/results.json")" ]; then
    bad "the $1 results.json differs from the sweep run at once"
  else
    echo "cluster: $1: 4 configurations, collected, agree with the sweep run at once"
  fi
}

"$MMUSIM" sweep "$exp" -o "$tmp/once" -j 1 > "$tmp/once.txt" 2>/dev/null || { echo "FAIL: the sweep itself"; exit 1; }

# ---- GNU parallel ------------------------------------------------------------
if ! command -v parallel >/dev/null 2>&1; then
  skip "GNU parallel: not installed (Debian: apt-get install parallel; ./quickstart check installs it)"
elif ! parallel --version 2>/dev/null | grep -q "GNU parallel"; then
  skip "GNU parallel: 'parallel' on PATH is not GNU parallel (moreutils has one of that name)"
else
  (cd "$tmp" && "$MMUSIM" sweep "$exp" -o par --emit-jobs | parallel -j 2 --will-cite) > "$tmp/par.log" 2>&1 ||
    bad "parallel ran the jobs with failures: $(tail -n 3 "$tmp/par.log")"
  "$MMUSIM" sweep "$exp" --collect "$tmp/par" > "$tmp/par.txt" 2>/dev/null || bad "--collect after parallel"
  same_as_once par
fi

# ---- Slurm -------------------------------------------------------------------
slurm_up() {
  s=$tmp/slurm
  mkdir -p "$s/state" "$s/spool" "$s/out"
  for c in munged munge slurmctld slurmd sbatch squeue scontrol sinfo; do
    command -v "$c" >/dev/null 2>&1 || { echo "'$c' is not installed (Debian: apt-get install slurm-wlm munge)"; return 1; }
  done
  [ "$(id -u)" = 0 ] || { echo "slurmd and munged need root here, and this is user $(id -un)"; return 1; }
  # A key and a socket of its own: no system munged or key is touched.
  dd if=/dev/urandom of="$s/munge.key" bs=1024 count=1 2>/dev/null && chmod 600 "$s/munge.key"
  munged --force --socket="$s/munge.sock" --key-file="$s/munge.key" --pid-file="$s/munged.pid" \
    --log-file="$s/munged.log" --seed-file="$s/munge.seed" 2>"$s/munged.err" ||
    { echo "munged did not start: $(cat "$s/munged.err")"; return 1; }
  # Ports of this run's own, so that two runs of the suite do not meet.
  port=$((20000 + $$ % 20000))
  node=$(hostname -s)
  cat > "$s/slurm.conf" <<EOF
ClusterName=mmusimtest
SlurmctldHost=$node
SlurmUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$s/munge.sock
CredType=cred/munge
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldLogFile=$s/slurmctld.log
SlurmdLogFile=$s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$s/slurm.conf"
  slurmctld -f "$s/slurm.conf" 2>"$s/ctld.err" || { echo "slurmctld did not start: $(cat "$s/ctld.err")"; return 1; }
  slurmd -f "$s/slurm.conf" 2>"$s/d.err" || { echo "slurmd did not start: $(cat "$s/d.err")"; return 1; }
  n=0
  while ! sinfo -h -o %t 2>/dev/null | grep -q idle; do
    n=$((n + 1))
    [ $n -lt 60 ] || { echo "the node did not come up in 30 s: $(sinfo 2>&1 | tail -n 2)"; return 1; }
    sleep 0.5
  done
  return 0
}

if why=$(slurm_up 2>&1); then
  export SLURM_CONF="$tmp/slurm/slurm.conf"
  cd "$tmp/slurm/out"
  "$MMUSIM" sweep "$exp" -o "$tmp/slurmrun" --emit-jobs > jobs.txt
  # The sbatch line of doc/experiments.md, as it is there.
  job=$(sbatch --parsable --array=1-$(wc -l < jobs.txt) --wrap 'sh -c "$(sed -n ${SLURM_ARRAY_TASK_ID}p jobs.txt)"' 2>&1)
  case "$job" in
    ''|*[!0-9]*) bad "sbatch: $job" ;;
    *)
      n=0
      while [ -n "$(squeue -h -j "$job" 2>/dev/null)" ] && [ $n -lt 600 ]; do
        sleep 0.5
        n=$((n + 1))
      done
      [ $n -lt 600 ] || bad "the job array $job did not end in 300 s"
      "$MMUSIM" sweep "$exp" --collect "$tmp/slurmrun" > "$tmp/slurmrun.txt" 2>"$tmp/slurm.collect.err" ||
        bad "--collect after the Slurm array: $(cat "$tmp/slurm.collect.err") $(cat slurm-*.out 2>/dev/null | tail -n 5)"
      same_as_once slurmrun
      ;;
  esac
  cd "$tmp"
else
  skip "Slurm: $why"
fi

if [ $fail -gt 0 ]; then
  exit 1
fi
if [ -n "$skipped" ]; then
  echo "cluster: skipped:$skipped (see the SKIP lines above)"
  exit 77
fi
echo "cluster: GNU parallel and Slurm sweeps agree with the sweep run at once"
exit 0
