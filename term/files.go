package term

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// The files of a transcript: a message (or a tool's result) that carries
// files shows one line per file under its text, "📎 bug.png · image/png
// · 240 KiB". Ctrl-O, with no paste folded in the composer, lists the
// files of the focused transcript in a box, newest first: Enter downloads
// the one chosen (GetBlob, its sha256 checked) to
// os.TempDir()/albedo-files/<sha256[:12]>-<name> and opens it with the
// system's opener (xdg-open, or open on macOS); s saves it instead, in
// ~/Downloads when that exists, else the working directory. When there is
// no opener, or it fails, the file is saved and the notice line says where.

// The Cmd and result of fetching a file.
type (
	cmdOpenFile struct {
		Att  wire.Attachment
		Save bool // save it rather than open it
	}
	resFile struct {
		Name   string
		Path   string // where it is now
		Opened string // the opener that opened it; "" when saved
		Why    string // why it was saved when it was to be opened
		Err    error
	}
)

func (cmdOpenFile) isCmd() {}

// filePick is the box of a transcript's files (Ctrl-O).
type filePick struct {
	items []fileItem
	sel   int
}

// fileItem is one file of a transcript and the event that carries it.
type fileItem struct {
	att    wire.Attachment
	author string
	at     time.Time
}

// openerWait is how long an opener may take to say it failed; one still
// running then has opened the file itself (a viewer of its own).
const openerWait = 10 * time.Second

// attachmentLines is a message's files, one line each, indented by
// indent, wrapped to width.
func attachmentLines(atts []wire.Attachment, width int, indent string) []line {
	var out []line
	for _, a := range atts {
		spans := []span{{indent + "📎 " + a.Name, stBase}, {" · " + fileType(a) + " · " + humanSize(a.Size), stDim}}
		for _, sp := range wrapSpans(spans, width) {
			out = append(out, spanLine(sp, stBase))
		}
	}
	return out
}

func fileType(a wire.Attachment) string {
	if t := wire.BaseType(a.MIME); t != "" {
		return t
	}
	return "unknown type"
}

// humanSize is n bytes as people read them, as the page says them: 812 B,
// 14.2 KiB, 3.1 MiB.
func humanSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", max(n, 0))
	}
	v, unit := float64(n)/1024, "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f %s", v, unit)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// files is what s's loaded transcript carries, newest first (a message's
// own in their order), each file once.
func (s *SessionView) files() []fileItem {
	var out []fileItem
	seen := map[string]bool{}
	for i := len(s.Events) - 1; i >= 0; i-- {
		ev := s.Events[i]
		for _, a := range ev.Attachments {
			if !seen[a.SHA256] {
				seen[a.SHA256] = true
				out = append(out, fileItem{att: a, author: ev.Author, at: ev.At})
			}
		}
	}
	return out
}

// filesOrTools is Ctrl-O with no paste folded: the box of the focused
// transcript's files, or with none, long tool calls shown whole (or
// folded again).
func (m *Model) filesOrTools() []Cmd {
	if s := m.Focused(); s != nil {
		if items := s.files(); len(items) > 0 {
			m.files = &filePick{items: items}
			return nil
		}
	}
	return m.toggleTools()
}

// filesKey is a key while the box of files shows: ↑↓ choose, Enter
// opens, s saves, Esc closes, Ctrl-O again closes it and shows long tool
// calls whole (or folds them); any other key closes it and does what it
// does.
func (m *Model) filesKey(ev *tcell.EventKey) []Cmd {
	f := m.files
	switch ev.Key() {
	case tcell.KeyUp:
		f.sel = max(f.sel-1, 0)
	case tcell.KeyDown:
		f.sel = min(f.sel+1, len(f.items)-1)
	case tcell.KeyEnter:
		return m.fetchFile(false)
	case tcell.KeyEscape:
		m.files = nil
	case tcell.KeyCtrlO:
		m.files = nil
		return m.toggleTools()
	default:
		if ev.Key() == tcell.KeyRune && ev.Rune() == 's' && ev.Modifiers()&tcell.ModAlt == 0 {
			return m.fetchFile(true)
		}
		m.files = nil
		return m.press(ev)
	}
	return nil
}

// fetchFile closes the box and asks for the chosen file, to open or save.
func (m *Model) fetchFile(save bool) []Cmd {
	it := m.files.items[m.files.sel]
	m.files = nil
	m.notify(false, "downloading "+it.att.Name+"…")
	return []Cmd{cmdOpenFile{Att: it.att, Save: save}}
}

// fileFetched says where a file went.
func (m *Model) fileFetched(r resFile) {
	switch {
	case r.Err != nil:
		m.notify(true, r.Name+": "+spoken(r.Err))
	case r.Opened != "":
		m.notify(false, "opened "+r.Name+" ("+r.Opened+")")
	case r.Why != "":
		m.notify(true, r.Why+": saved "+r.Name+" to "+r.Path)
	default:
		m.notify(false, "saved "+r.Name+" to "+r.Path)
	}
}

