package hub

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/access"
	"albedo/hub/acphost"
	"albedo/hub/provider"
	"albedo/wire"
)

// validID is what a client-chosen session id may look like: safe in a URL
// path and a file name.
var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CreateSession creates a session. With id == "" the server picks a UUIDv7;
// otherwise the create is idempotent: the same body for the same id returns
// the existing session with created=false, another body is a conflict.
func (h *Hub) CreateSession(ctx context.Context, id string, req wire.SessionCreate) (_ wire.Session, created bool, _ error) {
	return h.CreateSessionBy(ctx, access.Principal{}, id, req)
}

// CreateSessionBy is CreateSession by a principal: a member (an admin too)
// becomes the session's creator, in the session's own transaction. An id
// taken by a session the principal cannot see is a conflict, saying
// nothing of that session.
func (h *Hub) CreateSessionBy(ctx context.Context, by access.Principal, id string, req wire.SessionCreate) (_ wire.Session, created bool, _ error) {
	if id == "" {
		u, err := uuid.NewV7()
		if err != nil {
			return wire.Session{}, false, fmt.Errorf("session id: %w", err)
		}
		id = u.String()
	} else if !validID.MatchString(id) {
		return wire.Session{}, false, wire.Errorf(wire.CodeBadRequest, "session id must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if err := access.CheckTexts("title", req.Title, "workspace", req.Workspace, "provider", req.Provider,
		"model", req.Model, "effort", req.Effort, "system", req.System); err != nil {
		return wire.Session{}, false, err
	}
	if err := access.CheckEffort(&req.Effort); err != nil {
		return wire.Session{}, false, err
	}
	if err := h.checkProvider(req.Provider); err != nil {
		return wire.Session{}, false, err
	}
	if err := h.checkAgent(by, req.Provider, req.Workspace); err != nil {
		return wire.Session{}, false, err
	}
	row := db.Session{
		ID: id, Epoch: randomID(8), Title: req.Title, Workspace: req.Workspace,
		Provider: req.Provider, Model: req.Model, Effort: req.Effort, System: req.System, CreateHash: db.CreateHash(req),
		Temperature: -1, // none chosen
	}
	var out db.Session
	_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		if out, created, err = tx.CreateSession(ctx, row); err != nil || !created || by.MemberID == "" {
			return err
		}
		return tx.PutGrant(ctx, db.Grant{Session: id, Member: by.MemberID, Access: wire.AccessCreator})
	})
	if (err == nil && !created || errors.Is(err, db.ErrConflict)) && by.Role != "" && !by.CanSee(id) {
		// One answer whatever the body: "exists with other settings" for
		// another would confirm a guessed title to who may not see it.
		err = wire.Errorf(wire.CodeConflict, "session id %q is taken", id)
	}
	if err != nil {
		return wire.Session{}, false, wireErr(err)
	}
	if created && by.MemberID != "" {
		h.tokens.SetAccess(by.MemberID, id, wire.AccessCreator)
	}
	if created {
		h.feed.session(out)
		h.sessionsChanged()
		h.changed()
	}
	return h.wireSession(out), created, nil
}

// wireSession is s as the contract shapes it, with what only this daemon
// knows now: its phase, and the provider its turns resolve to (the
// session's own, else the default of config.toml, which may change
// between boots).
func (h *Hub) wireSession(s db.Session) wire.Session {
	w := s.Wire(h.phase(s.ID))
	w.ResolvedProvider = cmp.Or(s.Provider, h.providers.Default())
	if p, err := h.providers.Get(s.Provider); err == nil && !strings.HasPrefix(w.ResolvedProvider, provider.BotPrefix) {
		if win, ok := p.(provider.Windowed); ok {
			w.ContextTokens = win.Context(provider.Request{Model: s.Model})
			w.ResolvedModel = win.Model(provider.Request{Model: s.Model})
		}
	}
	return w
}

// Providers lists the providers a new session may name (bots aside).
func (h *Hub) Providers() wire.Providers { return h.providers.List() }

// checkProvider refuses provider names the daemon cannot run.
func (h *Hub) checkProvider(name string) error {
	if err := h.providers.Check(name); err != nil {
		return wire.Errorf(wire.CodeBadRequest, "%v", err)
	}
	return nil
}

// checkAgent refuses a coding agent's session (its provider an acp
// profile) to whoever is not an admin, since the agent acts on the
// daemon's machine, and one whose workspace is not a directory there.
// by's zero value is the daemon itself.
func (h *Hub) checkAgent(by access.Principal, providerName, workspace string) error {
	if !h.isAgent(providerName) {
		return nil
	}
	if by.Role != "" && by.Role != wire.TokenOwner {
		return wire.Errorf(wire.CodeForbidden, "only an admin may make or change a coding agent's session: the agent acts on the daemon's machine")
	}
	if err := acphost.CheckWorkspace(workspace); err != nil {
		return wire.Errorf(wire.CodeBadRequest, "%v", err)
	}
	return nil
}

