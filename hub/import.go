package hub

import (
	"context"
	"errors"
	"slices"
	"time"
	"unicode/utf8"

	"albedo/db"
	"albedo/hub/access"
	"albedo/hub/provider"
	"albedo/wire"
)

// maxImportText is the most text an imported message may hold: a reply can
// be longer than an input, but no event of an export is larger than a page
// of history.
const maxImportText = 1 << 20

// ImportEvents appends the next events of a session restored from an
// export, each as it was (type, role, author, text, turn, time), after
// checking every one: offsets in order from the session's head + 1 (those
// it holds already are skipped), a type the log knows, a role where a
// message needs one. Only what the export held goes in: nothing runs, no
// turn starts; its user inputs count toward the session's (so a live
// input's order follows them). done marks the export's last chunk: a turn
// it left started is closed as interrupted (wire.ReasonImport).
//
// The files events carry must be blobs by that the store holds and by may
// read (Attachments): an export's blobs are uploaded before its events.
func (h *Hub) ImportEvents(ctx context.Context, by access.Principal, id string, evs []wire.Event, done bool) (int64, error) {
	if len(evs) == 0 || len(evs) > wire.MaxImportEvents {
		return 0, wire.Errorf(wire.CodeBadRequest, "events: 1 to %d a request", wire.MaxImportEvents)
	}
	for i := range evs {
		ev := &evs[i]
		if err := checkImported(ev); err != nil {
			return 0, wire.Errorf(wire.CodeBadRequest, "events[%d] (offset %d): %s", i, ev.Offset, err.Message)
		}
		if len(ev.Attachments) > 0 {
			atts, err := h.blobs.Resolve(ctx, by, ev.Attachments)
			var werr *wire.Error
			if errors.As(err, &werr) {
				return 0, wire.Errorf(wire.CodeBadRequest, "events[%d] (offset %d): %s", i, ev.Offset, werr.Message)
			}
			if err != nil {
				return 0, err
			}
			ev.Attachments = atts
		}
		if i > 0 && ev.Offset != evs[i-1].Offset+1 {
			return 0, wire.Errorf(wire.CodeBadRequest, "events[%d]: offset %d after %d: offsets go up by one", i, ev.Offset, evs[i-1].Offset)
		}
	}
	var head int64
	_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		if head, err = tx.Head(ctx, id); err != nil {
			return err
		}
		if evs[0].Offset > head+1 {
			return wire.Errorf(wire.CodeBadRequest, "events start at offset %d; the session's head is %d: send %d first", evs[0].Offset, head, head+1)
		}
		fresh := evs[min(head+1-evs[0].Offset, int64(len(evs))):]
		if _, err := tx.AppendAsWas(ctx, id, fresh...); err != nil {
			return err
		}
		head += int64(len(fresh))
		if !done {
			return nil
		}
		open, err := tx.OpenTurn(ctx, id, fresh)
		if err != nil || open == "" {
			return err
		}
		_, err = tx.Append(ctx, id, wire.Event{Type: wire.EventTurn, TurnID: open, State: wire.TurnInterrupted, Reason: wire.ReasonImport})
		head++
		return err
	})
	if err != nil {
		return 0, wireErr(err)
	}
	return head, nil
}

// importSkew is how far past the daemon's clock an imported event's time
// may be: an export was made by a daemon whose clock may be ahead, not by
// years.
const importSkew = 24 * time.Hour

// checkImported refuses an event an export cannot hold: what the live
// path would not have written.
func checkImported(ev *wire.Event) *wire.Error {
	if ev.Offset < 1 || ev.At.IsZero() {
		return wire.Errorf(wire.CodeBadRequest, "an event needs its offset and time")
	}
	if ev.At.After(time.Now().Add(importSkew)) || ev.At.Year() < 2000 {
		return wire.Errorf(wire.CodeBadRequest, "at %s is not a time an export holds (from 2000 to a day past now)", ev.At.Format(time.RFC3339))
	}
	for _, id := range [][2]string{{"turn_id", ev.TurnID}, {"input_id", ev.InputID}} {
		if id[1] != "" && !access.CanonicalUUID(id[1]) {
			return wire.Errorf(wire.CodeBadRequest, "%s %q is not a UUID in lower-case 8-4-4-4-12 form", id[0], id[1])
		}
	}
	if werr := checkImportedState(*ev); werr != nil {
		return werr
	}
	switch ev.Type {
	case wire.EventMessage:
		switch ev.Role {
		case wire.RoleUser, wire.RoleAssistant, wire.RoleBot:
		default:
			return wire.Errorf(wire.CodeBadRequest, "a message's role is user, assistant or bot, not %q", ev.Role)
		}
		if len(ev.Text) > maxImportText {
			return wire.Errorf(wire.CodeBadRequest, "a message holds at most %d bytes", maxImportText)
		}
	case wire.EventCompaction:
		if ev.From < 1 || ev.To < ev.From || ev.To >= ev.Offset || len(ev.Text) > maxImportText {
			return wire.Errorf(wire.CodeBadRequest, "a compaction covers offsets before its own (1 ≤ from ≤ to < offset) and holds at most %d bytes", maxImportText)
		}
	case wire.EventToolCall, wire.EventApproval, wire.EventToolResult:
		if werr := checkImportedCall(ev); werr != nil {
			return werr
		}
	case wire.EventNotice:
		if len(ev.Text) > maxImportText || (ev.CallID != "" && !access.CanonicalUUID(ev.CallID)) {
			return wire.Errorf(wire.CodeBadRequest, "a notice holds at most %d bytes, and names a call by its UUID", maxImportText)
		}
	case wire.EventTurn, wire.EventSettings:
	default:
		return wire.Errorf(wire.CodeBadRequest, "type %q is not one the log holds", ev.Type)
	}
	if err := access.CheckTexts("text", ev.Text, "error", ev.Error, "tools", ev.Tools, "tool", ev.Tool, "call_id", ev.CallID, "policy", ev.Policy, "decision", ev.Decision, "title", ev.Title, "model", ev.Model, "effort", ev.Effort, "author", ev.Author, "author_id", ev.AuthorID, "turn_id", ev.TurnID, "input_id", ev.InputID,
		"state", ev.State, "reason", ev.Reason, "by", ev.By, "diff", ev.Diff); err != nil {
		if we, ok := err.(*wire.Error); ok {
			return we
		}
		return wire.Errorf(wire.CodeBadRequest, "%v", err)
	}
	return nil
}

