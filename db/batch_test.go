package db

import (
	"context"
	"errors"
	"testing"

	"albedo/wire"
)

// oneBatch runs fns as one group commit, in order, and returns each one's
// answer. The writer goroutine is idle meanwhile (nothing else writes in
// these tests), and its last answer happened before this call.
func oneBatch(t *testing.T, d *DB, fns ...func(*Tx) error) []error {
	t.Helper()
	batch := make([]*request, len(fns))
	for i, fn := range fns {
		batch[i] = &request{ctx: context.Background(), fn: fn, res: make(chan error, 1)}
	}
	d.w.commit(batch)
	errs := make([]error, len(fns))
	for i, r := range batch {
		errs[i] = <-r.res
	}
	return errs
}

// Inputs of one batch, bots' posts and users' sends: repeats and
// conflicts answered from the rows the batch itself inserted, orders and
// offsets dense per session and in request order, a failing request
// (which makes the batch run again with savepoints) costing only itself,
// and the counters the batch keeps in memory written to the session row,
// so that a reopened database goes on from them.
func TestInputsInOneBatch(t *testing.T) {
	t.Parallel()
	for _, role := range []wire.Role{wire.RoleBot, wire.RoleUser} {
		t.Run(string(role), func(t *testing.T) {
			t.Parallel()
			inputsInOneBatch(t, role)
		})
	}
}

func inputsInOneBatch(t *testing.T, role wire.Role) {
	eachBackend(t, func(t *testing.T, tgt string) {
		ctx := context.Background()
		d, err := Open(ctx, tgt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		createSession(t, d, "a")
		createSession(t, d, "b")
		got := map[int]Input{}
		put := func(i int, session, id, text string) func(*Tx) error {
			return func(tx *Tx) error {
				in, _, _, err := tx.PutInput(ctx, session, id, text, role, wire.Author{Name: "someone"})
				got[i] = in
				return err
			}
		}
		errs := oneBatch(t, d,
			put(0, "a", "i1", "one"),
			put(1, "b", "j1", "uno"),
			put(2, "a", "i1", "one"),   // a repeat: the receipt of 0
			put(3, "a", "i1", "other"), // a conflict
			put(4, "a", "i2", "two"),
			func(tx *Tx) error { // appends, then fails: rolled back
				if _, err := tx.Append(ctx, "b", wire.Event{Type: wire.EventMessage, Text: "gone"}); err != nil {
					return err
				}
				return errors.New("refused")
			},
			put(6, "b", "j2", "dos"),
			put(7, "nope", "k1", "x"),
		)
		want := []error{nil, nil, nil, ErrConflict, nil, nil, nil, ErrNotFound}
		for i, w := range want {
			switch {
			case i == 5:
				if errs[i] == nil {
					t.Fatalf("request 5 succeeded; want its error")
				}
			case !errors.Is(errs[i], w):
				t.Fatalf("request %d: %v, want %v", i, errs[i], w)
			}
		}
		for i, w := range map[int]struct {
			ord, offset int64
		}{0: {1, 1}, 1: {1, 1}, 2: {1, 1}, 4: {2, 2}, 6: {2, 2}} {
			if got[i].Ord != w.ord || got[i].MsgOffset != w.offset {
				t.Fatalf("request %d: order %d at offset %d, want %d at %d", i, got[i].Ord, got[i].MsgOffset, w.ord, w.offset)
			}
		}
		if a, b := got[0], got[2]; a.Receipt() != b.Receipt() {
			t.Fatalf("repeat answered %+v, want %+v", b.Receipt(), a.Receipt())
		}
		check := func(d *DB, session string, head, inputs int64) {
			t.Helper()
			s, err := d.Session(ctx, session)
			if err != nil {
				t.Fatal(err)
			}
			if s.Head != head || s.Inputs != inputs {
				t.Fatalf("%s: head %d inputs %d, want %d and %d", session, s.Head, s.Inputs, head, inputs)
			}
			evs, err := d.EventsAfter(ctx, session, 0, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			for j, e := range evs {
				if e.Offset != int64(j+1) {
					t.Fatalf("%s: offset %d at %d", session, e.Offset, j)
				}
			}
			if int64(len(evs)) != head {
				t.Fatalf("%s: %d events, head %d", session, len(evs), head)
			}
		}
		check(d, "a", 2, 2)
		check(d, "b", 2, 2)
		if err := d.Close(ctx); err != nil {
			t.Fatal(err)
		}

		d2, err := Open(ctx, tgt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d2.Close(ctx) })
		errs = oneBatch(t, d2, put(0, "a", "i3", "three"), put(1, "a", "i1", "one"))
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("after reopening: %v", errs)
		}
		if got[0].Ord != 3 || got[0].MsgOffset != 3 || got[1].Ord != 1 {
			t.Fatalf("after reopening: orders %d (offset %d) and %d, want 3 (3) and 1", got[0].Ord, got[0].MsgOffset, got[1].Ord)
		}
		check(d2, "a", 3, 3)
	})
}

