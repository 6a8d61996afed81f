package hub

import (
	"context"
	"strings"
	"testing"

	"albedo/hub/provider"
	"albedo/wire"
)

// sayer answers with its name and what it was told last, by whom.
type sayer struct{ name string }

func (s sayer) Author(provider.Request) string { return s.name }

func (s sayer) Stream(_ context.Context, req provider.Request, emit func(string)) error {
	last := req.Messages[len(req.Messages)-1]
	emit(s.name + " heard " + last.Author + ": " + last.Text)
	return nil
}

// In a cluster, the turns one message's mentions start run on the node
// that holds the session's lease, one after another, each a step of the
// input read from the store: the second participant hears the first.
func TestAMessagesParticipantsAnswerInOrderInACluster(t *testing.T) {
	t.Parallel()
	reg, _ := provider.NewRegistry(provider.Config{}, nil)
	reg.Register("one", sayer{"one"})
	reg.Register("two", sayer{"two"})
	a, b := memoryPair(t, false, func(string) Options { return Options{Providers: reg} })
	ctx := context.Background()
	s, _, err := a.CreateSession(ctx, "s", wire.SessionCreate{Provider: "one"})
	if err != nil {
		t.Fatal(err)
	}
	two := []string{"two"}
	if s, err = b.PatchSession(ctx, "s", s.ETag, wire.SessionPatch{Participants: &two}, "ann"); err != nil {
		t.Fatal(err)
	}
	watcher := newReader(t, a.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
	zero := int64(0)
	subscribe(watcher.c, wire.Sub{Session: "s", After: &zero, Epoch: s.Epoch})
	if _, err := b.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000001", "@two @one hello", wire.Author{Name: "ann", ID: "ann"}); err != nil {
		t.Fatal(err)
	}
	var replies []string
	for len(replies) < 2 {
		f := watcher.next(t, func(f wire.Frame) bool {
			return isEvent(f) && f.Event.Type == wire.EventMessage && f.Event.Role == wire.RoleAssistant
		})
		replies = append(replies, f.Event.AuthorID+" | "+f.Event.Text)
	}
	want := "provider:two | two heard ann: @two @one hello\nprovider:one | one heard two: two heard ann: @two @one hello"
	if got := strings.Join(replies, "\n"); got != want {
		t.Fatalf("the replies:\n%s\nwant:\n%s", got, want)
	}
	in, err := a.Input(ctx, "s", "0190a8a0-0000-7000-8000-000000000001")
	if err != nil || in.Delivery != wire.DeliveryDone {
		t.Fatalf("the input after its last step: %+v %v", in, err)
	}
}
