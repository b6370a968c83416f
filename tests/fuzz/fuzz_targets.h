/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_targets.h - one entry point per parser, shared by the libFuzzer
 * targets (libfuzzer.c) and the deterministic mutation driver (mutate.c).
 * Each parses one input from memory, never runs anything, and checks only
 * what must hold for every input: no crash, no GLib CRITICAL or WARNING
 * (the callers make those fatal), and every error carries a message (a
 * g_assert otherwise).  Errors are the expected outcome of most inputs.
 */
#ifndef MMUSIM_FUZZ_TARGETS_H
#define MMUSIM_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>
#include <glib.h>

typedef void (*FuzzEntry)(const uint8_t *data, size_t size);

/* The trace readers, through the decompressing input (gzip, xz and zstd
 * framing is fuzzed too); detect is format detection then the reader it
 * picks, as `mmusim run -t FILE` does. */
void fuzz_text(const uint8_t *data, size_t size);
void fuzz_lackey(const uint8_t *data, size_t size);
void fuzz_mtr(const uint8_t *data, size_t size);
void fuzz_champsim(const uint8_t *data, size_t size);
void fuzz_detect(const uint8_t *data, size_t size);
/* Each line a KEY=VALUE pair as `-s` takes it; the size, count and
 * boolean parsers on the whole input. */
void fuzz_settings(const uint8_t *data, size_t size);
/* A machine file (preset_load_data), on the default settings. */
void fuzz_machine(const uint8_t *data, size_t size);
/* An experiment file (experiment_parse), the machines of its first
 * FUZZ_INI_CHECKED configurations built (fuzz_ini.c). */
void fuzz_ini(const uint8_t *data, size_t size);
#define FUZZ_INI_CHECKED 4

/* An error an entry point got: it must have a message, which is printed
 * with MMUSIM_FUZZ_VERBOSE set (to see what a corpus file exercises).
 * Frees the error. */
void fuzz_error(GError *err);

#endif
