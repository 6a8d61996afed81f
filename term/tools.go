package term

import (
	"fmt"
	"slices"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// Tool calls and their decisions. Each call is a block of the transcript
// (toolblock.go), kept up to date as its decision and result land. A call
// that waits for a decision puts the decision bar above the composer, for
// the people who may decide it (owners, members with write access), with
// its keys: Alt-Y allows ("yes"), Alt-A allows the tool for the rest of
// the session ("always"), Alt-N denies ("no"); /allow, /always and /deny
// do the same where Alt does not reach the program (a macOS terminal
// whose Option key types characters). The keys are chords, never plain
// letters: someone typing a message while a call waits must not decide
// it with the first letter they type. Whoever decides first, on any
// device, wins: the approval event then takes the bar away everywhere.

// toolCall is one call as a session's events tell it so far.
type toolCall struct {
	call     *wire.Event // its tool_call; nil while that is older than the history loaded
	approval *wire.Event
	result   *wire.Event
}

// toolIndex is a session's calls by id, with those waiting for a
// decision in the order they were made. It is derived from the session's
// Events and kept with them (add as they come, rebuild when they are
// replaced), so that neither a frame nor a key looks through the log.
type toolIndex struct {
	byID    map[string]*toolCall
	waiting []string // call ids: policy ask, neither decided nor ended
}

func isToolEvent(t wire.EventType) bool {
	return t == wire.EventToolCall || t == wire.EventApproval || t == wire.EventToolResult
}

// add records ev, if it is a tool event.
func (x *toolIndex) add(ev wire.Event) {
	if !isToolEvent(ev.Type) {
		return
	}
	if x.byID == nil {
		x.byID = map[string]*toolCall{}
	}
	c := x.byID[ev.CallID]
	if c == nil {
		c = &toolCall{}
		x.byID[ev.CallID] = c
	}
	e := ev
	switch ev.Type {
	case wire.EventToolCall:
		c.call = &e
		if ev.Policy == wire.PolicyAsk && c.approval == nil && c.result == nil {
			x.waiting = append(x.waiting, ev.CallID)
		}
		return
	case wire.EventApproval:
		c.approval = &e
	default:
		c.result = &e
	}
	x.waiting = slices.DeleteFunc(x.waiting, func(id string) bool { return id == ev.CallID })
}

// rebuild indexes evs afresh: the history they were was replaced.
func (x *toolIndex) rebuild(evs []wire.Event) {
	*x = toolIndex{}
	for _, ev := range evs {
		x.add(ev)
	}
}

// toolCall is the call ev is an event of, as the index has it; ev alone
// for a session whose index does not know it.
func (s *SessionView) toolCall(ev wire.Event) *toolCall {
	if c := s.calls.byID[ev.CallID]; c != nil {
		return c
	}
	var x toolIndex
	x.add(ev)
	return x.byID[ev.CallID]
}

// pendingCall is a call that waits for a decision.
type pendingCall struct{ id, tool string }

// pendingCalls is every call of s that waits for a decision, oldest
// first: those its events show, then those the daemon listed that are
// older than the history loaded.
func (s *SessionView) pendingCalls() []pendingCall {
	var out []pendingCall
	for _, id := range s.calls.waiting {
		out = append(out, pendingCall{id, s.calls.byID[id].call.Tool})
	}
	for _, a := range s.fetched {
		if s.calls.byID[a.CallID] == nil {
			out = append(out, pendingCall{a.CallID, a.Tool})
		}
	}
	return out
}

// nextDecision is the index in ps of the first call no decision has been
// sent for from here, or -1.
func (s *SessionView) nextDecision(ps []pendingCall) int {
	return slices.IndexFunc(ps, func(p pendingCall) bool { return s.deciding[p.id] == "" })
}

// mayDecide says whether the person may decide s's calls: owners and
// members with write access, as the feed and the session say (neither
// tells a viewer's read-only view so). Offering keys the daemon would
// refuse would only mislead. The client does not say the token's role,
// so a guest's write access would pass here; the daemon refuses a
// guest's decision, and decided says so.
func (m *Model) mayDecide(s *SessionView) bool {
	switch m.Conn.Role {
	case wire.TokenGuest, wire.TokenViewer, wire.TokenBot:
		return false // may write, perhaps, but not decide
	}
	return !m.ReadOnly && (s.Access == wire.AccessWrite || s.Access == wire.AccessCreator)
}

// canDecide: a call in front of the person waits for their decision.
func canDecide(m *Model) bool {
	s := m.Focused()
	return s != nil && m.mayDecide(s) && s.nextDecision(s.pendingCalls()) >= 0
}

// The decision keys' actions.
func (m *Model) allowCall() []Cmd        { return m.decide(wire.DecisionAllow, "") }
func (m *Model) allowCallSession() []Cmd { return m.decide(wire.DecisionAllowSession, "") }
func (m *Model) denyCall() []Cmd         { return m.decide(wire.DecisionDeny, "") }

// decide sends a decision on the focused session's first call that waits
// for one and has none on its way from here.
func (m *Model) decide(decision, reason string) []Cmd {
	s := m.Focused()
	if s == nil {
		m.notify(true, "no session")
		return nil
	}
	if !m.mayDecide(s) {
		m.notify(true, "only owners and members with write access decide tool calls here")
		return nil
	}
	ps := s.pendingCalls()
	i := s.nextDecision(ps)
	if i < 0 {
		m.notify(true, "no tool call waits for a decision here")
		return nil
	}
	if s.deciding == nil {
		s.deciding = map[string]string{}
	}
	s.deciding[ps[i].id] = decision
	m.notify(false, decisionWords[decision][0]+" "+ps[i].tool+"…")
	return []Cmd{cmdDecide{Session: s.ID, CallID: ps[i].id, Tool: ps[i].tool, Decision: wire.Decision{Decision: decision, Reason: reason}}}
}

// decisionWords says each decision while it is on its way, and once made.
var decisionWords = map[string][2]string{
	wire.DecisionAllow:        {"allowing", "allowed"},
	wire.DecisionAllowSession: {"allowing for this session", "allowed for this session"},
	wire.DecisionDeny:         {"denying", "denied"},
}

// denyCommand is /deny [REASON].
func (m *Model) denyCommand(arg string) []Cmd {
	if len(arg) > wire.MaxReasonBytes {
		m.notify(true, fmt.Sprintf("a reason holds at most %d KiB", wire.MaxReasonBytes>>10))
		return nil
	}
	return m.decide(wire.DecisionDeny, arg)
}

// The Cmds of decisions, and their results.
type (
	cmdDecide struct {
		Session, CallID, Tool string
		Decision              wire.Decision
	}
	cmdApprovals struct{ Session string } // the calls waiting, as the daemon lists them
	resDecided   struct {
		cmdDecide
		Err error
	}
	resApprovals struct {
		Session string
		List    wire.Approvals
		Err     error
	}
)

func (cmdDecide) isCmd()    {}
func (cmdApprovals) isCmd() {}

// decided says how a decision sent from here went. One that was made
// lands as its approval event, which ends the wait; until then the call
// stays marked as decided here, so that a second key does not send
// another. One refused is no longer on its way: the call may be decided
// again, unless someone else did (conflict), whose approval comes too.
func (m *Model) decided(r resDecided) {
	if r.Err == nil {
		m.notify(false, decisionWords[r.Decision.Decision][1]+" "+r.Tool)
		return
	}
	if s := m.session(r.Session); s != nil {
		delete(s.deciding, r.CallID)
	}
	switch client.Code(r.Err) {
	case wire.CodeConflict:
		m.notify(false, r.Tool+" was already decided: the first decision wins")
	case wire.CodeNotFound:
		m.notify(false, r.Tool+": the call is gone")
	case wire.CodeForbidden:
		m.notify(true, "only owners and members with write access decide tool calls here")
	default:
		m.notify(true, "decision not sent: "+spoken(r.Err))
	}
}

// wantApprovals asks the daemon for the calls waiting in s when its
// status counts more than its events show: their tool_call events are
// older than the history loaded. It asks once for each turn and count.
func (m *Model) wantApprovals(s *SessionView) []Cmd {
	if s.Phase != wire.PhaseApproval || s.Pending <= len(s.calls.waiting) || !s.caughtUp() || !m.mayDecide(s) {
		return nil
	}
	key := fmt.Sprintf("%s/%d", s.TurnID, s.Pending)
	if s.fetchedFor == key {
		return nil
	}
	s.fetchedFor = key
	return []Cmd{cmdApprovals{Session: s.ID}}
}

// approvalsListed keeps the calls the daemon listed as waiting; those
// the session's events show, or decide, are left to them (pendingCalls).
// A list that could not be read leaves the bar to the events.
func (m *Model) approvalsListed(r resApprovals) {
	if s := m.session(r.Session); s != nil && r.Err == nil {
		s.fetched = r.List.Approvals
	}
}

// toolEvent applies a tool event of s: the index, a decision of ours
// that landed, and the notice that a decision is needed.
func (m *Model) toolEvent(s *SessionView, ev wire.Event) []Cmd {
	before := len(s.calls.waiting)
	s.calls.add(ev)
	if ev.Type != wire.EventToolCall {
		delete(s.deciding, ev.CallID)
		return nil
	}
	if ev.TurnID == s.StreamTurn {
		s.StreamText = "" // what the model said is the call's now
	}
	if before == 0 && len(s.calls.waiting) > 0 && s.news(ev) {
		return m.decisionNeeded(s, "decision needed: "+ev.Tool)
	}
	return nil
}

// decisionNeeded is the notification that a call waits for the person's
// decision, when it is not in front of them (notify.go).
func (m *Model) decisionNeeded(s *SessionView, body string) []Cmd {
	if m.Quiet || !m.mayDecide(s) || m.Focused() == s && m.TermFocused {
		return nil
	}
	return []Cmd{cmdNotify{Title: "albedo: " + s.name(), Body: body}}
}

// toggleTools shows long tool calls whole, or folds them again.
func (m *Model) toggleTools() []Cmd {
	m.wholeTools = !m.wholeTools
	if m.wholeTools {
		m.notify(false, "tool calls shown whole: Ctrl-O folds them again")
	} else {
		m.notify(false, "long tool calls folded")
	}
	return nil
}

// toolResult applies the result of a Cmd of this file; it says whether r
// was one.
func (m *Model) toolResult(r any) bool {
	switch r := r.(type) {
	case resDecided:
		m.decided(r)
	case resApprovals:
		m.approvalsListed(r)
	default:
		return false
	}
	return true
}

// toolRun runs the Cmds of this file; it says whether cmd was one.
// Decisions go by HTTP, whose reply tells a conflict from a refusal.
func (a *App) toolRun(cmd Cmd) bool {
	switch cmd := cmd.(type) {
	case cmdDecide:
		a.goRun(func() {
			_, err := a.c.Decide(a.ctx, cmd.Session, cmd.CallID, cmd.Decision)
			a.post(resDecided{cmdDecide: cmd, Err: err})
		})
	case cmdApprovals:
		a.goRun(func() {
			list, err := a.c.Approvals(a.ctx, cmd.Session)
			a.post(resApprovals{Session: cmd.Session, List: list, Err: err})
		})
	default:
		return false
	}
	return true
}

// The decision bar's styles.
var (
	stAsk     = stBase.Background(tcell.ColorYellow).Foreground(tcell.ColorBlack)
	stAskBold = stAsk.Bold(true)
)

// The decision bar's keys, as wide as the bar allows.
const (
	decideKeys      = "Alt-Y allow · Alt-A allow for this session · Alt-N deny"
	decideKeysShort = "Alt-Y allow · Alt-A always · Alt-N deny"
)

// decisionBar is what the bar above the composer says: the call waiting
// and, for it, the keys, or the decision on its way; nothing when no call
// in front of the person waits for their decision.
func (m *Model) decisionBar() (head, keys string) {
	s := m.Focused()
	if s == nil || !m.mayDecide(s) {
		return "", ""
	}
	ps := s.pendingCalls()
	if len(ps) == 0 {
		return "", ""
	}
	i := s.nextDecision(ps)
	if i < 0 {
		return "⚠ " + ps[0].tool, decisionWords[s.deciding[ps[0].id]][0] + "…"
	}
	head = "⚠ " + ps[i].tool + " waits for your decision"
	if len(ps) > 1 {
		head += fmt.Sprintf(" (%d of %d)", i+1, len(ps))
	}
	return head, decideKeys
}

// barRows is how many rows the decision bar takes above a transcript of
// h rows: two (the call, then the keys), one (the keys) when rows are
// few, none when there is nothing to decide.
func (m *Model) barRows(h int) int {
	if head, _ := m.decisionBar(); head == "" {
		return 0
	}
	switch {
	case h >= 8:
		return 2
	case h >= 3:
		return 1
	}
	return 0
}

// drawDecision draws the decision bar, between the transcript and the
// composer.
func drawDecision(scr tcell.Screen, m *Model, l layout) {
	if l.barH == 0 {
		return
	}
	head, keys := m.decisionBar()
	x, w, y := l.mainX, l.mainW, l.barY
	if l.barH == 2 {
		fill(scr, x, y, w, stAskBold)
		put(scr, x+1, y, w-1, head, stAskBold)
		y++
	}
	if keys == decideKeys && width(keys) > w-2 {
		keys = decideKeysShort
	}
	fill(scr, x, y, w, stAsk)
	put(scr, x+1, y, w-1, keys, stAsk)
}

// waitingText is what the status bar says of a turn waiting for people
// to decide its calls: for how many.
func waitingText(s *SessionView) string {
	if n := max(s.Pending, len(s.pendingCalls())); n > 1 {
		return fmt.Sprintf("waiting for %d decisions", n)
	}
	return "waiting for a decision"
}
