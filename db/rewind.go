package db

import "context"

// On SQLite a WAL that passive checkpoints have copied is rewound, not
// truncated, where it can be: the writer runs a passive checkpoint of its
// own between two batches, and its next commit then starts the WAL again
// from its beginning (SQLite does that when the checkpoint before the
// commit copied every frame and no reader still reads from the WAL).
//
// The checkpointer (open.go) seldom can: commits go on while it copies, so
// the WAL it leaves has frames it did not copy, and past the WAL limit it
// had to empty the file with a TRUNCATE checkpoint, which holds every
// commit back while it waits, copies, fsyncs and truncates: under a steady
// rate of writes, a stall every second or two, which set the tail of commit
// latency. The writer's own checkpoint finds the frames of at most the few
// batches since the checkpointer's, all else copied already, so it is
// short.
//
// A TRUNCATE remains the checkpointer's answer to a WAL that has only
// grown since it asked for a rewind: a rewind that readers keep from
// happening must not let the WAL grow for ever.

// askRewind asks the writer to checkpoint between two batches, so that
// its next commit rewinds the WAL. It never waits: one request pending
// is enough.
func (w *Writer) askRewind() {
	select {
	case w.rewindReq <- struct{}{}:
	default:
	}
}

// rewind runs a passive checkpoint on the writer's connection, between
// two batches. Its failure (a checkpoint of the checkpointer's own in
// progress, say) leaves the WAL to the next request, or to a TRUNCATE.
func (w *Writer) rewind() {
	var busy, frames, copied int
	if err := w.db.DB.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil || busy != 0 {
		return
	}
	w.stats.rewinds.Add(1)
}
