#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench: simulated accesses per second of fixed workloads, the median of
# BENCH_RUNS runs (default 5) each, and the peak host memory.  Two rates per
# workload: every record of the run (setup included) and the counted region
# alone (the measured accesses, where the workload's character shows).
# Benchmarks, not tests.  make bench runs this through bench/record.sh,
# which writes a complete run's output into doc/performance.md.
set -eu
MMUSIM=${1:-./mmusim}
RUNS=${BENCH_RUNS:-5}
median() {
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
timed() { # median seconds of RUNS runs of a command
  ts=""
  for i in $(seq "$RUNS"); do
    t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
    ts="$ts $(echo "$t1 - $t0" | bc -l)"
  done
  median $ts
}
run() {
  name=$1; shift
  all=""; counted=""; rss=0
  for i in $(seq "$RUNS"); do
    line=$("$MMUSIM" run "$@" --json | tr -d ' \n' | sed -e 's/.*"host":{//' \
      -e 's/.*"accesses_per_second":\([0-9.e+]*\).*"counted_accesses_per_second":\([0-9.e+]*\).*"peak_rss_bytes":\([0-9]*\).*/\1 \2 \3/')
    case "$line" in
      *[!0-9.e+\ ]* | "" | *\ *\ *\ *) echo "$0: $name: mmusim run failed" >&2; exit 1 ;;
    esac
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
run "ppc64 hash: random 1G, 64K pages" -m power7 -s thp.enabled=never -w random:size=1G,accesses=5M
run "ppc64 hash: random 1G, 16M THP"  -m power7 -s thp.enabled=always -w random:size=1G,accesses=5M
run "stripped: seq, no LLC, no STLB" -m skylake -s thp.enabled=never -s cache.llc_size=0 -s tlb.stlb_entries=0 -w seq:size=64M,accesses=20M
# 16 threads on 16 CPUs of 4 nodes: the engine choosing among threads.
run "threads: 16 on 4 nodes x 4 CPUs"  -m skylake -s machine.nodes=4 -s machine.cpus_per_node=4 -s thp.enabled=never \
  -w threads:threads=16,accesses=8M
# Replay against decoding: the same TLB-hostile stream written as .mtr, read
# with nothing done (`trace info --verify`, the limit for replay) and run
# through the full model; the ratio is the price of the model over decoding.
rdir=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-bench.XXXXXX")
"$MMUSIM" trace convert -w random:size=1G,accesses=5M "$rdir/r.mtr"
rrecs=$("$MMUSIM" trace info --verify "$rdir/r.mtr" | sed -n 's/^verified: *\([0-9]*\) records.*/\1/p')
rdec=$(timed "$MMUSIM" trace info --verify "$rdir/r.mtr")
rrun=$(timed "$MMUSIM" run -m skylake -s thp.enabled=never -t "$rdir/r.mtr")
rrun1=$(timed "$MMUSIM" run -j 1 -m skylake -s thp.enabled=never -t "$rdir/r.mtr")
printf '%-34s %7.2f M records/s decoded, %7.2f M/s replayed: the replay takes %.1fx the decode time (%.1fx decoding in the model'"'"'s thread, -j 1) (median of %d)\n' \
  ".mtr replay random 1G ($rrecs recs)" "$(echo "$rrecs / $rdec / 1000000" | bc -l)" \
  "$(echo "$rrecs / $rrun / 1000000" | bc -l)" "$(echo "$rrun / $rdec" | bc -l)" "$(echo "$rrun1 / $rdec" | bc -l)" "$RUNS"
rm -rf "$rdir"
# A sweep against one run: four configurations (STLB sizes) over one text
# trace, decoded once for all of them and run -j (host CPUs) at a time,
# against one configuration alone in one thread, as each configuration of
# the sweep runs (`run -j 1`; the default run also parses the text in a
# second thread, ahead of the model: shown beside it).  Each timed sweep
# starts in a new folder (a sweep resumes from what it finds).
sdir=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-bench.XXXXXX")
"$MMUSIM" trace convert -w random:size=256M,accesses=2M "$sdir/t.txt"
printf '%s\n' '[experiment]' 'name = bench-sweep' 'machine = skylake' 'trace = t.txt' \
  '[settings]' 'thp.enabled = never' '[vary]' 'tlb.stlb_entries = 1536, 768, 3072, 384' > "$sdir/s.ini"
sweep_fresh() { rm -rf "$sdir/out"; "$MMUSIM" sweep "$sdir/s.ini" -o "$sdir/out" 2>/dev/null; }
sone=$(timed "$MMUSIM" run -j 1 -m skylake -s thp.enabled=never -t "$sdir/t.txt")
sahead=$(timed "$MMUSIM" run -m skylake -s thp.enabled=never -t "$sdir/t.txt")
sfour=$(timed sweep_fresh)
printf '%-34s %7.2f s one configuration (%.2f s parsed ahead), %7.2f s four: the sweep takes %.2fx one (median of %d)\n' \
  "sweep of 4 over a text trace" "$sone" "$sahead" "$sfour" "$(echo "$sfour / $sone" | bc -l)" "$RUNS"
rm -rf "$sdir"
# Host memory of a trace sweep of hundreds of configurations, grouped and
# all at once (bench/sweep-memory.sh, which also runs alone).
"$(dirname "$0")/sweep-memory.sh" "$MMUSIM"
# Trace formats: decoding speed of .mtr (records/s), parsing speed of lackey
# text (lines/s), and bytes per access of .mtr, of lackey's text and of that
# text compressed with zstd -3, on a lackey recording of `sort -n` over
# 5000 numbers (needs valgrind; about 250 MB of lackey text in TMPDIR).  `trace info --verify` reads every record
# and counts it, nothing more.
if command -v valgrind >/dev/null 2>&1; then
  tdir=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-bench.XXXXXX")
  seq 1 5000 | awk '{print ($1 * 7919) % 5003}' > "$tdir/data"
  "$MMUSIM" record -q --lackey-copy "$tdir/t.lackey" -o "$tdir/t.mtr" -- sort -n "$tdir/data" -o "$tdir/sorted"
  acc=$("$MMUSIM" trace info --verify "$tdir/t.mtr" | sed -n 's/^verified: *\([0-9]*\) records, \([0-9]*\) accesses/\2/p')
  recs=$("$MMUSIM" trace info --verify "$tdir/t.mtr" | sed -n 's/^verified: *\([0-9]*\) records.*/\1/p')
  lines=$(wc -l < "$tdir/t.lackey")
  printf '%-34s %7.2f M records/s decoded (median of %d)\n' ".mtr decode ($recs records)" \
    "$(echo "$recs / $(timed "$MMUSIM" trace info --verify "$tdir/t.mtr") / 1000000" | bc -l)" "$RUNS"
  printf '%-34s %7.2f M lines/s parsed (median of %d)\n' "lackey parse ($lines lines)" \
    "$(echo "$lines / $(timed "$MMUSIM" trace info --verify -f lackey "$tdir/t.lackey") / 1000000" | bc -l)" "$RUNS"
  printf '%-34s %7.2f bytes/access .mtr, %7.2f lackey text' "trace size ($acc accesses)" \
    "$(echo "$(wc -c < "$tdir/t.mtr") / $acc" | bc -l)" "$(echo "$(wc -c < "$tdir/t.lackey") / $acc" | bc -l)"
  if command -v zstd >/dev/null 2>&1; then
    printf ', %7.2f lackey text | zstd -3' "$(echo "$(zstd -q -3 -c "$tdir/t.lackey" | wc -c) / $acc" | bc -l)"
  fi
  echo
  rm -rf "$tdir"
else
  echo "trace formats: skipped (valgrind not installed)"
fi
