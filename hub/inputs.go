package hub

import (
	"context"
	"strings"

	"albedo/db"
	"albedo/hub/access"
	"albedo/wire"
)

// PutInput accepts a user's input once per input_id: it commits the receipt
// and the user's message event, then queues the turn that answers it. A
// repeat with the same text returns the stored receipt; other text for the
// same id is a conflict.
//
// atts are the files its message carries, resolved (Attachments).
func (h *Hub) PutInput(ctx context.Context, session, inputID, text string, by wire.Author, atts ...wire.Attachment) (wire.Receipt, error) {
	return h.putInput(ctx, session, inputID, text, atts, wire.RoleUser, by)
}

func (h *Hub) putInput(ctx context.Context, session, inputID, text string, atts []wire.Attachment, role wire.Role, author wire.Author) (wire.Receipt, error) {
	if err := h.checkInput(session, inputID, text, atts); err != nil {
		return wire.Receipt{}, err
	}
	var in db.Input
	read := false
	if _, err := h.db.Writer().DoIn(ctx, session, h.putInputFn(ctx, &in, &read, session, inputID, text, atts, role, author)); err != nil {
		return wire.Receipt{}, wireErr(err)
	}
	h.readOwn(read, author, in)
	// A new user input's turn is queued by the commit hook.
	return in.Receipt(), nil
}

// SubmitInput queues a user's input as PutInput does and returns without
// waiting for its commit: then gets the receipt once it is committed (or
// the error), on the database writer's goroutine, so it must be quick and
// not wait for a write (db.Writer.Then). Inputs submitted one after
// another are accepted (given their order) and answered in that order, so
// one connection can have many in flight. An input refused before the
// database (a daemon stopping, a field missing or malformed, text too
// large) is not queued: SubmitInput returns its error, and then is not
// called.
func (h *Hub) SubmitInput(ctx context.Context, session, inputID, text string, atts []wire.Attachment, author wire.Author, then func(wire.Receipt, error)) error {
	return h.submitInput(ctx, session, inputID, text, atts, wire.RoleUser, author, then)
}

func (h *Hub) submitInput(ctx context.Context, session, inputID, text string, atts []wire.Attachment, role wire.Role, author wire.Author, then func(wire.Receipt, error)) error {
	if err := h.checkInput(session, inputID, text, atts); err != nil {
		return err
	}
	in, read := new(db.Input), new(bool)
	h.db.Writer().ThenIn(ctx, session, h.putInputFn(ctx, in, read, session, inputID, text, atts, role, author), func(err error) {
		if err != nil {
			then(wire.Receipt{}, wireErr(err))
			return
		}
		h.readOwn(*read, author, *in)
		then(in.Receipt(), nil)
	})
	return nil
}

// putInputFn is the write of an input, storing its receipt in in: a
// person's message that mentions no participant of a session that
// answers only mentions starts no turn (quiet). A person's new message
// moves their read marker past it in the same write (read), so that it
// never counts as unread to them.
func (h *Hub) putInputFn(ctx context.Context, in *db.Input, read *bool, session, inputID, text string, atts []wire.Attachment, role wire.Role, author wire.Author) func(*db.Tx) error {
	quiet := role == wire.RoleUser && h.quiet(ctx, session, text)
	person := role == wire.RoleUser && author.ID != "" && !strings.HasPrefix(author.ID, wire.BotAuthorPrefix)
	return func(tx *db.Tx) error {
		var err error
		var created bool
		if quiet {
			*in, created, err = tx.PutMessage(ctx, session, inputID, text, author, atts...)
		} else {
			*in, created, _, err = tx.PutInput(ctx, session, inputID, text, role, author, atts...)
		}
		if err != nil || !person || !created || in.MsgOffset == 0 {
			return err
		}
		*read = true
		return tx.ReadThrough(ctx, author.ID, session, in.MsgOffset)
	}
}

// readOwn tells the author's connections that their read marker moved
// past their own message (putInputFn), when it did. Nothing came after
// it in the write that moved it; what comes after is counted anew.
func (h *Hub) readOwn(read bool, author wire.Author, in db.Input) {
	if read {
		h.pushRead(author.ID, in.Session, in.MsgOffset, 0)
	}
}

func (h *Hub) checkInput(session, inputID, text string, atts []wire.Attachment) error {
	switch {
	case h.stopping.Load():
		return &wire.Error{Code: wire.CodeDaemonStopping, Message: "the daemon is stopping; retry with the same input_id", Retryable: true}
	case session == "":
		return wire.Errorf(wire.CodeBadRequest, "session is required")
	case inputID == "":
		return wire.Errorf(wire.CodeBadRequest, "input_id is required")
	case !access.CanonicalUUID(inputID):
		return wire.Errorf(wire.CodeBadRequest, "input_id %q is not a UUID in its canonical form (36 characters, lower-case hex, 8-4-4-4-12)", inputID)
	case text == "" && len(atts) == 0:
		return wire.Errorf(wire.CodeBadRequest, "text is required (or attachments)")
	case len(text) > h.opts.MaxInput:
		return wire.Errorf(wire.CodeTooLarge, "text is %d bytes; the limit is %d", len(text), h.opts.MaxInput)
	}
	if werr := access.CheckText("text", text); werr != nil {
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
