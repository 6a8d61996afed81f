package term

import (
	"albedo/wire"
)

// Continuing a reply that was cut off (docs/protocol.md, POST
// /v1/sessions/{id}/continue): /continue asks the daemon to run on the
// session's newest reply when its turn was interrupted or failed after
// it said something. The rest comes as a message that continues it
// (Event.Continues, the offset of the reply); the transcript shows it
// as that reply's rest: one block, the reply's text and its rest joined
// under the reply's header, the note of the cut (and the line of the
// turn that ended so) gone. Copying the reply takes it whole. While the
// rest streams (its turn's started event carries continues too), the
// stream's header says whose rest it is.

// The Cmd and result of a continue.
type (
	cmdContinue  struct{ Session string }
	resContinued struct {
		Session string
		Err     error
	}
)

func (cmdContinue) isCmd() {}

// continueCommand is /continue.
var continueCommand = slashCommand{"/continue", "run on the newest reply, cut off: its rest joins it", func(m *Model, _ string) []Cmd {
	s := m.Focused()
	if s == nil {
		m.notify(true, "no session")
		return nil
	}
	s.Follow = true
	m.notify(false, "continuing the reply…")
	return []Cmd{cmdContinue{Session: s.ID}}
}}

// cutOff says, when a turn of the session in front ends interrupted or
// failed after its reply said something, that /continue runs on it.
func (m *Model) cutOff(s *SessionView, ev wire.Event) {
	if ev.State != wire.TurnInterrupted && ev.State != wire.TurnFailed || s != m.Focused() || !s.news(ev) || m.readOnlyHere() {
		return
	}
	for i := len(s.Events) - 1; i >= 0; i-- {
		if r := s.Events[i]; r.Type == wire.EventMessage && r.TurnID == ev.TurnID {
			if r.Role == wire.RoleAssistant && r.Text != "" && r.State != wire.MessageComplete {
				m.notify(false, "the reply was cut off: /continue runs on it")
			}
			return
		}
	}
}

// continued says why a reply was not continued.
func (m *Model) continued(r resContinued) {
	if r.Err != nil {
		m.notify(true, "not continued: "+spoken(r.Err))
	}
}

// cutReply is what a reply cut off was drawn with, for its rest to be
// drawn in its place: the question it answered (when not just above it)
// and its versions' mark.
type cutReply struct {
	re, mark string
}

// noteCut keeps how message i was drawn when it was cut off: a later
// message may continue it.
func (t *transcript) noteCut(ev wire.Event, i int, re, mark string) {
	if ev.State != wire.MessageInterrupted && ev.State != wire.MessageFailed {
		return
	}
	if t.cut == nil {
		t.cut = map[int]cutReply{}
	}
	t.cut[i] = cutReply{re: re, mark: mark}
}

// join draws the continuation evs[i] in the block of the reply it
// continues (the first of a chain of continuations), with the turn
// that cut the last part off no longer drawn; it returns the first
// block changed, and false when that reply is not among evs.
func (t *transcript) join(evs []wire.Event, i int, o look) (int, bool) {
	ev := evs[i]
	root, ok := t.rootOf(evs, i)
	if !ok {
		return 0, false
	}
	if t.parts == nil {
		t.parts = map[int][]int{}
	}
	t.parts[root] = append(t.parts[root], i)
	whole := evs[root]
	whole.Text = joinedText(evs, root, t.parts[root])
	whole.State, whole.Attachments = ev.State, append(whole.Attachments[:len(whole.Attachments):len(whole.Attachments)], ev.Attachments...)
	c := t.cut[root]
	t.blocks[root] = withMark(eventLines(whole, o, c.re), c.mark, o.width)
	first := root
	for k := i - 1; k > root; k-- {
		if e := evs[k]; e.Type == wire.EventTurn && (e.State == wire.TurnInterrupted || e.State == wire.TurnFailed) && k < len(t.blocks) {
			t.blocks[k], first = nil, min(first, k) // the cut, mended
			break
		}
	}
	t.noteCut(ev, i, c.re, c.mark) // cut off again: its own rest joins the same block
	return first, true
}

// rootOf is the block a continuation joins: that of the reply it
// continues, or of the first reply of a chain of them.
func (t *transcript) rootOf(evs []wire.Event, i int) (int, bool) {
	for j := i - 1; j >= 0; j-- {
		if evs[j].Offset != evs[i].Continues {
			continue
		}
		if evs[j].Type != wire.EventMessage {
			return 0, false
		}
		for root, parts := range t.parts {
			for _, p := range parts {
				if p == j {
					return root, true
				}
			}
		}
		return j, true
	}
	return 0, false
}

// joinedText is a reply and its continuations' texts, one after the
// other as the model wrote them.
func joinedText(evs []wire.Event, root int, parts []int) string {
	text := evs[root].Text
	for _, p := range parts {
		text += evs[p].Text
	}
	return text
}

// replyText is message i's text, joined: the replies it continues
// before it, the continuations of it after it, as far as loaded.
func (s *SessionView) replyText(i int) string {
	text := s.Events[i].Text
	for j := i; s.joined(j); {
		j = s.eventAt(s.Events[j].Continues, j)
		text = s.Events[j].Text + text
	}
	for j, at := i+1, s.Events[i].Offset; j < len(s.Events); j++ {
		if ev := s.Events[j]; ev.Type == wire.EventMessage && ev.Continues == at {
			text, at = text+ev.Text, ev.Offset
		}
	}
	return text
}

// joined says whether message i is drawn in the block of the reply it
// continues: that reply is loaded.
func (s *SessionView) joined(i int) bool {
	ev := s.Events[i]
	if ev.Type != wire.EventMessage || ev.Continues == 0 {
		return false
	}
	j := s.eventAt(ev.Continues, i)
	return j >= 0 && s.Events[j].Type == wire.EventMessage
}

// eventAt is the index of the event at offset among the first n of
// s.Events, or -1.
func (s *SessionView) eventAt(offset int64, n int) int {
	for j := n - 1; j >= 0; j-- {
		if s.Events[j].Offset == offset {
			return j
		}
	}
	return -1
}

// continueResult takes a continue's result; it says whether r was one.
func (m *Model) continueResult(r any) bool {
	c, ok := r.(resContinued)
	if ok {
		m.continued(c)
	}
	return ok
}

// continueRun runs a continue; it says whether cmd was one.
func (a *App) continueRun(cmd Cmd) bool {
	c, ok := cmd.(cmdContinue)
	if ok {
		a.goRun(func() {
			_, err := a.c.Continue(a.ctx, c.Session)
			a.post(resContinued{Session: c.Session, Err: err})
		})
	}
	return ok
}

// joins draws continuation evs[i] in its reply's block, lowering *dirty
// to the first block changed; false: the reply is not loaded, and the
// continuation is drawn as a message of its own.
func (t *transcript) joins(evs []wire.Event, i int, o look, dirty *int) bool {
	first, ok := t.join(evs, i, o)
	if ok {
		*dirty = min(*dirty, first)
	}
	return ok
}

// continuingNote heads a stream that is the rest of a reply cut off.
const continuingNote = "… the rest of the reply above"

// streamNote is the note in the streaming reply's header: the rest of a
// reply, when its turn continues one, else a mark that it streams.
func streamNote(s *SessionView) string {
	if s.turnOf == s.StreamTurn && s.turnContinues > 0 {
		return continuingNote
	}
	return "…"
}
