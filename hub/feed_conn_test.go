package hub

import (
	"slices"
	"testing"

	"albedo/wire"
)

// A push names each session gone once: a deleted one as deleted whatever
// else befell it, one lost from sight as revoked, and one seen again by
// the same push (a grant given back) not at all.
func TestFeedGoneSaysWhy(t *testing.T) {
	t.Parallel()
	lost := []string{"a", "b", "a", "c"}
	deleted := []string{"b", "d"}
	items := []wire.FeedItem{{ID: "c"}}
	gone, revoked := feedGone(lost, deleted, items)
	if !slices.Equal(gone, []string{"b", "d", "a"}) || !slices.Equal(revoked, []string{"a"}) {
		t.Fatalf("gone %v, revoked %v", gone, revoked)
	}
	if gone, revoked := feedGone(nil, nil, nil); gone != nil || revoked != nil {
		t.Fatalf("nothing gone: %v %v", gone, revoked)
	}
}
