#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A sweep's results do not depend on how it ran: interrupted and resumed,
# run through --emit-jobs in parallel and merged with --collect, or run at
# once, the comparison table and every counter of results.json agree; and
# --plot writes its data and gnuplot script.
set -eu
: "${MMUSIM:=./mmusim}"
here=$(cd "$(dirname "$0")" && pwd)
exp="$here/golden/cases/sweep-mshrs.ini"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-sweep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The counters of results.json without the host figures.
counters() {
  tr -d ' \n' < "$1" | sed -e 's/"host":{[^}]*}//g'
}

"$MMUSIM" sweep "$exp" -o "$tmp/once" -j 1 > "$tmp/once.txt" 2>/dev/null

# Interrupted: kill the sweep once its first result is on disk, then resume.
"$MMUSIM" sweep "$exp" -o "$tmp/resumed" -j 1 > /dev/null 2>&1 &
pid=$!
n=0
# Finished results only: a result being written is a temporary file beside
# its final name until it is renamed into place.
results() {
  find "$1" -name '*.json' 2>/dev/null | wc -l
}
while [ "$(results "$tmp/resumed/results")" -lt 1 ] && [ $n -lt 600 ]; do
  sleep 0.1
  n=$((n + 1))
done
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
done_before=$(results "$tmp/resumed/results")
"$MMUSIM" sweep "$exp" -o "$tmp/resumed" -j 1 > "$tmp/resumed.txt" 2> "$tmp/resumed.err"
if [ "$done_before" -lt 4 ]; then
  grep -q "already done" "$tmp/resumed.err" || { echo "FAIL: the resumed sweep reran finished configurations"; exit 1; }
fi

# Distributed: one command per configuration, run two at a time, collected.
"$MMUSIM" sweep "$exp" -o "$tmp/jobs" --emit-jobs > "$tmp/jobs.cmds"
[ "$(wc -l < "$tmp/jobs.cmds")" -eq 4 ] || { echo "FAIL: --emit-jobs should print 4 commands"; exit 1; }
tr '\n' '\0' < "$tmp/jobs.cmds" | xargs -0 -n 1 -P 2 sh -c 'eval "$0" 2>/dev/null'
"$MMUSIM" sweep "$exp" --collect "$tmp/jobs" > "$tmp/jobs.txt" 2>/dev/null
# A finished sweep emits nothing more to do.
[ -z "$("$MMUSIM" sweep "$exp" -o "$tmp/jobs" --emit-jobs)" ] || { echo "FAIL: jobs left after they all ran"; exit 1; }

for way in resumed jobs; do
  if ! cmp -s "$tmp/once.txt" "$tmp/$way.txt"; then
    echo "FAIL: the $way table differs"; diff -u "$tmp/once.txt" "$tmp/$way.txt"; exit 1
  fi
  if [ "$(counters "$tmp/once/results.json")" != "$(counters "$tmp/$way/results.json")" ]; then
    echo "FAIL: the $way results.json differs"; exit 1
  fi
done
echo "sweep: resumed and distributed sweeps agree with a sweep run at once ($done_before of 4 done before the interruption)"

# --plot writes the data and a gnuplot script that reads it (rendering needs
# gnuplot, which the test does not require).
"$MMUSIM" sweep "$exp" --collect "$tmp/jobs" --plot > /dev/null 2>&1
rows=$(grep -vc '^#' "$tmp/jobs/plot.dat")
[ "$rows" -eq 4 ] || { echo "FAIL: plot.dat has $rows rows, not 4"; exit 1; }
grep -q '^# index label ns_per_access stddev$' "$tmp/jobs/plot.dat" || { echo "FAIL: plot.dat header"; exit 1; }
# The first axis (workload) is words: grouped bars from plot-groups.dat.
grep -q "^plot 'plot-groups.dat' using 2:3:4:xtic(1) title 'cpu.mshrs=1', '' using 5:6:7 title 'cpu.mshrs=10'$" \
  "$tmp/jobs/plot.gp" || { echo "FAIL: plot.gp does not plot plot-groups.dat"; cat "$tmp/jobs/plot.gp"; exit 1; }
grep -q "^set output 'plot.svg'$" "$tmp/jobs/plot.gp" || { echo "FAIL: plot.gp writes no SVG"; exit 1; }
[ "$(grep -vc '^#' "$tmp/jobs/plot-groups.dat")" -eq 2 ] || { echo "FAIL: plot-groups.dat has not 2 groups"; exit 1; }
echo "sweep: --plot wrote plot.dat (4 rows), plot-groups.dat (2 groups) and plot.gp"

# A configuration whose machine runs out of memory: every result, the table
# and the CSV are written, and the sweep exits 1; the CSV marks the row and
# leaves its counters empty; --collect and the --only job agree.
oom="$here/golden/cases/sweep-oom.ini"
st=0
"$MMUSIM" sweep "$oom" -o "$tmp/oom" -j 1 > "$tmp/oom.txt" 2> "$tmp/oom.err" || st=$?
[ "$st" -eq 1 ] || { echo "FAIL: a sweep with an out-of-memory configuration exits $st, not 1"; exit 1; }
[ -s "$tmp/oom/results.json" ] && grep -q '(out of memory)' "$tmp/oom.txt" || { echo "FAIL: no table or results.json"; exit 1; }
tail -n 1 "$tmp/oom.err" | grep -q '^mmusim: sweep: 1 of 2 configurations ran out of simulated memory.*mem_per_node=256M' \
  || { echo "FAIL: no closing line names the configuration"; cat "$tmp/oom.err"; exit 1; }
