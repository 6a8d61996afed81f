package hub

import (
	"context"
	"errors"
	"math"
	"strings"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/provider"
	"albedo/wire"
)

// Continue runs on a reply that was cut off: the newest turn of a session,
// interrupted or failed after it said something, is run again as a new
// turn of the same input whose model is sent the reply so far and asked
// for the rest (continueTranscript); its message carries continues, the
// offset of the reply it goes on from. A session whose newest reply is
// whole, said nothing, or whose turns are running or queued, is a
// conflict.
func (h *Hub) Continue(ctx context.Context, session string) (string, error) {
	ch, werr := h.channel(ctx, session)
	if werr != nil {
		return "", werr
	}
	ch.mu.Lock()
	st := ch.status()
	ch.mu.Unlock()
	msg, err := h.cutReply(ctx, ch, st)
	if err != nil {
		return "", err
	}
	turn := uuid.Must(uuid.NewV7()).String()
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		return tx.ContinueInput(ctx, session, msg.InputID, turn, msg.Offset)
	}); err != nil {
		if errors.Is(err, db.ErrConflict) {
			return "", wire.Errorf(wire.CodeConflict, "that reply is being continued already")
		}
		return "", wireErr(err)
	}
	in, err := h.db.Input(ctx, session, msg.InputID)
	if err != nil {
		return "", wireErr(err)
	}
	if h.db.Shared() {
		h.wake(ch)
	} else {
		h.enqueue(ch, queuedOf(in, db.Lease{}))
	}
	return turn, nil
}

// cutReply finds the reply Continue goes on from: the message of the
// session's newest turn, which ended interrupted or failed. st is the
// session's run here. A queued input, a turn started in the log and not
// ended, or one running here whose start is not in the log yet, is a
// conflict; a turn running here whose end is in the log is only wrapping
// up (its end reaches watchers before its runner says it is idle).
func (h *Hub) cutReply(ctx context.Context, ch *channel, st wire.Status) (wire.Event, error) {
	sp, err := h.spansOf(ctx, ch)
	if err != nil {
		return wire.Event{}, wireErr(err)
	}
	var turn, msg *wire.Event
	var bad error
	err = h.db.Newest(ctx, sp, []wire.EventType{wire.EventMessage, wire.EventTurn}, math.MaxInt64, 1<<20, func(e db.Event) bool {
		ev, err := e.Decode()
		if err != nil {
			bad = err
			return false
		}
		switch {
		case turn == nil && ev.Type == wire.EventTurn:
			turn = &ev
			return true
		case turn != nil && ev.Type == wire.EventMessage && ev.TurnID == turn.TurnID:
			msg = &ev
		}
		return false
	})
	if err = errors.Join(err, bad); err != nil {
		return wire.Event{}, wireErr(err)
	}
	switch {
	case st.Queued > 0, turn != nil && turn.State == wire.TurnStarted, // on any node
		st.Phase != wire.PhaseIdle && (turn == nil || turn.TurnID != st.TurnID): // its start not committed yet
		return wire.Event{}, wire.Errorf(wire.CodeConflict, "a turn is running or waiting: there is nothing to continue yet")
	case turn == nil:
		return wire.Event{}, wire.Errorf(wire.CodeConflict, "nothing to continue: the newest message is no reply")
	case turn.State != wire.TurnInterrupted && turn.State != wire.TurnFailed:
		return wire.Event{}, wire.Errorf(wire.CodeConflict, "nothing to continue: the newest reply is whole")
	case msg == nil || msg.Role != wire.RoleAssistant || strings.TrimSpace(msg.Text) == "" || msg.InputID == "":
		return wire.Event{}, wire.Errorf(wire.CodeConflict, "nothing to continue: the reply that was cut off said nothing; send the message again")
	}
	return *msg, nil
}

// ContinueAsk is what a model that cannot be handed its own reply to go
// on with (OpenAI's chat format) is asked after it.
const ContinueAsk = "[Your reply above was cut off. Continue it exactly where it stops, without repeating any of it.]"

// continueTranscript makes req go on from the reply it ends with: a
// provider that continues an assistant message given last (Anthropic's
// prefill) gets it as it is, its trailing spaces trimmed, as the API
// wants, and no thinking, which a prefill does not take; any other is
// asked, in a user message after it.
func continueTranscript(p provider.Provider, req *provider.Request) {
	n := len(req.Messages)
	if n == 0 || req.Messages[n-1].Role != wire.RoleAssistant {
		return
	}
	if pf, ok := p.(provider.Prefiller); ok && pf.Prefills() {
		req.Messages[n-1].Text = strings.TrimRight(req.Messages[n-1].Text, " \t\r\n")
		req.Effort = ""
		return
	}
	req.Messages = append(req.Messages, provider.Message{Role: wire.RoleUser, Author: "albedo", Text: ContinueAsk})
}
