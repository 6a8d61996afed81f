package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"albedo/wire"
)

// Member is a named person of a home or server. Their tokens are rows of
// tokens of kind member (Token.Member is the member's id).
type Member struct {
	bun.BaseModel `bun:"table:members"`

	ID        string `bun:"id,pk"`
	Name      string `bun:"name"`
	Admin     bool   `bun:"admin"`
	CreatedAt string `bun:"created_at"`
}

// Grant is a member's access to one session.
type Grant struct {
	bun.BaseModel `bun:"table:grants"`

	Session   string      `bun:"session,pk"`
	Member    string      `bun:"member,pk"`
	Access    wire.Access `bun:"access"`
	CreatedAt string      `bun:"created_at"`
}

// CreateMember stores a member and returns it as stored; a name taken is
// ErrConflict.
func (t *Tx) CreateMember(ctx context.Context, m Member) (Member, error) {
	m.CreatedAt = formatTime(t.now)
	n, err := t.NewSelect().Model((*Member)(nil)).Where("name = ?", m.Name).Count(ctx)
	if err != nil {
		return Member{}, fmt.Errorf("look up member: %w", err)
	}
	if n > 0 {
		return Member{}, fmt.Errorf("member %q exists: %w", m.Name, ErrConflict)
	}
	if _, err := t.NewInsert().Model(&m).Exec(ctx); err != nil {
		return Member{}, fmt.Errorf("insert member: %w", err)
	}
	return m, nil
}

// DeleteMember removes the member named name with their tokens and grants
// and returns the member and the ids of their tokens; no such member is
// ErrNotFound.
func (t *Tx) DeleteMember(ctx context.Context, name string) (Member, []string, error) {
	var m Member
	err := t.NewSelect().Model(&m).Where("name = ?", name).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, nil, fmt.Errorf("member %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Member{}, nil, fmt.Errorf("look up member: %w", err)
	}
	var ids []string
	if err := t.NewSelect().Model((*Token)(nil)).Column("id").Where("member = ?", m.ID).Scan(ctx, &ids); err != nil {
		return Member{}, nil, fmt.Errorf("find member tokens: %w", err)
	}
	for _, q := range []*bun.DeleteQuery{
		t.NewDelete().Model((*Token)(nil)).Where("member = ?", m.ID),
		t.NewDelete().Model((*Grant)(nil)).Where("member = ?", m.ID),
		t.NewDelete().Model((*Member)(nil)).Where("id = ?", m.ID),
	} {
		if _, err := q.Exec(ctx); err != nil {
			return Member{}, nil, fmt.Errorf("delete member: %w", err)
		}
	}
	t.recordRevoked(ids)
	return m, ids, nil
}

// RenameMember gives the member named name the name to, and returns the
// member as renamed: their id, grants, tokens and authorship stay; a
// taken name is ErrConflict, no such member ErrNotFound.
func (t *Tx) RenameMember(ctx context.Context, name, to string) (Member, error) {
	m, err := t.MemberByName(ctx, name)
	if err != nil || name == to {
		return m, err
	}
	if _, err := t.MemberByName(ctx, to); err == nil {
		return Member{}, fmt.Errorf("member %q exists: %w", to, ErrConflict)
	} else if !errors.Is(err, ErrNotFound) {
		return Member{}, err
	}
	for _, q := range []*bun.UpdateQuery{
		t.NewUpdate().Model((*Member)(nil)).Set("name = ?", to).Where("id = ?", m.ID),
		t.NewUpdate().Model((*Token)(nil)).Set("name = ?", to).Where("member = ?", m.ID),
	} {
		if _, err := q.Exec(ctx); err != nil {
			return Member{}, fmt.Errorf("rename member: %w", err)
		}
	}
	t.record(ChangeRenamed, m.ID, to)
	m.Name = to
	return m, nil
}

// MemberTokenIDs lists the ids of a member's tokens.
func (d *DB) MemberTokenIDs(ctx context.Context, member string) ([]string, error) {
	var ids []string
	if err := d.ro.NewSelect().Model((*Token)(nil)).Column("id").Where("member = ?", member).Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("find member tokens: %w", err)
	}
	return ids, nil
}

// FirstMember reads the member made first (ids are UUIDv7s, so in the
// order of their making), or ErrNotFound when there is none.
func (t *Tx) FirstMember(ctx context.Context) (Member, error) {
	var m Member
	err := t.NewSelect().Model(&m).Order("id").Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, fmt.Errorf("no member: %w", ErrNotFound)
	}
	if err != nil {
		return Member{}, fmt.Errorf("look up member: %w", err)
	}
	return m, nil
}

// MemberByName reads the member named name, or ErrNotFound, in the
// request's transaction.
func (t *Tx) MemberByName(ctx context.Context, name string) (Member, error) {
	var m Member
	err := t.NewSelect().Model(&m).Where("name = ?", name).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, fmt.Errorf("member %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Member{}, fmt.Errorf("look up member: %w", err)
	}
	return m, nil
}

// MemberNamed reads the member named name, or ErrNotFound.
func (d *DB) MemberNamed(ctx context.Context, name string) (Member, error) {
	var m Member
	err := d.ro.NewSelect().Model(&m).Where("name = ?", name).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, fmt.Errorf("member %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Member{}, fmt.Errorf("look up member: %w", err)
	}
	return m, nil
}

