package api

import (
	"context"
	"encoding/json"

	"albedo/api/wire"
)

// decodeCommand parses one frame. On failure it still returns whatever id
// could be read, so that the error reply can name the command.
func decodeCommand(f []byte) (wire.Command, *wire.Error) {
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

func (wc *wsConn) replyErr(id int64, e *wire.Error) {
	wc.hc.ReplyJSON(errorReply(id, e))
}

// handle runs one command after hello. Every command gets exactly one reply.
func (wc *wsConn) handle(ctx context.Context, f []byte) {
	cmd, werr := decodeCommand(f)
	if werr != nil {
		wc.replyErr(cmd.ID, werr)
		return
	}
	hc := wc.hc
	ok := wire.Reply{ID: cmd.ID, OK: true}
	if _, known := permissions["ws:"+cmd.Op]; !known {
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeUnknownOp, "unknown op %q", cmd.Op))
		return
	}
	if werr := authorize(wc.p, "ws:"+cmd.Op, cmd.Session); werr != nil {
		wc.replyErr(cmd.ID, werr)
		return
	}
	switch cmd.Op {
	case wire.OpPing:
		hc.ReplyJSON(ok)
	case wire.OpSub:
		if cmd.Session == "" {
			wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "sub needs a session"))
			return
		}
		hc.Subscribe(ctx, []wire.Sub{{Session: cmd.Session, After: cmd.After, Epoch: cmd.Epoch, Window: cmd.Window}},
			func(rs []wire.SubReply) any {
				r := rs[0]
				if r.Error != nil {
					return errorReply(cmd.ID, r.Error)
				}
				return wire.Reply{ID: cmd.ID, OK: true, SubReply: &r}
			})
	case wire.OpUnsub:
		if cmd.Session == "" {
			wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "unsub needs a session"))
			return
		}
		hc.Unsubscribe(cmd.Session)
		hc.ReplyJSON(ok)
	case wire.OpSend, wire.OpPost:
		// send is an input that starts a turn; post (bots) a message that
		// does not. Both are idempotent by input_id and answer a receipt.
		submit := wc.s.hub.PutInput
		if cmd.Op == wire.OpPost {
			submit = wc.s.hub.Post
		}
		r, err := submit(ctx, cmd.Session, cmd.InputID, cmd.Text, wc.p.Name)
		if err != nil {
			wc.replyErr(cmd.ID, asWire(wc.s.log, err))
			return
		}
		ok.Receipt = &r
		hc.ReplyJSON(ok)
	case wire.OpInterrupt:
		if cmd.Session == "" {
			wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "interrupt needs a session"))
			return
		}
		turn, done, err := wc.s.hub.Interrupt(ctx, cmd.Session, wire.ReasonUser)
		if err != nil {
			wc.replyErr(cmd.ID, asWire(wc.s.log, err))
			return
		}
		ok.Interrupted, ok.TurnID = &done, turn
		hc.ReplyJSON(ok)
	case wire.OpHello:
		wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "hello was already done on this connection"))
	case wire.OpServe:
		wc.s.hub.Serve(hc, wc.p.Name)
		hc.ReplyJSON(ok)
	case wire.OpReply:
		if cmd.TurnID == "" {
			wc.replyErr(cmd.ID, wire.Errorf(wire.CodeBadRequest, "reply needs a turn_id"))
			return
		}
		if err := wc.s.hub.Reply(hc, cmd.TurnID, cmd.Text, cmd.Done, cmd.Error); err != nil {
			wc.replyErr(cmd.ID, asWire(wc.s.log, err))
			return
		}
		hc.ReplyJSON(ok)
	}
}
