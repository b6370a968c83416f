#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The growth curve of doc/performance.md: TLB-hostile random accesses with 4K
# pages over 1 GiB to MAX_GIB (default 64) of touched memory: accesses per
# second (every record, and the counted region) and peak host memory, with
# the host bytes per touched 4K page.  The setup phase writes every line of
# the memory once, so the 64 GiB run reads a billion records (minutes).
# One node of 128 GiB for every size, so the machine stays the same.
# Usage: bench/growth.sh [MMUSIM] (MAX_GIB=N in the environment; make
# bench-growth runs it through bench/record.sh, which writes a complete
# run's output into doc/performance.md)
set -eu
MMUSIM=${1:-./mmusim}
MAX=${MAX_GIB:-64}
echo "mmusim growth on $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '%8s %12s %14s %12s %16s\n' "GiB" "all M/s" "counted M/s" "peak MiB" "bytes/4K page"
g=1
while [ "$g" -le "$MAX" ]; do
  line=$("$MMUSIM" run -m skylake -s machine.mem_per_node=128G -s thp.enabled=never -w "random:size=${g}G,accesses=2M" --json | tr -d ' \n' | sed -e 's/.*"host":{//' \
    -e 's/.*"accesses_per_second":\([0-9.e+]*\).*"counted_accesses_per_second":\([0-9.e+]*\).*"peak_rss_bytes":\([0-9]*\).*/\1 \2 \3/')
  case "$line" in
    *[!0-9.e+\ ]* | "" | *\ *\ *\ *) echo "$0: ${g}G: mmusim run failed" >&2; exit 1 ;;
  esac
  a=$(echo "$line" | cut -d' ' -f1); c=$(echo "$line" | cut -d' ' -f2); r=$(echo "$line" | cut -d' ' -f3)
  printf '%8d %12.2f %14.2f %12.1f %16.1f\n' "$g" "$(echo "$a / 1000000" | bc -l)" "$(echo "$c / 1000000" | bc -l)" \
    "$(echo "$r / 1048576" | bc -l)" "$(echo "$r / ($g * 262144)" | bc -l)"
  g=$((g * 2))
done
