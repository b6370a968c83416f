/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mutate.c - the deterministic mutation driver: every corpus file of every
 * parser, mutated a fixed number of times by a seeded generator, fed to the
 * entry points the libFuzzer targets use (fuzz_targets.h).  It needs no
 * libFuzzer, so `make check` runs it in every build, the ASan/UBSan one of
 * .ci/run included.  It asserts only that nothing crashes or hangs, that
 * GLib logs no CRITICAL or WARNING (made fatal), and that every error has a
 * message.
 *
 *   tests/fuzz/mutate                      every target, every file
 *   tests/fuzz/mutate TARGET FILE...       the files as they are, unmutated
 *
 * Environment: MMUSIM_FUZZ_SEED (default 1), MMUSIM_FUZZ_COUNT (mutations
 * per file, default 40, 8 under valgrind), MMUSIM_FUZZ_ONLY=TARGET or
 * TARGET:FILE_NAME, MMUSIM_FUZZ_CASE=K (that case alone), MMUSIM_FUZZ_SECONDS
 * (the most one input may take, default 60), MMUSIM_FUZZ_OUT (the folder a
 * failing input is written to, default the current one), srcdir (the source
 * tree, as make check sets it).  Each case's generator is seeded by the seed,
 * the target, the file name and the case number, so one case replays alone.
 *
 * Each file runs in a child process; the child copies each input into
 * memory it shares with the parent before parsing it, so the parent can say
 * which input killed it, write that input out, and print how to replay it.
 */
#include "config.h"
#include "fuzz_targets.h"

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Seeds larger than this are left to the libFuzzer targets. */
#define SEED_MAX_BYTES (64 * 1024)
/* No mutated input grows past this. */
#define INPUT_MAX_BYTES (256 * 1024)
/* Every cut of a seed this short is tried, besides the random mutations. */
#define CUT_ALL_BYTES 300

typedef struct {
  const char *name;
  FuzzEntry entry;
  /* Seeds: folders under the source tree, each with a glob of file names. */
  const char *dirs[6];
} Target;

static const Target targets[] = {
  { "text", fuzz_text, { "tests/fuzz/corpus/text:*", "tests/golden/cases:trace-bad-text*.txt", "tests/golden/cases:hello.txt" } },
  { "lackey", fuzz_lackey, { "tests/fuzz/corpus/lackey:*", "tests/golden/cases:trace-bad-lackey*", "tests/golden/cases:*.lackey.gz" } },
  { "mtr", fuzz_mtr, { "tests/fuzz/corpus/mtr:*", "tests/golden/cases:trace-*.mtr" } },
  { "champsim", fuzz_champsim, { "tests/fuzz/corpus/champsim:*", "tests/golden/cases:*.champsim*" } },
  { "detect", fuzz_detect, { "tests/fuzz/corpus/text:*", "tests/fuzz/corpus/lackey:*", "tests/fuzz/corpus/mtr:*",
                             "tests/fuzz/corpus/champsim:*", "tests/golden/cases:*.xz" } },
  { "settings", fuzz_settings, { "tests/fuzz/corpus/settings:*" } },
  { "machine", fuzz_machine, { "tests/fuzz/corpus/machine:*", "sim/machines:*.ini" } },
  { "ini", fuzz_ini, { "tests/fuzz/corpus/ini:*", "doc/experiments/*:experiment.ini", "tests/golden/cases:*.ini" } },
};

/* What the child is parsing, shared with the parent. */
typedef struct {
  int index;      /* case number, -1: the file unmutated */
  char what[512]; /* the mutation */
  size_t len;
  uint8_t data[INPUT_MAX_BYTES];
} Current;

static Current *cur;

/* Values that break number parsers. */
static const char *const numbers[] = {
  "18446744073709551615", "18446744073709551616", "-1", "-9223372036854775808", "9223372036854775807",
  "4294967296", "99999999999999999999999999", "0x7fffffffffffffff", "1e308", "-0", "nan", "inf", "0",
  "16E", "99999999T", "0b1", "1.5",
};
/* Bytes that are not UTF-8: a lone continuation, overlong, a surrogate,
 * a byte UTF-8 never uses, a sequence cut short. */
