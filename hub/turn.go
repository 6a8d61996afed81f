package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/provider"
	"albedo/wire"
)

// runState is a session's turn state machine. Guarded by its channel's mu.
//
//	idle ──input──▶ running ──reply done──▶ completed ─┐
//	                   │ ├──provider error──▶ failed   ├─▶ next queued input, or idle
//	                   │ └──interrupt───────▶ interrupted
//	(bots)  waiting ◀──┘ while no bot serves
type runState struct {
	queue   []queued         // accepted inputs not yet started, in acceptance order
	running bool             // a runner goroutine owns this session
	again   bool             // shared database: an input came while the runner ran (cluster_leases.go)
	phase   wire.Phase       // "" (idle), running, waiting, approval
	pending int              // calls of the running turn waiting for a decision
	agent   wire.AgentStatus // a coding agent's plan, thinking, command output (agent_turns.go)
	// agentSoon: a push of agent's status changes is due (agentStatusSoon)
	agentSoon bool
	turnID    string
	inputID   string
	cancel    context.CancelCauseFunc // of the running turn
	done      chan struct{}           // closed when the running turn is committed
	lastTurn  string

	streamTurn string
	streamText strings.Builder
}

type queued struct {
	inputID string
	turnID  string
	offset  int64    // of the input's user message
	lease   db.Lease // the node's claim on the session's turns (zero on SQLite)
	// resume: the turn started before the daemon stopped, waiting for
	// decisions on its tool calls; it goes on from its calls' rows.
	resume bool
	// step is the turn's place among those the input's mentions start
	// (participants.go); participant who answers it ("" the session's
	// provider), and more whether other steps follow.
	step        int
	participant string
	more        bool
	named       bool   // the session has participants: replies are authored by name
	who         string // who answers, when named: a profile's name or bot:NAME
	// continues is the offset of the reply the turn goes on from (a cut
	// off one: continue.go); 0 for a turn of its own.
	continues int64
}

// queuedOf is a stored input as the turn runner queues it, under lease l.
func queuedOf(in db.Input, l db.Lease) queued {
	return queued{inputID: in.InputID, turnID: in.TurnID, offset: in.MsgOffset, lease: l, step: in.Step, continues: in.Continues}
}

// interruption is the cancel cause of an interrupted turn.
type interruption struct{ reason string }

func (i *interruption) Error() string { return "interrupted: " + i.reason }

func (r *runState) status() wire.Status {
	st := wire.Status{Phase: r.phase, TurnID: r.turnID, Queued: len(r.queue), Pending: r.pending}
	if st.Phase == "" {
		st.Phase = wire.PhaseIdle
	}
	if r.lastTurn != "" {
		lt := r.lastTurn
		st.LastTurn = &lt
	}
	if !r.agent.Empty() {
		a := r.agent
		st.Agent = &a
	}
	return st
}

// streaming returns the turn whose reply is streaming and its text so far.
func (r *runState) streaming() (string, string) {
	if r.streamTurn == "" {
		return "", ""
	}
	return r.streamTurn, r.streamText.String()
}

