package term

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// Options configure Run.
type Options struct {
	Client *client.Client
	// Screen to draw on, initialised; nil opens the terminal. Tests pass a
	// simulation screen, of the size they set (Init would reset it).
	Screen tcell.Screen
	// Stream tunes the connection (backoff, budget). The default budget is
	// 30 s, after which the status bar offers a retry.
	Stream client.StreamOptions
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnDraw, if set, is called on the UI goroutine after every frame is
	// shown: tests wait on it instead of sleeping.
	OnDraw func()
	// ReadOnly is for a viewer's token (albedo attach): the sidebar holds
	// the one session it may read, and nothing is sent or changed.
	ReadOnly bool
}

// Messages into the loop from other goroutines.
type (
	itemMsg struct {
		session string
		item    client.Item
		sub     *client.Subscription // items of a subscription since closed are dropped
	}
	feedMsg struct {
		update client.FeedUpdate
		gen    int
	}
	feedPageMsg struct {
		page wire.FeedReply
		err  error
	}
	subEndMsg struct {
		session string
		err     error
	}
	stateMsg struct {
		state client.State
		gen   int // the stream's: a closed stream's last words are not news
	}
	homeChangedMsg struct{} // a daemon started, stopped or was configured
)

// App runs the terminal client. Its fields belong to the loop goroutine
// unless noted.
type App struct {
	opts Options
	c    *client.Client
	scr  tcell.Screen
	m    *Model

	ctx    context.Context
	cancel context.CancelFunc
	msgs   chan any       // from every other goroutine into the loop
	wg     sync.WaitGroup // the goroutines Run started

	lister  *client.Client // c, passive: lists sessions without ever starting a daemon
	st      *client.Stream
	subs    map[string]*client.Subscription // sessions subscribed on st
	watched string                          // the one of them watched: the focused session

	lastKey     time.Time // when the last screen event came, to notice a stalled paste
	waitingHome bool      // a goroutine waits for the home to change (after Unavailable)
	gen         int       // counts the streams opened; stateMsg carries its stream's
}

// Run opens the terminal client and returns when the user quits or ctx
// ends. The terminal is restored on every way out, a panic included.
func Run(ctx context.Context, opts Options) (err error) {
	scr := opts.Screen
	if scr == nil {
		if scr, err = tcell.NewScreen(); err != nil {
			return fmt.Errorf("open terminal: %w", err)
		}
		if err := scr.Init(); err != nil {
			return fmt.Errorf("init terminal: %w", err)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			scr.Fini()
			panic(r)
		}
		scr.Fini()
	}()
	scr.EnableMouse(tcell.MouseButtonEvents)
	scr.EnablePaste()
	scr.EnableFocus()
	a := newApp(ctx, opts, scr)
	defer a.stop()
	return a.loop()
}

func newApp(ctx context.Context, opts Options, scr tcell.Screen) *App {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Stream.Budget == 0 {
		opts.Stream.Budget = 30 * time.Second
	}
	w, h := scr.Size()
	m := NewModel(w, h)
	m.Now = opts.Now
	m.ReadOnly = opts.ReadOnly
	if opts.Client != nil {
		m.Server = opts.Client.URL()
	}
	a := &App{opts: opts, c: opts.Client, scr: scr, m: m, msgs: make(chan any, 1024), subs: map[string]*client.Subscription{}}
	a.ctx, a.cancel = context.WithCancel(ctx)
	a.lister = opts.Client
	if opts.Client != nil {
		if p, err := opts.Client.Passive(); err == nil {
			a.lister = p
		}
	}
	return a
}

func (a *App) stop() {
	a.cancel()
	if a.st != nil {
		a.st.Close()
	}
	a.wg.Wait()
}

// post hands a message to the loop; it gives up when the app stops.
func (a *App) post(msg any) {
	select {
	case a.msgs <- msg:
	case <-a.ctx.Done():
	}
}

func (a *App) goRun(fn func()) {
	a.wg.Add(1)
	go func() { defer a.wg.Done(); fn() }()
}

