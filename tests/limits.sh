#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The threads a run may have in all (kernel.pid_max, processes' threads
# counted): a generated trace at the limit runs, one with a thread or a
# process more is refused with one line naming the limit, the file and the
# record, and exit status 2.
set -eu
: "${MMUSIM:=./mmusim}"
case "$MMUSIM" in /*) ;; *) MMUSIM="$(pwd)/$MMUSIM" ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-limits.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
max=100

# gen KIND N: N threads of one process (KIND thread) or N processes of one
# thread (KIND process), each storing to its page.
gen() {
  awk -v kind="$1" -v n="$2" 'BEGIN {
    if (kind == "thread") print "mmap 0x10000000 64K rw"
    for (i = 1; i <= n; i++) {
      print kind " " i
      if (kind == "process") print "mmap 0x10000000 4K rw"
      print "W 0x10000000 8"
    } }'
}

for kind in thread process; do
  gen $kind $max > at.txt
  gen $kind $((max + 1)) > over.txt
  status=0
  "$MMUSIM" run -t at.txt -s kernel.pid_max=$max > at.out 2> at.err || status=$?
  if [ "$status" -ne 0 ]; then
    echo "FAIL: $max ${kind}es at kernel.pid_max=$max: exit $status"
    cat at.err
    fail=1
  fi
  # The record of the thread past the limit: the first of its pair (or
  # of its three lines for a process) after the mmap, or the first line.
  if [ $kind = thread ]; then rec=$((1 + 2 * max + 1)); else rec=$((3 * max + 1)); fi
  want="over.txt: record $rec: thread $([ $kind = thread ] && echo $((max + 1)) || echo 1) of process $([ $kind = thread ] && echo 1 || echo $((max + 1))) is one more than the $max threads a run may have in all (kernel.pid_max = $max (from -s)"
  status=0
  "$MMUSIM" run -t over.txt -s kernel.pid_max=$max > over.out 2> over.err || status=$?
  lines=$(wc -l < over.err)
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" over.err; then
    echo "FAIL: $((max + 1)) ${kind}s at kernel.pid_max=$max: exit $status, $lines lines (want 2, one holding '$want'):"
    cat over.err
    fail=1
  fi
done

[ "$fail" -eq 0 ] && echo "limits: passed"
exit "$fail"
