#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The SETTINGS table of doc/mmusim.1 is what base/settings.def gives
# (doc/man-settings prints it, doc/man-settings.sh splices it in): a
# setting added, renamed or re-documented without regenerating the page
# fails here, with the difference and the command that fixes it.
set -u
: "${MMUSIM:=./mmusim}"
: "${MAN_SETTINGS:=$(dirname "$MMUSIM")/doc/man-settings}"
top=${srcdir:-$(dirname "$0")/..}
page=$top/doc/mmusim.1
out=$(mktemp "${TMPDIR:-/tmp}/mmusim-man.XXXXXX")
trap 'rm -f "$out"' EXIT
if ! sh "$top/doc/man-settings.sh" "$MAN_SETTINGS" "$page" > "$out"; then
  echo "FAIL: doc/man-settings.sh could not build the table"
  exit 1
fi
if ! cmp -s "$page" "$out"; then
  echo "FAIL: the SETTINGS table of doc/mmusim.1 differs from base/settings.def:"
  diff -u "$page" "$out" | head -n 60
  echo "Regenerate it with: make man-settings (then commit doc/mmusim.1)"
  exit 1
fi
echo "man-settings: doc/mmusim.1's SETTINGS table is that of base/settings.def"
