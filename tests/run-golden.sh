#!/bin/sh
# Golden end-to-end tests: each case is tests/golden/cases/NAME.args (the
# arguments of one mmusim command line, one per line; @DIR@ stands for the
# cases folder, @TMP@ for a fresh scratch folder of the case) and
# NAME.expected (its standard output and error, and on the last line
# "exit N").  Lines that describe the host ("host:" lines, the "host" object
# of --json, sweep progress lines with their timings) vary between machines
# and are filtered out before comparing.
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
  out=$(printf '%s\n' "$raw" | sed '$d' | filter; printf '%s\n' "$raw" | tail -n 1)
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
