package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The lean client against coder/websocket's server: the upgrade with its
// header, a message each way, one over 64 KiB (the 8-byte length), a
// ping the server waits to have answered, and the server's close.
func TestLeanWSAgainstALibraryServer(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 70_000)
	done := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"p"}})
		if err != nil {
			done <- err
			return
		}
		c.SetReadLimit(-1)
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		done <- func() error {
			if err := c.Write(ctx, websocket.MessageText, []byte("hi")); err != nil {
				return err
			}
			if err := c.Write(ctx, websocket.MessageText, big); err != nil {
				return err
			}
			go c.Reader(ctx) // reads the pong for Ping, then the client's close
			if err := c.Ping(ctx); err != nil {
				return err
			}
			return c.Close(websocket.StatusNormalClosure, "bye")
		}()
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if _, err := leanDial(ctx, &net.Dialer{}, host, "/", "Authorization: Bearer nope"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a refused upgrade: %v, want its status", err)
	}
	ws, err := leanDial(ctx, &net.Dialer{}, host, "/", "Authorization: Bearer t", "Sec-WebSocket-Protocol: p")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var msg []byte
	for _, want := range [][]byte{[]byte("hi"), big} {
		if msg, err = ws.Read(msg); err != nil || !bytes.Equal(msg, want) {
			t.Fatalf("read %d bytes, %v; want %d", len(msg), err, len(want))
		}
	}
	if _, err := ws.Read(msg); !errors.Is(err, errLeanClosed) {
		t.Fatalf("after the server's close: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
}

// What the lean client writes, a library server reads: masked frames of
// each length form.
func TestLeanWSWritesWhatALibraryReads(t *testing.T) {
	got := make(chan []byte, 3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(-1)
		for range 3 {
			_, m, err := c.Read(r.Context())
			if err != nil {
				close(got)
				return
			}
			got <- m
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := leanDial(ctx, &net.Dialer{}, strings.TrimPrefix(srv.URL, "http://"), "/")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, n := range []int{5, 300, 70_000} {
		want := bytes.Repeat([]byte{'a' + byte(n%26)}, n)
		if err := ws.WriteText(want); err != nil {
			t.Fatal(err)
		}
		if m := <-got; !bytes.Equal(m, want) {
			t.Fatalf("the server read %d bytes, want %d", len(m), n)
		}
	}
}
