package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"albedo/hub/peer"
	"albedo/hub/provider"
	"albedo/wire"
)

// Bot turns across the nodes of a cluster. A session's turns run on the
// node holding its lease, and a bot serves from whichever node its
// connection reached. When the turn's node has no serving connection of
// the bot and another node has one, the turn goes there over NATS:
//
//   - Nodes announce the bots they serve (peer.Bots) on every change and
//     every heartbeat; an announcement lapses after remoteTTL.
//   - The turn's node asks the bot's node to hand the turn to its bot
//     (peer.OpBotTurn). That node relays the bot's reply back
//     (peer.BotReply, addressed to the turn's node): text, then done or an
//     error, or "lost" when its connection drops — as a local turn would,
//     the turn then starts over with the next serving connection.
//   - A reply that ends the turn (done, or an error) is acknowledged to
//     the bot once the turn's node has committed that end: the done
//     asks for it (Ack), and the turn's node answers (Committed) after
//     its commit.
//   - An interrupt on the turn's node cancels it there (peer.OpBotCancel):
//     the bot's later replies get not_serving, as they would locally.
//   - The turn's node asks the bot's node every botCheckEvery whether it
//     still serves the turn (peer.OpBotCheck): a node that says no, or has
//     not answered botCheckMisses times running (it died), has lost it,
//     and its announcements are forgotten, so the turn goes at once to
//     the bot's next connection wherever it is (and waits for it when
//     there is none).

// remoteBots is what a node knows of other nodes' bots, and the turns it
// has handed to them or serves for them. Guarded by mu.
type remoteBots struct {
	mu      sync.Mutex
	nodes   map[string]map[string]time.Time   // bot → node → last announced
	gone    map[string]time.Time              // nodes that stopped answering → until when their notices are not believed
	waiting map[string]*remoteTurn            // turns this node handed out, by turn id
	served  map[string]*botTurn               // turns this node serves for another, by turn id
	acks    map[string]func(error)            // bots' ends of turns served here, waiting for the turn's node to commit them
	tools   map[string]map[string]remoteTools // bot → node → the tools it announced there (cluster_tools.go)
}

// remoteTurn collects a remote bot's replies to one turn for its Stream.
type remoteTurn struct {
	mu      sync.Mutex
	replies []peer.BotReply
	signal  chan struct{} // capacity 1
}

