#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Recordings name their file mappings, and run --annotate names functions:
# tests/record-names.c, compiled here with -g, maps a file and reads it in
# hot_loop.  The recording (`trace head`) must hold the program's own
# mappings (made before the first system call) and ld.so's, named, and the
# mapped file with its name; `run --annotate --by symbol` must name
# hot_loop in the program's object, and with --symfs pointing where the
# program is not, keep the object's name and mark the rows [unresolved].
# SKIP (exit 77) without valgrind or a C compiler; the symbol checks are
# skipped, said so, when mmusim was built without libdw.
set -eu
. "$(dirname "$0")/record-common.sh"
record_setup record-names cc
"$CC" -g -O1 -o prog "$here/record-names.c"
head -c 65536 /dev/zero > "data file.bin"
"$MMUSIM" record -q -o names.mtr -- ./prog "data file.bin" 2> record.err
"$MMUSIM" trace head -n 100000000 names.mtr | grep '^mmap' > mappings.txt
expect() { # PATTERN WHAT
  grep -qE "$1" mappings.txt || { echo "FAIL: no $2 in the recording's mappings:"; cat mappings.txt; fail=1; }
}
expect "^mmap 0x[0-9a-f]+ [0-9]+K r?x file .*path=$tmp/prog\$" "code mapping of the program (rx, file, named)"
expect "^mmap 0x[0-9a-f]+ [0-9]+K rw file offset=0x[0-9a-f]+ path=$tmp/prog\$" "data mapping of the program"
expect "^mmap 0x[0-9a-f]+ [0-9]+K rx file offset=0x[0-9a-f]+ path=.*/ld-linux[^/]*\.so\.2\$" "code mapping of ld.so"
expect "^mmap 0x[0-9a-f]+ 16K r file path=data file\.bin\$" "mapping of the file the program opened"
expect "^mmap 0x[0-9a-f]+ [0-9]+K rx file offset=0x[0-9a-f]+ path=.*/libc\.so\.6\$" "code mapping of libc"

"$MMUSIM" run -q -t names.mtr --annotate ann.txt --by symbol --sort accesses --top 0 > /dev/null 2>> run.err
if grep -q "built without libdw" ann.txt; then
  echo "record-names: symbol checks skipped: mmusim was built without libdw"
else
  grep -qE "^ +[0-9].*  hot_loop  prog\$" ann.txt ||
    { echo "FAIL: annotate --by symbol does not name hot_loop in prog:"; cat ann.txt; fail=1; }
  "$MMUSIM" run -q -t names.mtr --annotate ann-ip.txt --sort accesses > /dev/null 2>> run.err
  grep -qE "  0x[0-9a-f]+  hot_loop\+0x[0-9a-f]+ \(record-names\.c:[0-9]+\)  prog\$" ann-ip.txt ||
    { echo "FAIL: annotate does not give hot_loop's source line:"; cat ann-ip.txt; fail=1; }
  # The binary not at hand: --symfs at an empty folder for a program moved away.
  mkdir empty moved
  mv prog moved/
  "$MMUSIM" run -q -t names.mtr --annotate ann-moved.txt --symfs empty --sort accesses > /dev/null 2>> run.err
  grep -qE "  0x[0-9a-f]+  \[unresolved\]  prog\$" ann-moved.txt ||
    { echo "FAIL: a program moved away is not kept as [unresolved] prog:"; cat ann-moved.txt; fail=1; }
  # --symfs: the binaries looked up under another root.
  mkdir -p "root$tmp"
  cp moved/prog "root$tmp/prog"
  "$MMUSIM" run -q -t names.mtr --annotate ann-symfs.txt --symfs root --by symbol --sort accesses --top 0 > /dev/null 2>> run.err
  grep -qE "  hot_loop  prog\$" ann-symfs.txt ||
    { echo "FAIL: --symfs root does not find prog under root:"; cat ann-symfs.txt; fail=1; }
fi
[ "$fail" -eq 0 ] && echo "record-names: passed"
exit "$fail"
