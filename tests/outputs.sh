#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Nothing lost, nothing silent: every output on a full file system.
#
# Standard output is /dev/full (every write fails with ENOSPC); files meet a
# file-size limit (ulimit -f with SIGXFSZ ignored: writes past it fail with
# EFBIG, a full disk without root).  Each command exits 1 with one line
# naming the file and the errno text, leaves no file cut short under the
# final name and no temporary file, and leaves an older file as it was.
# Also: convert refuses OUT that is IN (or a link to it), a conversion that
# fails half way leaves no file, an empty trace is said.  Where /dev/full
# or the size limit is missing the test says SKIP and exits 77.
set -eu
: "${MMUSIM:=./mmusim}"
case "$MMUSIM" in /*) ;; *) MMUSIM="$(pwd)/$MMUSIM" ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-outputs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
W='seq:size=1M,accesses=2K'
BIG='random:size=64M,accesses=200K' # a few MB in any format, 1 MB and more as .mtr

if ! [ -c /dev/full ]; then
  echo "SKIP: /dev/full is missing: no full device to write standard output to"
  exit 77
fi
# The size limit: 64 blocks (32K in dash's 512-byte blocks, 64K in bash's
# 1K ones): writes past it fail with EFBIG once SIGXFSZ is ignored.
LIMIT=64
(ulimit -f "$LIMIT" && trap '' XFSZ && head -c 200000 /dev/zero > probe) 2> /dev/null || true
if ! [ -e probe ] || [ "$(wc -c < probe)" -ge 200000 ]; then
  echo "SKIP: ulimit -f does not limit file sizes here: no full-disk stand-in for files"
  exit 77
fi
rm -f probe

# one_line NAME STATUS WANT: the last command exited STATUS with one line on
# stderr ($NAME.err) holding WANT, besides run's " host:" line.
one_line() {
  lines=$(grep -vc '^ host:' "$1.err")
  if [ "$st" -ne "$2" ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$3" "$1.err"; then
    echo "FAIL: $1: exit $st (want $2), $lines lines on stderr (want 1 holding '$3'):"
    cat "$1.err"
    fail=1
  fi
}

# ---- standard output on a full device ---------------------------------------
full_stdout() { # NAME COMMAND...
  name=$1
  shift
  st=0
  "$@" > /dev/full 2> "$name.err" || st=$?
  one_line "$name" 1 "cannot write standard output: No space left on device"
}
"$MMUSIM" trace convert -w "$W" small.txt
full_stdout run-text "$MMUSIM" run -w "$W"
full_stdout run-json "$MMUSIM" run -w "$W" --json
full_stdout run-csv "$MMUSIM" run -w "$W" --csv
full_stdout run-events "$MMUSIM" run -w "$W" --events -
full_stdout head "$MMUSIM" trace head small.txt
full_stdout info "$MMUSIM" trace info small.txt
full_stdout convert-text "$MMUSIM" trace convert small.txt -
full_stdout convert-mtr "$MMUSIM" trace convert -w "$W" -
full_stdout explain "$MMUSIM" explain 0x7f0000001000
full_stdout list "$MMUSIM" list settings
full_stdout version "$MMUSIM" --version
full_stdout help "$MMUSIM" --help
# A command's --help is printed by GLib's option parser, which then calls
# exit(0): checked all the same, with the errno of the failed write.
for c in run explain sweep record "trace convert" "trace head" "list" "host detect" "host bench" "host validate"; do
  # shellcheck disable=SC2086 # the command's words
  full_stdout "help-$(echo "$c" | tr ' ' -)" "$MMUSIM" $c --help
done
printf '[experiment]\nname = so\nworkload = %s\n[vary]\ncpu.mshrs = 1, 2\n' "$W" > so.ini
st=0
"$MMUSIM" sweep so.ini -o so.out -j 1 > /dev/full 2> sweep-table.err || st=$?
grep -v '^mmusim: sweep \[' sweep-table.err > sweep-table.err2 || true # the progress lines
mv sweep-table.err2 sweep-table.err
one_line sweep-table 1 "cannot write standard output: No space left on device"
full_stdout sweep-emit "$MMUSIM" sweep so.ini -o so2.out --emit-jobs

# ---- files past a size limit --------------------------------------------------
# limited NAME FILE COMMAND...: under the limit, COMMAND fails with exit 1
# and one line naming FILE and EFBIG; FILE keeps its older content ("old")
# and no FILE.*.partial is left.
limited() {
  name=$1 file=$2
  shift 2
  echo old > "$file"
  st=0
  (ulimit -f "$LIMIT" && trap '' XFSZ && exec "$@") > "$name.out" 2> "$name.err" || st=$?
  one_line "$name" 1 "cannot write '$file': File too large"
  if [ "$(cat "$file")" != old ]; then
    echo "FAIL: $name: the older $file was replaced by a file cut short"
    fail=1
  fi
  for p in "$file".*.partial; do
    if [ -e "$p" ]; then
      echo "FAIL: $name: $p left behind"
      fail=1
    fi
  done
}
limited text big.txt "$MMUSIM" trace convert -w "$BIG" big.txt
limited lackey big.lackey "$MMUSIM" trace convert -w "$BIG" big.lackey
limited champsim big.champsim "$MMUSIM" trace convert -w "$BIG" big.champsim
limited mtr big.mtr "$MMUSIM" trace convert -w "$BIG" big.mtr
limited events ev.txt "$MMUSIM" run -w "$BIG" -s thp.enabled=never --events ev.txt
# The map's labels are text, so a picture past the limit needs many regions.
{
  echo '# mmusim text trace v1'
  i=0
  while [ $i -lt 400 ]; do
    printf 'mmap 0x%x 64K rw\nW 0x%x 8\n' $((0x7f0000000000 + i * 0x100000)) $((0x7f0000000000 + i * 0x100000))
    i=$((i + 1))
  done
} > regions.txt
limited map map.svg "$MMUSIM" run -t regions.txt --map map.svg
# Compressed conversions and the interval plot: large enough to pass the limit.
for z in gz xz zst; do
  limited "convert-$z" "big.txt.$z" "$MMUSIM" trace convert -w "$BIG" "big.txt.$z"
done
# Outputs too small for the limit are written to /dev/full instead: exit 1,
# one line naming it.
full_file() { # NAME COMMAND...
  name=$1
  shift
  st=0
  "$@" > "$name.out" 2> "$name.err" || st=$?
  one_line "$name" 1 "No space left on device"
}
full_file annotate-file "$MMUSIM" run -w "$W" --annotate /dev/full
full_file host-detect "$MMUSIM" host detect -o /dev/full
# A plot's name must end in .svg or .png: a link to /dev/full so named.
ln -s /dev/full full.svg
full_file interval-plot "$MMUSIM" run -w "$W" -I 0.001 --interval-plot full.svg

# A full disk during a sweep: exit 1 (not 2, it is no bad input), said once.
mkdir -p full.out/results
printf '[experiment]\nname = full\nworkload = %s\n[vary]\ncpu.mshrs = 1, 2\n' "$W" > full.ini
st=0
(ulimit -f 1 && trap '' XFSZ && exec "$MMUSIM" sweep full.ini -o full.out -j 1) > sweep.out 2> sweep.err || st=$?
n=$(grep -c "File too large" sweep.err || true)
if [ "$st" -ne 1 ] || [ "$n" -ne 2 ] || [ -n "$(ls full.out/results)" ]; then
  # two configurations: each says its own failure, once
  echo "FAIL: sweep on a full disk: exit $st (want 1), $n lines saying File too large (want 2, one a configuration):"
  cat sweep.err
  ls full.out/results
  fail=1
fi

# ---- convert OUT that is IN -----------------------------------------------------
cp small.txt in.txt
ln in.txt hard.txt
ln -s in.txt soft.txt
for out in in.txt hard.txt soft.txt ./in.txt; do
  st=0
  "$MMUSIM" trace convert in.txt "$out" > same.out 2> same.err || st=$?
  one_line same 2 "'$out' is the input 'in.txt' itself"
  if ! cmp -s in.txt small.txt; then
    echo "FAIL: convert in.txt $out changed its input"
    fail=1
  fi
done

# A conversion that fails half way (bad input after 2000 good records)
# leaves no file, and an older one as it was.
{ cat small.txt; echo 'R 0xzz 8'; } > bad.txt
echo old > half.mtr
echo old > half.txt
for out in half.mtr half.txt; do
  st=0
  "$MMUSIM" trace convert bad.txt "$out" > half.out 2> half.err || st=$?
  one_line half 2 "bad.txt:"
  if [ "$(cat "$out")" != old ] || [ -n "$(ls "$out".*.partial 2> /dev/null)" ]; then
    echo "FAIL: convert bad.txt $out: a half file was left"
    fail=1
  fi
done

# ---- an empty trace is said -----------------------------------------------------
printf '# mmusim text trace v1\n' > empty.txt
st=0
"$MMUSIM" run -t empty.txt > empty.out 2> empty.err || st=$?
one_line empty 0 "warning: trace empty.txt holds no memory accesses"
printf '[experiment]\nname = em\ntrace = empty.txt\n[vary]\ncpu.mshrs = 1\n' > em.ini
st=0
"$MMUSIM" sweep em.ini -o em.out > em.out.txt 2> em.err || st=$?
one_line em 2 "empty.txt holds no memory accesses"
if [ -n "$(ls em.out/results)" ]; then
  echo "FAIL: a configuration over an empty trace has a result"
  fail=1
fi

exit $fail
