package tools

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"time"
)

// State is where a call is.
type State string

const (
	Pending   State = "pending"   // waits for a person's decision
	Running   State = "running"   // allowed, by the policy or a person: it runs
	Completed State = "completed" // it ran and answered
	Failed    State = "failed"    // it ran and failed, or timed out
	Denied    State = "denied"    // the policy or a person refused it
	Cancelled State = "cancelled" // an interrupt ended its turn first
	Expired   State = "expired"   // no one decided before its expiry
)

// Ended says whether a call in state s has its result.
func (s State) Ended() bool { return s != Pending && s != Running }

// Call is one call a model made in a turn.
type Call struct {
	ID, Turn, Tool string   // Tool is the full name
	Policy         Decision // what the rules said when it was made: allow, ask or deny
	Offset         int64    // of its tool_call event
	RequestedAt    time.Time
	ExpiresAt      time.Time // a pending call's; zero otherwise
	State          State
	DecidedBy      string // who decided a call that asked
}

// Errors of a decision or a result.
var (
	ErrUnknownCall = errors.New("tools: no such call")
	ErrDuplicate   = errors.New("tools: a call with this id exists")
	ErrDecided     = errors.New("tools: the call was decided already")
	ErrBadDecision = errors.New("tools: a decision is allow, allow_session or deny")
	ErrNotRunning  = errors.New("tools: the call is not running")
	ErrBadResult   = errors.New("tools: a result is completed or failed")
)

// Calls is one session's calls and what it allows for good. It is not
// safe for concurrent use: its owner (the turn runner) holds the
// session's lock around it.
type Calls struct {
	policy  Policy
	timeout time.Duration
	calls   map[string]*Call
	always  map[string]bool // tools a person allowed for the rest of the session
}

// NewCalls makes a session's calls under policy; a pending call expires
// after timeout.
func NewCalls(policy Policy, timeout time.Duration) *Calls {
	return &Calls{policy: policy, timeout: timeout, calls: map[string]*Call{}, always: map[string]bool{}}
}

// Request records the model's call of tool (a full name), made at at and
// committed at offset, and says what becomes of it: Running if the
// policy allows it or a person allowed the tool for the session, Denied
// if the policy denies it, else Pending until a decision or its expiry.
// The policy the rules gave is kept in the call (Policy), for its event.
func (c *Calls) Request(id, turn, tool string, offset int64, at time.Time) (*Call, error) {
	return c.request(id, turn, tool, c.policy.Of(tool), offset, at)
}

func (c *Calls) request(id, turn, tool string, policy Decision, offset int64, at time.Time) (*Call, error) {
	if _, dup := c.calls[id]; dup {
		return nil, ErrDuplicate
	}
	call := &Call{ID: id, Turn: turn, Tool: tool, Policy: policy, Offset: offset, RequestedAt: at}
	switch {
	case policy == Deny:
		call.State = Denied
	case policy == Allow || c.always[tool]:
		call.State = Running
	default:
		call.State, call.ExpiresAt = Pending, at.Add(c.timeout)
	}
	c.calls[id] = call
	return call, nil
}

// Decide records by's decision on a pending call: the first decision
// wins, a later one is ErrDecided. allow_session allows this call and
// every later call of its tool in the session.
func (c *Calls) Decide(id string, d Decision, by string) (*Call, error) {
	call, ok := c.calls[id]
	switch {
	case !ok:
		return nil, ErrUnknownCall
	case d != Allow && d != AllowSession && d != Deny:
		return nil, ErrBadDecision
	case call.State != Pending:
		return call, ErrDecided
	}
	call.DecidedBy, call.ExpiresAt = by, time.Time{}
	switch d {
	case Deny:
		call.State = Denied
	case AllowSession:
		c.always[call.Tool] = true
		call.State = Running
	default:
		call.State = Running
	}
	return call, nil
}

// End records a running call's result: Completed or Failed.
func (c *Calls) End(id string, s State) error {
	call, ok := c.calls[id]
	switch {
	case !ok:
		return ErrUnknownCall
	case s != Completed && s != Failed:
		return ErrBadResult
	case call.State != Running:
		return ErrNotRunning
	}
	call.State = s
	return nil
}

