package hub

import (
	"context"

	"albedo/api/wire"
	"albedo/db"
)

// PutInput accepts a user's input once per input_id: it commits the receipt
// and the user's message event, then queues the turn that answers it. A
// repeat with the same text returns the stored receipt; other text for the
// same id is a conflict.
func (h *Hub) PutInput(ctx context.Context, session, inputID, text, author string) (wire.Receipt, error) {
	return h.submitInput(ctx, session, inputID, text, wire.RoleUser, author)()
}

// SubmitInput queues a user's input as PutInput does and returns without
// waiting for its commit; wait returns the receipt once it is committed.
// Inputs submitted one after another are accepted (given their order) in
// that order, so one connection can have many in flight.
func (h *Hub) SubmitInput(ctx context.Context, session, inputID, text, author string) (wait func() (wire.Receipt, error)) {
	return h.submitInput(ctx, session, inputID, text, wire.RoleUser, author)
}

func (h *Hub) submitInput(ctx context.Context, session, inputID, text string, role wire.Role, author string) func() (wire.Receipt, error) {
	if err := h.checkInput(session, inputID, text); err != nil {
		return func() (wire.Receipt, error) { return wire.Receipt{}, err }
	}
	var in db.Input
	p := h.db.Writer().Submit(ctx, func(tx *db.Tx) error {
		var err error
		in, _, _, err = tx.PutInput(ctx, session, inputID, text, role, author)
		return err
	})
	// A new user input's turn is queued by the commit hook.
	return func() (wire.Receipt, error) {
		if _, err := p.Wait(); err != nil {
			return wire.Receipt{}, wireErr(err)
		}
		return in.Receipt(), nil
	}
}

func (h *Hub) checkInput(session, inputID, text string) error {
	switch {
	case h.stopping.Load():
		return &wire.Error{Code: wire.CodeDaemonStopping, Message: "the daemon is stopping; retry with the same input_id", Retryable: true}
	case session == "":
		return wire.Errorf(wire.CodeBadRequest, "session is required")
	case inputID == "":
		return wire.Errorf(wire.CodeBadRequest, "input_id is required")
	case !canonicalUUID(inputID):
		return wire.Errorf(wire.CodeBadRequest, "input_id %q is not a UUID in its canonical form (36 characters, lower-case hex, 8-4-4-4-12)", inputID)
	case text == "":
		return wire.Errorf(wire.CodeBadRequest, "text is required")
	case len(text) > h.opts.MaxInput:
		return wire.Errorf(wire.CodeTooLarge, "text is %d bytes; the limit is %d", len(text), h.opts.MaxInput)
	}
	if werr := checkText("text", text); werr != nil {
		return werr
	}
	return nil
}

// Input returns the receipt of an input, to settle an uncertain outcome.
func (h *Hub) Input(ctx context.Context, session, inputID string) (wire.Receipt, error) {
	if _, err := h.db.Session(ctx, session); err != nil {
		return wire.Receipt{}, wireErr(err)
	}
	in, err := h.db.Input(ctx, session, inputID)
	if err != nil {
		return wire.Receipt{}, wireErr(err)
	}
	return in.Receipt(), nil
}

// Status returns a session's run state.
func (h *Hub) Status(ctx context.Context, session string) (wire.Status, error) {
	ch, werr := h.channel(ctx, session)
	if werr != nil {
		return wire.Status{}, werr
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	st := ch.run.status()
	st.Head = ch.head
	st.Viewers = ch.watching
	return st, nil
}

// Stopping makes every later input fail with daemon_stopping (retryable)
// and starts no new turn.
func (h *Hub) Stopping() { h.stopping.Store(true) }
