#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A sweep whose input cannot be opened (a missing trace, an unknown
# workload) says so once, naming the experiment file (and the line of its
# trace key) and a configuration, exits 2, and makes no output folder:
# every configuration is checked before anything runs (doc/experiments.md).
set -eu
: "${MMUSIM:=./mmusim}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-sweep-bad.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME INI-TEXT EXPECTED-MESSAGE-PART
  printf '%s' "$2" > "$tmp/$1.ini"
  status=0
  "$MMUSIM" sweep "$tmp/$1.ini" -o "$tmp/$1.out" > "$tmp/$1.stdout" 2> "$tmp/$1.stderr" || status=$?
  lines=$(wc -l < "$tmp/$1.stderr")
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF "$3" "$tmp/$1.stderr" || [ -e "$tmp/$1.out" ]; then
    echo "FAIL: $1: exit $status, $lines lines of errors, output folder $( [ -e "$tmp/$1.out" ] && echo made || echo not made):"
    cat "$tmp/$1.stderr"
    fail=1
  fi
}
check trace '[experiment]
machine = skylake
trace = nosuch.txt
[vary]
thp.enabled = never, always
' "$tmp/trace.ini:3: [experiment] trace, configuration thp.enabled=never (every configuration reads it): cannot open trace"
check workload '[experiment]
workload = seq:size=4M,accesses=1K
[vary]
workload = seq:size=4M,accesses=1K; nosuch:size=1M
' "$tmp/workload.ini: configuration workload=nosuch:size=1M: unknown workload 'nosuch'"
[ "$fail" -eq 0 ] && echo "sweep-bad-input: passed"
exit "$fail"
