package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"albedo/hub/access"
	"albedo/hub/provider"
	"albedo/wire"
)

// errLost ends a bot turn whose serving connection went away.
var errLost = errors.New("the serving connection was lost")

// botTable tracks which connections serve which bot's turns.
type botTable struct {
	mu      sync.Mutex
	servers map[string][]*Conn       // by bot name, in arrival order
	arrived map[string]chan struct{} // closed when a server of that bot arrives
}

// botTurn is one turn handed to a serving connection. Its text is emitted
// under mu, so that none is emitted once finish has ended the turn: the
// runner then commits the reply, and a late emit would race with it. emit
// takes channel.mu and Conn.mu and may wait for a checkpoint commit, which
// is why botTurn.mu comes first in the hub's lock order.
type botTurn struct {
	session, turnID string

	mu   sync.Mutex
	emit func(string)
	// files hands on the files of the reply, in order (a turn served for
	// another node); with none, they are kept here.
	files  func([]wire.Attachment)
	kept   []wire.Attachment
	nfiles int
	closed bool
	done   chan error // capacity 1
	// acked answers the bot's reply that ended the turn (Reply's acked),
	// once that end is committed; whoever ends the turn otherwise takes
	// it (takeAcked) and answers that the reply did not take.
	acked func(error)
}

func (t *botTurn) finish(err error) { t.finishAcked(err, nil) }

// finishAcked ends the turn with err, for the bot's reply acked answers
// (nil: none waits); a turn already ended refuses acked at once.
func (t *botTurn) finishAcked(err error, acked func(error)) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		if acked != nil {
			acked(errTurnEnded(t.turnID))
		}
		return
	}
	t.closed, t.acked = true, acked
	t.done <- err
	t.mu.Unlock()
}

// takeAcked returns the answer waiting for the turn's end to be
// committed, once; nil if none waits.
func (t *botTurn) takeAcked() func(error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.acked
	t.acked = nil
	return a
}

// errTurnEnded refuses a reply to a turn that ended meanwhile.
func errTurnEnded(turn string) error {
	return wire.Errorf(wire.CodeNotServing, "turn %q has ended", turn)
}

func (t *botTurn) text(s string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.emit(s)
	return true
}

// attach adds files to the reply: refused once the turn has ended, or
// past wire.MaxAttachments in all.
func (t *botTurn) attach(atts []wire.Attachment) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errTurnEnded(t.turnID)
	}
	if t.nfiles+len(atts) > wire.MaxAttachments {
		return wire.Errorf(wire.CodeBadRequest, "a reply carries at most %d files", wire.MaxAttachments)
	}
	t.nfiles += len(atts)
	if t.files != nil {
		t.files(atts)
	} else {
		t.kept = append(t.kept, atts...)
	}
	return nil
}

// keptFiles are the files of the reply kept here.
func (t *botTurn) keptFiles() []wire.Attachment {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.kept
}

// Serve makes c answer the turns of sessions whose provider is bot:<name>.
func (h *Hub) Serve(c *Conn, name string) {
	c.mu.Lock()
	already := c.serving != ""
	c.serving = name
	if c.turns == nil {
		c.turns = map[string]*botTurn{}
	}
	c.mu.Unlock()
	if already {
		return
	}
	b := &h.bots
	b.mu.Lock()
	if b.servers == nil {
		b.servers = map[string][]*Conn{} // arrived is pickConn's to make
	}
	b.servers[name] = append(b.servers[name], c)
	if ch := b.arrived[name]; ch != nil {
		close(ch)
		delete(b.arrived, name)
	}
	b.mu.Unlock()
	h.publishBots()
}

// pick returns a serving connection of the bot (the one with the fewest
// turns), or a channel closed when one arrives.
func (b *botTable) pick(name string) (*Conn, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return pickConn(b.servers, &b.arrived, name, func(c *Conn) int { return len(c.turns) })
}

