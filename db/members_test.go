package db

import (
	"context"
	"maps"
	"testing"

	"albedo/wire"
)

// GrantsOf reads the access of many pairs in one query: each pair's own
// grant, none for a pair whose member has grants only elsewhere, and
// nothing for a session or member it was not asked about.
func TestGrantsOf(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		ctx := context.Background()
		for _, s := range []string{"s1", "s2", "s3"} {
			createSession(t, d, s)
		}
		grants := []Grant{
			{Session: "s1", Member: "ann", Access: wire.AccessWrite},
			{Session: "s1", Member: "bob", Access: wire.AccessRead},
			{Session: "s2", Member: "bob", Access: wire.AccessWrite},
			{Session: "s3", Member: "cy", Access: wire.AccessRead},
		}
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			for _, name := range []string{"ann", "bob", "cy"} {
				if _, err := tx.CreateMember(ctx, Member{ID: name, Name: name}); err != nil {
					return err
				}
			}
			for _, g := range grants {
				if err := tx.PutGrant(ctx, g); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got, err := d.GrantsOf(ctx, []MemberSession{{"ann", "s1"}, {"bob", "s2"}, {"ann", "s2"}, {"bob", "s1"}, {"bob", "s1"}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[MemberSession]wire.Access{{"ann", "s1"}: wire.AccessWrite, {"bob", "s2"}: wire.AccessWrite, {"bob", "s1"}: wire.AccessRead}
		if !maps.Equal(got, want) {
			t.Fatalf("GrantsOf = %v, want %v", got, want)
		}
		if none, err := d.GrantsOf(ctx, nil); err != nil || len(none) != 0 {
			t.Fatalf("no pairs: %v %v", none, err)
		}
	})
}

// EachGrant hands on every grant once, with its access, whichever member
// and session it is of.
func TestEachGrant(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		ctx := context.Background()
		for _, s := range []string{"s1", "s2"} {
			createSession(t, d, s)
		}
		want := map[MemberSession]wire.Access{
			{"ann", "s1"}: wire.AccessWrite, {"bob", "s1"}: wire.AccessRead,
			{"bob", "s2"}: wire.AccessCreator, {"cy", "s2"}: "some access of a later version",
		}
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			for k, a := range want {
				if err := tx.PutGrant(ctx, Grant{Session: k.Session, Member: k.Member, Access: a}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got := map[MemberSession]wire.Access{}
		if err := d.EachGrant(ctx, func(member, session string, a wire.Access) {
			if _, twice := got[MemberSession{member, session}]; twice {
				t.Errorf("%s's grant to %s handed on twice", member, session)
			}
			got[MemberSession{member, session}] = a
		}); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("EachGrant gave %v, want %v", got, want)
		}
	})
}
