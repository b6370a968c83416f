#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every source file says its licence in its first lines, as the SPDX
# convention asks (LICENSE has the text): C sources and headers, the .def
# tables, scripts, the build files, the presets and the experiment files.
set -u
top=${srcdir:-.}
tag='SPDX-License-Identifier: GPL-2.0-or-later'
missing=$(cd "$top" && find base mmu kernel traces sim arch cli tests bench doc .ci quickstart configure.ac Makefile.am \
    -path tests/golden/cases -prune -o -path tests/fuzz/corpus -prune -o \
    -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' -o -name '*.sh' -o -name '*.py' -o -name '*.ini' \
       -o -name run -o -name quickstart -o -name configure.ac -o -name Makefile.am \) -print 2>/dev/null |
  grep -v '^tests/fuzz/fuzz_[a-z]*$' |
  while read -r f; do head -n 3 "$f" | grep -qF "$tag" || echo "$f"; done)
if [ -n "$missing" ]; then
  echo "these files lack '$tag' in their first 3 lines:"
  echo "$missing"
  exit 1
fi
echo "spdx: every source file names its licence"
