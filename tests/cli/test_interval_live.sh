#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run -I prints each interval as it closes, as perf stat -I does: a run of
# hours (stopped by the test) has printed intervals, to a file, while it
# still runs; SIGINT then ends it with the intervals printed so far and
# the partial line, exit status 130; JSON Lines the same way.  The test
# waits for the lines themselves, so no step depends on how fast the host
# is (a run that printed nothing live fails after 120 s).
set -u
: "${MMUSIM:=./mmusim}"
work=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-live.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }
# live NAME PATTERN ARGS...: a run of hours in the background; wait for 3 lines
# matching PATTERN in its standard output, then SIGINT it.
live() {
  name=$1 pat=$2
  shift 2
  "$MMUSIM" run -q -j 1 -w random:size=1G,accesses=4G "$@" > "$work/$name.out" 2> "$work/$name.err" &
  pid=$!
  i=0
  until [ "$(grep -c -- "$pat" "$work/$name.out" 2>/dev/null)" -ge 3 ]; do
    i=$((i + 1))
    if [ $i -gt 1200 ] || ! kill -0 "$pid" 2>/dev/null; then
      say "$name: no interval printed while the run ran (120 s)"
      kill "$pid" 2>/dev/null
      wait "$pid"
      return
    fi
    sleep 0.1
  done
  kill -INT "$pid"
  wait "$pid"
  echo $? > "$work/$name.rc"
}

live text ' accesses$' -I 0.5 --counters accesses,dTLB-load-misses
[ "$(cat "$work/text.rc" 2>/dev/null)" = 130 ] || say "text: exit status $(cat "$work/text.rc" 2>/dev/null), not 130"
[ "$(grep -c '^# counters of ' "$work/text.out")" = 1 ] || say "text: not one header"
head -n 1 "$work/text.out" | grep -q '^# counters of ' || say "text: the header is not first"
tail -n 1 "$work/text.out" | grep -q '^# partial: stopped by SIGINT after [0-9]* records' || say "text: no partial line last"
# each interval's lines in order, with its end: two counters a time
awk '/^ +[0-9]+\.[0-9]+ +[0-9,]+ +(accesses|dTLB-load-misses)$/ { n++ } END { exit !(n >= 6 && n % 2 == 0) }' \
  "$work/text.out" || say "text: the intervals' lines are not whole"

live json '^{"interval":' -I 0.5 --json --counters accesses
[ "$(cat "$work/json.rc" 2>/dev/null)" = 130 ] || say "json: exit status $(cat "$work/json.rc" 2>/dev/null), not 130"
grep -v '^{"interval":[0-9.e-]*,"interval_start":[0-9.e-]*,"counters":{"accesses":[0-9]*}}$' "$work/json.out" &&
  say "json: a line that is no interval's object"

[ $fail = 0 ] && echo "intervals printed live: ok"
exit $fail