static const char *const bad_utf8[] = { "\x80", "\xc0\x80", "\xed\xa0\x80", "\xff", "\xe2\x82", "\xf8\x88\x80\x80\x80" };
/* Pieces of the .ini and trace syntaxes. */
static const char *const tokens[] = {
  "\n[experiment]\n", "\n[vary]\n", "\n[settings]\n", "\n[machine]\ninherit = skylake\n", "\n[machine]\ninherit = fuzz.ini\n",
  "=", ",", ";", "\n", "\\", "#", "[", "]", " = ", "\nworkload = ", "\nmachine = ", "\ncombine = zip\n", "\0",
  "\nthread 1\n", "\nprocess 2\n", " L ", " S ", " M ", "I  ",
};

/* n bytes at `at`, unless the input would grow past INPUT_MAX_BYTES. */
static void insert(GByteArray *b, size_t at, const void *p, size_t n)
{
  if (n == 0 || b->len + n > INPUT_MAX_BYTES)
    return; /* (nothing to insert: p may be NULL, which memcpy may not take) */
  guint old = b->len;
  g_byte_array_set_size(b, (guint)(old + n));
  memmove(b->data + at + n, b->data + at, old - at);
  memcpy(b->data + at, p, n);
}

/* A random place in b (0 to len). */
static size_t pos(GRand *r, const GByteArray *b)
{
  return (size_t)g_rand_int_range(r, 0, (gint32)b->len + 1);
}

/* One mutation of b, described in what. */
static void mutate_once(GRand *r, GByteArray *b, const GByteArray *other, GString *what)
{
  size_t at = pos(r, b);
  switch (g_rand_int_range(r, 0, 9)) {
  case 0: /* bit flips */
    if (b->len) {
      at = at % b->len;
      int bit = g_rand_int_range(r, 0, 8);
      b->data[at] ^= (guint8)(1u << bit);
      g_string_append_printf(what, "flip bit %d of byte %zu; ", bit, at);
      return;
    }
    G_GNUC_FALLTHROUGH; /* nothing to flip: insert */
  case 1: { /* a byte inserted */
    guint8 c = (guint8)g_rand_int_range(r, 0, 256);
    insert(b, at, &c, 1);
    g_string_append_printf(what, "insert 0x%02x at %zu; ", c, at);
    return;
  }
  case 2: { /* bytes deleted */
    size_t n = (size_t)g_rand_int_range(r, 1, 17);
    n = MIN(n, b->len - at);
    if (n)
      g_byte_array_remove_range(b, (guint)at, (guint)n);
    g_string_append_printf(what, "delete %zu at %zu; ", n, at);
    return;
  }
  case 3: /* truncated */
    g_byte_array_set_size(b, (guint)at);
    g_string_append_printf(what, "cut at %zu; ", at);
    return;
  case 4: { /* spliced: this file's start, the other's end */
    size_t from = (size_t)g_rand_int_range(r, 0, (gint32)other->len + 1);
    g_byte_array_set_size(b, (guint)at);
    if (at + other->len - from <= INPUT_MAX_BYTES)
      g_byte_array_append(b, other->data + from, (guint)(other->len - from));
    g_string_append_printf(what, "splice at %zu with the other seed from %zu; ", at, from);
    return;
  }
  case 5: { /* not UTF-8 */
    const char *s = bad_utf8[g_rand_int_range(r, 0, G_N_ELEMENTS(bad_utf8))];
    insert(b, at, s, strlen(s));
    g_string_append_printf(what, "invalid UTF-8 at %zu; ", at);
    return;
  }
  case 6: { /* a number replaced by a huge or negative one */
    const char *s = numbers[g_rand_int_range(r, 0, G_N_ELEMENTS(numbers))];
    size_t start = at;
    while (start < b->len && !g_ascii_isdigit(b->data[start]))
      start++;
    size_t end = start;
    while (end < b->len && g_ascii_isalnum(b->data[end]))
      end++;
    if (end > start)
      g_byte_array_remove_range(b, (guint)start, (guint)(end - start));
    insert(b, start, s, strlen(s));
    g_string_append_printf(what, "number %s at %zu; ", s, start);
    return;
  }
  case 7: { /* a line repeated: duplicate keys, groups, records */
    size_t start = at, end = at;
    while (start > 0 && b->data[start - 1] != '\n')
      start--;
    while (end < b->len && b->data[end++] != '\n')
      ;
    int times = g_rand_int_range(r, 1, 4) == 1 ? g_rand_int_range(r, 2, 200) : 2;
    g_autofree guint8 *line = g_memdup2(b->data + start, end - start);
    for (int i = 1; i < times; i++)
      insert(b, end, line, end - start);
    g_string_append_printf(what, "line at %zu repeated %d times; ", start, times);
    return;
  }
  default: { /* a piece of syntax */
    guint k = (guint)g_rand_int_range(r, 0, G_N_ELEMENTS(tokens));
    insert(b, at, tokens[k], k == G_N_ELEMENTS(tokens) - 1 ? 4 : MAX(strlen(tokens[k]), 1));
    g_string_append_printf(what, "token %u at %zu; ", k, at);
    return;
  }
  }
}

