package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"albedo/client"
)

func newContinueCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "continue SESSION",
		Short: "run on the newest reply, which was cut off (interrupted, or failed midway), and print the rest",
		Long: "Run on the session's newest reply when its turn was interrupted or failed after it said\n" +
			"something: the model is sent the reply so far and asked for the rest, printed as send\n" +
			"prints a reply. Exit statuses are send's.\n\n" + sessionArgHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, s, err := g.named(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return g.continueReply(cmd.Context(), c, s.ID, timeout)
		},
		ValidArgsFunction: g.completeSessions,
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "stop waiting after this long (0: wait for the turn's end)")
	return cmd
}

// continueReply asks for the continuation and follows its turn as send
// follows an input's (waitTurn).
func (g *globals) continueReply(ctx context.Context, c *client.Client, id string, timeout time.Duration) error {
	s, err := c.Session(ctx, id)
	if err != nil {
		return err
	}
	st := c.Stream(client.StreamOptions{Budget: 0})
	defer st.Close()
	sub := st.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch, Offset: s.Head})
	r, err := c.Continue(ctx, s.ID)
	if err != nil {
		return err
	}
	return g.waitTurn(ctx, sub, s, r.TurnID, timeout)
}
