#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make validate: run every experiment under doc/experiments/ with
# `mmusim sweep`, then rewrite the generated table of doc/validation.md (the
# lines between its "validate:begin" and "validate:end" markers) from the
# sweeps' results.csv files.
#
# Usage: doc/validate.sh MMUSIM OUTDIR [VALIDATION_MD]
#
# The mail's figures are not in the results: they are the MAIL table below,
# one line per compared configuration:
#   experiment|configuration number (1 = the first)|baseline configuration
#   number|mail's figure, relative to the baseline|where the mail's figure
#   comes from|why the figures differ when they are not within the band
# The mmusim figure is the experiment's metric (its `metric` key, by default
# ns_per_access) for that configuration divided by the baseline's.  "Within 20%" compares the two relative figures:
# |mmusim / mail - 1| <= 0.20.
set -eu
MMUSIM=${1:?usage: validate.sh MMUSIM OUTDIR [VALIDATION_MD]}
OUT=${2:?usage: validate.sh MMUSIM OUTDIR [VALIDATION_MD]}
DOC=$(cd "$(dirname "$0")" && pwd)
MD=${3:-$DOC/validation.md}
BAND=0.20

MAIL='seed000-x264|2|1|0.973|12m17.154s with THP against 12m37.962s without ("Just 2.7%")|
seed001-thp-disable|2|1|0.528|220.6 s with the THP-disable prctl against 417.6 s with THP|the chunk layout of the test is not in the mail and sets the share of remote pages; see the README
seed002-ppc64-thp|2|1|0.569|117.01 ns with 16M hugetlbfs pages against 205.77 ns with 64K pages|
seed002-ppc64-thp|3|1|0.554|113.91 ns with 16M THP against 205.77 ns with 64K pages|
seed002-ppc64-thp|5|4|0.404|1.07 s with THP against 2.65 s for 50M random accesses over 1 GiB|
seed003-numa-pmd|2|1|0.754|395 k/sec on mainline against 524 k/sec on mainline with THP (+32.7% throughput)|the page tables of the 288M heap (576K) stay in the caches, so 4K walks are short and overlap the data misses; those of a real heap do not (README)
seed003-numa-pmd|3|1|0.771|395 k/sec on mainline against 512 k/sec on numa/core with the patch (+29.6%)|with 4K pages the one page walker bounds the run once memory is local, so balancing shortens it little (README)
seed003-numa-pmd|4|2|0.801|524 k/sec on mainline with THP against 654 k/sec on numa/core with the patch and THP (+24.8%)|
seed003-numa-pmd|4|1|0.604|395 k/sec on mainline against 654 k/sec on numa/core with the patch and THP|the THP gain on mainline is smaller in the model (first row)
seed004-huge-stack|2|1|0.90|"about a 10% speedup on x86", read from plots|'

# A sweep that fails (a configuration out of memory: exit 1) does not stop
# the others; the table is written with what ran, and the script exits 1
# (tests/validate-oom.sh checks this with a stand-in for mmusim).
mkdir -p "$OUT"
failed=""
for ini in "$DOC"/experiments/*/experiment.ini; do
  name=$(basename "$(dirname "$ini")")
  echo "validate: $name"
  "$MMUSIM" sweep "$ini" -o "$OUT/$name" || failed="$failed $name"
done

# One table row per MAIL line whose experiment ran.
rows=$(mktemp "${TMPDIR:-/tmp}/mmusim-validate.XXXXXX")
trap 'rm -f "$rows" "$rows.md"' EXIT
printf '%s\n' "$MAIL" | while IFS='|' read -r name conf base mail source why; do
  [ -n "$name" ] || continue
  csv="$OUT/$name/results.csv"
  ini="$DOC/experiments/$name/experiment.ini"
  if [ ! -f "$csv" ]; then
    echo "validate: no results for $name (no doc/experiments/$name?)" >&2
    continue
  fi
  metric=$(sed -n 's/^[[:space:]]*metric[[:space:]]*=[[:space:]]*\([^[:space:]]*\).*/\1/p' "$ini" | head -n 1)
  awk -v conf="$conf" -v base="$base" -v metric="${metric:-ns_per_access}" -v mail="$mail" -v name="$name" \
      -v source="$source" -v why="$why" -v band="$BAND" '
    # Split one CSV line into f[1..n]: fields may be double-quoted and hold
    # commas; a doubled quote inside quotes is one quote.
    function csvsplit(line, f,    n, i, c, q, cur) {
      n = 1; q = 0; cur = ""
      for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (q) {
          if (c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur c; i++ }
          else if (c == "\"") q = 0
          else cur = cur c
        } else if (c == "\"") q = 1
        else if (c == ",") { f[n++] = cur; cur = "" }
        else cur = cur c
      }
      f[n] = cur
      return n
    }
    NR == 1 { n = csvsplit($0, h); for (i = 1; i <= n; i++) if (h[i] == metric) col = i; next }
    { csvsplit($0, f); v[NR - 1] = f[col]; label[NR - 1] = f[2] }
    END {
      if (!col) { printf "validate: %s: no column %s\n", name, metric > "/dev/stderr"; exit 1 }
      if ((conf in v) && (base in v) && (v[conf] == "" || v[base] == "")) {
        # A configuration out of memory has empty counter cells.
        printf "| %s | `%s` against `%s` | %s (%s) | - | - | no: out of simulated memory |\n", \
          name, label[conf], label[base], mail, source
        exit 0
      }
      if (!((conf in v) && (base in v)) || v[base] == 0) {
        printf "validate: %s: no configuration %s or %s\n", name, conf, base > "/dev/stderr"; exit 1
      }
      rel = v[conf] / v[base]
      ratio = rel / mail
      ok = (ratio - 1 <= band && 1 - ratio <= band) ? "yes" : "no"
      if (ok == "no" && why != "") ok = ok ": " why
      printf "| %s | `%s` against `%s` | %s (%s) | %.3f (%.3f / %.3f %s) | %.3f | %s |\n", \
        name, label[conf], label[base], mail, source, rel, v[conf], v[base], metric, ratio, ok
    }' "$csv" >> "$rows"
done

# Rewrite the lines between the markers; everything else is kept.
awk -v rows="$rows" '
  /<!-- validate:begin/ {
    print
    print "| experiment | configuration | mail (relative to the baseline) | mmusim (relative to the baseline) | mmusim / mail | within 20% |"
    print "|---|---|---|---|---|---|"
    while ((getline line < rows) > 0) print line
    skip = 1; next
  }
  /<!-- validate:end/ { skip = 0 }
  !skip { print }' "$MD" > "$rows.md"
if ! grep -q '<!-- validate:begin' "$MD"; then
  echo "validate: $MD has no validate:begin marker" >&2
  exit 1
fi
cat "$rows.md" > "$MD"
echo "validate: wrote $MD"
if [ -n "$failed" ]; then
  echo "validate: these sweeps did not complete:$failed (see their messages above)" >&2
  exit 1
fi
