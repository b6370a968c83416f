/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * readahead.h - decode a trace in a thread of its own, ahead of its reader.
 *
 * A replay spends part of its time decoding its input (decompression,
 * varints, text parsing) and the rest simulating it, one after the other.
 * A read-ahead source runs the decoding of another source in a host thread
 * and keeps up to `ring - 1` batches decoded ahead of the one its reader
 * holds, so that on a host with a second core the two overlap and a replay
 * costs about the larger of the two instead of their sum.  It pays when
 * decoding costs more than handing a record from core to core (text
 * parsing: tens of nanoseconds a record; ChampSim's xz: hundreds; .mtr:
 * about 8); a generator's record, made in a few nanoseconds, does not, so
 * runs read ahead only sources whose ops say so
 * (TraceSourceOps.read_ahead).
 *
 * The reader sees exactly the batches of the source alone, boundaries
 * included, and a decoding error after every batch decoded before it, with
 * the same message: results do not depend on whether a run reads ahead.
 * Batches are handed over without a copy (trace_source_view): a batch stays
 * the reader's until its next read or its close.
 *
 * Closing the source early (the engine stopped: the machine ran out of
 * memory) stops the thread after the batch it is decoding, so the inner
 * source should not block in a read for long (a pipe whose writer pauses
 * would hold the close up).  Thread safety: one reader; the inner source is
 * used only by the decoding thread until readahead_source_finish or the
 * close.
 */
#ifndef MMUSIM_READAHEAD_H
#define MMUSIM_READAHEAD_H

#include <glib.h>
#include "source.h"

/* Slots of the ring: the reader's batch and three decoded ahead, enough to
 * ride out the reader's uneven pace (a fault, a burst of page walks)
 * without waiting; 4 batches of 4096 records are under 1 MiB. */
#define READAHEAD_RING 4

/* Read `inner` ahead in a thread of its own through a ring of `ring` slots
 * (fewer than 2 count as 2); the new source owns inner and takes its
 * description and unmapped rule. */
TraceSource *readahead_source_new(TraceSource *inner, unsigned ring);

/* Stop reading ahead (the thread ends after the batch it is decoding; what
 * was decoded before can still be read, then the source reads as ended, or
 * gives the decoding error if one came first) and return the inner source,
 * for queries such as lackey_source_skipped; src itself when it is not a
 * read-ahead source. */
TraceSource *readahead_source_finish(TraceSource *src);

#endif