// lookAgain waits until arrived is closed (a serving connection came here,
// or another node announced one), or a second has passed: announcements
// are notices, which can come late or not at all, so whoever waits for a
// server looks again each second. It returns ctx's error if ctx ends
// first.
func lookAgain(ctx context.Context, arrived <-chan struct{}) error {
	again := time.NewTimer(time.Second)
	defer again.Stop()
	select {
	case <-arrived:
	case <-again.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// pickConn returns, of the open connections conns lists under name, the
// one with the least load (read under its lock); else a channel, kept in
// *arrived, closed when one arrives. The caller holds the table's lock.
func pickConn(conns map[string][]*Conn, arrived *map[string]chan struct{}, name string, load func(*Conn) int) (*Conn, <-chan struct{}) {
	var best *Conn
	bestLoad := 0
	for _, c := range conns[name] {
		c.mu.Lock()
		l, closed := load(c), c.closed
		c.mu.Unlock()
		if !closed && (best == nil || l < bestLoad) {
			best, bestLoad = c, l
		}
	}
	if best != nil {
		return best, nil
	}
	if *arrived == nil {
		*arrived = map[string]chan struct{}{}
	}
	ch := (*arrived)[name]
	if ch == nil {
		ch = make(chan struct{})
		(*arrived)[name] = ch
	}
	return nil, ch
}

func (h *Hub) serving(name string) int {
	h.bots.mu.Lock()
	defer h.bots.mu.Unlock()
	return len(h.bots.servers[name])
}

// unserve forgets c as a server and fails its turns over; from Conn.Close.
func (h *Hub) unserve(c *Conn, name string, turns []*botTurn) {
	b := &h.bots
	b.mu.Lock()
	list := b.servers[name]
	for i, x := range list {
		if x == c {
			b.servers[name] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	b.mu.Unlock()
	for _, t := range turns {
		t.finish(errLost)
	}
	h.publishBots()
}

// Reply takes a serving bot's answer to a turn: text streams out as deltas,
// done commits the reply, a non-empty errText fails the turn. It returns
// an error at once for a reply it refuses; otherwise acked answers the
// reply: at once for text, and for an end once that end is committed,
// wherever in a cluster the turn runs, so that what the bot sends next
// (a post) lands after it.
func (h *Hub) Reply(c *Conn, turnID, text string, done bool, errText string, atts []wire.Attachment, acked func(error)) error {
	if err := access.CheckTexts("text", text, "error", errText); err != nil {
		return err // before the turn is touched: the bot may send it again
	}
	c.mu.Lock()
	t := c.turns[turnID]
	c.mu.Unlock()
	if t == nil {
		return wire.Errorf(wire.CodeNotServing, "this connection does not serve turn %q (never handed to it, or already ended)", turnID)
	}
	if len(atts) > 0 {
		if err := t.attach(atts); err != nil {
			return err // the turn is the bot's still, to end again
		}
	}
	if done || errText != "" {
		c.mu.Lock()
		delete(c.turns, turnID)
		c.mu.Unlock()
	}
	if text != "" && !t.text(text) {
		return errTurnEnded(turnID)
	}
	switch {
	case errText != "":
		t.finishAcked(fmt.Errorf("bot: %s", errText), acked)
	case done:
		t.finishAcked(nil, acked)
	default:
		acked(nil)
	}
	return nil
}

// botProvider hands turns to the connections serving bot:<name>.
type botProvider struct {
	h    *Hub
	name string
}

func (b botProvider) Author(provider.Request) string { return b.name }

// Titles implements provider.Titler: a bot's sessions are not titled for
// it.
func (botProvider) Titles() string { return provider.TitlesOff }

// leave forgets node as the bot's server after a turn was lost there
// (err): what it announced is forgotten until it announces again, and a
// node that stopped answering is not believed for a while (nodeGone).
func (b botProvider) leave(node string, err error) {
	if errors.Is(err, errNodeGone) {
		b.h.nodeGone(node)
		return
	}
	b.h.forgetBotNode(node)
}

// Stream waits for a serving connection, hands it the turn, and relays its
// replies; when that connection drops, the turn starts over with the next
// one (or waits).
func (b botProvider) Stream(ctx context.Context, req provider.Request, emit func(string)) error {
	msgs := make([]wire.TurnMessage, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = wire.TurnMessage{Role: m.Role, Author: m.Author, Text: m.Text}
	}
	waiting := false
	setWaiting := func(w bool) {
		if w != waiting && req.Waiting != nil {
			waiting = w
			req.Waiting(w)
		}
	}
	for {
		c, arrived := b.h.bots.pick(b.name)
		if c == nil {
			// Served on another node of the cluster (cluster_bots.go).
			if node := b.h.remoteServer(b.name); node != "" {
				setWaiting(false)
				err := b.streamRemote(ctx, node, req, msgs, emit)
				if !errors.Is(err, errLost) {
					return err
				}
				b.leave(node, err) // at once to the bot's next connection
				if req.Restart != nil {
					req.Restart()
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				continue
			}
		}
		if c == nil {
			setWaiting(true)
			if err := lookAgain(ctx, arrived); err != nil {
				return err
			}
			continue
		}
		setWaiting(false)
		t := &botTurn{session: req.Session, turnID: req.TurnID, emit: emit, done: make(chan error, 1)}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			continue
		}
		c.turns[req.TurnID] = t
		c.mu.Unlock()
		c.ReplyJSON(wire.TurnPush{Op: wire.PushTurn, Session: req.Session, TurnID: req.TurnID, InputID: req.InputID, Messages: msgs, Earlier: req.Earlier})
		select {
		case err := <-t.done:
			if errors.Is(err, errLost) {
				if req.Restart != nil {
					req.Restart()
				}
				continue
			}
			if acked := t.takeAcked(); acked != nil {
				b.h.afterTurnEnd(req.TurnID, acked)
			}
			if req.Files != nil { // this connection's: a restart drops them with the text
				req.Files(t.keptFiles())
			}
			return err
		case <-ctx.Done():
			t.finish(ctx.Err())                       // later replies get not_serving
			if acked := t.takeAcked(); acked != nil { // the bot's end came too late
				acked(errTurnEnded(req.TurnID))
			}
			c.mu.Lock()
			delete(c.turns, req.TurnID)
			c.mu.Unlock()
			return ctx.Err()
		}
	}
}

// Post puts a bot's message into a session: a message with role bot,
// authored by the bot; it starts no turn. Idempotent by input_id.
func (h *Hub) Post(ctx context.Context, session, inputID, text, bot string, atts ...wire.Attachment) (wire.Receipt, error) {
	return h.putInput(ctx, session, inputID, text, atts, wire.RoleBot, botAuthor(bot))
}

// SubmitPost queues a bot's post as Post does and returns without waiting
// for its commit, or returns the error that refuses it before the
// database (see SubmitInput).
func (h *Hub) SubmitPost(ctx context.Context, session, inputID, text string, atts []wire.Attachment, bot wire.Author, then func(wire.Receipt, error)) error {
	return h.submitInput(ctx, session, inputID, text, atts, wire.RoleBot, bot, then)
}

// botAuthor is a bot as the author of its posts (access.Principal.AuthorID).
func botAuthor(name string) wire.Author { return wire.Author{Name: name, ID: "bot:" + name} }
