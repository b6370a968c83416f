#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Inputs that never end or cannot be read twice: FIFOs, pipes, /dev/stdin,
# /dev/zero as a trace, a machine file or an experiment file.  Each either
# works in one pass or is refused with one clear line and exit status 2;
# none blocks or reads for ever.  `timeout` only catches a hang (the bound is
# far above any run here), it measures nothing.
set -eu
: "${MMUSIM:=./mmusim}"
case "$MMUSIM" in /*) ;; *) MMUSIM="$(pwd)/$MMUSIM" ;; esac
srcdir=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-bounds.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
HANG=${HANG:-120} # seconds: a hang, not a slow host
if ! command -v timeout > /dev/null 2>&1; then
  echo "bounds-input: no timeout(1); skipped"
  exit 77
fi

# refused NAME EXPECTED-PART COMMAND...: exit 2, one line on stderr holding
# EXPECTED-PART, no CRITICAL.
refused() {
  name=$1 want=$2
  shift 2
  status=0
  timeout "$HANG" "$@" > "$name.stdout" 2> "$name.stderr" < /dev/null || status=$?
  lines=$(wc -l < "$name.stderr")
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" "$name.stderr" ||
     grep -q CRITICAL "$name.stderr"; then
    echo "FAIL: $name: exit $status, $lines lines on stderr (want 1 holding '$want'):"
    cat "$name.stderr"
    fail=1
  fi
}

# works NAME EXPECTED-PART: the last command's stdout ($name.stdout) holds
# EXPECTED-PART and it exited 0 ($status).
works() {
  if [ "$status" -ne 0 ] || ! grep -qF -- "$2" "$1.stdout"; then
    echo "FAIL: $1: exit $status (want 0 and '$2' on stdout):"
    cat "$1.stdout" "$1.stderr"
    fail=1
  fi
}

"$MMUSIM" trace convert "$srcdir/tests/golden/cases/hello.txt" hello.mtr
records=$("$MMUSIM" trace info hello.mtr | sed -n 's/^records: *//p')

# ---- 1. a FIFO, a pipe, /dev/stdin: the format probe does not consume the
# stream, and the path is opened once (a second open of a FIFO blocks).
mkfifo fifo
# fifo_run NAME COMMAND...: run COMMAND while hello.mtr is written to the FIFO.
fifo_run() {
  name=$1
  shift
  timeout "$HANG" sh -c 'cat hello.mtr > fifo' &
  writer=$!
  status=0
  timeout "$HANG" "$@" > "$name.stdout" 2> "$name.stderr" || status=$?
  wait "$writer" || true
}
fifo_run info "$MMUSIM" trace info fifo
works info "records:        $records"
fifo_run head "$MMUSIM" trace head -n 1 --from 3 fifo
works head "$("$MMUSIM" trace head -n 1 --from 3 hello.mtr)"
fifo_run verify "$MMUSIM" trace info --verify fifo
works verify "index:          not checked"
status=0
timeout "$HANG" sh -c 'cat hello.mtr | "$0" trace info /dev/stdin' "$MMUSIM" > stdin.stdout 2> stdin.stderr || status=$?
works stdin "records:        $records"
status=0
timeout "$HANG" sh -c 'cat hello.mtr | "$0" trace head -n 1 --from 3 /dev/stdin' "$MMUSIM" > stdin-head.stdout \
  2> stdin-head.stderr || status=$?
works stdin-head "$("$MMUSIM" trace head -n 1 --from 3 hello.mtr)"
# -r reads the trace again: refused before it opens the FIFO.
refused repeat-fifo "'fifo' is not a regular file and can be read only once" "$MMUSIM" run -r 2 -t fifo

# ---- 2. a machine or experiment file read whole: at most 16 MiB.
refused zero-machine "machine file '/dev/zero' is larger than 16 MiB" "$MMUSIM" run -m /dev/zero -w seq:accesses=1K
refused zero-exp "experiment file '/dev/zero' is larger than 16 MiB" "$MMUSIM" sweep /dev/zero -o zero.out
{ printf '[experiment]\nworkload = seq:accesses=1K\n'; head -c 16777216 /dev/zero | tr '\0' '#'; } > big.ini
refused big-exp "experiment file 'big.ini' is larger than 16 MiB" "$MMUSIM" sweep big.ini -o big.out

# ---- 3. zeros are no ChampSim trace: not detected as one, and refused at
# the first record when named as one.
refused zero-trace "/dev/zero:1:" "$MMUSIM" run -t /dev/zero
refused zero-info "/dev/zero:1:" "$MMUSIM" trace info /dev/zero
refused zero-champsim "instruction pointer 0" "$MMUSIM" run -t /dev/zero -f champsim

[ "$fail" -eq 0 ] && echo "bounds-input: passed"
exit "$fail"
