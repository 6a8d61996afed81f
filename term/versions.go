package term

import (
	"fmt"
	"slices"
	"strings"

	"albedo/client"
	"albedo/wire"
)

// A message's versions, inline: a message that was edited or regenerated
// shows ‹ i/n › in its header, and on it, selected (Ctrl-Y), ← and →
// open its version before and after, selected there too. Versions are
// forks (docs/protocol.md, "Forks"). For the session S in view and a
// fork point p, the origin is S's parent when S was forked at p, else S;
// the versions at p are the origin, then the origin's forks at p, in the
// order the daemon lists them. The mark is on the first message after p:
// an edit's message (a fork at the event before it), a regenerated reply
// (a fork at the input it answers again).
//
// An origin's forks are read when a session it gives versions to comes
// in front (WantVersions), and again when the feed shows a fork of it
// not among them, or one of them gone: never once per message. Only the
// focused session's origins are kept.

// The Cmds and results of versions.
type (
	cmdVersions    struct{ Origin string }
	cmdVersionOpen struct { // a version the sidebar does not hold: read, then opened
		Session string
		At      int64
	}
	resVersions struct {
		Origin string
		Forks  []wire.Session
		Err    error
	}
	resVersionOpen struct {
		Session wire.Session
		At      int64
		Err     error
	}
)

func (cmdVersions) isCmd()    {}
func (cmdVersionOpen) isCmd() {}

// originForks is an origin's forks as last read.
type originForks struct {
	forks       []wire.Session
	read        bool // forks holds a read's answer
	busy, again bool // a read is on its way; another is wanted once it is back
}

// versionPoint is the versions at one fork point of a session: their
// ids, in order, the session's among them.
type versionPoint struct {
	ids []string
	i   int // the session's place in ids
}

// mark is how the transcript shows it: ‹ 2/3 ›.
func (v versionPoint) mark() string { return fmt.Sprintf("‹ %d/%d ›", v.i+1, len(v.ids)) }

// origins are the sessions whose forks give s's versions.
func (s *SessionView) origins() []string {
	if s.Parent != nil {
		return []string{s.ID, s.Parent.Session}
	}
	return []string{s.ID}
}

// WantVersions reads the forks of the focused session's origins that are
// not read yet, forgets the others' and brings its versions up to date.
func (m *Model) WantVersions() []Cmd {
	s := m.Focused()
	if s == nil || m.ReadOnly { // a link's one session: no forks it may read
		return nil
	}
	want := s.origins()
	if m.forksOf == nil {
		m.forksOf = map[string]*originForks{}
	}
	var cmds []Cmd
	for id := range m.forksOf {
		if !slices.Contains(want, id) {
			delete(m.forksOf, id)
		}
	}
	for _, id := range want {
		if m.forksOf[id] == nil {
			m.forksOf[id] = &originForks{busy: true}
			cmds = append(cmds, cmdVersions{Origin: id})
		}
	}
	m.pointVersions(s)
	return cmds
}

// readAgain asks for an origin's forks again, or, while a read is on its
// way, for one more once it is back.
func (m *Model) readAgain(origin string) []Cmd {
	k := m.forksOf[origin]
	if k.busy {
		k.again = true
		return nil
	}
	k.busy = true
	return []Cmd{cmdVersions{Origin: origin}}
}

// versionsFeed reads an origin's forks again when the feed shows a fork
// of it that they do not hold, or one of them gone.
func (m *Model) versionsFeed(items []wire.FeedItem, gone []string) []Cmd {
	var cmds []Cmd
	for origin, k := range m.forksOf {
		known := func(id string) bool {
			return slices.ContainsFunc(k.forks, func(f wire.Session) bool { return f.ID == id })
		}
		fresh := slices.ContainsFunc(items, func(it wire.FeedItem) bool {
			return it.Parent != nil && it.Parent.Session == origin && !known(it.ID)
		})
		if fresh || slices.ContainsFunc(gone, known) {
			cmds = append(cmds, m.readAgain(origin)...)
		}
	}
	return cmds
}