func (a *App) openStream() {
	so := a.opts.Stream
	a.gen++
	gen := a.gen
	so.OnState = func(s client.State) { a.post(stateMsg{s, gen}) }
	if !a.m.ReadOnly {
		// Called from the stream's reader: it must not wait for the loop.
		so.OnFeed = func(u client.FeedUpdate) { a.post(feedMsg{u, gen}) }
		so.FeedPage = feedFirstPage
	}
	a.st = a.c.Stream(so)
	for id := range a.subs {
		a.m.Unsubscribed(id)
	}
	a.subs, a.watched = map[string]*client.Subscription{}, ""
	a.syncSubs()
	// The list is read once the stream connects (message), not here: the
	// stream alone decides whether to start a daemon, and an HTTP call
	// racing it would start a second one.
}

// loop is the UI goroutine: it owns the model and the screen.
func (a *App) loop() error {
	screenEvents := make(chan tcell.Event, 64)
	quit := make(chan struct{})
	defer close(quit)
	go a.scr.ChannelEvents(screenEvents, quit)
	a.openStream()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	// A person's sidebar follows the daemon's sessions feed; a viewer's,
	// which may not follow it, is read now and then (listSessions).
	refresh := time.NewTicker(refreshEvery)
	defer refresh.Stop()
	a.draw()
	for !a.m.Quit {
		select {
		case <-a.ctx.Done():
			return nil
		case ev, ok := <-screenEvents:
			if !ok {
				return nil
			}
			a.screenEvent(ev)
			if !a.drainScreen(screenEvents, tick.C) {
				return nil
			}
		case msg := <-a.msgs:
			a.message(msg)
			// Take what else is waiting before drawing once.
			for n := 0; n < 256; n++ {
				select {
				case msg := <-a.msgs:
					a.message(msg)
					continue
				default:
				}
				break
			}
		case <-tick.C:
			a.run(a.m.MarkRead())
			if !a.m.Tick() {
				continue
			}
		case <-refresh.C:
			a.listSessions()
			continue
		}
		a.draw()
	}
	return nil
}

// refreshEvery is how often a viewer's sidebar is read again.
const refreshEvery = 30 * time.Second

// feedFirstPage is how many sessions the sidebar gets at first; more come
// as the person scrolls to its end (WantMore).
const feedFirstPage = 200

// listSessions reads a viewer's list of sessions, when connected (a
// person's comes from the feed); a failed read is not news (the status
// bar has the connection).
func (a *App) listSessions() {
	if a.m.Conn.Phase != client.Connected || !a.m.ReadOnly {
		return
	}
	a.goRun(func() {
		if list, err := a.lister.Sessions(a.ctx); err == nil {
			a.post(resSessions{List: list})
		}
	})
}

// drainScreen applies what else the terminal has sent (keys typed ahead, a
// paste) before the loop draws once. Inside a bracketed paste it waits for
// the rest, so a paste of any length lands in one frame; a tick still
// draws one whose keys stopped coming for a second. It returns false when the screen's
// events end.
func (a *App) drainScreen(events <-chan tcell.Event, tick <-chan time.Time) bool {
	for n := 0; n < 1<<16 && !a.m.Quit; n++ {
		var ev tcell.Event
		var ok bool
		if a.m.pasting {
			select {
			case ev, ok = <-events:
			case <-tick:
				if time.Since(a.lastKey) > time.Second {
					return true
				}
				continue
			case <-a.ctx.Done():
				return true
			}
		} else {
			select {
			case ev, ok = <-events:
			default:
				return true
			}
		}
		if !ok {
			return false
		}
		a.lastKey = time.Now()
		a.screenEvent(ev)
	}
	return true
}

func (a *App) draw() {
	Draw(a.scr, a.m)
	a.scr.Show()
	if a.opts.OnDraw != nil {
		a.opts.OnDraw()
	}
}

func (a *App) screenEvent(ev tcell.Event) {
	switch ev := ev.(type) {
	case *tcell.EventResize:
		a.m.Resize(ev.Size())
		a.scr.Sync()
	case *tcell.EventKey:
		a.run(a.m.Key(ev))
		a.syncSubs()
		a.morePages()
	case *tcell.EventMouse:
		a.run(a.m.Mouse(ev))
	case *tcell.EventPaste:
		a.run(a.m.Paste(ev.Start()))
	case *tcell.EventFocus:
		a.m.TermFocused = ev.Focused
	}
}