// drawFiles draws the box of files over the screen: each file's name,
// type and size, and who sent it when.
func drawFiles(scr tcell.Screen, m *Model) {
	f := m.files
	w, rows := min(m.Width, 100), min(len(f.items), m.Height-4)
	if w < 8 || rows < 1 {
		return
	}
	x0, y0 := (m.Width-w)/2, 1
	box(scr, x0, y0, w, rows+2, stBase)
	put(scr, x0+2, y0, w-4, fmt.Sprintf(" files · %d · ↑↓ Enter opens · s saves · Esc ", len(f.items)), stBold)
	first := max(f.sel-rows+1, 0)
	for i := 0; i < rows && first+i < len(f.items); i++ {
		it := f.items[first+i]
		st, dim := stBase, stDim
		if first+i == f.sel {
			st, dim = stSelected, stSelected
		}
		y := y0 + 1 + i
		fill(scr, x0+1, y, w-2, st)
		x, left := x0+2, w-4
		for _, sp := range []span{
			{"📎 " + it.att.Name, st.Bold(true)},
			{" · " + fileType(it.att) + " · " + humanSize(it.att.Size), st},
			{"  " + it.author + " · " + it.at.Local().Format("Jan 2 15:04"), dim},
		} {
			put(scr, x, y, left, sp.text, sp.style)
			x, left = x+width(sp.text), left-width(sp.text)
		}
	}
}

// fileRun runs the Cmds of files; it says whether cmd was one.
func (a *App) fileRun(cmd Cmd) bool {
	switch cmd := cmd.(type) {
	case cmdAttach:
		a.upload(cmd)
	case cmdSendFiles:
		a.sendFiles(cmd)
	case cmdOpenFile:
		a.goRun(func() {
			opener, name := findOpener()
			a.post(a.openFile(cmd, opener, name, saveDir()))
		})
	default:
		return false
	}
	return true
}

// openFile opens a file with opener (named name; "" when there is none)
// or saves it in dir: to save, when there is no opener or it fails.
func (a *App) openFile(cmd cmdOpenFile, opener, name, dir string) resFile {
	r := resFile{Name: cmd.Att.Name}
	switch {
	case cmd.Save:
	case opener == "" && name == "":
		r.Why = "no opener on " + runtime.GOOS
	case opener == "":
		r.Why = "no " + name + " here"
	default:
		path, err := openPath(cmd.Att)
		if err == nil && !cached(path, cmd.Att) {
			err = fetchBlob(a.ctx, a.c, cmd.Att, path)
		}
		if err != nil {
			r.Err = err
			return r
		}
		if err := runOpener(a.ctx, opener, path); err != nil {
			r.Why = name + " failed (" + err.Error() + ")"
			break
		}
		r.Path, r.Opened = path, name
		return r
	}
	r.Path, r.Err = uniquePath(dir, safeName(cmd.Att))
	if r.Err == nil {
		r.Err = fetchBlob(a.ctx, a.c, cmd.Att, r.Path)
	}
	return r
}

// findOpener is the system's opener of files: its path, and its name
// ("" for both on a system that has none albedo knows).
func findOpener() (path, name string) {
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows", "plan9", "js", "wasip1":
		return "", ""
	default:
		name = "xdg-open"
	}
	path, _ = exec.LookPath(name)
	return path, name
}

// runOpener opens path with opener, its output kept off the screen. One
// that fails within openerWait failed; one still running then has opened
// the file (and may stay, as a viewer).
func runOpener(ctx context.Context, opener, path string) error {
	cmd := exec.Command(opener, path) // no ctx: a viewer outlives the terminal
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(openerWait)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// saveDir is where s saves: ~/Downloads when it exists, else the working
// directory.
func saveDir() string {
	if home, err := os.UserHomeDir(); err == nil {
		d := filepath.Join(home, "Downloads")
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "."
}

// safeName is a file's name as a name in a directory: the daemon checks
// names, but a file is written here under it.
func safeName(a wire.Attachment) string {
	n := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, a.Name)
	if n == "" || n == "." || n == ".." {
		n = a.SHA256[:min(12, len(a.SHA256))]
	}
	return n
}

// openPath is where a file to open goes: a directory of albedo's under
// the system's temporary one, named by the file's hash and name, so that
// opening it again reads it from there. The directory must be this
// user's alone: another may not put files where the opener reads them.
func openPath(a wire.Attachment) (string, error) {
	if !wire.ValidSHA256(a.SHA256) {
		return "", fmt.Errorf("not a file's sha256: %q", a.SHA256)
	}
	dir := filepath.Join(os.TempDir(), "albedo-files")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() || runtime.GOOS != "windows" && fi.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("%s is not a directory of this user's alone", dir)
	}
	return filepath.Join(dir, a.SHA256[:12]+"-"+safeName(a)), nil
}

// cached says whether path holds the file already: it was opened before.
func cached(path string, a wire.Attachment) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular() && a.Size > 0 && fi.Size() == a.Size
}

// uniquePath is name in dir, or "name (2).ext" and so on when a file has
// that name already.
func uniquePath(dir, name string) (string, error) {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 1; i < 1000; i++ {
		p := filepath.Join(dir, name)
		if i > 1 {
			p = filepath.Join(dir, fmt.Sprintf("%s (%d)%s", stem, i, ext))
		}
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s has %s and 998 more of its name", dir, name)
}

// fetchBlob downloads a file to path: into a temporary file beside it,
// checked against its sha256, then renamed, so that path never holds
// part of a file, or another.
func fetchBlob(ctx context.Context, c *client.Client, a wire.Attachment, path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".albedo-*")
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = c.GetBlob(ctx, a.SHA256, io.MultiWriter(f, h))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && hex.EncodeToString(h.Sum(nil)) != a.SHA256 {
		err = fmt.Errorf("its bytes do not match its sha256")
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
