#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# mmusim record keeps the program's address space: tests/record-mappings.c,
# compiled here, maps a file and anonymous memory, mprotects, madvises,
# moves the break and unmaps; the recording must hold each of those as a
# record (`trace head`), at the addresses the program printed, the file
# mapping flagged `file`, and `run --annotate` must name it.  SKIP (exit
# 77) without valgrind or a C compiler.
set -eu
. "$(dirname "$0")/record-common.sh"
record_setup record-maps cc
"$CC" -O1 -o prog "$here/record-mappings.c"
head -c 65536 /dev/zero > data.bin
"$MMUSIM" record -o maps.mtr -- ./prog data.bin > printed.txt 2> record.err
"$MMUSIM" trace head -n 100000000 maps.mtr | grep -v '^[RWDX] \|^compute' > mappings.txt
# hex NAME: the address the program printed for NAME (0x...), normalised.
hex() { printf '0x%x' "$(awk -v n="$1" -v k="${2:-2}" '$1 == n { print $k }' printed.txt)"; }
file=$(hex file) anon=$(hex anon) brk_old=$(hex brk 2) brk_new=$(hex brk 3)
# expect LINE: a record the recording must hold, as trace head writes it.
expect() {
  if ! grep -qxF -- "$1" mappings.txt; then
    echo "FAIL: no record '$1' in the recording; its mapping records:"; cat mappings.txt; fail=1
  fi
}
expect "mmap $file 64K r file path=data.bin" # the file the program opened, named
expect "mmap $anon 4M rw"
expect "mprotect $anon 4K r"
expect "madvise $anon 2M hugepage"
expect "munmap $anon 4M"
expect "munmap $file 64K"
# The break: its growth mapped read-write from the page the old break lies in.
brk_from=$(printf '0x%x' $(( (brk_old + 4095) / 4096 * 4096 )))
if ! grep -q "^mmap $brk_from [0-9]*K rw$" mappings.txt; then
  echo "FAIL: no mmap of the heap's growth from $brk_from (break $brk_old -> $brk_new):"; cat mappings.txt; fail=1
fi
if ! grep -qF "mapping records" record.err; then
  echo "FAIL: record's summary does not count the mapping records:"; cat record.err; fail=1
fi
# The file mapping is a row of its own in the annotation, named a file.
"$MMUSIM" run -t maps.mtr --annotate ann.txt --top 0 > /dev/null 2> run.err
if ! grep -q "^ .* $file-0x[0-9a-f]* r-- \[file\] data.bin$" ann.txt; then
  echo "FAIL: run --annotate has no [file] row at $file:"; cat ann.txt run.err; fail=1
fi
[ "$fail" -eq 0 ] && echo "record-mappings: passed"
exit "$fail"
