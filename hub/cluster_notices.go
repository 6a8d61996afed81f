package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"albedo/db"
	"albedo/wire"
)

// startBus subscribes to the other nodes' notices. Called by Start,
// before the daemon serves.
func (h *Hub) startBus() error {
	subs := []struct {
		subject string
		handle  func(*nats.Msg)
	}{
		{subjEvents, decoded(h, h.onEvents)},
		{subjText, decoded(h, h.onText)},
		{subjStatus, decoded(h, h.onStatus)},
		{subjPresence, decoded(h, h.onPresence)},
		{subjRepeat, decoded(h, h.onRepeat)},
		{subjChanges, decoded(h, h.onChanges)},
		{subjRequest, h.onRequest},
		{subjBots, decoded(h, h.onBots)},
		{subjBotReply, decoded(h, h.onBotReply)},
	}
	for _, s := range subs {
		if _, err := h.bus.nc.Subscribe(h.bus.subj(s.subject), s.handle); err != nil {
			return fmt.Errorf("subscribe to %s: %w", s.subject, err)
		}
	}
	// Nothing was heard while NATS was away: look at the store at once.
	h.bus.nc.SetReconnectHandler(func(nc *nats.Conn) {
		h.log.Info("NATS reconnected; reading the heads of served sessions", "url", nc.ConnectedUrlRedacted())
		h.reconcileNow()
	})
	if !h.bus.nc.IsConnected() {
		return nil // NATS is not up yet: the subscriptions are made when it is
	}
	return h.bus.nc.Flush()
}

// decoded adapts a handler of one notice type to NATS, skipping the
// node's own notices unread and dropping any it cannot read. It records
// that the other node was heard, and, for a notice of a commit, how late
// (Stats.Peers): once a notice.
func decoded[T any](h *Hub, handle func(T)) func(*nats.Msg) {
	return func(m *nats.Msg) {
		node := m.Header.Get(nodeHeader)
		if node == h.opts.Node {
			return
		}
		var n T
		if json.Unmarshal(m.Data, &n) != nil {
			h.stats.heard(node, 0, false)
			return
		}
		if c, ok := any(n).(interface{ committedAt() int64 }); ok && c.committedAt() > 0 {
			h.stats.heard(node, max(time.Since(time.Unix(0, c.committedAt())), 0), true)
		} else {
			h.stats.heard(node, 0, false)
		}
		handle(n)
	}
}

// served returns the channel of a session this node serves (someone
// watches it here, or it runs its turns), or nil: a node keeps no state
// for the sessions it does not serve, and reads the store when it starts
// to.
func (h *Hub) served(session string) *channel {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.chans[session]
}

// onEvents takes another node's commit into the session's channel: the
// events it does not have yet into the ring, or, when the notice carries
// none, the new head, which its cursors then page to from the store.
func (h *Hub) onEvents(n evNotice) {
	ch := h.served(n.Session)
	if ch == nil || n.Last < n.First {
		return
	}
	evs, ended, settings := noticeEvents(n)
	h.advance(ch, n.Last, evs, ended)
	if settings || len(evs) == 0 {
		h.settingsReads.due(h, n.Session) // its model, effort and version, for status pushes
	}
}

// settingsReads are the sessions whose settings onEvents has to read
// again from the store, read by one goroutine at a time: a flood of
// notices starts one goroutine, not one each, and the set holds each
// session once.
type settingsReads struct {
	mu      sync.Mutex
	pending map[string]struct{}
	running bool

	active, mostActive atomic.Int32 // readers running now, and at most at once (tests look)
}

// due adds session to the set, starting its reader if none runs.
func (r *settingsReads) due(h *Hub, session string) {
	r.mu.Lock()
	if r.pending == nil {
		r.pending = map[string]struct{}{}
	}
	r.pending[session] = struct{}{}
	start := !r.running
	r.running = true
	r.mu.Unlock()
	if start && !h.goTracked(func() { r.read(h) }) {
		r.stop()
	}
}

