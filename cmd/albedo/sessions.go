package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

func newSessionsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "list sessions, most recently active first (and: ls, new, rm, rename, grant, ungrant, grants)",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = g.listSessions(jsonFlag(cmd))
	// ls lists too, as bots ls and members ls do.
	ls := &cobra.Command{Use: "ls", Short: "list sessions, as albedo sessions does", Args: cobra.NoArgs}
	ls.RunE = g.listSessions(jsonFlag(ls))
	cmd.AddCommand(ls, newSessionsNewCmd(g), newSessionsRmCmd(g), newSessionsRenameCmd(g),
		newSessionsGrantCmd(g), newSessionsUngrantCmd(g), newSessionsGrantsCmd(g))
	return cmd
}

// listSessions prints the sessions, most recently active first: a table,
// or with asJSON the API's session objects.
func (g *globals) listSessions(asJSON *bool) func(*cobra.Command, []string) error {
	return g.withClient(func(ctx context.Context, c *client.Client, _ []string) error {
		ss, err := c.Sessions(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSONList(g.stdout, ss)
		}
		if len(ss) == 0 {
			printf(g.stdout, "no sessions yet: albedo sessions new --title T\n")
			return nil
		}
		tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTITLE\tPHASE\tEVENTS\tPROVIDER\tMODEL\tUPDATED")
		for _, s := range ss {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", s.ID, s.Title, s.Phase, s.Head,
				orDash(providerOf(s)), orDash(s.Model), s.UpdatedAt.Local().Format("2006-01-02 15:04"))
		}
		return tw.Flush()
	})
}

func newSessionsNewCmd(g *globals) *cobra.Command {
	var req wire.SessionCreate
	cmd := &cobra.Command{
		Use:   "new",
		Short: "create a session and print its id on the last line",
		Args:  cobra.NoArgs,
		RunE: g.withClient(func(ctx context.Context, c *client.Client, _ []string) error {
			if req.Workspace != "" && !filepath.IsAbs(req.Workspace) && g.url == "" {
				if abs, err := filepath.Abs(req.Workspace); err == nil {
					req.Workspace = abs // a directory of this machine, the daemon's
				}
			}
			s, err := c.NewSession(ctx, req)
			if err != nil {
				return err
			}
			printf(g.stdout, "%s\n", s.ID)
			return nil
		}),
	}
	cmd.Flags().StringVar(&req.Title, "title", "", "title")
	cmd.Flags().StringVar(&req.Provider, "provider", "", "provider: echo, a profile of config.toml, or bot:NAME")
	cmd.Flags().StringVar(&req.Model, "model", "", "model")
	cmd.Flags().StringVar(&req.Effort, "effort", "", "reasoning effort")
	cmd.Flags().StringVar(&req.Workspace, "workspace", "", "the session's directory: where a coding agent (an acp profile) works, an existing directory of the daemon's machine; for other providers a label, not interpreted")
	return cmd
}

func newSessionsRmCmd(g *globals) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "rm SESSION",
		Short: "delete a session and its history (asks first; --yes does not)",
		Long: "Delete a session and its whole history; a running turn stops. On a terminal it asks first;\n" +
			"otherwise (a script) it requires --yes.\n\n" + sessionArgHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes && !g.inTTY {
				return usageErrorf("standard input is not a terminal to ask on: give --yes to delete without asking")
			}
			ctx := cmd.Context()
			c, s, err := g.named(ctx, args[0])
			if err != nil {
				return err
			}
			if !yes && !g.confirm(fmt.Sprintf("delete session %s (%s, %d events)? [y/N] ", s.ID, titleOr(s, "untitled"), s.Head)) {
				printf(g.stderr, "not deleted\n")
				return nil
			}
			if err := c.DeleteSession(ctx, s.ID); err != nil {
				return err
			}
			printf(g.stdout, "deleted session %s (%s)\n", s.ID, titleOr(s, "untitled"))
			return nil
		},
		ValidArgsFunction: g.completeSessions,
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}

func newSessionsRenameCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rename SESSION TITLE...",
		Short: "set a session's title (the words are joined by spaces)",
		Long:  "Set a session's title to the words of TITLE joined by single spaces.\n\n" + sessionArgHelp,
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			title := strings.Join(args[1:], " ")
			if strings.TrimSpace(title) == "" {
				return usageErrorf("the title is empty")
			}
			c, s, err := g.named(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			s, err = rename(cmd.Context(), c, s, title)
			if err != nil {
				return err
			}
			printf(g.stdout, "session %s is now %q\n", s.ID, s.Title)
			return nil
		},
		ValidArgsFunction: g.completeSessions,
	}
}

// rename sets s's title. A change made meanwhile elsewhere (a model set in
// the terminal) makes the ETag stale: the session is read again and the
// title set on what it is now.
func rename(ctx context.Context, c *client.Client, s wire.Session, title string) (wire.Session, error) {
	for range 3 {
		next, err := c.PatchSession(ctx, s.ID, s.ETag, wire.SessionPatch{Title: &title})
		if !errors.Is(err, client.ErrStaleETag) {
			return next, err
		}
		if s, err = c.Session(ctx, s.ID); err != nil {
			return s, err
		}
	}
	return s, fmt.Errorf("session %s kept changing while being renamed; try again", s.ID)
}

// confirm asks question on stderr and reads a line of stdin: only y or yes
// (any case) is a yes.
func (g *globals) confirm(question string) bool {
	printf(g.stderr, "%s", question)
	line, _ := bufio.NewReader(g.stdin).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

func titleOr(s wire.Session, alt string) string {
	if s.Title == "" {
		return alt
	}
	return fmt.Sprintf("%q", s.Title)
}

// providerOf is the provider a turn of s would use, as the daemon
// resolves it; a daemon too old to say gives the session's own.
func providerOf(s wire.Session) string { return cmp.Or(s.ResolvedProvider, s.Provider) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
