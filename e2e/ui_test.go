// The terminal client run in this process on a simulation screen
// (startUI), for the tests that need no real terminal.

package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"albedo/client"
	"albedo/term"

	"github.com/gdamore/tcell/v2"
)

// ui runs the terminal client on a simulation screen against a daemon.
type ui struct {
	t      *testing.T
	scr    tcell.SimulationScreen
	drawn  chan struct{}
	done   chan error
	cancel context.CancelFunc

	mu      sync.Mutex
	last    []string // the rows of the latest frame, copied on the UI goroutine
	history []string // every status bar drawn
}

func startUI(t *testing.T, c *client.Client, w, h int) *ui {
	t.Helper()
	return startUIWith(t, c, w, h, client.StreamOptions{Backoff: client.BackoffOptions{Cap: 300 * time.Millisecond}})
}

// startUIWith is startUI with the stream's options given.
func startUIWith(t *testing.T, c *client.Client, w, h int, so client.StreamOptions) *ui {
	t.Helper()
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		t.Fatal(err)
	}
	scr.SetSize(w, h)
	u := &ui{t: t, scr: scr, drawn: make(chan struct{}, 1), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	u.cancel = cancel
	go func() {
		u.done <- term.Run(ctx, term.Options{Client: c, Screen: scr, Stream: so,
			OnDraw: func() {
				// The screen's cells belong to the UI goroutine: copy them here.
				r := u.read()
				u.mu.Lock()
				u.last = r
				u.history = append(u.history, r[len(r)-1])
				u.mu.Unlock()
				select {
				case u.drawn <- struct{}{}:
				default:
				}
			}})
	}()
	t.Cleanup(u.stop)
	return u
}

// stop ends the terminal client and waits for it; safe to call twice.
func (u *ui) stop() {
	u.cancel()
	select {
	case err, ok := <-u.done:
		if ok && err != nil {
			u.t.Errorf("terminal client: %v", err)
		}
		if ok {
			close(u.done)
		}
	case <-time.After(10 * time.Second):
		u.t.Error("terminal client did not stop")
	}
}

// rows returns the latest frame.
func (u *ui) rows() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string{""}, u.last...)
}

// read copies the screen; only on the UI goroutine (OnDraw).
func (u *ui) read() []string {
	cells, w, h := u.scr.GetContents()
	out := make([]string, h)
	for y := range h {
		var b strings.Builder
		for x := range w {
			b.WriteString(string(cells[y*w+x].Runes))
		}
		out[y] = b.String()
	}
	return out
}

// waitFor waits, frame by frame, until the screen satisfies ok.
func (u *ui) waitFor(what string, ok func(screen string) bool) {
	u.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if s := strings.Join(u.rows(), "\n"); ok(s) {
			return
		}
		select {
		case <-u.drawn:
		case <-deadline:
			u.t.Fatalf("screen never showed %s:\n%s", what, strings.Join(u.rows(), "\n"))
		}
	}
}

func (u *ui) typeLine(s string) {
	for _, r := range s {
		u.scr.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
	u.scr.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
}

func has(sub string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, sub) }
}
