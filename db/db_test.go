package db

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"albedo/wire"
)

func createSession(t testing.TB, d *DB, id string) Session {
	t.Helper()
	var s Session
	_, err := d.Writer().Do(context.Background(), func(tx *Tx) error {
		var err error
		s, _, err = tx.CreateSession(context.Background(), Session{ID: id, Epoch: "e-" + id})
		return err
	})
	if err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
	return s
}

func appendText(ctx context.Context, d *DB, session, text string) ([]Event, error) {
	var out []Event
	_, err := d.Writer().Do(ctx, func(tx *Tx) error {
		var err error
		out, err = tx.Append(ctx, session, wire.Event{Type: wire.EventMessage, Role: wire.RoleUser, Text: text})
		return err
	})
	return out, err
}

func TestMigrateEmptyAndAgain(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	ctx := context.Background()
	applied, err := Migrate(ctx, path)
	if err != nil {
		t.Fatalf("first migrate: %v", err)
	}
	if len(applied) == 0 {
		t.Fatalf("first migrate applied nothing")
	}
	again, err := Migrate(ctx, path)
	if err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if len(again) != 0 {
		t.Fatalf("second migrate applied %v, want nothing", again)
	}
	// The schema works after both runs.
	d, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("open migrated: %v", err)
	}
	defer d.Close(ctx)
	createSession(t, d, "s")
	if _, err := appendText(ctx, d, "s", "hi"); err != nil {
		t.Fatalf("append: %v", err)
	}
}

// Offsets stay dense and unique when 50 goroutines append to 10 sessions.
func TestDenseOffsetsUnderConcurrency(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		var mu sync.Mutex
		seen := map[string][]int64{} // offsets in the order OnCommit saw them
		d := openOn(t, tgt, Options{OnCommit: func(cs []Committed) {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range cs {
				for _, e := range c.Events {
					seen[c.Session] = append(seen[c.Session], e.Offset)
				}
			}
		}})
		const sessions, writers, each = 10, 50, 40
		for i := range sessions {
			createSession(t, d, fmt.Sprintf("s%d", i))
		}
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if _, err := appendText(ctx, d, fmt.Sprintf("s%d", (w+i)%sessions), "x"); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("append: %v", err)
		}
		total := 0
		for i := range sessions {
			id := fmt.Sprintf("s%d", i)
			evs, err := d.EventsAfter(ctx, id, 0, 10000, 0)
			if err != nil {
				t.Fatal(err)
			}
			for j, e := range evs {
				if e.Offset != int64(j+1) {
					t.Fatalf("%s: event %d has offset %d", id, j, e.Offset)
				}
			}
			mu.Lock()
			hooked := seen[id]
			mu.Unlock()
			if len(hooked) != len(evs) {
				t.Fatalf("%s: OnCommit saw %d events, db has %d", id, len(hooked), len(evs))
			}
			for j, off := range hooked {
				if off != int64(j+1) {
					t.Fatalf("%s: OnCommit saw offset %d at position %d", id, off, j)
				}
			}
			s, err := d.Session(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if s.Head != int64(len(evs)) {
				t.Fatalf("%s: head %d, events %d", id, s.Head, len(evs))
			}
			total += len(evs)
		}
		if total != writers*each {
			t.Fatalf("stored %d events, want %d", total, writers*each)
		}
	})
}

// A failing request in a batch costs only itself.
func TestFailedRequestIsIsolated(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		createSession(t, d, "s")
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make([]error, 20)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = d.Writer().Do(ctx, func(tx *Tx) error {
					if _, err := tx.Append(ctx, "s", wire.Event{Type: wire.EventMessage, Text: "x"}); err != nil {
						return err
					}
					if i%2 == 1 {
						return errors.New("refused") // after appending: must be rolled back
					}
					return nil
				})
			}()
		}
		wg.Wait()
		ok := 0
		for i, err := range errs {
			if i%2 == 1 && err == nil {
				t.Fatalf("request %d: want its error", i)
			}
			if i%2 == 0 {
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				ok++
			}
		}
		evs, err := d.EventsAfter(ctx, "s", 0, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != ok {
			t.Fatalf("stored %d events, want %d", len(evs), ok)
		}
		for j, e := range evs {
			if e.Offset != int64(j+1) {
				t.Fatalf("offset %d at %d: not dense", e.Offset, j)
			}
		}
	})
}

