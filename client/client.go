package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// ErrUnavailable means no daemon answers and none could be started (or
// auto-start is off). Its code in stream errors is daemon_unavailable.
var ErrUnavailable = errors.New("daemon_unavailable: no albedo daemon answers")

// Options configure a Client: of a home (Home, the default) or of a
// server's URL (URL: cluster mode, see remote.go).
type Options struct {
	// Home is $ALBEDO_HOME; empty means DefaultHome(), unless URL is set
	// or $ALBEDO_URL is.
	Home string
	// URL, if set, is the server's base URL (http:// or https://; its
	// websocket is ws:// or wss:// on the same host): cluster mode, with
	// no home, no daemon.json, no auto-start and no boot check. Empty
	// with Home empty means $ALBEDO_URL, if set.
	URL string
	// AutoStart starts a daemon (Exe daemon --home Home) when none answers.
	AutoStart bool
	// Exe is the albedo binary used for auto-start; empty means this
	// program's own executable.
	Exe string
	// StartTimeout bounds waiting for an auto-started daemon (15 s).
	StartTimeout time.Duration
	// HTTP is the client for API calls; nil means a default one.
	HTTP *http.Client
	// Name is reported in hello as the client ("name/version").
	Name string
	// Guest is the name a guest (a write link's token) goes by; others'
	// names are their tokens'.
	Guest string
	// CallRetry bounds how long an HTTP call keeps looking for a daemon
	// across a restart (30 s).
	CallRetry time.Duration
	// Backoff shapes the delays between attempts.
	Backoff BackoffOptions
	// Token, if set, is used instead of daemon.json's owner token: a bot's
	// or a viewer's token. daemon.json still says where the daemon is.
	// With a URL it is required; empty means $ALBEDO_TOKEN.
	Token string
}

// Snapshot is the daemon a Client currently talks to.
type Snapshot struct {
	PID     int
	Port    int
	Token   string
	Boot    string
	BaseURL string
	// Version is the daemon's version as /healthz said it (after
	// Discover; "" before).
	Version string
}

// Client talks to the daemon of one home, or to the server at one URL
// (cluster mode). All methods may be called from any goroutine.
type Client struct {
	// static after construction
	opts Options
	http *http.Client

	mu    sync.Mutex
	snap  Snapshot
	valid bool
	start sync.Mutex // one auto-start at a time
}

// Passive returns a client of the same home, token and options that never
// starts a daemon: for the calls a user interface makes on its stream's
// behalf (listing sessions once connected), which must leave the decision
// to start one to the stream. A call racing the stream to a daemon that
// just died would otherwise start one too.
func (c *Client) Passive() (*Client, error) {
	o := c.opts
	o.AutoStart = false
	return New(o)
}

// New makes a client. It does not connect; the first call does.
func New(opts Options) (*Client, error) {
	if opts.URL == "" && opts.Home == "" {
		opts.URL = os.Getenv(EnvURL)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 15 * time.Second
	}
	if opts.CallRetry <= 0 {
		opts.CallRetry = 30 * time.Second
	}
	if opts.Name == "" {
		opts.Name = "albedo-client/" + "1"
	}
	if opts.URL != "" {
		return newRemote(opts)
	}
	if opts.Home == "" {
		h, err := DefaultHome()
		if err != nil {
			return nil, err
		}
		opts.Home = h
	}
	hc := opts.HTTP
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{
			Proxy:               nil, // the daemon is on loopback; never proxy
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     30 * time.Second,
			TLSClientConfig:     homeTLS(opts.Home), // a team server's daemon: trusted by daemon.json (tls.go)
		}}
	}
	return &Client{opts: opts, http: hc}, nil
}

// Home is the client's $ALBEDO_HOME ("" in cluster mode).
func (c *Client) Home() string { return c.opts.Home }

// Snapshot returns the daemon the client last found (zero before any call;
// in cluster mode, the URL and token from the start).
func (c *Client) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap
}

