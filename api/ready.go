package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// GET /readyz tells a load balancer whether to send this daemon traffic:
// 200 {"ready":true,"checks":{…}} when every check passes, else 503
// {"ready":false,"reason","checks"}. It needs no token: it says only
// whether the store answers, in words that name no host or error detail
// (those go to the log, once per change). An advisory check (a cluster's
// NATS) is reported among the checks but does not make the daemon
// unready: inputs, turns and history need only the store, and a balancer
// that probes every node would otherwise take them all out at once while
// NATS is away. A daemon that is stopping is not ready, so that traffic
// drains first.

// ReadyCheck is one dependency /readyz asks about. Check is given a
// context that ends after ReadyTimeout; it may be called from any
// goroutine, and concurrently.
type ReadyCheck struct {
	Name  string
	Check func(context.Context) error
	// Advisory checks are reported, and leave the daemon ready.
	Advisory bool
	// Detail says that a failing check's error is fit for /readyz: words
	// that name no host, path or secret (the MCP servers' names). Else
	// it is reported as "failing".
	Detail bool
}

// ReadyTimeout bounds each check, so that a store that hangs makes the
// daemon unready rather than the load balancer's probe time out.
const ReadyTimeout = 2 * time.Second

// readyState is the outcome of one round of checks.
type readyState struct {
	Ready  bool              `json:"ready"`
	Reason string            `json:"reason,omitempty"`
	Checks map[string]string `json:"checks"`
	Build  Build             `json:"build"`
}

// checks are the store's, then Options.ReadyChecks (NATS's, in a cluster).
func (s *Server) checks() []ReadyCheck {
	ping := s.hub.Ping
	if s.storePing != nil {
		ping = s.storePing
	}
	return append([]ReadyCheck{{Name: "store", Check: ping}}, s.opts.ReadyChecks...)
}

// ready runs the checks in order and stops at the first that fails.
func (s *Server) ready(ctx context.Context) readyState {
	st := readyState{Ready: true, Checks: map[string]string{}, Build: s.opts.Build}
	if s.draining.Load() {
		return readyState{Reason: "the daemon is draining", Checks: st.Checks, Build: st.Build}
	}
	if s.ws.Closing() || s.hub.IsStopping() {
		return readyState{Reason: "the daemon is stopping", Checks: st.Checks, Build: st.Build}
	}
	for _, c := range s.checks() {
		cctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
		err := c.Check(cctx)
		timedOut := cctx.Err() != nil
		cancel()
		switch {
		case err == nil:
			st.Checks[c.Name] = "ok"
			continue
		case timedOut:
			st.Checks[c.Name] = "no answer within " + ReadyTimeout.String()
		case c.Detail:
			st.Checks[c.Name] = err.Error()
		default:
			st.Checks[c.Name] = "failing"
		}
		if c.Advisory {
			continue
		}
		st.Ready, st.Reason = false, c.Name+": "+st.Checks[c.Name]
		s.noteReady(st.Reason, err)
		return st
	}
	s.noteReady("", nil)
	return st
}

// noteReady logs a change of readiness once, with the error the probe's
// answer leaves out.
func (s *Server) noteReady(reason string, err error) {
	s.mu.Lock()
	changed := reason != s.unready
	s.unready = reason
	s.mu.Unlock()
	switch {
	case !changed:
	case reason == "":
		s.log.Info("ready again")
	default:
		s.log.Warn("not ready", "reason", reason, "err", err)
	}
}

func (s *Server) readyz(c echo.Context) error {
	st := s.ready(c.Request().Context())
	code := http.StatusOK
	if !st.Ready {
		code = http.StatusServiceUnavailable
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(code, st)
}

// ReadyHandler is /readyz alone, for a listener of its own (the daemon's
// --metrics-addr).
func (s *Server) ReadyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := s.ready(r.Context())
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !st.Ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(st)
	})
}

// readyNow runs the checks as /readyz does, for the albedo_ready gauge.
func (s *Server) readyNow() bool {
	ctx, cancel := context.WithTimeout(context.Background(), ReadyTimeout)
	defer cancel()
	return s.ready(ctx).Ready
}