// Members lists every member, by name.
func (d *DB) Members(ctx context.Context) ([]Member, error) {
	var ms []Member
	if err := d.ro.NewSelect().Model(&ms).Order("name").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	return ms, nil
}

// PutGrant gives member access to session, replacing the access they had;
// the session is checked in the same transaction.
func (t *Tx) PutGrant(ctx context.Context, g Grant) error {
	if err := t.CheckSession(ctx, g.Session); err != nil {
		return err
	}
	g.CreatedAt = formatTime(t.now)
	if _, err := t.NewInsert().Model(&g).On("CONFLICT (session, member) DO UPDATE").Set("access = EXCLUDED.access").Exec(ctx); err != nil {
		return fmt.Errorf("put grant: %w", err)
	}
	t.record(ChangeGrant, g.Member, g.Session)
	return nil
}

// DeleteGrant takes a member's access to a session back; none is
// ErrNotFound.
func (t *Tx) DeleteGrant(ctx context.Context, session, member string) error {
	res, err := t.NewDelete().Model((*Grant)(nil)).Where("session = ? AND member = ?", session, member).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete grant: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("grant: %w", ErrNotFound)
	}
	t.record(ChangeGrant, member, session)
	return nil
}

// deleteSessionGrants removes a deleted session's grants.
func (t *Tx) deleteSessionGrants(ctx context.Context, session string) error {
	if _, err := t.NewDelete().Model((*Grant)(nil)).Where("session = ?", session).Exec(ctx); err != nil {
		return fmt.Errorf("delete grants of %s: %w", session, err)
	}
	return nil
}

// Grants lists the grants of one session, oldest first (every grant, as
// the hub reads them at its start: EachGrant).
func (d *DB) Grants(ctx context.Context, session string) ([]Grant, error) {
	var gs []Grant
	if err := d.ro.NewSelect().Model(&gs).Where("session = ?", session).Order("created_at").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	return gs, nil
}

// EachGrant calls fn with every grant's member, session and access, in
// no order: what the hub keeps of them (hub.loadGrants). Plain SQL, each
// row handed on as it is read: bun's scan of every grant into a slice of
// whole rows, sorted, cost a daemon with tens of thousands of grants
// most of its start (BenchmarkEveryGrant).
func (d *DB) EachGrant(ctx context.Context, fn func(member, session string, a wire.Access)) error {
	rows, err := d.ro.DB.QueryContext(ctx, `SELECT member, session, access FROM grants`)
	if err != nil {
		return fmt.Errorf("read grants: %w", err)
	}
	defer rows.Close()
	var member, session string
	var access sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&member, &session, &access); err != nil {
			return fmt.Errorf("read grants: %w", err)
		}
		fn(member, session, knownAccess(access))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read grants: %w", err)
	}
	return nil
}

// knownAccess is b as a wire.Access, one of the constants when it is
// one: a grant's access is one of a few words, which need no string of
// their own for each of thousands of rows.
func knownAccess(b []byte) wire.Access {
	for _, a := range []wire.Access{wire.AccessRead, wire.AccessWrite, wire.AccessCreator} {
		if string(b) == string(a) {
			return a
		}
	}
	return wire.Access(b)
}

// MemberSession names one member's access to one session.
type MemberSession struct{ Member, Session string }

// GrantsOf reads the access of each pair, in one query whatever their
// number: a node applying another's grants reads them so (hub's
// applyChanges). A pair with no grant is not in the map.
func (d *DB) GrantsOf(ctx context.Context, pairs []MemberSession) (map[MemberSession]wire.Access, error) {
	out := make(map[MemberSession]wire.Access, len(pairs))
	if len(pairs) == 0 {
		return out, nil
	}
	members := make([]string, 0, len(pairs))
	sessions := make([]string, 0, len(pairs))
	for _, p := range pairs {
		members, sessions = append(members, p.Member), append(sessions, p.Session)
	}
	// Every member's grant to every session named: a few more rows than
	// the pairs at most, for the pairs of one page of changes.
	var gs []Grant
	if err := d.ro.NewSelect().Model(&gs).Column("session", "member", "access").
		Where("session IN (?) AND member IN (?)", bun.In(sessions), bun.In(members)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("read grants: %w", err)
	}
	want := make(map[MemberSession]bool, len(pairs))
	for _, p := range pairs {
		want[p] = true
	}
	for _, g := range gs {
		if k := (MemberSession{g.Member, g.Session}); want[k] {
			out[k] = g.Access
		}
	}
	return out, nil
}

// DeleteMemberTokens removes a member's tokens labelled label and returns
// their ids (none is no error).
func (t *Tx) DeleteMemberTokens(ctx context.Context, member, label string) ([]string, error) {
	var ids []string
	if err := t.NewSelect().Model((*Token)(nil)).Column("id").Where("member = ? AND label = ?", member, label).Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("find member tokens: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if _, err := t.NewDelete().Model((*Token)(nil)).Where("id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
		return nil, fmt.Errorf("delete member tokens: %w", err)
	}
	t.recordRevoked(ids)
	return ids, nil
}
