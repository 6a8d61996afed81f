package hub

import (
	"context"
	"testing"

	"albedo/hub/provider"
	"albedo/wire"
)

// recordProvider answers "ok" and hands each request's messages to seen.
type recordProvider struct{ seen chan []provider.Message }

func (recordProvider) Author(provider.Request) string { return "rec" }
func (p recordProvider) Stream(_ context.Context, req provider.Request, emit func(string)) error {
	p.seen <- req.Messages
	emit("ok")
	return nil
}

// A model is told which inputs are a guest's: a guest picks their own
// name, and one named as someone of the home would pass for them.
func TestModelIsToldWhoIsAGuest(t *testing.T) {
	t.Parallel()
	seen := make(chan []provider.Message, 2)
	reg, _ := provider.NewRegistry(provider.Config{}, nil)
	reg.Register("rec", recordProvider{seen})
	h := newTestHub(t, Options{Providers: reg})
	ctx := context.Background()
	if _, _, err := h.CreateSession(ctx, "s", wire.SessionCreate{Provider: "rec"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000001", "hi", wire.Author{Name: "ann", ID: "m-ann"}); err != nil {
		t.Fatal(err)
	}
	<-seen
	if _, err := h.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000002", "hello", wire.Author{Name: "ann", ID: "guest:tok1:ann"}); err != nil {
		t.Fatal(err)
	}
	msgs := <-seen
	var authors []string
	for _, m := range msgs {
		if m.Role == wire.RoleUser {
			authors = append(authors, m.Author)
		}
	}
	if len(authors) != 2 || authors[0] != "ann" || authors[1] != "ann (guest)" {
		t.Fatalf("the model was told the inputs' authors %q, want ann then ann (guest)", authors)
	}
}
