#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Many mappings: a generated text trace of 200,000 one-page mmaps of
# alternating protection (no two merge) runs in time linear in the mappings
# (the VMAs are a tree, kernel/mm.c; a quadratic scan took minutes here, so
# make check's timeout catches a regression; no host speed is measured), and
# vm.max_map_count stops the process at Linux 6.12's count: 65,531 mappings
# succeed (do_mmap refuses only while map_count > 65,530), every later one
# fails with ENOMEM and says so in the events.
set -eu
: "${MMUSIM:=./mmusim}"
case "$MMUSIM" in /*) ;; *) MMUSIM="$(pwd)/$MMUSIM" ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-maps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
n=200000
base=268435456 # 0x10000000
awk -v n=$n -v base=$base 'BEGIN {
  print "# mmusim text trace v1"; print "process 1"; print "thread 1"
  for (i = 0; i < n; i++) printf "mmap %d 4K %s\n", base + i * 4096, (i % 2) ? "r" : "rw"
  printf "R %d 8\n", base
}' > maps.txt
"$MMUSIM" run -t maps.txt --events events.txt > report.txt 2> stderr.txt
failed=$(grep -c ' enomem .*reason=max_map_count' events.txt || true)
want=$((n - 65531))
if [ "$failed" -ne "$want" ]; then
  echo "many-mappings: $failed mmaps failed with ENOMEM, want $want" >&2
  exit 1
fi
first=$(printf '%#x' $((base + 65531 * 4096)))
if ! grep -m1 ' enomem ' events.txt | grep -q "addr=$first len=4096 reason=max_map_count vmas=65531"; then
  echo "many-mappings: the first ENOMEM is not the 65,532nd mmap ($first):" >&2
  grep -m1 ' enomem ' events.txt >&2
  exit 1
fi
# The limit is a setting: raised, every mapping succeeds.
"$MMUSIM" run -t maps.txt -s vm.max_map_count=$n --events events2.txt > report2.txt 2> stderr2.txt
if grep -q ' enomem ' events2.txt; then
  echo "many-mappings: ENOMEM under vm.max_map_count=$n" >&2
  exit 1
fi
echo "many-mappings: ok"
