package hub

import (
	"context"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/access"
	"albedo/wire"
)

// Owner tokens made by a command (`albedo tokens add --role owner NAME`):
// a team server has no daemon.json token to hand out. They are stored like
// bot tokens — the SHA-256 only, looked up by it — in the tokens table
// with kind owner, one per name, and act exactly like the daemon.json
// token. The command writes the store itself (no daemon needs to run, and
// a server's first token cannot come through its API); a running daemon
// learns of the change on SIGHUP (ReloadTokens), and the nodes of a
// cluster from the store's changes (cluster_changes.go). A daemon that
// holds its SQLite file makes and removes them itself instead, for the
// command, through its API (api/tokens.go).

// MaxTokenNameLen bounds the name of an owner (and a bot) token.
const MaxTokenNameLen = 64

// AddOwner makes an owner token named name and returns it; only its hash
// is stored. A taken name is a conflict.
func (h *Hub) AddOwner(ctx context.Context, name string) (string, error) {
	if !access.ValidName.MatchString(name) {
		return "", wire.Errorf(wire.CodeBadRequest, "a token name is 1-64 of a-z 0-9 . _ -, starting with a letter or digit")
	}
	defer h.tokens.Changing()()
	tok := access.NewToken("alown_")
	row := db.Token{ID: uuid.Must(uuid.NewV7()).String(), Kind: wire.TokenOwner, Name: name, Hash: access.HashToken(tok)}
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error { return tx.CreateToken(ctx, row) }); err != nil {
		return "", wireErr(err)
	}
	h.tokens.Add(row)
	return tok, nil
}

// RemoveOwner revokes the owner token named name and returns its id, whose
// live connections the caller closes; no such token is not_found.
func (h *Hub) RemoveOwner(ctx context.Context, name string) ([]string, error) {
	return h.revoke(ctx, wire.TokenOwner, name, "")
}

// TokenInfo describes a stored token, never the token itself.
type TokenInfo struct {
	Role      wire.TokenRole `json:"role"`
	Name      string         `json:"name"`
	Sessions  []string       `json:"sessions"` // nil: all
	CreatedAt string         `json:"created_at"`
}

// Tokens lists every stored token: owners, bots, viewers.
func (h *Hub) Tokens(ctx context.Context) ([]TokenInfo, error) {
	ts, err := h.db.Tokens(ctx)
	if err != nil {
		return nil, wireErr(err)
	}
	out := make([]TokenInfo, 0, len(ts))
	for _, t := range ts {
		out = append(out, TokenInfo{Role: t.Kind, Name: t.Name, Sessions: t.SessionList(), CreatedAt: t.CreatedAt})
	}
	return out, nil
}

// ReloadTokens makes the token table what the store holds: tokens made by
// another process (the tokens command, another node) are accepted from now
// on, and the ids of those gone from the store are returned, for the
// caller to close their connections with 4401. The daemon calls it on
// SIGHUP.
func (h *Hub) ReloadTokens(ctx context.Context) (revoked []string, _ error) {
	revoked, narrowed, err := h.reloadTokens(ctx)
	if err != nil {
		return nil, err
	}
	if f := h.tokenHook.Load(); f != nil && len(narrowed) > 0 {
		(*f)(nil, narrowed)
	}
	if len(revoked)+len(narrowed) > 0 {
		h.changed()
	}
	return revoked, nil
}

// reloadTokens makes the token table and the grants what the store holds,
// and returns the ids of the tokens gone from the store and of those whose
// sessions changed.
func (h *Hub) reloadTokens(ctx context.Context) (revoked, narrowed []string, _ error) {
	defer h.tokens.Exclusive()()
	ts, err := h.db.Tokens(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := h.loadGrants(ctx); err != nil {
		return nil, nil, err
	}
	revoked, narrowed = h.tokens.Reload(ts)
	return revoked, narrowed, nil
}