func (a *App) message(msg any) {
	switch msg := msg.(type) {
	case itemMsg:
		switch {
		case a.subs[msg.session] == msg.sub:
			a.run(a.m.Item(msg.session, msg.item))
			if a.m.session(msg.session) == nil {
				a.syncSubs() // it left the sidebar: deleted, or access removed (gone.go)
			}
		case msg.item.Op == wire.PushReset && a.m.session(msg.session) == nil:
			a.m.lostWhy(msg.session, msg.item.Reset.Reason) // the feed took it away first
		}
	case feedMsg:
		if msg.gen == a.gen {
			a.run(a.m.Feed(msg.update))
			a.syncSubs()
		}
	case feedPageMsg:
		if msg.err != nil {
			a.m.feedPaging = false // asked again when the focus moves
			return
		}
		a.m.FeedPage(msg.page)
	case subEndMsg:
		a.m.SubEnded(msg.session, msg.err)
		if a.m.session(msg.session) == nil { // it left the sidebar
			delete(a.subs, msg.session)
			a.syncSubs()
		}
	case stateMsg:
		if msg.gen != a.gen {
			// A stream replaced by r says it has ended; the new one
			// speaks for the connection now. Taking this as news would
			// show a stale state, and wait to retry what already was.
			return
		}
		a.m.ConnState(msg.state)
		if msg.state.Phase == client.Unavailable && !a.waitingHome {
			// The stream has ended; try again by itself when a daemon
			// starts (or the home otherwise changes), as well as on r.
			a.waitingHome = true
			st := a.st
			a.goRun(func() {
				if st.WaitHomeChange(a.ctx) == nil {
					a.post(homeChangedMsg{})
				}
			})
		}
		if msg.state.Phase == client.Connected && a.m.ReadOnly {
			// At first, and back after a loss: others may have made
			// sessions meanwhile.
			a.goRun(func() {
				list, err := a.lister.Sessions(a.ctx)
				if errors.Is(err, client.ErrUnavailable) {
					return // gone again already: the status bar says so
				}
				a.post(resSessions{List: list, Err: err})
			})
		}
	case homeChangedMsg:
		a.waitingHome = false
		if a.m.Conn.Phase == client.Unavailable {
			a.run([]Cmd{cmdRetry{}})
		}
	default:
		a.run(a.m.Result(msg))
		a.syncSubs()
	}
}

// syncSubs keeps on the stream the sessions Recent names (the focused one
// and the few looked at before it; a viewer's one session), and no other:
// the rest of the sidebar comes from the feed. They are subscribed in the
// background: only the focused one is watched (syncWatch), so a session's
// viewers are the people looking at it.
func (a *App) syncSubs() {
	if a.st == nil {
		return // a test's App with no stream
	}
	if id, ok := a.m.WantInfo(); ok { // the meter's window and cost to date
		a.treeRun(cmdInfo{Session: id})
	}
	a.run(a.m.WantVersions()) // the forks its messages' versions are
	a.run(a.m.WantModels())   // the models /model may name
	want := a.m.Recent()
	if a.m.ReadOnly {
		want = want[:0]
		for _, s := range a.m.Sessions {
			want = append(want, s.ID)
		}
	}
	for id, sub := range a.subs {
		if !slices.Contains(want, id) {
			sub.Close()
			delete(a.subs, id)
			if a.watched == id {
				a.watched = ""
			}
			a.m.Unsubscribed(id)
		}
	}
	for _, id := range want {
		if a.subs[id] == nil {
			a.subscribe(id)
		}
	}
	a.syncWatch()
}

// subscribe puts a session on the stream, in the background, and relays
// what comes to the loop.
func (a *App) subscribe(id string) {
	sub := a.st.SubscribeBackground(id, client.Cursor{})
	a.subs[id] = sub
	a.m.Subscribed(id)
	a.goRun(func() {
		for {
			it, err := sub.Next(a.ctx)
			if err != nil {
				if a.ctx.Err() == nil && !errors.Is(err, client.ErrStreamClosed) {
					a.post(subEndMsg{id, err})
				}
				return
			}
			a.post(itemMsg{id, it, sub})
		}
	})
}

// morePages reads the feed's next page when the focus nears the end of
// the sidebar.
func (a *App) morePages() {
	cursor, ok := a.m.WantMore()
	if !ok {
		return
	}
	a.goRun(func() {
		ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
		defer cancel()
		p, err := a.st.FeedPage(ctx, cursor, feedFirstPage)
		a.post(feedPageMsg{p, err})
	})
}

