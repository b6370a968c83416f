#!/bin/sh
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
grep -q '^plot "plot.dat" using 1:3:xtic(2) with boxes' "$tmp/jobs/plot.gp" || { echo "FAIL: plot.gp does not plot plot.dat"; exit 1; }
grep -q '^set output "plot.svg"$' "$tmp/jobs/plot.gp" || { echo "FAIL: plot.gp writes no SVG"; exit 1; }
echo "sweep: --plot wrote plot.dat (4 rows) and plot.gp"
