#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_cli.sh - trace commands end to end, where one command's output is the
# next one's input:
#  - text -> .mtr -> text is exact for every text trace of the golden cases;
#  - a generator written as .mtr (and as text) replays to the counters of the
#    generator itself;
#  - a program recorded with `mmusim record` replays to the same counters as
#    the lackey text of the same run piped into `mmusim run -t - -f lackey`,
#    and the .mtr is much smaller than that text (skipped without valgrind);
#  - conversion to lackey and ChampSim keeps loads, stores and instructions;
#  - compressed conversion (.gz, .xz, .zst) is what gzip, xz and zstd read;
#  - `trace head --from` on .mtr starts where the full listing has it;
#  - every command's --help is its usage, on standard output, exit status 0.
set -u
: "${MMUSIM:=./mmusim}"
: "${GOLDEN_DIR:=$(dirname "$0")/../golden}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# The counters of a run, without the lines naming the input.
counters() {
  "$MMUSIM" run "$@" --json 2>/dev/null | sed -n '/"counters"/,/}/p'
}

for t in "$GOLDEN_DIR"/cases/*.txt; do
  case "$t" in *bad*) continue ;; esac
  n=$(basename "$t" .txt)
  if ! "$MMUSIM" trace convert "$t" "$tmp/$n.mtr" ||
     ! "$MMUSIM" trace convert "$tmp/$n.mtr" "$tmp/$n.back.txt" ||
     ! "$MMUSIM" trace convert "$t" "$tmp/$n.canon.txt"; then
    bad "convert $n"
    continue
  fi
  # The same records: the canonical text of the original and of the copy.
  if grep -v '^#' "$tmp/$n.canon.txt" | cmp -s - "$(grep -v '^#' "$tmp/$n.back.txt" > "$tmp/x" && echo "$tmp/x")"; then
    ok
  else
    bad "text -> mtr -> text differs for $n"
    diff "$tmp/$n.canon.txt" "$tmp/$n.back.txt" | head -5
  fi
  if [ "$(counters -t "$t")" = "$(counters -t "$tmp/$n.mtr")" ]; then ok; else bad "$n.mtr replays differently"; fi
done

for w in 'seq:size=8M,accesses=200K,rw=0.25' 'random:size=64M,accesses=100K' 'ptrchase:size=16M,accesses=50K' \
         'video:size=32M,width=1920,height=1088,accesses=100K' 'gups:size=16M,accesses=100K' \
         'hashjoin:size=16M,accesses=100K' 'graph:size=16M,accesses=100K'; do
  n=$(echo "$w" | cut -d: -f1)
  "$MMUSIM" trace convert -w "$w" "$tmp/$n.mtr" && "$MMUSIM" trace convert -w "$w" "$tmp/$n.txt" || { bad "convert -w $w"; continue; }
  want=$(counters -w "$w")
  if [ -n "$want" ] && [ "$want" = "$(counters -t "$tmp/$n.mtr")" ] && [ "$want" = "$(counters -t "$tmp/$n.txt")" ]; then
    ok
  else
    bad "generator $w replays differently from .mtr or text"
  fi
done

# The multi-threaded generators: their records carry thread ids, which .mtr
# keeps record by record and text writes as `thread T` lines.  Both copies
# replay to the generator's counters, with a CPU for each thread and with
# all threads sharing one CPU: what the engine runs next does not depend on
# where the input's batches end.
numa="-s machine.nodes=2 -s machine.cpus_per_node=4"
for w in 'threads:threads=8,chunk=768K,accesses=100K' 'threads:threads=8,chunk=1M,first_touch=main,pattern=random,accesses=100K' \
         'jbb:threads=8,young=256K,old=16M,accesses=100K' 'jbb:threads=8,young=256K,old=16M,loader=0,accesses=100K'; do
  n=$(echo "$w" | cut -d: -f1)
  "$MMUSIM" trace convert -w "$w" "$tmp/$n.mtr" && "$MMUSIM" trace convert -w "$w" "$tmp/$n.txt" || { bad "convert -w $w"; continue; }
  # shellcheck disable=SC2086
  want=$(counters $numa -w "$w")
  # shellcheck disable=SC2086
  if [ -n "$want" ] && [ "$want" = "$(counters $numa -t "$tmp/$n.mtr")" ] && [ "$want" = "$(counters $numa -t "$tmp/$n.txt")" ]; then
    ok
  else
    bad "generator $w replays differently from .mtr or text on 8 CPUs"
  fi
  want1=$(counters -w "$w")
  if [ "$want1" = "$(counters -t "$tmp/$n.mtr")" ] && [ "$want1" = "$(counters -t "$tmp/$n.txt")" ]; then
    ok
  else
    bad "generator $w replays differently from .mtr or text on 1 CPU"
  fi
done
# A bad parameter of theirs: exit status 2 and a message naming it.
for w in 'threads:align=3000:align' 'jbb:threads=4,loader=9:loader'; do
  spec=${w%:*}; key=${w##*:}
  msg=$("$MMUSIM" run -w "$spec" 2>&1); rc=$?
  case "$rc:$msg" in "2:"*"for $key;"*) ok ;; *) bad "run -w $spec: exit $rc, '$msg'" ;; esac
done

# Conversion to lackey and ChampSim: a generator stream comes back with its
# loads (dependent loads become loads), stores and instructions (gap=1 and
# more: in ChampSim the fetch of the default code address is an instruction
# of its own, which a stream of gap-0 accesses has no room for); a lackey
# trace converted to text and back to lackey replays to the same counters,
# and through ChampSim to the same loads, stores and instructions.
data_counts() {
  "$MMUSIM" trace info "$1" 2>/dev/null | awk '
    /^  accesses:/ { gsub(/[(),]/, " "); print "loads", $4 + $9, "stores", $6 }
    /^instructions:/ { print "instructions", $2 }'
}
for w in 'seq:size=1M,accesses=20K,rw=0.25,gap=1' 'ptrchase:size=1M,accesses=5K,gap=3' 'threads:threads=4,accesses=10K,gap=1' \
         'gups:size=1M,accesses=10K,gap=2'; do
  n=conv-$(echo "$w" | cut -d: -f1)
  "$MMUSIM" trace convert -w "$w" "$tmp/$n.txt" || { bad "convert -w $w"; continue; }
  want=$(data_counts "$tmp/$n.txt")
  for f in lackey champsim; do
    if "$MMUSIM" trace convert -w "$w" "$tmp/$n.$f" 2>"$tmp/err" && grep -q "note: dropped" "$tmp/err" &&
       [ -n "$want" ] && [ "$want" = "$(data_counts "$tmp/$n.$f")" ]; then
      ok
    else
      bad "generator $w as $f: '$want' read back as '$(data_counts "$tmp/$n.$f")', $(cat "$tmp/err")"
    fi
  done
done
lk="$GOLDEN_DIR/cases/trace-tiny.lackey.gz"
if "$MMUSIM" trace convert "$lk" "$tmp/tiny.txt" && "$MMUSIM" trace convert "$tmp/tiny.txt" "$tmp/tiny.lackey" 2>"$tmp/err" &&
   [ ! -s "$tmp/err" ] && "$MMUSIM" trace convert "$tmp/tiny.txt" "$tmp/tiny.champsimtrace" &&
   "$MMUSIM" trace convert "$tmp/tiny.lackey" "$tmp/tiny.back.txt"; then
  want=$(counters -t "$lk")
  if [ -n "$want" ] && [ "$want" = "$(counters -t "$tmp/tiny.lackey")" ] &&
     [ "$(grep -v '^#' "$tmp/tiny.txt")" = "$(grep -v '^#' "$tmp/tiny.back.txt")" ]; then
    ok
  else
    bad "lackey -> text -> lackey changes the records or counters"
  fi
  if [ "$(data_counts "$lk")" = "$(data_counts "$tmp/tiny.champsimtrace")" ]; then ok; else bad "lackey -> ChampSim: $(data_counts "$tmp/tiny.champsimtrace")"; fi
else
  bad "convert $lk to lackey and ChampSim"
fi
# Compressed output: OUT.gz/.xz/.zst is the format its inner name says,
# compressed so that the tools themselves read it back byte for byte, and
# mmusim replays it to the plain file's counters.
for z in gz xz zst; do
  case $z in gz) unz="gzip -dc" ;; xz) unz="xz -dc" ;; zst) unz="zstd -qdc" ;; esac
  for f in txt lackey champsimtrace; do
    if ! "$MMUSIM" trace convert "$lk" "$tmp/c.$f" || ! "$MMUSIM" trace convert "$lk" "$tmp/c.$f.$z"; then
      bad "convert to .$f.$z"
      continue
    fi
    if command -v "${unz%% *}" >/dev/null 2>&1; then
      if $unz "$tmp/c.$f.$z" | cmp -s - "$tmp/c.$f"; then ok; else bad ".$f.$z does not decompress to .$f"; fi
    fi
    if [ "$(counters -t "$tmp/c.$f")" = "$(counters -t "$tmp/c.$f.$z")" ]; then ok; else bad ".$f.$z replays differently"; fi
  done
done
# What cannot be written is refused before anything is read, and nothing is left.
msg=$("$MMUSIM" trace convert "$lk" "$tmp/x.lackey.bz2" 2>&1); rc=$?
case "$rc:$msg" in "2:"*"bzip2"*".xz, .gz or .zst"*) ok ;; *) bad "convert to .bz2: exit $rc, '$msg'" ;; esac
msg=$("$MMUSIM" trace convert "$lk" "$tmp/x.mtr.zst" 2>&1); rc=$?
case "$rc:$msg" in "2:"*"name it $tmp/x.mtr"*) ok ;; *) bad "convert to .mtr.zst: exit $rc, '$msg'" ;; esac
if ls "$tmp"/x.* >/dev/null 2>&1; then bad "a refused conversion left $(ls "$tmp"/x.*)"; else ok; fi

# The golden cases pin a generator and its committed .mtr copy: the two
# expected reports differ in the name of the input only.
g="$GOLDEN_DIR/cases"
if [ -f "$g/trace-gen-random-mtr.expected" ] &&
   [ "$(sed 2d "$g/trace-gen-random-mtr.expected")" = "$(sed 2d "$g/trace-gen-random-w.expected")" ]; then
  ok
else
  bad "golden trace-gen-random-mtr and trace-gen-random-w differ"
fi

# head --from seeks through the index of a file of several blocks.
"$MMUSIM" trace head -n 300000 "$tmp/seq.mtr" | sed -n '250001,250010p' > "$tmp/h1"
"$MMUSIM" trace head -n 10 --from 250000 "$tmp/seq.mtr" > "$tmp/h2"
if [ -s "$tmp/h1" ] && cmp -s "$tmp/h1" "$tmp/h2"; then ok; else bad "trace head --from"; fi

# run -j: a text trace of several batches parsed ahead of the model (-j 2)
# replays to the counters of one thread (-j 1), and a lackey file too (a
# short one, made here, whose data records get mapped on demand).
w=random:size=4M,accesses=20000
"$MMUSIM" trace convert -w "$w" "$tmp/ra.txt" || bad "convert -w $w"
a=$(counters -j 1 -t "$tmp/ra.txt"); b=$(counters -j 2 -t "$tmp/ra.txt")
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "text replays differently with -j 2"; fi
awk 'BEGIN { for (i = 0; i < 30000; i++) { printf "I  %x,4\n", 4194304 + (i % 64) * 4;
  printf " %s %x,8\n", (i % 3 ? "L" : "S"), 134217728 + (i * 4160) % 8388608 } }' > "$tmp/ra.lackey"
a=$(counters -j 1 -f lackey -t "$tmp/ra.lackey"); b=$(counters -j 2 -f lackey -t "$tmp/ra.lackey")
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "lackey replays differently with -j 2"; fi
# .mtr is decoded ahead too: a file of three blocks replays to the same
# counters, and a corrupt block in its middle, or a cut, stops both runs
# with the same message and exit status 2.
"$MMUSIM" trace convert -w random:size=32M,accesses=300000 "$tmp/ra.mtr" || bad "convert ra.mtr"
a=$(counters -j 1 -t "$tmp/ra.mtr"); b=$(counters -j 2 -t "$tmp/ra.mtr")
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad ".mtr replays differently with -j 2"; fi
sz=$(wc -c < "$tmp/ra.mtr")
cp "$tmp/ra.mtr" "$tmp/rabad.mtr"
printf '\377\377\377\377' | dd of="$tmp/rabad.mtr" bs=1 seek=$((sz * 2 / 3)) conv=notrunc 2>/dev/null
head -c $((sz * 2 / 3)) "$tmp/ra.mtr" > "$tmp/racut.mtr"
for f in rabad racut; do
  for j in 1 2; do
    "$MMUSIM" run -j $j -t "$tmp/$f.mtr" >/dev/null 2>"$tmp/err$j"
    echo "status $?" >> "$tmp/err$j"
  done
  if grep -q "^status 2" "$tmp/err1" && grep -q "offset" "$tmp/err1" && cmp -s "$tmp/err1" "$tmp/err2"; then
    ok
  else
    bad "$f.mtr: -j 1 and -j 2 stop differently"
  fi
done
# And ChampSim's xz files: five copies of the golden loop one after the
# other (concatenated streams, 11 K records, three batches).
for i in 1 2 3 4 5; do cat "$GOLDEN_DIR/cases/trace-loop.champsim.xz"; done > "$tmp/ra.champsim.xz"
a=$(counters -j 1 -f champsim -t "$tmp/ra.champsim.xz"); b=$(counters -j 2 -f champsim -t "$tmp/ra.champsim.xz")
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "champsim replays differently with -j 2"; fi
if "$MMUSIM" run -j -1 -t "$tmp/ra.txt" >/dev/null 2>"$tmp/err"; then
  bad "run -j -1 accepted"
elif [ $? -eq 2 ] && grep -q -- "-j" "$tmp/err"; then
  ok
else
  bad "run -j -1: no exit status 2 naming -j"
fi

# --warmup takes a count as workload specs do: 2K is 2000; a word is refused
# with exit status 2 and a message naming the option.
a=$(counters --warmup 2000 -t "$tmp/ra.txt"); b=$(counters --warmup 2K -t "$tmp/ra.txt")
c=$(counters -t "$tmp/ra.txt")
if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ]; then ok; else bad "--warmup 2K is not --warmup 2000"; fi
if "$MMUSIM" run --warmup lots -t "$tmp/ra.txt" >/dev/null 2>"$tmp/err"; then
  bad "run --warmup lots accepted"
elif [ $? -eq 2 ] && grep -q -- "--warmup 'lots'" "$tmp/err"; then
  ok
else
  bad "run --warmup lots: no exit status 2 naming --warmup"
fi
# A --warmup longer than the counted region leaves all of it out (every
# access is warmup, nothing is counted) and says so, naming the option;
# one that ends inside the region counts the rest.
n=$(counters -w ptrchase:size=1M,accesses=3K | sed -n 's/.*"accesses" *: *\([0-9]*\),.*/\1/p' | head -n 1)
long=$("$MMUSIM" run -w ptrchase:size=1M,accesses=3K --warmup 5K --json 2>"$tmp/err" | sed -n 's/.*"accesses" *: *\([0-9]*\),.*/\1/p' | head -n 1)
if [ "$n" = 3000 ] && [ "$long" = 0 ] && grep -q -- "--warmup 5000 is more than the 3000 accesses" "$tmp/err"; then
  ok