func TestAppendMissingSession(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		_, err := appendText(context.Background(), d, "nope", "x")
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
}

func TestCreateIdempotentAndConflict(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		ctx := context.Background()
		create := func(title string) (Session, bool, error) {
			var s Session
			var created bool
			_, err := d.Writer().Do(ctx, func(tx *Tx) error {
				var err error
				c := wire.SessionCreate{Title: title}
				s, created, err = tx.CreateSession(ctx, Session{ID: "x", Epoch: "e", Title: title, CreateHash: CreateHash(c)})
				return err
			})
			return s, created, err
		}
		if _, created, err := create("a"); err != nil || !created {
			t.Fatalf("first: created=%v err=%v", created, err)
		}
		if _, created, err := create("a"); err != nil || created {
			t.Fatalf("repeat: created=%v err=%v", created, err)
		}
		if _, _, err := create("b"); !errors.Is(err, ErrConflict) {
			t.Fatalf("different body: err=%v, want ErrConflict", err)
		}
	})
}

func TestPatchVersionsAndEvents(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		ctx := context.Background()
		createSession(t, d, "s")
		patch := func(v int64, p wire.SessionPatch) (Session, error) {
			var s Session
			_, err := d.Writer().Do(ctx, func(tx *Tx) error {
				var err error
				s, err = tx.PatchSession(ctx, "s", p, v, "owner")
				return err
			})
			return s, err
		}
		model, effort, empty := "m1", "high", ""
		s, err := patch(1, wire.SessionPatch{Model: &model, Effort: &effort})
		if err != nil || s.Version != 2 || s.Model != "m1" || s.Effort != "high" {
			t.Fatalf("patch: %+v %v", s, err)
		}
		if _, err := patch(1, wire.SessionPatch{Effort: &empty}); !errors.Is(err, ErrStale) {
			t.Fatalf("stale patch: err=%v", err)
		}
		s, err = patch(2, wire.SessionPatch{Effort: &empty})
		if err != nil || s.Effort != "" || s.Model != "m1" {
			t.Fatalf("clear effort: %+v %v", s, err)
		}
		evs, err := d.EventsAfter(ctx, "s", 0, 10, 0)
		if err != nil || len(evs) != 2 {
			t.Fatalf("events: %d %v", len(evs), err)
		}
		ev, _ := evs[1].Decode()
		if ev.Type != wire.EventSettings || ev.Effort == nil || *ev.Effort != "" || ev.Model != nil {
			t.Fatalf("settings event %s", evs[1].JSON)
		}
	})
}

func TestPutInputIdempotent(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		ctx := context.Background()
		createSession(t, d, "s")
		put := func(id, text string) (Input, bool, error) {
			var in Input
			var created bool
			_, err := d.Writer().Do(ctx, func(tx *Tx) error {
				var err error
				in, created, _, err = tx.PutInput(ctx, "s", id, text, wire.RoleUser, wire.Author{Name: "me"})
				return err
			})
			return in, created, err
		}
		a, created, err := put("i1", "hello")
		if err != nil || !created || a.Ord != 1 {
			t.Fatalf("first: %+v %v %v", a, created, err)
		}
		b, created, err := put("i1", "hello")
		if err != nil || created || b.TurnID != a.TurnID || b.Ord != 1 {
			t.Fatalf("repeat: %+v %v %v", b, created, err)
		}
		if _, _, err := put("i1", "other"); !errors.Is(err, ErrConflict) {
			t.Fatalf("other text: %v", err)
		}
		c, _, err := put("i2", "again")
		if err != nil || c.Ord != 2 {
			t.Fatalf("second input: %+v %v", c, err)
		}
		evs, _ := d.EventsAfter(ctx, "s", 0, 10, 0)
		if len(evs) != 2 {
			t.Fatalf("%d message events, want 2", len(evs))
		}
		got, err := d.Input(ctx, "s", "i1")
		if err != nil || got.Receipt() != a.Receipt() {
			t.Fatalf("read receipt: %+v %v", got, err)
		}
	})
}