// phase returns a session's phase without loading it.
func (h *Hub) phase(id string) wire.Phase {
	h.mu.Lock()
	ch := h.chans[id]
	h.mu.Unlock()
	if ch == nil {
		return wire.PhaseIdle
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.status().Phase
}

// enqueue queues the turn that answers an accepted input and starts the
// session's runner if it has none. Called from the commit hook, so inputs
// queue in acceptance (commit) order.
func (h *Hub) enqueue(ch *channel, q queued) {
	ch.mu.Lock()
	ch.run.queue = append(ch.run.queue, q)
	start := !ch.run.running && !h.stopping.Load()
	if start {
		ch.run.running = true
		h.runners.Add(1)
	}
	ch.mu.Unlock()
	if start {
		go h.runSession(ch)
	}
	h.runChanged(ch)
}

// runSession runs a session's queued turns one at a time until the queue is
// empty or the daemon stops.
func (h *Hub) runSession(ch *channel) {
	defer h.runners.Done()
	if err := ch.load(h.ctx, h.loads); err != nil {
		h.log.Error("load session for turns", "session", ch.id, "err", err)
		ch.mu.Lock()
		ch.run.running = false
		ch.mu.Unlock()
		return
	}
	for {
		ch.mu.Lock()
		if len(ch.run.queue) == 0 || h.stopping.Load() || ch.deleted {
			ch.run.running = false
			ch.mu.Unlock()
			h.runChanged(ch)
			return
		}
		q := ch.run.queue[0]
		ch.run.queue = ch.run.queue[1:]
		ch.mu.Unlock()
		h.runOne(ch, q)
	}
}

// runOne runs q's turn as the session's running one: interruptible, and
// its state in the session's status. It returns the turn's final state,
// "" if nothing was committed.
func (h *Hub) runOne(ch *channel, q queued) string {
	ctx, cancel := context.WithCancelCause(h.ctx)
	done := make(chan struct{})
	ch.mu.Lock()
	ch.run.phase, ch.run.turnID, ch.run.inputID = wire.PhaseRunning, q.turnID, q.inputID
	ch.run.cancel, ch.run.done = cancel, done
	ch.mu.Unlock()
	h.runChanged(ch)

	began := time.Now()
	outcome := h.runTurn(ctx, ch, q)
	if outcome != "" {
		h.stats.turnEnded(outcome, time.Since(began))
	}

	ch.mu.Lock()
	cancel(nil)
	close(done)
	ch.run.phase, ch.run.turnID, ch.run.inputID = "", "", ""
	ch.run.cancel, ch.run.done = nil, nil
	if outcome != "" {
		ch.run.lastTurn = outcome
	}
	ch.mu.Unlock()
	h.runChanged(ch)
	return outcome
}

// checkpointEvery bounds how much streamed text a crash can lose.
const checkpointEvery = time.Second

// runTurn asks the session's provider for a reply to q and commits the
// outcome. It returns the turn's final state ("" if nothing was committed,
// e.g. the session was deleted).
func (h *Hub) runTurn(ctx context.Context, ch *channel, q queued) string {
	bg := context.WithoutCancel(ctx) // commits must land even when the turn is cancelled
	sess, q, err := h.planStep(bg, ch, q)
	if !q.resume {
		if err := h.startTurn(bg, ch, q); err != nil {
			h.log.Warn("start turn", "session", ch.id, "turn", q.turnID, "err", err)
			return ""
		}
	}
	var p provider.Provider
	var req provider.Request
	var used int // the context the model is sent, as compaction counts it
	if err == nil {
		p, req, used, err = h.turnRequest(bg, ch, q, sess)
	}
	var text string
	var files []wire.Attachment // a bot's reply's
	req.Files = func(a []wire.Attachment) { files = a }
	var usage *wire.Usage // what the provider reported; nil: nothing
	req.Usage = func(u wire.Usage) {
		if pr, ok := p.(provider.Pricer); ok && pr.Prices() != nil {
			cost := pr.Prices().Cost(u)
			u.Cost = &cost
		}
		usage = &u
	}
	if err == nil {
		var more int
		text, more, err = h.steps(ctx, ch, q, p, req)
		used += more
	}
	if errors.Is(err, errSuspended) {
		h.log.Info("a turn waits for decisions on its tool calls; it goes on when the daemon starts again", "session", ch.id, "turn", q.turnID)
		return ""
	}
	var author string
	if p != nil {
		author = p.Author(req)
	}
	o := outcome(ctx, text, author, err)
	if q.named { // among participants, each reply is its participant's
		o.msg.Author, o.msg.AuthorID = wire.MentionName(req.Provider), wire.ParticipantID(req.Provider)
	}
	o.msg.Attachments = files
	o.turn.SetUsage(usage)
	if used > 0 {
		o.turn.Context = used + msgTokens(o.msg.Text) + provider.FileTokens(files)
	}
	defer func() {
		if o.turn.State == wire.TurnCompleted && p != nil {
			// Beside the session's next turns, not before them: a title
			// asked of the provider may take seconds.
			h.runners.Add(1)
			go func() {
				defer h.runners.Done()
				h.autoTitle(h.ctx, ch.id, p, req)
			}()
		}
	}()
	o.usage = db.TurnUsage{TurnID: q.turnID, Session: ch.id, AuthorID: req.AuthorID, Provider: req.Provider, Usage: usage}
	if q.more && o.turn.State != wire.TurnInterrupted {
		o.next = uuid.Must(uuid.NewV7()).String() // the next mentioned participant's turn
	}
	state := h.commitTurn(ctx, ch, q, o)
	h.turnEnded(q.turnID, state)
	if state != "" && o.next != "" && !h.db.Shared() {
		// Next, before the inputs queued after this one (on a shared
		// store the runner reads it from the input's row).
		next := q
		next.step, next.turnID, next.resume = q.step+1, o.next, false
		ch.mu.Lock()
		ch.run.queue = append([]queued{next}, ch.run.queue...)
		ch.mu.Unlock()
	}
	return state
}

// endWaiters are what waits for a turn's end to be committed (a bot's
// acknowledgement of its last reply), by turn id; each is called once, by
// turnEnded.
type endWaiters struct {
	mu sync.Mutex
	m  map[string][]func(error)
}

// afterTurnEnd calls f once the end of the turn this node runs is
// committed, or with an error if it could not be.
func (h *Hub) afterTurnEnd(turn string, f func(error)) {
	h.ends.mu.Lock()
	defer h.ends.mu.Unlock()
	if h.ends.m == nil {
		h.ends.m = map[string][]func(error){}
	}
	h.ends.m[turn] = append(h.ends.m[turn], f)
}

// turnEnded answers what waits for the turn's end: state is its final
// state, "" when the commit failed or the turn was dropped.
func (h *Hub) turnEnded(turn, state string) {
	h.ends.mu.Lock()
	fs := h.ends.m[turn]
	delete(h.ends.m, turn)
	h.ends.mu.Unlock()
	var err error
	if state == "" {
		err = wire.Errorf(wire.CodeNotServing, "the end of turn %q was not committed: the turn was interrupted, or runs again", turn)
	}
	for _, f := range fs {
		f(err)
	}
}

// startTurn commits the turn's start: its started event and the input's
// delivery running.
func (h *Hub) startTurn(ctx context.Context, ch *channel, q queued) error {
	_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		if err := tx.CheckRun(ctx, ch.id, q.lease); err != nil {
			return err
		}
		// Continues: clients show the turn's reply, as it streams, as the
		// rest of the reply it continues.
		ev := wire.Event{Type: wire.EventTurn, TurnID: q.turnID, InputID: q.inputID, State: wire.TurnStarted, Continues: q.continues}
		if q.named { // who answers it
			ev.Author = wire.MentionName(q.who)
		}
		if _, err := tx.Append(ctx, ch.id, ev); err != nil {
			return err
		}
		return tx.SetDelivery(ctx, ch.id, q.inputID, wire.DeliveryRunning, "")
	})
	return err
}

