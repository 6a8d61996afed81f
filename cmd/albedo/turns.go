package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"albedo/api/wire"
	"albedo/client"
)

func newSendCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "send SESSION TEXT",
		Short: "send an input, wait for the turn, print the reply (exit 1 if it fails, 2 if interrupted)",
		Args:  cobra.ExactArgs(2),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			return sendAndWait(ctx, c, g, args[0], args[1])
		}),
	}
}

// sendAndWait watches the session from its current head, submits the input
// (retried with the same input_id across a restart), and prints the reply
// once its turn is committed.
func sendAndWait(ctx context.Context, c *client.Client, g *globals, session, text string) error {
	s, err := c.Session(ctx, session)
	if err != nil {
		return err
	}
	st := c.Stream(client.StreamOptions{Budget: 0})
	defer st.Close()
	sub := st.Subscribe(session, client.Cursor{Epoch: s.Epoch, Offset: s.Head})
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	r, err := c.PutInput(ctx, session, id.String(), text)
	if err != nil {
		return err
	}
	var reply wire.Event
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		if it.Op != wire.PushEvent {
			continue
		}
		ev := it.Event
		if ev.Type == wire.EventMessage && ev.Role == wire.RoleAssistant && ev.TurnID == r.TurnID {
			reply = *ev
		}
		if ev.Type != wire.EventTurn || ev.TurnID != r.TurnID || ev.State == wire.TurnStarted {
			continue
		}
		if reply.Text != "" {
			fmt.Fprintln(g.stdout, reply.Text)
		}
		switch ev.State {
		case wire.TurnFailed:
			return &exitError{code: 1, err: fmt.Errorf("the turn failed: %s", ev.Error)}
		case wire.TurnInterrupted:
			return &exitError{code: 2, err: fmt.Errorf("the turn was interrupted (%s)", ev.Reason)}
		}
		return nil
	}
}

func newTailCmd(g *globals) *cobra.Command {
	var after int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tail SESSION",
		Short: "follow a session until interrupted (--json: one push frame per line)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			cur := client.Cursor{}
			if cmd.Flags().Changed("after") {
				s, err := c.Session(ctx, args[0])
				if err != nil {
					return err
				}
				cur = client.Cursor{Epoch: s.Epoch, Offset: after}
			} else if _, err := c.Discover(ctx); err != nil { // a daemon that cannot start says why
				return err
			}
			st := c.Stream(client.StreamOptions{})
			defer st.Close()
			sub := st.Subscribe(args[0], cur)
			for {
				it, err := sub.Next(ctx)
				if errors.Is(err, context.Canceled) {
					return nil // Ctrl-C: done
				}
				if err != nil {
					return err
				}
				if asJSON {
					fmt.Fprintf(g.stdout, "%s\n", it.Raw)
					continue
				}
				printItem(g, it)
			}
		},
	}
	cmd.Flags().Int64Var(&after, "after", 0, "start after this offset (default: the last 100 events)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each push frame as received, one JSON object per line")
	return cmd
}

// printItem renders a push for people: committed messages and turn ends;
// streaming text is left to --json and the terminal client.
func printItem(g *globals, it client.Item) {
	switch it.Op {
	case wire.PushReset:
		if it.Reset.More {
			fmt.Fprintf(g.stdout, "… %d earlier events\n", it.Reset.Before)
		}
	case wire.PushEvent:
		ev := it.Event
		switch ev.Type {
		case wire.EventMessage:
			who := string(ev.Role)
			if ev.Author != "" && ev.Author != who {
				who += " " + ev.Author
			}
			note := ""
			if ev.State != wire.MessageComplete {
				note = " [" + ev.State + "]"
			}
			fmt.Fprintf(g.stdout, "#%d %s%s: %s\n", ev.Offset, who, note, ev.Text)
		case wire.EventTurn:
			if ev.State != wire.TurnStarted && ev.State != wire.TurnCompleted {
				why := ev.Reason + ev.Error
				fmt.Fprintf(g.stdout, "#%d turn %s (%s)\n", ev.Offset, ev.State, why)
			}
		case wire.EventSettings:
			b := wire.Encode(struct {
				Title  *string `json:"title,omitempty"`
				Model  *string `json:"model,omitempty"`
				Effort *string `json:"effort,omitempty"`
			}{ev.Title, ev.Model, ev.Effort})
			fmt.Fprintf(g.stdout, "#%d settings by %s: %s\n", ev.Offset, ev.By, b)
		}
	}
}
