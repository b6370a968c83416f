#!/bin/sh
# make bench: simulated accesses per second of fixed workloads, the median of
# BENCH_RUNS runs (default 5) each, and the peak host memory.  Two rates per
# workload: every record of the run (setup included) and the counted region
# alone (the measured accesses, where the workload's character shows).
# Benchmarks, not tests: figures go to doc/performance.md by hand with the
# machine they ran on.
set -eu
MMUSIM=${1:-./mmusim}
RUNS=${BENCH_RUNS:-5}
median() {
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
run() {
  name=$1; shift
  all=""; counted=""; rss=0
  for i in $(seq "$RUNS"); do
    line=$("$MMUSIM" run "$@" --json | tr -d ' \n' | sed -e 's/.*"host":{//' \
      -e 's/.*"accesses_per_second":\([0-9.e+]*\).*"counted_accesses_per_second":\([0-9.e+]*\).*"peak_rss_bytes":\([0-9]*\).*/\1 \2 \3/')
    a=$(echo "$line" | cut -d' ' -f1); c=$(echo "$line" | cut -d' ' -f2); r=$(echo "$line" | cut -d' ' -f3)
    all="$all $a"; counted="$counted $c"
    [ "$r" -gt "$rss" ] && rss=$r
  done
  printf '%-34s %7.2f M/s all, %7.2f M/s counted (median of %d)  peak RSS %6.1f MiB\n' "$name" \
    "$(echo "$(median $all) / 1000000" | bc -l)" "$(echo "$(median $counted) / 1000000" | bc -l)" "$RUNS" \
    "$(echo "$rss / 1048576" | bc -l)"
}
echo "mmusim bench on $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
run "tlb-friendly seq 64M"          -m skylake -s thp.enabled=never -w seq:size=64M,accesses=20M
run "tlb-hostile random 4G"         -m skylake -s thp.enabled=never -w random:size=4G,accesses=10M
run "tlb-hostile random 4G, THP"    -m skylake -s thp.enabled=always -w random:size=4G,accesses=10M
run "ptrchase 1G (dependent)"       -m skylake -s thp.enabled=never -w ptrchase:size=1G,accesses=5M
run "ptrchase 1G (dependent), THP"  -m skylake -s thp.enabled=always -w ptrchase:size=1G,accesses=5M
run "stripped: seq, no LLC, no STLB" -m skylake -s thp.enabled=never -s cache.llc_size=0 -s tlb.stlb_entries=0 -w seq:size=64M,accesses=20M