// A bot post's record is its message event: reading its receipt finds it
// there; a post stored as an input row before that (msg_offset 0, which
// the migration cannot match to its event) is still found, so its repeat
// is answered once and not accepted again.
func TestPostRecords(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		ctx := context.Background()
		d, err := Open(ctx, tgt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		createSession(t, d, "s")
		post := func(d *DB, id, text string) (Input, bool, error) {
			var in Input
			var created bool
			_, err := d.Writer().Do(ctx, func(tx *Tx) error {
				var err error
				in, created, _, err = tx.PutInput(ctx, "s", id, text, wire.RoleBot, wire.Author{Name: "bot"})
				return err
			})
			return in, created, err
		}
		first, created, err := post(d, "p1", "hello")
		if err != nil || !created {
			t.Fatalf("post: %v %v", created, err)
		}
		got, err := d.Input(ctx, "s", "p1")
		if err != nil || got.Receipt() != first.Receipt() {
			t.Fatalf("receipt read back %+v (%v), want %+v", got.Receipt(), err, first.Receipt())
		}
		if _, err := d.rw.ExecContext(ctx, `INSERT INTO inputs (`+inputColumns+`) VALUES ('s','old',7,?,'accepted','done','','','',0,'t','t',0,0)`, textHash("before")); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(ctx); err != nil {
			t.Fatal(err)
		}
		d, err = Open(ctx, tgt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close(ctx) })
		if !d.w.legacyPosts {
			t.Fatal("a post stored as an input was not noticed")
		}
		for _, c := range []struct {
			id, text string
			created  bool
			ord      int64
			err      error
		}{
			{"old", "before", false, 7, nil},
			{"old", "other", false, 0, ErrConflict},
			{"p1", "hello", false, 1, nil},
			{"p1", "other", false, 0, ErrConflict},
			{"p2", "new", true, 2, nil},
		} {
			in, created, err := post(d, c.id, c.text)
			if !errors.Is(err, c.err) || created != c.created || (err == nil && in.Ord != c.ord) {
				t.Fatalf("post %s %q: order %d created %v err %v; want %d %v %v", c.id, c.text, in.Ord, created, err, c.ord, c.created, c.err)
			}
		}
		// In a batch of several, the first run does not look posts up: the
		// repeat of p2 fails the flush, and the batch runs again carefully.
		retries := d.w.Stats().Retries
		ins := make([]Input, 3)
		made := make([]bool, 3)
		putAt := func(i int, id, text string) func(*Tx) error {
			return func(tx *Tx) error {
				var err error
				ins[i], made[i], _, err = tx.PutInput(ctx, "s", id, text, wire.RoleBot, wire.Author{Name: "bot"})
				return err
			}
		}
		errs := oneBatch(t, d, putAt(0, "p3", "three"), putAt(1, "p2", "new"), putAt(2, "p4", "four"))
		for i, err := range errs {
			if err != nil {
				t.Fatalf("batch request %d: %v", i, err)
			}
		}
		if d.w.Stats().Retries != retries+1 {
			t.Fatalf("retries %d, want %d", d.w.Stats().Retries, retries+1)
		}
		if !made[0] || made[1] || !made[2] || ins[0].Ord != 3 || ins[1].Ord != 2 || ins[2].Ord != 4 {
			t.Fatalf("batch with a repeat: created %v orders %d %d %d; want [true false true] 3 2 4", made, ins[0].Ord, ins[1].Ord, ins[2].Ord)
		}
		evs, err := d.EventsAfter(ctx, "s", 0, 100, 0)
		if err != nil || len(evs) != 4 {
			t.Fatalf("%d events (%v), want 4", len(evs), err)
		}
	})
}

