package mcphost

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"

	"albedo/hub/tools"
	"albedo/wire"
)

// Host is the MCP servers config.toml names ([mcp.NAME]): it starts each
// when its tools are first needed, offers them, runs their calls, and
// follows config.toml's edits. Its methods may be called from any
// goroutine.
type Host struct {
	log    *slog.Logger
	getenv func(string) string
	ctx    context.Context // ends at Close: every start and list is bounded by it
	cancel context.CancelFunc

	mu      sync.Mutex
	servers map[string]*server
}

// New makes a host of no servers; Reload gives it its servers. getenv
// reads the daemon's environment ({env = …} values, and the little of it
// a server's program gets: baseEnv); nil is os.Getenv.
func New(log *slog.Logger, getenv func(string) string) *Host {
	if getenv == nil {
		getenv = os.Getenv
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Host{log: log, getenv: getenv, ctx: ctx, cancel: cancel, servers: map[string]*server{}}
}

// Reload makes the host's servers those of cfg, config.toml's [mcp]
// tables: a new one is added (started when first needed), one whose
// table changed is stopped and replaced, and one no longer named is
// stopped. A table that is not valid refuses the whole of cfg, and the
// servers before it stay.
func (h *Host) Reload(cfg map[string]ServerConfig) error {
	if len(cfg) > MaxServers {
		return fmt.Errorf("mcp: %d servers; the limit is %d", len(cfg), MaxServers)
	}
	next := make(map[string]resolved, len(cfg))
	for _, name := range slices.Sorted(maps.Keys(cfg)) {
		r, err := cfg[name].check(name, h.getenv)
		if err != nil {
			return err
		}
		next[name] = r
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, s := range h.servers {
		if r, ok := next[name]; !ok || !r.equal(s.cfg) {
			s.remove()
			delete(h.servers, name)
		}
	}
	for name, r := range next {
		if _, ok := h.servers[name]; !ok {
			h.servers[name] = newServer(h, name, r)
		}
	}
	return nil
}

// Close stops every server.
func (h *Host) Close() {
	h.cancel()
	h.mu.Lock()
	list := slices.Collect(maps.Values(h.servers))
	h.servers = map[string]*server{}
	h.mu.Unlock()
	for _, s := range list {
		s.remove()
	}
}

// Offers lists the tools session ("": any) may call of the servers that
// allow(name) (nil: every one) says its provider may use: each server's as last listed, starting (and
// waiting for, within its start timeout or ctx) those that have not
// listed theirs yet. A server that cannot start offers nothing; Status
// says why.
func (h *Host) Offers(ctx context.Context, session string, allow func(server string) bool) []tools.Offer {
	offered := h.serving(session, allow)
	var wg sync.WaitGroup
	for _, s := range offered {
		s.mu.Lock()
		listed := s.listed
		s.mu.Unlock()
		if !listed {
			wg.Go(func() { s.session(ctx) })
		}
	}
	wg.Wait()
	var out []tools.Offer
	for _, s := range offered {
		s.mu.Lock()
		for _, t := range s.tools {
			full := tools.FullName(tools.SourceMCP, s.name, t.spec.Name)
			o := tools.Offer{Full: full, Source: tools.SourceMCP, Owner: s.name, Spec: t.spec, API: tools.APIName(full), Default: tools.Ask}
			if t.readOnly {
				o.Default = tools.Allow
			}
			out = append(out, o)
		}
		s.mu.Unlock()
	}
	return out
}

// serving lists the servers whose tools session ("": any) is offered,
// of those allow (nil: all) takes.
func (h *Host) serving(session string, allow func(string) bool) []*server {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*server
	for _, s := range h.servers {
		if (session == "" || s.cfg.sessions == nil || s.cfg.sessions[session]) && (allow == nil || allow(s.name)) {
			out = append(out, s)
		}
	}
	return out
}

// Status is the state of the servers Offers would ask with the same
// arguments, by name.
func (h *Host) Status(session string, allow func(server string) bool) []wire.MCPServer {
	list := h.serving(session, allow)
	out := make([]wire.MCPServer, 0, len(list))
	for _, s := range list {
		s.mu.Lock()
		st := wire.MCPServer{Name: s.name, Transport: "stdio", State: s.state, Tools: len(s.tools), Notes: slices.Clone(s.notes)}
		if s.cfg.url != "" {
			st.Transport = "http"
		}
		if s.state == StateFailed {
			st.Error = s.err
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b wire.MCPServer) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// server is the server called name, or nil.
func (h *Host) server(name string) *server {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.servers[name]
}
