#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run on a terminal shows a progress line on stderr; SIGINT and SIGTERM stop
# a run and print the report of what was simulated, marked partial, with
# exit status 130 and 143; off a terminal (and with -q) no progress line;
# the host line goes to stderr, so two runs print the same stdout.
# The terminal is a pseudo-terminal from script(1) (util-linux).  The
# signals are sent once the progress line shows, so no step depends on how
# fast the host is.
set -u
: "${MMUSIM:=./mmusim}"
MMUSIM=$(cd "$(dirname "$MMUSIM")" && pwd)/$(basename "$MMUSIM")
command -v script >/dev/null 2>&1 || { echo "SKIP: script(1) from util-linux is not installed"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-signals.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }
long="random:size=1G,accesses=4G"   # hours: always stopped by the test

# One run under a pseudo-terminal, stopped by signal $1 once its progress
# line shows; the terminal's output in $work/$1.log, the exit status in
# $work/$1.rc.
stop_on_tty() {
  sig=$1
  script -qefc "sh -c 'echo \$\$ > $work/pid; exec \"$MMUSIM\" run -w $long; '; echo \$? > $work/$sig.rc" \
    "$work/$sig.log" > /dev/null 2>&1 < /dev/null &
  spid=$!
  i=0
  until grep -q "M records/s" "$work/$sig.log" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 1200 ]; then say "$sig: no progress line in 120 s"; kill "$spid"; return; fi
    sleep 0.1
  done
  kill -"$sig" "$(cat "$work/pid")"
  wait "$spid"
}

stop_on_tty INT
grep -q "M records, .* ms simulated" "$work/INT.log" || say "INT: the progress line lacks records or simulated time"
grep -q "%, ETA" "$work/INT.log" || say "INT: a generator's run shows no share done and ETA"
grep -q "(partial: stopped by SIGINT after [0-9]* records" "$work/INT.log" || say "INT: no partial report"
grep -q "seconds time elapsed (simulated)" "$work/INT.log" || say "INT: no counters after the stop"
[ "$(cat "$work/INT.rc" 2>/dev/null)" = 130 ] || say "INT: exit status $(cat "$work/INT.rc" 2>/dev/null), not 130"

stop_on_tty TERM
grep -q "(partial: stopped by SIGTERM" "$work/TERM.log" || say "TERM: no partial report"
[ "$(cat "$work/TERM.rc" 2>/dev/null)" = 143 ] || say "TERM: exit status $(cat "$work/TERM.rc" 2>/dev/null), not 143"

# -q on a terminal: no progress line (a short run to its end).
script -qefc "\"$MMUSIM\" run -q -w seq:size=4M" "$work/q.log" > /dev/null 2>&1 < /dev/null
grep -q "records/s" "$work/q.log" && say "-q: a progress line was drawn"

# Off a terminal: no progress, the host line on stderr, stdout the same twice.
"$MMUSIM" run -w seq:size=4M > "$work/out1" 2> "$work/err1" || say "a plain run failed"
"$MMUSIM" run -w seq:size=4M > "$work/out2" 2> "$work/err2"
grep -q "records/s" "$work/err1" && say "a progress line off a terminal"
grep -q "^ host:" "$work/err1" || say "the host line is not on stderr"
grep -q "host:" "$work/out1" && say "the host line is on stdout"
cmp -s "$work/out1" "$work/out2" || say "two identical runs printed different stdout"
[ $fail = 0 ] && echo "run signals and progress: ok"
exit $fail
