package ws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"albedo/hub"
	"albedo/hub/access"
	"albedo/wire"
)

// opRule is one websocket command: who may send it (the roles, and the
// access to the session it names) and the method that runs it. The method
// answers with exactly one reply.
type opRule struct {
	rule access.Rule
	run  func(wc *conn, ctx context.Context, cmd wire.Command)
	what string // what it does, in the words of a refusal
}

// ops is the websocket's dispatch table, and its permission table beside
// the HTTP routes' (api/auth.go). hello is handled before this table is used
// (awaitHello); here it is only a mistake.
var ops = map[wire.Op]opRule{
	wire.OpHello:      {access.Rule{Roles: access.Everyone}, (*conn).helloAgain, "say hello again"},
	wire.OpPing:       {access.Rule{Roles: access.Everyone}, (*conn).ping, "ping"},
	wire.OpSub:        {access.Rule{Roles: access.Everyone, Need: wire.AccessRead}, (*conn).sub, "follow the session"},
	wire.OpUnsub:      {access.Rule{Roles: access.Everyone}, (*conn).unsub, "stop following"},
	wire.OpWatch:      {access.Rule{Roles: access.Everyone, Need: wire.AccessRead}, (*conn).watch, "watch the session"},
	wire.OpSend:       {access.Rule{Roles: access.Writers, Need: wire.AccessWrite}, (*conn).send, "write in the session"},
	wire.OpInterrupt:  {access.Rule{Roles: access.Speakers, Need: wire.AccessWrite}, (*conn).interrupt, "interrupt the session's turn"},
	wire.OpPost:       {access.Rule{Roles: access.BotOnly, Need: wire.AccessWrite}, (*conn).post, "post as a bot"},
	wire.OpServe:      {access.Rule{Roles: access.BotOnly}, (*conn).serveBot, "serve as a bot"},
	wire.OpReply:      {access.Rule{Roles: access.BotOnly, Need: wire.AccessWrite}, (*conn).replyTurn, "reply as a bot"},
	wire.OpToolResult: {access.Rule{Roles: access.BotOnly}, (*conn).toolResult, "answer a bot's tool calls"},
	wire.OpApprove:    {access.Rule{Roles: access.People, Need: wire.AccessWrite}, (*conn).approve, "decide the session's tool calls"},
	wire.OpTyping:     {access.Rule{Roles: access.Speakers, Need: wire.AccessWrite}, (*conn).typing, "say they are typing"},
	wire.OpPeople:     {access.Rule{Roles: access.Everyone, Need: wire.AccessRead}, (*conn).people, "see who is here"},
	wire.OpFeed:       {access.Rule{Roles: access.People}, (*conn).feed, "follow the sessions feed"},
	wire.OpFeedPage:   {access.Rule{Roles: access.People}, (*conn).feedPage, "read the sessions feed"},
}

// Roles returns the roles that may send op (nil for an op the table does
// not know): the permission table, read.
func Roles(op wire.Op) []wire.TokenRole { return slices.Clone(ops[op].rule.Roles) }

// Need returns the access to the session it names that op requires.
func Need(op wire.Op) wire.Access { return ops[op].rule.Need }

// authorizeOp says whether the connection's principal may send op about
// session (when one is named).
func (wc *conn) authorizeOp(op wire.Op, session string) *wire.Error {
	rule := ops[op].rule
	if wc.p.Allowed(rule, session) {
		return nil // the words of a refusal are not made for every command
	}
	return wc.p.Authorize(rule, ops[op].what, session)
}

// splitFrames splits a client's message into its frames: one per line, as
// the contract says, and also JSON values written back to back on one
// line, which a clumsy client sends (each then gets its own reply, with its
// own id). What cannot be read as JSON stays one frame, the rest of its
// line, which decodeCommand refuses with whatever id it can find.
func splitFrames(msg []byte) [][]byte {
	var out [][]byte
	for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if jsonv1.Valid(line) || json.Valid(line) { // the faster check first
			out = append(out, line) // the common case: one value
			continue
		}
		for len(line) > 0 {
			dec := json.NewDecoder(bytes.NewReader(line))
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				out = append(out, line)
				break
			}
			n := dec.InputOffset()
			out = append(out, line[:n])
			line = bytes.TrimSpace(line[n:])
		}
	}
	return out
}

