# SPDX-License-Identifier: GPL-2.0-or-later
# svg-check.sh - sourced by tests/cli/test_map_cli.sh and test_plot_cli.sh:
# a scratch folder $tmp (removed on exit), pass/fail counts with ok and
# bad, and expect NAME FILE.svg PATTERN...: the SVG is well-formed (parsed
# by tests/cli/map_check, GLib's parser) and the text of its <desc> holds
# each pattern.  The caller sets MMUSIM and MAP_CHECK first.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-svg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

expect() {
  name=$1 svg=$2
  shift 2
  if ! "$MAP_CHECK" "$svg" > "$tmp/desc"; then
    bad "$name: not well-formed"
    return
  fi
  for pat in "$@"; do
    if grep -qF -- "$pat" "$tmp/desc"; then ok; else bad "$name: no '$pat' in:"; cat "$tmp/desc"; fi
  done
}
