#!/bin/sh
# make bench: simulated accesses per second of fixed workloads, the median of
# five runs each, and the peak host memory.  Benchmarks, not tests: figures go
# to doc/performance.md by hand with the machine they ran on.
set -eu
MMUSIM=${1:-./mmusim}
RUNS=${BENCH_RUNS:-5}
run() {
  name=$1; shift
  rates=""
  rss=0
  for i in $(seq "$RUNS"); do
    line=$("$MMUSIM" run "$@" --json | tr -d ' \n' | sed -e 's/.*"accesses_per_second":\([0-9.e+]*\).*"peak_rss_bytes":\([0-9]*\).*/\1 \2/')
    rates="$rates ${line% *}"
    r=${line#* }
    [ "$r" -gt "$rss" ] && rss=$r
  done
  median=$(printf '%s\n' $rates | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '%-28s %12.2f M accesses/s (median of %d)  peak RSS %6.1f MiB\n' "$name" \
    "$(echo "$median / 1000000" | bc -l)" "$RUNS" "$(echo "$rss / 1048576" | bc -l)"
}
echo "mmusim bench on $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
run "tlb-friendly seq 64M"     -m skylake -w seq:size=64M,accesses=20M
run "tlb-hostile random 4G"    -m skylake -w random:size=4G,accesses=10M
run "ptrchase 1G (dependent)"  -m skylake -w ptrchase:size=1G,accesses=5M
run "stripped: seq, no LLC"    -m skylake -s cache.llc_size=0 -s tlb.stlb_entries=0 -w seq:size=64M,accesses=20M
