#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# man-settings.sh GEN PAGE: prints PAGE (doc/mmusim.1) with the lines
# between its BEGIN SETTINGS TABLE and END SETTINGS TABLE comments
# replaced by what GEN (doc/man-settings, built from base/settings.def)
# prints.  `make man-settings` writes the result over doc/mmusim.1;
# tests/man-settings.sh compares it with the committed page.
set -eu
gen=$1 page=$2
table=$(mktemp "${TMPDIR:-/tmp}/mmusim-man.XXXXXX")
trap 'rm -f "$table"' EXIT
"$gen" > "$table"
grep -q '^\.\\" BEGIN SETTINGS TABLE' "$page" && grep -q '^\.\\" END SETTINGS TABLE' "$page" || {
  echo "man-settings.sh: $page has no BEGIN/END SETTINGS TABLE comments" >&2
  exit 2
}
awk -v table="$table" '
  /^\.\\" BEGIN SETTINGS TABLE/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /^\.\\" END SETTINGS TABLE/ { skip = 0 }
  !skip { print }
' "$page"
