package client_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// A viewer: print a session as it happens, across daemon restarts, until
// the daemon has been gone for a minute.
func Example_viewer() {
	c, err := client.New(client.Options{Name: "viewer/1"}) // $ALBEDO_HOME/daemon.json
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	st := c.Stream(client.StreamOptions{Budget: 60e9})
	defer st.Close()
	sub := st.Subscribe("my-session", client.Cursor{}) // a fresh view: reset + last 100
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			log.Fatal(err) // client.ErrUnavailable after the budget, never a bare EOF
		}
		switch it.Op {
		case wire.PushReset:
			fmt.Println("---- (earlier history over HTTP: c.History)")
		case wire.PushEvent:
			if it.Event.Type == wire.EventMessage {
				fmt.Printf("%s: %s\n", it.Event.Role, it.Event.Text)
			}
		case wire.PushDelta:
			fmt.Print(it.Text) // the reply streaming in
		}
	}
}

// A minimal bot loop: when someone writes "!count", answer with the number
// of messages seen so far, resuming from where it stopped after any restart.
// (Its own answers do not start with "!count", so it never answers itself.)
func Example_botLoop() {
	c, err := client.New(client.Options{Name: "counter-bot/1"})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	s, err := c.Session(ctx, "my-session")
	if err != nil {
		log.Fatal(err)
	}
	st := c.Stream(client.StreamOptions{})
	defer st.Close()
	// Start at the head: only new messages.
	sub := st.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch, Offset: s.Head})
	seen := 0
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if it.Op != wire.PushEvent || it.Event.Type != wire.EventMessage || it.Event.Role != wire.RoleUser {
			continue
		}
		seen++
		if !strings.HasPrefix(it.Event.Text, "!count") {
			continue
		}
		// An input_id makes the answer idempotent: a retry after a lost
		// reply cannot post twice.
		id := uuid.NewSHA1(uuid.NameSpaceOID, []byte(it.Event.InputID)).String()
		if _, err := st.Send(ctx, s.ID, id, fmt.Sprintf("count: %d messages", seen)); err != nil {
			log.Fatal(err)
		}
	}
}
