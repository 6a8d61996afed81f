package db

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/uptrace/bun"

	"albedo/wire"
)

// Errors of session and input writes.
var (
	ErrConflict = errors.New("conflict")      // an id reused with a different body
	ErrStale    = errors.New("stale version") // If-Match named an old version
)

// Session is a stored session.
type Session struct {
	bun.BaseModel `bun:"table:sessions"`

	ID        string `bun:"id,pk"`
	Epoch     string `bun:"epoch"`
	Title     string `bun:"title"`
	Workspace string `bun:"workspace"`
	Provider  string `bun:"provider"`
	Model     string `bun:"model"`
	Effort    string `bun:"effort"`
	System    string `bun:"system"` // sent to the provider first ("" for the profile's, if any)
	Tools     string `bun:"tools"`  // "" offers its models every tool served to it; "none" none
	// Participants is a JSON array of the names that answer besides the
	// provider ("" for none); Respond is "always", "mentions", or "" for
	// always until someone chooses (MentionsOnceShared).
	Participants string `bun:"participants"`
	Respond      string `bun:"respond"`
	// Archived keeps it out of the session list and the feed; search
	// still finds it.
	Archived bool `bun:"archived"`
	// Temperature is sent to its provider when it is 0 or more; -1 (no
	// choice) sends none.
	Temperature float64 `bun:"temperature"`
	Version     int64   `bun:"version"`
	Head        int64   `bun:"head"`
	Inputs      int64   `bun:"inputs"`
	CreateHash  string  `bun:"create_hash"`
	CreatedAt   string  `bun:"created_at"`
	UpdatedAt   string  `bun:"updated_at"`
	// LastTurn is the state of the newest turn event ("" if none), as of
	// the last commit: the writer keeps it with the head.
	LastTurn string `bun:"last_turn"`
	// Parent and ParentOffset say where a fork came from ("" and 0 for a
	// session that is no fork); BaseSession and Base where its first
	// events are stored (forks.go).
	Parent       string `bun:"parent"`
	ParentOffset int64  `bun:"parent_offset"`
	BaseSession  string `bun:"base_session"`
	Base         int64  `bun:"base"`
}

// ETag is the session's current version as an HTTP entity tag.
func (s *Session) ETag() string { return `"` + strconv.FormatInt(s.Version, 10) + `"` }

// Wire returns the session as the contract shapes it, with the given phase.
func (s *Session) Wire(phase wire.Phase) wire.Session {
	return wire.Session{
		ID: s.ID, Epoch: s.Epoch, Title: s.Title, Workspace: s.Workspace,
		Provider: s.Provider, Model: s.Model, Effort: s.Effort, System: s.System, Phase: phase,
		Head: s.Head, ETag: s.ETag(),
		CreatedAt: parseTime(s.CreatedAt), UpdatedAt: parseTime(s.UpdatedAt),
		Parent: s.ForkPoint(), Tools: cmp.Or(s.Tools, wire.ToolsAll),
		Participants: s.ParticipantList(), Respond: cmp.Or(s.Respond, wire.RespondAlways),
		Archived: s.Archived, Temperature: s.TemperatureOf(),
	}
}

// TemperatureOf is the session's temperature, nil for none chosen.
func (s *Session) TemperatureOf() *float64 {
	if s.Temperature < 0 {
		return nil
	}
	t := s.Temperature
	return &t
}

// ParticipantList is the session's participants, in order.
func (s *Session) ParticipantList() []string { return ParseParticipants(s.Participants) }

// ParseParticipants reads the participants column: a JSON array, or ""
// for none.
func ParseParticipants(col string) []string {
	out := []string{}
	if col != "" {
		_ = json.Unmarshal([]byte(col), &out)
	}
	return out
}

// ForkPoint is where the session was forked from; nil for one that is no
// fork.
func (s *Session) ForkPoint() *wire.ForkPoint {
	if s.Parent == "" {
		return nil
	}
	return &wire.ForkPoint{Session: s.Parent, Offset: s.ParentOffset}
}

