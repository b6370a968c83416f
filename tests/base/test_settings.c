/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_settings.c - the settings registry: defaults, parsing of every type,
 * range and choice checks, error messages, KEY=VALUE pairs, copies.
 */
#include "config.h"
#include "testutil.h"

#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "settings.h"

/* Set `name` to `value` and expect success. */
static void set_ok(Settings *s, const char *name, const char *value)
{
  g_autoptr(GError) err = NULL;
  ck_assert_msg(settings_set(s, name, value, "-s", &err), "%s=%s refused: %s", name, value, err ? err->message : "");
  ck_assert_no_error(err);
}

/* Set `name` to `value`, expect a refusal, return the message. */
static char *set_fails(Settings *s, const char *name, const char *value, const char *origin, int code)
{
  g_autoptr(GError) err = NULL;
  ck_assert_msg(!settings_set(s, name, value, origin, &err), "%s=%s accepted", name, value);
  ck_assert_msg(g_error_matches(err, MMUSIM_SETTINGS_ERROR, code), "%s=%s: wrong error %s", name, value,
                err ? err->message : "(none)");
  return g_strdup(err->message);
}

static void assert_contains(const char *text, const char *part)
{
  ck_assert_msg(strstr(text, part) != NULL, "[%s] not in [%s]", part, text);
}

/* ---- the table ---------------------------------------------------------- */

/* Whole-file reads of configs stop at SETTINGS_FILE_MAX_BYTES: /dev/zero is
 * refused, not read for ever. */
