package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"albedo/hub/access"
	"albedo/hub/peer"
	"albedo/hub/tools"
	"albedo/wire"
)

// Bots' tools across the nodes of a cluster. A turn runs on the node
// holding its session's lease; a bot serves its tools from whichever node
// its connection reached.
//
//   - Nodes announce the tools their bots serve with their bots
//     (peer.Bots.Tools), on every change and every heartbeat; an
//     announcement lapses after remoteTTL.
//   - The turn's node offers a remote bot's tools where the bot's token
//     may act, as it offers a local one's.
//   - A call of one, when no connection of the bot is here, is asked of
//     a node that announced it (peer.OpToolCall), which hands it to its
//     connection and answers with the result; a node that does not
//     answer within the call's timeout fails the call, saying so.

// remoteTools is what a node announced of one bot's tools.
type remoteTools struct {
	specs []wire.ToolSpec
	at    time.Time
}

// localTools is what this node's bots serve, as announced.
func (h *Hub) localTools() map[string][]wire.ToolSpec {
	out := map[string][]wire.ToolSpec{}
	for bot, specs := range h.toolSources.Declared() {
		ws := make([]wire.ToolSpec, len(specs))
		for i, s := range specs {
			ws[i] = wire.ToolSpec{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema}
		}
		out[bot] = ws
	}
	return out
}

// onTools keeps what node announced of its bots' tools.
func (h *Hub) onTools(node string, ts map[string][]wire.ToolSpec, now time.Time) {
	rb := &h.remote
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if rb.tools == nil {
		rb.tools = map[string]map[string]remoteTools{}
	}
	for bot, nodes := range rb.tools {
		if _, ok := ts[bot]; !ok {
			delete(nodes, node)
		}
	}
	for bot, specs := range ts {
		if rb.tools[bot] == nil {
			rb.tools[bot] = map[string]remoteTools{}
		}
		rb.tools[bot][node] = remoteTools{specs: specs, at: now}
	}
}

// remoteOffers are the tools other nodes' bots serve that session may
// call: those of bots with no connection here, whose token may act in it.
func (h *Hub) remoteOffers(session string, local []tools.Offer) []tools.Offer {
	here := map[string]bool{}
	for _, o := range local {
		here[o.Owner] = true
	}
	rb := &h.remote
	rb.mu.Lock()
	found := map[string][]wire.ToolSpec{}
	for bot, nodes := range rb.tools {
		for _, rt := range nodes {
			if !here[bot] && time.Since(rt.at) < remoteTTL {
				found[bot] = rt.specs
			}
		}
	}
	rb.mu.Unlock()
	var out []tools.Offer
	for _, bot := range slices.Sorted(maps.Keys(found)) {
		if session != "" && !h.botMayAct(bot, session) {
			continue
		}
		for _, s := range found[bot] {
			full := tools.FullName(tools.SourceBot, bot, s.Name)
			out = append(out, tools.Offer{Full: full, Source: tools.SourceBot, Owner: bot, API: tools.APIName(full),
				Spec: tools.Spec{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema}})
		}
	}
	return out
}

// botMayAct says whether bot's token may act in session, as its
// connection's principal would be allowed.
func (h *Hub) botMayAct(bot, session string) bool {
	rule := access.Rule{Roles: access.BotOnly, Need: wire.AccessWrite}
	return h.tokens.Any(func(p access.Principal) bool {
		return p.Role == wire.TokenBot && p.Name == bot && p.Allowed(rule, session)
	})
}

// remoteToolNode names a node whose connection of bot serves tool, or "".
func (h *Hub) remoteToolNode(bot, tool string) string {
	rb := &h.remote
	rb.mu.Lock()
	defer rb.mu.Unlock()
	for node, rt := range rb.tools[bot] {
		if time.Since(rt.at) < remoteTTL && slices.ContainsFunc(rt.specs, func(s wire.ToolSpec) bool { return s.Name == tool }) {
			return node
		}
	}
	return ""
}

// runRemoteTool asks node to run the call on its connections of bot, and
// waits for the result until ctx ends; lost when the node had none, or
// lost the last with the call (the asking node then picks again).
func (h *Hub) runRemoteTool(ctx context.Context, node, bot string, push wire.ToolPush) (toolOut, bool) {
	timeout := time.Until(deadlineOr(ctx, time.Now().Add(requestTimeout)))
	body, _ := json.Marshal(peer.ToolCall{Bot: bot, Push: push, TimeoutMS: timeout.Milliseconds()})
	resp, err := h.ask(ctx, peer.Request{To: node, Op: peer.OpToolCall, Session: push.Session, Body: body}, timeout)
	var werr *wire.Error
	switch {
	case errors.As(err, &werr):
		return toolOut{err: fmt.Sprintf("bot %q's node %s: %s", bot, node, werr.Message)}, false
	case err != nil:
		return toolOut{err: fmt.Sprintf("bot %q's node %s did not answer: %v", bot, node, err)}, false
	}
	return toolOut{output: resp.Output, err: resp.ToolError, files: resp.ToolFiles}, resp.ToolLost
}

func deadlineOr(ctx context.Context, or time.Time) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return or
}

// serveRemoteTool runs, on this node's connections of its bot, a call
// the turn's node asked for, and answers with its result. It never hands
// the call on to another node: with no connection of the bot left here,
// it answers lost, and the turn's node picks again.
func (h *Hub) serveRemoteTool(r peer.Request, answer func(peer.Response)) {
	var tc peer.ToolCall
	if err := json.Unmarshal(r.Body, &tc); err != nil || tc.TimeoutMS <= 0 {
		answer(peer.Response{Error: wire.Errorf(wire.CodeBadRequest, "tool call request: %v", err)})
		return
	}
	started := h.goTracked(func() {
		ctx, cancel := context.WithTimeout(h.ctx, time.Duration(tc.TimeoutMS)*time.Millisecond)
		defer cancel()
		out, lost := h.runLocalTool(ctx, tc.Bot, tc.Push)
		if ctx.Err() != nil && out.err == "" && !lost {
			out.err = "the tool did not answer in time"
		}
		answer(peer.Response{Output: cutOutput(out.output), ToolError: out.err, ToolLost: lost, ToolFiles: out.files})
	})
	if !started {
		answer(peer.Response{Error: &wire.Error{Code: wire.CodeDaemonStopping, Message: "node " + h.opts.Node + " is stopping", Retryable: true}})
	}
}
