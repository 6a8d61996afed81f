package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"albedo/client"
	"albedo/wire"
)

// Bounds of the tools' arguments and answers.
const (
	maxListed      = 200              // sessions list_sessions names
	defaultRead    = 20               // messages read_session reads by default
	maxRead        = 200              // and at most
	maxTextBytes   = 64 << 10         // a message's text in an answer, cut past it
	maxAnswerBytes = 512 << 10        // an answer, in all
	maxInputBytes  = 256 << 10        // text sent (the daemon's own bound may be lower)
	defaultWait    = 10 * time.Minute // send_message and ask_people wait this long by default
	maxWait        = time.Hour
)

// The tools' arguments. A session is named as the CLI names it: its id,
// the short id the terminal shows, or its title (client.ResolveSession).
type (
	listIn struct {
		Limit int `json:"limit,omitempty" jsonschema:"how many of the most recently active sessions (default and most 200)"`
	}
	readIn struct {
		Session string `json:"session" jsonschema:"the session: its id, short id or title"`
		Last    int    `json:"last,omitempty" jsonschema:"how many of its newest messages (default 20, most 200)"`
		After   int64  `json:"after,omitempty" jsonschema:"read the messages after this offset instead of the newest"`
	}
	sendIn struct {
		Session string `json:"session" jsonschema:"the session: its id, short id or title"`
		Text    string `json:"text" jsonschema:"the message"`
		Wait    *bool  `json:"wait,omitempty" jsonschema:"wait for the turn's reply (default true)"`
		Timeout int    `json:"timeout_seconds,omitempty" jsonschema:"how long to wait for the reply (default 600, most 3600)"`
	}
	askIn struct {
		Session  string `json:"session" jsonschema:"the session: its id, short id or title"`
		Question string `json:"question" jsonschema:"what to ask the session's people"`
		Timeout  int    `json:"timeout_seconds,omitempty" jsonschema:"how long to wait for an answer (default 600, most 3600)"`
	}
)

// message is one message of a session, as the tools answer with it.
type message struct {
	Offset int64     `json:"offset"`
	Author string    `json:"author"`
	Role   wire.Role `json:"role"`
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
}

type server struct{ c *client.Client }

// add registers the tools on s, acting through c.
func add(s *mcp.Server, c *client.Client) {
	sv := &server{c: c}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)}
	writes := &mcp.ToolAnnotations{DestructiveHint: new(bool), OpenWorldHint: new(bool)}
	mcp.AddTool(s, &mcp.Tool{Name: "list_sessions", Annotations: ro,
		Description: "Lists the albedo sessions this token may read, most recently active first: id, title, provider and state."}, sv.list)
	mcp.AddTool(s, &mcp.Tool{Name: "read_session", Annotations: ro,
		Description: "Reads a session's messages, oldest first: its newest N, or those after an offset. Each has its offset, author, role and text."}, sv.read)
	mcp.AddTool(s, &mcp.Tool{Name: "send_message", Annotations: writes,
		Description: "Sends a message to a session, which runs a turn of its model (or bot), and unless wait is false returns the reply when the turn ends."}, sv.send)
	mcp.AddTool(s, &mcp.Tool{Name: "ask_people", Annotations: writes,
		Description: "Posts a question to a session's people and waits, up to a timeout, for the next message a person writes there, which it returns."}, sv.ask)
}

func (sv *server) list(ctx context.Context, _ *mcp.CallToolRequest, in listIn) (*mcp.CallToolResult, any, error) {
	limit := in.Limit
	if limit <= 0 || limit > maxListed {
		limit = maxListed
	}
	page, err := sv.c.SessionsPage(ctx, "", limit)
	if err != nil {
		return nil, nil, err
	}
	type row struct {
		ID       string `json:"id"`
		Title    string `json:"title"`
		Provider string `json:"provider"`
		Phase    string `json:"phase"`
		Updated  string `json:"updated_at"`
	}
	out := make([]row, 0, len(page.Sessions))
	for _, s := range page.Sessions {
		out = append(out, row{ID: s.ID, Title: s.Title, Provider: s.ResolvedProvider, Phase: string(s.Phase), Updated: s.UpdatedAt.Format(time.RFC3339)})
	}
	return answer(map[string]any{"sessions": out})
}

