package fakeopenai

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Reply scripts one answer.
type Reply struct {
	// Chunks are streamed in order. Empty means echo: "fake: <last user
	// message>" split into words.
	Chunks []string
	// Status, when not 0 or 200, is sent instead of a stream, with an
	// OpenAI-style error body carrying Message.
	Status  int
	Message string
	// Break cuts the connection after the chunks, without [DONE].
	Break bool
	// Block, when set, is waited for after the chunks and before [DONE]
	// (or the break); the request's end also unblocks.
	Block chan struct{}
	// Silent sends nothing after the headers until the client gives up.
	Silent bool
	// Pace is waited before each chunk after the first: a slow model, so
	// that a long reply is checkpointed while it streams.
	Pace time.Duration
	// Usage is reported in a last chunk, as OpenAI does when the request
	// asks (stream_options.include_usage); nil reports the words of the
	// messages in and the chunks out, with no cached or reasoning tokens.
	Usage *Usage
	// NoUsage reports none even when asked, as servers that ignore
	// stream_options do.
	NoUsage bool
	// ToolCalls are called after the chunks, streamed as OpenAI streams
	// them: each call's index, id, type and name first, then its
	// arguments in pieces; the finish reason is then "tool_calls". With
	// calls and no chunks, no text is sent.
	ToolCalls []ToolCall
	// WithTools keeps the reply for a request that offers tools: one that
	// offers none meanwhile (a client's side request, as opencode's for a
	// title) gets the echo reply and leaves it queued.
	WithTools bool
}

// ToolCall is one function call a scripted reply makes.
type ToolCall struct {
	ID, Name, Arguments string
}

// Usage is a usage report in OpenAI's words.
type Usage struct {
	PromptTokens, CompletionTokens, CachedTokens, ReasoningTokens int64
}

// Request is one recorded request body.
type Request struct {
	Model           string   `json:"model"`
	Stream          bool     `json:"stream"`
	ReasoningEffort *string  `json:"reasoning_effort"`
	Temperature     *float64 `json:"temperature"`
	StreamOptions   *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
	Raw      map[string]any    `json:"-"`
}

// LastUser returns the text of the last user message: its content, or
// the text of its content parts.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m, ok := r.UserMessage(i); ok {
			return m.Text
		}
	}
	return ""
}

// UserMessage is a user message as the API takes it: content that is a
// string, or an array of text and image_url parts.
type UserMessage struct {
	Name   string
	Text   string   // its string content, or its text parts joined by newlines
	Images []string // the URLs of its image_url parts, in order
}