// decodeCommand parses one frame. On failure it still returns whatever id
// could be read, so that the error reply can name the command.
func decodeCommand(f []byte) (wire.Command, *wire.Error) {
	// go-json-experiment's v1 first: encoding/json's semantics on the
	// faster decoder that is becoming encoding/json/v2. Whatever it
	// refuses, encoding/json decides again, so every error and its words
	// are still encoding/json's (FuzzDecodeCommandIsEncodingJSONs).
	var cmd wire.Command
	if jsonv1.Unmarshal(f, &cmd) != nil {
		return decodeCommandStd(f)
	}
	return checkCommand(cmd)
}

// decodeCommandStd is decodeCommand by encoding/json alone: the decision
// the faster decoder must agree with.
func decodeCommandStd(f []byte) (wire.Command, *wire.Error) {
	var cmd wire.Command
	if err := json.Unmarshal(f, &cmd); err != nil {
		var probe struct {
			ID any `json:"id"`
		}
		var id int64
		if json.Unmarshal(f, &probe) == nil {
			if n, ok := probe.ID.(float64); ok && n == float64(int64(n)) && n > 0 {
				id = int64(n)
			}
		}
		return wire.Command{ID: id}, wire.Errorf(wire.CodeBadRequest, "malformed frame: %v", err)
	}
	return checkCommand(cmd)
}

// checkCommand refuses a decoded command without a positive id or an op.
func checkCommand(cmd wire.Command) (wire.Command, *wire.Error) {
	if cmd.ID <= 0 {
		return wire.Command{}, wire.Errorf(wire.CodeBadRequest, "id must be a positive integer")
	}
	if cmd.Op == "" {
		return cmd, wire.Errorf(wire.CodeBadRequest, "op is required")
	}
	return cmd, nil
}

func errorReply(id int64, e *wire.Error) wire.Reply {
	return wire.Reply{ID: id, OK: false, Error: e}
}

func (wc *conn) replyErr(id int64, e *wire.Error) {
	if f := wc.s.opts.OnError; f != nil {
		f(e.Code)
	}
	wc.hc.ReplyJSON(errorReply(id, e))
}

// replyOK answers a command that has nothing to say but yes.
func (wc *conn) replyOK(id int64) {
	wc.hc.ReplyJSON(wire.Reply{ID: id, OK: true})
}

// handle runs one command after hello. Every command gets exactly one reply.
func (wc *conn) handle(ctx context.Context, f []byte) {
	cmd, werr := decodeCommand(f)
	if werr != nil || (cmd.Op != wire.OpSend && cmd.Op != wire.OpPost) {
		// Every other command runs after the inputs before it are
		// answered, as if they had been run one at a time.
		wc.inflight.Wait()
	}
	if werr != nil {
		wc.replyErr(cmd.ID, werr)
		return
	}
	op, known := ops[cmd.Op]
	if !known {
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeUnknownOp, "unknown op %q", cmd.Op))
		return
	}
	if werr := wc.authorizeOp(cmd.Op, cmd.Session); werr != nil {
		wc.replyErr(cmd.ID, werr)
		return
	}
	op.run(wc, ctx, cmd)
}

// requireSession refuses a command that names no session; it says whether
// the command may go on.
func (wc *conn) requireSession(cmd wire.Command) bool {
	if cmd.Session == "" {
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "%s needs a session", cmd.Op))
		return false
	}
	return true
}

func (wc *conn) helloAgain(_ context.Context, cmd wire.Command) {
	wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "hello was already done on this connection"))
}

func (wc *conn) ping(_ context.Context, cmd wire.Command) { wc.replyOK(cmd.ID) }

