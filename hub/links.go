package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/access"
	"albedo/hub/provider"
	"albedo/wire"
)

// Links are tokens to one session, handed to whoever should open it: a
// read link (kind viewer) to watch, a write link (kind guest) to write in
// it under a name its holder picks (hello's name). Each has a label,
// unique in its session, and may expire: past its end it is refused like
// a revoked one, and the connections that hold it are closed (4401,
// "link expired") within a second.

// MaxLinkLife bounds expires_in.
const MaxLinkLife = 366 * 24 * time.Hour

// Share makes a link to session and returns its token, once, with the
// link as it will be listed.
func (h *Hub) Share(ctx context.Context, session string, req wire.LinkCreate) (string, wire.Link, error) {
	kind, prefix := wire.TokenViewer, "alview_"
	switch req.Access {
	case "", wire.AccessRead:
		req.Access = wire.AccessRead
	case wire.AccessWrite:
		kind, prefix = wire.TokenGuest, "alguest_"
	default:
		return "", wire.Link{}, wire.Errorf(wire.CodeBadRequest, `a link's access is "read" or "write", not %q`, req.Access)
	}
	if req.Label == "" {
		b := make([]byte, 3)
		_, _ = rand.Read(b)
		req.Label = "link-" + hex.EncodeToString(b)
	} else if !access.ValidLabel.MatchString(req.Label) {
		return "", wire.Link{}, wire.Errorf(wire.CodeBadRequest, "a link's label is 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit")
	}
	var expires string
	if req.ExpiresIn != "" {
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 || d > MaxLinkLife {
			return "", wire.Link{}, wire.Errorf(wire.CodeBadRequest, "expires_in is a duration such as 30m or 24h, at most %s, not %q", MaxLinkLife, req.ExpiresIn)
		}
		expires = time.Now().Add(d).UTC().Format(time.RFC3339Nano)
	}
	tok := access.NewToken(prefix)
	defer h.tokens.Changing()()
	row := db.Token{ID: uuid.Must(uuid.NewV7()).String(), Kind: kind, Name: string(kind), Hash: access.HashToken(tok),
		Sessions: session, Label: req.Label, ExpiresAt: expires}
	var at string
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		if err := tx.CheckSession(ctx, session); err != nil { // in the token's transaction, as in AddBot
			return err
		}
		at = tx.Now().UTC().Format(time.RFC3339Nano)
		return tx.CreateToken(ctx, row)
	}); err != nil {
		return "", wire.Link{}, wireErr(err)
	}
	h.tokens.Add(row)
	return tok, wire.Link{Session: session, Label: req.Label, Access: req.Access, ExpiresAt: expires, CreatedAt: at}, nil
}

// Links lists a session's links, never their tokens.
func (h *Hub) Links(ctx context.Context, session string) ([]wire.Link, error) {
	if _, err := h.db.Session(ctx, session); err != nil {
		return nil, wireErr(err)
	}
	ts, err := h.db.Links(ctx, session)
	if err != nil {
		return nil, wireErr(err)
	}
	out := make([]wire.Link, 0, len(ts))
	for _, t := range ts {
		access := wire.AccessRead
		if t.Kind == wire.TokenGuest {
			access = wire.AccessWrite
		}
		out = append(out, wire.Link{Session: session, Label: t.Label, Access: access, ExpiresAt: t.ExpiresAt,
			LastUsed: h.links.lastUsed(t.ID, t.LastUsed), CreatedAt: t.CreatedAt})
	}
	return out, nil
}

// Unlink revokes the link of session labelled label and returns its
// token's id, whose connections the caller closes.
func (h *Hub) Unlink(ctx context.Context, session, label string) ([]string, error) {
	defer h.tokens.Changing()()
	var id string
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		id, err = tx.DeleteLink(ctx, session, label)
		return err
	}); err != nil {
		return nil, wireErr(err)
	}
	ids := []string{id}
	h.tokens.Drop(ids)
	h.changed()
	return ids, nil
}