else
  bad "--warmup past the region: $long accesses counted (of $n), stderr: $(cat "$tmp/err")"
fi
short=$("$MMUSIM" run -w ptrchase:size=1M,accesses=3K --warmup 1K --json 2>"$tmp/err" | sed -n 's/.*"accesses" *: *\([0-9]*\),.*/\1/p' | head -n 1)
if [ "$short" = 2000 ] && [ ! -s "$tmp/err" ]; then ok; else bad "--warmup 1K of 3K: $short accesses counted, stderr: $(cat "$tmp/err")"; fi

# `mmusim COMMAND --help` for the options of a command, as `mmusim --help`
# says: for every command, --help and -h print its usage to standard output,
# nothing to standard error, and exit 0.
for c in run explain sweep record trace list; do
  for h in --help -h; do
    if "$MMUSIM" "$c" "$h" >"$tmp/out" 2>"$tmp/err" && [ ! -s "$tmp/err" ] && grep -q "^  mmusim $c \[OPTION" "$tmp/out"; then
      ok
    else
      bad "$c $h: no usage on standard output with exit status 0"
    fi
  done
done
# `mmusim --help` names --version too, which prints the version.
if "$MMUSIM" --help | grep -q -- "--version" && "$MMUSIM" --version | grep -q "^mmusim [0-9]"; then
  ok
