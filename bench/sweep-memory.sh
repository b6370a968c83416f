#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Host memory of a trace sweep: peak RSS (/usr/bin/time -f %M) of `mmusim
# sweep` over one small trace (`random:size=4M,accesses=2000` as .mtr, the
# configurations varying cpu.freq_mhz), the median of BENCH_RUNS runs
# (default 3: memory does not depend on the host's load, and the runs take
# some 10 s each) for each count of configurations in SWEEP_MEMORY_CONFIGS
# (default "500 1000").  Configurations over one trace run in groups of
# SWEEP_PASS_READERS (cli/sweep.c, 64) that share a decoding pass, one
# group's machines alive at a time (`-j 2`); the line gives the peak for
# each count and what each configuration adds, from the first count to the
# last.  `-j N` for the first count N makes the N one group, every machine
# and thread alive at once: the cost the groups avoid.  Run by
# bench/run-bench.sh (`make bench`), or alone: bench/sweep-memory.sh
# ./mmusim.  A benchmark, not a test (tests/sweep-memory.sh holds a sweep
# to an address-space limit).
set -eu
MMUSIM=${1:-./mmusim}
RUNS=${BENCH_RUNS:-3}
COUNTS=${SWEEP_MEMORY_CONFIGS:-500 1000}
FREQ_MHZ_FIRST=1000 # cpu.freq_mhz of the first configuration; the others count up by 1
case "$MMUSIM" in /*) ;; *) MMUSIM="$(pwd)/$MMUSIM" ;; esac
if [ ! -x /usr/bin/time ]; then
  echo "sweep memory: skipped (/usr/bin/time not installed)"
  exit 0
fi
median() {
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$MMUSIM" trace convert -w random:size=4M,accesses=2000 "$dir/t.mtr" 2> /dev/null
peak() { # N JOBS: median peak RSS in KiB of RUNS sweeps of N configurations with -j JOBS
  printf '[experiment]\nname = sweep-memory\ntrace = t.mtr\n[vary]\ncpu.freq_mhz = %s\n' \
    "$(seq -s, "$FREQ_MHZ_FIRST" $((FREQ_MHZ_FIRST + $1 - 1)))" > "$dir/s.ini"
  kib=""
  for i in $(seq "$RUNS"); do
    rm -rf "$dir/out" # a sweep resumes from what it finds
    /usr/bin/time -f %M -o "$dir/rss" "$MMUSIM" sweep "$dir/s.ini" -o "$dir/out" -j "$2" > /dev/null 2> "$dir/err" ||
      { echo "$0: sweep of $1 configurations (-j $2) failed:" >&2; tail -n 3 "$dir/err" >&2; exit 1; }
    kib="$kib $(tail -n 1 "$dir/rss")"
  done
  median $kib
}
mib() { echo "$1 / 1024" | bc -l; }
counts="" peaks="" first="" last=""
for n in $COUNTS; do
  k=$(peak "$n" 2)
  [ -n "$first" ] || { first=$n; first_kib=$k; }
  last=$n; last_kib=$k
  counts="$counts${counts:+ / }$n"
  peaks="$peaks${peaks:+ / }$(printf '%.0f' "$(mib "$k")")"
done
each=""
[ "$last" = "$first" ] ||
  each=$(printf ', %+.0f KiB a configuration' "$(echo "($last_kib - $first_kib) / ($last - $first)" | bc -l)")
all=$(peak "$first" "$first")
printf '%-34s peak RSS %s MiB for %s configurations in groups (-j 2%s), %.0f MiB for %d at once (-j %d) (median of %d)\n' \
  "sweep memory (2000-access trace)" "$peaks" "$counts" "$each" "$(mib "$all")" "$first" "$first" "$RUNS"
