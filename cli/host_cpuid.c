/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host_cpuid.c - a table of CPUID leaves: the processor's (through GCC's
 * <cpuid.h>) or a text dump's.  It only stores and finds leaves; what they
 * mean is host_detect.c's business.  The ranges read are those of the Intel
 * SDM vol. 2A, CPUID (leaf 0 and 0x80000000 give the highest basic and
 * extended leaf) and of the hypervisor range 0x40000000 (its EAX gives the
 * highest hypervisor leaf, as KVM, Hyper-V, VMware and Xen all report it).
 */
#include "config.h"
#include "host_cpuid.h"

#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include "errors.h"

typedef struct {
  uint32_t leaf, subleaf;
  uint32_t r[4];
} CpuidRow;

struct HostCpuid {
  GArray *rows; /* CpuidRow, in the order read */
};

static HostCpuid *host_cpuid_new(void)
{
  HostCpuid *c = g_new0(HostCpuid, 1);
  c->rows = g_array_new(FALSE, FALSE, sizeof(CpuidRow));
  return c;
}

void host_cpuid_free(HostCpuid *c)
{
  if (!c)
    return;
  g_array_free(c->rows, TRUE);
  g_free(c);
}

static void put(HostCpuid *c, uint32_t leaf, uint32_t subleaf, const uint32_t r[4])
{
  for (guint i = 0; i < c->rows->len; i++) {
    CpuidRow *row = &g_array_index(c->rows, CpuidRow, i);
    if (row->leaf == leaf && row->subleaf == subleaf) {
      memcpy(row->r, r, sizeof row->r);
      return;
    }
  }
  CpuidRow row = { leaf, subleaf, { r[0], r[1], r[2], r[3] } };
  g_array_append_val(c->rows, row);
}

gboolean host_cpuid_get(const HostCpuid *c, uint32_t leaf, uint32_t subleaf, uint32_t r[4])
{
  for (guint i = 0; c && i < c->rows->len; i++) {
    const CpuidRow *row = &g_array_index(c->rows, CpuidRow, i);
    if (row->leaf == leaf && row->subleaf == subleaf) {
      memcpy(r, row->r, sizeof row->r);
      return TRUE;
    }
  }
  return FALSE;
}

static gboolean parse_hex32(const char *tok, uint32_t *out)
{
  guint64 v;
  if (g_str_has_prefix(tok, "0x") || g_str_has_prefix(tok, "0X"))
    tok += 2;
  if (!g_ascii_string_to_unsigned(tok, 16, 0, G_MAXUINT32, &v, NULL))
    return FALSE;
  *out = (uint32_t)v;
  return TRUE;
}

HostCpuid *host_cpuid_parse(const char *origin, const char *text, gsize len, GError **error)
{
  g_autoptr(HostCpuid) c = host_cpuid_new();
  g_autofree char *copy = g_strndup(text, len);
  g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
  for (int i = 0; lines[i]; i++) {
    char *hash = strchr(lines[i], '#');
    if (hash)
      *hash = '\0';
    g_auto(GStrv) tok = g_strsplit_set(g_strstrip(lines[i]), " \t", -1);
    uint32_t v[6];
    int n = 0;
    gboolean ok = TRUE;
    for (int t = 0; tok[t] && ok; t++) {
      if (!*tok[t])
        continue;
      ok = n < 6 && parse_hex32(tok[t], &v[n]);
      n++;
    }
    if (n == 0)
      continue;
    if (!ok || n != 6) {
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
                  "%s:%d: expected six hexadecimal numbers \"leaf subleaf eax ebx ecx edx\"; "
                  "fix the line or dump the leaves again with `mmusim host detect --dump-cpuid`",
                  origin, i + 1);
      return NULL;
    }
    put(c, v[0], v[1], v + 2);
  }
  return g_steal_pointer(&c);
}

HostCpuid *host_cpuid_load(const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) err = NULL;
  if (!g_file_get_contents(path, &text, &len, &err)) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE, "--cpuid %s: %s; give a CPUID dump file", path, err->message);
    return NULL;
  }
  return host_cpuid_parse(path, text, len, error);
}

#if defined(__x86_64__) || defined(__i386__)
static void read_leaf(HostCpuid *c, uint32_t leaf, uint32_t subleaf)
{
  uint32_t r[4];
  __cpuid_count(leaf, subleaf, r[0], r[1], r[2], r[3]);
  put(c, leaf, subleaf, r);
}

/* Subleaves of leaf 4 and 0x8000001D until the type field (EAX[4:0]) is
 * null; of 0x18 up to EAX of subleaf 0; of 7 up to EAX of subleaf 0. */
static void read_range(HostCpuid *c, uint32_t first)
{
  uint32_t r[4];
  __cpuid_count(first, 0, r[0], r[1], r[2], r[3]);
  uint32_t max = r[0];
  if (max < first || max - first > 0xff)
    max = first; /* a range not implemented returns rubbish: keep its first leaf only */
  for (uint32_t leaf = first; leaf <= max; leaf++) {
    if (leaf == 4 || leaf == 0x8000001d) {
      for (uint32_t sub = 0; sub < 16; sub++) {
        read_leaf(c, leaf, sub);
        host_cpuid_get(c, leaf, sub, r);
        if ((r[0] & 0x1f) == 0)
          break;
      }
    } else if (leaf == 7 || leaf == 0x18) {
      read_leaf(c, leaf, 0);
      host_cpuid_get(c, leaf, 0, r);
      for (uint32_t sub = 1; sub <= r[0] && sub < 32; sub++)
        read_leaf(c, leaf, sub);
    } else {
      read_leaf(c, leaf, 0);
    }
  }
}

HostCpuid *host_cpuid_native(void)
{
  HostCpuid *c = host_cpuid_new();
  read_range(c, 0);
  uint32_t r[4];
  /* CPUID.1:ECX[31]: a hypervisor is present, and the range 0x40000000 is its. */
  if (host_cpuid_get(c, 1, 0, r) && (r[2] >> 31) & 1)
    read_range(c, 0x40000000);
  read_range(c, 0x80000000);
  return c;
}
#else
HostCpuid *host_cpuid_native(void)
{
  return NULL;
}
#endif

char *host_cpuid_dump(const HostCpuid *c)
{
  GString *s = g_string_new("# leaf subleaf eax ebx ecx edx (mmusim host detect --dump-cpuid)\n");
  for (guint i = 0; c && i < c->rows->len; i++) {
    const CpuidRow *row = &g_array_index(c->rows, CpuidRow, i);
    g_string_append_printf(s, "%08x %x %08x %08x %08x %08x\n", row->leaf, row->subleaf, row->r[0], row->r[1],
                           row->r[2], row->r[3]);
  }
  return g_string_free(s, FALSE);
}
