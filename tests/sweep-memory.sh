#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A sweep's configurations cost the host little before anything runs:
# 10,000 of them (two axes of 100 values and three fixed settings) are made
# and each machine built and checked within 400 MB of address space (ulimit
# -v), where they once took 1.8 GB (each configuration's strings were placed
# between the pieces of the freed machine before it).  Counts, not times:
# every configuration's command is printed.  Then a trace sweep in groups,
# and the comparison of many results, each within an address-space limit.
set -eu
: "${MMUSIM:=./mmusim}"
case "$MMUSIM" in /*) ;; *) MMUSIM="$(pwd)/$MMUSIM" ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-sweepmem.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# Under AddressSanitizer the shadow memory alone exceeds any such limit.
if ! { sh -c 'ulimit -v 400000 && exec "$0" --version' "$MMUSIM"; } > /dev/null 2>&1; then
  echo "SKIP: $MMUSIM cannot start under ulimit -v 400000 (a sanitizer build): no address-space limit to test"
  exit 77
fi
{
  printf '[experiment]\nname = many\nworkload = seq:accesses=100\n[settings]\n'
  for k in tlb.shootdown_ns tlb.ipi_handler_ns tlb.shootdown_per_cpu_ns; do echo "$k = 500"; done
  printf '[vary]\ncpu.rob_size = %s\n' "$(seq -s, 16 115)"
  printf 'sched.switch_ns = %s\n' "$(seq -s, 1000 1099)"
} > many.ini
status=0
(ulimit -v 400000 && exec "$MMUSIM" sweep many.ini --emit-jobs -o many.out) > jobs.txt 2> err.txt || status=$?
n=$(wc -l < jobs.txt)
if [ "$status" -ne 0 ] || [ "$n" -ne 10000 ]; then
  echo "FAIL: 10,000 configurations under ulimit -v 400000: exit $status, $n commands (want 0 and 10000):"
  head -5 err.txt
  exit 1
fi
# A trace sweep runs its configurations in groups that share one decoding
# pass (cli/sweep.c SWEEP_PASS_READERS): 200 configurations over one trace
# fit in 1 GB of address space, where all 200 machines and threads alive at
# once did not (out of host memory; 3,000 of them held 4.1 GB).
"$MMUSIM" trace convert -w random:size=4M,accesses=2000 t.mtr 2> /dev/null
printf '[experiment]\nname = tsw\ntrace = t.mtr\n[vary]\ncpu.freq_mhz = %s\n' "$(seq -s, 1000 2 1398)" > tsw.ini
status=0
(ulimit -v 1000000 && exec "$MMUSIM" sweep tsw.ini -o tsw.out -j 2) > tsw.txt 2> tsw.err || status=$?
n=$(find tsw.out/results -name '*.json' | wc -l)
if [ "$status" -ne 0 ] || [ "$n" -ne 200 ]; then
  echo "FAIL: a trace sweep of 200 configurations under ulimit -v 1000000: exit $status, $n results (want 0 and 200):"
  tail -5 tsw.err
  exit 1
fi
# The comparison reads each result once and keeps a few kilobytes of it:
# 2,000 results compare (--collect: the table, results.json, results.csv)
# within 150 MB of address space, where holding every parsed result and a
# copy of them all for results.json took 263 MB of memory.  One result is
# run; the others are its copies under the other configurations' ids.
printf '[experiment]\nname = col\nworkload = seq:accesses=100\n[vary]\ncpu.freq_mhz = %s\n' "$(seq -s, 1000 2999)" > col.ini
"$MMUSIM" sweep col.ini --emit-jobs -o col.out | awk '{ gsub("\047", "", $NF); print $NF }' > ids.txt
first=$(head -n 1 ids.txt)
"$MMUSIM" sweep col.ini -o col.out --only "$first" > /dev/null 2>&1
awk -v first="$first" -v dir=col.out/results '
  NR == FNR { text = text $0 "\n"; next }
  $1 != first { t = text; sub("\"id\" : \"" first "\"", "\"id\" : \"" $1 "\"", t); printf "%s", t > (dir "/" $1 ".json"); close(dir "/" $1 ".json") }
' "col.out/results/$first.json" ids.txt
status=0
(ulimit -v 150000 && exec "$MMUSIM" sweep col.ini --collect col.out) > col.txt 2> col.err || status=$?
rows=$(grep -c '^  cpu.freq_mhz=' col.txt || true)
if [ "$status" -ne 0 ] || [ "$rows" -ne 2000 ] || [ "$(grep -c '"id" : ' col.out/results.json)" -ne 2000 ]; then
  echo "FAIL: comparing 2,000 results under ulimit -v 150000: exit $status, $rows table rows (want 0 and 2000):"
  tail -3 col.err
  exit 1
fi
echo "sweep-memory: passed"