func TestEventsBefore(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		ctx := context.Background()
		createSession(t, d, "s")
		for i := range 10 {
			if _, err := appendText(ctx, d, "s", fmt.Sprint(i)); err != nil {
				t.Fatal(err)
			}
		}
		evs, err := d.EventsBefore(ctx, "s", 8, 3, 0)
		if err != nil || len(evs) != 3 || evs[0].Offset != 5 || evs[2].Offset != 7 {
			t.Fatalf("before 8 limit 3: %v %v", evs, err)
		}
	})
}

// TestPendingInputsUseTheIndex: a starting daemon reads only the inputs
// whose turn has not ended, through the partial index, not every input.
func TestPendingInputsUseTheIndex(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	if got := queryPlan(t, d, pendingInputsSQL); !strings.Contains(got, "USING INDEX inputs_pending") || strings.Contains(got, "TEMP B-TREE") {
		t.Fatalf("plan: %s", got)
	}
}

// queryPlan returns SQLite's plan for q with args, its steps' details.
func queryPlan(t *testing.T, d *DB, q string, args ...any) string {
	t.Helper()
	rows, err := d.ro.DB.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(plan)
}

// A page ends at its byte bound as well as its count: a session of large
// events is read a few at a time, never a whole count of them, and a page
// always holds at least one event, whatever its size.
func TestPagesAreBoundedByBytes(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		ctx := context.Background()
		createSession(t, d, "s")
		big := strings.Repeat("x", 10_000)
		for range 20 {
			if _, err := appendText(ctx, d, "s", big); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name     string
			page     func() ([]Event, error)
			want     int
			firstOff int64
		}{
			{"after, 25 KB", func() ([]Event, error) { return d.EventsAfter(ctx, "s", 0, 100, 25_000) }, 3, 1},
			{"after, 1 byte", func() ([]Event, error) { return d.EventsAfter(ctx, "s", 4, 100, 1) }, 1, 5},
			{"after, no bound", func() ([]Event, error) { return d.EventsAfter(ctx, "s", 0, 100, 0) }, 20, 1},
			{"before, 25 KB", func() ([]Event, error) { return d.EventsBefore(ctx, "s", 21, 100, 25_000) }, 3, 18},
			{"before, 1 byte", func() ([]Event, error) { return d.EventsBefore(ctx, "s", 10, 100, 1) }, 1, 9},
		}
		for _, tc := range cases {
			evs, err := tc.page()
			if err != nil || len(evs) != tc.want || evs[0].Offset != tc.firstOff {
				var offs []int64
				for _, e := range evs {
					offs = append(offs, e.Offset)
				}
				t.Errorf("%s: offsets %v, %v; want %d events from %d", tc.name, offs, err, tc.want, tc.firstOff)
			}
		}
	})
}

// The hook a store's user sets once it has the store open (HookCommits)
// sees every commit, before the hook Open was given, in commit order.
func TestHookCommitsRunsBeforeOpensHook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls []string
	d := openOn(t, filepath.Join(t.TempDir(), "albedo.db"), Options{OnCommit: func(cs []Committed) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, fmt.Sprintf("open %s/%d", cs[0].Session, cs[0].Events[0].Offset))
	}})
	d.HookCommits(func(cs []Committed) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, fmt.Sprintf("hook %s/%d", cs[0].Session, cs[0].Events[0].Offset))
	})
	createSession(t, d, "s")
	mu.Lock()
	calls = nil // the session's creation
	mu.Unlock()
	ctx := context.Background()
	for range 2 {
		if _, err := appendText(ctx, d, "s", "hi"); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"hook s/1", "open s/1", "hook s/2", "open s/2"}
	if !slices.Equal(calls, want) {
		t.Fatalf("hooks called %q, want %q", calls, want)
	}
}