// read reads each pending session's settings until none is left or the
// hub closes.
func (r *settingsReads) read(h *Hub) {
	if n := r.active.Add(1); n > r.mostActive.Load() {
		r.mostActive.Store(n)
	}
	defer r.active.Add(-1)
	for h.ctx.Err() == nil {
		r.mu.Lock()
		session, ok := "", false
		for session = range r.pending {
			ok = true
			break
		}
		if !ok {
			r.running = false
			r.mu.Unlock()
			return
		}
		delete(r.pending, session)
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
		if s, err := h.db.Session(ctx, session); err == nil {
			h.settingsChanged(s)
		}
		cancel()
	}
	r.stop()
}

// stop forgets what is pending: the hub is closing.
func (r *settingsReads) stop() {
	r.mu.Lock()
	clear(r.pending)
	r.running = false
	r.mu.Unlock()
}

// noticeEvents returns the events a notice carries (none when it carries
// them not all: the cursors then read the store), the turns they close,
// and whether one is a settings event. Each event's type and what drives
// turns come from the notice's kinds, so that no event's JSON is decoded
// here; a notice without them (from a node that sends none) has its
// events' JSON read instead.
func noticeEvents(n evNotice) (evs []db.Event, ended []string, settings bool) {
	if int64(len(n.Events)) != n.Last-n.First+1 {
		return nil, nil, false
	}
	kinds := n.Kinds
	if len(kinds) != len(n.Events) {
		kinds = nil
	}
	for i, raw := range n.Events {
		e := db.Event{Session: n.Session, Offset: n.First + int64(i), JSON: raw}
		if kinds != nil {
			e.Type, e.Meta = kinds[i].Type, kinds[i].meta()
		} else {
			var t struct {
				Type wire.EventType `json:"type"`
			}
			if json.Unmarshal(raw, &t) != nil {
				return nil, nil, false
			}
			e.Type = t.Type
		}
		if m := metaOf(e); m.ends() {
			ended = append(ended, m.TurnID)
		}
		settings = settings || e.Type == wire.EventSettings
		evs = append(evs, e)
	}
	return evs, ended, settings
}

// advance moves a channel to head with the events evs (those it already
// has are skipped; none means the cursors read the store) and wakes its
// cursors. ended lists the turns the events close.
func (h *Hub) advance(ch *channel, head int64, evs []db.Event, ended []string) {
	ch.mu.Lock()
	if head <= ch.head {
		ch.mu.Unlock()
		return
	}
	if len(evs) > 0 && evs[0].Offset > ch.head+1 {
		evs = nil // a gap before them: the ring restarts when the cursors have read it from the store
	}
	for len(evs) > 0 && evs[0].Offset <= ch.head {
		evs = evs[1:]
	}
	if len(evs) == 0 {
		ch.head = head
	}
	ch.mu.Unlock()
	h.deliver(ch, evs, ended)
	if len(evs) == 0 {
		h.wakeAll(ch)
	}
}

// wakeAll marks every cursor of ch ready, to read what is new.
func (h *Hub) wakeAll(ch *channel) { h.markAll(ch, func(*sub, int64) {}) }

// onText relays the streaming reply of a turn another node runs, so that
// this node's viewers see it as that node's do. Deltas must follow one
// another (Pos); after a lost one this node shows nothing more of the
// reply until the next whole text, which the running node sends every
// second while the reply grows (relayWhole).
func (h *Hub) onText(n textNotice) {
	ch := h.served(n.Session)
	if ch == nil {
		return
	}
	ch.mu.Lock()
	if ch.run.running || n.Turn == ch.endedTurn {
		ch.mu.Unlock()
		return
	}
	var replace, appendIt bool
	switch {
	case n.Full && !n.Restart && n.Turn == ch.run.streamTurn && strings.HasPrefix(ch.run.streamText.String(), n.Text):
		// What this node shows already (relayWhole's snapshot, sent
		// beside the deltas, may come after one that followed it).
	case n.Full:
		ch.run.streamTurn = n.Turn
		ch.run.streamText.Reset()
		ch.run.streamText.WriteString(n.Text)
		replace = true
	case n.Turn == ch.run.streamTurn && n.Pos == ch.run.streamText.Len():
		ch.run.streamText.WriteString(n.Text)
		appendIt = true
	case n.Pos == 0:
		ch.run.streamTurn = n.Turn
		ch.run.streamText.Reset()
		ch.run.streamText.WriteString(n.Text)
		appendIt = true
	default: // a delta was lost: wait for the whole text
		ch.run.streamTurn = ""
		ch.run.streamText.Reset()
	}
	ch.mu.Unlock()
	switch {
	case replace:
		h.replaceText(ch, n.Turn, n.Text)
	case appendIt:
		h.publishText(ch, n.Turn, n.Text)
	}
}