head -n 1 "$tmp/oom/results.csv" | grep -q '^id,label,machine.mem_per_node,oom,accesses,' || { echo "FAIL: results.csv has no oom column"; exit 1; }
grep -q '^[0-9a-f]*,machine.mem_per_node=256M,256M,1,,,' "$tmp/oom/results.csv" || { echo "FAIL: the out-of-memory row is not marked, or has counters"; exit 1; }
grep -q '^[0-9a-f]*,machine.mem_per_node=2G,2G,0,10000,' "$tmp/oom/results.csv" || { echo "FAIL: the complete row lost its counters"; exit 1; }
grep -q '^  machine.mem_per_node=256M  *-  .*(out of memory)$' "$tmp/oom.txt" || { echo "FAIL: the table shows a value for the out-of-memory row"; exit 1; }
"$MMUSIM" sweep "$oom" --collect "$tmp/oom" --plot > /dev/null 2>&1 || true # exits 1, as checked below
grep -q '^0 "machine.mem_per_node=256M" NaN NaN$' "$tmp/oom/plot.dat" || { echo "FAIL: plot.dat has a value for the out-of-memory row"; exit 1; }
cp "$tmp/oom/results.csv" "$tmp/oom.csv"
st=0
"$MMUSIM" sweep "$oom" --collect "$tmp/oom" > "$tmp/oom-collect.txt" 2>/dev/null || st=$?
[ "$st" -eq 1 ] || { echo "FAIL: --collect of it exits $st, not 1"; exit 1; }
cmp -s "$tmp/oom.txt" "$tmp/oom-collect.txt" && cmp -s "$tmp/oom.csv" "$tmp/oom/results.csv" \
  || { echo "FAIL: --collect wrote another table or CSV"; exit 1; }
# The jobs of --emit-jobs name absolute paths, so they run from anywhere;
# the one that runs out of memory exits 1.
case "$MMUSIM" in
  */*) mmusim=$(cd "$(dirname "$MMUSIM")" && pwd)/$(basename "$MMUSIM") ;;
  *) mmusim=$MMUSIM ;;
esac
(cd "$here" && "$mmusim" sweep golden/cases/sweep-oom.ini -o "$tmp/oom-jobs" --emit-jobs) > "$tmp/oom.cmds"
grep -qv "^'[^']*' 'sweep' '$here/golden/cases/sweep-oom.ini' '-o' '$tmp/oom-jobs' '--only' '[0-9a-f]*'\$" "$tmp/oom.cmds" \
  && { echo "FAIL: --emit-jobs printed a relative path"; cat "$tmp/oom.cmds"; exit 1; }
fails=0
while read -r job; do
  (cd / && eval "$job" 2>/dev/null) || fails=$((fails + 1))
done < "$tmp/oom.cmds"
[ "$fails" -eq 1 ] || { echo "FAIL: $fails jobs failed, not 1 (the out-of-memory one)"; exit 1; }
echo "sweep: an out-of-memory configuration makes the sweep, --collect and its job exit 1, and is marked in results.csv"

# A counter gated by a setting (oom_kill by mem.oom_policy=kill, the
# coalescing ones by tlb.coalesce=true) is a column of results.csv only when
# some configuration reports it, with empty cells in the rows that do not.
if head -n 1 "$tmp/once/results.csv" | grep -q 'stlb_coalesced\|oom_kill'; then
  echo "FAIL: results.csv of a sweep without coalescing or the OOM killer has their columns"; exit 1
fi
cat > "$tmp/coalesce.ini" <<'INI'
[experiment]
machine = zen4
workload = random:size=16M,accesses=20K
[settings]
thp.enabled = never
[vary]
tlb.coalesce = false, true
INI
"$MMUSIM" sweep "$tmp/coalesce.ini" -o "$tmp/coalesce" -j 1 > /dev/null 2>&1
csv="$tmp/coalesce/results.csv"
column() { # the number of the column named $1
  head -n 1 "$csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1
}
for name in stlb_coalesced_hits stlb_coalesced_fills; do
  n=$(column "$name")
  [ -n "$n" ] || { echo "FAIL: results.csv has no $name column"; head -n 1 "$csv"; exit 1; }
  off=$(grep ',tlb.coalesce=false,' "$csv" | cut -d, -f"$n")
  on=$(grep ',tlb.coalesce=true,' "$csv" | cut -d, -f"$n")
  [ -z "$off" ] && [ -n "$on" ] && [ "$on" -gt 0 ] \
    || { echo "FAIL: $name is '$off' without coalescing and '$on' with it"; exit 1; }
done
[ -z "$(column oom_kill)" ] || { echo "FAIL: results.csv has an oom_kill column without the OOM killer"; exit 1; }
echo "sweep: results.csv has the coalescing counters' columns only when a configuration reports them"
