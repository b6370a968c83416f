#!/bin/sh
# The headline run of ./quickstart: one random pointer chase, small against
# large, on two machines, and where the time goes.
set -eu
MMUSIM=${1:-./mmusim}
for m in westmere skylake; do
  for size in 16M 1G; do
    echo "== $m: ptrchase over $size"
    "$MMUSIM" run -m "$m" -w "ptrchase:size=$size,accesses=500K" | \
      grep -E "Performance|ns_per_access|dTLB-load-misses|stlb_misses|page_walks|walk_cycles|walk_refs_dram|LLC-load-misses|seconds time"
    echo
  done
done
