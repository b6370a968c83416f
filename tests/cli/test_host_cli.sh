#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_host_cli.sh - `mmusim host bench` and `mmusim host validate` end to
# end at tiny spans: the structure of the table and of the JSON (never a
# timing value: the figures depend on the host and its load), the fitted
# machine file of validate --fit runs as a machine, and bad input is exit
# status 2 with a message naming the option.
set -u
: "${MMUSIM:=./mmusim}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-host.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
has() { if grep -qE -- "$2" "$1"; then ok; else bad "$1: no /$2/ in:"; cat "$1"; fi; }
count() { n=$(grep -cE -- "$2" "$1"); if [ "$n" -eq "$3" ]; then ok; else bad "$1: $n lines /$2/, not $3"; cat "$1"; fi; }

# bench: a header, then chase and random rows for each span and page size.
if "$MMUSIM" host bench --spans 1M,2M --repeats 2 --buffers 2 --seconds 0.02 -q > "$tmp/bench.txt" 2> "$tmp/err"; then ok; else bad "host bench failed"; cat "$tmp/err"; fi
has "$tmp/bench.txt" '^# host: '
has "$tmp/bench.txt" '^kind +span +pages +median_ns +min_ns +max_ns +stddev +buffers +accesses +ran% +busy% +huge%$'
count "$tmp/bench.txt" '^(chase|random) +(1M|2M) +(4K|THP) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +2: [0-9.]+-[0-9.]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+\*?$' 8

# bench --json -o FILE: one object with the host and 8 points of 2 repeats
# on each of 2 buffers.
if "$MMUSIM" host bench --spans 1M,2M --repeats 2 --buffers 2 --seconds 0.02 -q --json -o "$tmp/bench.json"; then ok; else bad "host bench --json failed"; fi
has "$tmp/bench.json" '"host" : \{'
has "$tmp/bench.json" '"virtualised" : (true|false)'
count "$tmp/bench.json" '"kind" : "(chase|random)"' 8
count "$tmp/bench.json" '"median_ns" : ' 8
count "$tmp/bench.json" '"huge_fraction" : ' 8
count "$tmp/bench.json" '"others_busy" : ' 8
count "$tmp/bench.json" '"buffer_median_ns" : \[' 8

# validate --fit: the table, the ratios, fitted and held-out points, and a
# machine file that inherits the machine and runs.
if "$MMUSIM" host validate -m zen3 --spans 1M,64M --repeats 1 --seconds 0.02 -q --fit -o "$tmp/fit.ini" > "$tmp/val.txt" 2> "$tmp/err"; then
  ok
else
  bad "host validate --fit failed"; cat "$tmp/err"
fi
has "$tmp/val.txt" '^ +span +pages +native_ns +native_min-max +ran% +busy% +huge% +model_ns +error% +fitted_ns +error% +role'
count "$tmp/val.txt" '^ +(1M|64M) +(4K|THP) .* (fitted|held-out) *$' 4
count "$tmp/val.txt" '^ +(1M|64M) +4K .* fitted *$' 2
has "$tmp/val.txt" '^# 4K/THP ratio'
has "$tmp/val.txt" '^ +span +native +native_buffers +model +error% +fitted +error%$'
has "$tmp/val.txt" '^# held out: '
has "$tmp/val.txt" '^# nested paging: '
has "$tmp/fit.ini" '^inherit = zen3$'
has "$tmp/fit.ini" '^# FITTED'
has "$tmp/fit.ini" '^latency_ns = [0-9.]+$'
count "$tmp/val.txt" '^# fitted: cache.llc_size' 0
if "$MMUSIM" run -q -m "$tmp/fit.ini" -w seq:size=1M > /dev/null 2>&1; then ok; else bad "the fitted machine file does not run"; fi

# validate --fit on a guest (nested paging): the host's page size, which a
# guest cannot read, is fitted too (bare metal above fits neither it nor
# the LLC share), and all four points at the fitted spans
# (4K and THP) are marked fitted.
printf '[machine]\ninherit = zen3\n[virt]\nnested = true\n' > "$tmp/guest.ini"
if "$MMUSIM" host validate -m "$tmp/guest.ini" --spans 1M,64M --repeats 1 --seconds 0.02 -q --fit -o "$tmp/gfit.ini" > "$tmp/gval.txt" 2> "$tmp/err"; then
  ok
