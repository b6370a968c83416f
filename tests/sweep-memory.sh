#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A sweep's configurations cost the host little before anything runs:
# 10,000 of them (two axes of 100 values and three fixed settings) are made
# and each machine built and checked within 400 MB of address space (ulimit
# -v), where they once took 1.8 GB (each configuration's strings were placed
# between the pieces of the freed machine before it).  Counts, not times:
# every configuration's command is printed.
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
echo "sweep-memory: passed"
