package term

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// att is an attachment as the daemon fills it in.
func att(name, mime string, size int64) wire.Attachment {
	sum := sha256.Sum256([]byte(name))
	return wire.Attachment{SHA256: hex.EncodeToString(sum[:]), Name: name, MIME: mime, Size: size}
}

// withFiles is msg carrying files.
func withFiles(ev wire.Event, atts ...wire.Attachment) wire.Event {
	ev.Attachments = atts
	return ev
}

// /attach uploads what it names (quoted, escaped, ~ left to the App),
// each a chip above the composer once up, dim while it goes; Enter sends
// the text with the files and clears them; the files stay with their
// session when the focus moves.
func TestAttachHoldsFilesForTheNextMessage(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Width = 80
	m.Sessions[0].Phase = wire.PhaseIdle
	cmds := runLine(m, `/attach bug.png "my shot.png" ~/notes\ 1.txt`)
	c, ok := only[cmdAttach](cmds)
	if !ok || c.Session != "s-aaaaaaaa" || !slices.Equal(c.Paths, []string{"bug.png", "my shot.png", "~/notes 1.txt"}) {
		t.Fatalf("/attach asked for %#v", cmds)
	}
	if m.Notice != "uploading bug.png… (2 more after it)" {
		t.Fatalf("notice %q", m.Notice)
	}
	if r := screen(t, m); !contains(r, "[bug.png · uploading…] [my shot.png · uploading…]") {
		t.Fatalf("no chips while uploading:\n%s", strings.Join(r, "\n"))
	}
	bug, shot := att("bug.png", "image/png", 240<<10), att("my shot.png", "image/png", 1500)
	m.Result(resAttached{Session: c.Session, Path: "bug.png", Att: bug})
	if m.Notice != "attached [bug.png · 240 KiB]; uploading my shot.png… (1 more after it)" {
		t.Fatalf("notice %q", m.Notice)
	}
	m.Result(resAttached{Session: c.Session, Path: "my shot.png", Att: shot})
	m.Result(resAttached{Session: c.Session, Path: "~/notes 1.txt", Err: errors.New("open /home/me/notes 1.txt: no such file or directory")})
	if !m.NoticeErr || !strings.Contains(m.Notice, "not attached: open /home/me/notes 1.txt") {
		t.Fatalf("notice %q", m.Notice)
	}
	r := screen(t, m)
	if !contains(r, "[bug.png · 240 KiB] [my shot.png · 1.5 KiB]") || !contains(r, "❯ message, or Enter sends the files") {
		t.Fatalf("the composer:\n%s", strings.Join(r, "\n"))
	}

	// Per session, as drafts are.
	m.Key(key(tcell.KeyDown, 0, tcell.ModAlt))
	if r := screen(t, m); contains(r, "bug.png") {
		t.Fatalf("the files followed the focus:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyUp, 0, tcell.ModAlt))

	typeText(m, "what is wrong?")
	sent, ok := only[cmdSendFiles](m.Key(key(tcell.KeyEnter, 0, 0)))
	if !ok || sent.Session != "s-aaaaaaaa" || sent.Text != "what is wrong?" || !slices.Equal(sent.Attachments, []wire.Attachment{bug, shot}) {
		t.Fatalf("Enter sent %#v", sent)
	}
	if s := m.Sessions[0]; len(s.attached) != 0 || len(m.Composer) != 0 || contains(screen(t, m), "bug.png") {
		t.Fatalf("sending left %v and %q", s.attached, string(m.Composer))
	}
	// Then Enter is a message without files again.
	typeText(m, "and now?")
	if _, ok := only[cmdSend](m.Key(key(tcell.KeyEnter, 0, 0))); !ok {
		t.Fatal("a message after the files was not a plain send")
	}
}

// Files alone are a message: Enter on an empty composer sends them. A
// file still going up holds the message back; Backspace at the start
// drops the last file.
func TestFilesAloneAndBackspace(t *testing.T) {
	t.Parallel()
	m := demo()
	s := m.Sessions[0]
	runLine(m, "/attach a.txt b.txt")
	m.Result(resAttached{Session: s.ID, Path: "a.txt", Att: att("a.txt", "text/plain", 12)})
	typeText(m, "hi")
	if cmds := m.Key(key(tcell.KeyEnter, 0, 0)); cmds != nil || !strings.Contains(m.Notice, "b.txt is still uploading") || string(m.Composer) != "hi" {
		t.Fatalf("Enter while b.txt goes up: %#v, notice %q, composer %q", cmds, m.Notice, string(m.Composer))
	}
	m.Result(resAttached{Session: s.ID, Path: "b.txt", Att: att("b.txt", "text/plain", 13)})
	m.Key(key(tcell.KeyHome, 0, 0))
	m.Key(key(tcell.KeyBackspace2, 0, 0))
	if len(s.attached) != 1 || s.attached[0].Name != "a.txt" || string(m.Composer) != "hi" || m.Notice != "dropped b.txt (/attach adds it again)" {
		t.Fatalf("Backspace at the start: %v, composer %q, notice %q", s.attached, string(m.Composer), m.Notice)
	}
	m.setComposer("")
	sent, ok := only[cmdSendFiles](m.Key(key(tcell.KeyEnter, 0, 0)))
	if !ok || sent.Text != "" || len(sent.Attachments) != 1 {
		t.Fatalf("Enter with only a file: %#v", sent)
	}
	// Not sent: the files (and the text) come back to send again.
	m.Result(resSentFiles{cmdSendFiles: cmdSendFiles{Session: s.ID, Text: "look", Attachments: sent.Attachments}, Err: errors.New("bad_request")})
	if len(s.attached) != 1 || string(m.Composer) != "look" || !m.NoticeErr {
		t.Fatalf("after a refusal: %v, composer %q, notice %q", s.attached, string(m.Composer), m.Notice)
	}
	// The same file twice is one.
	runLine(m, "/attach again.txt")
	m.Result(resAttached{Session: s.ID, Path: "again.txt", Att: s.attached[0]})
	if len(s.attached) != 1 || !strings.Contains(m.Notice, "attached already") {
		t.Fatalf("a file attached twice: %v, %q", s.attached, m.Notice)
	}
}

// What /attach refuses before uploading anything: no path, an open
// quote, more than a message carries, no session, a read-only view.
func TestAttachRefuses(t *testing.T) {
	t.Parallel()
	m := demo()
	for line, want := range map[string]string{
		"/attach":          "usage: /attach PATH",
		`/attach "a b.png`: `the quote " is not closed`,
		"/attach " + strings.Repeat("f ", wire.MaxAttachments+1): "a message carries at most 16 files: 0 attached, room for 16",
	} {
		if cmds := runLine(m, line); cmds != nil || !m.NoticeErr || !strings.Contains(m.Notice, want) {
			t.Errorf("%q: %#v, notice %q", line, cmds, m.Notice)
		}
	}
	runLine(m, "/attach "+strings.Repeat("f ", wire.MaxAttachments))
	if cmds := runLine(m, "/attach one.more"); cmds != nil || !strings.Contains(m.Notice, "16 attached, room for 0") {
		t.Errorf("the 17th: %#v, notice %q", cmds, m.Notice)
	}
	m.Focus = -1
	if cmds := runLine(m, "/attach x"); cmds != nil || !strings.Contains(m.Notice, "no session") {
		t.Errorf("no session: %#v, notice %q", cmds, m.Notice)
	}
	ro := demo()
	ro.ReadOnly = true
	if cmds := runLine(ro, "/attach x"); cmds != nil || !strings.Contains(ro.Notice, "read-only") {
		t.Errorf("read-only: %#v, notice %q", cmds, ro.Notice)
	}
}

func TestSplitPaths(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		`a b`:                   {"a", "b"},
		`  'x y'  "p\"q" r\ s `: {"x y", `p"q`, "r s"},
		`"C:\dir\f" ''`:         {`C:\dir\f`},
		`file:///tmp/a%20b.png`: {"file:///tmp/a%20b.png"},
	} {
		got, err := splitPaths(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	home, _ := os.UserHomeDir()
	for in, want := range map[string]string{
		"file:///tmp/a%20b.png": "/tmp/a b.png",
		"~/x.png":               filepath.Join(home, "x.png"),
		"rel/x.png":             "rel/x.png",
	} {
		if got := expandPath(in); got != want {
			t.Errorf("expandPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHumanSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0 B", 812: "812 B", 1024: "1.0 KiB", 240 << 10: "240 KiB", 3 << 20: "3.0 MiB", 20 << 30: "20.0 GiB"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// Many files take two rows at most, the last saying how many more; each
// row fits its width, however narrow.
func TestChipsFitTheirRows(t *testing.T) {
	t.Parallel()
	for _, w := range []int{80, 40, 20, 8, 1} {
		m := demo()
		s := m.Sessions[0]
		for i := range 16 {
			s.attached = append(s.attached, att(fmt.Sprintf("screenshot-%02d.png", i), "image/png", 1<<20))
		}
		rows := m.chipRows(w)
		if len(rows) != maxChipRows {
			t.Fatalf("width %d: %d rows", w, len(rows))
		}
		for _, r := range rows {
			if spansWidth(r) > w {
				t.Fatalf("width %d: a row of %d cells: %q", w, spansWidth(r), spanLine(r, stBase).text)
			}
		}
		if last := spanLine(rows[1], stBase).text; w >= 8 && !strings.Contains(last, "more") {
			t.Fatalf("width %d: the last row %q does not say how many more", w, last)
		}
	}
	m := demo()
	m.Width, m.Height, m.sidebar = 80, 24, sidebarOff
	for i := range 16 {
		m.Sessions[0].attached = append(m.Sessions[0].attached, att(fmt.Sprintf("screenshot-%02d.png", i), "image/png", 1<<20))
	}
	r := screen(t, m)
	if !contains(r, "[screenshot-00.png · 1.0 MiB] [screenshot-01.png · 1.0 MiB]") || !contains(r, "more") || !contains(r, "❯ message, or Enter") {
		t.Fatalf("16 files at 80 columns:\n%s", strings.Join(r, "\n"))
	}
}

// A message's files show a line each under its text, at 80 columns and
// in a narrow terminal, wrapped to its width; files alone take no empty
// text line. A tool's result shows its files too.
func TestTranscriptShowsFiles(t *testing.T) {
	t.Parallel()
	bug := att("bug.png", "image/png", 240<<10)
	long := att("a-very-long-name-of-a-log-file-from-the-build.txt", "text/plain; charset=utf-8", 3<<20)
	for _, w := range []int{80, 30, 12} {
		m := NewModel(w, 20)
		m.sidebar = sidebarOff
		s := &SessionView{ID: "s1", Follow: true, Events: []wire.Event{
			withFiles(msg(1, wire.RoleUser, "ann", "why does it fail?"), bug, long),
			withFiles(msg(2, wire.RoleUser, "ann", ""), bug),
		}}
		m.Sessions, m.Focus = []*SessionView{s}, 0
		lines := s.view(m.look()).blocks
		text := func(b []line) string {
			var out []string
			for _, l := range b {
				out = append(out, l.text)
			}
			return strings.Join(out, "\n")
		}
		for _, b := range lines {
			for _, l := range b {
				if width(l.text) > m.transcriptWidth() {
					t.Fatalf("width %d: %q is wider than the transcript (%d)", w, l.text, m.transcriptWidth())
				}
			}
		}
		if w == 80 {
			want := "ann\nwhy does it fail?\n📎 bug.png · image/png · 240 KiB\n📎 a-very-long-name-of-a-log-file-from-the-build.txt · text/plain · 3.0 MiB\n"
			if got := text(lines[0]); got != "user · "+want {
				t.Fatalf("the message:\n%s", got)
			}
			if got := text(lines[1]); got != "user · ann\n📎 bug.png · image/png · 240 KiB\n" {
				t.Fatalf("files alone:\n%s", got)
			}
			if r := screen(t, m); !contains(r, "📎 bug.png · image/png · 240 KiB") {
				t.Fatalf("screen:\n%s", strings.Join(r, "\n"))
			}
		}
	}
	c := &toolCall{result: &wire.Event{Type: wire.EventToolResult, State: wire.ToolCompleted, Attachments: []wire.Attachment{bug}}}
	if got := resultLines(c, look{width: 80}); len(got) != 1 || got[0].text != "  📎 bug.png · image/png · 240 KiB" {
		t.Fatalf("a result's files: %+v", got)
	}
}

// Ctrl-O in three layers: a folded paste unfolds; else the files of the
// transcript are listed; else long tool calls show whole. Ctrl-O in the
// list goes on to the calls.
func TestCtrlOLayers(t *testing.T) {
	t.Parallel()
	m := demo()
	s := m.Sessions[0]
	ctrlO := func() []Cmd { return m.Key(key(tcell.KeyCtrlO, 0, tcell.ModCtrl)) }
	ctrlO()
	if !m.wholeTools || m.files != nil {
		t.Fatal("with no paste and no files, Ctrl-O did not show the calls whole")
	}
	ctrlO()
	if m.wholeTools {
		t.Fatal("Ctrl-O again did not fold the calls")
	}
	s.Events = append(s.Events, withFiles(msg(3, wire.RoleUser, "ann", "see"), att("old.png", "image/png", 10)),
		msg(4, wire.RoleAssistant, "m1", "ok"),
		withFiles(msg(5, wire.RoleUser, "bob", "and"), att("new.png", "image/png", 20), att("new.txt", "text/plain", 30)))
	paste(m, strings.Repeat("x\n", 10))
	ctrlO()
	if m.files != nil || !strings.HasPrefix(string(m.Composer), "x\nx\n") {
		t.Fatalf("Ctrl-O with a paste folded: files %v, composer %q", m.files, m.shown(m.Composer))
	}
	ctrlO()
	if m.files == nil || m.wholeTools {
		t.Fatal("with files in the transcript, Ctrl-O did not list them")
	}
	var names []string
	for _, it := range m.files.items {
		names = append(names, it.att.Name)
	}
	if !slices.Equal(names, []string{"new.png", "new.txt", "old.png"}) {
		t.Fatalf("the list, newest first: %q", names)
	}
	r := screen(t, m)
	if !contains(r, "files · 3 · ↑↓ Enter opens · s saves · Esc") || !contains(r, "📎 new.txt · text/plain · 30 B") {
		t.Fatalf("the list:\n%s", strings.Join(r, "\n"))
	}
	ctrlO()
	if m.files != nil || !m.wholeTools {
		t.Fatal("Ctrl-O in the list did not go on to the calls")
	}
	// From the sidebar, the same but the paste.
	m.Pane = paneSidebar
	ctrlO()
	if m.files == nil {
		t.Fatal("Ctrl-O in the sidebar did not list the files")
	}
	m.Key(key(tcell.KeyEscape, 0, 0))
	if m.files != nil {
		t.Fatal("Esc did not close the list")
	}
}

// In the list, ↑↓ choose, Enter asks to open the one chosen, s to save
// it; a narrow terminal still draws the list within its width.
func TestFilePickOpensAndSaves(t *testing.T) {
	t.Parallel()
	m := demo()
	s := m.Sessions[0]
	a, b := att("a.png", "image/png", 10), att("b.pdf", "application/pdf", 2048)
	s.Events = append(s.Events, withFiles(msg(3, wire.RoleUser, "ann", "two"), a, b))
	m.Key(key(tcell.KeyCtrlO, 0, tcell.ModCtrl))
	m.Key(key(tcell.KeyDown, 0, 0))
	m.Key(key(tcell.KeyDown, 0, 0)) // stays on the last
	open, ok := only[cmdOpenFile](m.Key(key(tcell.KeyEnter, 0, 0)))
	if !ok || open.Att != b || open.Save || m.files != nil || m.Notice != "downloading b.pdf…" {
		t.Fatalf("Enter: %#v, notice %q", open, m.Notice)
	}
	m.Key(key(tcell.KeyCtrlO, 0, tcell.ModCtrl))
	m.Key(key(tcell.KeyUp, 0, 0))
	save, ok := only[cmdOpenFile](m.Key(key(tcell.KeyRune, 's', 0)))
	if !ok || save.Att != a || !save.Save {
		t.Fatalf("s: %#v", save)
	}
	for _, r := range []resFile{
		{Name: "b.pdf", Path: "/tmp/albedo-files/x-b.pdf", Opened: "xdg-open"},
		{Name: "a.png", Path: "/home/me/Downloads/a.png"},
		{Name: "a.png", Path: "/work/a.png", Why: "no xdg-open here"},
		{Name: "a.png", Err: errors.New("not_found")},
	} {
		m.Result(r)
		want := map[bool]string{true: "opened b.pdf (xdg-open)"}[r.Opened != ""]
		switch {
		case r.Err != nil:
			want = "a.png: not_found"
		case r.Why != "":
			want = "no xdg-open here: saved a.png to /work/a.png"
		case r.Opened == "":
			want = "saved a.png to /home/me/Downloads/a.png"
		}
		if m.Notice != want {
			t.Errorf("%+v: notice %q, want %q", r, m.Notice, want)
		}
	}
	for _, w := range []int{30, 10} {
		m.Width, m.Height = w, 8
		m.Key(key(tcell.KeyCtrlO, 0, tcell.ModCtrl))
		r := screen(t, m)
		if !contains(r, "📎") && w >= 10 {
			t.Fatalf("width %d:\n%s", w, strings.Join(r, "\n"))
		}
		m.Key(key(tcell.KeyEscape, 0, 0))
	}
}

// The App's side, against a daemon in this process: /attach's files go
// up, a message with them and a plain one after it land in the order
// sent, and a file is downloaded and handed to the opener, or saved
// where there is none.
func TestAppSendsAndFetchesFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	c := daemonIn(t)
	ctx := context.Background()
	if _, err := c.CreateSession(ctx, "s", wire.SessionCreate{Title: "files"}); err != nil {
		t.Fatal(err)
	}
	a := newApp(ctx, Options{Client: c}, tcell.NewSimulationScreen("UTF-8"))
	defer a.stop()
	a.openStream()
	dir := t.TempDir()
	pic := []byte("\x89PNG\r\n\x1a\n not really a picture")
	os.WriteFile(filepath.Join(dir, "bug.png"), pic, 0o600)

	a.run([]Cmd{cmdAttach{Session: "s", Paths: []string{filepath.Join(dir, "bug.png")}}})
	up := awaitMsg[resAttached](t, a)
	if up.Err != nil || up.Att.Name != "bug.png" || up.Att.Size != int64(len(pic)) {
		t.Fatalf("upload: %+v", up)
	}
	a.run([]Cmd{cmdSendFiles{Session: "s", Text: "first", Attachments: []wire.Attachment{up.Att}}, cmdSend{Session: "s", Text: "second"}})
	// Their receipts come back each on a goroutine of its own, in either
	// order; the log says the order they were sent in.
	var files, plain bool
	deadline := time.After(20 * time.Second)
	for !files || !plain {
		select {
		case msg := <-a.msgs:
			switch r := msg.(type) {
			case resSentFiles:
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				files = true
			case resSent:
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				plain = true
			}
		case <-deadline:
			t.Fatalf("receipts: the files' %v, the plain one's %v", files, plain)
		}
	}
	p, err := c.History(ctx, "s", 0, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, ev := range p.Events {
		if ev.Type == wire.EventMessage && ev.Role == wire.RoleUser {
			sent = append(sent, fmt.Sprintf("%s %d", ev.Text, len(ev.Attachments)))
		}
	}
	if !slices.Equal(sent, []string{"first 1", "second 0"}) {
		t.Fatalf("the daemon has %q", sent)
	}

	opened := filepath.Join(dir, "opened")
	opener := filepath.Join(dir, "fake-open")
	os.WriteFile(opener, []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+opened+"\n"), 0o700)
	r := a.openFile(cmdOpenFile{Att: up.Att}, opener, "xdg-open", dir)
	want := filepath.Join(tmp, "albedo-files", up.Att.SHA256[:12]+"-bug.png")
	if b, _ := os.ReadFile(opened); r.Err != nil || r.Opened != "xdg-open" || r.Path != want || string(b) != want {
		t.Fatalf("open: %+v, the opener got %q", r, b)
	}
	if b, _ := os.ReadFile(want); !bytes.Equal(b, pic) {
		t.Fatalf("the file opened holds %q", b)
	}
	save := t.TempDir()
	for i, name := range []string{"bug.png", "bug (2).png"} {
		r := a.openFile(cmdOpenFile{Att: up.Att}, "", "xdg-open", save)
		if b, _ := os.ReadFile(filepath.Join(save, name)); r.Err != nil || r.Why != "no xdg-open here" || r.Path != filepath.Join(save, name) || !bytes.Equal(b, pic) {
			t.Fatalf("save %d: %+v", i, r)
		}
	}
	failing := filepath.Join(dir, "failing-open")
	os.WriteFile(failing, []byte("#!/bin/sh\nexit 3\n"), 0o700)
	if r := a.openFile(cmdOpenFile{Att: up.Att}, failing, "xdg-open", save); r.Err != nil || !strings.HasPrefix(r.Why, "xdg-open failed") || r.Path != filepath.Join(save, "bug (3).png") {
		t.Fatalf("a failing opener: %+v", r)
	}
	bad := up.Att
	bad.SHA256 = strings.Repeat("0", 64)
	if r := a.openFile(cmdOpenFile{Att: bad, Save: true}, "", "", save); r.Err == nil || client.Code(r.Err) != wire.CodeNotFound {
		t.Fatalf("a file the daemon lacks: %+v", r)
	}
	if left, _ := filepath.Glob(filepath.Join(save, ".albedo-*")); len(left) != 0 {
		t.Fatalf("partial files left: %q", left)
	}
}

// awaitMsg is the next message of type T the App's goroutines post.
func awaitMsg[T any](t *testing.T, a *App) T {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case msg := <-a.msgs:
			if r, ok := msg.(T); ok {
				return r
			}
		case <-deadline:
			var zero T
			t.Fatalf("no %T came", zero)
		}
	}
}
