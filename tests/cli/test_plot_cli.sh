#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_plot_cli.sh - `mmusim run -I MS --interval-plot FILE`: the SVG is
# well-formed XML (tests/cli/map_check, GLib's parser) and says in text its
# title (workload and machine), its axis names with their units, and the
# legend entries (the counters, a node each with --per-node); a PNG is a
# PNG; a plot without -I, or of another extension, is exit status 2.
set -u
: "${MMUSIM:=./mmusim}"
: "${MAP_CHECK:=$(dirname "$MMUSIM")/tests/cli/map_check}"
: "${GOLDEN_DIR:=$(dirname "$0")/../golden}"
. "$(dirname "$0")/svg-check.sh"

trace=$GOLDEN_DIR/cases/khugepaged-collapse.txt
"$MMUSIM" run -q -s thp.enabled=madvise -s khugepaged.scan_sleep_millisecs=1 -t "$trace" -I 10 \
  --interval-plot "$tmp/collapse.svg" > /dev/null 2>&1 || bad "run -I --interval-plot"
expect default "$tmp/collapse.svg" "khugepaged-collapse.txt on skylake" "each interval of 10 ms" \
  "x axis: simulated time (ms" "y axis: count in the interval" \
  "legend: dTLB-load-misses" "legend: walk_cycles" "legend: thp_collapse_alloc" "legend: numa_pages_migrated"

"$MMUSIM" run -q -m skylake-2s -w threads:threads=4,size=8M,accesses=40K --whole -I 0.002 --per-node \
  --counters accesses,page-faults --interval-plot "$tmp/nodes.svg" > /dev/null 2>&1 || bad "run -I --per-node --interval-plot"
expect per-node "$tmp/nodes.svg" "on skylake-2s" "panel: accesses" "panel: page-faults" "legend: node 0 (8 CPUs)" \
  "legend: node 1 (8 CPUs)"

"$MMUSIM" run -q -s thp.enabled=madvise -t "$trace" -I 10 --interval-plot "$tmp/c.png" > /dev/null 2>&1 ||
  bad "run --interval-plot FILE.png"
if [ "$(head -c 8 "$tmp/c.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ]; then ok; else bad "c.png is no PNG"; fi

"$MMUSIM" run -q -t "$trace" --interval-plot "$tmp/x.svg" > "$tmp/out" 2>&1
if [ $? -eq 2 ] && grep -q "give -I too" "$tmp/out" && [ ! -e "$tmp/x.svg" ]; then ok; else bad "--interval-plot without -I"; fi
"$MMUSIM" run -q -t "$trace" -I 10 --interval-plot "$tmp/x.pdf" > "$tmp/out" 2>&1
if [ $? -eq 2 ] && grep -q "FILE.svg or FILE.png" "$tmp/out"; then ok; else bad "--interval-plot x.pdf"; fi

# sweep --plot: drawn with cairo, a size axis on log2, a line (legend
# entry) per value of the second axis; the spread kept in results.csv
# (absolute and relative columns) and results.json (every repeat).
cat > "$tmp/llc.ini" <<'INI'
[experiment]
name = llc_size sweep
machine = skylake
workload = random:size=16M,accesses=2K
repeat = 2
metric = LLC-load-misses
[vary]
cache.llc_size = 2M, 8M, 32M
thp.enabled = never, always
INI
"$MMUSIM" sweep "$tmp/llc.ini" -o "$tmp/llc" -j 1 --plot > /dev/null 2>&1 || bad "sweep --plot"
expect sweep "$tmp/llc/plot.svg" "llc_size sweep: LLC-load-misses" "random:size=16M,accesses=2K on skylake" \
  "x axis: cache.llc_size (bytes, log2 scale)" "y axis: LLC-load-misses (mean of 2 runs)" \
  "legend: thp.enabled=never" "legend: thp.enabled=always"
if [ "$(head -c 4 "$tmp/llc/plot.png" | od -An -c | tr -d ' ')" = '211PNG' ]; then ok; else bad "sweep plot.png"; fi
header=$(head -n 1 "$tmp/llc/results.csv")
for col in ",LLC-load-misses," ",LLC-load-misses_stddev," ",LLC-load-misses_rsd,"; do
  case "$header" in *"$col"*) ok ;; *) bad "results.csv has no column $col" ;; esac
done
if tr -d ' \n' < "$tmp/llc/results.json" | grep -q '"repeats":{[^}]*"LLC-load-misses":\[[0-9]*,[0-9]*\]'; then ok
else bad "results.json keeps no repeats of LLC-load-misses"; fi

# A first axis of words: grouped bars, a group per word (3) and in each a
# bar per value of the second axis (2), each with its error bar; a legend
# entry per series, the axes named; the <desc> lists what was drawn.  A
# size axis draws no bar.
cat > "$tmp/modes.ini" <<'INI'
[experiment]
name = thp modes
workload = random:size=8M,accesses=2K
repeat = 2
metric = dTLB-load-misses
[vary]
thp.enabled = never, madvise, always
machine = skylake, zen3
INI
"$MMUSIM" sweep "$tmp/modes.ini" -o "$tmp/modes" -j 1 --plot > /dev/null 2>&1 || bad "sweep --plot of a word axis"
expect bars "$tmp/modes/plot.svg" "thp modes: dTLB-load-misses" "random:size=8M,accesses=2K on each machine" "x axis: thp.enabled (a group of bars per value)" \
  "y axis: dTLB-load-misses (mean of 2 runs)" "legend: machine=skylake" "legend: machine=zen3" \
  "bar: never, machine=skylake: " "bar: madvise, machine=zen3: " "bar: always, machine=zen3: "