// onStatus keeps the run state the node running a session's turns says.
func (h *Hub) onStatus(n statusNotice) {
	ch := h.served(n.Session)
	if ch == nil {
		return
	}
	ch.mu.Lock()
	ch.remoteRun, ch.remoteRunAt = &n, time.Now()
	ch.mu.Unlock()
	h.statusChanged(ch)
}

// onPresence keeps another node's viewers of a session.
func (h *Hub) onPresence(n presenceNotice) {
	ch := h.served(n.Session)
	if ch == nil {
		return
	}
	ch.mu.Lock()
	old, had := ch.remoteViewers[n.Node]
	if n.Viewers == 0 {
		delete(ch.remoteViewers, n.Node)
	} else {
		if ch.remoteViewers == nil {
			ch.remoteViewers = map[string]remoteViewers{}
		}
		ch.remoteViewers[n.Node] = remoteViewers{people: n.People, total: n.Total, viewers: n.Viewers, at: time.Now()}
	}
	// A node repeats its viewers every heartbeat (repeat): a repeat that
	// changes nothing only keeps them alive, and marks no cursor. Each
	// marking is a write to every viewer of the session on this node.
	same := had && n.Viewers > 0 && old.viewers == n.Viewers && old.total == n.Total && slices.Equal(old.people, n.People)
	changed := (had || n.Viewers > 0) && !same
	if changed {
		ch.presence = nil
	}
	ch.mu.Unlock()
	if changed {
		h.presenceSoon(ch) // a crowd on three nodes is three notices per coalescing
	}
}

// onRepeat takes another node's repeated viewers of many sessions, each
// as its own notice.
func (h *Hub) onRepeat(n repeatNotice) {
	for _, p := range n.Sessions {
		p.Node = n.Node
		h.onPresence(p)
	}
}

// onChanges has this node read the store's changes now.
func (h *Hub) onChanges(changesNotice) { h.ringChanges() }

// onRequest answers a request addressed to this node: an interrupt of a
// turn it runs, answered once the interrupted turn is committed.
func (h *Hub) onRequest(m *nats.Msg) {
	var r request
	if json.Unmarshal(m.Data, &r) != nil || r.To != h.opts.Node {
		return
	}
	switch r.Op {
	case "bot-turn", "bot-cancel", "bot-check":
		h.handleBotRequest(m, r)
		return
	case "interrupt":
	default:
		return
	}
	started := h.goTracked(func() {
		ctx, cancel := context.WithTimeout(h.ctx, requestTimeout)
		defer cancel()
		var resp response
		turn, running, err := h.interruptHere(ctx, r.Session, r.Reason)
		resp.Turn, resp.Running = turn, running
		if err != nil {
			resp.Error = wire.Errorf(wire.CodeInternal, "interrupt on node %s: %v", h.opts.Node, err)
		}
		data, _ := json.Marshal(resp)
		_ = m.Respond(data)
	})
	if !started {
		data, _ := json.Marshal(response{Error: &wire.Error{Code: wire.CodeDaemonStopping, Message: "node " + h.opts.Node + " is stopping", Retryable: true}})
		_ = m.Respond(data)
	}
}

// ask sends r to its node and waits, at most timeout, for the answer: its
// error, if any, is the answering node's own (a *wire.Error).
func (h *Hub) ask(ctx context.Context, r request, timeout time.Duration) (response, error) {
	data, _ := json.Marshal(r)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	msg, err := h.bus.nc.RequestWithContext(rctx, h.bus.subj(subjRequest), data)
	if err != nil {
		return response{}, fmt.Errorf("ask node %s to %s: %w", r.To, r.Op, err)
	}
	var resp response
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return response{}, fmt.Errorf("node %s's answer to %s: %w", r.To, r.Op, err)
	}
	if resp.Error != nil {
		return resp, resp.Error
	}
	return resp, nil
}

// requestTimeout bounds a request to another node.
const requestTimeout = 30 * time.Second

