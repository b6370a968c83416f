#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every rule of kernel/version.def is asked where it applies (kernel_has
# or kernel_version_has of KR_ID outside version.[ch]) and has its row in
# doc/model.md's version table (its name there, between backquotes).
set -u
top=${srcdir:-.}
fail=0
ids=$(sed -n 's/^X(\([A-Z0-9_]*\),.*/\1/p' "$top/kernel/version.def")
[ -n "$ids" ] || { echo "no rules read from kernel/version.def"; exit 1; }
for id in $ids; do
  if ! grep -rqw "KR_$id" --include='*.c' --include='*.h' "$top/kernel" "$top/mmu" "$top/sim" "$top/arch" "$top/cli" \
       --exclude=version.c --exclude=version.h; then
    echo "kernel/version.def: rule $id is asked nowhere (kernel_has(k, KR_$id))"
    fail=1
  fi
  name=$(sed -n "s/^X($id, \"\([^\"]*\)\".*/\1/p" "$top/kernel/version.def")
  if ! grep -qF "\`$name\`" "$top/doc/model.md"; then
    echo "doc/model.md: the version table has no row \`$name\` (rule $id of kernel/version.def)"
    fail=1
  fi
done
[ $fail = 0 ] && echo "kernel-version: $(echo $ids | wc -w) rules, each asked and documented"
exit $fail