// CreateHash fingerprints a create request so that a repeated PUT can be told
// from a different one for the same id.
func CreateHash(c wire.SessionCreate) string {
	b := wire.Encode(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CreateSession inserts s. When a session with s.ID exists, it returns that
// session and created=false if it was made by an identical request, and
// ErrConflict otherwise.
func (t *Tx) CreateSession(ctx context.Context, s Session) (_ Session, created bool, err error) {
	old, err := scanSession(t.sql.QueryRowContext(ctx, t.bind(sessionSQL), s.ID))
	switch {
	case err == nil:
		if old.CreateHash != s.CreateHash {
			return Session{}, false, fmt.Errorf("session %q exists with other settings: %w", s.ID, ErrConflict)
		}
		if h, err := t.head(ctx, s.ID); err == nil {
			old.Head = h // the row's head is written at the batch's end
		}
		return old, false, nil
	case !errors.Is(err, sql.ErrNoRows):
		return Session{}, false, fmt.Errorf("look up session: %w", err)
	}
	s.Version = 1
	s.Head = 0
	s.Inputs = 0
	s.CreatedAt = formatTime(t.now)
	s.UpdatedAt = s.CreatedAt
	if _, err := t.NewInsert().Model(&s).Exec(ctx); err != nil {
		return Session{}, false, fmt.Errorf("insert session: %w", err)
	}
	t.setCounters(s.ID, counters{epoch: s.Epoch})
	t.record(ChangeCreated, s.ID, "")
	return s, true, nil
}

// PatchSession applies p to the session if its version is ifVersion, bumps
// the version and appends a settings event naming what changed. A patch
// that changes nothing returns the session as it is.
func (t *Tx) PatchSession(ctx context.Context, id string, p wire.SessionPatch, ifVersion int64, by string) (Session, error) {
	if err := t.CheckSession(ctx, id); err != nil { // and lock its row
		return Session{}, err
	}
	s, err := scanSession(t.sql.QueryRowContext(ctx, t.bind(sessionSQL), id))
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Session{}, fmt.Errorf("session %q: %w", id, ErrNotFound)
		}
		return Session{}, fmt.Errorf("look up session: %w", err)
	}
	if s.Version != ifVersion {
		return Session{}, fmt.Errorf("session %q is at version %d, not %d: %w", id, s.Version, ifVersion, ErrStale)
	}
	ev := wire.Event{Type: wire.EventSettings, By: by}
	changed := false
	set := func(field *string, to *string, out **string) {
		if to != nil && *to != *field {
			*field = *to
			v := *to
			*out = &v
			changed = true
		}
	}
	set(&s.Title, p.Title, &ev.Title)
	set(&s.Model, p.Model, &ev.Model)
	set(&s.Effort, p.Effort, &ev.Effort)
	set(&s.System, p.System, &ev.System)
	if p.Tools != nil {
		stored := *p.Tools
		if stored == wire.ToolsAll {
			stored = "" // the default, as stored
		}
		if stored != s.Tools {
			s.Tools, ev.Tools, changed = stored, p.Tools, true
		}
	}
	if p.Participants != nil {
		stored := ""
		if len(*p.Participants) > 0 {
			b, _ := json.Marshal(*p.Participants)
			stored = string(b)
		}
		if stored != s.Participants {
			list := slices.Clone(*p.Participants)
			s.Participants, ev.Participants, changed = stored, &list, true
		}
	}
	if p.Respond != nil && *p.Respond != s.Respond {
		// Stored as said, even "always": "" is a session nobody chose
		// for, which a grant of write access turns to mentions.
		s.Respond, ev.Respond, changed = *p.Respond, p.Respond, true
	}
	if p.Temperature != nil && max(*p.Temperature, -1) != s.Temperature {
		v := max(*p.Temperature, -1) // below 0: none, the provider's own
		s.Temperature, ev.Temperature, changed = v, &v, true
	}
	if p.Archived != nil && *p.Archived != s.Archived {
		v := *p.Archived
		s.Archived, ev.Archived, changed = v, &v, true
	}
	if !changed {
		return s, nil
	}
	s.Version++
	if _, err := t.NewUpdate().Model(&s).Column("title", "model", "effort", "system", "tools", "participants", "respond", "archived", "temperature", "version").WherePK().Exec(ctx); err != nil {
		return Session{}, fmt.Errorf("update session: %w", err)
	}
	evs, err := t.Append(ctx, id, ev)
	if err != nil {
		return Session{}, err
	}
	s.Head = evs[0].Offset
	s.UpdatedAt = formatTime(t.now)
	return s, nil
}