// interruptRemote asks the node running the session's turns to interrupt
// it. ok is false when no other node runs them.
func (h *Hub) interruptRemote(ctx context.Context, session, reason string) (turn string, running, ok bool, _ error) {
	if h.bus == nil {
		return "", false, false, nil
	}
	owner, err := h.db.RunOwner(ctx, session)
	if err != nil || owner == "" || owner == h.opts.Node {
		return "", false, false, err
	}
	resp, err := h.ask(ctx, request{To: owner, Op: "interrupt", Session: session, Reason: reason}, requestTimeout)
	return resp.Turn, resp.Running, true, err
}

// publishStatus tells the other nodes the run state of a session whose
// turns this node runs.
func (h *Hub) publishStatus(ch *channel) {
	if h.bus == nil {
		return
	}
	ch.mu.Lock()
	st := ch.run.status()
	ch.mu.Unlock()
	h.bus.publish(subjStatus, statusNotice{Node: h.opts.Node, Session: ch.id, Phase: st.Phase, TurnID: st.TurnID, Queued: st.Queued, LastTurn: st.LastTurn})
}

// publishPresence tells the other nodes this node's viewers of ch.
func (h *Hub) publishPresence(ch *channel) {
	if h.bus == nil {
		return
	}
	n := presenceOf(ch, time.Now())
	n.Node = h.opts.Node
	h.bus.publish(subjPresence, n)
}

// presenceOf is this node's viewers of ch, as a notice says them; the
// notice names the node (a repeatNotice once for all its sessions).
func presenceOf(ch *channel, now time.Time) presenceNotice {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	people, total := ch.people.first(wire.MaxPresencePeople, now)
	return presenceNotice{Session: ch.id, People: people, Total: total, Viewers: ch.watching}
}

// publishPresenceSoon tells the other nodes this node's viewers of ch
// within presenceCoalesce: one notice for all the changes meanwhile.
func (h *Hub) publishPresenceSoon(ch *channel) {
	if h.bus == nil {
		return
	}
	h.bus.mu.Lock()
	if h.bus.pending[ch] {
		h.bus.mu.Unlock()
		return
	}
	h.bus.pending[ch] = true
	h.bus.mu.Unlock()
	time.AfterFunc(presenceCoalesce, func() {
		h.bus.mu.Lock()
		delete(h.bus.pending, ch)
		h.bus.mu.Unlock()
		h.publishPresence(ch)
	})
}

// relayText tells the other nodes a piece of a turn's reply: pos bytes
// came before it; full says text is the whole reply so far.
func (h *Hub) relayText(session, turn string, pos int, text string, full bool) {
	if h.bus == nil {
		return
	}
	h.bus.publish(subjText, textNotice{Node: h.opts.Node, Session: session, Turn: turn, Pos: pos, Text: text, Full: full})
}

// relayRestart tells the other nodes that a turn's reply starts over.
func (h *Hub) relayRestart(session, turn string) {
	if h.bus == nil {
		return
	}
	h.bus.publish(subjText, textNotice{Node: h.opts.Node, Session: session, Turn: turn, Full: true, Restart: true})
}

// OnTokensChanged sets what closes this node's connections of tokens
// another node revoked (4401) or narrowed (to reconnect with their new
// scope): the API server's.
func (h *Hub) OnTokensChanged(f func(revoked, narrowed []string)) { h.tokenHook.Store(&f) }

// relayWhole tells the other nodes the turn's whole text so far while it
// streams: every checkpointEvery when the reply grew, and every
// heartbeatEvery when it did not (a provider that pauses), so that a node
// that lost a delta, or whose viewer came during the pause, shows the
// reply so far (onText) within a heartbeat. It returns what stops it.
func (h *Hub) relayWhole(ch *channel, turn string) (stop func()) {
	if h.bus == nil {
		return func() {}
	}
	done := make(chan struct{})
	h.goTracked(func() {
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		sent, at := 0, time.Now()
		for {
			select {
			case <-done:
				return
			case <-h.ctx.Done():
				return
			case <-t.C:
			}
			ch.mu.Lock()
			var text string
			if n := ch.run.streamText.Len(); ch.run.streamTurn == turn && (n != sent || time.Since(at) >= heartbeatEvery) {
				text = ch.run.streamText.String()
			}
			ch.mu.Unlock()
			if text != "" {
				sent, at = len(text), time.Now()
				h.relayText(ch.id, turn, 0, text, true)
			}
		}
	})
	return func() { close(done) }
}