func (wc *conn) sub(ctx context.Context, cmd wire.Command) {
	if !wc.requireSession(cmd) {
		return
	}
	sb := wire.Sub{Session: cmd.Session, After: cmd.After, Epoch: cmd.Epoch, Window: cmd.Window, Watch: cmd.Watch}
	wc.hc.Subscribe(ctx, []wire.Sub{sb}, func(rs []wire.SubReply) any {
		r := rs[0]
		if r.Error != nil {
			return errorReply(cmd.ID, r.Error)
		}
		return wire.Reply{ID: cmd.ID, OK: true, SubReply: &r}
	})
}

func (wc *conn) unsub(_ context.Context, cmd wire.Command) {
	if !wc.requireSession(cmd) {
		return
	}
	wc.hc.Unsubscribe(cmd.Session)
	wc.replyOK(cmd.ID)
}

// watch moves a subscription between the session's viewers and the
// background (wire.Sub.Watch); without "watch" it is a viewer again.
func (wc *conn) watch(_ context.Context, cmd wire.Command) {
	if !wc.requireSession(cmd) {
		return
	}
	if !wc.hc.Watch(cmd.Session, cmd.Watch == nil || *cmd.Watch) {
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeNotFound, "no subscription to session %q on this connection", cmd.Session))
		return
	}
	wc.replyOK(cmd.ID)
}

// send is an input that starts a turn; post (bots) a message that does
// not. Both are idempotent by input_id and answer a receipt.
// They do not wait for the commit: the reader reads on, and the receipt is
// sent once committed (inputs.go).
func (wc *conn) send(ctx context.Context, cmd wire.Command) {
	wc.hc.Sent(cmd.Session) // the draft is the message now: no longer typing
	wc.inFlight(ctx, cmd, wc.s.hub.SubmitInput)
}

func (wc *conn) post(ctx context.Context, cmd wire.Command) {
	wc.inFlight(ctx, cmd, wc.s.hub.SubmitPost)
}

func (wc *conn) replyReceipt(id int64, session string, r wire.Receipt, err error) {
	if err != nil {
		if errors.Is(err, context.Canceled) && wc.ctx.Err() != nil {
			// The input's connection ended before its commit (closed, or
			// cut by the daemon's stop): no one reads the reply, and
			// nothing failed. Not committed, it is the client's to send
			// again by its input_id.
			return
		}
		wc.replyErr(id, hub.AsError(wc.s.log, err, "op", "send", "session", session))
		return
	}
	// Encode(wire.Reply{ID: id, OK: true, Receipt: &r}), by hand: every
	// send and post gets one.
	wc.hc.Reply(wire.AppendReceiptReply(make([]byte, 0, wire.ReceiptReplySize(&r)), id, &r))
}

func (wc *conn) interrupt(ctx context.Context, cmd wire.Command) {
	if !wc.requireSession(cmd) {
		return
	}
	turn, done, err := wc.s.hub.Interrupt(ctx, cmd.Session, wire.ReasonUser)
	if err != nil {
		wc.replyErr(cmd.ID, hub.AsError(wc.s.log, err, "op", cmd.Op, "session", cmd.Session))
		return
	}
	wc.hc.ReplyJSON(wire.Reply{ID: cmd.ID, OK: true, Interrupted: &done, TurnID: turn})
}

// people answers a page of who watches a session (after: the index the
// page starts at, a reply's next).
func (wc *conn) people(_ context.Context, cmd wire.Command) {
	if !wc.requireSession(cmd) {
		return
	}
	from := int64(0)
	if cmd.After != nil {
		from = *cmd.After
	}
	if from < 0 {
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "after is a non-negative index"))
		return
	}
	ps, next, ok := wc.hc.People(cmd.Session, int(min(from, 1<<30)))
	if !ok {
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeNotFound, "no subscription to session %q on this connection", cmd.Session))
		return
	}
	wc.hc.ReplyJSON(wire.Reply{ID: cmd.ID, OK: true, People: ps, Next: int64(next)})
}

