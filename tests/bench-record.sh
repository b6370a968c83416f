#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-record.sh - the performance page keeps what the speed issue asks of
# it, and bench/record.sh, which make bench writes it with, replaces only
# its own block:
#  - doc/performance.md has the bench and bench-growth blocks, each opened
#    and closed once and not empty, the growth section and the profile
#    section (a hand edit once cut 940 lines of it without a test noticing);
#  - record.sh run on a copy of the page with a stand-in command puts that
#    command's output, indented, in the named block, and leaves every other
#    line as it was, the other block included;
#  - a failing command writes nothing and passes its exit status on;
#  - a page without the block is left alone, with a warning;
#  - an empty DOC only prints.
set -u
: "${MMUSIM:=./mmusim}"
top=$(cd "$(dirname "$0")/.." && pwd)
doc="$top/doc/performance.md"
record="$top/bench/record.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-record.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# The page's parts.
for name in bench bench-growth; do
  nb=$(grep -cxF "<!-- $name: begin -->" "$doc")
  ne=$(grep -cxF "<!-- $name: end -->" "$doc")
  [ "$nb" = 1 ] && [ "$ne" = 1 ] && ok || bad "$doc: '$name' block opened $nb and closed $ne times, want once each"
  lines=$(awk -v b="<!-- $name: begin -->" -v e="<!-- $name: end -->" '$0 == e { on = 0 } on { n++ } $0 == b { on = 1 } END { print n + 0 }' "$doc")
  [ "$lines" -ge 5 ] && ok || bad "$doc: '$name' block has $lines lines"
done
for heading in '## Profile' '### Growth with touched memory' '## Trace formats' '## Sweeps over one trace'; do
  grep -qxF "$heading" "$doc" && ok || bad "$doc: no '$heading' section"
done

# record.sh on a copy.
cp "$doc" "$tmp/page.md"
cat > "$tmp/fake.sh" <<'EOF'
#!/bin/sh
echo "fake bench line one"
echo "fake bench line two"
EOF
chmod +x "$tmp/fake.sh"
if "$record" "$tmp/page.md" bench "$tmp/fake.sh" > "$tmp/out" 2> "$tmp/err"; then ok; else bad "record.sh failed: $(cat "$tmp/err")"; fi
grep -qxF "fake bench line one" "$tmp/out" && ok || bad "record.sh did not print the command's output"
grep -qxF "    fake bench line two" "$tmp/page.md" && ok || bad "the output is not in the page's block"
# Outside the bench block, the page is as it was.
strip() { awk '$0 == "<!-- bench: begin -->" { on = 1 } !on { print } $0 == "<!-- bench: end -->" { on = 0 }' "$1"; }
strip "$doc" > "$tmp/a"
strip "$tmp/page.md" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && ok || bad "record.sh changed lines outside its block: $(diff "$tmp/a" "$tmp/b" | head -5)"
[ "$(wc -l < "$tmp/page.md")" -lt "$(($(wc -l < "$doc") + 10))" ] && ok || bad "the page grew by more than the block"

# A failing command: nothing written, its status passed on.
cp "$tmp/page.md" "$tmp/before.md"
"$record" "$tmp/page.md" bench sh -c 'echo partial; exit 3' > /dev/null 2>&1
rc=$?
[ "$rc" = 3 ] && ok || bad "a failing command gave status $rc, want 3"
cmp -s "$tmp/page.md" "$tmp/before.md" && ok || bad "a failing command's output was written"

# A page without the block; an empty DOC.
printf '# A page\n\nno block here\n' > "$tmp/none.md"
cp "$tmp/none.md" "$tmp/none0.md"
"$record" "$tmp/none.md" bench "$tmp/fake.sh" > /dev/null 2> "$tmp/err" && ok || bad "a page without the block failed the run"
grep -q "no '<!-- bench: begin -->'" "$tmp/err" && ok || bad "no warning for a page without the block: $(cat "$tmp/err")"
cmp -s "$tmp/none.md" "$tmp/none0.md" && ok || bad "a page without the block was changed"
"$record" "" bench "$tmp/fake.sh" > "$tmp/out" 2>&1 && grep -qxF "fake bench line two" "$tmp/out" && ok ||
  bad "an empty DOC did not just print"

echo "bench-record: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
