#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The bash completion (doc/completion/mmusim) offers every option that each
# command's --help lists, so that it cannot lag the commands: an option
# added to a command and not to the completion fails here, naming both.
set -eu
MMUSIM=${MMUSIM:-./mmusim}
srcdir=${srcdir:-.}
comp=$srcdir/doc/completion/mmusim
fail=0
for cmd in run explain sweep record "trace info" "trace convert" "trace head" "host detect" "host bench" \
  "host validate"; do
  # shellcheck disable=SC2086 # the subcommand is two words on purpose
  help=$($MMUSIM $cmd --help 2>&1) || { echo "FAIL: mmusim $cmd --help exits non-zero"; fail=1; continue; }
  # The option lines of GLib's help: "  -m, --machine=FILE   ...".
  opts=$(printf '%s\n' "$help" | grep -E '^ +-' | sed -E 's/^ +//; s/ {2,}.*//' |
    grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,' | sort -u)
  [ -n "$opts" ] || { echo "FAIL: no options found in mmusim $cmd --help"; fail=1; }
  for opt in $opts; do
    case $opt in -h | --help) continue ;; esac
    if ! grep -qE -- "(^|[\" ])$opt([\" ]|\$)" "$comp"; then
      echo "FAIL: mmusim $cmd --help lists $opt, which $comp does not offer: add it to that command's opts"
      fail=1
    fi
  done
done
for sub in detect bench validate; do
  grep -q "\"detect bench validate\"" "$comp" || { echo "FAIL: $comp does not offer host $sub"; fail=1; }
done
[ $fail -eq 0 ] && echo "completion: every option of every command's --help is offered"
exit $fail
