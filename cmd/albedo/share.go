package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

func newShareCmd(g *globals) *cobra.Command {
	var revoke, tokenOnly, write bool
	var req wire.LinkCreate
	cmd := &cobra.Command{
		Use:   "share SESSION [--write] [--expires D] [--label L] [--token] [--revoke]",
		Short: "print a link to a session, for a browser or albedo attach (and: ls, rm)",
		Long: "Print a link that opens one session to whoever has it: in a browser, or in the terminal\n" +
			"with albedo attach LINK. It holds a new token in its #fragment (which a browser never\n" +
			"sends to a server). A read link watches; --write makes one whose holder picks a name and\n" +
			"writes in the session as a guest. --expires (30m, 24h, at most 366 days) ends it, --label\n" +
			"names it (unique in the session; else one is made) for albedo share ls and rm. --token\n" +
			"prints the token alone; --revoke revokes every link of the session, and pages open\n" +
			"with one say so.\n\n" + sessionArgHelp,
		Args: cobra.ExactArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			s, err := c.ResolveSession(ctx, args[0])
			if err != nil {
				return err
			}
			if revoke {
				if err := c.Unshare(ctx, s.ID); err != nil {
					return notFoundExit(err)
				}
				fmt.Fprintf(g.stdout, "links of %s revoked\n", s.ID)
				return nil
			}
			if write {
				req.Access = wire.AccessWrite
			}
			l, err := c.ShareLink(ctx, s.ID, req)
			if client.Code(err) == wire.CodeConflict {
				return fmt.Errorf("session %s has a link labelled %q (albedo share ls %s lists them)", s.ID, req.Label, s.ID)
			}
			if err != nil {
				return err
			}
			if tokenOnly {
				fmt.Fprintln(g.stdout, l.Token)
				return nil
			}
			// The page is served where this command reached the daemon:
			// 127.0.0.1 and its port, or the origin of --url.
			base := c.Snapshot().BaseURL
			what := "read-only"
			if l.Access == wire.AccessWrite {
				what = "write"
			}
			until := ""
			if l.ExpiresAt != "" {
				until = ", until " + humanTime(l.ExpiresAt)
			}
			fmt.Fprintf(g.stderr, "%s link %q to %s%s (a browser, or albedo attach LINK); websocket %s\n", what, l.Label, l.Session, until, client.WSURL(base))
			fmt.Fprintln(g.stdout, c.PageLink(l.Session, l.Token))
			return nil
		}),
		ValidArgsFunction: g.completeSessions,
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "revoke every link of the session")
	cmd.Flags().BoolVar(&tokenOnly, "token", false, "print the link's token alone")
	cmd.Flags().BoolVar(&write, "write", false, "a link whose holder writes in the session, as a guest under a name they pick")
	cmd.Flags().StringVar(&req.ExpiresIn, "expires", "", "end the link after this long (30m, 24h; at most 366 days)")
	cmd.Flags().StringVar(&req.Label, "label", "", "the link's name in albedo share ls and rm")
	cmd.AddCommand(newShareLsCmd(g), newShareRmCmd(g))
	return cmd
}

func newShareLsCmd(g *globals) *cobra.Command {
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "ls SESSION",
		Short: "list a session's links: label, access, expiry, last use (never a token)",
		Long:  sessionArgHelp,
		Args:  cobra.ExactArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			s, err := c.ResolveSession(ctx, args[0])
			if err != nil {
				return err
			}
			ls, err := c.Links(ctx, s.ID)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSONList(g.stdout, ls)
			}
			if len(ls) == 0 {
				printf(g.stdout, "no links to %s: albedo share %s\n", s.ID, s.ID)
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LABEL\tACCESS\tEXPIRES\tLAST USED\tCREATED")
			for _, l := range ls {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Label, l.Access, orDash(humanTime(l.ExpiresAt)), orDash(humanTime(l.LastUsed)), humanTime(l.CreatedAt))
			}
			return tw.Flush()
		}),
		ValidArgsFunction: g.completeSessions,
	}
	asJSON = jsonFlag(cmd)
	return cmd
}

func newShareRmCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rm SESSION LABEL",
		Short: "revoke one link of a session; pages and terminals holding it say so",
		Long:  sessionArgHelp,
		Args:  cobra.ExactArgs(2),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			s, err := c.ResolveSession(ctx, args[0])
			if err != nil {
				return err
			}
			if err := c.Unlink(ctx, s.ID, args[1]); err != nil {
				return notFoundExit(err)
			}
			fmt.Fprintf(g.stdout, "link %q of %s revoked\n", args[1], s.ID)
			return nil
		}),
		ValidArgsFunction: g.completeSessions,
	}
}