// MentionsOnceShared turns a session nobody chose a respond for to
// mentions (a settings event by by), as a grant of write access to a
// member does: a team's session does not answer every line. It returns
// the session and whether it changed.
func (t *Tx) MentionsOnceShared(ctx context.Context, id, by string) (Session, bool, error) {
	s, err := scanSession(t.sql.QueryRowContext(ctx, t.bind(sessionSQL), id))
	if err != nil || s.Respond != "" {
		return s, false, err
	}
	mentions := wire.RespondMentions
	s, err = t.PatchSession(ctx, id, wire.SessionPatch{Respond: &mentions}, s.Version, by)
	return s, err == nil, err
}

// DeleteSession removes a session with its events and inputs, and ends
// the tokens scoped to it: it returns the ids of those revoked and the
// bot tokens narrowed to their other sessions (see dropSessionTokens).
func (t *Tx) DeleteSession(ctx context.Context, id string) (revoked []string, narrowed []Token, _ error) {
	head, err := t.head(ctx, id) // and lock its row (CheckSession)
	if err != nil {
		return nil, nil, err
	}
	// Its input ids first, found through its events' (input_ids has no
	// foreign key; migration events_log), a range of offsets at a time so
	// that the list of ids SQLite keeps for each statement is bounded,
	// not the session's size; then its events in the log, which has no
	// foreign key either. Its events and inputs go with its row (ON
	// DELETE CASCADE), but those its forks read, which its heir takes
	// (handOn).
	for from := int64(0); from < head; from += deleteIDsRange {
		if _, err := t.sql.ExecContext(ctx, t.bind(deleteInputIDsSQL), id, id, from, from+deleteIDsRange, id, from, from+deleteIDsRange); err != nil {
			return nil, nil, fmt.Errorf("delete input ids: %w", err)
		}
	}
	if err := t.handOn(ctx, id); err != nil {
		return nil, nil, err
	}
	if err := t.deleteSearchDocs(ctx, id); err != nil {
		return nil, nil, err
	}
	if _, err := t.sql.ExecContext(ctx, t.bind(`DELETE FROM events_log WHERE session = ?`), id); err != nil {
		return nil, nil, fmt.Errorf("delete logged events: %w", err)
	}
	if err := t.deleteToolCalls(ctx, id); err != nil {
		return nil, nil, err
	}
	if err := t.deleteAgentSession(ctx, id); err != nil {
		return nil, nil, err
	}
	if err := t.deleteBlobRefs(ctx, id); err != nil {
		return nil, nil, err
	}
	res, err := t.NewDelete().Model((*Session)(nil)).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("delete session: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	t.setCounters(id, counters{head: -1})
	t.deleted = append(t.deleted, id)
	if err := t.bury(ctx, id); err != nil {
		return nil, nil, err
	}
	t.record(ChangeDeleted, id, "")
	if err := t.deleteSessionGrants(ctx, id); err != nil {
		return nil, nil, err
	}
	return t.dropSessionTokens(ctx, id)
}

// deleteInputIDsSQL deletes the rows of input_ids that a session's events
// in a range of offsets took (parameters: the session; then the session
// and the range's ends, twice).
var deleteInputIDsSQL = `DELETE FROM input_ids WHERE session = ? AND input_id IN (` +
	bothTables(`SELECT input_id FROM events WHERE session = ? AND "offset" > ? AND "offset" <= ? AND input_id IS NOT NULL`) + `)`

// deleteIDsRange is how many offsets one deleteInputIDsSQL covers.
const deleteIDsRange = 1024

// sessionColumns are a Session's, in the order scanSession reads them.
// Every read of a session is of the view sessions_now, which is its row
// with the counters of its events still in the log (migration
// sessions_now).
const sessionColumns = `id, epoch, title, workspace, provider, model, effort,
	version, head, inputs, create_hash, created_at, updated_at, last_turn, system,
	parent, parent_offset, base_session, base, tools, participants, respond, archived, temperature`

// sessionSQL reads one session by id.
const sessionSQL = `SELECT ` + sessionColumns + ` FROM sessions_now WHERE id = ?`

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanSession reads a row of sessionColumns.
func scanSession(r scanner) (Session, error) {
	var s Session
	err := r.Scan(&s.ID, &s.Epoch, &s.Title, &s.Workspace, &s.Provider, &s.Model, &s.Effort,
		&s.Version, &s.Head, &s.Inputs, &s.CreateHash, &s.CreatedAt, &s.UpdatedAt, &s.LastTurn, &s.System,
		&s.Parent, &s.ParentOffset, &s.BaseSession, &s.Base, &s.Tools, &s.Participants, &s.Respond, &s.Archived, &s.Temperature)
	return s, err
}

// Session reads one session.
func (d *DB) Session(ctx context.Context, id string) (Session, error) {
	return readSession(d, ctx, sessionSQL, id, scanSession)
}

// readSession reads the row of session id that query (SQL with the id as
// its parameter, prepared once per connection) selects, with scan:
// ErrNotFound (wrapped) if there is no such session. A row by its key is
// a short read (shortRead).
func readSession[T any](d *DB, ctx context.Context, query, id string, scan func(scanner) (T, error)) (T, error) {
	var zero T
	ctx, err := d.shortRead(ctx)
	if err != nil {
		return zero, err
	}
	v, err := scan(d.ro.DB.QueryRowContext(ctx, d.dialect.bind(query), id))
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return zero, fmt.Errorf("session %q: %w", id, ErrNotFound)
		}
		return zero, fmt.Errorf("read session: %w", err)
	}
	return v, nil
}