// modelAuthor is who wrote e, as a model is told: a guest (a write
// link's, who picked their own name) is marked so, since a model, like
// the people reading, would otherwise take a guest named as someone of
// the home for them.
func modelAuthor(e wire.Event) string {
	if wire.IsGuestAuthor(e.AuthorID) {
		return e.Author + " (guest)"
	}
	return e.Author
}

// turnRequest finds the session's provider and builds its request: the
// session's model, effort and system text, and its transcript up to q's
// input (transcript).
func (h *Hub) turnRequest(ctx context.Context, ch *channel, q queued, sess db.Session) (provider.Provider, provider.Request, int, error) {
	var req provider.Request
	name := cmp.Or(q.participant, sess.Provider)
	p, err := h.providers.Get(name)
	if err != nil {
		return nil, req, 0, err
	}
	req = provider.Request{Session: ch.id, TurnID: q.turnID, InputID: q.inputID, Model: sess.Model, Effort: sess.Effort,
		Temperature: sess.TemperatureOf(), Provider: h.resolved(name)}
	if q.participant != "" { // the session's model, effort and temperature are its provider's
		req.Model, req.Effort, req.Temperature = "", "", nil
	}
	system := sess.System
	if sp, ok := p.(provider.SystemPrompter); ok && system == "" {
		system = sp.System()
	}
	// A continued reply's model is sent the reply; a later step's, the
	// replies of the participants mentioned before.
	upto := max(q.offset, q.continues)
	if q.step > 0 {
		ch.mu.Lock()
		upto = max(upto, ch.head)
		ch.mu.Unlock()
	}
	evs, used, err := h.transcript(ctx, ch, p, &req, upto, system)
	if q.named {
		evs = asParticipant(evs, wire.ParticipantID(req.Provider), q.participant == "")
	}
	req.Messages = transcriptMessages(evs)
	h.loadFiles(ctx, p, req.Messages)
	for _, e := range evs {
		if e.Offset == q.offset {
			req.AuthorID = e.AuthorID // who asked: the turn's usage is theirs
		}
	}
	if system != "" {
		req.Messages = append([]provider.Message{{Role: wire.RoleSystem, Author: "system", Text: system}}, req.Messages...)
	}
	if q.continues > 0 {
		continueTranscript(p, &req)
	}
	return p, req, used, err
}

