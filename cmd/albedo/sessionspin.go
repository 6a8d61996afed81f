package main

import (
	"context"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

// Pins and archives: a pinned session is listed first, by the person who
// pinned it only; an archived one leaves everyone's lists and feed, and
// stays searchable.

func newSessionsPinCmds(g *globals) []*cobra.Command {
	mark := func(use, short, done string, act func(context.Context, *client.Client, wire.Session) error) *cobra.Command {
		return &cobra.Command{
			Use:   use + " SESSION",
			Short: short,
			Long:  short + ".\n\n" + sessionArgHelp,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, s, err := g.named(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if err := act(cmd.Context(), c, s); err != nil {
					return err
				}
				printf(g.stdout, "%s %s\n", done, orDash(s.Title))
				return nil
			},
			ValidArgsFunction: g.completeSessions,
		}
	}
	archive := func(on bool) func(context.Context, *client.Client, wire.Session) error {
		return func(ctx context.Context, c *client.Client, s wire.Session) error {
			_, err := patchSession(ctx, c, s, wire.SessionPatch{Archived: &on})
			return err
		}
	}
	pin := func(on bool) func(context.Context, *client.Client, wire.Session) error {
		return func(ctx context.Context, c *client.Client, s wire.Session) error { return c.Pin(ctx, s.ID, on) }
	}
	return []*cobra.Command{
		mark("pin", "keep a session first in your lists, on every device (yours only)", "pinned", pin(true)),
		mark("unpin", "stop keeping a session first in your lists", "unpinned", pin(false)),
		mark("archive", "take a session out of everyone's lists and feed; search still finds it (its creator or an admin)", "archived", archive(true)),
		mark("unarchive", "bring an archived session back to the lists", "unarchived", archive(false)),
	}
}
