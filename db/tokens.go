package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"albedo/wire"
)

// Token is a stored owner, member, bot or viewer token: never the token
// itself, its hash.
type Token struct {
	bun.BaseModel `bun:"table:tokens,alias:t"`

	ID        string         `bun:"id,pk"`
	Kind      wire.TokenRole `bun:"kind"` // owner, member, bot or viewer
	Name      string         `bun:"name"` // a member's, bot's or owner token's name; "viewer"
	Hash      string         `bun:"hash"`
	Sessions  string         `bun:"sessions"`
	Member    string         `bun:"member"`     // a member token's member id
	Label     string         `bun:"label"`      // what a member token was made for: "invite", a browser; a link's name
	ExpiresAt string         `bun:"expires_at"` // a link's end; "" for never
	LastUsed  string         `bun:"last_used"`  // a link's last use, as last recorded
	CreatedAt string         `bun:"created_at"`
	// A member token's member, as Tokens and TokenByHash read it.
	MemberName string `bun:"member_name,scanonly"`
	Admin      bool   `bun:"member_admin,scanonly"`
}

// SessionList is the sessions the token is limited to; nil means all.
func (t Token) SessionList() []string {
	if t.Sessions == "" {
		return nil
	}
	return strings.Split(t.Sessions, ",")
}

// CreateToken stores a token. A bot or owner name already taken (by a
// token of the same kind) is ErrConflict.
func (t *Tx) CreateToken(ctx context.Context, tok Token) error {
	tok.CreatedAt = formatTime(t.now)
	if tok.Kind == wire.TokenViewer || tok.Kind == wire.TokenGuest {
		n, err := t.NewSelect().Model((*Token)(nil)).Where("kind IN (?) AND sessions = ? AND label = ?",
			bun.In([]wire.TokenRole{wire.TokenViewer, wire.TokenGuest}), tok.Sessions, tok.Label).Count(ctx)
		if err != nil {
			return fmt.Errorf("look up link: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("session %s has a link labelled %q: %w", tok.Sessions, tok.Label, ErrConflict)
		}
	}
	if tok.Kind == wire.TokenBot || tok.Kind == wire.TokenOwner {
		n, err := t.NewSelect().Model((*Token)(nil)).Where("kind = ? AND name = ?", tok.Kind, tok.Name).Count(ctx)
		if err != nil {
			return fmt.Errorf("look up %s: %w", tok.Kind, err)
		}
		if n > 0 {
			return fmt.Errorf("%s token %q exists: %w", tok.Kind, tok.Name, ErrConflict)
		}
	}
	if _, err := t.NewInsert().Model(&tok).Exec(ctx); err != nil {
		return fmt.Errorf("insert token: %w", err)
	}
	return nil
}

// DeleteTokens removes the tokens matching kind and name (a bot, an owner), or kind
// and session (a session's viewer tokens), and returns their ids.
func (t *Tx) DeleteTokens(ctx context.Context, kind wire.TokenRole, name, session string) ([]string, error) {
	q := t.NewSelect().Model((*Token)(nil)).Column("id").Where("kind = ?", kind)
	if name != "" {
		q = q.Where("name = ?", name)
	}
	if session != "" {
		q = q.Where("sessions = ?", session)
	}
	var ids []string
	if err := q.Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("find tokens: %w", err)
	}
	if len(ids) == 0 {
		return nil, ErrNotFound
	}
	if _, err := t.NewDelete().Model((*Token)(nil)).Where("id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
		return nil, fmt.Errorf("delete tokens: %w", err)
	}
	t.recordRevoked(ids)
	return ids, nil
}

