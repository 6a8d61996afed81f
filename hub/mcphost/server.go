package mcphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"albedo/hub/tools"
	"albedo/wire"
)

// The states of a server, as Status says them.
const (
	StateStopped  = "stopped"  // not running: started when needed
	StateStarting = "starting" // its program or first request, then MCP's handshake
	StateReady    = "ready"
	StateFailed   = "failed" // it could not start, or died; Error says why
)

// retryAfter is how long a server that failed to start is not tried
// again: the turns meanwhile are offered its tools as last listed, or
// none, at once, rather than each waiting out another start.
const retryAfter = 30 * time.Second

// server is one hosted MCP server: its configuration, its session while
// it runs, and its tools as last listed.
type server struct {
	name string
	cfg  resolved
	host *Host

	mu       sync.Mutex
	sess     *mcp.ClientSession // nil while it does not run
	starting chan struct{}      // closed when the start under way ends; nil if none
	stopping bool               // the host stops sess: its end is no failure
	tools    []tool             // as last listed
	notes    []string           // what of its list was left out, and why
	listed   bool
	state    string
	err      string    // why it failed, last
	failedAt time.Time // when it last failed to start
	inflight int
	lastUse  time.Time
	idle     *time.Timer
	removed  bool
	stderr   *Tail
}

// tool is one tool a server lists, as offered.
type tool struct {
	spec     tools.Spec
	readOnly bool
}

func newServer(h *Host, name string, cfg resolved) *server {
	return &server{name: name, cfg: cfg, host: h, state: StateStopped, stderr: &Tail{Max: tailBytes}}
}

// session is the server's running session, started if it is not: it
// waits for a start under way, or begins one, bounded by the server's
// start timeout (not ctx, so that a start a turn gives up on still
// serves the next). A server that failed to start less than retryAfter
// ago is not tried again.
func (s *server) session(ctx context.Context) (*mcp.ClientSession, error) {
	s.mu.Lock()
	if s.removed {
		s.mu.Unlock()
		return nil, fmt.Errorf("MCP server %s was removed from config.toml", s.name)
	}
	if s.sess != nil {
		defer s.mu.Unlock()
		return s.sess, nil
	}
	if s.starting == nil {
		if s.state == StateFailed && time.Since(s.failedAt) < retryAfter {
			defer s.mu.Unlock()
			return nil, errors.New(s.err)
		}
		s.starting, s.state, s.stderr = make(chan struct{}), StateStarting, &Tail{Max: tailBytes}
		go s.start(s.starting)
	}
	wait := s.starting
	s.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return nil, fmt.Errorf("MCP server %s: %w", s.name, ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		return nil, errors.New(s.err)
	}
	return s.sess, nil
}

// start connects and lists the tools, then closes done.
func (s *server) start(done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithTimeout(s.host.ctx, s.cfg.start)
	defer cancel()
	sess, list, notes, err := s.connect(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starting = nil
	if err == nil && s.removed {
		sess.Close()
		err = errors.New("removed from config.toml while it started")
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %v (start_timeout): %w", s.cfg.start, err)
		}
		s.state, s.err, s.failedAt = StateFailed, s.failure("could not start", err), time.Now()
		s.host.log.Warn("an MCP server could not start", "server", s.name, "err", s.err)
		return
	}
	s.sess, s.tools, s.notes, s.listed, s.state, s.err = sess, list, notes, true, StateReady, ""
	s.host.log.Info("an MCP server started", "server", s.name, "tools", len(list))
	for _, n := range notes {
		s.host.log.Warn("an MCP server's tool is not offered", "server", s.name, "why", n)
	}
	go s.watch(sess)
	s.touchLocked()
}

// tailBytes is what is kept of a server's stderr.
const tailBytes = 1 << 10

// failure says why the server failed: what happened, err, and the last
// words of its program's standard error, if any.
func (s *server) failure(what string, err error) string {
	msg := fmt.Sprintf("MCP server %s %s: %v", s.name, what, err)
	if t := strings.Join(strings.Fields(s.stderr.String()), " "); t != "" {
		msg += "; its last words: " + t
	}
	return msg
}

// connect starts the server's program (or reaches its URL), makes MCP's
// handshake and lists its tools.
func (s *server) connect(ctx context.Context) (*mcp.ClientSession, []tool, []string, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "albedo", Version: "1"}, &mcp.ClientOptions{
		// No roots: a server that takes the client's roots (the
		// filesystem server) keeps the directories its command names.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			go s.relist()
		},
	})
	var t mcp.Transport
	if s.cfg.url != "" {
		t = &mcp.StreamableClientTransport{Endpoint: s.cfg.url, HTTPClient: &http.Client{Transport: headers{s.cfg.headers}}}
	} else {
		cmd := exec.Command(s.cfg.command[0], s.cfg.command[1:]...)
		cmd.Dir, cmd.Env, cmd.Stderr = s.cfg.cwd, append(BaseEnv(s.host.getenv), s.cfg.env...), s.stderr
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	sess, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	list, notes, err := listTools(ctx, sess)
	if err != nil {
		sess.Close()
		return nil, nil, nil, fmt.Errorf("list its tools: %w", err)
	}
	return sess, list, notes, nil
}

// relist lists the server's tools again: it said they changed.
func (s *server) relist() {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.host.ctx, s.cfg.start)
	defer cancel()
	list, notes, err := listTools(ctx, sess)
	if err != nil {
		s.host.log.Warn("an MCP server's tools could not be listed again", "server", s.name, "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == sess {
		s.tools, s.notes = list, notes
		s.host.log.Info("an MCP server's tools changed", "server", s.name, "tools", len(list))
	}
}

