#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden end-to-end tests: each case is tests/golden/cases/NAME.args (the
# arguments of one mmusim command line, one per line; @DIR@ stands for the
# cases folder, @TMP@ for a fresh scratch folder of the case) and
# NAME.expected (its standard output and error, and on the last line
# "exit N").  Lines that describe the host ("host:" lines, the "host" object
# of --json, sweep progress lines with their timings) vary between machines
# and are filtered out before comparing.
#
# A case about one feature compares only its lines: an optional NAME.grep
# lists the lines of the output to keep, one a line.  A bare name (letters,
# digits, _ and -) keeps that counter's line of the text report (its
# number then its name: `thp_fault_alloc` keeps neither
# thp_fault_alloc_failed nor a comment that mentions it) and its "NAME":
# member in --json; any other line is an extended regular expression
# (grep -E) that keeps every line it matches (`^ +[0-9,.]+ +numa_` for all
# the numa_ counters, `Out of memory` for the OOM report).  Blank lines
# and lines starting with # are ignored.  The kept lines, in their order,
# and the "exit N" line are NAME.expected, so a new or changed counter
# elsewhere in the report leaves the case alone.  A pattern that keeps no
# line fails the case (a renamed or misspelt counter would otherwise
# check nothing), also under GOLDEN_UPDATE=1.
# Cases without a .grep compare the whole output: keep a few of those for
# the formats themselves (text report, --json, explain).
#
# Regenerate one case after a deliberate model change with
#   GOLDEN_UPDATE=1 tests/run-golden.sh NAME
set -u
: "${MMUSIM:=./mmusim}"
: "${GOLDEN_DIR:=$(dirname "$0")/golden}"
cases="$GOLDEN_DIR/cases"
# Scratch files of this run (the diffs, each case's @TMP@), under
# ${TMPDIR:-/tmp}, removed on exit.
work=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-golden-run.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
pass=0
fail=0
only="$*"
filter() {
  sed -e '/^ *host:/d' -e '/"host" *:/,/}/d' -e '/"version" *:/d' -e '/^mmusim: sweep \[/d' \
      -e "s#$cases#@DIR@#g" -e "s#$tmp#@TMP@#g"
}
# The lines of NAME.grep's patterns (every line without a .grep).  A
# pattern that keeps no line is written to $work/unmatched.
keep() {
  if [ -f "$cases/$name.grep" ]; then
    sed -E -e '/^#/d' -e '/^[[:space:]]*$/d' \
        -e 's/^([A-Za-z0-9_-]+)$/^ *[0-9][0-9,.]* +\1( |$)|"\1" *:/' "$cases/$name.grep" > "$work/patterns"
    grep -E -f "$work/patterns" > "$work/kept" || true
    while IFS= read -r p; do
      grep -E -q -e "$p" "$work/kept" || printf '%s\n' "$p" >> "$work/unmatched"
    done < "$work/patterns"
    cat "$work/kept"
  else
    cat
  fi
}
for args in "$cases"/*.args; do
  name=$(basename "$args" .args)
  if [ -n "$only" ]; then
    case " $only " in *" $name "*) ;; *) continue ;; esac
  fi
  tmp=$(mktemp -d "$work/case.XXXXXX")
  set -f
  # shellcheck disable=SC2046
  set -- $(sed -e "s#@DIR@#$cases#g" -e "s#@TMP@#$tmp#g" "$args" | tr '\n' ' ')
  set +f
  # One run: its output, then its exit status on the last line.
  raw=$("$MMUSIM" "$@" 2>&1 < /dev/null; echo "exit $?")
  rm -rf "$tmp"
  rm -f "$work/unmatched"
  out=$(printf '%s\n' "$raw" | sed '$d' | filter | keep; printf '%s\n' "$raw" | tail -n 1)
  if [ -s "$work/unmatched" ]; then
    fail=$((fail + 1))
    echo "FAIL: $name: these patterns of $name.grep keep no line of the output:"
    cat "$work/unmatched"
    set --
    continue
  fi
  if [ "${GOLDEN_UPDATE:-}" = 1 ]; then
    printf '%s\n' "$out" > "$cases/$name.expected"
    echo "updated: $name"
    continue
  fi
  if printf '%s\n' "$out" | diff -u "$cases/$name.expected" - > "$work/$name.diff" 2>&1; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $name"
    cat "$work/$name.diff"
  fi
  rm -f "$work/$name.diff"
  set --
done
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
