package hub

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/access"
	"albedo/wire"
)

// Members are the named people of a home or server (docs/protocol.md,
// "Members and grants"). Each has personal tokens, stored like bot tokens
// (the hash only) with kind member; an admin's act as owner tokens. A
// member who is not an admin sees the sessions they made (access creator)
// and those granted to them (read or write): the grants, which the token
// table keeps in memory beside the tokens, under the same locks, so that
// a check of access reads no store.

// MemberInvite labels the token a member is made with.
const MemberInvite = "invite"

// AddMember makes a member and their first token, labelled invite, which
// is returned once.
func (h *Hub) AddMember(ctx context.Context, name string, admin bool) (string, wire.Member, error) {
	if !access.ValidName.MatchString(name) {
		return "", wire.Member{}, wire.Errorf(wire.CodeBadRequest, "a member's name is 1-64 of a-z 0-9 . _ -, starting with a letter or digit")
	}
	defer h.tokens.Changing()()
	m := db.Member{ID: uuid.Must(uuid.NewV7()).String(), Name: name, Admin: admin}
	tok := access.NewToken("almem_")
	row := db.Token{ID: uuid.Must(uuid.NewV7()).String(), Kind: wire.TokenMember, Name: name, Hash: access.HashToken(tok),
		Member: m.ID, Label: MemberInvite, MemberName: name, Admin: admin}
	var made db.Member
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error // the batch may run this twice: m stays as it was
		if made, err = tx.CreateMember(ctx, m); err != nil {
			return err
		}
		return tx.CreateToken(ctx, row)
	}); err != nil {
		return "", wire.Member{}, wireErr(err)
	}
	h.tokens.Add(row)
	return tok, wire.Member{ID: m.ID, Name: name, Admin: admin, CreatedAt: made.CreatedAt}, nil
}

// Runner says who runs a daemon, the member its daemon.json token acts
// as: Name, and whether config.toml chose it (Named; else it is their
// login name); Home is true for one daemon on its own store.
type Runner struct {
	Name  string
	Named bool
	Home  bool
}

// EnsureMember returns the member who runs the daemon. A home's is its
// first member, the admin made at its first start: a name chosen in
// config.toml renames them when it changes (a rename, not a second
// person), and without one they keep theirs (albedo members rename's).
// A store with no member, or shared by nodes whose runners differ, makes
// an admin of the name when none has it.
func (h *Hub) EnsureMember(ctx context.Context, r Runner) (access.Principal, error) {
	if !access.ValidName.MatchString(r.Name) {
		return access.Principal{}, wire.Errorf(wire.CodeBadRequest, "a member's name is 1-64 of a-z 0-9 . _ -, starting with a letter or digit")
	}
	var m db.Member
	renamed := ""
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		renamed = ""
		if r.Home {
			first, err := tx.FirstMember(ctx)
			switch {
			case err == nil && first.Admin && (!r.Named || first.Name == r.Name):
				m = first
				return nil
			case err == nil && first.Admin:
				if _, err := tx.MemberByName(ctx, r.Name); err == nil {
					return wire.Errorf(wire.CodeConflict, "another member of this home is named %q: rename them first (albedo members rename), or set name = %q", r.Name, first.Name)
				}
				renamed = first.Name
				m, err = tx.RenameMember(ctx, first.Name, r.Name)
				return err
			}
		}
		var err error
		if m, err = tx.MemberByName(ctx, r.Name); err == nil {
			return nil
		}
		m, err = tx.CreateMember(ctx, db.Member{ID: uuid.Must(uuid.NewV7()).String(), Name: r.Name, Admin: true})
		return err
	}); err != nil {
		return access.Principal{}, wireErr(err)
	}
	if renamed != "" {
		h.tokens.RenameMember(m.ID, m.Name)
		h.log.Info("the home's member takes the name config.toml gives", "was", renamed, "name", m.Name)
	}
	return h.tokens.Member(m.Name, m.ID, m.Admin), nil
}

// RenameMember gives the member named name the name to: their id, grants,
// tokens and what they wrote stay theirs, and what they write from now on
// carries the new name. It returns the member as renamed.
func (h *Hub) RenameMember(ctx context.Context, name, to string) (wire.Member, error) {
	if !access.ValidName.MatchString(to) {
		return wire.Member{}, wire.Errorf(wire.CodeBadRequest, "a member's name is 1-64 of a-z 0-9 . _ -, starting with a letter or digit")
	}
	defer h.tokens.Changing()()
	if !strings.EqualFold(name, to) && h.tokens.NameTaken(to) {
		return wire.Member{}, wire.Errorf(wire.CodeConflict, "the name %q is taken", to)
	}
	var m db.Member
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		m, err = tx.RenameMember(ctx, name, to)
		return err
	}); err != nil {
		return wire.Member{}, wireErr(err)
	}
	h.tokens.RenameMember(m.ID, m.Name)
	h.changed()
	return wire.Member{ID: m.ID, Name: m.Name, Admin: m.Admin, CreatedAt: m.CreatedAt}, nil
}

// RemoveMember removes a member with their tokens and grants, and returns
// their tokens' ids, whose connections the caller closes (4401); the
// member's connections that no token id finds (the daemon.json token's)
// are cut by member id with CutMember.
func (h *Hub) RemoveMember(ctx context.Context, name string) (string, []string, error) {
	defer h.tokens.Changing()()
	var m db.Member
	var ids []string
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		m, ids, err = tx.DeleteMember(ctx, name)
		return err
	}); err != nil {
		return "", nil, wireErr(err)
	}
	h.tokens.Drop(ids)
	h.tokens.DropMember(m.ID)
	h.changed()
	return m.ID, ids, nil
}