// typing marks the sender as typing in a session it watches (presence).
func (wc *conn) typing(_ context.Context, cmd wire.Command) {
	if !wc.requireSession(cmd) {
		return
	}
	wc.hc.Typed(cmd.Session)
	wc.replyOK(cmd.ID)
}

// serveBot makes the connection serve its bot's turns and, with tools,
// its tools ("turns": false serves tools only).
func (wc *conn) serveBot(_ context.Context, cmd wire.Command) {
	if cmd.Turns != nil && !*cmd.Turns && len(cmd.Tools) == 0 {
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "serve with \"turns\": false serves tools: name them in tools"))
		return
	}
	if len(cmd.Tools) > 0 {
		rule := access.Rule{Roles: access.BotOnly, Need: wire.AccessWrite}
		may := func(session string) bool { return wc.principal().Allowed(rule, session) }
		if err := wc.s.hub.ServeTools(wc.hc, wc.p.Name, cmd.Tools, may); err != nil {
			wc.replyErr(cmd.ID, hub.AsError(wc.s.log, err, "op", wire.OpServe))
			return
		}
	}
	if cmd.Turns == nil || *cmd.Turns {
		wc.s.hub.Serve(wc.hc, wc.p.Name)
	}
	wc.replyOK(cmd.ID)
}

// toolResult takes a bot's answer to a tool push.
func (wc *conn) toolResult(ctx context.Context, cmd wire.Command) {
	if cmd.CallID == "" {
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "tool_result needs a call_id"))
		return
	}
	var files []wire.Attachment
	if len(cmd.Attachments) > 0 {
		var err error
		if files, err = wc.s.hub.Attachments(ctx, wc.p, cmd.Attachments); err != nil {
			wc.replyErr(cmd.ID, hub.AsError(wc.s.log, err, "op", wire.OpToolResult, "call", cmd.CallID))
			return
		}
	}
	if err := wc.s.hub.ToolResult(wc.hc, cmd.CallID, cmd.Output, cmd.Error, files...); err != nil {
		wc.replyErr(cmd.ID, hub.AsError(wc.s.log, err, "op", wire.OpToolResult, "call", cmd.CallID))
		return
	}
	wc.replyOK(cmd.ID)
}

// approve records a person's decision on a call, as POST
// …/approvals/{call_id} does: the reply carries the approval event.
func (wc *conn) approve(ctx context.Context, cmd wire.Command) {
	if !wc.requireSession(cmd) {
		return
	}
	if cmd.CallID == "" {
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "approve needs a call_id"))
		return
	}
	ev, err := wc.s.hub.Decide(ctx, cmd.Session, cmd.CallID, wire.Decision{Decision: cmd.Decision, Reason: cmd.Reason}, wc.principal().Author())
	if err != nil {
		wc.replyErr(cmd.ID, hub.AsError(wc.s.log, err, "op", wire.OpApprove, "session", cmd.Session))
		return
	}
	wc.hc.ReplyJSON(wire.Reply{ID: cmd.ID, OK: true, Event: &ev})
}

func (wc *conn) replyTurn(ctx context.Context, cmd wire.Command) {
	if cmd.TurnID == "" {
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "reply needs a turn_id"))
		return
	}
	id, turn := cmd.ID, cmd.TurnID
	answer := func(err error) {
		if err != nil {
			wc.replyErr(id, hub.AsError(wc.s.log, err, "op", wire.OpReply, "turn", turn))
			return
		}
		wc.replyOK(id)
	}
	var files []wire.Attachment
	if len(cmd.Attachments) > 0 {
		var err error
		if files, err = wc.s.hub.Attachments(ctx, wc.p, cmd.Attachments); err != nil {
			answer(err)
			return
		}
	}
	// An end (done, error) is answered once it is committed (hub.Reply),
	// by whichever goroutine sees the commit; the reader reads on.
	if err := wc.s.hub.Reply(wc.hc, turn, cmd.Text, cmd.Done, cmd.Error, files, answer); err != nil {
		answer(err)
	}
}