else
  bad "host validate --fit on a guest failed"; cat "$tmp/err"
fi
has "$tmp/gval.txt" '^# nested paging: on'
has "$tmp/gval.txt" '^# fitted: virt.host_page_size = (4K|2M|1G) '
count "$tmp/gval.txt" '^ +(1M|64M) +(4K|THP) .* fitted *$' 4
has "$tmp/gfit.ini" '^host_page_size = (4K|2M|1G)$'
# and its share of the LLC: zen3's 32M or a halving down to its 512K L2.
has "$tmp/gval.txt" '^# fitted: cache.llc_size = (32M|16M|8M|4M|2M|1M|512K) \(the machine.s 32M: .* 6 halvings'
has "$tmp/gfit.ini" '^llc_size = (32M|16M|8M|4M|2M|1M|512K)$'
if "$MMUSIM" run -q -m "$tmp/gfit.ini" -w seq:size=1M > /dev/null 2>&1; then ok; else bad "the fitted guest file does not run"; fi

# validate --fit on a guest of a shadowing hypervisor inside a guest (shadow
# and nested paging): both page sizes, which it cannot read, are fitted, as a
# pair, and written to the machine file.
printf '[machine]\ninherit = zen3\n[virt]\nnested = true\nshadow = true\n' > "$tmp/pvm.ini"
if "$MMUSIM" host validate -m "$tmp/pvm.ini" --spans 1M,64M --repeats 1 --seconds 0.02 -q --fit -o "$tmp/pfit.ini" > "$tmp/pval.txt" 2> "$tmp/err"; then
  ok
else
  bad "host validate --fit on a shadowed guest failed"; cat "$tmp/err"
fi
has "$tmp/pval.txt" '^# nested paging: on \(virt.nested = true\), over shadow paging'
has "$tmp/pval.txt" '^# fitted: virt.host_page_size = (4K|2M|1G) '
has "$tmp/pval.txt" '^# fitted: virt.shadow_page_size = (4K|2M|1G) .*as a pair'
has "$tmp/pfit.ini" '^host_page_size = (4K|2M|1G)$'
has "$tmp/pfit.ini" '^shadow_page_size = (4K|2M|1G)$'
if "$MMUSIM" run -q -m "$tmp/pfit.ini" -w seq:size=1M > /dev/null 2>&1; then ok; else bad "the fitted shadowed guest file does not run"; fi

# validate --json.
if "$MMUSIM" host validate -m zen3 --spans 1M --repeats 1 --seconds 0.02 -q --json > "$tmp/val.json"; then ok; else bad "host validate --json failed"; fi
count "$tmp/val.json" '"model_ns" : ' 2
count "$tmp/val.json" '"native_4k_thp_ratio" : ' 1
count "$tmp/val.json" '"native_4k_thp_ratio_(min|max)" : ' 2
# validate --fit --json of a shadowed guest: the fit's choices by name.
if "$MMUSIM" host validate -m "$tmp/pvm.ini" --spans 1M,64M --repeats 1 --buffers 1 --seconds 0.02 -q --fit --json > "$tmp/pval.json"
then ok; else bad "host validate --fit --json on a shadowed guest failed"; fi
has "$tmp/pval.json" '"host_page_size" : "(4K|2M|1G)"'
has "$tmp/pval.json" '"shadow_page_size" : "(4K|2M|1G)"'
has "$tmp/pval.json" '"llc_size" : [0-9]+'
has "$tmp/pval.json" '"machine_llc_size" : 33554432'

# Bad input: exit status 2, the option named.
expect2() {
  what=$1; shift
  "$MMUSIM" "$@" > /dev/null 2> "$tmp/err"
  rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$what" "$tmp/err"; then ok; else bad "$*: status $rc, stderr:"; cat "$tmp/err"; fi
}
expect2 '--spans' host bench --spans 1X
expect2 '--spans' host validate --spans 100
expect2 '--repeats' host bench --repeats 0
expect2 '--buffers' host bench --buffers 0
expect2 '--buffers' host validate --buffers 101
expect2 '--seconds' host validate --seconds 0
expect2 '--fit' host validate -o "$tmp/x.ini"
expect2 'nosuch' host validate -m nosuch --spans 1M

echo "test_host_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
