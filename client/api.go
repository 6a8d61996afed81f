package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"albedo/wire"
)

func sessPath(id string) string { return "/v1/sessions/" + url.PathEscape(id) }

// Sessions lists every session the token may see, most recently active
// first, reading the list a page at a time (in the order of their ids,
// which activity does not change: a session that exists throughout the
// walk is read once).
func (c *Client) Sessions(ctx context.Context) ([]wire.Session, error) {
	return c.sessions(ctx, "")
}

// ArchivedSessions lists the archived sessions the token may see, most
// recently active first, as Sessions lists them all. A daemon older than
// the list's archived filter answers every session: those not archived
// are left out here.
func (c *Client) ArchivedSessions(ctx context.Context) ([]wire.Session, error) {
	all, err := c.sessions(ctx, "true")
	return slices.DeleteFunc(all, func(s wire.Session) bool { return !s.Archived }), err
}

// sessions walks the list's pages: archived is the list's filter ("":
// none).
func (c *Client) sessions(ctx context.Context, archived string) ([]wire.Session, error) {
	var all []wire.Session
	seen := map[string]bool{}
	after := ""
	for {
		page, err := c.sessionsPage(ctx, after, sessionsPageSize, archived)
		if err != nil {
			return nil, err
		}
		// A page of nothing new ends the walk: a server that ignores
		// after (one older than pages) answers the first page again.
		fresh := 0
		for _, s := range page.Sessions {
			if !seen[s.ID] {
				seen[s.ID] = true
				all = append(all, s)
				fresh++
			}
		}
		if page.Next == "" || fresh == 0 {
			break
		}
		after = page.Next
	}
	slices.SortStableFunc(all, func(a, b wire.Session) int {
		return b.UpdatedAt.Compare(a.UpdatedAt)
	})
	return all, nil
}

// sessionsPageSize is the page Sessions asks for: the daemon's largest.
var sessionsPageSize = 1000

// SessionsPage reads one page of the list of sessions, in the order of
// their ids: up to limit (0: the daemon's default, 100; it answers at most
// 1 000), after the cursor after ("" for the first page). The page's Next
// reads the one after it.
func (c *Client) SessionsPage(ctx context.Context, after string, limit int) (wire.SessionList, error) {
	return c.sessionsPage(ctx, after, limit, "")
}

// sessionsPage is SessionsPage, with the list's archived filter ("":
// none).
func (c *Client) sessionsPage(ctx context.Context, after string, limit int, archived string) (wire.SessionList, error) {
	q := url.Values{}
	if archived != "" {
		q.Set("archived", archived)
	}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	path := "/v1/sessions"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out wire.SessionList
	_, err := c.call(ctx, http.MethodGet, path, nil, nil, &out, true)
	return out, err
}

// NewSession creates a session with a server-chosen id. It is not retried
// once sent: use CreateSession with your own id for an idempotent create.
func (c *Client) NewSession(ctx context.Context, req wire.SessionCreate) (wire.Session, error) {
	var s wire.Session
	_, err := c.call(ctx, http.MethodPost, "/v1/sessions", nil, req, &s, false)
	return s, err
}

// CreateSession creates the session id, or returns it if an identical
// request made it before (a different one is a conflict error). Retried
// across restarts.
func (c *Client) CreateSession(ctx context.Context, id string, req wire.SessionCreate) (wire.Session, error) {
	var s wire.Session
	h := http.Header{"If-None-Match": {"*"}}
	_, err := c.call(ctx, http.MethodPut, sessPath(id), h, req, &s, true)
	return s, err
}

// Session reads a session; its ETag field is what PatchSession needs.
func (c *Client) Session(ctx context.Context, id string) (wire.Session, error) {
	var s wire.Session
	_, err := c.call(ctx, http.MethodGet, sessPath(id), nil, nil, &s, true)
	return s, err
}