// versionsRead takes an origin's forks. A read that failed leaves them
// as they were: a parent this person may not read gives no versions.
func (m *Model) versionsRead(r resVersions) []Cmd {
	k := m.forksOf[r.Origin]
	if k == nil {
		return nil // no longer an origin of the session in front
	}
	if r.Err == nil {
		k.forks, k.read = r.Forks, true
	}
	m.forksGen++
	if s := m.Focused(); s != nil {
		m.pointVersions(s)
	}
	if k.again {
		k.again = false
		return []Cmd{cmdVersions{Origin: r.Origin}}
	}
	k.busy = false
	return nil
}

// pointVersions brings s's versions up to date with the forks read, and
// draws its transcript again when they changed.
func (m *Model) pointVersions(s *SessionView) {
	if s.versionsGen == m.forksGen && s.versions != nil {
		return
	}
	s.versionsGen = m.forksGen
	points := m.versionPoints(s)
	if !samePoints(points, s.versions) {
		s.rerender()
	}
	s.versions = points // never nil once made: made of forksGen
}

// versionPoints are s's fork points that have versions, from the forks
// read: p → its versions.
func (m *Model) versionPoints(s *SessionView) map[int64]versionPoint {
	out := map[int64]versionPoint{}
	if k := m.forksOf[s.ID]; k != nil {
		for _, f := range k.forks {
			p := f.Parent.Offset
			if s.Parent != nil && p == s.Parent.Offset {
				continue // there, the versions are the parent's
			}
			v, ok := out[p]
			if !ok {
				v = versionPoint{ids: []string{s.ID}}
			}
			v.ids = append(v.ids, f.ID)
			out[p] = v
		}
	}
	if up := s.Parent; up != nil {
		if k := m.forksOf[up.Session]; k != nil && k.read {
			ids := []string{up.Session}
			for _, f := range k.forks {
				if f.Parent.Offset == up.Offset {
					ids = append(ids, f.ID)
				}
			}
			if !slices.Contains(ids, s.ID) {
				ids = append(ids, s.ID)
			}
			out[up.Offset] = versionPoint{ids: ids, i: slices.Index(ids, s.ID)}
		}
	}
	for p, v := range out {
		if len(v.ids) < 2 {
			delete(out, p)
		}
	}
	return out
}

func samePoints(a, b map[int64]versionPoint) bool {
	if len(a) != len(b) {
		return false
	}
	for p, v := range a {
		if w, ok := b[p]; !ok || w.i != v.i || !slices.Equal(w.ids, v.ids) {
			return false
		}
	}
	return true
}

// versionAfter is the fork point whose first message is at offset, the
// message before it being at prev (-1: none), and its versions: the
// earliest such point.
func (s *SessionView) versionAfter(prev, offset int64) (int64, versionPoint, bool) {
	best, found := int64(0), false
	for p := range s.versions {
		if prev <= p && p < offset && (!found || p < best) {
			best, found = p, true
		}
	}
	return best, s.versions[best], found
}

// firstPrev is where the transcript's walk for versions starts: a
// session with older history unread knows nothing before its first event.
func (s *SessionView) firstPrev() int64 {
	if s.More && len(s.Events) > 0 {
		return s.Events[0].Offset - 1
	}
	return -1
}

// versionOf is the fork point and versions of event i, when it is the
// first message after a point that has them.
func (s *SessionView) versionOf(i int) (int64, versionPoint, bool) {
	ev := s.Events[i]
	if ev.Type != wire.EventMessage || len(s.versions) == 0 {
		return 0, versionPoint{}, false
	}
	prev := s.firstPrev()
	for j := i - 1; j >= 0; j-- {
		if s.Events[j].Type == wire.EventMessage {
			prev = s.Events[j].Offset
			break
		}
	}
	return s.versionAfter(prev, ev.Offset)
}

