package hub

import (
	"context"
	"fmt"
	"sync"

	"albedo/hub/tools"
	"albedo/wire"
)

// Bots' tools: a bot's connection that serves with tools offers them
// (tools.Sources), and a call of one reaches one such connection of the
// bot as a tool push; its tool_result command answers it. A call whose
// connection drops goes to the bot's next one.

// toolServers tracks the connections serving each bot's tools.
type toolServers struct {
	mu      sync.Mutex
	conns   map[string][]*Conn       // by bot name, in arrival order
	arrived map[string]chan struct{} // closed when a connection of that bot arrives
}

// toolAnswer is a bot's answer to a call, or lost when its connection
// went away first.
type toolAnswer struct {
	output, err string
	files       []wire.Attachment // the files its result carries
	lost        bool
}

// toolOut is what running a call came to: its output, why it failed
// ("" if it did not), and the files its result carries.
type toolOut struct {
	output, err string
	files       []wire.Attachment
}

// ServeTools makes c serve bot's tools, specs (checked here: a
// bad_request names the first at fault), in the sessions may allows.
func (h *Hub) ServeTools(c *Conn, bot string, specs []wire.ToolSpec, may func(session string) bool) error {
	ts := make([]tools.Spec, len(specs))
	for i, s := range specs {
		ts[i] = tools.Spec{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema}
	}
	if err := tools.CheckSpecs(ts); err != nil {
		return wire.Errorf(wire.CodeBadRequest, "serve: %v", err)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return wire.Errorf(wire.CodeNotServing, "the connection is closing")
	}
	first := c.toolBot == ""
	c.toolBot = bot
	if c.calls == nil {
		c.calls = map[string]chan toolAnswer{}
	}
	c.mu.Unlock()
	h.toolSources.SetBot(bot, c, ts, may)
	defer h.publishBots() // to the other nodes: their turns may call them
	if !first {
		return nil
	}
	t := &h.toolConns
	t.mu.Lock()
	if t.conns == nil {
		t.conns = map[string][]*Conn{} // arrived is pickConn's to make
	}
	t.conns[bot] = append(t.conns[bot], c)
	if ch := t.arrived[bot]; ch != nil {
		close(ch)
		delete(t.arrived, bot)
	}
	t.mu.Unlock()
	return nil
}

// pick returns the bot's tool connection with the fewest calls, or a
// channel closed when one arrives.
func (t *toolServers) pick(bot string) (*Conn, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return pickConn(t.conns, &t.arrived, bot, func(c *Conn) int { return len(c.calls) })
}

// unserveTools forgets c as a server of bot's tools and fails its calls
// over to the bot's next connection; from Conn.Close.
func (h *Hub) unserveTools(c *Conn, bot string, calls []chan toolAnswer) {
	h.toolSources.DropBot(bot, c)
	defer h.publishBots()
	t := &h.toolConns
	t.mu.Lock()
	list := t.conns[bot]
	for i, x := range list {
		if x == c {
			t.conns[bot] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	t.mu.Unlock()
	for _, ch := range calls {
		ch <- toolAnswer{lost: true}
	}
}

// runBotTool hands a call to a connection serving the bot's tools, on
// this node or another, and waits for its answer until ctx ends; it
// returns the output and, for a call that failed, why. A call whose
// connection drops goes to the bot's next one, wherever it is.
func (h *Hub) runBotTool(ctx context.Context, bot string, push wire.ToolPush) toolOut {
	for {
		out, lost := h.runLocalTool(ctx, bot, push)
		if !lost {
			return out
		}
		c, arrived := h.toolConns.pick(bot)
		if c != nil {
			continue // one came meanwhile
		}
		if node := h.remoteToolNode(bot, push.Tool); node != "" {
			if out, lost = h.runRemoteTool(ctx, node, bot, push); !lost { // cluster_tools.go
				return out
			}
		}
		if lookAgain(ctx, arrived) != nil {
			return toolOut{err: fmt.Sprintf("no connection of bot %q served its tools in time", bot)}
		}
	}
}

// runLocalTool is runBotTool on this node's connections alone: lost when
// none serves the bot's tools, or the last one dropped with the call.
func (h *Hub) runLocalTool(ctx context.Context, bot string, push wire.ToolPush) (toolOut, bool) {
	for {
		c, _ := h.toolConns.pick(bot)
		if c == nil {
			return toolOut{}, true
		}
		answer := make(chan toolAnswer, 1)
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			continue
		}
		c.calls[push.CallID] = answer
		c.mu.Unlock()
		c.ReplyJSON(push)
		select {
		case a := <-answer:
			if a.lost {
				continue // to the bot's next connection
			}
			return toolOut{output: a.output, err: a.err, files: a.files}, false
		case <-ctx.Done():
			c.mu.Lock()
			delete(c.calls, push.CallID) // a late answer gets not_serving
			c.mu.Unlock()
			return toolOut{}, false
		}
	}
}

// ToolResult takes a bot's answer to a call handed to c: its output, or
// errText for a call that failed, and the files its result carries
// (resolved: Attachments). A call not handed to c, or that ended
// meanwhile, is not_serving.
func (h *Hub) ToolResult(c *Conn, callID, output, errText string, files ...wire.Attachment) error {
	c.mu.Lock()
	answer := c.calls[callID]
	delete(c.calls, callID)
	c.mu.Unlock()
	if answer == nil {
		return wire.Errorf(wire.CodeNotServing, "this connection was not given call %q (or it has ended)", callID)
	}
	answer <- toolAnswer{output: output, err: errText, files: files}
	return nil
}