// PatchSession changes title, model or effort. A stale etag is an error
// matching ErrStaleETag.
func (c *Client) PatchSession(ctx context.Context, id, etag string, p wire.SessionPatch) (wire.Session, error) {
	var s wire.Session
	h := http.Header{"If-Match": {etag}}
	_, err := c.call(ctx, http.MethodPatch, sessPath(id), h, p, &s, false)
	return s, err
}

// Fork makes a fork of a session (POST /v1/sessions/{id}/fork). It is
// not retried once it may have arrived: a retry would make a second fork.
func (c *Client) Fork(ctx context.Context, id string, req wire.ForkRequest) (wire.Session, error) {
	var s wire.Session
	_, err := c.call(ctx, http.MethodPost, sessPath(id)+"/fork", nil, req, &s, false)
	return s, err
}

// Forks lists a session's forks that the caller may read.
func (c *Client) Forks(ctx context.Context, id string) ([]wire.Session, error) {
	var l wire.ForkList
	_, err := c.call(ctx, http.MethodGet, sessPath(id)+"/forks", nil, nil, &l, true)
	return l.Forks, err
}

// Compact compacts a session by hand (POST /v1/sessions/{id}/compact)
// and returns the compaction event.
func (c *Client) Compact(ctx context.Context, id string) (wire.Event, error) {
	var ev wire.Event
	_, err := c.call(ctx, http.MethodPost, sessPath(id)+"/compact", nil, nil, &ev, false)
	return ev, err
}

// DeleteSession deletes a session.
func (c *Client) DeleteSession(ctx context.Context, id string) error {
	_, err := c.call(ctx, http.MethodDelete, sessPath(id), nil, nil, nil, true)
	return err
}

// History returns a page of events: with after ≥ 0 and before == 0 the
// events after that offset; with before > 0 the newest events before it.
func (c *Client) History(ctx context.Context, id string, after, before int64, limit int) (wire.Page, error) {
	q := url.Values{}
	if before > 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	} else {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var p wire.Page
	_, err := c.call(ctx, http.MethodGet, sessPath(id)+"/events?"+q.Encode(), nil, nil, &p, true)
	return p, err
}

// ImportEvents appends the next events of a session restored from an
// export (POST /v1/sessions/{id}/import; at most wire.MaxImportEvents) and
// returns the session's head after them; done marks the export's last.
func (c *Client) ImportEvents(ctx context.Context, id string, evs []wire.Event, done bool) (int64, error) {
	var out wire.SessionImported
	_, err := c.call(ctx, http.MethodPost, sessPath(id)+"/import", nil, wire.SessionImport{Events: evs, Done: done}, &out, true)
	return out.Head, err
}

// SetRead sets this token's person's read marker in session to offset
// (PUT /v1/sessions/{id}/read): their other devices hear of it at once.
func (c *Client) SetRead(ctx context.Context, session string, offset int64) error {
	_, err := c.call(ctx, http.MethodPut, sessPath(session)+"/read", nil, wire.ReadMark{Offset: offset}, nil, true)
	return err
}

// Search finds the messages holding query that the token may read,
// newest first (GET /v1/search): in session only if it is not "", from
// the cursor after ("" for the newest), at most limit (0: the daemon's
// default).
func (c *Client) Search(ctx context.Context, query, session, after string, limit int) (wire.SearchResults, error) {
	q := url.Values{"q": {query}}
	if session != "" {
		q.Set("session", session)
	}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out wire.SearchResults
	_, err := c.call(ctx, http.MethodGet, "/v1/search?"+q.Encode(), nil, nil, &out, true)
	return out, err
}

// PutInput submits an input under inputID (a UUID). It is idempotent, so it
// is retried across restarts with the same id; the receipt is the same
// whichever attempt landed.
func (c *Client) PutInput(ctx context.Context, id, inputID, text string, atts ...wire.Attachment) (wire.Receipt, error) {
	var r wire.Receipt
	_, err := c.call(ctx, http.MethodPut, sessPath(id)+"/inputs/"+url.PathEscape(inputID), nil, wire.Input{Text: text, Attachments: atts}, &r, true)
	return r, err
}

