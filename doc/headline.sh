#!/bin/sh
# The headline run of ./quickstart: one random pointer chase over 1 GiB on
# two x86-64 machines, with 4K pages and with transparent huge pages, and
# where the time goes.
set -eu
MMUSIM=${1:-./mmusim}
for m in westmere skylake; do
  for thp in never always; do
    echo "== $m: ptrchase over 1G, thp.enabled=$thp"
    "$MMUSIM" run -m "$m" -s thp.enabled="$thp" -w "ptrchase:size=1G,accesses=300K" | \
      grep -E "ns per access|dTLB-load-misses|stlb_misses|page_walks|walk_cycles|walk_refs_dram|LLC-load-misses"
    echo
  done
done
