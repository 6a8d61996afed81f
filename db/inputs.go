package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"albedo/wire"
)

// inputColumns are Input's columns in the order scanInput reads them.
const inputColumns = `session, input_id, ord, text_hash, state, delivery, turn_id, error, partial, msg_offset, created_at, updated_at, step, continues`

func scanInput(row interface{ Scan(...any) error }, in *Input) error {
	return row.Scan(&in.Session, &in.InputID, &in.Ord, &in.TextHash, &in.State, &in.Delivery,
		&in.TurnID, &in.Error, &in.Partial, &in.MsgOffset, &in.CreatedAt, &in.UpdatedAt, &in.Step, &in.Continues)
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
	// Step is the place, among the turns its message's mentions start,
	// of the one TurnID names (0 for the first, or the only one).
	Step int `bun:"step"`
	// Continues is the offset of the reply its turn continues (0: none):
	// one cut off, run on (ContinueInput).
	Continues int64 `bun:"continues"`
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
func (t *Tx) PutInput(ctx context.Context, session, inputID, text string, role wire.Role, author wire.Author, atts ...wire.Attachment) (_ Input, created bool, _ []Event, _ error) {
	// One statement for a new input: the receipt's row, inserted unless
	// the id is taken (insertInput). Its order and its message's offset
	// come from the writer's counters, which the batch writes once
	// (flush). A repeat costs a second statement, the lookup of the
	// stored receipt.
	c, err := t.counters(ctx, session)
	if err != nil {
		return Input{}, false, nil, err
	}
	// Only a user's input starts a turn; anything else (a bot's post) is
	// delivered once its message is in the log, and its message event is
	// its record (putPost).
	if role != wire.RoleUser {
		return t.putPost(ctx, c, session, inputID, text, role, author, atts)
	}
	// The id may name a post: one earlier in this batch, or (careful) a
	// committed one. A committed send is the insert's conflict below.
	if old, found, err := t.findPost(ctx, session, inputID, text); found || err != nil {
		return old, false, nil, err
	}
	turn, err := uuid.NewV7()
	if err != nil {
		return Input{}, false, nil, fmt.Errorf("turn id: %w", err)
	}
	at := formatTime(t.now)
	in := Input{
		Session: session, InputID: inputID, Ord: c.inputs + 1, TextHash: textHash(text),
		State: wire.ReceiptAccepted, Delivery: wire.DeliveryQueued, TurnID: turn.String(),
		MsgOffset: c.head + 1, CreatedAt: at, UpdatedAt: at,
	}
	if err := t.insertInput(ctx, in); errors.Is(err, errRepeat) {
		return t.repeatInput(ctx, session, inputID, in.TextHash)
	} else if err != nil {
		return Input{}, false, nil, err
	}
	evs, err := t.Append(ctx, session, wire.Event{
		Type: wire.EventMessage, Role: role, Author: author.Name, AuthorID: author.ID, Text: text,
		InputID: inputID, TurnID: in.TurnID, State: wire.MessageComplete, Attachments: atts,
	})
	if err != nil {
		return Input{}, false, nil, err
	}
	// Its message carries the input's id and order, as a post's does, and
	// the flush takes the id in input_ids, which refuses a post reusing it.
	evs[0].ord = in.Ord
	c, _ = t.ownCounters(session) // Append's new head
	c.inputs = in.Ord
	t.setCounters(session, c)
	return in, true, evs, nil
}

// errRepeat is insertInput's answer to an input id taken already.
var errRepeat = errors.New("db: the input's id is taken")

// insertInput inserts in's row, or says errRepeat if its id is taken.
//
// On PostgreSQL, when the batch runs optimistically, the row is queued
// to go with the batch's next round trip (batchTx.exec) rather than
// costing one of its own, without the look for a repeat: a repeat then
// fails the batch on the inputs' key, and the batch runs again with
// savepoints (Writer.commit), this time looking, as a post's repeat
// does. Repeats are rare (a client sends one again after losing its
// receipt), and the round trip would cost every input.
func (t *Tx) insertInput(ctx context.Context, in Input) error {
	const insert = `INSERT INTO inputs (` + inputColumns + `) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	args := []any{in.Session, in.InputID, in.Ord, in.TextHash, in.State, in.Delivery,
		in.TurnID, in.Error, in.Partial, in.MsgOffset, in.CreatedAt, in.UpdatedAt, in.Step, in.Continues}
	if !t.careful && t.bt.queues() {
		return t.bt.exec(ctx, t.bind(insert), args...)
	}
	res, err := t.sql.ExecContext(ctx, t.bind(insert+` ON CONFLICT (session, input_id) DO NOTHING`), args...)
	if err != nil {
		return fmt.Errorf("insert input: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("insert input: %w", err)
	} else if n == 0 {
		return errRepeat
	}
	return nil
}

// putPost accepts a bot's post once. Its record is its message event,
// which carries the post's input id and order (Event.ord, written by the
// batch's flush; migration post_ids), found by the id through input_ids
// (migration events_log; keyed by the id, so a post dirties no page of
// its session there).
//
// An input id names one input of a session, sent or posted. A repeat is
// found among the posts of this batch, then among the receipts in inputs
// (a send's, committed or earlier in this batch, or a post stored there
// before post_ids), then among committed events. The last two look-ups
// are skipped when the batch runs optimistically (legacy posts aside):
// a reused id then fails the flush on input_ids' key (every input's
// message takes its id there), and the batch runs again with
// savepoints (Writer.commit), this time looking. Repeats are rare (a
// client sends one again after losing its receipt), and the look-ups
// would cost every post.
func (t *Tx) putPost(ctx context.Context, c counters, session, inputID, text string, role wire.Role, author wire.Author, atts []wire.Attachment) (Input, bool, []Event, error) {
	if old, found, err := t.findPost(ctx, session, inputID, text); found || err != nil {
		return old, false, nil, err
	}
	if t.careful || t.batch.w.legacyPosts {
		old, created, evs, err := t.repeatInput(ctx, session, inputID, textHash(text))
		if !errors.Is(err, sql.ErrNoRows) {
			return old, created, evs, err
		}
	}
	in := postInput(session, inputID, textHash(text), c.inputs+1, c.head+1, t.nowText())
	evs, err := t.Append(ctx, session, wire.Event{
		Type: wire.EventMessage, Role: role, Author: author.Name, AuthorID: author.ID, Text: text,
		InputID: inputID, State: wire.MessageComplete, Attachments: atts,
	})
	if err != nil {
		return Input{}, false, nil, err
	}
	evs[0].ord = in.Ord           // evs is the batch's copy too (Append): flush stores it
	c, _ = t.ownCounters(session) // Append's new head
	c.inputs = in.Ord
	t.setCounters(session, c)
	t.posts = append(t.posts, in)
	return in, true, evs, nil
}

// findPost looks for a post that took inputID in session: among this
// batch's posts, then, when the batch runs carefully, among committed
// events. found says one did: its receipt, or ErrConflict when its text
// is not text. A send's message found among the events is not a post
// (its receipt is in inputs): found is false. A person's quiet message
// is one.
func (t *Tx) findPost(ctx context.Context, session, inputID, text string) (_ Input, found bool, _ error) {
	old, ok := t.ownPost(session, inputID)
	if !ok {
		var p *Input
		if p, ok = t.batch.posts[postKey{session, inputID}]; ok {
			old = *p
		}
	}
	if ok {
		if old.TextHash != textHash(text) {
			return Input{}, true, fmt.Errorf("input %q was sent with other text: %w", inputID, ErrConflict)
		}
		return old, true, nil
	}
	if !t.careful {
		return Input{}, false, nil
	}
	var offset, ord int64
	var at, payload string
	err := t.sql.QueryRowContext(ctx, t.bind(postEventSQL),
		session, inputID, session, session, inputID, session).Scan(&offset, &ord, &at, &payload)
	if errors.Is(err, sql.ErrNoRows) {
		return Input{}, false, nil
	} else if err != nil {
		return Input{}, false, fmt.Errorf("look up post: %w", err)
	}
	var ev wire.Event
	if err := json.Unmarshal([]byte(payload), &ev); err != nil {
		return Input{}, false, fmt.Errorf("read post %q: %w", inputID, err)
	}
	if ev.Role == wire.RoleUser {
		// A send's message has its receipt in inputs (repeatInput); a
		// quiet message (PutMessage) has none and is answered as a post.
		var one int
		err := t.sql.QueryRowContext(ctx, t.bind(`SELECT 1 FROM inputs WHERE session = ? AND input_id = ?`), session, inputID).Scan(&one)
		if err == nil {
			return Input{}, false, nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return Input{}, false, fmt.Errorf("look up input: %w", err)
		}
	}
	if ev.Text != text {
		return Input{}, true, fmt.Errorf("input %q was sent with other text: %w", inputID, ErrConflict)
	}
	return postInput(session, inputID, textHash(text), ord, offset, at), true, nil
}

// inputEventSQL selects columns of the message of the input that took an
// id in a session (parameters: session, input id, session, twice), in
// events or in the log (fold.go), found through input_ids.
func inputEventSQL(columns string) string {
	return bothTables(`SELECT ` + columns + ` FROM events WHERE session = ? AND "offset" =
		(SELECT "offset" FROM input_ids WHERE input_id = ? AND session = ?)`)
}

var (
	postEventSQL   = inputEventSQL(`"offset", ord, at, payload`)
	postReceiptSQL = inputEventSQL(`"offset", ord, at`)
)

// postInput is a bot post's receipt as an Input.
func postInput(session, inputID, hash string, ord, offset int64, at string) Input {
	return Input{
		Session: session, InputID: inputID, Ord: ord, TextHash: hash,
		State: wire.ReceiptAccepted, Delivery: wire.DeliveryDone,
		MsgOffset: offset, CreatedAt: at, UpdatedAt: at,
	}
}

// repeatInput answers an input whose id is taken: with the stored receipt
// if its text is the same, else ErrConflict.
func (t *Tx) repeatInput(ctx context.Context, session, inputID, hash string) (Input, bool, []Event, error) {
	var in Input
	err := scanInput(t.sql.QueryRowContext(ctx,
		t.bind(`SELECT `+inputColumns+` FROM inputs WHERE session = ? AND input_id = ?`), session, inputID), &in)
	if err != nil {
		return Input{}, false, nil, fmt.Errorf("look up input: %w", err) // sql.ErrNoRows: none
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

// NextStep hands an input on to the next of the turns its mentions
// start: queued again, at step, under the turn id turn (which a restart
// runs it under).
func (t *Tx) NextStep(ctx context.Context, session, inputID string, step int, turn string) error {
	_, err := t.NewUpdate().Model((*Input)(nil)).
		Set("delivery = ?", wire.DeliveryQueued).Set("step = ?", step).Set("turn_id = ?", turn).Set("partial = ''").
		Set("updated_at = ?", formatTime(t.now)).
		Where("session = ? AND input_id = ?", session, inputID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("next step: %w", err)
	}
	return nil
}

// ContinueInput queues an input's turn again, as turn, to continue its
// reply at offset msg, which was cut off (an interrupt, a failure): an
// input that is not (queued or running again already) is ErrConflict.
func (t *Tx) ContinueInput(ctx context.Context, session, inputID, turn string, msg int64) error {
	res, err := t.NewUpdate().Model((*Input)(nil)).
		Set("delivery = ?", wire.DeliveryQueued).Set("turn_id = ?", turn).Set("continues = ?", msg).Set("partial = ''").
		Set("updated_at = ?", formatTime(t.now)).
		Where("session = ? AND input_id = ? AND delivery IN (?, ?)", session, inputID, wire.DeliveryInterrupted, wire.DeliveryFailed).Exec(ctx)
	if err != nil {
		return fmt.Errorf("continue input: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("input %q of session %q is not cut off: %w", inputID, session, ErrConflict)
	}
	return nil
}

// PutMessage accepts a person's message that starts no turn (a session
// that answers only mentions): delivered at once, as a bot's post is.
// created is false for a repeat, answered with the stored receipt.
func (t *Tx) PutMessage(ctx context.Context, session, inputID, text string, author wire.Author, atts ...wire.Attachment) (_ Input, created bool, _ error) {
	c, err := t.counters(ctx, session)
	if err != nil {
		return Input{}, false, err
	}
	in, created, _, err := t.putPost(ctx, c, session, inputID, text, wire.RoleUser, author, atts)
	return in, created, err
}

// Input reads one input's receipt.
func (d *DB) Input(ctx context.Context, session, inputID string) (Input, error) {
	var in Input
	err := d.ro.NewSelect().Model(&in).Where("session = ? AND input_id = ?", session, inputID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		// A bot's post: its message event is its record (putPost).
		var offset, ord int64
		var at string
		err = d.ro.DB.QueryRowContext(ctx, d.dialect.bind(postReceiptSQL),
			session, inputID, session, session, inputID, session).Scan(&offset, &ord, &at)
		if err == nil {
			return postInput(session, inputID, "", ord, offset, at), nil
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return Input{}, fmt.Errorf("input %q: %w", inputID, ErrNotFound)
	}
	if err != nil {
		return Input{}, fmt.Errorf("read input: %w", err)
	}
	return in, nil
}
