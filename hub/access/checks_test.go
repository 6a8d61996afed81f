package access

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// FuzzCanonicalUUID: CanonicalUUID accepts exactly the UUIDs written the
// one way uuid.UUID.String writes them, so no input can be named twice
// and none written that way is refused.
func FuzzCanonicalUUID(f *testing.F) {
	for _, s := range []string{"0190a8a0-0000-7000-8000-000000000001", "0190A8A0-0000-7000-8000-000000000001",
		"{0190a8a0-0000-7000-8000-000000000001}", "urn:uuid:0190a8a0-0000-7000-8000-000000000001",
		"0190a8a000007000800000000000000001", "", "0190a8a0-0000-7000-8000-00000000000g", "0190a8a0x0000-7000-8000-000000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := uuid.Parse(s)
		canonical := err == nil && u.String() == s
		if CanonicalUUID(s) != canonical {
			t.Fatalf("CanonicalUUID(%q) = %v; parsed and written again it is canonical: %v (%v)", s, !canonical, canonical, err)
		}
		if canonical && (len(s) != 36 || strings.ToLower(s) != s) {
			t.Fatalf("canonical %q is not 36 lower-case characters", s)
		}
	})
}