// Input reads an input's receipt.
func (c *Client) Input(ctx context.Context, id, inputID string) (wire.Receipt, error) {
	var r wire.Receipt
	_, err := c.call(ctx, http.MethodGet, sessPath(id)+"/inputs/"+url.PathEscape(inputID), nil, nil, &r, true)
	return r, err
}

// Interrupt stops the session's running turn, if any.
func (c *Client) Interrupt(ctx context.Context, id string) (wire.Interrupted, error) {
	var r wire.Interrupted
	_, err := c.call(ctx, http.MethodPost, sessPath(id)+"/interrupt", nil, nil, &r, false)
	return r, err
}

// Status reads a session's run state.
func (c *Client) Status(ctx context.Context, id string) (wire.Status, error) {
	var st wire.Status
	_, err := c.call(ctx, http.MethodGet, sessPath(id)+"/status", nil, nil, &st, true)
	return st, err
}

// Shutdown asks the current daemon to stop gracefully. It does not start
// one, and returns ErrUnavailable when none runs. A client of a URL
// returns ErrNoHome: it stops no server (behind a load balancer, it would
// not even know which node).
func (c *Client) Shutdown(ctx context.Context) (Snapshot, error) {
	if c.remote() {
		return Snapshot{}, fmt.Errorf("shutdown: %w", ErrNoHome)
	}
	snap, err := c.probe(ctx)
	if err != nil {
		return Snapshot{}, ErrUnavailable
	}
	c.adopt(snap)
	var out json.RawMessage
	return snap, c.rawJSON(ctx, snap, http.MethodPost, "/v1/daemon/shutdown", nil, nil, &out)
}

// BotToken is the answer to AddBot and Share: the token, shown only now.
type BotToken struct {
	Name     string   `json:"name,omitempty"`
	Session  string   `json:"session,omitempty"`
	Sessions []string `json:"sessions,omitempty"`
	Token    string   `json:"token"`
	WSURL    string   `json:"ws_url"`
}

// Bot is one bot of Bots.
type Bot struct {
	Name      string   `json:"name"`
	Sessions  []string `json:"sessions"`
	CreatedAt string   `json:"created_at"`
	Serving   int      `json:"serving"`
}

// AddBot makes a bot token (owner only), limited to sessions if given.
func (c *Client) AddBot(ctx context.Context, name string, sessions []string) (BotToken, error) {
	var t BotToken
	_, err := c.call(ctx, http.MethodPost, "/v1/bots", nil, map[string]any{"name": name, "sessions": sessions}, &t, false)
	return t, err
}

// Bots lists the bots (owner only).
func (c *Client) Bots(ctx context.Context) ([]Bot, error) {
	var out struct {
		Bots []Bot `json:"bots"`
	}
	_, err := c.call(ctx, http.MethodGet, "/v1/bots", nil, nil, &out, true)
	return out.Bots, err
}

// Providers lists the providers a new session may name (GET
// /v1/providers): echo and config.toml's profiles, and the default.
func (c *Client) Providers(ctx context.Context) (wire.Providers, error) {
	var out wire.Providers
	_, err := c.call(ctx, http.MethodGet, "/v1/providers", nil, nil, &out, true)
	return out, err
}

// RemoveBot revokes a bot's token; its connections are closed with 4401.
func (c *Client) RemoveBot(ctx context.Context, name string) error {
	_, err := c.call(ctx, http.MethodDelete, "/v1/bots/"+url.PathEscape(name), nil, nil, nil, false)
	return err
}

// TokenInfo is one stored token of Tokens: its role and name, never the
// token.
type TokenInfo struct {
	Role      wire.TokenRole `json:"role"`
	Name      string         `json:"name"`
	Sessions  []string       `json:"sessions"` // nil: all
	CreatedAt string         `json:"created_at"`
}

// AddOwnerToken makes an owner token named name (owner only); the token is
// in the reply, once.
func (c *Client) AddOwnerToken(ctx context.Context, name string) (string, error) {
	var out struct {
		Token string `json:"token"`
	}
	_, err := c.call(ctx, http.MethodPost, "/v1/tokens", nil, map[string]any{"role": wire.TokenOwner, "name": name}, &out, false)
	return out.Token, err
}