// scanRows reads every row of rows with scan, and closes rows.
func scanRows[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// SessionsPage reads up to limit sessions in the order of their ids: those
// after the id after ("" for the first page), only those in only when it
// is not nil, and only the archived (or only the others) when archived is
// not nil. more says whether the list goes on after the page.
//
// Pages go by id, not by activity, for two reasons. A walk of the pages
// misses no session that exists throughout it, whatever the sessions do
// meanwhile; in the order of activity, a session active during the walk
// would move ahead of the pages already read. And a page reads only its
// own sessions, through the primary key, where an order by updated_at
// (taken from the log where it is newer, sessions_now) would read every
// session for every page (TestSessionsPageReadsOnlyItsPage).
func (d *DB) SessionsPage(ctx context.Context, after string, limit int, only []string, archived *bool) (_ []Session, more bool, _ error) {
	if limit <= 0 || (only != nil && len(only) == 0) {
		return nil, false, nil
	}
	rows, err := d.sessionsPageQuery(after, limit+1, only, archived).Rows(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("list sessions: %w", err)
	}
	ss, err := scanRows(rows, scanSession)
	if err != nil {
		return nil, false, fmt.Errorf("list sessions: %w", err)
	}
	if len(ss) > limit {
		return ss[:limit], true, nil
	}
	return ss, false, nil
}

// sessionsPageQuery reads up to n sessions of a page.
func (d *DB) sessionsPageQuery(after string, n int, only []string, archived *bool) *bun.SelectQuery {
	q := d.ro.NewSelect().TableExpr("sessions_now").ColumnExpr(sessionColumns).
		Where("id > ?", after).OrderExpr("id").Limit(int64(n))
	if only != nil {
		q = q.Where("id IN (?)", bun.In(only))
	}
	if archived != nil {
		q = q.Where("archived = ?", *archived)
	}
	return q
}

// SessionHead is a session's head, and the epoch it is of: a session
// deleted and made again under its id has another.
type SessionHead struct {
	Head  int64
	Epoch string
}

// Heads reads the heads of the sessions ids that exist: a node of a
// cluster re-reads those it serves, so that an event whose notice was lost
// is only late (hub's reconcile).
func (d *DB) Heads(ctx context.Context, ids []string) (map[string]SessionHead, error) {
	var rows []struct {
		ID    string `bun:"id"`
		Head  int64  `bun:"head"`
		Epoch string `bun:"epoch"`
	}
	if err := d.ro.NewSelect().Table("sessions_now").Column("id", "head", "epoch").Where("id IN (?)", bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read heads: %w", err)
	}
	out := make(map[string]SessionHead, len(rows))
	for _, r := range rows {
		out[r.ID] = SessionHead{Head: r.Head, Epoch: r.Epoch}
	}
	return out, nil
}

// Head reads one session's head and epoch.
func (d *DB) Head(ctx context.Context, id string) (SessionHead, error) {
	hs, err := d.Heads(ctx, []string{id})
	if err != nil {
		return SessionHead{}, err
	}
	h, ok := hs[id]
	if !ok {
		return SessionHead{}, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	return h, nil
}

// Ping asks the store a question that reads a table, for readiness
// checks: an error says the store does not answer (or not in time).
func (d *DB) Ping(ctx context.Context) error {
	var ok bool
	if err := d.ro.NewRaw("SELECT EXISTS (SELECT 1 FROM sessions)").Scan(ctx, &ok); err != nil {
		return fmt.Errorf("ping store: %w", err)
	}
	return nil
}