// isAgent says whether a session's provider is a coding agent.
func (h *Hub) isAgent(providerName string) bool {
	p, err := h.providers.Get(providerName)
	if err != nil {
		return false
	}
	_, ok := p.(*provider.ACP)
	return ok
}

// CheckChange refuses a change of a coding agent's session (PATCH) to
// whoever is not an admin.
func (h *Hub) CheckChange(ctx context.Context, by access.Principal, session string) error {
	s, err := h.db.Session(ctx, session)
	if err != nil {
		return wireErr(err)
	}
	if h.isAgent(s.Provider) && by.Role != "" && by.Role != wire.TokenOwner {
		return wire.Errorf(wire.CodeForbidden, "only an admin may make or change a coding agent's session: the agent acts on the daemon's machine")
	}
	return nil
}

// Session returns one session.
func (h *Hub) Session(ctx context.Context, id string) (wire.Session, error) {
	s, err := h.db.Session(ctx, id)
	if err != nil {
		return wire.Session{}, wireErr(err)
	}
	w := h.wireSession(s)
	u, err := h.db.SessionUsage(ctx, id)
	if err != nil {
		return wire.Session{}, wireErr(err)
	}
	w.Usage = &u
	return w, nil
}

// MaxSessionsPage is the most sessions one page of the list holds.
const MaxSessionsPage = 1000

// SessionsPage lists up to limit sessions (at most MaxSessionsPage) in the
// order of their ids (db.SessionsPage says why): those after the cursor
// after ("" for the first page), only those in only when it is not nil,
// and only the archived, or only the others, when archived is not nil.
// next is the cursor of the page after this one, or "" when the list ends
// here.
func (h *Hub) SessionsPage(ctx context.Context, after string, limit int64, only []string, archived *bool) (_ []wire.Session, next string, _ error) {
	from := ""
	if after != "" {
		var err error
		if from, err = ParseSessionCursor(after); err != nil {
			return nil, "", err
		}
	}
	ss, more, err := h.db.SessionsPage(ctx, from, int(min(limit, MaxSessionsPage)), only, archived)
	if err != nil {
		return nil, "", wireErr(err)
	}
	out := make([]wire.Session, len(ss))
	for i := range ss {
		out[i] = h.wireSession(ss[i])
	}
	if more {
		next = SessionCursor(ss[len(ss)-1].ID)
	}
	return out, next, nil
}

// SessionCursor is the cursor of the list of sessions after the session
// id. Clients take it as opaque (it is the id, base64url), so that what a
// cursor holds can change.
func SessionCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(id))
}

// ParseSessionCursor reads a cursor SessionCursor made, or says it is none.
func ParseSessionCursor(c string) (id string, _ error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	// One cursor per place: the decoder lets line breaks and a last
	// character's spare bits through, which SessionCursor never writes.
	if err != nil || !validID.Match(b) || SessionCursor(string(b)) != c {
		return "", wire.Errorf(wire.CodeBadRequest, "after must be a cursor from a list of sessions (its next)")
	}
	return string(b), nil
}

// ParseETag reads a version from an If-Match value such as `"3"`. A weak
// one (W/"3") is no version: If-Match compares strongly (RFC 7232, 3.1),
// and a session's etag is strong.
func ParseETag(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return 0, false
	}
	v, err := strconv.ParseInt(s[1:len(s)-1], 10, 64)
	return v, err == nil && v > 0
}

// PatchSession changes title, model or effort if etag names the current
// version; each change is also a settings event.
func (h *Hub) PatchSession(ctx context.Context, id, etag string, p wire.SessionPatch, by string) (wire.Session, error) {
	version, ok := ParseETag(etag)
	if !ok {
		return wire.Session{}, wire.Errorf(wire.CodeEtagMismatch, "If-Match %q is not an etag of this session", etag)
	}
	if err := access.CheckTexts("title", p.Title, "model", p.Model, "effort", p.Effort, "system", p.System); err != nil {
		return wire.Session{}, err
	}
	if err := access.CheckEffort(p.Effort); err != nil {
		return wire.Session{}, err
	}
	if p.Temperature != nil && *p.Temperature > 2 {
		return wire.Session{}, wire.Errorf(wire.CodeBadRequest, "temperature is 0 to 2 (-1 for the provider's own), not %g", *p.Temperature)
	}
	if p.Tools != nil && *p.Tools != wire.ToolsAll && *p.Tools != wire.ToolsNone {
		return wire.Session{}, wire.Errorf(wire.CodeBadRequest, "tools is %q or %q, not %q", wire.ToolsAll, wire.ToolsNone, *p.Tools)
	}
	var out db.Session
	_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		out, err = tx.PatchSession(ctx, id, p, version, by)
		return err
	})
	if err != nil {
		return wire.Session{}, wireErr(err)
	}
	h.settingsChanged(out)
	return h.wireSession(out), nil
}