// switchVersion is ← or → on a selected message: it opens the version
// before (-1) or after (+1) it, that message selected there.
func (m *Model) switchVersion(s *SessionView, dir int) []Cmd {
	p, v, ok := s.versionOf(m.pick.event)
	if !ok {
		m.pick.said = "this message has no other version: e edits it, r regenerates a reply"
		return nil
	}
	to := v.i + dir
	if to < 0 || to >= len(v.ids) {
		m.pick.said = fmt.Sprintf("version %d of %d is the %s", v.i+1, len(v.ids), map[bool]string{true: "first", false: "last"}[to < 0])
		return nil
	}
	m.pick = nil
	return m.openVersion(v.ids[to], p)
}

// openVersion focuses session id with its first message after p
// selected; a session the sidebar does not hold joins it, from the forks
// read or else from the daemon.
func (m *Model) openVersion(id string, p int64) []Cmd {
	if m.session(id) == nil {
		for _, k := range m.forksOf {
			if i := slices.IndexFunc(k.forks, func(f wire.Session) bool { return f.ID == id }); i >= 0 {
				m.Sessions = append(m.Sessions, newSessionView(k.forks[i]))
				m.resort()
				break
			}
		}
	}
	s := m.session(id)
	if s == nil {
		m.notify(false, "opening the version…")
		return []Cmd{cmdVersionOpen{Session: id, At: p}}
	}
	m.setFocus(slices.Index(m.Sessions, s))
	m.Pane = paneComposer
	m.jump = &jump{session: id, offset: p, after: true}
	return m.land()
}

// versionOpened opens a version read from the daemon.
func (m *Model) versionOpened(r resVersionOpen) []Cmd {
	if r.Err != nil {
		m.notify(true, "that version: "+spoken(r.Err))
		return nil
	}
	if m.session(r.Session.ID) == nil {
		m.Sessions = append(m.Sessions, newSessionView(r.Session))
		m.resort()
	}
	return m.openVersion(r.Session.ID, r.At)
}

// versionHint is what the pick's keys say of the selected message's
// versions: "←→ version 2/3 · ", or "".
func (m *Model) versionHint() string {
	s := m.Focused()
	if s == nil || m.pick == nil || m.pick.event >= len(s.Events) {
		return ""
	}
	if _, v, ok := s.versionOf(m.pick.event); ok {
		return fmt.Sprintf("←→ version %d/%d · ", v.i+1, len(v.ids))
	}
	return ""
}

// withMark puts a message's version mark in its header, the first of
// its lines.
func withMark(b []line, mark string, width int) []line {
	if len(b) == 0 || mark == "" {
		return b
	}
	h := b[0]
	h.text = truncate(strings.TrimRight(h.text, " ")+" "+mark, width)
	b[0] = h
	return b
}

// versionsResult takes the results of versions; it says whether r was
// one.
func (m *Model) versionsResult(r any) ([]Cmd, bool) {
	switch r := r.(type) {
	case resVersions:
		return m.versionsRead(r), true
	case resVersionOpen:
		return m.versionOpened(r), true
	}
	return nil, false
}

// versionsRun runs the Cmds of versions; it says whether cmd was one.
func (a *App) versionsRun(cmd Cmd) bool {
	switch cmd := cmd.(type) {
	case cmdVersions:
		a.goRun(func() {
			forks, err := a.c.Forks(a.ctx, cmd.Origin)
			if client.Code(err) == wire.CodeNotFound {
				forks, err = nil, nil // a parent deleted: no versions there
			}
			a.post(resVersions{Origin: cmd.Origin, Forks: forks, Err: err})
		})
	case cmdVersionOpen:
		a.goRun(func() {
			s, err := a.c.Session(a.ctx, cmd.Session)
			a.post(resVersionOpen{Session: s, At: cmd.At, Err: err})
		})
	default:
		return false
	}
	return true
}