// errReplyTooLong ends a provider's stream whose reply passed MaxReply.
var errReplyTooLong = errors.New("reply too long")

// streamTurn runs the provider and relays its reply: each piece to the
// channel's cursors as a delta, and to the database as a checkpoint at
// most every checkpointEvery, so that a crash loses little. A reply that
// would pass MaxReply bytes is cut there and the turn fails, saying so.
// It returns the reply's text so far and the provider's error.
func (h *Hub) streamTurn(ctx context.Context, ch *channel, q queued, p provider.Provider, req provider.Request) (string, error) {
	bg := context.WithoutCancel(ctx)
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var text strings.Builder
	ch.mu.Lock()
	ch.run.streamTurn = q.turnID
	ch.run.streamText.Reset()
	ch.mu.Unlock()
	req.Waiting = func(w bool) {
		ch.mu.Lock()
		ch.run.phase = map[bool]wire.Phase{true: wire.PhaseWaiting, false: wire.PhaseRunning}[w]
		ch.mu.Unlock()
		h.runChanged(ch)
	}
	req.Restart = func() {
		text.Reset()
		ch.mu.Lock()
		ch.run.streamText.Reset()
		ch.mu.Unlock()
		h.replaceText(ch, q.turnID, "") // starts over: an empty partial
		h.relayRestart(ch.id, q.turnID)
	}
	defer h.relayWhole(ch, q.turnID)()
	last := time.Now()
	err := p.Stream(sctx, req, func(d string) {
		if d == "" || sctx.Err() != nil {
			return
		}
		if text.Len()+len(d) > h.opts.MaxReply {
			stop(errReplyTooLong)
			return
		}
		pos := text.Len()
		text.WriteString(d)
		ch.mu.Lock()
		ch.run.streamText.WriteString(d)
		ch.mu.Unlock()
		h.publishText(ch, q.turnID, d)
		h.relayText(ch.id, q.turnID, pos, d, false)
		if time.Since(last) >= checkpointEvery {
			last = time.Now()
			partial := text.String()
			_, err := h.db.Writer().Do(bg, func(tx *db.Tx) error {
				if err := tx.CheckRun(bg, ch.id, q.lease); err != nil {
					return err
				}
				return tx.SetPartial(bg, ch.id, q.inputID, partial)
			})
			if errors.Is(err, db.ErrLeaseLost) {
				stop(errLeaseLost)
			}
		}
	})
	if errors.Is(context.Cause(sctx), errReplyTooLong) {
		err = fmt.Errorf("the reply passed the limit of %d bytes and was cut there", h.opts.MaxReply)
	}
	return text.String(), err
}

// turnOutcome is how a turn ended: the reply's message (if it is kept),
// the closing turn event, and the input's delivery.
type turnOutcome struct {
	msg      wire.Event
	turn     wire.Event
	delivery string
	errText  string
	usage    db.TurnUsage // its row of usage, recorded with it
	// next is the turn id of the step after this one, when the input's
	// mentions start another turn: its delivery waits for that.
	next string
}

// outcome decides how a turn ended from what streamed and the provider's
// error. A reply that completed wins over a late interrupt.
func outcome(ctx context.Context, text, author string, err error) turnOutcome {
	o := turnOutcome{
		msg:      wire.Event{Type: wire.EventMessage, Role: wire.RoleAssistant, Author: author, Text: text},
		turn:     wire.Event{Type: wire.EventTurn},
		delivery: wire.DeliveryDone,
	}
	var intr *interruption
	switch {
	case err == nil:
		o.msg.State, o.turn.State = wire.MessageComplete, wire.TurnCompleted
	case errors.As(context.Cause(ctx), &intr):
		o.msg.State, o.turn.State, o.turn.Reason = wire.MessageInterrupted, wire.TurnInterrupted, intr.reason
		o.delivery = wire.DeliveryInterrupted
	default:
		o.msg.State, o.turn.State, o.turn.Error = wire.MessageFailed, wire.TurnFailed, err.Error()
		o.delivery, o.errText = wire.DeliveryFailed, err.Error()
	}
	return o
}