// Expire ends, as expired, each pending call whose expiry is not after
// now, and returns them by offset.
func (c *Calls) Expire(now time.Time) []*Call {
	return c.endWhere(Expired, func(call *Call) bool { return call.State == Pending && !now.Before(call.ExpiresAt) })
}

// Cancel ends, as cancelled, every call of turn that has not ended (an
// interrupt, or the turn's end), and returns them by offset.
func (c *Calls) Cancel(turn string) []*Call {
	return c.endWhere(Cancelled, func(call *Call) bool { return call.Turn == turn && !call.State.Ended() })
}

func (c *Calls) endWhere(s State, match func(*Call) bool) []*Call {
	var out []*Call
	for _, call := range c.calls {
		if match(call) {
			call.State, call.ExpiresAt = s, time.Time{}
			out = append(out, call)
		}
	}
	sortByOffset(out)
	return out
}

// Pending lists the calls waiting for a decision, by offset.
func (c *Calls) Pending() []*Call {
	var out []*Call
	for _, call := range c.calls {
		if call.State == Pending {
			out = append(out, call)
		}
	}
	sortByOffset(out)
	return out
}

// Get returns a call, if the session has it.
func (c *Calls) Get(id string) (*Call, bool) {
	call, ok := c.calls[id]
	return call, ok
}

// AllowedForSession lists the tools a person allowed for the rest of the
// session, sorted: what a fork takes with it.
func (c *Calls) AllowedForSession() []string {
	out := make([]string, 0, len(c.always))
	for t := range c.always {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// AllowForSession allows tool for the rest of the session, as a fork's
// parent did.
func (c *Calls) AllowForSession(tool string) { c.always[tool] = true }

func sortByOffset(calls []*Call) {
	slices.SortFunc(calls, func(a, b *Call) int { return cmp.Compare(a.Offset, b.Offset) })
}

// Record is one committed event of a call, as Replay reads the log: a
// tool_call (Policy), an approval (Decision, Author) or a tool_result
// (State).
type Record struct {
	Kind     RecordKind
	CallID   string
	Turn     string
	Tool     string
	Policy   Decision
	Decision Decision
	Author   string
	State    State
	Offset   int64
	At       time.Time
}

// RecordKind is the type of a call's event.
type RecordKind string

const (
	RecordCall     RecordKind = "tool_call"
	RecordApproval RecordKind = "approval"
	RecordResult   RecordKind = "tool_result"
)

// Replay rebuilds the session's calls from its log's records, in order:
// after a restart, the calls still pending are pending again, with the
// expiry they had, and the tools allowed for the session are allowed.
// A record that does not fit (a result for no call, a second decision)
// is an error that names it: the log is the truth, and one that
// contradicts itself is not replayed in part.
func (c *Calls) Replay(recs []Record) error {
	for _, r := range recs {
		var err error
		switch r.Kind {
		case RecordCall:
			_, err = c.request(r.CallID, r.Turn, r.Tool, r.Policy, r.Offset, r.At)
		case RecordApproval:
			_, err = c.Decide(r.CallID, r.Decision, r.Author)
		case RecordResult:
			err = c.replayResult(r)
		default:
			err = errors.New("tools: an unknown record kind")
		}
		if err != nil {
			return &ReplayError{Offset: r.Offset, Err: err}
		}
	}
	return nil
}

// replayResult applies a tool_result: any ended state its call may reach
// from where it is.
func (c *Calls) replayResult(r Record) error {
	call, ok := c.calls[r.CallID]
	switch {
	case !ok:
		return ErrUnknownCall
	case call.State == Denied && r.State == Denied:
		return nil // a denied call's result says so
	case call.State.Ended():
		return ErrDecided
	case !r.State.Ended():
		return ErrBadResult
	}
	call.State, call.ExpiresAt = r.State, time.Time{}
	return nil
}

// ReplayError names the record Replay could not apply.
type ReplayError struct {
	Offset int64
	Err    error
}

func (e *ReplayError) Error() string {
	return "tools: replay at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
}

func (e *ReplayError) Unwrap() error { return e.Err }
