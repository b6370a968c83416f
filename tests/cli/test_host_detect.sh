#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_host_detect.sh - `mmusim host detect` end to end on the hosts of
# tests/cli/host/ (a CPUID dump and a sysfs/procfs tree each, read through
# the hidden --cpuid and --root): the file is the expected one
# (expected.ini; HOST_UPDATE=1 rewrites them), `mmusim list settings -m`
# and `mmusim run -m` on a tiny generated workload take it as a machine; a
# guest says virt.nested = true and leaves virt.host_page_size out, a PVM
# guest (its kernel log, root/dev/kmsg) says virt.shadow = true too, bare
# metal has no virt lines, a CPUID without TLB data leaves every tlb.* line
# to the preset and says so, a host without CPUID is described from sysfs
# alone; bad input is exit status 2 with a message; and the host the test
# runs on gives a loadable file (its values are not checked).
set -u
: "${MMUSIM:=./mmusim}"
here=$(cd "$(dirname "$0")" && pwd)
fixtures="$here/host"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-host.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# loads NAME FILE.ini: a valid machine for list settings and for a run.
loads() {
  if "$MMUSIM" list settings -m "$2" > "$tmp/list" 2> "$tmp/err"; then ok; else bad "$1: list settings -m:"; cat "$tmp/err"; fi
  if "$MMUSIM" run -q -m "$2" -w seq:size=1M,accesses=10000 > "$tmp/run" 2> "$tmp/err"; then ok; else bad "$1: run -m:"; cat "$tmp/err"; fi
}
has() { if grep -qF -- "$3" "$2"; then ok; else bad "$1: no '$3'"; fi; }
hasnt() { if grep -qF -- "$3" "$2"; then bad "$1: '$3' should not be there"; else ok; fi; }

for host in zen3-kvm skylake-2s notlb-vmware zen5-bhyve zen5-pvm icelake-snc2 power8-lpar power9-powernv power10-lpar; do
  cpuid="$fixtures/$host/cpuid.txt"
  [ -f "$cpuid" ] || cpuid=none # ppc64: no CPUID
  out="$tmp/$host.ini"
  if "$MMUSIM" host detect --cpuid "$cpuid" --root "$fixtures/$host/root" -o "$out" 2> "$tmp/err"; then
    ok
  else
    bad "$host: host detect failed:"; cat "$tmp/err"; continue
  fi
  if [ "${HOST_UPDATE:-0}" = 1 ]; then cp "$out" "$fixtures/$host/expected.ini"; fi
  if diff -u "$fixtures/$host/expected.ini" "$out"; then ok; else bad "$host: differs from expected.ini"; fi
  loads "$host" "$out"
done

# The guests: nested paging on, the host page size left out.
for host in zen3-kvm notlb-vmware; do
  has "$host" "$tmp/$host.ini" "nested = true"
  has "$host" "$tmp/$host.ini" "virt.host_page_size is left out"
done
has zen3-kvm "$tmp/zen3-kvm.ini" 'hypervisor KVMKVMKVM'
has zen3-kvm "$tmp/zen3-kvm.ini" '# CPUID 0x8000001d subleaf 3'
has zen3-kvm "$tmp/zen3-kvm.ini" 'Nearest preset: zen3'
# A PVM guest (its kernel log says so) in a bhyve guest: the shadow table
# is walked, translated by bhyve's NPT; neither page size is written.
has zen5-pvm "$tmp/zen5-pvm.ini" "shadow = true"
has zen5-pvm "$tmp/zen5-pvm.ini" "nested = true"
has zen5-pvm "$tmp/zen5-pvm.ini" "virt.shadow_page_size is left out"
has zen5-pvm "$tmp/zen5-pvm.ini" "a guest of PVM in a guest of bhyve bhyve"
# A KVM guest's kernel log names KVM: no shadow table; no kernel log: none either.
hasnt zen3-kvm "$tmp/zen3-kvm.ini" "shadow page tables"
has zen3-kvm "$tmp/zen3-kvm.ini" 'the kernel log: "Hypervisor detected: KVM"'
hasnt zen5-bhyve "$tmp/zen5-bhyve.ini" "shadow page tables"
# Bare metal: no virt line at all.
hasnt skylake-2s "$tmp/skylake-2s.ini" '[virt]'
hasnt skylake-2s "$tmp/skylake-2s.ini" 'nested'
has skylake-2s "$tmp/skylake-2s.ini" 'distances = 10,21;21,10'
has skylake-2s "$tmp/skylake-2s.ini" '# CPUID 0x18 subleaf 5'
# No TLB data: every TLB size line follows a from-preset mark, and the header lists them.
awk '/^\[/ { tlb = ($0 == "[tlb]") } tlb && /_(entries|ways)|stlb_sizes/ && prev !~ /^# from preset skylake: the host does not tell/ { print; bad = 1 }
     { prev = $0 } END { exit bad }' "$tmp/notlb-vmware.ini" > "$tmp/unmarked"
if [ -s "$tmp/unmarked" ]; then bad "notlb-vmware: tlb lines not marked from the preset:"; cat "$tmp/unmarked"; else ok; fi
has notlb-vmware "$tmp/notlb-vmware.ini" 'CPUID leaves 2 and 0x18 tell no TLB'
has notlb-vmware "$tmp/notlb-vmware.ini" 'From preset skylake: cpu.freq_mhz, cpu.mshrs, cpu.rob_size, cpu.page_walkers, tlb.l1i_4k_entries'

