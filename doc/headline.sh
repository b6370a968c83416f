#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The headline run of ./quickstart: one random pointer chase over 1 GiB on
# two x86-64 machines and one ppc64 machine, with base pages (4K on x86-64,
# 64K on ppc64 hash) and with transparent huge pages (2M, 16M), where the
# time goes in each run, then a table of the six.
set -eu
MMUSIM=${1:-./mmusim}
WORKLOAD="ptrchase:size=1G,accesses=300K"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-headline.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for run in "westmere x86-64 4K 2M" "skylake x86-64 4K 2M" "power9-hash ppc64 64K 16M"; do
  set -- $run
  m=$1 arch=$2
  for thp in never always; do
    [ "$thp" = never ] && page=$3 || page=$4
    echo "== $m ($arch): ptrchase over 1G on $page pages, thp.enabled=$thp"
    "$MMUSIM" run -m "$m" -s thp.enabled="$thp" -w "$WORKLOAD" > "$tmp/$m-$thp"
    if [ "$arch" = ppc64 ]; then
      pattern="ns per access|dTLB-load-misses|erat_misses|slb_misses|page_walks|walk_cycles|walk_refs_dram|LLC-load-misses"
    else
      pattern="ns per access|dTLB-load-misses|stlb_misses|page_walks|walk_cycles|walk_refs_dram|LLC-load-misses"
    fi
    grep -E "$pattern" "$tmp/$m-$thp"
    echo
  done
done

echo "== 4K (64K) pages against transparent huge pages, ns per access (and walk cycles' share of all cycles)"
printf '%-12s %-7s %22s %22s %9s\n' machine arch "base pages" "huge pages" "speed-up"
for run in "westmere x86-64 4K 2M" "skylake x86-64 4K 2M" "power9-hash ppc64 64K 16M"; do
  set -- $run
  m=$1
  base=$(awk '/ns per access/ { print $(NF-3) }' "$tmp/$m-never")
  huge=$(awk '/ns per access/ { print $(NF-3) }' "$tmp/$m-always")
  wb=$(awk '$2 == "walk_cycles" { print $4 }' "$tmp/$m-never")
  wh=$(awk '$2 == "walk_cycles" { print $4 }' "$tmp/$m-always")
  printf '%-12s %-7s %22s %22s %8.2fx\n' "$m" "$2" "$3: $base ($wb)" "$4: $huge ($wh)" \
    "$(echo "$base $huge" | awk '{ print $1 / $2 }')"
done