// An input_id names one input of a session, whichever op sent it: a send
// and a bot's post reusing one id are a repeat (same text: the first one's
// receipt, nothing new stored) or a conflict, never two inputs — whether
// the first is committed or earlier in the same batch.
func TestSendAndPostShareInputIDs(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		ctx := context.Background()
		d, err := Open(ctx, tgt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close(ctx) })
		createSession(t, d, "s")
		type answer struct {
			in      Input
			created bool
		}
		put := func(got *answer, role wire.Role, id, text string) func(*Tx) error {
			return func(tx *Tx) error {
				var err error
				got.in, got.created, _, err = tx.PutInput(ctx, "s", id, text, role, wire.Author{Name: string(role)})
				return err
			}
		}
		var a, b, c answer
		// Committed first, then reused alone and in a batch of several.
		for _, first := range []wire.Role{wire.RoleUser, wire.RoleBot} {
			other := map[wire.Role]wire.Role{wire.RoleUser: wire.RoleBot, wire.RoleBot: wire.RoleUser}[first]
			id := "first-" + string(first)
			if errs := oneBatch(t, d, put(&a, first, id, "hello")); errs[0] != nil || !a.created {
				t.Fatalf("%s: %v created %v", first, errs[0], a.created)
			}
			if errs := oneBatch(t, d, put(&b, other, id, "other")); !errors.Is(errs[0], ErrConflict) {
				t.Fatalf("%s after a committed %s with other text: %v, want ErrConflict", other, first, errs[0])
			}
			if errs := oneBatch(t, d, put(&b, other, id, "hello")); errs[0] != nil || b.created || b.in.Ord != a.in.Ord || b.in.MsgOffset != a.in.MsgOffset {
				t.Fatalf("%s repeating a committed %s: %v created %v order %d offset %d; want the first's %d %d",
					other, first, errs[0], b.created, b.in.Ord, b.in.MsgOffset, a.in.Ord, a.in.MsgOffset)
			}
			errs := oneBatch(t, d, put(&c, wire.RoleBot, "pad-"+string(first), "pad"), put(&b, other, id, "other"))
			if errs[0] != nil || !errors.Is(errs[1], ErrConflict) {
				t.Fatalf("in a batch, %s after a committed %s: %v, want nil and ErrConflict", other, first, errs)
			}
			// Both in one batch.
			id = "batch-" + string(first)
			errs = oneBatch(t, d, put(&a, first, id, "hi"), put(&b, other, id, "else"), put(&c, other, id, "hi"))
			if errs[0] != nil || !errors.Is(errs[1], ErrConflict) || errs[2] != nil || c.created || c.in.Ord != a.in.Ord {
				t.Fatalf("%s then %s in one batch: %v, created %v, orders %d %d", first, other, errs, c.created, a.in.Ord, c.in.Ord)
			}
		}
		evs, err := d.EventsAfter(ctx, "s", 0, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		var inputs int
		for _, e := range evs {
			if e.Type == wire.EventMessage {
				inputs++
			}
		}
		if inputs != 6 { // first-user, first-bot, pad-user, pad-bot, batch-user, batch-bot
			t.Fatalf("%d messages stored, want 6", inputs)
		}
	})
}