func (sv *server) read(ctx context.Context, _ *mcp.CallToolRequest, in readIn) (*mcp.CallToolResult, any, error) {
	s, err := sv.c.ResolveSession(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	last := in.Last
	if last <= 0 {
		last = defaultRead
	}
	last = min(last, maxRead)
	msgs, err := sv.messages(ctx, s, in.After, last)
	if err != nil {
		return nil, nil, err
	}
	return answer(map[string]any{"session": s.ID, "title": s.Title, "head": s.Head, "messages": msgs})
}

// readPages bounds the pages of events read_session reads for its
// messages (turns, tool calls and settings are events too).
const readPages = 8

// messages are n of s's messages, oldest first: the first n after
// offset after, or the newest n when after is 0.
func (sv *server) messages(ctx context.Context, s wire.Session, after int64, n int) ([]message, error) {
	msgs := []message{}
	keep := func(ev wire.Event) {
		if ev.Type == wire.EventMessage && ev.Text != "" && len(msgs) < n {
			msgs = append(msgs, message{Offset: ev.Offset, Author: ev.Author, Role: ev.Role, Text: wire.CutNote(ev.Text, maxTextBytes, "text"), At: ev.At})
		}
	}
	if after > 0 { // forward from after
		for range readPages {
			page, err := sv.c.History(ctx, s.ID, after, 0, maxRead)
			if err != nil {
				return nil, err
			}
			for _, ev := range page.Events {
				keep(ev)
			}
			if len(msgs) >= n || !page.More || len(page.Events) == 0 {
				break
			}
			after = page.Events[len(page.Events)-1].Offset
		}
		return msgs, nil
	}
	before := s.Head + 1 // back from the head
	for range readPages {
		page, err := sv.c.History(ctx, s.ID, 0, before, maxRead)
		if err != nil {
			return nil, err
		}
		for i := len(page.Events) - 1; i >= 0; i-- {
			keep(page.Events[i])
		}
		if len(msgs) >= n || !page.More || len(page.Events) == 0 {
			break
		}
		before = page.Events[0].Offset
	}
	slices.Reverse(msgs)
	return msgs, nil
}

func (sv *server) send(ctx context.Context, _ *mcp.CallToolRequest, in sendIn) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Text) == "" || len(in.Text) > maxInputBytes {
		return nil, nil, fmt.Errorf("text: 1 to %d bytes", maxInputBytes)
	}
	s, err := sv.c.ResolveSession(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	st := sv.c.Stream(client.StreamOptions{})
	defer st.Close()
	sub := st.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch, Offset: s.Head})
	r, err := sv.c.PutInput(ctx, s.ID, uuid.Must(uuid.NewV7()).String(), in.Text)
	if err != nil {
		return nil, nil, err
	}
	if in.Wait != nil && !*in.Wait {
		return answer(map[string]any{"session": s.ID, "turn_id": r.TurnID, "input_id": r.InputID})
	}
	wctx, cancel := context.WithTimeout(ctx, wait(in.Timeout))
	defer cancel()
	var reply *wire.Event
	for {
		it, err := sub.Next(wctx)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				return answer(map[string]any{"session": s.ID, "turn_id": r.TurnID, "state": "waiting",
					"note": "no reply within the timeout; the turn goes on: read_session shows it later"})
			}
			return nil, nil, err
		}
		ev := it.Event
		if it.Op != wire.PushEvent || ev == nil || ev.TurnID != r.TurnID {
			continue
		}
		if ev.Type == wire.EventMessage && ev.Role != wire.RoleUser {
			reply = ev
		}
		if ev.Type == wire.EventTurn && ev.State != wire.TurnStarted {
			out := map[string]any{"session": s.ID, "turn_id": r.TurnID, "state": ev.State}
			if reply != nil {
				out["reply"], out["author"] = wire.CutNote(reply.Text, maxTextBytes, "text"), reply.Author
			}
			if ev.Error != "" {
				out["error"] = ev.Error
			}
			return answer(out)
		}
	}
}

func (sv *server) ask(ctx context.Context, _ *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Question) == "" || len(in.Question) > maxInputBytes {
		return nil, nil, fmt.Errorf("question: 1 to %d bytes", maxInputBytes)
	}
	s, err := sv.c.ResolveSession(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	st, role, err := sv.stream(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	sub := st.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch, Offset: s.Head})
	id := uuid.Must(uuid.NewV7()).String()
	var r wire.Receipt
	if role == wire.TokenBot {
		r, err = st.Post(ctx, s.ID, id, in.Question) // a bot's post starts no turn
	} else {
		r, err = sv.c.PutInput(ctx, s.ID, id, in.Question)
	}
	if err != nil {
		return nil, nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, wait(in.Timeout))
	defer cancel()
	asker := ""
	for {
		it, err := sub.Next(wctx)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				return answer(map[string]any{"session": s.ID, "answered": false, "note": "no one answered within the timeout"})
			}
			return nil, nil, err
		}
		ev := it.Event
		if it.Op != wire.PushEvent || ev == nil || ev.Type != wire.EventMessage || ev.Offset <= s.Head {
			continue
		}
		if ev.InputID == id || ev.InputID == r.InputID {
			// The question itself, which says who asked, or the model's
			// reply to it, which is no one's answer.
			if ev.Role != wire.RoleAssistant && asker == "" {
				asker = ev.AuthorID
			}
			continue
		}
		if ev.Role == wire.RoleUser && ev.AuthorID != asker && asker != "" && ev.Text != "" {
			return answer(map[string]any{"session": s.ID, "answered": true,
				"answer": message{Offset: ev.Offset, Author: ev.Author, Role: ev.Role, Text: wire.CutNote(ev.Text, maxTextBytes, "text"), At: ev.At}})
		}
	}
}

// stream opens a stream to the daemon and waits until its hello is
// answered, which says the token's role.
func (sv *server) stream(ctx context.Context) (*client.Stream, wire.TokenRole, error) {
	connected := make(chan wire.TokenRole, 1)
	st := sv.c.Stream(client.StreamOptions{OnState: func(s client.State) {
		if s.Phase == client.Connected {
			select {
			case connected <- s.Role:
			default:
			}
		}
	}})
	select {
	case role := <-connected:
		return st, role, nil
	case <-st.Done():
		return nil, "", st.Err()
	case <-ctx.Done():
		st.Close()
		return nil, "", ctx.Err()
	}
}

// wait is a tool's timeout in seconds as a duration, defaulted and
// bounded.
func wait(seconds int) time.Duration {
	if seconds <= 0 {
		return defaultWait
	}
	return min(time.Duration(seconds)*time.Second, maxWait)
}

// answer is v as a tool's result: its JSON as text, and as structured
// content, within maxAnswerBytes.
func answer(v any) (*mcp.CallToolResult, any, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	if len(js) > maxAnswerBytes {
		return nil, nil, errors.New("the answer passes 512 KiB: ask for fewer messages")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(js)}}}, v, nil
}