// Tokens lists every stored token: owners, bots, viewers (owner only).
func (c *Client) Tokens(ctx context.Context) ([]TokenInfo, error) {
	var out struct {
		Tokens []TokenInfo `json:"tokens"`
	}
	_, err := c.call(ctx, http.MethodGet, "/v1/tokens", nil, nil, &out, true)
	return out.Tokens, err
}

// RemoveOwnerToken revokes the owner token named name; its connections are
// closed with 4401.
func (c *Client) RemoveOwnerToken(ctx context.Context, name string) error {
	_, err := c.call(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(name), nil, nil, nil, false)
	return err
}

// Share makes a read link to a session, with a label of the daemon's
// choosing, that never expires (ShareLink says more).
func (c *Client) Share(ctx context.Context, session string) (BotToken, error) {
	l, err := c.ShareLink(ctx, session, wire.LinkCreate{})
	return BotToken{Name: l.Label, Token: l.Token, Session: l.Session}, err
}

// ShareLink makes a link to a session (its creator or an admin): read or
// write, labelled, perhaps expiring. Its token is in the reply, once.
func (c *Client) ShareLink(ctx context.Context, session string, req wire.LinkCreate) (wire.LinkCreated, error) {
	var l wire.LinkCreated
	_, err := c.call(ctx, http.MethodPost, sessPath(session)+"/shares", nil, req, &l, false)
	return l, err
}

// Links lists a session's links, never their tokens.
func (c *Client) Links(ctx context.Context, session string) ([]wire.Link, error) {
	var out struct {
		Links []wire.Link `json:"links"`
	}
	_, err := c.call(ctx, http.MethodGet, sessPath(session)+"/shares", nil, nil, &out, true)
	return out.Links, err
}

// Unlink revokes the link of a session labelled label; its connections
// are closed with 4401.
func (c *Client) Unlink(ctx context.Context, session, label string) error {
	_, err := c.call(ctx, http.MethodDelete, sessPath(session)+"/shares/"+url.PathEscape(label), nil, nil, nil, true)
	return err
}

// Unshare revokes every link of a session.
func (c *Client) Unshare(ctx context.Context, session string) error {
	_, err := c.call(ctx, http.MethodDelete, sessPath(session)+"/shares", nil, nil, nil, false)
	return err
}

// Usage reads what the turns cost, summed by by (session, member,
// provider or day) since since ("" for the last 30 days): GET /v1/usage.
func (c *Client) Usage(ctx context.Context, by, since string) (wire.UsageReport, error) {
	q := url.Values{"by": {by}}
	if since != "" {
		q.Set("since", since)
	}
	var out wire.UsageReport
	_, err := c.call(ctx, http.MethodGet, "/v1/usage?"+q.Encode(), nil, nil, &out, true)
	return out, err
}

// Pin pins a session for the caller (pin true) or unpins it.
func (c *Client) Pin(ctx context.Context, id string, pin bool) error {
	method := http.MethodPut
	if !pin {
		method = http.MethodDelete
	}
	_, err := c.call(ctx, method, sessPath(id)+"/pin", nil, nil, nil, true)
	return err
}

// Models lists the models a provider serves ("" for the default
// provider), for a model picker.
func (c *Client) Models(ctx context.Context, provider string) (wire.Models, error) {
	var out wire.Models
	if provider == "" {
		ps, err := c.Providers(ctx)
		if err != nil {
			return out, err
		}
		provider = ps.Default
	}
	_, err := c.call(ctx, http.MethodGet, "/v1/providers/"+url.PathEscape(provider)+"/models", nil, nil, &out, true)
	return out, err
}

// Continue runs on the session's newest reply, which was cut off, and
// returns the turn that does.
func (c *Client) Continue(ctx context.Context, id string) (wire.Continued, error) {
	var out wire.Continued
	_, err := c.call(ctx, http.MethodPost, sessPath(id)+"/continue", nil, nil, &out, false)
	return out, err
}
