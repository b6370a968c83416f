#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_map_cli.sh - `mmusim run --map` end to end: the SVG of a run is
# well-formed XML (checked by tests/cli/map_check, GLib's parser) and
# describes the regions the run mapped with the page sizes it used (2M with
# THP on x86-64, 16M over 64K on ppc64 hash, 4K without THP); a 1 GiB
# mapping of 4K pages stays a small file; -r draws the last run; a path
# that cannot be written is exit status 2 before anything runs.
set -u
: "${MMUSIM:=./mmusim}"
: "${MAP_CHECK:=$(dirname "$MMUSIM")/tests/cli/map_check}"
. "$(dirname "$0")/svg-check.sh"

"$MMUSIM" run -w ptrchase:size=64M,accesses=10K --map "$tmp/thp.svg" > /dev/null || bad "run --map (x86-64, THP)"
expect thp "$tmp/thp.svg" "ptrchase:size=64M" "on skylake" "process 1: 1 VMA" \
  "0x7f0000000000-0x7f0004000000 64M rw-p: 2M pages 64M, unmapped 0, node 0 64M"

"$MMUSIM" run -m power9-hash -w ptrchase:size=64M,accesses=10K --map "$tmp/ppc.svg" > /dev/null || bad "run --map (ppc64)"
expect ppc64 "$tmp/ppc.svg" "power9-hash (ppc64" "64M rw-p: 16M pages 64M"

"$MMUSIM" run -r 2 -s thp.enabled=never -s machine.nodes=2 -w random:size=16M,accesses=1K --map "$tmp/r2.svg" \
  > /dev/null || bad "run -r 2 --map"
expect repeat "$tmp/r2.svg" "seed=2" "2 NUMA nodes" "16M rw-p: 4K pages 16M"

# 262,144 pages of 4K: aggregated into columns, the file stays small.
"$MMUSIM" run -s thp.enabled=never -w ptrchase:size=1G,accesses=1K --map "$tmp/big.svg" > /dev/null ||
  bad "run --map over 1G"
expect big "$tmp/big.svg" "1G rw-p: 4K pages 1G"
bytes=$(wc -c < "$tmp/big.svg")
if [ "$bytes" -lt 1000000 ]; then ok; else bad "1G of 4K pages drawn in $bytes bytes"; fi

# A file that cannot be written: exit 2 with a message naming it, at once.
"$MMUSIM" run -w ptrchase:size=1G,accesses=100M --map "$tmp/no/such/dir/x.svg" > /dev/null 2> "$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "no/such/dir/x.svg" "$tmp/err"; then ok; else bad "unwritable --map: rc $rc, $(cat "$tmp/err")"; fi

echo "map: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