// UserMessage decodes Messages[i] if it is a user's.
func (r Request) UserMessage(i int) (UserMessage, bool) {
	var m struct {
		Role    string          `json:"role"`
		Name    string          `json:"name"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(r.Messages[i], &m) != nil || m.Role != "user" {
		return UserMessage{}, false
	}
	out := UserMessage{Name: m.Name}
	if json.Unmarshal(m.Content, &out.Text) == nil {
		return out, true
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return UserMessage{}, false
	}
	var texts []string
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "image_url":
			out.Images = append(out.Images, p.ImageURL.URL)
		}
	}
	out.Text = strings.Join(texts, "\n")
	return out, true
}

// Server is a running fake. Its methods may be called from any goroutine.
type Server struct {
	URL string // base URL to put in base_url, ending in /v1

	ln  net.Listener
	srv *http.Server

	mu        sync.Mutex
	script    []Reply
	requests  []Request
	arrived   chan Request
	models    []string // GET /v1/models (models.go)
	modelsSet bool
}

// Start serves on 127.0.0.1 until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, URL: "http://" + ln.Addr().String() + "/v1", arrived: make(chan Request, 1024)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.completions)
	mux.HandleFunc("GET /v1/models", s.listModels)
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server and cuts open streams.
func (s *Server) Close() error { return s.srv.Close() }

// Push queues replies for the next requests, in order; with the queue empty
// a request gets the echo reply.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	s.script = append(s.script, r...)
	s.mu.Unlock()
}

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Arrived delivers each request as it arrives, for tests to wait on.
func (s *Server) Arrived() <-chan Request { return s.arrived }

// completions serves POST /v1/chat/completions: it records the request,
// takes the next scripted reply, and answers with an error status or a
// stream.
func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	_ = json.Unmarshal(body, &req.Raw)
	rep := s.record(req)
	if rep.Status != 0 && rep.Status != http.StatusOK {
		writeError(w, rep)
		return
	}
	stream(w, r, req, rep)
}

// record keeps req among the requests, delivers it to Arrived when there
// is room, and returns the reply scripted for it (the zero Reply, echo,
// when the script is empty).
func (s *Server) record(req Request) Reply {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var rep Reply
	if len(s.script) > 0 && (!s.script[0].WithTools || len(req.Tools) > 0) {
		rep, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	select {
	case s.arrived <- req:
	default:
	}
	return rep
}

// writeError answers with rep.Status and an OpenAI-style error body.
func writeError(w http.ResponseWriter, rep Reply) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.Status)
	msg := rep.Message
	if msg == "" {
		msg = http.StatusText(rep.Status)
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "fake_error", "code": nil, "param": nil}})
	w.Write(b)
}

// stream answers with server-sent events: the role, rep's chunks (or the
// echo of the last user message), then the finish and [DONE], unless rep
// is silent, blocks until the request ends, or breaks the connection.
func stream(w http.ResponseWriter, r *http.Request, req Request, rep Reply) {
	chunks := rep.Chunks
	if len(chunks) == 0 && !rep.Silent && len(rep.ToolCalls) == 0 {
		chunks = strings.SplitAfter("fake: "+req.LastUser(), " ")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	if rep.Silent {
		<-r.Context().Done()
		return
	}
	usage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage && !rep.NoUsage
	send := chunkWriter(w, req.Model, usage)
	send(map[string]any{"role": "assistant", "content": ""}, nil)
	for i, c := range chunks {
		if i > 0 && rep.Pace > 0 && !wait(r, time.After(rep.Pace)) {
			return
		}
		send(map[string]any{"content": c}, nil)
	}
	if rep.Block != nil && !wait(r, rep.Block) {
		return
	}
	if rep.Break {
		cut(w)
		return
	}
	finish := "stop"
	for i, c := range rep.ToolCalls {
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for piece := range slices.Chunk([]byte(c.Arguments), 7) {
			send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": string(piece)}}}}, nil)
		}
		finish = "tool_calls"
	}
	send(map[string]any{}, finish)
	if usage {
		writeUsage(w, req, rep, len(chunks))
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

// chunkWriter returns a func that writes one chat.completion.chunk event
// of model with delta and finish_reason, and flushes it.
// With usage asked for, every chunk carries "usage": null, as OpenAI's do.
func chunkWriter(w http.ResponseWriter, model string, usage bool) func(delta map[string]any, finish any) {
	created := time.Now().Unix()
	fl := w.(http.Flusher)
	return func(delta map[string]any, finish any) {
		chunk := map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
		if usage {
			chunk["usage"] = nil
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
}

// writeUsage writes the last chunk of a stream that asked for usage: no
// choices, and the usage of the whole request, details included.
func writeUsage(w http.ResponseWriter, req Request, rep Reply, chunks int) {
	u := rep.Usage
	if u == nil {
		words := 0
		for _, m := range req.Messages {
			words += len(strings.Fields(string(m)))
		}
		u = &Usage{PromptTokens: int64(words), CompletionTokens: int64(chunks)}
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{},
		"usage": map[string]any{
			"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.PromptTokens + u.CompletionTokens,
			"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedTokens, "audio_tokens": 0},
			"completion_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
		},
	})
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}

// wait blocks until ch delivers or closes (true) or the request ends
// (false).
func wait[T any](r *http.Request, ch <-chan T) bool {
	select {
	case <-ch:
		return true
	case <-r.Context().Done():
		return false
	}
}

// cut closes the TCP connection mid-stream: no final chunk, no [DONE].
func cut(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
		}
	}
}