// settingsChanged records a newer version of a session's settings in its
// channel (if loaded) and pushes status.
func (h *Hub) settingsChanged(s db.Session) {
	h.feed.session(s)
	h.mu.Lock()
	ch := h.chans[s.ID]
	h.mu.Unlock()
	if ch == nil {
		return
	}
	ch.mu.Lock()
	newer := ch.newerSettings(sessionSettings(s))
	ch.mu.Unlock()
	if newer {
		h.statusChanged(ch)
	}
}

// DeleteSession deletes a session and its log. Its watchers get a reset
// with reason "deleted" and lose the subscription. The tokens scoped to it
// end with it: it returns the ids of the tokens it revoked and of those it
// narrowed to their other sessions, whose connections the caller closes
// (the narrowed ones to reconnect with their new scope).
func (h *Hub) DeleteSession(ctx context.Context, id string) (revoked, narrowed []string, _ error) {
	defer h.tokens.Changing()() // the session's tokens change
	var nts []db.Token
	_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		revoked, nts, err = tx.DeleteSession(ctx, id)
		return err
	})
	if err != nil {
		return nil, nil, wireErr(err)
	}
	// Its turns stop only now that the delete is committed: a delete that
	// fails changes nothing. A turn that ends meanwhile fails to commit
	// into the deleted session, which is logged and harmless.
	h.sessionGone(id)
	h.tokens.Drop(revoked)
	for _, t := range nts {
		h.tokens.Update(t)
		narrowed = append(narrowed, t.ID)
	}
	h.sessionsChanged()
	h.changed()
	return revoked, narrowed, nil
}

// sessionGone ends what this node holds of a session that was deleted,
// here or on another node: its turns stop, its grants are forgotten, and
// its watchers get a reset (deleted).
func (h *Hub) sessionGone(id string) {
	h.feed.gone(id)
	h.cancelTurns(id)
	if h.opts.Agents != nil {
		go h.opts.Agents.Stop(id) // it waits for the process to end
	}
	h.tokens.DropSession(id)
	h.dropChannel(id)
	h.endScopedTokens(id)
}

// endScopedTokens ends, on this node, the tokens scoped to a deleted
// session: the store revoked those scoped to it alone and narrowed the
// others to the rest of theirs (db's DeleteSession). A node that hears of
// the delete before it reads those changes must not let their
// connections go on (a link's viewer would be let into a session made
// again under the same id): they are closed, and their tokens looked up
// in the store again when used (a daemon alone has every token in
// memory, and its DeleteSession has done all this already).
func (h *Hub) endScopedTokens(session string) {
	if !h.db.Shared() {
		return
	}
	revoked, narrowed := h.tokens.DropScoped(session)
	if f := h.tokenHook.Load(); f != nil && len(revoked)+len(narrowed) > 0 {
		(*f)(revoked, narrowed)
	}
}

// dropChannel forgets a deleted session's channel: its watchers get a
// reset with reason "deleted" and lose the subscription.
func (h *Hub) dropChannel(id string) {
	h.mu.Lock()
	ch := h.chans[id]
	delete(h.chans, id)
	h.mu.Unlock()
	if ch == nil {
		return
	}
	ch.mu.Lock()
	ch.deleted = true
	subs := ch.subList()
	epoch := ch.epoch
	ch.mu.Unlock()
	frame := wire.Encode(wire.ResetPush{Op: wire.PushReset, Session: id, Epoch: epoch, Reason: wire.ResetDeleted})
	for _, s := range subs {
		c := s.conn
		c.mu.Lock()
		if c.subs[id] == s {
			c.dropLocked(s)
			c.queueReply(frame)
		}
		c.mu.Unlock()
		c.signal()
	}
}

// History returns a page of a session's events: after > 0 pages forward
// from there, before > 0 pages backwards, neither gives the first page.
func (h *Hub) History(ctx context.Context, id string, after, before int64, limit int) ([]json.RawMessage, int64, bool, error) {
	limit = min(max(limit, 1), 1000)
	var evs []db.Event
	var more bool
	var s db.Session
	var err error
	for range 2 { // once more if a parent's deletion moved a fork's events meanwhile
		var sp db.Spans
		if s, sp, err = h.db.SpansOf(ctx, id); err != nil {
			return nil, 0, false, wireErr(err)
		}
		if before > 0 {
			evs, err = h.db.EventsBeforeIn(ctx, sp, before, limit, h.opts.MaxPageBytes)
			more = len(evs) > 0 && evs[0].Offset > 1
		} else {
			evs, err = h.db.EventsAfterIn(ctx, sp, after, limit, h.opts.MaxPageBytes)
			more = len(evs) > 0 && evs[len(evs)-1].Offset < s.Head
		}
		if !errors.Is(err, db.ErrMoved) {
			break
		}
	}
	if err != nil {
		return nil, 0, false, wireErr(err)
	}
	out := make([]json.RawMessage, len(evs))
	for i, e := range evs {
		out[i] = e.JSON
	}
	return out, s.Head, more, nil
}
