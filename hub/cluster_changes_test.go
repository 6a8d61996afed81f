package hub

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"albedo/db/pgtest"
	"albedo/wire"
)

// startedPair is clusterPair with both nodes started, so that each
// follows the store's changes (followChanges); it returns the database's
// URL too, and what each node's hook was told to close.
func startedPair(t *testing.T) (url string, a, b *Hub, bClosed *closedLog) {
	t.Helper()
	url = pgtest.Shared(t).Database(t)
	a, b = openTestHub(t, url, Options{Node: "a"}), openTestHub(t, url, Options{Node: "b"})
	bClosed = &closedLog{}
	b.OnTokensChanged(bClosed.add)
	for _, h := range []*Hub{a, b} {
		if err := h.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return url, a, b, bClosed
}

// closedLog records what a hub's OnTokensChanged was told.
type closedLog struct {
	mu                sync.Mutex
	revoked, narrowed []string
}

func (l *closedLog) add(revoked, narrowed []string) {
	l.mu.Lock()
	l.revoked = append(l.revoked, revoked...)
	l.narrowed = append(l.narrowed, narrowed...)
	l.mu.Unlock()
}

func (l *closedLog) has(revoked string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.revoked, revoked)
}

// within waits up to d for ok, checking every 10 ms.
func within(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Without NATS, what one node (or a command on the store, as `albedo
// tokens remove --db` is) revokes is refused on the other within 5 s, and
// the other is told to close its connections of it.
func TestRevocationsReachEveryNodeWithoutNATS(t *testing.T) {
	t.Parallel()
	url, a, b, closed := startedPair(t)
	ctx := context.Background()
	mustCreate(t, a, "s")

	bot, err := a.AddBot(ctx, "helper", nil)
	if err != nil {
		t.Fatal(err)
	}
	link, _, err := a.Share(ctx, "s", wire.LinkCreate{Label: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := openTestHub(t, url, Options{Node: "albedo-tokens"}) // as the tokens command opens the store
	owner, err := cmd.AddOwner(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for name, tok := range map[string]string{"bot": bot, "link": link, "owner": owner} {
		p, ok := b.Authenticate(tok)
		if !ok {
			t.Fatalf("node b refused the %s token made elsewhere", name)
		}
		ids[name] = p.TokenID
	}

	if _, err := a.RemoveBot(ctx, "helper"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Unlink(ctx, "s", "demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.RemoveOwner(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{"bot": bot, "link": link, "owner": owner} {
		within(t, 5*time.Second, "node b refuses the revoked "+name+" token", func() bool {
			_, ok := b.Authenticate(tok)
			return !ok && closed.has(ids[name])
		})
		if name == "owner" {
			if _, ok := a.Authenticate(tok); ok {
				t.Fatal("node a accepts the owner token the command revoked")
			}
		}
	}
}

// A session deleted and made again on one node: the other ends its
// subscribers' view of the old one (reset, deleted) and refuses the old
// session's link, which must not read the new session.
func TestDeletedSessionEndsEverywhereWithoutNATS(t *testing.T) {
	t.Parallel()
	_, a, b, _ := startedPair(t)
	ctx := context.Background()
	mustCreate(t, a, "s")
	link, _, err := a.Share(ctx, "s", wire.LinkCreate{})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := b.Authenticate(link)
	if !ok {
		t.Fatal("node b refused the link")
	}
	r := newReader(t, b.Connect(ConnInfo{Name: p.Name, Role: p.Role, AuthorID: p.AuthorID()}))
	subscribe(r.c, wire.Sub{Session: "s"})
	r.next(t, func(f wire.Frame) bool { return f.IsReply() && f.Reply.OK })

	if _, _, err := a.DeleteSession(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, a, "s")
	f := r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushReset && f.Reset.Reason != wire.ResetNew })
	if f.Reset.Reason != wire.ResetDeleted {
		t.Fatalf("reset %+v, want reason deleted", *f.Reset)
	}
	within(t, 5*time.Second, "node b refuses the deleted session's link", func() bool {
		_, ok := b.Authenticate(link)
		return !ok
	})
}

// A grant taken back on one node cuts the member's subscription on the
// other (reset, revoked); a grant given there is in force on the other.
func TestGrantsReachEveryNodeWithoutNATS(t *testing.T) {
	t.Parallel()
	_, a, b, _ := startedPair(t)
	ctx := context.Background()
	mustCreate(t, a, "s")
	_, m, err := a.AddMember(ctx, "ann", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Grant(ctx, "s", "ann", wire.AccessRead); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, "node b sees ann's grant", func() bool { return b.tokens.Access(m.ID, "s") == wire.AccessRead })
	r := newReader(t, b.Connect(ConnInfo{Name: "ann", Role: wire.TokenMember, AuthorID: m.ID}))
	subscribe(r.c, wire.Sub{Session: "s"})
	r.next(t, func(f wire.Frame) bool { return f.IsReply() && f.Reply.OK })

	if err := a.Ungrant(ctx, "s", "ann"); err != nil {
		t.Fatal(err)
	}
	f := r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushReset && f.Reset.Reason != wire.ResetNew })
	if f.Reset.Reason != wire.ResetRevoked {
		t.Fatalf("reset %+v, want reason revoked", *f.Reset)
	}
	if got := b.tokens.Access(m.ID, "s"); got != "" {
		t.Fatalf("node b still has ann's access %q", got)
	}
}

// A node further behind than the store keeps changes reads its tokens
// and grants again, and closes what was revoked meanwhile.
func TestANodeFarBehindReadsEverythingAgain(t *testing.T) {
	t.Parallel()
	a, b := clusterPair(t) // not started: b follows nothing by itself
	ctx := context.Background()
	closed := &closedLog{}
	b.OnTokensChanged(closed.add)
	bot, err := a.AddBot(ctx, "helper", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := b.Authenticate(bot)
	if !ok {
		t.Fatal("node b refused the bot")
	}
	if _, err := a.RemoveBot(ctx, "helper"); err != nil {
		t.Fatal(err)
	}
	// From before the first change the store keeps, as a node that was
	// away while the older ones were pruned.
	if got := b.catchUpChanges(-1); got < 1 {
		t.Fatalf("caught up to %d", got)
	}
	if _, ok := b.Authenticate(bot); ok {
		t.Fatal("node b accepts the revoked bot after reading everything again")
	}
	if !closed.has(p.TokenID) {
		t.Fatal("node b was not told to close the revoked bot's connections")
	}
}

// Many grants made on one node at once reach the other as they stand
// after the last of them: each pair's access, read in one query a page
// of changes, a grant given then taken back included.
func TestManyGrantsReachEveryNodeWithoutNATS(t *testing.T) {
	t.Parallel()
	_, a, b, _ := startedPair(t)
	ctx := context.Background()
	_, ann, err := a.AddMember(ctx, "ann", false)
	if err != nil {
		t.Fatal(err)
	}
	_, bob, err := a.AddMember(ctx, "bob", false)
	if err != nil {
		t.Fatal(err)
	}
	const sessions = 40
	want := map[[2]string]wire.Access{}
	for i := range sessions {
		s := fmt.Sprintf("s%02d", i)
		mustCreate(t, a, s)
		if err := a.Grant(ctx, s, "ann", wire.AccessRead); err != nil {
			t.Fatal(err)
		}
		want[[2]string{ann.ID, s}] = wire.AccessRead
		if i%3 == 0 {
			if err := a.Grant(ctx, s, "bob", wire.AccessWrite); err != nil {
				t.Fatal(err)
			}
			want[[2]string{bob.ID, s}] = wire.AccessWrite
		}
	}
	if err := a.Ungrant(ctx, "s00", "ann"); err != nil {
		t.Fatal(err)
	}
	want[[2]string{ann.ID, "s00"}] = ""
	within(t, 10*time.Second, "node b has every grant as node a left it", func() bool {
		for k, w := range want {
			if b.tokens.Access(k[0], k[1]) != w {
				return false
			}
		}
		return true
	})
	if got := b.tokens.Access(bob.ID, "s01"); got != "" {
		t.Fatalf("bob has %q on s01, granted nothing there", got)
	}
}