// listTools reads a server's tools, at most tools.MaxTools, each checked
// as a bot's are: a name the daemon can offer, a description within
// bounds, an input schema that is a JSON object of type object. One that
// is not is left out, and a note says why.
func listTools(ctx context.Context, sess *mcp.ClientSession) ([]tool, []string, error) {
	var out []tool
	var notes []string
	seen := map[string]bool{}
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, err
		}
		if len(out) == tools.MaxTools {
			notes = append(notes, fmt.Sprintf("more than %d tools: the rest are left out", tools.MaxTools))
			break
		}
		spec, why := specOf(t)
		switch {
		case why != "":
			notes = append(notes, why)
		case seen[spec.Name]:
			notes = append(notes, fmt.Sprintf("tool %q: listed twice", spec.Name))
		default:
			seen[spec.Name] = true
			out = append(out, tool{spec: spec, readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint})
		}
	}
	return out, notes, nil
}

// specOf is t as a source's tool, or why it cannot be offered.
func specOf(t *mcp.Tool) (tools.Spec, string) {
	name := t.Name
	if len(name) > 80 {
		name = name[:80] + "…"
	}
	if !tools.ValidMCPName(t.Name) {
		return tools.Spec{}, fmt.Sprintf("tool %q: a name is 1–%d of A-Z a-z 0-9 _ - .", strings.ToValidUTF8(name, "?"), tools.MaxNameBytes)
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		schema = []byte(`{"type":"object"}`)
	}
	desc := wire.CutUTF8(strings.ReplaceAll(strings.ToValidUTF8(t.Description, "?"), "\x00", ""), tools.MaxDescriptionBytes)
	spec := tools.Spec{Name: t.Name, Description: desc, InputSchema: schema}
	if err := tools.CheckSchema(spec); err != nil {
		return tools.Spec{}, fmt.Sprintf("tool %q: %v", t.Name, err)
	}
	return spec, ""
}

// watch waits for the session's end: a program that exits, a connection
// that drops. One the host did not stop is a failure, said in the log
// and the status; the next call, or the next turn that offers its tools,
// starts it again.
func (s *server) watch(sess *mcp.ClientSession) {
	err := sess.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != sess {
		return
	}
	s.sess = nil
	if s.idle != nil {
		s.idle.Stop()
	}
	if s.stopping || s.removed {
		s.stopping, s.state = false, StateStopped
		return
	}
	if err == nil {
		err = errors.New("it closed the connection")
	}
	s.state, s.err = StateFailed, s.failure("ended", err)
	s.host.log.Warn("an MCP server ended", "server", s.name, "err", s.err)
}

// drop forgets sess, which a call found ended, before watch hears of it:
// the next call starts the server again rather than meet it closing.
func (s *server) drop(sess *mcp.ClientSession, err error) {
	s.mu.Lock()
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	said := s.failure("ended", err)
	s.sess, s.state, s.err = nil, StateFailed, said
	s.mu.Unlock()
	s.host.log.Warn("an MCP server ended", "server", s.name, "err", said)
	// Close waits for the program to exit, and so for the last of its
	// stderr, which its crash may have written after the call saw the
	// connection end: the failure, unless something came since, says it.
	sess.Close()
	s.mu.Lock()
	if s.sess == nil && s.state == StateFailed && s.err == said {
		s.err = s.failure("ended", err)
	}
	s.mu.Unlock()
}

// begin and end bracket a call: a server is never stopped for idleness
// while a call runs.
func (s *server) begin() {
	s.mu.Lock()
	s.inflight++
	s.mu.Unlock()
}

func (s *server) end() {
	s.mu.Lock()
	s.inflight--
	s.touchLocked()
	s.mu.Unlock()
}

// touchLocked notes a use and arms the idle stop.
func (s *server) touchLocked() {
	s.lastUse = time.Now()
	if s.idle == nil {
		s.idle = time.AfterFunc(s.cfg.idle, s.idleStop)
		return
	}
	s.idle.Reset(s.cfg.idle)
}

// idleStop stops a server unused for its idle timeout.
func (s *server) idleStop() {
	s.mu.Lock()
	if s.sess == nil || s.inflight > 0 || time.Since(s.lastUse) < s.cfg.idle {
		s.mu.Unlock()
		return
	}
	sess := s.sess
	s.stopping = true
	s.mu.Unlock()
	s.host.log.Info("an MCP server stopped, idle", "server", s.name, "idle", s.cfg.idle)
	sess.Close()
}

// remove stops the server for good: removed or changed in config.toml.
func (s *server) remove() {
	s.mu.Lock()
	s.removed = true
	sess := s.sess
	if s.idle != nil {
		s.idle.Stop()
	}
	s.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
}

// headers is an http.RoundTripper that sets a server's headers on each
// request.
type headers struct{ set map[string]string }

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.set) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.set {
			r.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Tail keeps the newest bytes written to it (a program's stderr, a
// command's output), at most Max.
type Tail struct {
	Max   int
	mu    sync.Mutex
	buf   []byte
	total int64 // every byte written
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.Max {
		t.buf = append(t.buf[:0], p[len(p)-t.Max:]...)
		return len(p), nil
	}
	if over := len(t.buf) + len(p) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// String is what is kept, valid UTF-8.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "")
}

// Newest is the last n bytes kept, valid UTF-8, and whether more was
// written than that.
func (t *Tail) Newest(n int) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.ToValidUTF8(string(b), ""), t.total > int64(len(b))
}