"$MAP_CHECK" "$tmp/modes/plot.svg" > "$tmp/desc" 2>&1
bars=$(grep -c '^bar: ' "$tmp/desc")
if [ "$bars" -eq 6 ]; then ok; else bad "word-axis sweep: $bars bars, not 3 groups of 2"; fi
spread=$(grep -c '^bar: .*: [0-9.e+-]* ([0-9.e+-]* to [0-9.e+-]*)$' "$tmp/desc")
if [ "$spread" -eq 6 ]; then ok; else bad "word-axis sweep: $spread of 6 bars carry an error bar"; fi
"$MAP_CHECK" "$tmp/llc/plot.svg" > "$tmp/desc" 2>&1
if grep -q '^bar: \|group of bars' "$tmp/desc"; then bad "a size axis is drawn as bars"; else ok; fi

# plot.gp draws the word axis as plot.svg does: gnuplot's clustered
# histogram with error bars, from plot-groups.dat (a row per word, the
# mean, least and most of each series), a titled bar per series; a size
# axis draws none.  With gnuplot on PATH the script runs clean.
gp=$tmp/modes/plot.gp
if grep -qx 'set style histogram errorbars lw 1 gap 1' "$gp" && grep -qx 'set style data histograms' "$gp"; then ok
else bad "plot.gp of a word axis draws no histogram with error bars"; fi
if [ "$(grep -c "^plot 'plot-groups.dat' using 2:3:4:xtic(1) title 'machine=skylake', '' using 5:6:7 title 'machine=zen3'\$" "$gp")" -eq 2 ]
then ok; else bad "plot.gp plots no bar per series for each terminal"; fi
if grep -qx "set xlabel 'thp.enabled (a group of bars per value)'" "$gp"; then ok; else bad "plot.gp names no word axis"; fi
groups=$(grep -v '^#' "$tmp/modes/plot-groups.dat" | awk 'NF == 7 { print $1 }' | tr '\n' ' ')
if [ "$groups" = '"never" "madvise" "always" ' ]; then ok; else bad "plot-groups.dat rows: $groups"; fi
if awk '!/^#/ && !($3 <= $2 && $2 <= $4 && $6 <= $5 && $5 <= $7) { exit 1 }' "$tmp/modes/plot-groups.dat"; then ok
else bad "plot-groups.dat: a mean outside its least and most"; fi
if grep -q 'histogram' "$tmp/llc/plot.gp" || [ -e "$tmp/llc/plot-groups.dat" ]; then bad "a size axis's plot.gp draws bars"
else ok; fi
if command -v gnuplot > /dev/null; then
  mkdir "$tmp/gp" && cp "$gp" "$tmp/modes/plot-groups.dat" "$tmp/gp/"
  if (cd "$tmp/gp" && gnuplot plot.gp > out 2>&1) && [ ! -s "$tmp/gp/out" ] && grep -q 'machine=zen3' "$tmp/gp/plot.svg"
  then ok; else bad "gnuplot plot.gp: $(cat "$tmp/gp/out")"; fi
fi

# plot.gp draws a size axis with several series as plot.svg does: a line
# with error bars per series from plot-series.dat (a block each, the axis
# in bytes, the mean between its least and most), on a log2 x axis, a
# legend entry per series; no boxes by configuration index.
gp=$tmp/llc/plot.gp
if [ "$(grep -c "^plot 'plot-series.dat' index 0 using 1:2:3:4 with yerrorlines lw 2 pt 7 title 'thp.enabled=never', '' index 1 using 1:2:3:4 with yerrorlines lw 2 pt 7 title 'thp.enabled=always'\$" "$gp")" -eq 2 ]
then ok; else bad "plot.gp of a size axis plots no line per series"; cat "$gp"; fi
if grep -qx 'set logscale x 2' "$gp" && grep -qx "set xlabel 'cache.llc_size (bytes, log2 scale)'" "$gp"; then ok
else bad "plot.gp of a size axis has no log2 x axis"; fi
if grep -q 'boxes' "$gp"; then bad "plot.gp of a size axis draws boxes"; else ok; fi
rows=$(awk '!/^#/ && NF == 4 { print $1 }' "$tmp/llc/plot-series.dat" | tr '\n' ' ')
if [ "$rows" = '2097152 8388608 33554432 2097152 8388608 33554432 ' ]; then ok; else bad "plot-series.dat rows: $rows"; fi
if awk '!/^#/ && NF == 4 && !($3 <= $2 && $2 <= $4) { exit 1 }' "$tmp/llc/plot-series.dat"; then ok
else bad "plot-series.dat: a mean outside its least and most"; fi
if command -v gnuplot > /dev/null; then
  mkdir "$tmp/gs" && cp "$gp" "$tmp/llc/plot-series.dat" "$tmp/gs/"
  if (cd "$tmp/gs" && gnuplot plot.gp > out 2>&1) && [ ! -s "$tmp/gs/out" ] && grep -q 'thp.enabled=always' "$tmp/gs/plot.svg"
  then ok; else bad "gnuplot plot.gp of a size axis: $(cat "$tmp/gs/out")"; fi
fi

echo "plot: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
