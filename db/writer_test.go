package db

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A write submitted after Close is refused with ErrClosed, never left
// waiting: Do's send to the request queue and the stop signal are both
// ready once the writer has stopped, and a queued request nobody will run
// must not be waited for.
func TestDoAfterCloseReturnsErrClosed(t *testing.T) {
	d, err := Open(context.Background(), filepath.Join(t.TempDir(), "albedo.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for range 200 {
			if _, err := d.Writer().Do(context.Background(), func(*Tx) error { return nil }); !errors.Is(err, ErrClosed) {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Do after Close: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Do after Close still waiting after 10 s")
	}
}