// dropSessionTokens ends the tokens scoped to a session that is being
// deleted, so that a session made again under its id is not theirs: a
// token of that session alone is deleted (revoked), and a bot token of
// several sessions loses it from its list (narrowed).
func (t *Tx) dropSessionTokens(ctx context.Context, session string) (revoked []string, narrowed []Token, _ error) {
	var ts []Token
	if err := t.NewSelect().Model(&ts).Where("sessions != ''").Scan(ctx); err != nil {
		return nil, nil, fmt.Errorf("find tokens of %s: %w", session, err)
	}
	for _, tok := range ts {
		list := tok.SessionList()
		if !slices.Contains(list, session) {
			continue
		}
		if len(list) == 1 {
			revoked = append(revoked, tok.ID)
			continue
		}
		tok.Sessions = strings.Join(slices.DeleteFunc(list, func(s string) bool { return s == session }), ",")
		if _, err := t.NewUpdate().Model(&tok).Column("sessions").WherePK().Exec(ctx); err != nil {
			return nil, nil, fmt.Errorf("narrow token %s: %w", tok.ID, err)
		}
		t.record(ChangeNarrowed, tok.ID, "")
		narrowed = append(narrowed, tok)
	}
	if len(revoked) > 0 {
		if _, err := t.NewDelete().Model((*Token)(nil)).Where("id IN (?)", bun.In(revoked)).Exec(ctx); err != nil {
			return nil, nil, fmt.Errorf("delete tokens of %s: %w", session, err)
		}
		t.recordRevoked(revoked)
	}
	return revoked, narrowed, nil
}

// Tokens lists every token.
func (d *DB) Tokens(ctx context.Context) ([]Token, error) {
	var ts []Token
	if err := withMember(d.ro.NewSelect().Model(&ts)).Order("t.kind", "t.name", "t.created_at").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return ts, nil
}

// TokenByHash reads the token whose hash is hash, or ErrNotFound: a node
// of a cluster that has not heard of a token made on another looks here.
func (d *DB) TokenByHash(ctx context.Context, hash string) (Token, error) {
	return d.tokenWhere(ctx, "t.hash = ?", hash)
}

// TokenByID reads a token by its id, or ErrNotFound: a node applying
// another's narrowing of it (hub's cluster_changes.go).
func (d *DB) TokenByID(ctx context.Context, id string) (Token, error) {
	return d.tokenWhere(ctx, "t.id = ?", id)
}

// tokenWhere reads the token where holds, with its member, or ErrNotFound.
func (d *DB) tokenWhere(ctx context.Context, where string, arg string) (Token, error) {
	var t Token
	err := withMember(d.ro.NewSelect().Model(&t)).Where(where, arg).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, ErrNotFound
	}
	if err != nil {
		return Token{}, fmt.Errorf("look up token: %w", err)
	}
	return t, nil
}

// withMember reads each token's member with it (Token.MemberName, Admin).
func withMember(q *bun.SelectQuery) *bun.SelectQuery {
	return q.ColumnExpr("t.*").
		ColumnExpr("coalesce(m.name, '') AS member_name, (m.admin IS TRUE) AS member_admin").
		Join("LEFT JOIN members AS m ON m.id = t.member")
}

// linkKinds are the kinds of a link's token.
var linkKinds = []wire.TokenRole{wire.TokenViewer, wire.TokenGuest}

// Links lists a session's links, oldest first.
func (d *DB) Links(ctx context.Context, session string) ([]Token, error) {
	var ts []Token
	if err := d.ro.NewSelect().Model(&ts).Where("kind IN (?) AND sessions = ?", bun.In(linkKinds), session).
		Order("created_at").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	return ts, nil
}

// DeleteLink removes a session's link labelled label and returns its id;
// none is ErrNotFound.
func (t *Tx) DeleteLink(ctx context.Context, session, label string) (string, error) {
	var ids []string
	if err := t.NewSelect().Model((*Token)(nil)).Column("id").
		Where("kind IN (?) AND sessions = ? AND label = ?", bun.In(linkKinds), session, label).Scan(ctx, &ids); err != nil {
		return "", fmt.Errorf("find link: %w", err)
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("link %q of %s: %w", label, session, ErrNotFound)
	}
	if _, err := t.NewDelete().Model((*Token)(nil)).Where("id = ?", ids[0]).Exec(ctx); err != nil {
		return "", fmt.Errorf("delete link: %w", err)
	}
	t.recordRevoked(ids[:1])
	return ids[0], nil
}

// TouchToken records that a token was used now.
func (t *Tx) TouchToken(ctx context.Context, id string) error {
	if _, err := t.NewUpdate().Model((*Token)(nil)).Set("last_used = ?", formatTime(t.now)).Where("id = ?", id).Exec(ctx); err != nil {
		return fmt.Errorf("touch token: %w", err)
	}
	return nil
}
