package hub

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"albedo/wire"
)

// BenchmarkQuietMessage: in a session that answers mentions only, watched
// by 1 000 cursors, a person's message that mentions no one against a
// bot's post: both are one message event and a receipt, with no turn.
// Reported as BenchmarkFanout reports.
func BenchmarkQuietMessage(b *testing.B) {
	for _, kind := range []string{"post", "quiet"} {
		b.Run(kind, func(b *testing.B) {
			h := newTestHub(b, Options{})
			s := mustCreate(b, h, "s")
			mentions := wire.RespondMentions
			if _, err := h.PatchSession(context.Background(), "s", s.ETag, wire.SessionPatch{Respond: &mentions}, "bench"); err != nil {
				b.Fatal(err)
			}
			fanout(b, h, s.Epoch, 1000, func(ctx context.Context) error {
				if kind == "post" {
					_, err := h.Post(ctx, "s", uuid.NewString(), "a word among people", "bot")
					return err
				}
				r, err := h.PutInput(ctx, "s", uuid.NewString(), "a word among people", wire.Author{Name: "ann", ID: "ann"})
				if err == nil && r.TurnID != "" {
					b.Fatalf("a quiet message started turn %s", r.TurnID)
				}
				return err
			})
		})
	}
}
