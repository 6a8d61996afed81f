package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Cluster mode: a Client made with a URL (Options.URL, or $ALBEDO_URL)
// talks to the server there — one daemon, or the nodes of a cluster
// behind a load balancer — with the token it is given. It has no home:
// no daemon.json, no auto-start, no boot check, no daemon.down. Its
// calls and its streams go to the URL every time, and a stream that
// loses its connection tries the same URL again with its backoff.

// The environment of cluster mode: read by New when Options gives
// neither a URL nor a home.
const (
	EnvURL   = "ALBEDO_URL"   // the server's URL, http:// or https://
	EnvToken = "ALBEDO_TOKEN" // its token, when Options.Token is empty
)

// ErrNoHome is what a client of a URL answers to what only a daemon of a
// home does (Shutdown): a server is stopped where it runs.
var ErrNoHome = errors.New("a client of a server URL has no home and no daemon of its own")

// ServerURL checks a server URL and returns it as the client uses it: the
// scheme (http or https), the host and any path, with no trailing slash.
func ServerURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("server URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("server URL %q: want http://HOST[:PORT] or https://HOST[:PORT]", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", fmt.Errorf("server URL %q: no user, query or fragment: the token goes in ALBEDO_TOKEN", raw)
	}
	u.Path, u.RawPath = strings.TrimRight(u.Path, "/"), ""
	return u.String(), nil
}

// WSURL is the websocket URL of a server's base URL: ws:// for http://,
// wss:// for https://.
func WSURL(base string) string {
	return "ws" + strings.TrimPrefix(base, "http") + "/v1/ws"
}

// newRemote finishes New for a client of a URL.
func newRemote(opts Options) (*Client, error) {
	if opts.Home != "" {
		return nil, errors.New("client: Options.Home and Options.URL exclude each other")
	}
	if opts.AutoStart {
		return nil, errors.New("client: a client of a URL starts no daemon (AutoStart with URL)")
	}
	base, err := ServerURL(opts.URL)
	if err != nil {
		return nil, err
	}
	opts.URL = base
	if opts.Token == "" {
		opts.Token = os.Getenv(EnvToken)
	}
	if opts.Token == "" {
		return nil, fmt.Errorf("client: no token for %s: set Options.Token or $%s", base, EnvToken)
	}
	hc := opts.HTTP
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment, // a server may be behind one
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     30 * time.Second,
		}}
	}
	u, _ := url.Parse(base)
	port, _ := strconv.Atoi(u.Port())
	if port == 0 && u.Scheme == "https" {
		port = 443
	} else if port == 0 {
		port = 80
	}
	c := &Client{opts: opts, http: hc}
	c.snap, c.valid = Snapshot{Port: port, Token: opts.Token, BaseURL: base}, true
	return c, nil
}

// remote says whether the client is in cluster mode (made with a URL).
func (c *Client) remote() bool { return c.opts.URL != "" }

// URL is the server's base URL in cluster mode, "" for a client of a home.
func (c *Client) URL() string { return c.opts.URL }

// probeRemote asks the server's /healthz whether it answers, and notes
// the version it reports.
func (c *Client) probeRemote(ctx context.Context) (Snapshot, error) {
	s := c.Snapshot()
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var h struct {
		OK      bool   `json:"ok"`
		Version string `json:"version"`
	}
	err := c.rawJSON(hctx, s, http.MethodGet, "/healthz", nil, nil, &h)
	if err == nil && !h.OK {
		err = errors.New("/healthz did not say ok")
	}
	if err != nil {
		if ctx.Err() != nil {
			return Snapshot{}, ctx.Err()
		}
		return Snapshot{}, fmt.Errorf("%w at %s (%v)", ErrUnavailable, s.BaseURL, err)
	}
	s.Version = h.Version
	return c.adopt(s), nil
}

// waitRemote is WaitHomeChange for a client of a URL: it returns once the
// server answers /healthz, looking with the client's backoff.
func (c *Client) waitRemote(ctx context.Context) error {
	b := NewBackoff(c.opts.Backoff)
	for {
		if _, err := c.probeRemote(ctx); err == nil {
			return nil
		}
		t := time.NewTimer(b.Next())
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