// current returns the snapshot to use, discovering the daemon if the last
// one is unknown or was invalidated. A client's first discovery acts for
// a user (a command): it starts a daemon whatever daemon.down says. Once
// it has found one, a client whose daemon went away follows daemon.down,
// as a stream does: a call that meets a stop on purpose fails with
// ErrStopped instead of starting the next daemon. A terminal's own
// requests (a session's usage after a turn, a page of history) are no
// user asking for one.
func (c *Client) current(ctx context.Context) (Snapshot, error) {
	c.mu.Lock()
	if c.valid {
		s := c.snap
		c.mu.Unlock()
		return s, nil
	}
	found := c.snap.Boot != ""
	c.mu.Unlock()
	if c.remote() {
		return c.Discover(ctx)
	}
	return c.discover(ctx, !found)
}

// invalidate forgets snap so that the next call re-reads daemon.json.
func (c *Client) invalidate(snap Snapshot) {
	if c.remote() {
		return // the URL is all there is
	}
	c.mu.Lock()
	if c.snap.Boot == snap.Boot {
		c.valid = false
	}
	c.mu.Unlock()
}

// Discover re-reads daemon.json, checks that its daemon answers, and, with
// AutoStart, starts one when none does. It acts for a user (a command, a
// terminal opening, a retry), so it starts one whatever daemon.down says;
// a failed start is a *StartError. Without AutoStart it reports what
// daemon.down says, if anything, as its ErrUnavailable. In cluster mode it
// asks the URL's /healthz whether a server answers there, and nothing
// more: an error matching ErrUnavailable when none does.
func (c *Client) Discover(ctx context.Context) (Snapshot, error) {
	if c.remote() {
		return c.probeRemote(ctx)
	}
	return c.discover(ctx, true)
}

// discover is Discover. A stream recovering on its own (explicit false)
// starts no daemon where daemon.down says none should be started
// (downErr): after a stop on purpose, or after a failed start while
// config.toml is unchanged. In cluster mode it is the URL, unprobed: the
// request or the dial that follows finds out.
func (c *Client) discover(ctx context.Context, explicit bool) (Snapshot, error) {
	if c.remote() {
		return c.Snapshot(), nil
	}
	snap, err := c.probe(ctx)
	if err == nil {
		return c.adopt(snap), nil
	}
	if !c.opts.AutoStart {
		if derr := c.downErr(); derr != nil {
			return Snapshot{}, derr
		}
		return Snapshot{}, fmt.Errorf("%w (%v)", ErrUnavailable, err)
	}
	c.start.Lock()
	defer c.start.Unlock()
	if snap, err := c.probe(ctx); err == nil { // someone else started it meanwhile
		return c.adopt(snap), nil
	}
	if !explicit {
		// Read after the lock: another stream of this client may have
		// just failed to start one.
		if derr := c.downErr(); derr != nil {
			return Snapshot{}, derr
		}
	}
	snap, err = c.startDaemon(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	return c.adopt(snap), nil
}

func (c *Client) adopt(s Snapshot) Snapshot {
	c.mu.Lock()
	c.snap, c.valid = s, true
	c.mu.Unlock()
	return s
}

// probe reads daemon.json and asks its daemon's /healthz whether it is that
// daemon (same boot id).
func (c *Client) probe(ctx context.Context) (Snapshot, error) {
	if c.remote() {
		return Snapshot{}, ErrNoHome
	}
	info, err := ReadDaemonFile(c.opts.Home)
	if err != nil {
		return Snapshot{}, err
	}
	if !ProcessAlive(info.PID) {
		return Snapshot{}, fmt.Errorf("daemon.json names pid %d, which is not running", info.PID)
	}
	s := Snapshot{PID: info.PID, Port: info.Port, Token: info.Token, Boot: info.Boot, BaseURL: info.URL}
	if s.BaseURL == "" {
		s.BaseURL = "http://127.0.0.1:" + strconv.Itoa(info.Port)
	}
	if c.opts.Token != "" {
		s.Token = c.opts.Token
	}
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var h struct {
		Boot    string `json:"boot"`
		Version string `json:"version"`
	}
	if err := c.rawJSON(hctx, s, http.MethodGet, "/healthz", nil, nil, &h); err != nil {
		return Snapshot{}, err
	}
	if h.Boot != s.Boot {
		return Snapshot{}, fmt.Errorf("port %d answers for another daemon", s.Port)
	}
	s.Version = h.Version
	return s, nil
}

func (c *Client) exe() (string, error) {
	if c.opts.Exe != "" {
		return c.opts.Exe, nil
	}
	return os.Executable()
}