/* A seed's name: its path under the source tree, the same in every build
 * folder (it seeds the generator, and MMUSIM_FUZZ_ONLY names it). */
static const char *seed_name(const char *path, const char *srcdir)
{
  size_t n = strlen(srcdir);
  return strncmp(path, srcdir, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

static GRand *case_rand(guint32 seed, const char *target, const char *file, int index)
{
  guint32 words[4] = { seed, g_str_hash(target), g_str_hash(file), (guint32)index };
  return g_rand_new_with_seed_array(words, 4);
}

static void run_current(FuzzEntry entry, unsigned secs)
{
  alarm(secs);
  entry(cur->data, cur->len);
  alarm(0);
}

static void set_current(int index, const GByteArray *b, const char *what)
{
  cur->index = index;
  g_strlcpy(cur->what, what, sizeof cur->what);
  cur->len = b->len;
  if (b->len)
    memcpy(cur->data, b->data, b->len);
}

/* The child: every case of one seed file (or only case `only`). */
static void run_file(const Target *t, const char *path, const char *name, GPtrArray *seeds, guint32 seed, int count,
                     int only, gboolean mutated, unsigned secs)
{
  g_autoptr(GByteArray) orig = NULL;
  gchar *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents(path, &text, &len, NULL))
    _exit(3);
  orig = g_byte_array_new_take((guint8 *)text, MIN(len, (gsize)INPUT_MAX_BYTES));
  if (only < 0) {
    set_current(-1, orig, "unmutated");
    run_current(t->entry, secs);
  }
  if (!mutated)
    return;
  /* Every cut of a short file, then the random mutations. */
  int cuts = orig->len <= CUT_ALL_BYTES ? (int)orig->len : 0;
  for (int i = 0; i < cuts + count; i++) {
    if (only >= 0 && i != only)
      continue;
    g_autoptr(GByteArray) b = g_byte_array_new();
    g_byte_array_append(b, orig->data, orig->len);
    g_autoptr(GString) what = g_string_new(NULL);
    if (i < cuts) {
      g_byte_array_set_size(b, (guint)i);
      g_string_append_printf(what, "cut at %d", i);
    } else {
      GRand *r = case_rand(seed, t->name, name, i);
      const char *other_path = g_ptr_array_index(seeds, g_rand_int_range(r, 0, (gint32)seeds->len));
      gchar *otext = NULL;
      gsize olen = 0;
      if (!g_file_get_contents(other_path, &otext, &olen, NULL))
        _exit(3);
      g_autoptr(GByteArray) other = g_byte_array_new_take((guint8 *)otext, MIN(olen, (gsize)INPUT_MAX_BYTES));
      int n = g_rand_int_range(r, 1, 5);
      g_string_append_printf(what, "other seed %s; ", other_path);
      for (int k = 0; k < n; k++)
        mutate_once(r, b, other, what);
      g_rand_free(r);
    }
    set_current(i, b, what->str);
    run_current(t->entry, secs);
  }
}

static gint by_name(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The seed files of t, sorted, for a fixed order. */
static GPtrArray *seed_files(const Target *t, const char *srcdir)
{
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  for (int d = 0; d < (int)G_N_ELEMENTS(t->dirs) && t->dirs[d]; d++) {
    g_auto(GStrv) parts = g_strsplit(t->dirs[d], ":", 2);
    /* One level of '*' in the folder (doc/experiments/ *). */
    g_autoptr(GPtrArray) folders = g_ptr_array_new_with_free_func(g_free);
    if (strchr(parts[0], '*')) {
      g_autofree char *above = g_path_get_dirname(parts[0]);
      g_autofree char *top = g_build_filename(srcdir, above, NULL);
      GDir *dir = g_dir_open(top, 0, NULL);
      for (const char *n; dir && (n = g_dir_read_name(dir));)
        g_ptr_array_add(folders, g_build_filename(top, n, NULL));
      if (dir)
        g_dir_close(dir);
    } else
      g_ptr_array_add(folders, g_build_filename(srcdir, parts[0], NULL));
    for (guint f = 0; f < folders->len; f++) {
      GDir *dir = g_dir_open(g_ptr_array_index(folders, f), 0, NULL);
      for (const char *n; dir && (n = g_dir_read_name(dir));) {
        char *p = g_build_filename(g_ptr_array_index(folders, f), n, NULL);
        GStatBuf st;
        if (g_pattern_match_simple(parts[1], n) && g_stat(p, &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_size <= SEED_MAX_BYTES)
          g_ptr_array_add(out, p);
        else
          g_free(p);
      }
      if (dir)
        g_dir_close(dir);
    }
  }
  g_ptr_array_sort(out, by_name);
  return out;
}

/* A child that did not finish: say what it parsed, write that input out,
 * and how to replay it. */
static void report(const Target *t, const char *path, const char *name, int status, guint32 seed, unsigned secs,
                   const char *outdir)
{
  g_autofree char *base = g_path_get_basename(path);
  g_autofree char *how = NULL;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    how = g_strdup_printf("took more than %u s (a hang?)", secs);
  else if (WIFSIGNALED(status))
    how = g_strdup_printf("killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else /* a sanitizer's report (LeakSanitizer's at exit comes after the last input) */
    how = g_strdup_printf("exit status %d: see the report above", WEXITSTATUS(status));
  g_autofree char *file = cur->index < 0 ? g_strdup_printf("fuzz-failure-%s-%s", t->name, base)
                                         : g_strdup_printf("fuzz-failure-%s-%s-%d", t->name, base, cur->index);
  g_autofree char *out = g_build_filename(outdir, file, NULL);
  GError *err = NULL;
  if (!g_file_set_contents(out, (const char *)cur->data, (gssize)cur->len, &err)) {
    fprintf(stderr, "mutate: cannot write the failing input: %s\n", err->message);
    g_clear_error(&err);
  }
  fprintf(stderr, "FAIL: fuzz_%s on %s, case %d (%s), seed %u: %s\n  the input (%zu bytes) is in %s\n", t->name, path,
          cur->index, cur->what, seed, how, cur->len, out);
  if (cur->index >= 0)
    fprintf(stderr, "  replay: MMUSIM_FUZZ_SEED=%u MMUSIM_FUZZ_ONLY=%s:%s MMUSIM_FUZZ_CASE=%d tests/fuzz/mutate\n", seed,
            t->name, name, cur->index);
  fprintf(stderr, "  or: tests/fuzz/mutate %s %s\n", t->name, out);
}

static const Target *find_target(const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS(targets); i++)
    if (strcmp(targets[i].name, name) == 0)
      return &targets[i];
  g_autoptr(GString) names = g_string_new(NULL);
  for (guint i = 0; i < G_N_ELEMENTS(targets); i++)
    g_string_append_printf(names, "%s%s", i ? ", " : "", targets[i].name);
  fprintf(stderr, "mutate: no target '%s' (targets: %s)\n", name, names->str);
  exit(2);
}

static long env_number(const char *name, long def, long max)
{
  const char *v = g_getenv(name);
  if (!v || !*v)
    return def;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || *end || n < 0 || n > max) {
    fprintf(stderr, "mutate: %s=%s: give a whole number from 0 to %ld\n", name, v, max);
    exit(2);
  }
  return n;
}

int main(int argc, char **argv)
{
  /* Under valgrind (its preload library is in LD_PRELOAD) fewer cases. */
  const char *preload = g_getenv("LD_PRELOAD");
  gboolean valgrind = preload && strstr(preload, "vgpreload");
  guint32 seed = (guint32)env_number("MMUSIM_FUZZ_SEED", 1, G_MAXUINT32);
  int count = (int)env_number("MMUSIM_FUZZ_COUNT", valgrind ? 8 : 40, 1000000);
  int only_case = (int)env_number("MMUSIM_FUZZ_CASE", -1, INT_MAX);
  unsigned secs = (unsigned)env_number("MMUSIM_FUZZ_SECONDS", 60, 86400);
  const char *only = g_getenv("MMUSIM_FUZZ_ONLY");
  const char *srcdir = g_getenv("srcdir") ? g_getenv("srcdir") : ".";
  const char *outdir = g_getenv("MMUSIM_FUZZ_OUT") ? g_getenv("MMUSIM_FUZZ_OUT") : ".";
  if (argc == 2 || (argc > 1 && argv[1][0] == '-')) {
    fprintf(stderr, "usage: %s [TARGET FILE...]\n", argv[0]);
    return 2;
  }

  cur = mmap(NULL, sizeof *cur, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (cur == MAP_FAILED) {
    perror("mutate: mmap");
    return 99;
  }
  g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  fflush(NULL);

  int failed = 0, files = 0;
  for (guint ti = 0; ti < G_N_ELEMENTS(targets); ti++) {
    const Target *t = &targets[ti];
    g_autoptr(GPtrArray) seeds = NULL;
    g_autofree char *file_only = NULL;
    if (argc > 2) {
      if (t != find_target(argv[1]))
        continue;
      seeds = g_ptr_array_new_with_free_func(g_free);
      for (int i = 2; i < argc; i++)
        g_ptr_array_add(seeds, g_strdup(argv[i]));
    } else {
      g_auto(GStrv) sel = only ? g_strsplit(only, ":", 2) : NULL;
      if (sel && t != find_target(sel[0]))
        continue;
      seeds = seed_files(t, srcdir);
      if (seeds->len == 0) {
        fprintf(stderr, "mutate: no seed files for %s under %s: set srcdir to the source tree\n", t->name, srcdir);
        return 99;
      }
      file_only = sel && sel[1] ? g_strdup(sel[1]) : NULL;
    }
    /* The other seeds stay in the list: a splice takes one of them, so a
     * replay of one file mutates it as the full run did. */
    for (guint f = 0; f < seeds->len; f++) {
      const char *path = g_ptr_array_index(seeds, f);
      const char *name = seed_name(path, srcdir);
      if (file_only && strcmp(name, file_only) != 0)
        continue;
      files++;
      pid_t pid = fork();
      if (pid < 0) {
        perror("mutate: fork");
        return 99;
      }
      if (pid == 0) {
        run_file(t, path, name, seeds, seed, count, only_case, argc <= 2, secs);
        exit(0); /* not _exit: LeakSanitizer checks at exit */
      }
      int status;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
          fprintf(stderr, "mutate: cannot read %s\n", path);
        else
          report(t, path, name, status, seed, secs, outdir);
        failed++;
      }
    }
  }
  if (argc > 2)
    printf("mutate: %d files, as they are: %d failed\n", files, failed);
  else
    printf("mutate: %d files, each whole, cut and mutated %d times (seed %u): %d failed\n", files, count, seed, failed);
  return failed ? 1 : 0;
}