// Unshare revokes every link of a session, read and write.
func (h *Hub) Unshare(ctx context.Context, session string) ([]string, error) {
	views, verr := h.revoke(ctx, wire.TokenViewer, "", session)
	guests, gerr := h.revoke(ctx, wire.TokenGuest, "", session)
	if verr != nil && gerr != nil {
		return nil, verr // neither kind had one: not_found
	}
	for _, err := range []error{verr, gerr} {
		if err != nil && wire.AsError(nil, err).Code != wire.CodeNotFound {
			return nil, err
		}
	}
	return append(views, guests...), nil
}

// linkUse is when links were last used, in memory: a use is written to
// the store at most every linkTouchEvery, by the writer in the background,
// so that a crowd opening one link costs the store nothing per hello.
type linkUse struct {
	mu      sync.Mutex
	at      map[string]time.Time // by token id: the last use
	written map[string]time.Time // by token id: the last use written
}

const linkTouchEvery = time.Minute

// touchLink records a use of a link's token.
func (h *Hub) touchLink(id string) {
	now := time.Now()
	h.links.mu.Lock()
	if h.links.at == nil {
		h.links.at, h.links.written = map[string]time.Time{}, map[string]time.Time{}
	}
	h.links.at[id] = now
	due := now.Sub(h.links.written[id]) >= linkTouchEvery
	if due {
		h.links.written[id] = now
	}
	h.links.mu.Unlock()
	if due {
		h.db.Writer().Then(h.ctx, func(tx *db.Tx) error { return tx.TouchToken(h.ctx, id) }, func(error) {})
	}
}

// lastUsed is the newer of a link's use in memory and stored.
func (u *linkUse) lastUsed(id, stored string) string {
	u.mu.Lock()
	at, ok := u.at[id]
	u.mu.Unlock()
	if s, err := time.Parse(time.RFC3339Nano, stored); ok && (err != nil || at.After(s)) {
		return at.UTC().Format(time.RFC3339Nano)
	}
	return stored
}

// expireLinks closes, every second, the connections of links whose end
// has come (OnLinksExpired's func); Authenticate refuses them already.
func (h *Hub) expireLinks() {
	defer h.loops.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	closed := map[string]bool{}
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		var ids []string
		h.tokens.Each(func(p access.Principal) {
			if p.Expired(now) && !closed[p.TokenID] {
				ids = append(ids, p.TokenID)
				closed[p.TokenID] = true
			}
		})
		if f := h.expiredHook.Load(); f != nil && len(ids) > 0 {
			(*f)(ids)
		}
	}
}

// OnLinksExpired sets what closes the connections of links whose end has
// come: the API server's.
func (h *Hub) OnLinksExpired(f func(ids []string)) { h.expiredHook.Store(&f) }

// TokenExpired says whether token is a link that has expired, for the
// words of its refusal.
func (h *Hub) TokenExpired(token string) bool {
	p, ok, _, _ := h.tokens.Lookup(access.HashToken(token))
	return ok && p.Expired(time.Now())
}

// reservedGuestNames are names the daemon writes itself, or that read as
// a role: no guest may take them.
var reservedGuestNames = []string{"albedo", "owner", "system", "assistant"}

// GuestNameTaken says whether a guest may not go by name: it is a
// member's, a bot's or an owner token's (compared without case), one the
// daemon writes itself, or reads as a bot ("bot:…"). Both clients and the
// model show an author's name alone, so a guest named as someone of the
// home would pass for them. The tokens' names are the token table's (a
// node learns another's within a second, cluster_changes.go); a member
// with no token is one indexed read of the store.
func (h *Hub) GuestNameTaken(ctx context.Context, name string) (bool, error) {
	if strings.HasPrefix(strings.ToLower(name), provider.BotPrefix) || slices.ContainsFunc(reservedGuestNames, func(r string) bool { return strings.EqualFold(r, name) }) {
		return true, nil
	}
	// Names of bots, owner tokens and members are lower-case (access.ValidName).
	if h.tokens.NameTaken(name) {
		return true, nil
	}
	// A member may have no token (the home's own, daemon.json's).
	switch _, err := h.db.MemberNamed(ctx, strings.ToLower(name)); {
	case err == nil:
		return true, nil
	case !errors.Is(err, db.ErrNotFound):
		return false, wireErr(err)
	}
	return false, nil
}
