package hub

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/access"
	"albedo/wire"
)

// loadTokens reads every stored token, and every grant, into memory.
func (h *Hub) loadTokens(ctx context.Context) error {
	ts, err := h.db.Tokens(ctx)
	if err != nil {
		return err
	}
	if err := h.loadGrants(ctx); err != nil {
		return err
	}
	for _, t := range ts {
		h.tokens.Add(t)
	}
	return nil
}

// Current returns p as its token stands now: the owner as it is, a bot or
// viewer with its current sessions, or false for a token revoked since p
// was read. A connection calls it once it can be found by revocation
// (api's hello), so that a revocation that ran while it was being set up
// is not missed.
func (h *Hub) Current(p access.Principal) (access.Principal, bool) {
	if p.TokenID == "" {
		return p, true
	}
	return h.tokens.ByID(p.TokenID)
}

// Authenticate resolves a bot or viewer token. Only hashes are kept, and
// the lookup is by the token's SHA-256: what its timing could reveal is
// something about a hash, which says nothing of a token. In a cluster, a
// token this node does not know is looked up in the store
// (cluster_tokens.go).
func (h *Hub) Authenticate(token string) (access.Principal, bool) {
	if token == "" {
		return access.Principal{}, false
	}
	hash := access.HashToken(token)
	p, ok, missed, gen := h.tokens.Lookup(hash)
	if !ok && !missed && h.db.Shared() {
		p, ok = h.lookupStored(hash, gen)
	}
	if ok && p.Expired(time.Now()) {
		return access.Principal{}, false
	}
	if ok && p.TokenID != "" && (p.Role == wire.TokenViewer || p.Role == wire.TokenGuest) {
		h.touchLink(p.TokenID)
	}
	return p, ok
}

// AddBot makes a bot token, limited to sessions when given. The token is
// returned once and only its hash is stored.
func (h *Hub) AddBot(ctx context.Context, name string, sessions []string) (string, error) {
	if !access.ValidName.MatchString(name) {
		return "", wire.Errorf(wire.CodeBadRequest, "a bot name is 1-64 of a-z 0-9 . _ -, starting with a letter or digit")
	}
	tok := access.NewToken("albot_")
	defer h.tokens.Changing()()
	row := db.Token{ID: uuid.Must(uuid.NewV7()).String(), Kind: wire.TokenBot, Name: name, Hash: access.HashToken(tok), Sessions: strings.Join(sessions, ",")}
	// The sessions are checked in the token's own transaction: a session
	// deleted between a check and the token's commit would leave a token
	// for an id that a new session may take.
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		for _, s := range sessions {
			if err := tx.CheckSession(ctx, s); err != nil {
				return err
			}
		}
		return tx.CreateToken(ctx, row)
	}); err != nil {
		return "", wireErr(err)
	}
	h.tokens.Add(row)
	return tok, nil
}

// RemoveBot revokes a bot's token and returns its token id, whose live
// connections the caller closes.
func (h *Hub) RemoveBot(ctx context.Context, name string) ([]string, error) {
	return h.revoke(ctx, wire.TokenBot, name, "")
}

func (h *Hub) revoke(ctx context.Context, kind wire.TokenRole, name, session string) ([]string, error) {
	defer h.tokens.Changing()()
	var ids []string
	_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		ids, err = tx.DeleteTokens(ctx, kind, name, session)
		return err
	})
	if err != nil {
		return nil, wireErr(err)
	}
	h.tokens.Drop(ids)
	h.changed()
	return ids, nil
}

// BotInfo describes a bot for `albedo bots ls`.
type BotInfo struct {
	Name      string   `json:"name"`
	Sessions  []string `json:"sessions"`
	CreatedAt string   `json:"created_at"`
	Serving   int      `json:"serving"` // connections serving its turns now
}

// Bots lists the bots.
func (h *Hub) Bots(ctx context.Context) ([]BotInfo, error) {
	ts, err := h.db.Tokens(ctx)
	if err != nil {
		return nil, wireErr(err)
	}
	out := []BotInfo{}
	for _, t := range ts {
		if t.Kind == wire.TokenBot {
			out = append(out, BotInfo{Name: t.Name, Sessions: t.SessionList(), CreatedAt: t.CreatedAt, Serving: h.serving(t.Name)})
		}
	}
	return out, nil
}

// botExists says whether a bot of that name has a token.
func (h *Hub) botExists(name string) bool {
	return h.tokens.Any(func(p access.Principal) bool { return p.Role == wire.TokenBot && p.Name == name })
}