// checkImportedState refuses a state the event's type does not have: a
// turn is started, completed, interrupted or failed (and names its
// turn); a message's state, when it has one, is complete, interrupted or
// failed.
func checkImportedState(ev wire.Event) *wire.Error {
	switch ev.Type {
	case wire.EventTurn:
		switch ev.State {
		case wire.TurnStarted, wire.TurnCompleted, wire.TurnInterrupted, wire.TurnFailed:
		default:
			return wire.Errorf(wire.CodeBadRequest, "a turn's state is started, completed, interrupted or failed, not %q", ev.State)
		}
		if ev.TurnID == "" {
			return wire.Errorf(wire.CodeBadRequest, "a turn names its turn_id")
		}
	case wire.EventMessage:
		switch ev.State {
		case "", wire.MessageComplete, wire.MessageInterrupted, wire.MessageFailed:
		default:
			return wire.Errorf(wire.CodeBadRequest, "a message's state is complete, interrupted or failed, not %q", ev.State)
		}
	}
	return nil
}

// checkImportedCall checks a tool call's event: its call id, and the
// policy, decision or state its type has; a tool_call's arguments are a
// JSON object within provider.MaxArgumentBytes (kept compact, as the log
// keeps them: the caller stores ev.Arguments as CompactJSON gives it).
func checkImportedCall(ev *wire.Event) *wire.Error {
	if !access.CanonicalUUID(ev.CallID) {
		return wire.Errorf(wire.CodeBadRequest, "call_id %q is not a UUID in lower-case 8-4-4-4-12 form", ev.CallID)
	}
	if len(ev.Text) > maxImportText || len(ev.Tool) > maxToolNameBytes || len(ev.Error) > maxImportText {
		return wire.Errorf(wire.CodeBadRequest, "a tool call's event holds at most %d bytes of text and a tool name of %d", maxImportText, maxToolNameBytes)
	}
	if len(ev.Diff) > wire.MaxToolDiffBytes || len(ev.Locations) > wire.MaxToolLocations ||
		slices.ContainsFunc(ev.Locations, func(l wire.ToolLocation) bool {
			return len(l.Path) > wire.MaxLocationPathLen || !utf8.ValidString(l.Path)
		}) {
		return wire.Errorf(wire.CodeBadRequest, "a call's diff holds at most %d bytes, its locations at most %d paths of %d bytes", wire.MaxToolDiffBytes, wire.MaxToolLocations, wire.MaxLocationPathLen)
	}
	var ok bool
	switch ev.Type {
	case wire.EventToolCall:
		ok = slices.Contains([]string{wire.PolicyAllow, wire.PolicyAsk, wire.PolicyDeny, wire.PolicyAgent}, ev.Policy) && ev.Tool != ""
		if len(ev.Arguments) > 0 {
			ev.Arguments = wire.CompactJSON(ev.Arguments)
			ok = ok && len(ev.Arguments) > 0 && ev.Arguments[0] == '{' && len(ev.Arguments) <= provider.MaxArgumentBytes
		}
	case wire.EventApproval:
		ok = slices.Contains([]string{wire.DecisionAllow, wire.DecisionAllowSession, wire.DecisionDeny}, ev.Decision)
	case wire.EventToolResult:
		ok = slices.Contains([]string{wire.ToolCompleted, wire.ToolFailed, wire.ToolDenied, wire.ToolCancelled, wire.ToolExpired}, ev.State)
	}
	if !ok {
		return wire.Errorf(wire.CodeBadRequest, "a %s event's tool, policy, decision, state or arguments are not ones the log holds", ev.Type)
	}
	return nil
}
