#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile input: experiment files, machine files, result files and traces
# made to break the program.  Each is refused with one clear line naming the
# file (and line, key or field) and exit status 2, and nothing is written
# where it should not be; none crashes, aborts or prints a GLib-CRITICAL.
# Large inputs are generated here.
set -eu
: "${MMUSIM:=./mmusim}"
case "$MMUSIM" in /*) ;; *) MMUSIM="$(pwd)/$MMUSIM" ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-hostile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
W='seq:size=1M,accesses=2K'

# refused NAME EXPECTED-PART COMMAND...: exit 2, one line on stderr holding
# EXPECTED-PART, no CRITICAL, no output folder NAME.out.
refused() {
  name=$1 want=$2
  shift 2
  status=0
  "$@" > "$name.stdout" 2> "$name.stderr" || status=$?
  lines=$(wc -l < "$name.stderr")
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" "$name.stderr" ||
     grep -q CRITICAL "$name.stderr" || [ -e "$name.out" ]; then
    echo "FAIL: $name: exit $status, $lines lines on stderr (want 1 holding '$want'):"
    cat "$name.stderr"
    fail=1
  fi
}

# ---- 1. the number of configurations: refused above 1000000, before the
# product of the axes can wrap (16^8 is 2^32: 0 in 32 bits).
axis() { # NAME N: "NAME = 1, 2, ..., N"
  printf '%s = %s\n' "$1" "$(seq -s ', ' 1 "$2")"
}
{
  printf '[experiment]\nworkload = %s\n[vary]\n' "$W"
  for k in tlb.stlb_entries cpu.mshrs cpu.cpi cpu.rob_size tlb.l1d_4k_entries tlb.stlb_ways tlb.l1d_2m_entries cpu.freq_mhz; do
    axis "$k" 16
  done
} > wrap0.ini
refused wrap0 'wrap0.ini: [vary] gives more than 1000000 configurations' "$MMUSIM" sweep wrap0.ini -o wrap0.out
# 65536 x 65537: 2^32 + 65536, a wrap to 65536 in 32 bits.
{ printf '[experiment]\nworkload = %s\n[vary]\n' "$W"; axis tlb.stlb_entries 65536; axis cpu.mshrs 65537; } > wrap.ini
refused wrap 'a sweep runs at most 1000000' "$MMUSIM" sweep wrap.ini -o wrap.out
# zip: one axis of 1000001 values.
{ printf '[experiment]\nworkload = %s\ncombine = zip\n[vary]\n' "$W"; axis tlb.stlb_entries 1000001; } > zip.ini
refused zip 'gives 1000001 configurations' "$MMUSIM" sweep zip.ini -o zip.out

# ---- 2. text that is not UTF-8, in every group of an experiment file and
# in a machine file's inherit (GKeyFile returns no value for it).
# (Octal escapes: printf in a POSIX shell knows no \x.)
printf '[experiment]\nworkload = %s\n[vary]\ncpu.mshrs = 1, 2\377\n' "$W" > u-vary.ini
refused u-vary "u-vary.ini:4: 'cpu.mshrs = 1, 2\\xff' is not valid UTF-8" "$MMUSIM" sweep u-vary.ini -o u-vary.out
printf '[experiment]\nworkload = %s\n[settings]\ntlb.stlb_entries = 1\303\n' "$W" > u-set.ini
refused u-set 'u-set.ini:4:' "$MMUSIM" sweep u-set.ini -o u-set.out
printf '[experiment]\nmachine = sky\377lake\nworkload = %s\n' "$W" > u-exp.ini
refused u-exp 'u-exp.ini:2:' "$MMUSIM" sweep u-exp.ini -o u-exp.out
printf '[experiment]\nname = caf\351\nworkload = %s\n' "$W" > u-name.ini
refused u-name 'u-name.ini:2:' "$MMUSIM" sweep u-name.ini -o u-name.out
printf '[machine]\ninherit = zen\3774\n' > u-machine.ini
refused u-machine "u-machine.ini:2: 'inherit = zen\\xff4' is not valid UTF-8" "$MMUSIM" run -m u-machine.ini -w "$W"
# UTF-8 that is valid is a name like any other; a comment may hold anything.
printf '[experiment]\n# caf\351\nname = caf\303\251\nworkload = %s\n' "$W" > u-ok.ini
"$MMUSIM" sweep u-ok.ini > u-ok.stdout 2> u-ok.stderr || { echo "FAIL: a UTF-8 name:"; cat u-ok.stderr; fail=1; }
[ -d "$(printf 'caf\303\251.sweep')" ] || { echo "FAIL: no folder for a UTF-8 name"; fail=1; }

# ---- 7. a name is a folder name: no way out of the current folder.
for case in "../x" "/tmp/abs" ".hidden" "a/b"; do
  printf '[experiment]\nname = %s\nworkload = %s\n' "$case" "$W" > name.ini
  refused name "name.ini:2: [experiment] name = '$case'" "$MMUSIM" sweep name.ini
done
printf '[experiment]\nname = back\\\\slash\nworkload = %s\n' "$W" > name.ini # GKeyFile reads \\ as \
refused name "name = 'back\\slash': it holds a '/' or '\\'" "$MMUSIM" sweep name.ini
printf '[experiment]\nname = tab\there\nworkload = %s\n' "$W" > name.ini
refused name "control character" "$MMUSIM" sweep name.ini
[ ! -e ../x.sweep ] && [ ! -e /tmp/abs.sweep ] && [ ! -e .hidden.sweep ] ||
  { echo "FAIL: a sweep folder outside the current folder"; fail=1; }

# ---- 6. strings reach the gnuplot script quoted: a name cannot run a
# command or end the string.
printf "[experiment]\nname = a\"b'c \`touch pwned\` @x {y}\nworkload = %s\n[vary]\ncpu.mshrs = 1, 2\n" "$W" > plot.ini
"$MMUSIM" sweep plot.ini -o plot.out --plot > /dev/null 2> plot.stderr || { echo "FAIL: --plot:"; cat plot.stderr; fail=1; }
grep -qxF "set title 'a\"b''c \`touch pwned\` @x {y}'" plot.out/plot.gp ||
  { echo "FAIL: the title is not quoted for gnuplot:"; grep title plot.out/plot.gp; fail=1; }
grep -q "noenhanced" plot.out/plot.gp || { echo "FAIL: gnuplot terminals read markup"; fail=1; }
[ ! -e pwned ] && [ ! -e plot.out/pwned ] || { echo "FAIL: the plot ran a command"; fail=1; }

# ---- 8. result files are input: checked field by field.
printf '[experiment]\nname = res\nworkload = %s\n[vary]\ncpu.mshrs = 1, 2\n' "$W" > res.ini
"$MMUSIM" sweep res.ini -o res.good > /dev/null 2>&1
first=$(ls res.good/results | head -1)
f=res.good/results/$first
damage() { # NAME PYTHON-EXPRESSION-ON-d: a copy of the sweep with one result changed
  rm -rf "$1.dir"
  cp -r res.good "$1.dir"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d, open(sys.argv[1], 'w'))" "$1.dir/results/$first"
}
if command -v python3 > /dev/null; then
  damage nocounters 'del d["counters"]'
  refused nocounters "results/$first: no \"counters\" object" "$MMUSIM" sweep res.ini --collect nocounters.dir
  damage strcounter 'd["counters"]["ns_per_access"] = "fast"'
  refused strcounter "\"counters\".\"ns_per_access\" is not a number" "$MMUSIM" sweep res.ini --collect strcounter.dir
  damage counterobj 'd["counters"] = "x"'
  refused counterobj "\"counters\" is not an object" "$MMUSIM" sweep res.ini --collect counterobj.dir
  damage oomstr 'd["oom"] = "yes"'
  refused oomstr "\"oom\" is not true or false" "$MMUSIM" sweep res.ini --collect oomstr.dir
  damage nooom 'del d["oom"]'
  refused nooom "\"oom\" is not true or false" "$MMUSIM" sweep res.ini --collect nooom.dir
  damage stddev 'd["stddev"] = {"ns_per_access": None}'
  refused stddev "\"stddev\".\"ns_per_access\" is not a number" "$MMUSIM" sweep res.ini --collect stddev.dir
  damage otherid 'd["id"] = "000000000000"'
  refused otherid "\"id\" is 000000000000" "$MMUSIM" sweep res.ini --collect otherid.dir
  printf '{"id": ' > "res.good/../cut.json"
  rm -rf cut.dir && cp -r res.good cut.dir && cp cut.json "cut.dir/results/$first"
  refused cut "results/$first:" "$MMUSIM" sweep res.ini --collect cut.dir
  # Resume: a damaged result is run again, said once, and the sweep ends well.
  damage resume 'd["counters"]["ns_per_access"] = "fast"'
  status=0
  "$MMUSIM" sweep res.ini -o resume.dir > resume.stdout 2> resume.stderr || status=$?
  if [ "$status" -ne 0 ] || ! grep -qF "is not a number; running configuration" resume.stderr ||
     ! "$MMUSIM" sweep res.ini --collect resume.dir > /dev/null 2>&1; then
    echo "FAIL: resume over a damaged result: exit $status:"; cat resume.stderr; fail=1
  fi
fi

# ---- 3. trace head --from on an .mtr whose index is damaged.
"$MMUSIM" trace convert -w seq:size=1M,accesses=100K t.mtr
size=$(wc -c < t.mtr)
printf '\252' | dd of=t.mtr bs=1 seek=$((size - 17)) conv=notrunc 2> /dev/null
refused head 't.mtr: offset' "$MMUSIM" trace head --from 50000 -n 2 t.mtr
grep -q 'index' head.stderr || { echo "FAIL: the damaged index is not named"; fail=1; }

# ---- 4. pids and tids of 2^31 and more (valid: 1..2^32-1).
printf 'process 2147483648\nmmap 0x10000 64K rw\nR 0x10000 8\nthread 4294967295\nW 0x10008 8\n' > pid.txt
for m in skylake power9-hash; do
  "$MMUSIM" run -t pid.txt -m "$m" > pid.stdout 2> pid.stderr || { echo "FAIL: pid 2^31 on $m:"; cat pid.stderr; fail=1; }
done

# ---- map titles: a trace named with markup and bytes that are not UTF-8.
odd=$(printf 'a<b&"c\001\377.txt')
cp pid.txt "$odd"
"$MMUSIM" run -t "$odd" --map map.svg > /dev/null 2> map.stderr || { echo "FAIL: --map:"; cat map.stderr; fail=1; }
if command -v xmllint > /dev/null && ! xmllint --noout map.svg 2> map.xml; then
  echo "FAIL: --map wrote SVG that is not XML:"; head -3 map.xml; fail=1
fi

# ---- 5. out of host memory under ulimit -v: a message and exit 1, not a
# GLib abort.  (Skipped where the limit stops the program from starting,
# as under AddressSanitizer.)
if { sh -c 'ulimit -v 60000 && exec "$0" --version' "$MMUSIM"; } > /dev/null 2>&1; then
  status=0
  (ulimit -v 60000; exec "$MMUSIM" run -w seq:size=16G,accesses=4M,stride=4K,thp=disable \
    -s machine.mem_per_node=64G) > oom.stdout 2> oom.stderr || status=$?
  if [ "$status" -ne 1 ] || [ "$(wc -l < oom.stderr)" -ne 1 ] || ! grep -q '^mmusim: out of host memory' oom.stderr; then
    echo "FAIL: out of host memory: exit $status:"; cat oom.stderr; fail=1
  fi
fi

# ---- a key or a group given twice: GKeyFile would keep the last, merge
# the groups, in silence.  Experiment and machine files alike.
printf '[experiment]\nworkload = %s\nworkload = seq:size=2M\n' "$W" > dupkey.ini
refused dupkey 'dupkey.ini:3: workload is given twice in [experiment] (first at line 2)' "$MMUSIM" sweep dupkey.ini -o dupkey.out
printf '[experiment]\nworkload = %s\n[vary]\ncpu.mshrs = 1, 2\n[vary]\ncpu.mshrs = 3\n' "$W" > dupgroup.ini
refused dupgroup 'dupgroup.ini:5: [vary] is given twice (first at line 3)' "$MMUSIM" sweep dupgroup.ini -o dupgroup.out
printf '[experiment]\nworkload = %s\n[vary]\ncpu.mshrs = 1, 2\ncpu.mshrs = 3\n' "$W" > dupaxis.ini
refused dupaxis 'dupaxis.ini:5: cpu.mshrs is given twice in [vary] (first at line 4)' "$MMUSIM" sweep dupaxis.ini -o dupaxis.out
printf '[cpu]\nmshrs = 4\n[tlb]\nstlb_entries = 64\n[cpu]\nmshrs = 5\n' > dupmachine.ini
refused dupmachine 'dupmachine.ini:5: [cpu] is given twice (first at line 1)' "$MMUSIM" run -m dupmachine.ini -w "$W"
# One value written two ways in an axis: one configuration run twice.
same() { # NAME AXIS VALUES FIRST SECOND
  printf '[experiment]\nworkload = %s\n[vary]\n%s = %s\n' "$W" "$2" "$3" > "$1.ini"
  refused "$1" "$1.ini:4: [vary] $2 gives one value twice: '$4' and '$5'" "$MMUSIM" sweep "$1.ini" -o "$1.out"
}
same same-zero cpu.mshrs '1, 01' 1 01
same same-hex cpu.mshrs '8, 10, 0xa' 10 0xa
same same-size machine.mem_per_node '1G, 64M, 67108864' 64M 67108864
same same-bool tlb.pcid 'yes, true' yes true
same same-text cpu.mshrs '4, 4' 4 4

# ---- a decoder's limit is not corruption: the message says which limit
# and how to read the file.  A zstd window of 1 GiB (--long=30) is more
# than the 128 MiB the reader allows; an xz dictionary of 1.5 GiB is more
# than ulimit -v leaves.
"$MMUSIM" trace convert -w "$W" small.txt
if command -v zstd > /dev/null; then
  zstd -q --long=30 -c < small.txt > long.txt.zst
  refused zwindow 'long.txt.zst: this zstd frame needs a window larger than the 128 MiB' "$MMUSIM" trace info long.txt.zst
fi
if command -v xz > /dev/null && { sh -c 'ulimit -v 400000 && exec "$0" --version' "$MMUSIM"; } > /dev/null 2>&1 &&
   xz -q --lzma2=dict=1536MiB -c < small.txt > dict.txt.xz 2> /dev/null; then
  refused xzmem 'dict.txt.xz: out of host memory: liblzma cannot allocate the 1536 MiB' \
    sh -c 'ulimit -v 400000 && exec "$0" trace info dict.txt.xz' "$MMUSIM"
fi

[ "$fail" -eq 0 ] && echo "hostile-input: passed"
exit "$fail"