# The last-level cache: a node of a sub-NUMA-clustered socket caches in its
# share of the L3; this development host's guest has an L3 in 0x80000006
# that is the package's, and a guest is told the cache's size, not its share.
has icelake-snc2 "$tmp/icelake-snc2.ini" "llc_size = 30M"
has icelake-snc2 "$tmp/icelake-snc2.ini" "60M shared by 80 CPUs, the 40 CPUs of cpu0's node cache in 1/2 of it"
has zen5-bhyve "$tmp/zen5-bhyve.ini" "an L3 of 508M whose ways it does not give (code 9) and 0x8000001D is absent"
has zen5-bhyve "$tmp/zen5-bhyve.ini" "this is the package's L3, every CCX's together"
has zen5-bhyve "$tmp/zen5-bhyve.ini" "how much of it this guest holds, nothing a guest reads tells"
has zen5-bhyve "$tmp/zen5-bhyve.ini" "# from preset zen4: the host does not tell
llc_size = 32M"
hasnt skylake-2s "$tmp/skylake-2s.ini" "guest holds"

# ppc64, read from /proc/cpuinfo and the device tree under the root: the
# generation chooses the preset, pSeries is a partition (virt.lpar = true),
# PowerNV bare metal (false); a radix kernel is described on the hash MMU
# and the file says so; no x86 nested paging on either.
for host in power8-lpar power9-powernv power10-lpar; do
  has "$host" "$tmp/$host.ini" "arch = ppc64"
  hasnt "$host" "$tmp/$host.ini" "nested"
  has "$host" "$tmp/$host.ini" "# /proc/cpuinfo clock"
done
has power8-lpar "$tmp/power8-lpar.ini" "Nearest preset: power8 (POWER8"
has power8-lpar "$tmp/power8-lpar.ini" "# /proc/cpuinfo platform: pSeries (a logical partition"
has power8-lpar "$tmp/power8-lpar.ini" "device tree ibm,partition-name: lpar-p8-01"
has power8-lpar "$tmp/power8-lpar.ini" "line_bytes = 128"
has power9-powernv "$tmp/power9-powernv.ini" "Nearest preset: power9-hash (POWER9 running the radix MMU"
has power9-powernv "$tmp/power9-powernv.ini" "# /proc/cpuinfo platform: PowerNV"
has power9-powernv "$tmp/power9-powernv.ini" "which mmusim does not model"
has power9-powernv "$tmp/power9-powernv.ini" "distances = 10,40;40,10"
awk '/^lpar = / { print $3 }' "$tmp/power9-powernv.ini" > "$tmp/lpar"
if [ "$(cat "$tmp/lpar")" = false ]; then ok; else bad "power9-powernv: lpar is '$(cat "$tmp/lpar")', not false"; fi
has power10-lpar "$tmp/power10-lpar.ini" "Nearest preset: power9-hash (POWER10: newer than any preset"
has power10-lpar "$tmp/power10-lpar.ini" "hypervisor PowerVM, from the device tree's ibm,powervm-partition"
for host in power8-lpar power10-lpar; do
  awk '/^lpar = / { print $3 }' "$tmp/$host.ini" > "$tmp/lpar"
  if [ "$(cat "$tmp/lpar")" = true ]; then ok; else bad "$host: lpar is '$(cat "$tmp/lpar")', not true"; fi
done
# A partition's file runs with its hcalls: the LPAR counters are there.
"$MMUSIM" run -q -m "$tmp/power8-lpar.ini" -w seq:size=1M,accesses=10000 > "$tmp/run" 2> "$tmp/err"
has power8-lpar-run "$tmp/run" "hcall_h_enter"

# A host without CPUID (not x86): sysfs alone, still a machine.
if "$MMUSIM" host detect --cpuid none --root "$fixtures/zen3-kvm/root" -o "$tmp/nocpuid.ini" 2> "$tmp/err"; then ok; else bad "no CPUID:"; cat "$tmp/err"; fi
hasnt nocpuid "$tmp/nocpuid.ini" '# CPUID'
has nocpuid "$tmp/nocpuid.ini" '# /sys/devices/system/node/online'
loads nocpuid "$tmp/nocpuid.ini"

# Bad input: exit status 2, the message names the culprit.
expect_fail() {
  name=$1 pat=$2
  shift 2
  "$MMUSIM" host detect "$@" > /dev/null 2> "$tmp/err"
  rc=$?
  if [ "$rc" = 2 ]; then ok; else bad "$name: exit status $rc, not 2"; fi
  has "$name" "$tmp/err" "$pat"
}
expect_fail bad-root "--root $tmp/nowhere" --root "$tmp/nowhere" --cpuid "$fixtures/zen3-kvm/cpuid.txt"
expect_fail bad-output "$tmp/no/such/dir/host.ini" -o "$tmp/no/such/dir/host.ini" --cpuid "$fixtures/zen3-kvm/cpuid.txt" --root "$fixtures/zen3-kvm/root"
printf '0 0 d 68747541\n' > "$tmp/short.txt"
expect_fail bad-dump "short.txt:1: expected six hexadecimal numbers" --cpuid "$tmp/short.txt" --root "$fixtures/zen3-kvm/root"
expect_fail bad-arg "unexpected argument" extra

# The host this runs on: a file that loads, whatever it says.
if "$MMUSIM" host detect -o "$tmp/real.ini" 2> "$tmp/err"; then ok; else bad "real host:"; cat "$tmp/err"; fi
loads real-host "$tmp/real.ini"

echo "test_host_detect: $pass passed, $fail failed"
[ "$fail" = 0 ]
