#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The layers run one way: a file may include headers of its own layer and
# of the layers below it, never above.  Bottom to top:
#   1 base/   2 mmu/   3 kernel/   4 traces/   5 sim/ and arch/ (the machine)   6 cli/
# A test ranks with the layer it tests (tests/kernel/ is 3: the kernel's
# unit tests build without the machine); the shared test headers rank with
# what they include.  The libraries' include paths (Makefile.am) make the
# compiler refuse such an include too; this also covers the tests and
# headers no library compiles.
set -u
top=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 2
rank_of_dir() {
  case "$1" in
    base*|tests/base*) echo 1 ;;
    mmu*|tests/mmu*) echo 2 ;;
    kernel*|tests/kernel*) echo 3 ;;
    traces*|tests/traces*) echo 4 ;;
    sim*|arch*|tests/sim*|tests/arch*|tests/system*) echo 5 ;;
    cli*|tests/cli*|tests/fuzz*) echo 6 ;;
    *) echo 0 ;;
  esac
}
# Every project header and the rank of the folder it lives in.
map=$(mktemp "${TMPDIR:-/tmp}/mmusim-layers.XXXXXX") || exit 2
trap 'rm -f "$map"' EXIT
for h in $(find base mmu kernel traces sim arch cli -name '*.h' -o -name '*.def'); do
  echo "$(basename "$h") $(rank_of_dir "$h")"
done > "$map"
# The shared test headers: the rank of the highest layer they reach.
# Generated in the build folder: sim/cache-ways.sh writes cache-ways.h.
echo "cache-ways.h 5" >> "$map"
echo "testutil.h 1" >> "$map"
echo "elf_testutil.h 1" >> "$map"
echo "kernel_fixture.h 3" >> "$map"
echo "machine_fixture.h 5" >> "$map"
echo "trace_testutil.h 4" >> "$map"
echo "batch_testutil.h 4" >> "$map"
bad=0
checked=0
for f in $(find base mmu kernel traces sim arch cli tests -name '*.c' -o -name '*.h' | sort); do
  case "$f" in tests/fuzz/corpus/*) continue ;; esac
  me=$(rank_of_dir "$f")
  case "$f" in
    tests/kernel_fixture.h) me=3 ;;
    tests/machine_fixture.h) me=5 ;;
    tests/testutil.h) me=1 ;;
    tests/elf_testutil.h) me=1 ;;
  esac
  [ "$me" = 0 ] && continue
  checked=$((checked + 1))
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
    name=$(basename "$inc")
    [ "$name" = config.h ] && continue
    r=$(awk -v n="$name" '$1 == n { print $2; exit }' "$map")
    if [ -z "$r" ]; then
      # A header beside the file (an architecture's own) is its own layer's.
      [ -f "$(dirname "$f")/$inc" ] && continue
      echo "layers: $f includes \"$inc\", which is no project header"
      bad=$((bad + 1))
    elif [ "$r" -gt "$me" ]; then
      echo "layers: $f (layer $me) includes \"$inc\" (layer $r): against the direction"
      bad=$((bad + 1))
    fi
  done
done
echo "layers: $checked files checked, $bad includes against the direction"
[ "$bad" -eq 0 ]
