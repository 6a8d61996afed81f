package hub

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"albedo/db"
	"albedo/hub/peer"
	"albedo/wire"
)

// peerHandler is the hub as its bus's peer.Handler: what other nodes
// tell and ask this node.
type peerHandler struct{ h *Hub }

// Notice records that the other node was heard, and for a commit how
// late (Stats.Peers), then takes the notice.
func (p peerHandler) Notice(from string, n peer.Notice) {
	h := p.h
	if e, ok := n.(peer.Events); ok && e.At > 0 {
		h.stats.heard(from, max(time.Since(time.Unix(0, e.At)), 0), true)
	} else {
		h.stats.heard(from, 0, false)
	}
	switch n := n.(type) {
	case peer.Events:
		h.onEvents(n)
	case peer.Text:
		h.onText(n)
	case peer.Status:
		h.onStatus(n)
	case peer.Presence:
		h.onPresence(n)
	case peer.Repeat:
		h.onRepeat(n)
	case peer.Changes:
		h.ringChanges()
	case peer.Bots:
		h.onBots(n)
	case peer.BotReply:
		h.onBotReply(n)
	}
}

// Request answers a request addressed to this node.
func (p peerHandler) Request(r peer.Request, answer func(peer.Response)) { p.h.onRequest(r, answer) }

// Resumed looks at the store at once: nothing was heard while the bus
// was down.
func (p peerHandler) Resumed() {
	p.h.log.Info("the cluster's bus is back; reading the heads of served sessions")
	p.h.reconcileNow()
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
func (h *Hub) onEvents(n peer.Events) {
	ch := h.served(n.Session)
	if ch == nil || n.Last < n.First {
		return
	}
	if epoch := ch.epochOf(); n.Epoch != "" && epoch != "" && n.Epoch != epoch {
		// Another session under the id: the channel's was deleted on
		// another node, which this node has not read yet (advanceTo).
		h.sessionGone(ch.id)
		return
	}
	evs, ended, settings := noticeEvents(n)
	if len(evs) == 0 {
		h.approvals.wake(n.Session) // a decision may be among them
	}
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
func noticeEvents(n peer.Events) (evs []db.Event, ended []string, settings bool) {
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
			e.Type, e.Meta = kinds[i].Type, kinds[i].Meta()
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
func (h *Hub) onText(n peer.Text) {
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
func (h *Hub) onStatus(n peer.Status) {
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
func (h *Hub) onPresence(n peer.Presence) {
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
func (h *Hub) onRepeat(n peer.Repeat) {
	for _, p := range n.Sessions {
		p.Node = n.Node
		h.onPresence(p)
	}
}

// onRequest answers a request addressed to this node: an interrupt of a
// turn it runs, answered once the interrupted turn is committed, or a
// bot's (handleBotRequest).
func (h *Hub) onRequest(r peer.Request, answer func(peer.Response)) {
	switch r.Op {
	case peer.OpBotTurn, peer.OpBotCancel, peer.OpBotCheck:
		h.handleBotRequest(r, answer)
		return
	case peer.OpToolCall:
		h.serveRemoteTool(r, answer)
		return
	case peer.OpInterrupt:
	default:
		return
	}
	started := h.goTracked(func() {
		ctx, cancel := context.WithTimeout(h.ctx, requestTimeout)
		defer cancel()
		var resp peer.Response
		turn, running, err := h.interruptHere(ctx, r.Session, r.Reason)
		resp.Turn, resp.Running = turn, running
		if err != nil {
			resp.Error = wire.Errorf(wire.CodeInternal, "interrupt on node %s: %v", h.opts.Node, err)
		}
		answer(resp)
	})
	if !started {
		answer(peer.Response{Error: &wire.Error{Code: wire.CodeDaemonStopping, Message: "node " + h.opts.Node + " is stopping", Retryable: true}})
	}
}

// ask sends r to its node and waits, at most timeout, for the answer: its
// error, if any, is the answering node's own (a *wire.Error).
func (h *Hub) ask(ctx context.Context, r peer.Request, timeout time.Duration) (peer.Response, error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := h.bus.Ask(rctx, r)
	if err != nil {
		return peer.Response{}, err
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
	if !h.db.Shared() {
		return "", false, false, nil // no other node
	}
	owner, err := h.db.RunOwner(ctx, session)
	if err != nil || owner == "" || owner == h.opts.Node {
		return "", false, false, err
	}
	resp, err := h.ask(ctx, peer.Request{To: owner, Op: peer.OpInterrupt, Session: session, Reason: reason}, requestTimeout)
	if errors.Is(err, peer.ErrAlone) {
		return "", false, false, nil // no bus to ask it over: its turn runs on
	}
	return resp.Turn, resp.Running, true, err
}

// publishStatus tells the other nodes the run state of a session whose
// turns this node runs.
func (h *Hub) publishStatus(ch *channel) {
	ch.mu.Lock()
	st := ch.run.status()
	ch.mu.Unlock()
	h.bus.Publish(peer.Status{Node: h.opts.Node, Session: ch.id, Phase: st.Phase, TurnID: st.TurnID, Queued: st.Queued, LastTurn: st.LastTurn, Pending: st.Pending, Agent: st.Agent})
}

// publishPresence tells the other nodes this node's viewers of ch.
func (h *Hub) publishPresence(ch *channel) {
	n := presenceOf(ch, time.Now())
	n.Node = h.opts.Node
	h.bus.Publish(n)
}

// presenceOf is this node's viewers of ch, as a notice says them; the
// notice names the node (a peer.Repeat once for all its sessions).
func presenceOf(ch *channel, now time.Time) peer.Presence {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	people, total := ch.people.first(wire.MaxPresencePeople, now)
	return peer.Presence{Session: ch.id, People: people, Total: total, Viewers: ch.watching}
}

// presenceCoalesce is how long a node gathers changes to a session's
// viewers before it tells the others: a thousand joins are a few notices.
const presenceCoalesce = 100 * time.Millisecond

// publishPresenceSoon tells the other nodes this node's viewers of ch
// within presenceCoalesce: one notice for all the changes meanwhile.
func (h *Hub) publishPresenceSoon(ch *channel) {
	if !h.db.Shared() {
		return // no other node
	}
	ch.mu.Lock()
	due := ch.presenceToPeers
	ch.presenceToPeers = true
	ch.mu.Unlock()
	if due {
		return
	}
	time.AfterFunc(presenceCoalesce, func() {
		ch.mu.Lock()
		ch.presenceToPeers = false
		ch.mu.Unlock()
		h.publishPresence(ch)
	})
}

// relayText tells the other nodes a piece of a turn's reply: pos bytes
// came before it; full says text is the whole reply so far.
func (h *Hub) relayText(session, turn string, pos int, text string, full bool) {
	h.bus.Publish(peer.Text{Node: h.opts.Node, Session: session, Turn: turn, Pos: pos, Text: text, Full: full})
}

// relayRestart tells the other nodes that a turn's reply starts over.
func (h *Hub) relayRestart(session, turn string) {
	h.bus.Publish(peer.Text{Node: h.opts.Node, Session: session, Turn: turn, Full: true, Restart: true})
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
	if !h.db.Shared() {
		return func() {} // no other node
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
