package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

func newMembersCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "members", Short: "manage the people of this daemon (add, ls, rename, rm)"}
	cmd.AddCommand(newMembersAddCmd(g), newMembersLsCmd(g), newMembersRenameCmd(g), newMembersRmCmd(g))
	return cmd
}

func newMembersAddCmd(g *globals) *cobra.Command {
	var admin bool
	cmd := &cobra.Command{
		Use:   "add NAME [--admin]",
		Short: "add a person; prints, once, a link that opens the page as them, and their token last",
		Long: "Add member NAME (1-64 of a-z 0-9 . _ -). A member sees the sessions they make and\n" +
			"those granted to them (albedo sessions grant); an admin sees and manages everything.\n" +
			"The link holds their personal token in its #fragment: hand it to them as you would\n" +
			"a password. The bare token is the last line of standard output, for scripts.",
		Args: cobra.ExactArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			m, err := c.AddMember(ctx, args[0], admin)
			if client.Code(err) == wire.CodeConflict {
				return fmt.Errorf("a member named %q already exists (albedo members ls lists them)", args[0])
			}
			if err != nil {
				return err
			}
			role := "member"
			if m.Admin {
				role = "admin"
			}
			fmt.Fprintf(g.stderr, "%s %q added: this link opens the page as them, and is not shown again\n", role, m.Name)
			fmt.Fprintln(g.stdout, c.KeyedLink(m.URL))
			fmt.Fprintln(g.stdout, m.Token)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&admin, "admin", false, "make them an admin: every session, members, bots and tokens")
	return cmd
}

func newMembersRenameCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rename NAME NEW",
		Short: "give a member another name; what they wrote stays theirs",
		Long: "Give member NAME the name NEW (1-64 of a-z 0-9 . _ -). Their tokens, grants and\n" +
			"read markers stay; their messages keep the name they were written under, and what\n" +
			"they write next carries NEW. Their clients connect again on their own. To rename\n" +
			"yourself on this machine, set name = \"NEW\" in config.toml instead: the daemon\n" +
			"renames its first member at its next start.",
		Args: cobra.ExactArgs(2),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			m, err := c.RenameMember(ctx, args[0], args[1])
			switch client.Code(err) {
			case wire.CodeConflict:
				return fmt.Errorf("the name %q is taken (albedo members ls lists members; albedo bots ls, bots)", args[1])
			case wire.CodeNotFound:
				return fmt.Errorf("no member is named %q (albedo members ls lists them)", args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stderr, "%q is now %q\n", args[0], m.Name)
			return nil
		}),
	}
}

func newMembersLsCmd(g *globals) *cobra.Command {
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "list members: admin or not, their connections now, when they were added",
		Args:  cobra.NoArgs,
		RunE: g.withClient(func(ctx context.Context, c *client.Client, _ []string) error {
			ms, err := c.Members(ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSONList(g.stdout, ms)
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tROLE\tONLINE\tADDED")
			for _, m := range ms {
				role := "member"
				if m.Admin {
					role = "admin"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", m.Name, role, m.Online, humanTime(m.CreatedAt))
			}
			return tw.Flush()
		}),
	}
	asJSON = jsonFlag(cmd)
	return cmd
}

func newMembersRmCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "remove a member: their tokens are refused and their connections closed at once",
		Args:  cobra.ExactArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			err := c.RemoveMember(ctx, args[0])
			if client.Code(err) == wire.CodeNotFound {
				return &exitError{code: exitNotFound, err: fmt.Errorf("no member named %q (albedo members ls lists them)", args[0])}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "member %q removed\n", args[0])
			return nil
		}),
	}
}

func newSessionsGrantCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "grant SESSION NAME read|write",
		Short: "let member NAME watch (read) or also write in (write) a session",
		Long:  "Give member NAME read or write access to SESSION; run again to change it.\n\n" + sessionArgHelp,
		Args:  cobra.ExactArgs(3),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			access := wire.Access(args[2])
			if access != wire.AccessRead && access != wire.AccessWrite {
				return usageErrorf("the access is read or write, not %q", args[2])
			}
			s, err := c.ResolveSession(ctx, args[0])
			if err != nil {
				return err
			}
			if err := c.Grant(ctx, s.ID, args[1], access); err != nil {
				return notFoundExit(err)
			}
			fmt.Fprintf(g.stdout, "%s may now %s session %s\n", args[1], args[2], s.ID)
			return nil
		}),
		ValidArgsFunction: g.completeSessions,
	}
}

func newSessionsUngrantCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "ungrant SESSION NAME",
		Short: "take member NAME's access to a session back; their view of it ends at once",
		Long:  "Take back what albedo sessions grant gave.\n\n" + sessionArgHelp,
		Args:  cobra.ExactArgs(2),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			s, err := c.ResolveSession(ctx, args[0])
			if err != nil {
				return err
			}
			if err := c.Ungrant(ctx, s.ID, args[1]); err != nil {
				return notFoundExit(err)
			}
			fmt.Fprintf(g.stdout, "%s no longer has access to session %s\n", args[1], s.ID)
			return nil
		}),
		ValidArgsFunction: g.completeSessions,
	}
}

func newSessionsGrantsCmd(g *globals) *cobra.Command {
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "grants SESSION",
		Short: "list who has access to a session: its creator and the members granted",
		Long:  sessionArgHelp,
		Args:  cobra.ExactArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			s, err := c.ResolveSession(ctx, args[0])
			if err != nil {
				return err
			}
			gs, err := c.Grants(ctx, s.ID)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSONList(g.stdout, gs)
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MEMBER\tACCESS\tSINCE")
			for _, gr := range gs {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", gr.Member, gr.Access, humanTime(gr.At))
			}
			return tw.Flush()
		}),
		ValidArgsFunction: g.completeSessions,
	}
	asJSON = jsonFlag(cmd)
	return cmd
}

// notFoundExit gives a not_found its exit status (no such member, or no
// such grant).
func notFoundExit(err error) error {
	if client.Code(err) == wire.CodeNotFound {
		return &exitError{code: exitNotFound, err: err}
	}
	return err
}