// commitTurn commits a turn's outcome: the reply (when it has text or
// completed), the closing turn event, and the input's delivery. It returns
// the turn's final state, or "" if the commit failed.
func (h *Hub) commitTurn(ctx context.Context, ch *channel, q queued, o turnOutcome) string {
	bg := context.WithoutCancel(ctx)
	o.msg.InputID, o.msg.TurnID, o.msg.Continues = q.inputID, q.turnID, q.continues
	o.turn.InputID, o.turn.TurnID = q.inputID, q.turnID
	if o.turn.State == wire.TurnFailed {
		h.log.Info("turn failed", "session", ch.id, "turn", q.turnID, "err", o.errText)
	}
	evs := []wire.Event{o.turn}
	if o.msg.Text != "" || len(o.msg.Attachments) > 0 || o.msg.State == wire.MessageComplete {
		evs = []wire.Event{o.msg, o.turn}
	}
	if errors.Is(context.Cause(ctx), errLeaseLost) {
		h.log.Warn("dropped a turn: another node took the session over", "session", ch.id, "turn", q.turnID)
		return ""
	}
	_, err := h.db.Writer().Do(bg, func(tx *db.Tx) error {
		if err := tx.CheckRun(bg, ch.id, q.lease); err != nil {
			return err
		}
		if _, err := tx.Append(bg, ch.id, evs...); err != nil {
			return err
		}
		if err := tx.RecordUsage(bg, o.usage); err != nil {
			return err
		}
		if o.next != "" {
			return tx.NextStep(bg, ch.id, q.inputID, q.step+1, o.next)
		}
		return tx.SetDelivery(bg, ch.id, q.inputID, o.delivery, o.errText)
	})
	if errors.Is(err, db.ErrLeaseLost) {
		h.log.Warn("dropped a turn: another node took the session over", "session", ch.id, "turn", q.turnID)
		return ""
	}
	if err != nil {
		h.log.Warn("commit turn", "session", ch.id, "turn", q.turnID, "err", err)
		return ""
	}
	return o.turn.State
}

// Interrupt stops the session's running turn, if any, waits until what it
// streamed is committed, and says which turn it was. In a cluster the
// node running the session's turns does it, asked over NATS.
func (h *Hub) Interrupt(ctx context.Context, session, reason string) (string, bool, error) {
	turn, running, err := h.interruptHere(ctx, session, reason)
	if err != nil || running {
		return turn, running, err
	}
	if turn, running, asked, err := h.interruptRemote(ctx, session, reason); asked {
		return turn, running, err
	}
	return "", false, nil
}

// interruptHere interrupts the session's turn if this node runs it.
func (h *Hub) interruptHere(ctx context.Context, session, reason string) (string, bool, error) {
	ch, werr := h.channel(ctx, session)
	if werr != nil {
		return "", false, werr
	}
	ch.mu.Lock()
	cancel, done, turn := ch.run.cancel, ch.run.done, ch.run.turnID
	ch.mu.Unlock()
	if cancel == nil {
		return "", false, nil
	}
	cancel(&interruption{reason: reason})
	select {
	case <-done:
	case <-ctx.Done():
		return turn, true, ctx.Err()
	}
	return turn, true, nil
}

// InterruptAll interrupts every running turn with reason and waits until
// each is committed and no runner is left. Inputs still queued stay queued
// for the next start. Used by the daemon's stop, after Stopping.
func (h *Hub) InterruptAll(ctx context.Context, reason string) {
	h.stopping.Store(true)
	for _, ch := range h.allChannels() {
		ch.mu.Lock()
		cancel := ch.run.cancel
		ch.mu.Unlock()
		if cancel != nil {
			cancel(&interruption{reason: reason})
		}
	}
	if h.WaitTurns(ctx) != nil {
		h.log.Warn("turns still running at stop", "err", ctx.Err())
	}
}

// cancelTurns stops the turns of a session just deleted and waits for its
// runner's current turn.
func (h *Hub) cancelTurns(id string) {
	h.mu.Lock()
	ch := h.chans[id]
	h.mu.Unlock()
	if ch == nil {
		return
	}
	ch.mu.Lock()
	ch.run.queue = nil
	cancel, done := ch.run.cancel, ch.run.done
	ch.mu.Unlock()
	if cancel != nil {
		cancel(&interruption{reason: "deleted"})
		<-done
	}
}
