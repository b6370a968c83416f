#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# sweep-shared.sh - configurations over one trace share its decoding and
# still give the counters each gives alone: a sweep of four configurations
# (two repeats each) over an .mtr and over a text trace has the same
# counters in results.json with -j1 (no sharing), -j4 (one pass for all
# four) and -j3 (chunks of three and one), and each configuration's counters
# equal those of a separate `mmusim run` of it.
set -u
: "${MMUSIM:=./mmusim}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-shared.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# The "counters" objects of a JSON file, one file each: $2.0, $2.1, ...
split_counters() {
  sed 's/^ *//' "$1" | awk -v out="$2" '/"counters"/ { f = out "." n++; on = 1 } on { print > f } on && /}/ { on = 0 }'
}

"$MMUSIM" trace convert -w ptrchase:size=32M,accesses=60K "$tmp/t.mtr" 2>/dev/null || bad "writing the .mtr"
"$MMUSIM" trace convert -w random:size=8M,accesses=30K "$tmp/t.txt" 2>/dev/null || bad "writing the text trace"

for trace in t.mtr t.txt; do
  cat > "$tmp/e.ini" <<EOI
[experiment]
name = shared
trace = $trace
repeat = 2
metric = ns_per_access
[vary]
thp.enabled = never, always
tlb.stlb_entries = 768, 1536
EOI
  for j in 1 4 3; do
    if "$MMUSIM" sweep "$tmp/e.ini" -j $j -o "$tmp/j$j" > /dev/null 2> "$tmp/err"; then
      split_counters "$tmp/j$j/results.json" "$tmp/$trace.j$j"
    else
      bad "$trace: sweep -j $j: $(cat "$tmp/err")"
    fi
  done
  k=0
  for thp in never always; do
    for stlb in 768 1536; do
      "$MMUSIM" run -t "$tmp/$trace" -r 2 -s thp.enabled=$thp -s tlb.stlb_entries=$stlb --json > "$tmp/run.json" ||
        bad "$trace: run $thp $stlb"
      split_counters "$tmp/run.json" "$tmp/$trace.run$k"
      for j in 1 4 3; do
        if [ -s "$tmp/$trace.j$j.$k" ] && cmp -s "$tmp/$trace.run$k.0" "$tmp/$trace.j$j.$k"; then
          ok
        else
          bad "$trace: configuration $k ($thp, $stlb) of sweep -j $j differs from mmusim run"
          diff "$tmp/$trace.run$k.0" "$tmp/$trace.j$j.$k" | head -6
        fi
      done
      k=$((k + 1))
    done
  done
  rm -rf "$tmp/j1" "$tmp/j3" "$tmp/j4"
done
echo "sweep-shared: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
