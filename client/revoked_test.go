package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"albedo/wire"
)

// A subscription whose access is taken back ends, as one to a deleted
// session does: the daemon's reset says revoked, nothing follows it, and
// Next says forbidden rather than waiting for events that will not come.
func TestARevokedSubscriptionEnds(t *testing.T) {
	_, url := inProcess(t, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	owner, err := New(Options{URL: url, Token: "owner-token"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.CreateSession(ctx, "s", wire.SessionCreate{}); err != nil {
		t.Fatal(err)
	}
	ann, err := owner.AddMember(ctx, "ann", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Grant(ctx, "s", "ann", wire.AccessRead); err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{URL: url, Token: ann.Token})
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stream(StreamOptions{})
	defer st.Close()
	sub := st.Subscribe("s", Cursor{})
	if it, err := sub.Next(ctx); err != nil || it.Op != wire.PushReset {
		t.Fatalf("the first push: %+v %v", it, err)
	}
	if err := owner.Ungrant(ctx, "s", "ann"); err != nil {
		t.Fatal(err)
	}
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			var werr *wire.Error
			if !errors.As(err, &werr) || werr.Code != wire.CodeForbidden {
				t.Fatalf("the subscription ended with %v, want forbidden", err)
			}
			return
		}
		if it.Op == wire.PushEvent {
			t.Fatalf("an event after the grant was taken back: %+v", it.Event)
		}
	}
}
