#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Run a benchmark and write its output into its block of a Markdown page, so
# that the figures in doc/performance.md are the ones `make bench` printed,
# with the host, the date and the commit they came from.
# Usage: bench/record.sh DOC NAME COMMAND [ARG...]
# The output is printed as it comes.  When the command succeeds and DOC is
# not empty, the block from the line `<!-- NAME: begin -->` to
# `<!-- NAME: end -->` is replaced whole; a page without it is left alone (a
# warning).  The exit status is the command's.
set -eu
doc=$1; name=$2; shift 2
out=$(mktemp "${TMPDIR:-/tmp}/mmusim-record.XXXXXX")
status=$(mktemp "${TMPDIR:-/tmp}/mmusim-record.XXXXXX")
body=$(mktemp "${TMPDIR:-/tmp}/mmusim-record.XXXXXX")
new=$(mktemp "${TMPDIR:-/tmp}/mmusim-record.XXXXXX")
trap 'rm -f "$out" "$status" "$body" "$new"' EXIT
{ rc=0; "$@" || rc=$?; echo "$rc" > "$status"; } | tee "$out"
rc=$(cat "$status")
[ "$rc" -eq 0 ] || exit "$rc"
[ -n "$doc" ] || exit 0
begin="<!-- $name: begin -->"
end="<!-- $name: end -->"
if ! grep -qxF "$begin" "$doc" || ! grep -qxF "$end" "$doc"; then
  echo "$0: $doc has no '$begin' ... '$end' block: figures not recorded" >&2
  exit 0
fi
top=$(dirname "$0")/..
commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo "unknown")
cc=$(${CC:-cc} --version 2>/dev/null | head -n 1 || echo "unknown")
{
  echo "$begin"
  echo "Written by \`make $name\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit,"
  echo "compiler $cc, $(sed -n 's/^PRETTY_NAME="\(.*\)"/\1/p' /etc/os-release 2>/dev/null || uname -s):"
  echo
  sed 's/^/    /' "$out"
  echo "$end"
} > "$body"
awk -v begin="$begin" -v end="$end" -v body="$body" '
  $0 == begin { while ((getline l < body) > 0) print l; skip = 1; next }
  $0 == end { skip = 0; next }
  !skip { print }' "$doc" > "$new"
cat "$new" > "$doc"
echo "figures recorded in $doc"
