package ws

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"albedo/wire"
)

// Many posts in flight on one socket, sent in one message, more than the
// connection's window (maxInFlight): each is accepted once, in the order
// sent (orders and offsets per session), a repeat gets the first one's
// receipt, a post to a missing session fails alone, as does one refused
// before the database (no text), receipts and refusals come in command
// order, and a command after them (ping) is answered after them.
func TestPipelinedPosts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("a")
	e.create("b")
	b := e.dialToken(e.botToken("poster"))
	b.Hello()
	const n = 2*maxInFlight + 5 // under a history page (100) per session
	var msg bytes.Buffer
	ids := make([]string, n)
	for i := range n {
		ids[i] = uuid.Must(uuid.NewV7()).String()
		cmd := wire.Command{ID: int64(10 + i), Op: wire.OpPost, Session: []string{"a", "b"}[i%2], InputID: ids[i], Text: fmt.Sprintf("post %d", i)}
		switch i {
		case 7: // a repeat of post 5 (session b)
			cmd.Session, cmd.InputID, cmd.Text = "b", ids[5], "post 5"
		case 9:
			cmd.Session = "nope"
		case 11:
			cmd.Text = ""
		}
		line, _ := json.Marshal(cmd)
		msg.Write(line)
		msg.WriteByte('\n')
	}
	ping, _ := json.Marshal(wire.Command{ID: 5000, Op: wire.OpPing})
	msg.Write(ping)
	b.Send(msg.Bytes())

	orders := map[string]int64{}
	receipts := map[int]wire.Receipt{}
	next := int64(10)
	for {
		f := b.Next(func(f wire.Frame) bool { return f.IsReply() })
		r := f.Reply
		if r.ID == 5000 {
			if next != 10+n {
				t.Fatalf("ping answered after %d of %d posts", next-10, n)
			}
			break
		}
		if r.ID != next {
			t.Fatalf("reply %d, want %d: receipts out of command order", r.ID, next)
		}
		i := int(next - 10)
		next++
		switch {
		case i == 9:
			if r.OK || r.Error.Code != wire.CodeNotFound {
				t.Fatalf("post to a missing session: %+v", r)
			}
			continue
		case i == 11:
			if r.OK || r.Error.Code != wire.CodeBadRequest {
				t.Fatalf("post with no text: %+v", r)
			}
			continue
		case !r.OK:
			t.Fatalf("post %d: %+v", i, r.Error)
		case i == 7:
			if *r.Receipt != receipts[5] {
				t.Fatalf("repeat answered %+v, want %+v", *r.Receipt, receipts[5])
			}
		default:
			orders[r.Receipt.Session]++
			if r.Receipt.Order != orders[r.Receipt.Session] {
				t.Fatalf("post %d: order %d, want %d", i, r.Receipt.Order, orders[r.Receipt.Session])
			}
		}
		receipts[i] = *r.Receipt
	}
	for _, s := range []string{"a", "b"} {
		hist := e.history(s)
		if int64(len(hist)) != orders[s] {
			t.Fatalf("session %s holds %d events, want %d", s, len(hist), orders[s])
		}
		last := -1
		for _, raw := range hist {
			var ev wire.Event
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			var i int
			fmt.Sscanf(ev.Text, "post %d", &i)
			if i <= last {
				t.Fatalf("session %s: post %d after post %d", s, i, last)
			}
			last = i
		}
	}
}
