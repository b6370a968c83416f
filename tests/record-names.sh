#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Recordings name their file mappings, and run --annotate names functions:
# tests/record-names.c, compiled here with -g, maps a file and reads it in
# hot_loop.  The recording (`trace head`) must hold the program's own
# mappings (made before the first system call) and ld.so's, named, and the
# mapped file with its name; `run --annotate --by symbol` must name
# hot_loop in the program's object, and with --symfs pointing where the
# program is not, keep the object's name and mark the rows [unresolved].
# The same through addr2line (MMUSIM_NO_LIBDW=1), and with neither the
# report says there are no symbols.  tests/record-names-cxx.cc, built with
# g++, names its function demangled, and mangled with --no-demangle.
# SKIP (exit 77) without valgrind or a C compiler; the symbol checks are
# skipped, said so, when mmusim was built without libdw (the addr2line
# ones without addr2line, the C++ ones without g++ or a demangler).
set -eu
. "$(dirname "$0")/record-common.sh"
: "${CXX:=g++}"
srcxx="$here/record-names-cxx.cc"
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
# addr2line in place of libdw, before the program moves away below: the
# same rows, without offsets into the function.
if command -v addr2line > /dev/null; then
  MMUSIM_NO_LIBDW=1 "$MMUSIM" run -q -t names.mtr --annotate a2l.txt --by symbol --sort accesses --top 0 > /dev/null 2>> run.err
  grep -q "symbols from addr2line" a2l.txt || { echo "FAIL: MMUSIM_NO_LIBDW=1 does not say it uses addr2line:"; head -5 a2l.txt; fail=1; }
  grep -qE "^ +[0-9].*  hot_loop  prog\$" a2l.txt ||
    { echo "FAIL: addr2line: annotate --by symbol does not name hot_loop in prog:"; cat a2l.txt; fail=1; }
  MMUSIM_NO_LIBDW=1 "$MMUSIM" run -q -t names.mtr --annotate a2l-ip.txt --sort accesses > /dev/null 2>> run.err
  grep -qE "  0x[0-9a-f]+  hot_loop \(record-names\.c:[0-9]+\)  prog\$" a2l-ip.txt ||
    { echo "FAIL: addr2line: annotate does not give hot_loop's source line:"; cat a2l-ip.txt; fail=1; }
else
  echo "record-names: addr2line checks skipped: no addr2line on PATH"
fi
# Neither libdw nor addr2line: said once, every row unresolved.
mkdir nobin
PATH="$tmp/nobin" MMUSIM_NO_LIBDW=1 "$MMUSIM" run -q -t names.mtr --annotate none.txt --by symbol --sort accesses > /dev/null 2>> run.err
grep -q "no addr2line on PATH: no symbols" none.txt && ! grep -q hot_loop none.txt ||
  { echo "FAIL: with no libdw and no addr2line the report does not say there are no symbols:"; cat none.txt; fail=1; }
if grep -q "no symbols" ann.txt; then
  echo "record-names: symbol checks skipped: mmusim was built without libdw, and there is no addr2line"
else
  off='\+0x[0-9a-f]+' # addr2line (mmusim built without libdw) names no offset
  grep -q "symbols from addr2line" ann.txt && off=
  grep -qE "^ +[0-9].*  hot_loop  prog\$" ann.txt ||
    { echo "FAIL: annotate --by symbol does not name hot_loop in prog:"; cat ann.txt; fail=1; }
  "$MMUSIM" run -q -t names.mtr --annotate ann-ip.txt --sort accesses > /dev/null 2>> run.err
  grep -qE "  0x[0-9a-f]+  hot_loop$off \(record-names\.c:[0-9]+\)  prog\$" ann-ip.txt ||
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

# C++: the function's name demangled as perf report prints it, or as the
# binary spells it with --no-demangle.
mangled='_ZN5names8hot_loopIcEElPKT_l'
plain='long names::hot_loop<char>\(char const\*, long\)'
if ! command -v "$CXX" > /dev/null; then
  echo "record-names: C++ checks skipped: no C++ compiler ($CXX)"
elif grep -q "no symbols" ann.txt; then
  echo "record-names: C++ checks skipped: no symbols"
else
  "$CXX" -g -O1 -Wl,--as-needed -o progxx "$srcxx"
  "$MMUSIM" record -q -o cxx.mtr -- ./progxx "data file.bin" 2>> record.err
  "$MMUSIM" run -q -t cxx.mtr --annotate cxx.txt --by symbol --sort accesses --top 0 > /dev/null 2>> run.err
  if grep -q "built without libiberty" cxx.txt; then
    echo "record-names: demangling check skipped: mmusim was built without libiberty"
  else
    grep -qE "^ +[0-9].*  $plain  progxx\$" cxx.txt ||
      { echo "FAIL: annotate does not demangle $mangled:"; cat cxx.txt; fail=1; }
  fi
  "$MMUSIM" run -q -t cxx.mtr --annotate cxx-raw.txt --by symbol --sort accesses --top 0 --no-demangle > /dev/null 2>> run.err
  grep -qE "^ +[0-9].*  $mangled  progxx\$" cxx-raw.txt ||
    { echo "FAIL: --no-demangle does not keep $mangled:"; cat cxx-raw.txt; fail=1; }
  if command -v addr2line > /dev/null; then
    MMUSIM_NO_LIBDW=1 "$MMUSIM" run -q -t cxx.mtr --annotate cxx-a2l.txt --by symbol --sort accesses --top 0 > /dev/null 2>> run.err
    grep -qE "^ +[0-9].*  $plain  progxx\$" cxx-a2l.txt ||
      { echo "FAIL: addr2line -C does not demangle $mangled:"; cat cxx-a2l.txt; fail=1; }
    MMUSIM_NO_LIBDW=1 "$MMUSIM" run -q -t cxx.mtr --annotate cxx-a2l-raw.txt --by symbol --sort accesses --top 0 \
      --no-demangle > /dev/null 2>> run.err
    grep -qE "^ +[0-9].*  $mangled  progxx\$" cxx-a2l-raw.txt ||
      { echo "FAIL: addr2line with --no-demangle does not keep $mangled:"; cat cxx-a2l-raw.txt; fail=1; }
  fi
fi
[ "$fail" -eq 0 ] && echo "record-names: passed"
exit "$fail"
