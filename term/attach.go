package term

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/gdamore/tcell/v2"
	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// Files attached to the next message (docs/protocol.md, "Files"):
// /attach PATH… uploads each file off the loop (client.PutFile: hashed,
// HEAD first, streamed), one after the other, the notice line saying
// which goes up; each one up is held as the focused session's pending
// attachment, a chip above the composer's text ("[bug.png · 240 KiB]").
// Enter sends the text with them (the text may then be empty) and clears
// them; Backspace at the composer's start drops the last. They belong to
// their session, as its draft does, at most wire.MaxAttachments.
//
// The stream's send carries no attachments (client.Stream.Queue), so a
// message with files goes by HTTP (PutInput, idempotent under its input
// id). The inputs of a session still reach the daemon in the order they
// were sent: each waits for the one before it (App.sends).

// The Cmds and results of attaching.
type (
	cmdAttach struct {
		Session string
		Paths   []string // as typed, unquoted; the App expands ~ and file://
	}
	cmdSendFiles struct {
		Session, Text string
		Attachments   []wire.Attachment
	}

	resAttached struct {
		Session, Path string // Path as in cmdAttach
		Att           wire.Attachment
		Err           error
	}
	resSentFiles struct {
		cmdSendFiles
		Receipt wire.Receipt
		Err     error
	}
)

func (cmdAttach) isCmd()    {}
func (cmdSendFiles) isCmd() {}

// maxChipRows is the most rows the composer's chips take.
const maxChipRows = 2

// stChip is a chip's style; one still uploading is dim.
var stChip = stBase.Foreground(tcell.ColorTeal)

var attachCommand = slashCommand{"/attach PATH…", "attach files to the next message (Backspace drops one)", (*Model).attach}

// attach is /attach PATH…: it uploads the files for the focused
// session's next message.
func (m *Model) attach(arg string) []Cmd {
	s := m.Focused()
	if s == nil {
		m.notify(true, "no session: Ctrl-N creates one")
		return nil
	}
	paths, err := splitPaths(arg)
	if err != nil {
		m.notify(true, "/attach: "+spoken(err))
		return nil
	}
	if len(paths) == 0 {
		m.notify(true, `usage: /attach PATH [PATH…] (quote a path with spaces: "my file.png")`)
		return nil
	}
	if n := len(s.attached) + len(s.uploading); n+len(paths) > wire.MaxAttachments {
		m.notify(true, fmt.Sprintf("a message carries at most %d files: %d attached, room for %d", wire.MaxAttachments, n, wire.MaxAttachments-n))
		return nil
	}
	s.uploading = append(s.uploading, paths...)
	m.notify(false, uploadingText(s))
	return []Cmd{cmdAttach{Session: s.ID, Paths: paths}}
}

// uploadingText is what the notice line says while s's files go up.
func uploadingText(s *SessionView) string {
	t := "uploading " + baseName(s.uploading[0]) + "…"
	if n := len(s.uploading) - 1; n > 0 {
		t += fmt.Sprintf(" (%d more after it)", n)
	}
	return t
}

// baseName is the name of the file a typed path names.
func baseName(p string) string {
	return filepath.Base(strings.TrimRight(p, `/`))
}

// splitPaths splits /attach's argument into paths as a shell would: at
// spaces, but not inside quotes ('…' or "…") or after a backslash (as
// terminals escape a file dropped on them).
func splitPaths(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	word := false // a word has begun ("" is one)
	var quote rune
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'' && r != '\'':
			cur.WriteRune(r)
		case quote == '"' && r == '\\' && i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '\\'):
			i++
			cur.WriteRune(rs[i])
		case quote != 0 && r != quote:
			cur.WriteRune(r)
		case quote != 0:
			quote = 0
		case r == '\'' || r == '"':
			quote, word = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			word = true
		case unicode.IsSpace(r):
			if word && cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
			word = false
		default:
			cur.WriteRune(r)
			word = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("the quote %c is not closed", quote)
	}
	if word && cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out, nil
}

