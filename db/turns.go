package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"albedo/wire"
)

// SetPartial checkpoints the streamed text of a running turn.
func (t *Tx) SetPartial(ctx context.Context, session, inputID, text string) error {
	_, err := t.NewUpdate().Model((*Input)(nil)).Set("partial = ?", text).
		Where("session = ? AND input_id = ?", session, inputID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint partial: %w", err)
	}
	return nil
}

// PendingInputs lists every input whose turn has not ended (delivery queued
// or running), by session and order: what a starting daemon must repair
// and run.
func (d *DB) PendingInputs(ctx context.Context) ([]Input, error) {
	rows, err := d.ro.DB.QueryContext(ctx, pendingInputsSQL)
	if err != nil {
		return nil, fmt.Errorf("pending inputs: %w", err)
	}
	defer rows.Close()
	var ins []Input
	for rows.Next() {
		var in Input
		if err := scanInput(rows, &in); err != nil {
			return nil, fmt.Errorf("pending inputs: %w", err)
		}
		ins = append(ins, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending inputs: %w", err)
	}
	return ins, nil
}

// pendingInputsSQL repeats the partial index's condition word for word
// (migration 4), so that SQLite reads the index and not every input;
// TestPendingInputsUseTheIndex checks the plan.
const pendingInputsSQL = `SELECT ` + inputColumns + ` FROM inputs WHERE ` + pendingWhere + ` ORDER BY session, ord`

// The events a turn's transcript is made of: the messages, and for a
// provider that calls tools, the calls and results of earlier turns too.
var (
	Messages         = []wire.EventType{wire.EventMessage}
	MessagesAndTools = []wire.EventType{wire.EventMessage, wire.EventToolCall, wire.EventToolResult}
)

// Transcript returns a session's events of types (Messages or
// MessagesAndTools) up to and including offset upto (a turn's user
// message; later ones belong to later turns), oldest first: the newest
// of them, at most maxCount, whose texts and arguments fit in maxBytes,
// and always the last one. A fork's include its parent's, up to the fork
// point.
//
// sp is the session's spans as the caller keeps them (Newest says how
// they are used).
func (d *DB) Transcript(ctx context.Context, sp Spans, types []wire.EventType, upto int64, maxBytes, maxCount int) ([]wire.Event, error) {
	if !sp.Forked() {
		return d.transcriptOf(ctx, sp.Session(), types, upto, maxBytes, maxCount)
	}
	// Newest first, one row at a time: the bounds end the read, so a
	// session of large messages costs maxBytes, not a page of them.
	var out []wire.Event
	size := 0
	var bad error
	err := d.inSnapshot(ctx, sp.Session(), func(rtx *sql.Tx, sp Spans) error {
		return newestIn(ctx, rtx, d.dialect, sp, spanTypesSQL[len(types)], typeArgs(types), upto, maxCount, func(e Event) bool {
			var ev wire.Event
			if bad = json.Unmarshal(e.JSON, &ev); bad != nil {
				bad = fmt.Errorf("decode event %d: %w", e.Offset, bad)
				return false
			}
			if size += len(ev.Text) + len(ev.Arguments); size > maxBytes && len(out) > 0 {
				return false
			}
			out = append(out, ev)
			return true
		})
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

// MessagesBefore says whether a session has a message before offset.
func (d *DB) MessagesBefore(ctx context.Context, sp Spans, offset int64) (bool, error) {
	found := false
	err := d.Newest(ctx, sp, Messages, offset-1, 1, func(Event) bool {
		found = true
		return false
	})
	return found, err
}

// transcriptSQL is the read of a session's events of n types, newest
// first, for transcriptOf.
var transcriptSQL = func() (out [maxTypes + 1]string) {
	for n, q := range typesSQL(`SELECT "offset", payload FROM events WHERE session = ? AND `, ` AND "offset" <= ?`) {
		if n > 0 {
			out[n] = bothTables(q) + ` ORDER BY "offset" DESC LIMIT ?`
		}
	}
	return out
}()

// transcriptOf is Transcript of a session that is no fork: one statement,
// the turn's hot path.
func (d *DB) transcriptOf(ctx context.Context, session string, types []wire.EventType, upto int64, maxBytes, maxCount int) ([]wire.Event, error) {
	// Newest first, one row at a time: the bounds end the read, so a
	// session of large messages costs maxBytes, not a page of them.
	one := append(append([]any{session}, typeArgs(types)...), upto)
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(transcriptSQL[len(types)]), append(append(one, one...), maxCount)...)
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	defer rows.Close()
	var out []wire.Event
	size := 0
	for rows.Next() {
		var off int64
		var payload []byte
		if err := rows.Scan(&off, &payload); err != nil {
			return nil, fmt.Errorf("read transcript: %w", err)
		}
		var ev wire.Event
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("decode event %d: %w", off, err)
		}
		if size += len(ev.Text) + len(ev.Arguments); size > maxBytes && len(out) > 0 {
			break
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}