func (r *remoteTurn) add(rep peer.BotReply) {
	r.mu.Lock()
	r.replies = append(r.replies, rep)
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

func (r *remoteTurn) take() []peer.BotReply {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.replies
	r.replies = nil
	return out
}

// publishBots tells the other nodes which bots this node serves.
func (h *Hub) publishBots() {
	h.bots.mu.Lock()
	n := peer.Bots{Node: h.opts.Node, Bots: map[string]int{}}
	for name, cs := range h.bots.servers {
		if len(cs) > 0 {
			n.Bots[name] = len(cs)
		}
	}
	h.bots.mu.Unlock()
	n.Tools = h.localTools()
	h.bus.Publish(n)
}

// onBots keeps another node's bots; a bot newly served there, or
// announced again after its announcement lapsed (remoteServer no longer
// believed it: the node's heartbeats came late), wakes the turns waiting
// for it here.
func (h *Hub) onBots(n peer.Bots) {
	rb := &h.remote
	now := time.Now()
	var arrived []string
	rb.mu.Lock()
	if until, ok := rb.gone[n.Node]; ok {
		if now.Before(until) {
			rb.mu.Unlock()
			return // sent before it stopped answering, read after (nodeGone)
		}
		delete(rb.gone, n.Node)
	}
	rb.mu.Unlock()
	h.onTools(n.Node, n.Tools, now)
	rb.mu.Lock()
	if rb.nodes == nil {
		rb.nodes = map[string]map[string]time.Time{}
	}
	for name, nodes := range rb.nodes {
		if _, ok := n.Bots[name]; !ok {
			delete(nodes, n.Node)
		}
	}
	for name := range n.Bots {
		if rb.nodes[name] == nil {
			rb.nodes[name] = map[string]time.Time{}
		}
		if at, ok := rb.nodes[name][n.Node]; !ok || now.Sub(at) >= remoteTTL {
			arrived = append(arrived, name)
		}
		rb.nodes[name][n.Node] = now
	}
	rb.mu.Unlock()
	b := &h.bots
	b.mu.Lock()
	for _, name := range arrived {
		if ch := b.arrived[name]; ch != nil {
			close(ch)
			delete(b.arrived, name)
		}
	}
	b.mu.Unlock()
}

// remoteServer names a node that serves the bot, or "".
func (h *Hub) remoteServer(bot string) string {
	rb := &h.remote
	rb.mu.Lock()
	defer rb.mu.Unlock()
	for node, at := range rb.nodes[bot] {
		if time.Since(at) < remoteTTL {
			return node
		}
	}
	return ""
}

// onBotReply routes a remote bot's reply to the turn waiting for it here,
// or the turn's node's word that a bot's end is committed to that bot.
func (h *Hub) onBotReply(rep peer.BotReply) {
	if rep.To != h.opts.Node {
		return
	}
	if rep.Committed {
		var err error
		if rep.Error != "" {
			err = wire.Errorf(wire.CodeNotServing, "%s", rep.Error)
		}
		h.answerAck(rep.Turn, err)
		return
	}
	h.remote.mu.Lock()
	rt := h.remote.waiting[rep.Turn]
	h.remote.mu.Unlock()
	if rt != nil {
		rt.add(rep)
	}
}

// streamRemote hands a turn to the bot's connection on node and relays
// its replies, as botProvider.Stream does with a local one. errLost says
// the turn must start over.
func (b botProvider) streamRemote(ctx context.Context, node string, req provider.Request, msgs []wire.TurnMessage, emit func(string)) error {
	h := b.h
	rt := &remoteTurn{signal: make(chan struct{}, 1)}
	h.remote.mu.Lock()
	if h.remote.waiting == nil {
		h.remote.waiting = map[string]*remoteTurn{}
	}
	h.remote.waiting[req.TurnID] = rt
	h.remote.mu.Unlock()
	defer func() {
		h.remote.mu.Lock()
		delete(h.remote.waiting, req.TurnID)
		h.remote.mu.Unlock()
	}()
	if err := b.handOver(ctx, node, req, msgs); err != nil {
		return err
	}
	check := time.NewTicker(botCheckEvery)
	defer check.Stop()
	misses := 0
	var files []wire.Attachment
	ended := func(err error) error {
		if req.Files != nil {
			req.Files(files)
		}
		return err
	}
	for {
		select {
		case <-rt.signal:
		case <-check.C:
			switch serving, answered := h.stillServesTurn(ctx, node, req); {
			case serving:
				misses = 0
				continue
			case answered:
				return errLost // the bot's connection there is gone
			}
			if misses++; misses >= botCheckMisses {
				return errNodeGone
			}
			continue
		case <-ctx.Done():
			cancel, _ := json.Marshal(peer.BotTurn{Bot: b.name, From: h.opts.Node, Session: req.Session, Turn: req.TurnID})
			actx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, _ = h.ask(actx, peer.Request{To: node, Op: peer.OpBotCancel, Session: req.Session, Body: cancel}, botRequestTimeout)
			stop()
			return ctx.Err()
		}
		for _, rep := range rt.take() {
			if rep.Ack && (rep.Done || rep.Error != "") {
				h.afterTurnEnd(req.TurnID, func(err error) {
					back := peer.BotReply{To: node, Turn: req.TurnID, Committed: true}
					if err != nil {
						back.Error = err.Error()
					}
					h.bus.Publish(back)
				})
			}
			switch {
			case rep.Text != "":
				emit(rep.Text)
			case len(rep.Attachments) > 0:
				files = append(files, rep.Attachments...)
			case rep.Lost:
				return errLost
			case rep.Error != "":
				return ended(fmt.Errorf("bot: %s", rep.Error))
			case rep.Done:
				return ended(nil)
			}
		}
	}
}

// handOver asks node to hand the turn to its bot connection. While the
// answer is awaited the node is asked, as the turn's checks do, whether it
// is there at all: one that dies after its bot got the turn, before its
// answer left, would otherwise hold the turn for botRequestTimeout.
func (b botProvider) handOver(ctx context.Context, node string, req provider.Request, msgs []wire.TurnMessage) error {
	h := b.h
	body, _ := json.Marshal(peer.BotTurn{Bot: b.name, From: h.opts.Node, Session: req.Session, Turn: req.TurnID, Input: req.InputID, Messages: msgs, Earlier: req.Earlier})
	answer := make(chan error, 1)
	if !h.goTracked(func() {
		_, err := h.ask(ctx, peer.Request{To: node, Op: peer.OpBotTurn, Session: req.Session, Body: body}, botRequestTimeout)
		answer <- err
	}) {
		return errLost // this node is stopping
	}
	check := time.NewTicker(botCheckEvery)
	defer check.Stop()
	misses := 0
	for {
		select {
		case err := <-answer:
			if err != nil {
				h.log.Info("a bot's node did not take a turn", "node", node, "bot", b.name, "err", err)
				return errLost
			}
			return nil
		case <-check.C:
			if _, answered := h.stillServesTurn(ctx, node, req); answered {
				misses = 0
			} else if misses++; misses >= botCheckMisses {
				h.log.Info("a bot's node stopped answering while it took a turn", "node", node, "bot", b.name)
				return errNodeGone
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// botRequestTimeout bounds handing a turn to a bot's node, or cancelling
// it there: the node answers at once, before the bot replies.
const botRequestTimeout = 10 * time.Second

// botCheckEvery is how often the turn's node asks the bot's node whether
// it still serves the turn; botCheckMisses checks unanswered, or one
// answered no, and the turn is lost. A node that died is found within
// about a second, not when its announcements lapse (remoteTTL).
const (
	botCheckEvery  = 400 * time.Millisecond
	botCheckMisses = 2
)

// stillServesTurn asks node whether it still serves the turn of req, and
// says whether it answered at all.
func (h *Hub) stillServesTurn(ctx context.Context, node string, req provider.Request) (serving, answered bool) {
	body, _ := json.Marshal(peer.BotTurn{From: h.opts.Node, Session: req.Session, Turn: req.TurnID})
	resp, err := h.ask(ctx, peer.Request{To: node, Op: peer.OpBotCheck, Session: req.Session, Body: body}, botCheckEvery)
	return err == nil && resp.Running, err == nil
}

// errNodeGone is errLost when the bot's node stopped answering.
var errNodeGone = fmt.Errorf("%w: its node does not answer", errLost)

// nodeGone forgets what node announced of its bots, and believes none of
// its notices for remoteTTL: one it sent before it died may still be read
// after, and a turn sent back there would wait botRequestTimeout for an
// answer that never comes. A node that comes back announces again once
// that has passed.
func (h *Hub) nodeGone(node string) {
	h.forgetBotNode(node)
	rb := &h.remote
	rb.mu.Lock()
	if rb.gone == nil {
		rb.gone = map[string]time.Time{}
	}
	rb.gone[node] = time.Now().Add(remoteTTL)
	rb.mu.Unlock()
}

// forgetBotNode forgets what node announced of its bots, until it
// announces them again: a turn that lost its bot there looks elsewhere.
func (h *Hub) forgetBotNode(node string) {
	rb := &h.remote
	rb.mu.Lock()
	for _, nodes := range rb.nodes {
		delete(nodes, node)
	}
	for _, nodes := range rb.tools {
		delete(nodes, node)
	}
	rb.mu.Unlock()
}

// serveRemoteTurn hands a turn another node runs to a bot connected here
// and relays its replies there.
func (h *Hub) serveRemoteTurn(r peer.BotTurn) *wire.Error {
	c, _ := h.bots.pick(r.Bot)
	if c == nil {
		return wire.Errorf(wire.CodeNotServing, "no connection of bot %q on node %s", r.Bot, h.opts.Node)
	}
	reply := func(rep peer.BotReply) {
		rep.To, rep.Turn = r.From, r.Turn
		h.bus.Publish(rep)
	}
	t := &botTurn{session: r.Session, turnID: r.Turn, emit: func(s string) { reply(peer.BotReply{Text: s}) }, done: make(chan error, 1),
		files: func(a []wire.Attachment) { reply(peer.BotReply{Attachments: a}) }}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return wire.Errorf(wire.CodeNotServing, "bot %q's connection on node %s closed", r.Bot, h.opts.Node)
	}
	c.turns[r.Turn] = t
	c.mu.Unlock()
	h.remote.mu.Lock()
	if h.remote.served == nil {
		h.remote.served = map[string]*botTurn{}
	}
	h.remote.served[r.Turn] = t
	h.remote.mu.Unlock()
	forget := func() {
		h.remote.mu.Lock()
		delete(h.remote.served, r.Turn)
		h.remote.mu.Unlock()
	}
	started := h.goTracked(func() {
		var err error
		select {
		case err = <-t.done:
		case <-h.ctx.Done():
			err = errLost // this node is stopping: the turn's node looks elsewhere
		}
		acked := t.takeAcked()
		switch {
		case errors.Is(err, errLost):
			forget()
			reply(peer.BotReply{Lost: true})
			return
		case errors.Is(err, errCancelled):
			forget()
			if acked != nil {
				acked(errTurnEnded(r.Turn))
			}
			return
		}
		// Still served, for the checks, until the end has surely reached
		// the turn's node: a check answered no while the end is on its
		// way would start the turn over.
		time.AfterFunc(botRequestTimeout, forget)
		end := peer.BotReply{Done: err == nil, Ack: acked != nil}
		if err != nil {
			end.Error = strings.TrimPrefix(err.Error(), "bot: ")
		}
		if acked != nil {
			h.awaitAck(r.Turn, acked)
		}
		reply(end)
	})
	if !started {
		c.mu.Lock()
		delete(c.turns, r.Turn)
		c.mu.Unlock()
		forget()
		return wire.Errorf(wire.CodeNotServing, "node %s is stopping", h.opts.Node)
	}
	c.ReplyJSON(wire.TurnPush{Op: wire.PushTurn, Session: r.Session, TurnID: r.Turn, InputID: r.Input, Messages: r.Messages, Earlier: r.Earlier})
	return nil
}

// awaitAck keeps a bot's acknowledgement of its end of a turn served here
// until the turn's node says the end is committed (onBotReply), or for
// botRequestTimeout: a node that died meanwhile commits nothing, and the
// turn runs again elsewhere.
func (h *Hub) awaitAck(turn string, acked func(error)) {
	h.remote.mu.Lock()
	if h.remote.acks == nil {
		h.remote.acks = map[string]func(error){}
	}
	h.remote.acks[turn] = acked
	h.remote.mu.Unlock()
	time.AfterFunc(botRequestTimeout, func() {
		h.answerAck(turn, wire.Errorf(wire.CodeNotServing, "the node running turn %q did not confirm its end within %v", turn, botRequestTimeout))
	})
}

// answerAck answers the acknowledgement waiting for turn, once.
func (h *Hub) answerAck(turn string, err error) {
	h.remote.mu.Lock()
	acked := h.remote.acks[turn]
	delete(h.remote.acks, turn)
	h.remote.mu.Unlock()
	if acked != nil {
		acked(err)
	}
}

// errCancelled ends a turn served for another node that cancelled it.
var errCancelled = errors.New("cancelled by the turn's node")

// cancelRemoteTurn ends a turn served here for another node.
func (h *Hub) cancelRemoteTurn(turn string) {
	h.remote.mu.Lock()
	t := h.remote.served[turn]
	h.remote.mu.Unlock()
	if t != nil {
		t.finish(errCancelled)
	}
}

// handleBotRequest answers the bot requests of onRequest.
func (h *Hub) handleBotRequest(r peer.Request, answer func(peer.Response)) {
	var br peer.BotTurn
	var resp peer.Response
	if err := json.Unmarshal(r.Body, &br); err != nil {
		resp.Error = wire.Errorf(wire.CodeBadRequest, "bot request: %v", err)
	} else if r.Op == peer.OpBotTurn {
		resp.Error = h.serveRemoteTurn(br)
	} else if r.Op == peer.OpBotCheck {
		h.remote.mu.Lock()
		resp.Running = h.remote.served[br.Turn] != nil
		h.remote.mu.Unlock()
	} else {
		h.cancelRemoteTurn(br.Turn)
	}
	answer(resp)
}
