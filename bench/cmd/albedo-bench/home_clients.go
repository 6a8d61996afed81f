package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/term"
	"albedo/wire"
)

// homeClients runs the real terminal on a simulated screen until it draws
// the newest session's last message.
func homeClients(ctx context.Context, a *albedoTarget, newest string, out map[string]float64) error {
	var ts []time.Duration
	for range 3 {
		c, err := client.New(client.Options{Home: a.home})
		if err != nil {
			return err
		}
		scr := tcell.NewSimulationScreen("UTF-8")
		if err := scr.Init(); err != nil {
			return err
		}
		scr.SetSize(140, 40)
		shown := make(chan struct{}, 1)
		rctx, cancel := context.WithCancel(ctx)
		t0 := time.Now()
		done := make(chan error, 1)
		go func() {
			done <- term.Run(rctx, term.Options{Client: c, Screen: scr, OnDraw: func() {
				if strings.Contains(screenText(scr), "the newest post") {
					select {
					case shown <- struct{}{}:
					default:
					}
				}
			}})
		}()
		select {
		case <-shown:
			ts = append(ts, time.Since(t0))
		case err := <-done:
			cancel()
			return fmt.Errorf("the terminal ended: %v", err)
		case <-time.After(20 * time.Second):
			cancel()
			return fmt.Errorf("the terminal never drew the newest session")
		}
		cancel()
		<-done
	}
	out["terminal ms"] = medianMS(ts)
	return nil
}

// runTerminal runs the real terminal on a simulated screen, open on the
// newest session, until the returned func stops it.
func runTerminal(ctx context.Context, a *albedoTarget) (func(), error) {
	c, err := client.New(client.Options{Home: a.home})
	if err != nil {
		return nil, err
	}
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		return nil, err
	}
	scr.SetSize(140, 40)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	shown := make(chan struct{}, 1)
	go func() {
		done <- term.Run(rctx, term.Options{Client: c, Screen: scr, OnDraw: func() {
			select {
			case shown <- struct{}{}:
			default:
			}
		}})
	}()
	select {
	case <-shown:
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("the terminal ended: %v", err)
	}
	return func() { cancel(); <-done }, nil
}

// screenText is what a simulated screen shows.
func screenText(scr tcell.SimulationScreen) string {
	cells, w, _ := scr.GetContents()
	var b strings.Builder
	for i, c := range cells {
		if i > 0 && i%w == 0 {
			b.WriteByte('\n')
		}
		if len(c.Runes) > 0 {
			b.WriteRune(c.Runes[0])
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// homePage opens the owner's page on the newest session in headless
// Chromium until it draws its last message, and reads its JS heap.
func homePage(ctx context.Context, a *albedoTarget, chromium, newest string, out map[string]float64) error {
	link, err := exec.CommandContext(ctx, a.bin, "--home", a.home, "open", "--print", newest).Output()
	if err != nil {
		return fmt.Errorf("albedo open --print: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(link)), "\n")
	dir, err := os.MkdirTemp("", "albedo-bench-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	actx, cancelA := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("enable-precise-memory-info", true), chromedp.WindowSize(1200, 900))
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	if err := chromedp.Do(bctx); err != nil {
		return fmt.Errorf("start Chromium: %w", err)
	}
	drawn := fmt.Sprintf(`document.querySelector('#title')?.textContent === %q && document.querySelector('#transcript').innerText.includes('the newest post') && document.querySelectorAll('#sessions li').length >= 200`, "home "+newest)
	t0 := time.Now()
	if err := chromedp.Do(bctx, chromedp.Navigate(lines[len(lines)-1])); err != nil {
		return err
	}
	if _, err := chromedp.Run(bctx, chromedp.Poll[chromedp.Void](drawn, chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		return fmt.Errorf("the page never drew the newest session: %w", err)
	}
	out["page ms"] = float64(time.Since(t0).Microseconds()) / 1000
	used, err := chromedp.Run(bctx, chromedp.Evaluate[float64](`performance.memory.usedJSHeapSize`))
	if err != nil {
		return err
	}
	out["page heap MiB"] = used / (1 << 20)
	return nil
}

// homeReattach SIGKILLs the daemon and starts it again, and times a
// client that follows the feed and shows the newest session until it has
// a message posted there after the restart.
func homeReattach(ctx context.Context, a *albedoTarget, newest string, out map[string]float64) error {
	c, err := client.New(client.Options{Home: a.home})
	if err != nil {
		return err
	}
	var fed atomic.Bool
	st := c.Stream(client.StreamOptions{OnFeed: func(u client.FeedUpdate) { fed.Store(true) },
		Backoff: client.BackoffOptions{Cap: 250 * time.Millisecond}})
	defer st.Close()
	sub := st.Subscribe(newest, client.Cursor{})
	after := make(chan time.Time, 1)
	mark := "after the kill " + stamp()
	go func() {
		for {
			it, err := sub.Next(ctx)
			if err != nil {
				return
			}
			if it.Op == wire.PushEvent && it.Event.Text == mark {
				after <- time.Now()
				return
			}
		}
	}()
	for !fed.Load() || st.State().Phase != client.Connected {
		time.Sleep(10 * time.Millisecond) // a measurement's setup: the client has no event for "fed"
	}
	t0 := time.Now()
	if err := a.restart(ctx, true, 0); err != nil {
		return err
	}
	out["daemon back s"] = time.Since(t0).Seconds()
	if err := postTo(ctx, a, newest, mark); err != nil {
		return err
	}
	select {
	case at := <-after:
		out["reattach s"] = at.Sub(t0).Seconds()
	case <-time.After(30 * time.Second):
		return fmt.Errorf("the client never had the post after the kill")
	}
	return nil
}
