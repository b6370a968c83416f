# SPDX-License-Identifier: GPL-2.0-or-later
# record-common.sh - sourced by tests/record.sh, record-names.sh and
# record-mappings.sh, the tests that record a real program under valgrind:
# MMUSIM made absolute (the tests run from a temporary folder), CC's
# default, and `here`, this folder's absolute path (the source tree's
# tests/ in a VPATH build, where the recorded programs' sources are).
# Then each test calls
#   record_setup NAME [cc]
# which skips (exit 77) without valgrind, or without a C compiler when the
# second word is `cc`, makes the temporary folder mmusim-NAME.XXXXXX
# (removed at exit), goes into it and sets fail=0.
: "${MMUSIM:=./mmusim}"
: "${CC:=cc}"
case "$MMUSIM" in /*) ;; *) MMUSIM="$(pwd)/$MMUSIM" ;; esac
# $0 is the sourcing test, in this folder; resolved before any cd.
here=$(cd "$(dirname "$0")" && pwd)

record_setup() {
  if ! command -v valgrind > /dev/null; then
    echo "SKIP: valgrind is not installed: nothing to record with"
    exit 77
  fi
  if [ "${2:-}" = cc ] && ! command -v "$CC" > /dev/null; then
    echo "SKIP: no C compiler ($CC) to build the recorded program"
    exit 77
  fi
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-$1.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cd "$tmp"
  fail=0
}
