package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"albedo/client"
)

func newBotsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "bots", Short: "manage bot tokens (add, ls, rm)"}
	var sessions string
	add := &cobra.Command{
		Use:   "add NAME",
		Short: "make a bot token; it is printed once and stored only as a hash",
		Args:  cobra.ExactArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			var list []string
			if sessions != "" {
				list = strings.Split(sessions, ",")
			}
			t, err := c.AddBot(ctx, args[0], list)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stderr, "bot %q: keep this token, it is not shown again; websocket %s\n", t.Name, t.WSURL)
			fmt.Fprintln(g.stdout, t.Token)
			return nil
		}),
	}
	add.Flags().StringVar(&sessions, "sessions", "", "limit the bot to these session ids (comma-separated)")
	ls := &cobra.Command{
		Use:   "ls",
		Short: "list bots",
		Args:  cobra.NoArgs,
		RunE: g.withClient(func(ctx context.Context, c *client.Client, _ []string) error {
			bots, err := c.Bots(ctx)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSESSIONS\tSERVING\tCREATED")
			for _, b := range bots {
				s := strings.Join(b.Sessions, ",")
				if s == "" {
					s = "all"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", b.Name, s, b.Serving, b.CreatedAt)
			}
			return tw.Flush()
		}),
	}
	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "revoke a bot's token and close its connections",
		Args:  cobra.ExactArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			if err := c.RemoveBot(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "bot %q removed\n", args[0])
			return nil
		}),
	}
	cmd.AddCommand(add, ls, rm)
	return cmd
}

func newShareCmd(g *globals) *cobra.Command {
	var revoke bool
	cmd := &cobra.Command{
		Use:   "share SESSION",
		Short: "print a read-only viewer token for a session (--revoke: revoke them all)",
		Args:  cobra.ExactArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			if revoke {
				if err := c.Unshare(ctx, args[0]); err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "viewer tokens of %s revoked\n", args[0])
				return nil
			}
			t, err := c.Share(ctx, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stderr, "read-only token for %s; websocket %s (subprotocol albedo.v1)\n", t.Session, t.WSURL)
			fmt.Fprintln(g.stdout, t.Token)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "revoke every viewer token of the session")
	return cmd
}