// syncWatch watches the focused session and no other.
func (a *App) syncWatch() {
	focused := ""
	if s := a.m.Focused(); s != nil {
		focused = s.ID
	}
	if focused == a.watched {
		return
	}
	if sub := a.subs[a.watched]; sub != nil {
		sub.Watch(false)
	}
	a.watched = ""
	if sub := a.subs[focused]; sub != nil {
		sub.Watch(true)
		a.watched = focused
	}
}

// run executes Cmds off the loop; each posts its result back.
func (a *App) run(cmds []Cmd) {
	for _, cmd := range cmds {
		switch cmd := cmd.(type) {
		case cmdSend:
			a.sendText(cmd)
		case cmdInterrupt:
			a.goRun(func() {
				_, err := a.c.Interrupt(a.ctx, cmd.Session)
				a.post(resInterrupted{Session: cmd.Session, Err: err})
			})
		case cmdPatch:
			a.goRun(func() { a.post(a.patch(cmd)) })
		case cmdNewSession:
			a.goRun(func() {
				s, err := a.c.NewSession(a.ctx, wire.SessionCreate{Provider: cmd.Provider})
				a.post(resCreated{Session: s, Then: cmd.Then, Err: err})
			})
		case cmdDelete:
			a.goRun(func() {
				err := a.c.DeleteSession(a.ctx, cmd.Session)
				a.post(resDeleted{Session: cmd.Session, Err: err})
			})
		case cmdTyped:
			if sub := a.subs[cmd.Session]; sub != nil {
				sub.Typed()
			}
		case cmdRedraw:
			a.scr.Sync()
		case cmdMouse:
			if cmd.On {
				a.scr.EnableMouse(tcell.MouseButtonEvents)
			} else {
				a.scr.DisableMouse()
			}
		case cmdCopy:
			a.copyToClipboard(cmd.Text)
		case cmdNotify:
			_ = a.scr.Beep()
			if tty, ok := a.scr.Tty(); ok && tty != nil {
				_, _ = tty.Write([]byte(notification(cmd.Title, cmd.Body, inTmux())))
			}
		case cmdRetry:
			if a.st != nil {
				a.st.Close()
			}
			a.openStream()
		case cmdProviders:
			a.goRun(func() { a.post(a.providers()) })
		case cmdModels:
			a.goRun(func() {
				l, err := a.c.Models(a.ctx, cmd.Provider)
				a.post(resModels{Provider: cmd.Provider, List: l, Err: err})
			})
		case cmdRead:
			a.goRun(func() {
				_ = a.c.SetRead(a.ctx, cmd.Session, cmd.Offset) // said again with the next news
			})
		case cmdSearch:
			a.goRun(func() {
				res, err := a.c.Search(a.ctx, cmd.Query, "", "", 50)
				a.post(resSearch{Query: cmd.Query, Results: res, Err: err})
			})
		case cmdLoadOlder:
			a.goRun(func() {
				p, err := a.c.History(a.ctx, cmd.Session, 0, cmd.Before, 100)
				a.post(resOlder{Session: cmd.Session, Page: p, Err: err})
			})
		default:
			if !a.treeRun(cmd) && !a.fileRun(cmd) && !a.shareRun(cmd) && !a.versionsRun(cmd) && !a.archiveRun(cmd) && !a.continueRun(cmd) {
				a.toolRun(cmd)
			}
		}
	}
}

// providers lists what /new may name: the daemon's providers and bots.
func (a *App) providers() resProviders {
	var r resProviders
	r.List, r.Err = a.c.Providers(a.ctx)
	if r.Err == nil {
		var bots []client.Bot
		bots, r.Err = a.c.Bots(a.ctx)
		for _, b := range bots {
			r.Bots = append(r.Bots, b.Name)
		}
	}
	return r
}

// patch changes settings with the session's ETag; a stale ETag is retried
// once with a fresh one, and a second refusal is reported, not swallowed.
func (a *App) patch(cmd cmdPatch) resPatched {
	s, err := a.c.PatchSession(a.ctx, cmd.Session, cmd.ETag, cmd.Patch)
	if errors.Is(err, client.ErrStaleETag) {
		fresh, ferr := a.c.Session(a.ctx, cmd.Session)
		if ferr != nil {
			return resPatched{Err: ferr}
		}
		s, err = a.c.PatchSession(a.ctx, cmd.Session, fresh.ETag, cmd.Patch)
	}
	return resPatched{Session: s, Err: err}
}
