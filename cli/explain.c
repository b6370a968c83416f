/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * explain.c - the teaching view of one translation.
 */
#include "config.h"
#include "explain.h"

#include <stdlib.h>
#include <string.h>
#include "cache.h"

gboolean explain_parse_address(const char *text, uint64_t *va, AccessKind *kind, GError **error)
{
  *kind = ACC_LOAD;
  const char *p = text;
  if (p[0] && p[1] == ':') {
    switch (g_ascii_tolower(p[0])) {
    case 'r': *kind = ACC_LOAD; break;
    case 'w': *kind = ACC_STORE; break;
    case 'x': *kind = ACC_IFETCH; break;
    default: goto bad;
    }
    p += 2;
  }
  if (!settings_parse_size(p, va))
    goto bad;
  return TRUE;
bad:
  g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
              "explain: '%s' is not an address; write 0x7f0000001000, or w:ADDR for a store, x:ADDR for a fetch", text);
  return FALSE;
}

void explain_address(Machine *m, Thread *t, uint64_t va, AccessKind kind, GString *out)
{
  Cpu *cpu = m->cpus[t->cpu];
  cpu->kc.cur = t;
  /* The tag t's translations carry on that CPU (an ASID slot is taken
   * if it holds none, as a switch to t would). */
  int tag = kernel_cpu_pcid(m->k, &cpu->kc, t->mm);
  if (tag < 0) {
    gboolean flush;
    tag = (int)kernel_pcid_of(kernel_switch_asid(m->k, &cpu->kc, t->mm, &flush));
  }
  cpu->cur_asid = (unsigned)tag;
  const PtGeometry *g = &t->mm->pt.g;
  const ArchOps *a = m->arch;
  g_string_append_printf(out, "%s %#" G_GINT64_MODIFIER "x on %s (cpu %d, pid %u",
                         kind == ACC_STORE ? "store to" : kind == ACC_IFETCH ? "fetch from" : "load from", va, m->name,
                         cpu->id, t->pid);
  if (a->asid_name)
    g_string_append_printf(out, ", %s %u", a->asid_name, cpu->cur_asid);
  g_string_append(out, ")\n  indices:");
  for (unsigned l = g->levels; l >= 1; l--)
    g_string_append_printf(out, " %s %u", l < G_N_ELEMENTS(a->level_name) && a->level_name[l] ? a->level_name[l] : "L",
                           pgtable_index(g, l, va));
  g_string_append_printf(out, ", offset %#" G_GINT64_MODIFIER "x\n", (guint64)(va & ((1ULL << g->page_shift) - 1)));
  uint64_t before = cpu->clock;
  uint64_t pa = cpu_explain(cpu, t, va, kind, out);
  if (pa == ~0ULL) {
    g_string_append(out, "  no translation: the access would raise SIGSEGV\n\n");
    return;
  }
  MemLevel lvl;
  uint32_t c = memsys_access(cpu->mem, pa, kind == ACC_STORE ? MREQ_STORE : kind == ACC_IFETCH ? MREQ_IFETCH : MREQ_LOAD, &lvl);
  g_string_append_printf(out, "  data: pa %#" G_GINT64_MODIFIER "x from %s, %u cycles\n", pa, memsys_level_name(lvl), c);
  if (cpu->clock > before)
    g_string_append_printf(out, "  kernel time on this CPU: %" G_GUINT64_FORMAT " cycles\n", cpu->clock - before);
  g_string_append(out, "\n");
}
