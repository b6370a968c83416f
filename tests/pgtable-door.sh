#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pgtable-door.sh - no file but mmu/pgtable.[ch] writes a page-table entry.
#
# The compiler does most of it: PtNode.e is `const uint64_t *` and
# PtNode.child `PtNode *const *` (mmu/pgtable.h), so `n->e[i] = x`,
# `n->e[i] |= x` and `n->child[i] = c` do not build; entries change through
# pgtable_entry_set(), pgtable_entry_set_flags(), pgtable_walk_set() and the
# range calls of pgtable.h.  This script keeps that from being undone
# quietly:
#  - pgtable.h still declares both arrays const;
#  - no other source casts an entry or child array to a writable pointer,
#    hands one to memset/memcpy/memmove as the destination, or binds it to
#    a pointer without const (a warning only, in a build without -Werror);
#  - the patterns themselves catch each of those forms and leave reads,
#    const bindings and the setters alone (checked first, on sample lines),
#    so a pattern broken by an edit fails here rather than passing silently.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-door.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# An expression that ends in a table's entries or children: n->e,
# pt->root->child, (*n).e, t->child[i]->e ...
ARR='[A-Za-z_(*][][A-Za-z0-9_.>()*-]*(->|\.)(e|child)([^A-Za-z0-9_]|$)'
# A cast to a pointer type, applied to such an expression.
CAST='\([[:space:]]*[A-Za-z_][A-Za-z0-9_[:space:]]*\*+[[:space:]]*\)[[:space:]]*\(?[[:space:]]*&?[[:space:]]*'"$ARR"
# Such an expression as the destination of a mem* call.
MEM='mem(set|cpy|move)[[:space:]]*\([[:space:]]*\(?[[:space:]]*&?[[:space:]]*'"$ARR"
# Such an expression (or an element's address) bound to a non-const pointer.
BIND='(uint64_t|PtNode[[:space:]]*\*)[[:space:]]*\*[[:space:]]*[A-Za-z_][A-Za-z0-9_]*[[:space:]]*=[[:space:]]*&?[[:space:]]*'"$ARR"

# writes FILE...: the lines of FILE that write through the door's back:
# file:line:text.
writes() {
  {
    grep -nHoE "$CAST" "$@" | grep -v 'const'
    grep -nHE "$MEM" "$@"
    grep -nHE "$BIND" "$@" | grep -vE 'const[[:space:]]+(uint64_t|PtNode)'
  } | sort -u
}

# ---- the patterns, on sample lines ------------------------------------------
cat > "$tmp/bad.c" <<'EOF'
  uint64_t *w = (uint64_t *)n->e;
  ((uint64_t *)n->e)[i] = 0;
  ((uint64_t*) (t->e))[3] |= PTE_A;
  ((PtNode **)n->child)[i] = c;
  uint64_t *p = (void *)pt->root->child[0]->e;
  memset(n->e, 0, 4096);
  memcpy((void *)t->e, old, sizeof old);
  memmove(&n->e[1], n->e, 8);
  uint64_t *row = n->e;
  uint64_t *slot = &n->e[idx];
  PtNode **kids = n->child;
EOF
cat > "$tmp/good.c" <<'EOF'
  uint64_t e = n->e[idx];
  const uint64_t *row = n->e;
  const uint64_t *slot = &n->e[idx];
  PtNode *c = n->child[i];
  memcpy(kh->old, table->e, kh->pmd_nr * sizeof *kh->old);
  pgtable_entry_set(n, idx, e | PTE_RW | PTE_D);
  pgtable_entry_set_flags(node, idx, PTE_A);
  (void)x86_coalescible(node->e, idx);
  Ppc64Hpte h = p->e[slot];
  p->e[slot].v = 0;
  uint64_t pfn = pte_pfn((uint64_t)n->e[0]);
EOF
nbad=$(wc -l < "$tmp/bad.c")
got=$(writes "$tmp/bad.c" | cut -d: -f2 | sort -un | wc -l)
if [ "$got" -eq "$nbad" ]; then ok; else
  bad "the patterns catch $got of the $nbad sample writes:"
  writes "$tmp/bad.c"
fi
if [ -z "$(writes "$tmp/good.c")" ]; then ok; else
  bad "the patterns flag reads or setters:"
  writes "$tmp/good.c"
fi

# ---- the header keeps the arrays const --------------------------------------
h="$top/mmu/pgtable.h"
if grep -qE '^[[:space:]]*const uint64_t \*e;' "$h"; then ok; else bad "PtNode.e is no longer const uint64_t * in mmu/pgtable.h"; fi
if grep -qE '^[[:space:]]*PtNode \*const \*child;' "$h"; then ok; else bad "PtNode.child is no longer PtNode *const * in mmu/pgtable.h"; fi

# ---- the tree -------------------------------------------------------------------
find "$top/arch" "$top/base" "$top/cli" "$top/kernel" "$top/mmu" "$top/sim" "$top/traces" "$top/tests" \
  -name '*.[ch]' ! -path "$top/mmu/pgtable.c" ! -path "$top/mmu/pgtable.h" > "$tmp/files"
if [ "$(wc -l < "$tmp/files")" -lt 50 ]; then
  bad "only $(wc -l < "$tmp/files") sources found under $top"
else
  ok
  # shellcheck disable=SC2046
  found=$(writes $(cat "$tmp/files") | sed "s|^$top/||")
  if [ -z "$found" ]; then ok; else
    bad "page-table entries written outside mmu/pgtable.[ch] (use pgtable_entry_set(), pgtable_entry_set_flags() or pgtable_walk()):"
    echo "$found"
  fi
fi

echo "pgtable-door: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