START_TEST(test_read_file_capped)
{
  char *data = NULL;
  gsize len = 0;
  GError *err = NULL;
  ck_assert(!settings_read_file("/dev/zero", "machine file", G_FILE_ERROR, 0, &data, &len, &err));
  ck_assert_ptr_null(data);
  ck_assert_ptr_nonnull(strstr(err->message, "machine file '/dev/zero' is larger than 16 MiB"));
  g_clear_error(&err);
  ck_assert(!settings_read_file("/nonexistent/m.ini", "machine file", G_FILE_ERROR, 0, &data, &len, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "cannot open machine file '/nonexistent/m.ini'"));
  g_clear_error(&err);
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("mmusim-read-XXXXXX.ini", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert(g_file_set_contents(path, "[cache]\nl2_ways = 4\n", -1, NULL));
  ck_assert(settings_read_file(path, "machine file", G_FILE_ERROR, 0, &data, &len, &err));
  ck_assert_uint_eq(len, 20);
  ck_assert_str_eq(data, "[cache]\nl2_ways = 4\n");
  g_free(data);
  g_unlink(path);
}
END_TEST

START_TEST(test_table_consistent)
{
  for (int i = 0; i < N_SETTINGS; i++) {
    const SettingDef *d = settings_def((SettingId)i);
    ck_assert_int_eq(d->id, i);
    ck_assert_ptr_eq(settings_lookup(d->name), d);
    ck_assert_msg(d->help && *d->help, "%s has no help", d->name);
    ck_assert_msg(d->source && *d->source, "%s names no source", d->name);
    ck_assert_msg(strchr(d->name, '.') != NULL, "%s is not section.knob", d->name);
    ck_assert_msg((d->type == SETTING_ENUM) == (d->choices != NULL), "%s: choices only for enums", d->name);
    if (d->type == SETTING_INT || d->type == SETTING_SIZE || d->type == SETTING_DOUBLE)
      ck_assert_msg(d->min <= d->max, "%s: min above max", d->name);
  }
  ck_assert_ptr_null(settings_lookup("no.such_knob"));
  ck_assert_ptr_null(settings_lookup(""));
  ck_assert_str_eq(settings_type_name(SETTING_INT), "int");
  ck_assert_str_eq(settings_type_name(SETTING_SIZE), "size");
  ck_assert_str_eq(settings_type_name(SETTING_DOUBLE), "float");
  ck_assert_str_eq(settings_type_name(SETTING_BOOL), "bool");
  ck_assert_str_eq(settings_type_name(SETTING_ENUM), "enum");
  ck_assert_str_eq(settings_type_name(SETTING_STRING), "string");
}
END_TEST

/* ---- defaults --------------------------------------------------------- */

START_TEST(test_defaults_every_setting)
{
  g_autoptr(Settings) s = settings_new();
  for (int i = 0; i < N_SETTINGS; i++) {
    const SettingDef *d = settings_def((SettingId)i);
    SettingId id = d->id;
    ck_assert_msg(!settings_is_set(s, id), "%s marked as set", d->name);
    ck_assert_ptr_nonnull(settings_str(s, id));
    switch (d->type) {
    case SETTING_INT: {
      uint64_t u;
      gboolean neg = d->def[0] == '-';
      ck_assert(settings_parse_count(d->def + neg, &u));
      int64_t v = neg ? -(int64_t)u : (int64_t)u;
      ck_assert_int_eq(settings_int(s, id), v);
      ck_assert_double_eq(settings_double(s, id), (double)v);
      ck_assert((double)v >= d->min && (double)v <= d->max);
      break;
    }
    case SETTING_SIZE: {
      uint64_t v;
      ck_assert(settings_parse_size(d->def, &v));
      ck_assert_int_eq(settings_int(s, id), (int64_t)v);
      ck_assert(v >= d->min && v <= d->max);
      g_autofree char *text = settings_format_size(v);
      ck_assert_str_eq(settings_str(s, id), text);
      break;
    }
    case SETTING_DOUBLE: {
      double v = g_ascii_strtod(d->def, NULL);
      ck_assert_double_eq(settings_double(s, id), v);
      ck_assert(v >= d->min && v <= d->max);
      break;
    }
    case SETTING_BOOL: {
      gboolean v;
      ck_assert(settings_parse_bool(d->def, &v));
      ck_assert_int_eq(settings_bool(s, id), v);
      ck_assert_str_eq(settings_str(s, id), v ? "true" : "false");
      break;
    }
    case SETTING_ENUM: {
      g_auto(GStrv) choices = g_strsplit(d->choices, "|", -1);
      int64_t idx = settings_int(s, id);
      ck_assert(idx >= 0 && idx < (int64_t)g_strv_length(choices));
      ck_assert_str_eq(choices[idx], d->def);
      ck_assert_str_eq(settings_str(s, id), d->def);
      break;
    }
    case SETTING_STRING:
      ck_assert_str_eq(settings_str(s, id), d->def);
      break;
    }
  }
}
END_TEST

START_TEST(test_defaults_known_values)
{
  g_autoptr(Settings) s = settings_new();
  ck_assert_str_eq(settings_str(s, SET_MACHINE_ARCH), "x86_64");
  ck_assert_int_eq(settings_int(s, SET_MACHINE_MEM_PER_NODE), 16ll << 30);
  ck_assert_str_eq(settings_str(s, SET_MACHINE_MEM_PER_NODE), "16G");
  ck_assert_int_eq(settings_int(s, SET_CACHE_L1D_SIZE), 32768);
  ck_assert_str_eq(settings_str(s, SET_CACHE_L1D_SIZE), "32K");
  ck_assert_int_eq(settings_int(s, SET_CPU_FREQ_MHZ), 3000);
  ck_assert_double_eq(settings_double(s, SET_CPU_CPI), 0.5);
  ck_assert_str_eq(settings_str(s, SET_CPU_CPI), "0.5");
  ck_assert_double_eq(settings_double(s, SET_MEM_CLEAR_HOT_BYTES_PER_NS), 40.3);
  ck_assert_str_eq(settings_str(s, SET_MEM_CLEAR_HOT_BYTES_PER_NS), "40.3");
  ck_assert(settings_bool(s, SET_TLB_PCID));
  ck_assert(!settings_bool(s, SET_TLB_L1_MIXED));
  ck_assert_int_eq(settings_int(s, SET_TLB_STLB_SIZES), 1); /* 4k|4k+2m|4k+2m+1g */
  ck_assert_int_eq(settings_int(s, SET_CACHE_PREFETCHER), 2); /* none|nextline|stream */
  ck_assert_str_eq(settings_str(s, SET_TLB_REPLACEMENT), "lru");
}
END_TEST

START_TEST(test_normalised_text_reads_back)
{
  /* Setting every knob to its own normalised text changes nothing. */
  g_autoptr(Settings) s = settings_new();
  g_autoptr(Settings) t = settings_new();
  for (int i = 0; i < N_SETTINGS; i++)
    set_ok(t, settings_def((SettingId)i)->name, settings_str(s, (SettingId)i));
  for (int i = 0; i < N_SETTINGS; i++) {
    ck_assert_str_eq(settings_str(t, (SettingId)i), settings_str(s, (SettingId)i));
    ck_assert_int_eq(settings_int(t, (SettingId)i), settings_int(s, (SettingId)i));
    ck_assert_double_eq(settings_double(t, (SettingId)i), settings_double(s, (SettingId)i));
    ck_assert(settings_is_set(t, (SettingId)i));
  }
}
END_TEST

/* ---- sizes and counts ------------------------------------------------------ */

START_TEST(test_parse_size)
{
  static const struct {
    const char *text;
    uint64_t bytes;
  } good[] = {
    { "0", 0 },
    { "512", 512 },
    { "4K", 4096 },
    { "4k", 4096 },
    { "2M", 2097152 },
    { "1G", 1073741824 },
    { "1T", 1099511627776ull },
    { "64KiB", 65536 },
    { "64kib", 65536 },
    { "64KB", 65536 },
    { "2MiB", 2097152 },
    { "0x1000", 4096 },
    { "0X10K", 16384 },
    { " 2M ", 2097152 },
    { "16777215T", 16777215ull << 40 },
    { "18446744073709551615", UINT64_MAX },
  };
  for (unsigned k = 0; k < G_N_ELEMENTS(good); k++) {
    uint64_t v = 12345;
    ck_assert_msg(settings_parse_size(good[k].text, &v), "'%s' refused", good[k].text);
    ck_assert_msg(v == good[k].bytes, "'%s' -> %" G_GUINT64_FORMAT, good[k].text, v);
  }
  static const char *bad[] = { "", " ", "-1", "+4K", "1.5G", "4X", "K", "4K4", "4 K", "0x", "0xg", "0x-5", "0x 5",
                               "0x+5", "4Bi", "4B", "4KiBB", "18446744073709551616", "16777216T", "1P" };
  for (unsigned k = 0; k < G_N_ELEMENTS(bad); k++) {
    uint64_t v = 12345;
    ck_assert_msg(!settings_parse_size(bad[k], &v), "'%s' accepted as %" G_GUINT64_FORMAT, bad[k], v);
    ck_assert_int_eq(v, 12345); /* untouched on failure */
  }
}
END_TEST

START_TEST(test_parse_count)
{
  static const struct {
    const char *text;
    uint64_t n;
  } good[] = {
    { "7", 7 }, { "1K", 1000 }, { "1k", 1000 }, { "2M", 2000000 }, { "1G", 1000000000 }, { "1T", 1000000000000ull },
    { "0x10", 16 }, { "0x10K", 16000 }, { "3KB", 3000 },
  };
  for (unsigned k = 0; k < G_N_ELEMENTS(good); k++) {
    uint64_t v = 0;
    ck_assert_msg(settings_parse_count(good[k].text, &v), "'%s' refused", good[k].text);
    ck_assert_msg(v == good[k].n, "'%s' -> %" G_GUINT64_FORMAT, good[k].text, v);
  }
  /* A binary prefix on a count would be a lie: 1Ki is not 1000. */
  static const char *bad[] = { "1Ki", "1KiB", "-3", "1e3", "", "0x-1", "20000000T" };
  for (unsigned k = 0; k < G_N_ELEMENTS(bad); k++) {
    uint64_t v = 0;
    ck_assert_msg(!settings_parse_count(bad[k], &v), "'%s' accepted as %" G_GUINT64_FORMAT, bad[k], v);
  }
}
END_TEST

START_TEST(test_set_size_and_int)
{
  g_autoptr(Settings) s = settings_new();
  set_ok(s, "cache.l2_size", "1M");
  ck_assert_int_eq(settings_int(s, SET_CACHE_L2_SIZE), 1048576);
  ck_assert_str_eq(settings_str(s, SET_CACHE_L2_SIZE), "1M");
  set_ok(s, "cache.l2_size", "1536K");
  ck_assert_int_eq(settings_int(s, SET_CACHE_L2_SIZE), 1572864);
  ck_assert_str_eq(settings_str(s, SET_CACHE_L2_SIZE), "1536K");
  set_ok(s, "cache.l2_size", "64KiB");
  ck_assert_int_eq(settings_int(s, SET_CACHE_L2_SIZE), 65536);
  ck_assert_str_eq(settings_str(s, SET_CACHE_L2_SIZE), "64K");
  set_ok(s, "machine.mem_per_node", "1T");
  ck_assert_int_eq(settings_int(s, SET_MACHINE_MEM_PER_NODE), 1ll << 40);
  ck_assert_str_eq(settings_str(s, SET_MACHINE_MEM_PER_NODE), "1T");
  /* counts: K is 1000, hex works, the text is the plain number */
  set_ok(s, "tlb.stlb_entries", "2K");
  ck_assert_int_eq(settings_int(s, SET_TLB_STLB_ENTRIES), 2000);
  ck_assert_str_eq(settings_str(s, SET_TLB_STLB_ENTRIES), "2000");
  set_ok(s, "tlb.stlb_entries", "0x600");
  ck_assert_int_eq(settings_int(s, SET_TLB_STLB_ENTRIES), 1536);
  ck_assert_str_eq(settings_str(s, SET_TLB_STLB_ENTRIES), "1536");
  ck_assert_double_eq(settings_double(s, SET_TLB_STLB_ENTRIES), 1536.0);
  /* bounds are inclusive */
  set_ok(s, "cpu.page_walkers", "1");
  set_ok(s, "cpu.page_walkers", "16");
  set_ok(s, "machine.mem_per_node", "64M");
  set_ok(s, "machine.mem_per_node", "64T");
}
END_TEST

/* Each value keeps its origin, copies keep it too, and of several settings
 * the one set last is found. */
START_TEST(test_origin_and_latest)
{
  g_autoptr(Settings) s = settings_new();
  ck_assert_ptr_null(settings_origin(s, SET_CACHE_L2_SIZE));
  g_autofree char *def = settings_blame(s, SET_CACHE_L2_SIZE);
  ck_assert_str_eq(def, "cache.l2_size = 256K (default)");
  g_autofree char *none = settings_prefix(s, SET_CACHE_L2_SIZE);
  ck_assert_str_eq(none, "");
  ck_assert(settings_set(s, "cache.l2_ways", "8", "m.ini [cache] l2_ways", NULL));
  ck_assert(settings_set(s, "cache.l2_size", "1M", "-s", NULL));
  g_autoptr(Settings) c = settings_copy(s);
  g_autofree char *blame = settings_blame(c, SET_CACHE_L2_WAYS);
  ck_assert_str_eq(blame, "cache.l2_ways = 8 (from m.ini [cache] l2_ways)");
  g_autofree char *prefix = settings_prefix(c, SET_CACHE_L2_SIZE);
  ck_assert_str_eq(prefix, "-s: ");
  SettingId ids[] = { SET_CACHE_LINE_BYTES, SET_CACHE_L2_WAYS, SET_CACHE_L2_SIZE };
  ck_assert_int_eq(settings_latest(c, ids, 3), SET_CACHE_L2_SIZE);
  ck_assert(settings_set(c, "cache.l2_ways", "4", "-s", NULL));
  ck_assert_int_eq(settings_latest(c, ids, 3), SET_CACHE_L2_WAYS);
  ck_assert_int_eq(settings_latest(s, ids, 3), SET_CACHE_L2_SIZE); /* the copy is its own */
  ck_assert_int_eq(settings_latest(c, ids, 1), SET_CACHE_LINE_BYTES);
}
END_TEST

/* ---- bools, enums, doubles, strings --------------------------------------- */

START_TEST(test_parse_bool)
{
  static const char *yes[] = { "true", "TRUE", "yes", "Yes", "on", "ON", "1" };
  static const char *no[] = { "false", "False", "no", "NO", "off", "Off", "0" };
  for (unsigned k = 0; k < G_N_ELEMENTS(yes); k++) {
    gboolean b = FALSE;
    ck_assert_msg(settings_parse_bool(yes[k], &b) && b, "%s", yes[k]);
  }
  for (unsigned k = 0; k < G_N_ELEMENTS(no); k++) {
    gboolean b = TRUE;
    ck_assert_msg(settings_parse_bool(no[k], &b) && !b, "%s", no[k]);
  }
  static const char *bad[] = { "", "2", "y", "n", "maybe", "truee", "01" };
  for (unsigned k = 0; k < G_N_ELEMENTS(bad); k++) {
    gboolean b = 7;
    ck_assert_msg(!settings_parse_bool(bad[k], &b), "%s accepted", bad[k]);
    ck_assert_int_eq(b, 7);
  }
}
END_TEST

START_TEST(test_set_bool)
{
  g_autoptr(Settings) s = settings_new();
  set_ok(s, "tlb.pcid", "off");
  ck_assert(!settings_bool(s, SET_TLB_PCID));
  ck_assert_int_eq(settings_int(s, SET_TLB_PCID), 0);
  ck_assert_str_eq(settings_str(s, SET_TLB_PCID), "false");
  set_ok(s, "tlb.pcid", " Yes ");
  ck_assert(settings_bool(s, SET_TLB_PCID));
  ck_assert_int_eq(settings_int(s, SET_TLB_PCID), 1);
  ck_assert_double_eq(settings_double(s, SET_TLB_PCID), 1.0);
  ck_assert_str_eq(settings_str(s, SET_TLB_PCID), "true");
  g_autofree char *msg = set_fails(s, "tlb.pcid", "maybe", "zen4.ini:7", SETTINGS_ERROR_BAD_VALUE);
  ck_assert_str_eq(msg, "zen4.ini:7: setting 'tlb.pcid' cannot be 'maybe': it takes true or false");
  ck_assert(settings_bool(s, SET_TLB_PCID)); /* unchanged */
}
END_TEST

START_TEST(test_set_enum)
{
  g_autoptr(Settings) s = settings_new();
  set_ok(s, "cache.prefetcher", "NextLine");
  ck_assert_int_eq(settings_int(s, SET_CACHE_PREFETCHER), 1);
  ck_assert_str_eq(settings_str(s, SET_CACHE_PREFETCHER), "nextline");
  set_ok(s, "cache.prefetcher", "NONE");
  ck_assert_int_eq(settings_int(s, SET_CACHE_PREFETCHER), 0);
  ck_assert_str_eq(settings_str(s, SET_CACHE_PREFETCHER), "none");
  set_ok(s, "tlb.stlb_sizes", "4K+2M+1G");
  ck_assert_int_eq(settings_int(s, SET_TLB_STLB_SIZES), 2);
  ck_assert_str_eq(settings_str(s, SET_TLB_STLB_SIZES), "4k+2m+1g");
  /* a prefix of a choice is not the choice */
  g_autofree char *msg = set_fails(s, "cache.prefetcher", "next", "-s", SETTINGS_ERROR_BAD_VALUE);
  ck_assert_str_eq(msg, "-s: setting 'cache.prefetcher' cannot be 'next': it takes one of none|nextline|stream");
  g_autofree char *empty = set_fails(s, "tlb.replacement", "", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(empty, "one of lru|fifo|random");
  ck_assert_str_eq(settings_str(s, SET_CACHE_PREFETCHER), "none");
}
END_TEST

START_TEST(test_set_double)
{
  g_autoptr(Settings) s = settings_new();
  set_ok(s, "cpu.cpi", "0.75");
  ck_assert_double_eq(settings_double(s, SET_CPU_CPI), 0.75);
  ck_assert_str_eq(settings_str(s, SET_CPU_CPI), "0.75");
  set_ok(s, "cpu.cpi", " 1e-1 ");
  ck_assert_double_eq(settings_double(s, SET_CPU_CPI), 0.1);
  ck_assert_str_eq(settings_str(s, SET_CPU_CPI), "0.1");
  set_ok(s, "cpu.cpi", "2");
  ck_assert_double_eq(settings_double(s, SET_CPU_CPI), 2.0);
  ck_assert_int_eq(settings_int(s, SET_CPU_CPI), 2);
  ck_assert_str_eq(settings_str(s, SET_CPU_CPI), "2");
  /* the text keeps every digit, so it reads back to the same value */
  set_ok(s, "fault.anon_ns", "1234567.25");
  ck_assert_str_eq(settings_str(s, SET_FAULT_ANON_NS), "1234567.25");
  set_ok(s, "fault.anon_ns", "1e9");
  ck_assert_str_eq(settings_str(s, SET_FAULT_ANON_NS), "1000000000");
  set_ok(s, "dram.latency_ns", "80.12345678901234"); /* 16 digits: %.15g would round it */
  ck_assert_double_eq(g_ascii_strtod(settings_str(s, SET_DRAM_LATENCY_NS), NULL), 80.12345678901234);
}
END_TEST

START_TEST(test_set_double_rejects)
{
  g_autoptr(Settings) s = settings_new();
  static const char *bad[] = { "abc", "1.5x", "", "nan", "inf", "-inf", "1e400", "0.75 0.5" };
  for (unsigned k = 0; k < G_N_ELEMENTS(bad); k++) {
    g_autofree char *msg = set_fails(s, "cpu.cpi", bad[k], "-s", SETTINGS_ERROR_BAD_VALUE);
    assert_contains(msg, "setting 'cpu.cpi'");
    assert_contains(msg, "a number from 0.05 to 20");
  }
  g_autofree char *hi = set_fails(s, "cpu.cpi", "25", "westmere.ini:3", SETTINGS_ERROR_BAD_VALUE);
  ck_assert_str_eq(hi, "westmere.ini:3: setting 'cpu.cpi' cannot be '25': it takes a number from 0.05 to 20");
  g_autofree char *lo = set_fails(s, "cpu.cpi", "0.01", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(lo, "'0.01'");
  g_autofree char *big = set_fails(s, "fault.anon_ns", "2e9", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(big, "a number from 0 to 1000000000");
  ck_assert_double_eq(settings_double(s, SET_CPU_CPI), 0.5);
  ck_assert(!settings_is_set(s, SET_CPU_CPI));
}
END_TEST

START_TEST(test_set_string)
{
  g_autoptr(Settings) s = settings_new();
  set_ok(s, "machine.arch", "  ppc64 ");
  ck_assert_str_eq(settings_str(s, SET_MACHINE_ARCH), "ppc64");
  ck_assert_int_eq(settings_int(s, SET_MACHINE_ARCH), 0);
}
END_TEST

/* ---- range and syntax errors ---------------------------------------------- */

START_TEST(test_int_out_of_range)
{
  g_autoptr(Settings) s = settings_new();
  g_autofree char *hi = set_fails(s, "cpu.page_walkers", "17", "skylake.ini:12", SETTINGS_ERROR_BAD_VALUE);
  ck_assert_str_eq(hi, "skylake.ini:12: setting 'cpu.page_walkers' cannot be '17': it takes a whole number from 1 to 16");
  g_autofree char *lo = set_fails(s, "cpu.page_walkers", "0", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(lo, "from 1 to 16");
  g_autofree char *neg = set_fails(s, "cpu.page_walkers", "-2", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(neg, "'-2'");
  g_autofree char *junk = set_fails(s, "cpu.page_walkers", "two", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(junk, "'two'");
  g_autofree char *ki = set_fails(s, "tlb.stlb_entries", "1Ki", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(ki, "a whole number from 0 to 1048576");
  ck_assert_int_eq(settings_int(s, SET_CPU_PAGE_WALKERS), 2);
  ck_assert(!settings_is_set(s, SET_CPU_PAGE_WALKERS));
}
END_TEST

/* A minus sign is read only where the range goes below zero. */
START_TEST(test_int_negative)
{
  g_autoptr(Settings) s = settings_new();
  set_ok(s, "khugepaged.cpu", "-1");
  ck_assert_int_eq(settings_int(s, SET_KHUGEPAGED_CPU), -1);
  ck_assert_str_eq(settings_str(s, SET_KHUGEPAGED_CPU), "-1");
  set_ok(s, "khugepaged.cpu", "3");
  ck_assert_int_eq(settings_int(s, SET_KHUGEPAGED_CPU), 3);
  g_autofree char *lo = set_fails(s, "khugepaged.cpu", "-2", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(lo, "from -1 to 65535");
  g_autofree char *huge = set_fails(s, "khugepaged.cpu", "-99999999999999999999", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(huge, "from -1 to 65535");
}
END_TEST

START_TEST(test_size_out_of_range)
{
  g_autoptr(Settings) s = settings_new();
  g_autofree char *lo = set_fails(s, "machine.mem_per_node", "1M", "-s", SETTINGS_ERROR_BAD_VALUE);
  ck_assert_str_eq(lo, "-s: setting 'machine.mem_per_node' cannot be '1M': it takes a size from 64M to 64T (suffixes K, M, G, T)");
  g_autofree char *hi = set_fails(s, "machine.mem_per_node", "65T", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(hi, "from 64M to 64T");
  g_autofree char *frac = set_fails(s, "cache.l1d_size", "1.5K", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(frac, "setting 'cache.l1d_size' cannot be '1.5K'");
  g_autofree char *wrap = set_fails(s, "cache.l1d_size", "0x-5", "-s", SETTINGS_ERROR_BAD_VALUE);
  assert_contains(wrap, "'0x-5'");
  ck_assert_int_eq(settings_int(s, SET_MACHINE_MEM_PER_NODE), 16ll << 30);
}
END_TEST

START_TEST(test_unknown_key)
{
  g_autoptr(Settings) s = settings_new();
  g_autofree char *msg = set_fails(s, "tlb.stlb_entires", "4", "-s", SETTINGS_ERROR_UNKNOWN_KEY);
  ck_assert_str_eq(msg, "-s: unknown setting 'tlb.stlb_entires'; did you mean 'tlb.stlb_entries'? "
                        "(`mmusim list settings` lists them all)");
  g_autofree char *far = set_fails(s, "frobnicate", "4", "my.ini:2", SETTINGS_ERROR_UNKNOWN_KEY);
  ck_assert_str_eq(far, "my.ini:2: unknown setting 'frobnicate' (`mmusim list settings` lists them all)");
  ck_assert_str_eq(settings_suggest("cache.l1d_sise"), "cache.l1d_size");
  ck_assert_str_eq(settings_suggest("tlb.pcdi"), "tlb.pcid");
  ck_assert_str_eq(settings_suggest("cpu.freq_mhz"), "cpu.freq_mhz");
  ck_assert_ptr_null(settings_suggest("frobnicate"));
  ck_assert_ptr_null(settings_suggest("completely.unrelated.words.here"));
}
END_TEST

START_TEST(test_pairs)
{
  g_autoptr(Settings) s = settings_new();
  g_autoptr(GError) err = NULL;
  ck_assert(settings_set_pair(s, "tlb.pcid=off", "-s", &err));
  ck_assert(!settings_bool(s, SET_TLB_PCID));
  ck_assert(settings_set_pair(s, " cpu.mshrs = 12 ", "-s", &err));
  ck_assert_int_eq(settings_int(s, SET_CPU_MSHRS), 12);
  ck_assert(settings_set_pair(s, "machine.arch=a=b", "-s", &err)); /* the first '=' splits */
  ck_assert_str_eq(settings_str(s, SET_MACHINE_ARCH), "a=b");
  ck_assert_no_error(err);

  ck_assert(!settings_set_pair(s, "cache.prefetcher", "-s", &err));
  ck_assert(g_error_matches(err, MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_BAD_VALUE));
  ck_assert_str_eq(err->message, "-s: 'cache.prefetcher' is not KEY=VALUE (for example -s thp.enabled=never)");
  g_clear_error(&err);

  ck_assert(!settings_set_pair(s, "=5", "-s", &err));
  ck_assert(g_error_matches(err, MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_UNKNOWN_KEY));
  g_clear_error(&err);

  ck_assert(!settings_set_pair(s, "cpu.mshrs=300", "bench.ini:4", &err));
  ck_assert_str_eq(err->message, "bench.ini:4: setting 'cpu.mshrs' cannot be '300': it takes a whole number from 1 to 256");
  ck_assert_int_eq(settings_int(s, SET_CPU_MSHRS), 12);
}
END_TEST

START_TEST(test_is_set)
{
  g_autoptr(Settings) s = settings_new();
  set_ok(s, "cpu.mshrs", "10"); /* the default value, but set */
  for (int i = 0; i < N_SETTINGS; i++)
    ck_assert_int_eq(settings_is_set(s, (SettingId)i), i == SET_CPU_MSHRS);
}
END_TEST

/* ---- copies ------------------------------------------------------------------ */

START_TEST(test_copy_independent)
{
  g_autoptr(Settings) a = settings_new();
  set_ok(a, "cache.prefetcher", "none");
  set_ok(a, "machine.arch", "ppc64");
  g_autoptr(Settings) b = settings_copy(a);
  for (int i = 0; i < N_SETTINGS; i++) {
    ck_assert_str_eq(settings_str(b, (SettingId)i), settings_str(a, (SettingId)i));
    ck_assert_int_eq(settings_int(b, (SettingId)i), settings_int(a, (SettingId)i));
    ck_assert_int_eq(settings_is_set(b, (SettingId)i), settings_is_set(a, (SettingId)i));
    ck_assert_ptr_ne(settings_str(b, (SettingId)i), settings_str(a, (SettingId)i)); /* own strings */
  }
  set_ok(b, "machine.arch", "x86_64");
  set_ok(b, "cpu.cpi", "3");
  ck_assert_str_eq(settings_str(a, SET_MACHINE_ARCH), "ppc64");
  ck_assert_double_eq(settings_double(a, SET_CPU_CPI), 0.5);
  ck_assert(!settings_is_set(a, SET_CPU_CPI));
  set_ok(a, "cache.prefetcher", "stream");
  ck_assert_str_eq(settings_str(b, SET_CACHE_PREFETCHER), "none");
  /* freeing the original leaves the copy whole */
  g_clear_pointer(&a, settings_free);
  ck_assert_str_eq(settings_str(b, SET_MACHINE_ARCH), "x86_64");
  settings_free(NULL);
}
END_TEST

/* ---- settings_format_size ------------------------------------------------- */

START_TEST(test_format_size)
{
  static const struct {
    uint64_t bytes;
    const char *text;
  } cases[] = {
    { 0, "0" }, { 1, "1" }, { 512, "512" }, { 1000, "1000" }, { 1025, "1025" }, { 1024, "1K" }, { 4096, "4K" },
    { 1536 * 1024, "1536K" }, { 2 << 20, "2M" }, { 1ull << 30, "1G" }, { 3ull << 40, "3T" }, { 1ull << 50, "1P" },
    { 1ull << 60, "1024P" },
  };
  for (unsigned k = 0; k < G_N_ELEMENTS(cases); k++) {
    g_autofree char *t = settings_format_size(cases[k].bytes);
    ck_assert_str_eq(t, cases[k].text);
  }
}
END_TEST

START_TEST(test_format_size_round_trip)
{
  /* Every formatted size below 1P parses back to itself. */
  GRand *rng = g_rand_new_with_seed(7);
  for (int k = 0; k < 2000; k++) {
    int shift = g_rand_int_range(rng, 0, 40);
    uint64_t bytes = ((uint64_t)g_rand_int_range(rng, 1, 4096)) << shift;
    g_autofree char *t = settings_format_size(bytes);
    uint64_t back = 0;
    ck_assert_msg(settings_parse_size(t, &back) && back == bytes, "%" G_GUINT64_FORMAT " -> %s", bytes, t);
  }
  g_rand_free(rng);
}
END_TEST

/* An .ini file's bad line is quoted short and escaped: a binary file given
 * by mistake does not print its bytes raw. */
START_TEST(test_ini_check_quotes_binary_short)
{
  GString *bin = g_string_new("[machine]\n");
  for (unsigned i = 0; i < 300; i++)
    g_string_append_c(bin, (char)(0x80 + i % 0x70));
  GError *err = NULL;
  ck_assert(!settings_ini_check("garbage.bin", bin->str, bin->len, MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_BAD_VALUE, "[x]", &err));
  ck_assert_str_eq(err->message, "garbage.bin:2: '\\x80\\x81\\x82\\x83\\x84\\x85\\x86\\x87\\x88\\x89\\x8a"
                                 "\\x8b\\x8c\\x8d\\x8e...' is neither KEY = VALUE, a [group] header nor a # comment");
  g_clear_error(&err);
  g_string_free(bin, TRUE);
  /* Printable, 60 characters shown. */
  g_autofree char *longer = g_strdup_printf("[machine]\n%s\n", "abcdefghij" "abcdefghij" "abcdefghij"
                                            "abcdefghij" "abcdefghij" "abcdefghij" "abcdefghij");
  ck_assert(!settings_ini_check("long.ini", longer, strlen(longer), MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_BAD_VALUE, "[x]", &err));
  ck_assert_ptr_nonnull(strstr(err->message, "long.ini:2: 'abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij...' is"));
  g_clear_error(&err);
  /* A NUL byte: the line and offset, and what it means. */
  static const char nul[] = "[machine]\nname = x\0y\n";
  ck_assert(!settings_ini_check("n.ini", nul, sizeof nul - 1, MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_BAD_VALUE, "[x]", &err));
  ck_assert_str_eq(err->message, "n.ini:2: a NUL byte (byte offset 18): is this a binary file? give a text .ini file");
  g_clear_error(&err);
}
END_TEST

/* GKeyFile returns no string for a value that is not UTF-8: such a line, in
 * a value, a key or a header, is refused with its line; a comment is not. */
START_TEST(test_ini_check_refuses_bad_utf8)
{
  static const char *const bad[] = { "[vary]\n# caf\xe9 ok\nmachine = sky\xff" "lake\n", "[vary]\nma\xc3" "chine = x\n",
                                     "[va\x80" "ry]\nx = 1\n", NULL };
  for (unsigned i = 0; bad[i]; i++) {
    GError *err = NULL;
    ck_assert(!settings_ini_check("u.ini", bad[i], strlen(bad[i]), MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_BAD_VALUE,
                                  "[x]", &err));
    ck_assert_ptr_nonnull(strstr(err->message, "is not valid UTF-8"));
    ck_assert_ptr_nonnull(strstr(err->message, i == 0 ? "u.ini:3: 'machine = sky\\xfflake'" : i == 1 ? "u.ini:2:" : "u.ini:1:"));
    g_clear_error(&err);
  }
  static const char ok[] = "[machine]\n# \xff in a comment\nname = caf\xc3\xa9\n";
  GError *err = NULL;
  ck_assert(settings_ini_check("ok.ini", ok, strlen(ok), MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_BAD_VALUE, "[x]", &err));
  ck_assert_ptr_null(err);
}
END_TEST

static Suite *settings_suite(void)
{
  Suite *s = suite_create("settings");
  TCase *tc = tcase_create("defaults");
  tcase_add_test(tc, test_table_consistent);
  tcase_add_test(tc, test_read_file_capped);
  tcase_add_test(tc, test_defaults_every_setting);
  tcase_add_test(tc, test_defaults_known_values);
  tcase_add_test(tc, test_normalised_text_reads_back);
  suite_add_tcase(s, tc);

  tc = tcase_create("parse");
  tcase_add_test(tc, test_parse_size);
  tcase_add_test(tc, test_parse_count);
  tcase_add_test(tc, test_set_size_and_int);
  tcase_add_test(tc, test_origin_and_latest);
  tcase_add_test(tc, test_parse_bool);
  tcase_add_test(tc, test_set_bool);
  tcase_add_test(tc, test_set_enum);
  tcase_add_test(tc, test_set_double);
  tcase_add_test(tc, test_set_double_rejects);
  tcase_add_test(tc, test_set_string);
  suite_add_tcase(s, tc);

  tc = tcase_create("errors");
  tcase_add_test(tc, test_int_out_of_range);
  tcase_add_test(tc, test_int_negative);
  tcase_add_test(tc, test_size_out_of_range);
  tcase_add_test(tc, test_unknown_key);
  tcase_add_test(tc, test_pairs);
  tcase_add_test(tc, test_is_set);
  suite_add_tcase(s, tc);

  tc = tcase_create("copy");
  tcase_add_test(tc, test_copy_independent);
  tcase_add_test(tc, test_format_size);
  tcase_add_test(tc, test_format_size_round_trip);
  tcase_add_test(tc, test_ini_check_quotes_binary_short);
  tcase_add_test(tc, test_ini_check_refuses_bad_utf8);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(settings_suite)
