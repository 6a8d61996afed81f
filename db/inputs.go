package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"albedo/api/wire"
)

// inputColumns are Input's columns in the order scanInput reads them.
const inputColumns = `session, input_id, ord, text_hash, state, delivery, turn_id, error, partial, msg_offset, created_at, updated_at`

func scanInput(row interface{ Scan(...any) error }, in *Input) error {
	return row.Scan(&in.Session, &in.InputID, &in.Ord, &in.TextHash, &in.State, &in.Delivery,
		&in.TurnID, &in.Error, &in.Partial, &in.MsgOffset, &in.CreatedAt, &in.UpdatedAt)
}

// Input is a stored input and its receipt.
type Input struct {
	bun.BaseModel `bun:"table:inputs"`

	Session   string `bun:"session,pk"`
	InputID   string `bun:"input_id,pk"`
	Ord       int64  `bun:"ord"`
	TextHash  string `bun:"text_hash"`
	State     string `bun:"state"`
	Delivery  string `bun:"delivery"`
	TurnID    string `bun:"turn_id"`
	Error     string `bun:"error"`
	Partial   string `bun:"partial"`
	MsgOffset int64  `bun:"msg_offset"`
	CreatedAt string `bun:"created_at"`
	UpdatedAt string `bun:"updated_at"`
}

// Receipt returns the input as the contract shapes a receipt.
func (in *Input) Receipt() wire.Receipt {
	return wire.Receipt{
		InputID: in.InputID, Session: in.Session, State: in.State, Order: in.Ord,
		Delivery: in.Delivery, TurnID: in.TurnID, Error: in.Error,
	}
}

func textHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// PutInput accepts an input once: the first call stores the receipt (with
// the next order) and appends the message event: a user's input is queued
// with a new turn id; any other role's message (a bot's post) is delivered
// at once, with no turn. A repeat with the same text returns the stored
// receipt and created=false; a repeat with other text is ErrConflict.
func (t *Tx) PutInput(ctx context.Context, session, inputID, text string, role wire.Role, author string) (_ Input, created bool, _ []Event, _ error) {
	// One statement for a new input: the receipt's row, inserted unless
	// the id is taken. Its order and its message's offset come from the
	// writer's counters, which the batch writes once (flush). A repeat
	// costs a second statement, the lookup of the stored receipt.
	c, err := t.counters(ctx, session)
	if err != nil {
		return Input{}, false, nil, err
	}
	// Only a user's input starts a turn; anything else (a bot's post) is
	// delivered once its message is in the log.
	delivery, turnID := wire.DeliveryDone, ""
	if role == wire.RoleUser {
		turn, err := uuid.NewV7()
		if err != nil {
			return Input{}, false, nil, fmt.Errorf("turn id: %w", err)
		}
		delivery, turnID = wire.DeliveryQueued, turn.String()
	}
	at := formatTime(t.now)
	in := Input{
		Session: session, InputID: inputID, Ord: c.inputs + 1, TextHash: textHash(text),
		State: wire.ReceiptAccepted, Delivery: delivery, TurnID: turnID,
		MsgOffset: c.head + 1, CreatedAt: at, UpdatedAt: at,
	}
	res, err := t.sql.ExecContext(ctx, `INSERT INTO inputs (`+inputColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (session, input_id) DO NOTHING`,
		in.Session, in.InputID, in.Ord, in.TextHash, in.State, in.Delivery,
		in.TurnID, in.Error, in.Partial, in.MsgOffset, in.CreatedAt, in.UpdatedAt)
	if err != nil {
		return Input{}, false, nil, fmt.Errorf("insert input: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return Input{}, false, nil, fmt.Errorf("insert input: %w", err)
	} else if n == 0 {
		return t.repeatInput(ctx, session, inputID, in.TextHash)
	}
	evs, err := t.Append(ctx, session, wire.Event{
		Type: wire.EventMessage, Role: role, Author: author, Text: text,
		InputID: inputID, TurnID: in.TurnID, State: wire.MessageComplete,
	})
	if err != nil {
		return Input{}, false, nil, err
	}
	c = t.heads[session] // Append's new head
	c.inputs = in.Ord
	t.setCounters(session, c)
	return in, true, evs, nil
}

// repeatInput answers an input whose id is taken: with the stored receipt
// if its text is the same, else ErrConflict.
func (t *Tx) repeatInput(ctx context.Context, session, inputID, hash string) (Input, bool, []Event, error) {
	var in Input
	err := scanInput(t.sql.QueryRowContext(ctx,
		`SELECT `+inputColumns+` FROM inputs WHERE session = ? AND input_id = ?`, session, inputID), &in)
	if err != nil {
		return Input{}, false, nil, fmt.Errorf("look up input: %w", err)
	}
	if in.TextHash != hash {
		return Input{}, false, nil, fmt.Errorf("input %q was sent with other text: %w", inputID, ErrConflict)
	}
	return in, false, nil, nil
}

// SetDelivery moves an input's delivery on (queued → running → done, …).
func (t *Tx) SetDelivery(ctx context.Context, session, inputID, delivery, errText string) error {
	_, err := t.NewUpdate().Model((*Input)(nil)).
		Set("delivery = ?", delivery).Set("error = ?", errText).Set("updated_at = ?", formatTime(t.now)).
		Where("session = ? AND input_id = ?", session, inputID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("set delivery: %w", err)
	}
	return nil
}

// Input reads one input's receipt.
func (d *DB) Input(ctx context.Context, session, inputID string) (Input, error) {
	var in Input
	err := d.ro.NewSelect().Model(&in).Where("session = ? AND input_id = ?", session, inputID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Input{}, fmt.Errorf("input %q: %w", inputID, ErrNotFound)
	}
	if err != nil {
		return Input{}, fmt.Errorf("read input: %w", err)
	}
	return in, nil
}
