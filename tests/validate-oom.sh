#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# doc/validate.sh goes on past a sweep that runs out of simulated memory:
# the table rows that compare one of its out-of-memory configurations say
# so, every other row is written, and the script exits 1 after writing the
# table.  The sweeps are those of a stand-in for mmusim (no simulation: it
# writes results.csv as `mmusim sweep` does, with made-up values), and the
# table is written into a copy of doc/validation.md; the real one is not
# touched.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
doc="$here/../doc"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-validate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The stand-in: `sweep INI -o DIR` writes DIR/results.csv with five
# configurations (as many as the largest configuration number validate.sh
# compares), labelled as a sweep over a workload's settings (quoted, with
# commas) and whose metric is the configuration number.  For one experiment
# (seed002-ppc64-thp) configuration 4 runs out of memory: its row has oom 1
# and empty counter cells, and the stand-in closes with the message and the
# exit status of `mmusim sweep` (cli/sweep.c, report_oom()).
oom_name=seed002-ppc64-thp
oom_conf=4
cat > "$tmp/mmusim" <<EOF
#!/bin/sh
set -eu
[ "\$1" = sweep ] && [ "\$3" = -o ] || { echo "stand-in: unexpected arguments: \$*" >&2; exit 2; }
name=\$(basename "\$(dirname "\$2")")
mkdir -p "\$4"
echo "id,label,workload,oom,accesses,ns_per_access,seconds" > "\$4/results.csv"
failed=""
for k in 1 2 3 4 5; do
  if [ "\$name" = $oom_name ] && [ \$k -eq $oom_conf ]; then
    echo "00000000000\$k,\"workload=w,conf=\$k\",\"w,conf=\$k\",1,,," >> "\$4/results.csv"
    echo "mmusim: sweep [\$k/5] workload=w,conf=\$k: 0.01 s (simulated machine out of memory)" >&2
    failed="workload=w,conf=\$k (00000000000\$k)"
  else
    echo "00000000000\$k,\"workload=w,conf=\$k\",\"w,conf=\$k\",0,1000,\$k,\$k" >> "\$4/results.csv"
    echo "mmusim: sweep [\$k/5] workload=w,conf=\$k: 0.01 s" >&2
  fi
done
if [ -n "\$failed" ]; then
  echo "mmusim: sweep: 1 of 5 configurations ran out of simulated memory and could not complete: \$failed" >&2
  exit 1
fi
EOF
chmod +x "$tmp/mmusim"

cp "$doc/validation.md" "$tmp/validation.md"
before=$(cksum < "$doc/validation.md")
st=0
"$doc/validate.sh" "$tmp/mmusim" "$tmp/out" "$tmp/validation.md" > "$tmp/validate.out" 2> "$tmp/validate.err" || st=$?
[ "$(cksum < "$doc/validation.md")" = "$before" ] || { echo "FAIL: validate.sh changed doc/validation.md"; exit 1; }
[ "$st" -eq 1 ] || { echo "FAIL: validate.sh exits $st, not 1, after a sweep ran out of memory"; cat "$tmp/validate.err"; exit 1; }
grep -q "^validate: wrote $tmp/validation.md\$" "$tmp/validate.out" || { echo "FAIL: validate.sh wrote no table"; exit 1; }
tail -n 1 "$tmp/validate.err" | grep -q "^validate: these sweeps did not complete: $oom_name " \
  || { echo "FAIL: validate.sh does not name the sweep that did not complete"; cat "$tmp/validate.err"; exit 1; }

# The table: one row per comparison of the MAIL table, in its order.
sed -n '/<!-- validate:begin/,/<!-- validate:end/p' "$tmp/validation.md" | grep '^| seed' > "$tmp/rows"
want=$(sed -n "/^MAIL='/,/'\$/p" "$doc/validate.sh" | grep -c '|')
[ "$(wc -l < "$tmp/rows")" -eq "$want" ] || { echo "FAIL: $(wc -l < "$tmp/rows") table rows, not $want"; cat "$tmp/rows"; exit 1; }
# Against the out-of-memory configuration, as either side: no figures.
grep -q "^| $oom_name | \`workload=w,conf=5\` against \`workload=w,conf=4\` | .* | - | - | no: out of simulated memory |\$" "$tmp/rows" \
  || { echo "FAIL: the row against the out-of-memory configuration does not say so"; cat "$tmp/rows"; exit 1; }
[ "$(grep -c 'out of simulated memory' "$tmp/rows")" -eq 1 ] || { echo "FAIL: other rows say out of simulated memory"; cat "$tmp/rows"; exit 1; }
# The same experiment's other comparisons, and the other experiments'
# (seed001's metric is seconds), have their figures.
grep -q "^| $oom_name | \`workload=w,conf=3\` against \`workload=w,conf=1\` | .* | 3.000 (3.000 / 1.000 ns_per_access) | " "$tmp/rows" \
  || { echo "FAIL: the complete comparisons of $oom_name lost their figures"; cat "$tmp/rows"; exit 1; }
grep -q '^| seed001-thp-disable | `workload=w,conf=2` against `workload=w,conf=1` | .* | 2.000 (2.000 / 1.000 seconds) | ' "$tmp/rows" \
  || { echo "FAIL: the other experiments' rows lost their figures"; cat "$tmp/rows"; exit 1; }
# Outside the markers the page is kept.
sed '/<!-- validate:begin/,/<!-- validate:end/d' "$doc/validation.md" > "$tmp/outside.want"
sed '/<!-- validate:begin/,/<!-- validate:end/d' "$tmp/validation.md" > "$tmp/outside.got"
cmp -s "$tmp/outside.want" "$tmp/outside.got" || { echo "FAIL: validate.sh changed the page outside its markers"; exit 1; }
echo "validate: a sweep out of simulated memory is marked in its rows, the other $((want - 1)) rows are written, and the script exits 1"
