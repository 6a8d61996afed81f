package client

import (
	"errors"
	"strings"
	"testing"

	"albedo/wire"
)

// The rules of MatchSession, each in the order ResolveSession tries them.
func TestMatchSession(t *testing.T) {
	t.Parallel()
	all := []wire.Session{
		{ID: "019ad2f1-7c00-7000-8000-00000039d669", Title: "notes"},
		{ID: "019ad2f1-7c00-7000-8000-0000aaaa1111", Title: ""},
		{ID: "019ad2f1-7d00-7000-8000-0000bbbb1111", Title: "plans"},
		{ID: "s1", Title: "019ad2f1"}, // a title that is also a prefix of ids
		{ID: "plain", Title: "a title with spaces"},
	}
	tests := []struct {
		name string
		want string   // the id found
		amb  []string // or the candidates of an ambiguous name
		none bool     // or not found
	}{
		{name: "019ad2f1-7c00-7000-8000-00000039d669", want: "019ad2f1-7c00-7000-8000-00000039d669"},
		{name: "0039d669", want: "019ad2f1-7c00-7000-8000-00000039d669"}, // the short id
		{name: "notes", want: "019ad2f1-7c00-7000-8000-00000039d669"},
		{name: "a title with spaces", want: "plain"},
		{name: "019ad2f1-7d", want: "019ad2f1-7d00-7000-8000-0000bbbb1111"}, // a unique prefix
		{name: "aa1111", want: "019ad2f1-7c00-7000-8000-0000aaaa1111"},      // a unique suffix
		{name: "019ad2f1", want: "s1"},                                      // an exact title beats prefixes
		{name: "s1", want: "s1"},
		{name: "1111", amb: []string{"019ad2f1-7c00-7000-8000-0000aaaa1111", "019ad2f1-7d00-7000-8000-0000bbbb1111"}},
		{name: "019ad2f1-7c", amb: []string{"019ad2f1-7c00-7000-8000-00000039d669", "019ad2f1-7c00-7000-8000-0000aaaa1111"}},
		{name: "nothing", none: true},
		{name: "Notes", none: true}, // titles are exact
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := MatchSession(all, tt.name)
			var amb *AmbiguousError
			switch {
			case tt.none:
				if Code(err) != wire.CodeNotFound {
					t.Fatalf("got %+v, %v; want not_found", s, err)
				}
			case tt.amb != nil:
				if !errors.As(err, &amb) || len(amb.Candidates) != len(tt.amb) {
					t.Fatalf("got %+v, %v; want ambiguous %v", s, err, tt.amb)
				}
				for _, id := range tt.amb {
					if !strings.Contains(err.Error(), id) {
						t.Fatalf("the error does not list %s: %v", id, err)
					}
				}
			default:
				if err != nil || s.ID != tt.want {
					t.Fatalf("got %q, %v; want %q", s.ID, err, tt.want)
				}
			}
		})
	}
}

func TestShortID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"019ad2f1-7c00-7000-8000-00000039d669": "0039d669",
		"s1":                                   "s1",
		"12345678":                             "12345678",
	} {
		if got := ShortID(id); got != want {
			t.Errorf("ShortID(%q) = %q, want %q", id, got, want)
		}
	}
}