else
  bad "mmusim --help does not name --version, or --version prints no version"
fi
# list takes one kind; a second word is refused, not ignored.
if "$MMUSIM" list settings extra >/dev/null 2>"$tmp/err"; then
  bad "list settings extra accepted"
elif [ $? -eq 2 ] && grep -q "not 'extra' too" "$tmp/err"; then
  ok
else
  bad "list settings extra: no exit status 2 naming 'extra'"
fi

if command -v valgrind >/dev/null 2>&1; then
  seq 1 3000 | awk '{print ($1 * 7919) % 3001}' > "$tmp/data"
  if "$MMUSIM" record -q --lackey-copy "$tmp/sort.lackey" -o "$tmp/sort.mtr" -- sort -n "$tmp/data" -o "$tmp/sorted"; then
    a=$(counters -t "$tmp/sort.mtr")
    b=$("$MMUSIM" run -t - -f lackey --json < "$tmp/sort.lackey" 2>/dev/null | sed -n '/"counters"/,/}/p')
    if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "recorded .mtr and lackey text replay differently"; fi
    mtr=$(wc -c < "$tmp/sort.mtr"); txt=$(wc -c < "$tmp/sort.lackey")
    if [ $((mtr * 20)) -lt "$txt" ]; then ok; else bad ".mtr ($mtr bytes) not 20x smaller than lackey text ($txt bytes)"; fi
    if "$MMUSIM" trace info "$tmp/sort.mtr" | grep -q "command *'sort' '-n'"; then ok; else bad "trace info lacks the command"; fi
    # --start-after drops accesses but keeps every mapping.
    "$MMUSIM" record -q --start-after 1000 -o "$tmp/late.mtr" -- sort -n "$tmp/data" -o "$tmp/sorted" &&
      n1=$("$MMUSIM" trace info "$tmp/sort.mtr" | sed -n 's/^  accesses: *\([0-9]*\).*/\1/p') &&
      n2=$("$MMUSIM" trace info "$tmp/late.mtr" | sed -n 's/^  accesses: *\([0-9]*\).*/\1/p')
    if [ -n "${n2:-}" ] && [ $((n1 - n2)) -eq 1000 ]; then ok; else bad "--start-after 1000: ${n1:-?} -> ${n2:-?} accesses"; fi
  else
    bad "mmusim record failed"
  fi
  if "$MMUSIM" record -q -o "$tmp/none.mtr" --lackey-copy "$tmp/none.lackey" -- /nonexistent/program 2>"$tmp/err"; then
    bad "recording a missing program succeeded"
  else
    ok
  fi
  # A failed recording leaves no file behind.
  if [ ! -e "$tmp/none.mtr" ] && [ ! -e "$tmp/none.lackey" ]; then ok; else bad "a failed recording left $(ls "$tmp"/none.*)"; fi
  # ... and an older trace of the same name as it was, with no partial file.
  echo "an older trace" > "$tmp/old.mtr"
  "$MMUSIM" record -q -o "$tmp/old.mtr" -- /nonexistent/program 2>/dev/null
  if [ "$(cat "$tmp/old.mtr")" = "an older trace" ] && [ -z "$(ls "$tmp" | grep partial)" ]; then
    ok
  else
    bad "a failed recording changed the older $tmp/old.mtr or left a partial file"
  fi
  # A program that crashes is recorded up to the crash, and the file kept.
  if "$MMUSIM" record -q -o "$tmp/crash.mtr" -- sh -c 'kill -SEGV $$' 2>"$tmp/err" &&
    "$MMUSIM" trace info "$tmp/crash.mtr" >/dev/null 2>&1; then
    ok
  else
    bad "the recording of a crashing program was not kept: $(cat "$tmp/err")"
  fi