// expandPath is a path as /attach takes it made one to open: a file://
// URL (some terminals paste a dropped file so) its path, ~ the home
// directory; a relative path stays relative to the working directory.
func expandPath(p string) string {
	if strings.HasPrefix(p, "file://") {
		if u, err := url.Parse(p); err == nil && (u.Host == "" || u.Host == "localhost") {
			p = u.Path
		}
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	return p
}

// attached holds a file uploaded for s, or says why it is not.
func (m *Model) attached(r resAttached) {
	s := m.session(r.Session)
	if s == nil {
		return // the session left the sidebar meanwhile
	}
	if i := slices.Index(s.uploading, r.Path); i >= 0 {
		s.uploading = slices.Delete(s.uploading, i, i+1)
	}
	name := baseName(r.Path)
	switch {
	case r.Err != nil:
		m.notify(true, "not attached: "+uploadError(name, r.Err))
		return
	case slices.ContainsFunc(s.attached, func(a wire.Attachment) bool { return a.SHA256 == r.Att.SHA256 }):
		m.notify(false, name+" is attached already")
		return
	}
	s.attached = append(s.attached, r.Att)
	if m.NoticeErr && m.notice() != "" {
		return // a file that went up does not hide one that did not: its chip says it is there
	}
	t := "attached " + chipText(r.Att)
	if len(s.uploading) > 0 {
		t += "; " + uploadingText(s)
	}
	m.notify(false, t)
}

// uploadError says why a file did not go up, the daemon's code first.
func uploadError(name string, err error) string {
	if client.Code(err) == wire.CodeTooLarge {
		return fmt.Sprintf("%s is too large for the daemon (%s)", name, spoken(err))
	}
	return spoken(err)
}

// dropChip takes the focused session's last attachment off (Backspace
// at the composer's start).
func (m *Model) dropChip() {
	s := m.Focused()
	if s == nil || len(s.attached) == 0 {
		return
	}
	a := s.attached[len(s.attached)-1]
	s.attached = s.attached[:len(s.attached)-1]
	m.notify(false, "dropped "+a.Name+" (/attach adds it again)")
}

// sendFiles is Enter with files pending in s: the text with them. A file
// still on its way holds the message back: it was meant to go with it.
func (m *Model) sendFiles(s *SessionView, text string) []Cmd {
	if len(s.uploading) > 0 {
		m.setComposer(text)
		m.notify(true, baseName(s.uploading[0])+" is still uploading: Enter again once it is attached")
		return nil
	}
	atts := s.attached
	s.attached = nil
	s.Follow = true
	return []Cmd{cmdSendFiles{Session: s.ID, Text: text, Attachments: atts}}
}

// sentFiles says why a message with files was not sent, and gives back
// its files (and its text, where nothing was written since) to send again.
func (m *Model) sentFiles(r resSentFiles) {
	if r.Err == nil {
		return
	}
	s := m.session(r.Session)
	if s == nil {
		m.notify(true, "not sent: "+spoken(r.Err))
		return
	}
	if len(s.attached) == 0 && len(s.uploading) == 0 {
		s.attached = r.Attachments
	}
	switch {
	case s == m.Focused() && len(m.Composer) == 0:
		m.setComposer(r.Text)
	case s != m.Focused() && len(s.draft) == 0:
		s.draft = []rune(r.Text)
		s.draftCursor = len(s.draft)
	}
	m.notify(true, "not sent: "+spoken(r.Err)+" (the message and its files are back to send again)")
}

// fileResult takes the results of files (attach.go, files.go); it says
// whether r was one.
func (m *Model) fileResult(r any) bool {
	switch r := r.(type) {
	case resAttached:
		m.attached(r)
	case resSentFiles:
		m.sentFiles(r)
	case resFile:
		m.fileFetched(r)
	default:
		return false
	}
	return true
}

// chipText is a file as the composer and the notices name it.
func chipText(a wire.Attachment) string {
	return "[" + truncate(a.Name, 32) + " · " + humanSize(a.Size) + "]"
}

// chipRows is the focused session's files as the composer shows them
// above its text, w cells wide: a chip each, those still uploading dim,
// in at most maxChipRows rows, the last saying how many more there are
// when they do not all fit.
func (m *Model) chipRows(w int) [][]span {
	s := m.Focused()
	if s == nil || len(s.attached)+len(s.uploading) == 0 {
		return nil
	}
	var chips []span
	for _, a := range s.attached {
		chips = append(chips, span{chipText(a), stChip})
	}
	for _, p := range s.uploading {
		chips = append(chips, span{"[" + truncate(baseName(p), 32) + " · uploading…]", stDim})
	}
	return packChips(chips, max(w, 1))
}

// packChips lays chips out in rows of w cells, one space apart.
func packChips(chips []span, w int) [][]span {
	var rows [][]span
	var cur []span
	curW := 0
	for i, c := range chips {
		c.text = truncate(c.text, w)
		cw := width(c.text)
		if curW > 0 && curW+1+cw > w {
			rows = append(rows, cur)
			if len(rows) == maxChipRows {
				return moreChips(rows, len(chips)-i, w)
			}
			cur, curW = nil, 0
		}
		if curW > 0 {
			cur, curW = append(cur, span{" ", stBase}), curW+1
		}
		cur, curW = append(cur, c), curW+cw
	}
	return append(rows, cur)
}

// moreChips ends the last row with how many chips were left out, taking
// chips off it until that fits.
func moreChips(rows [][]span, n, w int) [][]span {
	last := slices.Clone(rows[len(rows)-1])
	for {
		more := fmt.Sprintf("+%d more", n)
		if len(last) == 0 {
			last = []span{{truncate(more, w), stDim}}
			break
		}
		if spansWidth(last)+1+width(more) <= w {
			last = append(last, span{" ", stBase}, span{more, stDim})
			break
		}
		last, n = last[:len(last)-1], n+1 // a chip
		if len(last) > 0 {
			last = last[:len(last)-1] // the space before it
		}
	}
	rows[len(rows)-1] = last
	return rows
}

func spansWidth(sp []span) int {
	n := 0
	for _, s := range sp {
		n += width(s.text)
	}
	return n
}

// sendText queues an input on the stream: here, on the loop, so that
// inputs go out in the order they were typed; only the wait for the
// receipt is off the loop.
func (a *App) sendText(cmd cmdSend) {
	in := a.st.Queue(cmd.Session, uuid.Must(uuid.NewV7()).String(), cmd.Text)
	a.goRun(func() {
		r, err := in.Receipt(a.ctx)
		a.post(resSent{Session: cmd.Session, Text: cmd.Text, Receipt: r, Err: err})
	})
}

// sendFiles queues a message with files as sendText does: in the same
// order as the session's other inputs.
func (a *App) sendFiles(cmd cmdSendFiles) {
	in := a.st.Queue(cmd.Session, uuid.Must(uuid.NewV7()).String(), cmd.Text, cmd.Attachments...)
	a.goRun(func() {
		r, err := in.Receipt(a.ctx)
		a.post(resSentFiles{cmdSendFiles: cmd, Receipt: r, Err: err})
	})
}

// upload sends /attach's files up, one after the other, each result
// posted as it comes.
func (a *App) upload(cmd cmdAttach) {
	a.goRun(func() {
		for _, p := range cmd.Paths {
			att, err := a.c.PutFile(a.ctx, expandPath(p))
			a.post(resAttached{Session: cmd.Session, Path: p, Att: att, Err: err})
		}
	})
}