// Members lists the members, with how many connections each has here.
func (h *Hub) Members(ctx context.Context) ([]wire.Member, error) {
	ms, err := h.db.Members(ctx)
	if err != nil {
		return nil, wireErr(err)
	}
	out := make([]wire.Member, len(ms))
	for i, m := range ms {
		out[i] = wire.Member{ID: m.ID, Name: m.Name, Admin: m.Admin, CreatedAt: m.CreatedAt, Online: h.online(m.ID)}
	}
	return out, nil
}

// Grant gives the member named member access (read or write) to session.
// The creator's access is theirs for good: granting them is a conflict.
func (h *Hub) Grant(ctx context.Context, session, member string, grant wire.Access) error {
	if grant != wire.AccessRead && grant != wire.AccessWrite {
		return wire.Errorf(wire.CodeBadRequest, `access is "read" or "write", not %q`, grant)
	}
	return h.setGrant(ctx, session, member, grant)
}

// Ungrant takes a member's access to session back. The creator's cannot
// be taken back (conflict).
func (h *Hub) Ungrant(ctx context.Context, session, member string) error {
	return h.setGrant(ctx, session, member, "")
}

// setGrant stores a member's grant of session (none: takes it back), then
// the token table's, cuts what was narrowed away (cutAccess) and tells the
// other nodes.
func (h *Hub) setGrant(ctx context.Context, session, member string, grant wire.Access) error {
	defer h.tokens.Changing()()
	var m db.Member
	var shared db.Session
	var respond bool
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		if m, err = tx.MemberByName(ctx, member); err != nil {
			return err
		}
		if h.tokens.Access(m.ID, session) == wire.AccessCreator {
			return wire.Errorf(wire.CodeConflict, "%s made session %q: their access is theirs", member, session)
		}
		if grant == "" {
			return tx.DeleteGrant(ctx, session, m.ID)
		}
		if grant == wire.AccessWrite {
			// A team's session answers mentions only, unless someone
			// chose otherwise (participants.go).
			if shared, respond, err = tx.MentionsOnceShared(ctx, session, ""); err != nil {
				return err
			}
		}
		return tx.PutGrant(ctx, db.Grant{Session: session, Member: m.ID, Access: grant})
	}); err != nil {
		return wireErr(err)
	}
	if was := h.tokens.SetAccess(m.ID, session, grant); access.Rank(grant) < access.Rank(was) {
		h.cutAccess(m.ID, session, grant)
	}
	h.feed.accessChanged(m.ID, session, grant)
	h.changed()
	if respond {
		h.settingsChanged(shared)
	}
	return nil
}

// Grants lists who has access to session, by grant or as its creator.
func (h *Hub) Grants(ctx context.Context, session string) ([]wire.Grant, error) {
	if _, err := h.db.Session(ctx, session); err != nil {
		return nil, wireErr(err)
	}
	gs, err := h.db.Grants(ctx, session)
	if err != nil {
		return nil, wireErr(err)
	}
	ms, err := h.db.Members(ctx)
	if err != nil {
		return nil, wireErr(err)
	}
	names := make(map[string]string, len(ms))
	for _, m := range ms {
		names[m.ID] = m.Name
	}
	out := make([]wire.Grant, 0, len(gs))
	for _, g := range gs {
		out = append(out, wire.Grant{Member: names[g.Member], Access: g.Access, At: g.CreatedAt})
	}
	return out, nil
}

// loadGrants reads every grant into the token table.
func (h *Hub) loadGrants(ctx context.Context) error {
	g := access.Grants{}
	if err := h.db.EachGrant(ctx, g.Add); err != nil {
		return err
	}
	h.tokens.SetGrants(g)
	return nil
}

// MemberToken makes a personal token of p's member, labelled label (the
// browser or device it is for), and returns it once, with the ids of the
// token it replaces (one of the same label), whose connections the caller
// closes: a browser whose token was lost gets a new one, not a second.
func (h *Hub) MemberToken(ctx context.Context, p access.Principal, label string) (string, []string, error) {
	if p.MemberID == "" {
		return "", nil, wire.Errorf(wire.CodeBadRequest, "this token is not a member's: make a member (albedo members add) and use theirs")
	}
	if !access.ValidLabel.MatchString(label) {
		return "", nil, wire.Errorf(wire.CodeBadRequest, "a token's label is 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit")
	}
	defer h.tokens.Changing()()
	tok := access.NewToken("almem_")
	row := db.Token{ID: uuid.Must(uuid.NewV7()).String(), Kind: wire.TokenMember, Name: p.Name, Hash: access.HashToken(tok),
		Member: p.MemberID, Label: label, MemberName: p.Name, Admin: p.Role == wire.TokenOwner}
	var old []string
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		if _, err = tx.MemberByName(ctx, p.Name); err != nil {
			return err
		}
		if old, err = tx.DeleteMemberTokens(ctx, p.MemberID, label); err != nil {
			return err
		}
		return tx.CreateToken(ctx, row)
	}); err != nil {
		return "", nil, wireErr(err)
	}
	h.tokens.Drop(old)
	h.tokens.Add(row)
	h.changed()
	return tok, old, nil
}
