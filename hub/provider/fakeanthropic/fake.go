// Package fakeanthropic is a stand-in for Anthropic's Messages API in
// tests: it records each request and answers with a scripted reply in
// the API's own server-sent events (message_start, content blocks with
// their deltas, message_delta with the usage, message_stop), which the
// official SDK reads in albedo's Anthropic provider; models.go answers
// GET /v1/models as the API lists its models.
package fakeanthropic

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Reply scripts one answer.
type Reply struct {
	// Chunks are the text's deltas; empty answers "fake: <last user text>"
	// a word at a time.
	Chunks []string
	// Thinking, when the request enables thinking, comes first in a
	// thinking block (never shown: a provider must not emit it).
	Thinking string
	// Status, when not 0 or 200, is answered instead, with an error body
	// of Message.
	Status  int
	Message string
	// Usage is reported (message_start's input, message_delta's output);
	// nil counts words.
	Usage *Usage
	// Block, when set, is waited for after the text, before the end (or
	// until the request ends): a reply to interrupt.
	Block chan struct{}
	// ToolCalls follow the text as tool_use blocks, their input streamed
	// as input_json_delta pieces; the stop reason is then "tool_use".
	// With calls and no chunks, no text block is sent.
	ToolCalls []ToolCall
}

// ToolCall is one tool_use block of a scripted reply.
type ToolCall struct {
	ID, Name, Input string
}

// Usage is a usage report in Anthropic's words.
type Usage struct {
	InputTokens, CacheReadInputTokens, OutputTokens, ThinkingTokens int64
}

// Request is one recorded request body.
type Request struct {
	Model       string            `json:"model"`
	MaxTokens   int64             `json:"max_tokens"`
	Temperature *float64          `json:"temperature"` // never sent: albedo's SDK takes none
	Stream      bool              `json:"stream"`
	System      []json.RawMessage `json:"system"`
	Messages    []struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`          // tool_use
			Name      string          `json:"name"`        // tool_use
			Input     json.RawMessage `json:"input"`       // tool_use
			ToolUseID string          `json:"tool_use_id"` // tool_result
			Content   json.RawMessage `json:"content"`     // tool_result
			Source    *struct {       // image
				Type      string `json:"type"`
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
			} `json:"source"`
		} `json:"content"`
	} `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int64  `json:"budget_tokens"`
	} `json:"thinking"`
	Key string `json:"-"` // the key, from x-api-key or a bearer Authorization (the SDK's)
}

// Server is a running fake.
type Server struct {
	URL string // for base_url

	ln  net.Listener
	srv *http.Server

	mu       sync.Mutex
	script   []Reply
	requests []Request
}

// Start serves on 127.0.0.1 until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("GET /v1/models", s.listModels)
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Push queues replies for the next requests, in order.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	s.script = append(s.script, r...)
	s.mu.Unlock()
}

// Requests returns the requests so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Key = r.Header.Get("X-Api-Key")
	if req.Key == "" {
		req.Key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var rep Reply
	if len(s.script) > 0 {
		rep, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	if rep.Status != 0 && rep.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": rep.Message}})
		w.Write(b)
		return
	}
	stream(w, r, req, rep)
}

// stream answers as the API does, event by event.
func stream(w http.ResponseWriter, r *http.Request, req Request, rep Reply) {
	chunks := rep.Chunks
	if len(chunks) == 0 && len(rep.ToolCalls) == 0 {
		last := ""
		for _, m := range req.Messages {
			if m.Role == "user" && len(m.Content) > 0 {
				last = m.Content[len(m.Content)-1].Text
				for _, c := range m.Content {
					if c.Type == "text" {
						last = c.Text // the text beside an image
					}
				}
			}
		}
		chunks = strings.SplitAfter("fake: "+last, " ")
	}
	u := rep.Usage
	if u == nil {
		u = &Usage{InputTokens: int64(len(req.Messages)), OutputTokens: int64(len(chunks))}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	send := func(event string, data map[string]any) {
		data["type"] = event
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		fl.Flush()
	}
	send("message_start", map[string]any{"message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "content": []any{}, "model": req.Model,
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.InputTokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": u.CacheReadInputTokens, "output_tokens": 1},
	}})
	index := 0
	if req.Thinking != nil && req.Thinking.Type == "enabled" && rep.Thinking != "" {
		send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "thinking_delta", "thinking": rep.Thinking}})
		send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "signature_delta", "signature": "c2lnbmVk"}})
		send("content_block_stop", map[string]any{"index": index})
		index++
	}
	send("ping", map[string]any{})
	if len(chunks) > 0 {
		send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, c := range chunks {
			send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": c}})
		}
	}
	if rep.Block != nil {
		select {
		case <-rep.Block:
		case <-r.Context().Done():
			return
		}
	}
	stop := "end_turn"
	if len(chunks) > 0 {
		send("content_block_stop", map[string]any{"index": index})
		index++
	}
	for _, c := range rep.ToolCalls {
		send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": ""}})
		for piece := range slices.Chunk([]byte(c.Input), 5) {
			send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(piece)}})
		}
		send("content_block_stop", map[string]any{"index": index})
		index++
		stop = "tool_use"
	}
	usage := map[string]any{"output_tokens": u.OutputTokens}
	if u.ThinkingTokens > 0 {
		usage["output_tokens_details"] = map[string]any{"thinking_tokens": u.ThinkingTokens}
	}
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
	send("message_stop", map[string]any{})
}
