#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run-fuzz.sh - `make check` runs each libFuzzer target briefly on its seed
# corpus (tests/fuzz/corpus/NAME, plus every golden trace for the readers,
# the presets for machine files, the experiments for .ini files):
# FUZZ_RUNS inputs (default 3000) or FUZZ_SECONDS (default 5) each, whichever
# comes first, under AddressSanitizer and UBSan.  New inputs go to a
# temporary folder, never to the source tree.  Skipped (exit 77) when
# configure found no clang able to build them.  For a long campaign:
#   tests/fuzz/fuzz_mtr -max_total_time=600 CORPUS_DIR tests/fuzz/corpus/mtr
set -u
if [ "${HAVE_FUZZ:-no}" != yes ]; then
  echo "SKIP: fuzz targets not built (configure found no clang with -fsanitize=fuzzer)"
  exit 77
fi
: "${FUZZ_DIR:=tests/fuzz}"
: "${FUZZ_CORPUS:=$(dirname "$0")/corpus}"
: "${GOLDEN_DIR:=$(dirname "$0")/../golden}"
: "${TOP_SRCDIR:=$(dirname "$0")/../..}"
runs=${FUZZ_RUNS:-3000}
secs=${FUZZ_SECONDS:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
for t in text lackey mtr champsim detect settings machine ini; do
  # fuzz_ini is built on demand (make fuzz-ini): it compiles the whole program.
  [ "$t" = ini ] && [ ! -x "$FUZZ_DIR/fuzz_ini" ] && { echo "fuzz_ini: not built (make fuzz-ini)"; continue; }
  mkdir -p "$tmp/$t"
  # The golden traces are seeds of every reader too.
  seeds="$FUZZ_CORPUS/$t"
  [ "$t" = detect ] && seeds="$FUZZ_CORPUS/text $FUZZ_CORPUS/lackey $FUZZ_CORPUS/mtr $FUZZ_CORPUS/champsim"
  case $t in
  machine) seeds="$seeds $TOP_SRCDIR/sim/machines" ;;
  ini)
    mkdir -p "$tmp/seed-ini"
    for f in "$TOP_SRCDIR"/doc/experiments/*/experiment.ini "$GOLDEN_DIR"/cases/*.ini; do
      [ -f "$f" ] && cp "$f" "$tmp/seed-ini/$(basename "$(dirname "$f")")-$(basename "$f")"
    done
    seeds="$seeds $tmp/seed-ini" ;;
  esac
  if [ "$t" != settings ] && [ "$t" != machine ] && [ "$t" != ini ]; then
    mkdir -p "$tmp/golden-$t"
    for f in "$GOLDEN_DIR"/cases/*.txt "$GOLDEN_DIR"/cases/trace-*.mtr "$GOLDEN_DIR"/cases/trace-*.gz \
             "$GOLDEN_DIR"/cases/trace-*.xz "$GOLDEN_DIR"/cases/trace-*.champsim; do
      [ -f "$f" ] && cp "$f" "$tmp/golden-$t/"
    done
    seeds="$seeds $tmp/golden-$t"
  fi
  # shellcheck disable=SC2086
  if ASAN_OPTIONS=detect_leaks=1 "$FUZZ_DIR/fuzz_$t" -runs="$runs" -max_total_time="$secs" -max_len=8192 -timeout=60 \
       -artifact_prefix="$tmp/" "$tmp/$t" $seeds > "$tmp/$t.log" 2>&1; then
    pass=$((pass + 1))
    echo "fuzz_$t: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$tmp/$t.log" | tail -1)"
  else
    fail=$((fail + 1))
    echo "FAIL: fuzz_$t"
    tail -40 "$tmp/$t.log"
    for a in "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-*; do
      [ -f "$a" ] && { echo "input: $a"; od -c "$a" | head -20; }
    done
  fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
