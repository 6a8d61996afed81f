package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"albedo/hub/provider"
	"albedo/wire"
)

// Bot turns across the nodes of a cluster. A session's turns run on the
// node holding its lease, and a bot serves from whichever node its
// connection reached. When the turn's node has no serving connection of
// the bot and another node has one, the turn goes there over NATS:
//
//   - Nodes announce the bots they serve (subjBots) on every change and
//     every heartbeat; an announcement lapses after remoteTTL.
//   - The turn's node asks the bot's node to hand the turn to its bot
//     (request op "bot-turn"). That node relays the bot's reply back
//     (subjBotReply, addressed to the turn's node): text, then done or an
//     error, or "lost" when its connection drops — as a local turn would,
//     the turn then starts over with the next serving connection.
//   - An interrupt on the turn's node cancels it there ("bot-cancel"):
//     the bot's later replies get not_serving, as they would locally.
//   - A bot node that dies stops announcing the bot: the turn's node
//     takes the turn for lost when the announcement lapses.

const (
	subjBots     = "bots"     // botsNotice: the bots a node serves
	subjBotReply = "botreply" // botReply: a remote bot's answer, to the turn's node
)

type botsNotice struct {
	Node string         `json:"node"`
	Bots map[string]int `json:"bots"` // name → serving connections
}

type botReply struct {
	To    string `json:"to"`
	Turn  string `json:"turn"`
	Text  string `json:"text,omitempty"`
	Done  bool   `json:"done,omitempty"`
	Error string `json:"error,omitempty"`
	Lost  bool   `json:"lost,omitempty"`
}

// botTurnRequest is the body of a "bot-turn" request.
type botTurnRequest struct {
	Bot      string             `json:"bot"`
	From     string             `json:"from"`
	Session  string             `json:"session"`
	Turn     string             `json:"turn"`
	Input    string             `json:"input"`
	Messages []wire.TurnMessage `json:"messages"`
}

// remoteBots is what a node knows of other nodes' bots, and the turns it
// has handed to them or serves for them. Guarded by mu.
type remoteBots struct {
	mu      sync.Mutex
	nodes   map[string]map[string]time.Time // bot → node → last announced
	waiting map[string]*remoteTurn          // turns this node handed out, by turn id
	served  map[string]*botTurn             // turns this node serves for another, by turn id
}

// remoteTurn collects a remote bot's replies to one turn for its Stream.
type remoteTurn struct {
	mu      sync.Mutex
	replies []botReply
	signal  chan struct{} // capacity 1
}

func (r *remoteTurn) add(rep botReply) {
	r.mu.Lock()
	r.replies = append(r.replies, rep)
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

func (r *remoteTurn) take() []botReply {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.replies
	r.replies = nil
	return out
}

// publishBots tells the other nodes which bots this node serves.
func (h *Hub) publishBots() {
	if h.bus == nil {
		return
	}
	h.bots.mu.Lock()
	n := botsNotice{Node: h.opts.Node, Bots: map[string]int{}}
	for name, cs := range h.bots.servers {
		if len(cs) > 0 {
			n.Bots[name] = len(cs)
		}
	}
	h.bots.mu.Unlock()
	h.bus.publish(subjBots, n)
}

// onBots keeps another node's bots; a bot newly served there wakes the
// turns waiting for it here.
func (h *Hub) onBots(n botsNotice) {
	rb := &h.remote
	now := time.Now()
	var arrived []string
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
		if _, ok := rb.nodes[name][n.Node]; !ok {
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

// stillServes says whether node has announced the bot lately.
func (h *Hub) stillServes(node, bot string) bool {
	rb := &h.remote
	rb.mu.Lock()
	defer rb.mu.Unlock()
	at, ok := rb.nodes[bot][node]
	return ok && time.Since(at) < remoteTTL
}

// onBotReply routes a remote bot's reply to the turn waiting for it here.
func (h *Hub) onBotReply(rep botReply) {
	if rep.To != h.opts.Node {
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
	body, _ := json.Marshal(botTurnRequest{Bot: b.name, From: h.opts.Node, Session: req.Session, Turn: req.TurnID, Input: req.InputID, Messages: msgs})
	if _, err := h.ask(ctx, request{To: node, Op: "bot-turn", Session: req.Session, Body: body}, botRequestTimeout); err != nil {
		h.log.Info("a bot's node did not take a turn", "node", node, "bot", b.name, "err", err)
		return errLost
	}
	check := time.NewTicker(heartbeatEvery)
	defer check.Stop()
	for {
		select {
		case <-rt.signal:
		case <-check.C:
			if !h.stillServes(node, b.name) {
				return errLost // the bot's node is gone
			}
			continue
		case <-ctx.Done():
			cancel, _ := json.Marshal(botTurnRequest{Bot: b.name, From: h.opts.Node, Session: req.Session, Turn: req.TurnID})
			actx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, _ = h.ask(actx, request{To: node, Op: "bot-cancel", Session: req.Session, Body: cancel}, botRequestTimeout)
			stop()
			return ctx.Err()
		}
		for _, rep := range rt.take() {
			switch {
			case rep.Text != "":
				emit(rep.Text)
			case rep.Lost:
				return errLost
			case rep.Error != "":
				return fmt.Errorf("bot: %s", rep.Error)
			case rep.Done:
				return nil
			}
		}
	}
}

// botRequestTimeout bounds handing a turn to a bot's node, or cancelling
// it there: the node answers at once, before the bot replies.
const botRequestTimeout = 10 * time.Second

// serveRemoteTurn hands a turn another node runs to a bot connected here
// and relays its replies there.
func (h *Hub) serveRemoteTurn(r botTurnRequest) *wire.Error {
	c, _ := h.bots.pick(r.Bot)
	if c == nil {
		return wire.Errorf(wire.CodeNotServing, "no connection of bot %q on node %s", r.Bot, h.opts.Node)
	}
	reply := func(rep botReply) {
		rep.To, rep.Turn = r.From, r.Turn
		h.bus.publish(subjBotReply, rep)
	}
	t := &botTurn{session: r.Session, turnID: r.Turn, emit: func(s string) { reply(botReply{Text: s}) }, done: make(chan error, 1)}
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
	c.ReplyJSON(wire.TurnPush{Op: wire.PushTurn, Session: r.Session, TurnID: r.Turn, InputID: r.Input, Messages: r.Messages})
	go func() {
		err := <-t.done
		h.remote.mu.Lock()
		delete(h.remote.served, r.Turn)
		h.remote.mu.Unlock()
		switch {
		case errors.Is(err, errLost):
			reply(botReply{Lost: true})
		case errors.Is(err, errCancelled):
		case err != nil:
			reply(botReply{Error: err.Error()})
		default:
			reply(botReply{Done: true})
		}
	}()
	return nil
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
func (h *Hub) handleBotRequest(m *nats.Msg, r request) {
	var br botTurnRequest
	var resp response
	if err := json.Unmarshal(r.Body, &br); err != nil {
		resp.Error = wire.Errorf(wire.CodeBadRequest, "bot request: %v", err)
	} else if r.Op == "bot-turn" {
		resp.Error = h.serveRemoteTurn(br)
	} else {
		h.cancelRemoteTurn(br.Turn)
	}
	data, _ := json.Marshal(resp)
	_ = m.Respond(data)
}