else
  echo "SKIP: valgrind not installed; record tests skipped"
fi
# Without valgrind (none on PATH) record fails, exit status 2, and leaves no
# file behind.
case "$MMUSIM" in
  */*) mmusim=$(cd "$(dirname "$MMUSIM")" && pwd)/$(basename "$MMUSIM") ;;
  *) mmusim=$(command -v "$MMUSIM") ;;
esac
env PATH=/nonexistent "$mmusim" record -q -o "$tmp/novg.mtr" -- true 2>"$tmp/err"
st=$?
if [ "$st" -eq 2 ] && [ ! -e "$tmp/novg.mtr" ] && grep -q "valgrind is not installed" "$tmp/err"; then
  ok
else
  bad "record without valgrind: exit $st, $(ls "$tmp"/novg.* 2>/dev/null), $(cat "$tmp/err")"
fi

# The OOM killer (mem.oom_policy=kill) on a machine with 16M for the user.
# (awk's %x is 32 bits in mawk: addresses are written as pages.)
# A lone process that kills itself in the middle of a batch of scattered
# stores, with a page table large enough for the host prefetch: its later
# records are dropped and the run ends normally (the prefetch once read the
# freed page table).
small="-s machine.mem_per_node=64M -s mem.kernel_reserved=48M -s mem.oom_policy=kill"
awk 'BEGIN { print "process 1"; print "prctl thp_disable 1"; print "mmap 0x100000000000 16T rw"
  for (i = 0; i < 3493; i++) print "compute 1"
  for (i = 0; i < 3600; i++) printf "W 0x1%08x000 8\n", i * 3584 + i % 5 }' > "$tmp/selfkill.txt"
# shellcheck disable=SC2086
if "$MMUSIM" run $small -j 1 -t "$tmp/selfkill.txt" > "$tmp/out" 2>"$tmp/err" && grep -q 'Out of memory: killed process 1' "$tmp/out"; then
  ok
else
  bad "OOM kill of the only process in a prefetched batch: $(tail -n 3 "$tmp/err")"
fi
# explain whose first address makes the killer take process 1: the next
# address is refused (exit 1), not walked through the freed page table.
awk 'BEGIN { print "process 1"; print "prctl thp_disable 1"; print "mmap 0x500000000000 64M rw"
  for (i = 0; i < 4084; i++) printf "W 0x5%08x000 8\n", i }' > "$tmp/full.txt"
# shellcheck disable=SC2086
"$MMUSIM" explain $small -t "$tmp/full.txt" w:0x500000ff4000 w:0x500000ff5000 > "$tmp/out" 2>"$tmp/err"
st=$?
if [ "$st" -eq 1 ] && grep -q 'w:0x500000ff5000: not explained: the OOM killer killed process 1' "$tmp/out"; then
  ok
else
  bad "explain after its own OOM kill: exit $st, $(tail -n 2 "$tmp/out")"
fi

echo "trace-cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
