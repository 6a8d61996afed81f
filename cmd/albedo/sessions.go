package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

func newSessionsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "list sessions, pinned first, then most recently active (and: ls, new, set, rm, rename, pin, archive, grant, …)",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = g.listSessions(jsonFlag(cmd), archivedFlag(cmd))
	// ls lists too, as bots ls and members ls do.
	ls := &cobra.Command{Use: "ls", Short: "list sessions, as albedo sessions does", Args: cobra.NoArgs}
	ls.RunE = g.listSessions(jsonFlag(ls), archivedFlag(ls))
	cmd.AddCommand(ls, newSessionsNewCmd(g), newSessionsSetCmd(g), newSessionsRmCmd(g), newSessionsRenameCmd(g),
		newSessionsGrantCmd(g), newSessionsUngrantCmd(g), newSessionsGrantsCmd(g))
	cmd.AddCommand(newSessionsPinCmds(g)...)
	return cmd
}

// archivedFlag is the --archived flag of a list.
func archivedFlag(cmd *cobra.Command) *bool {
	return cmd.Flags().Bool("archived", false, "list the archived sessions instead")
}

// listSessions prints the sessions, the caller's pinned first, then most
// recently active: a table, or with asJSON the API's session objects.
// Archived sessions are left out, or with archived the only ones listed.
func (g *globals) listSessions(asJSON, archived *bool) func(*cobra.Command, []string) error {
	return g.withClient(func(ctx context.Context, c *client.Client, _ []string) error {
		list := c.Sessions
		if *archived {
			list = c.ArchivedSessions
		}
		ss, err := list(ctx)
		if err != nil {
			return err
		}
		ss = slices.DeleteFunc(ss, func(s wire.Session) bool { return s.Archived != *archived })
		feed := feedByID(ctx, c)
		slices.SortStableFunc(ss, func(a, b wire.Session) int {
			return cmp.Compare(b2i(feed[b.ID].Pinned), b2i(feed[a.ID].Pinned))
		})
		if *asJSON {
			return printJSONList(g.stdout, ss)
		}
		if len(ss) == 0 && *archived {
			printf(g.stdout, "no archived sessions\n")
			return nil
		}
		if len(ss) == 0 {
			printf(g.stdout, "no sessions yet: albedo sessions new --title T\n")
			return nil
		}
		return printSessions(g.stdout, ss, feed)
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// printSessions is albedo sessions' table: a row a session, in the
// order of ss. The full id comes first, as scripts read it; SHORT ID is
// the name to type (shortIDs), UNREAD the caller's unread messages ("-"
// where the feed has none: a token that has no read markers, an archived
// session), FORK OF a fork's parent and the offset it was made at, PIN a
// ★ where the caller pinned it.
func printSessions(w io.Writer, ss []wire.Session, feed map[string]wire.FeedItem) error {
	short := shortIDs(ss)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTITLE\tPHASE\tEVENTS\tPROVIDER\tMODEL\tUNREAD\tUPDATED\tSHORT ID\tFORK OF\tPIN")
	for _, s := range ss {
		n, fork, pin := "-", "-", ""
		if it, ok := feed[s.ID]; ok {
			n = fmt.Sprint(it.Unread)
			if it.Unread >= wire.MaxUnread {
				n += "+"
			}
			if it.Pinned {
				pin = "★"
			}
		}
		if p := s.Parent; p != nil {
			fork = fmt.Sprintf("⑂ %s #%d", short[p.Session], p.Offset)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, orDash(s.Title), s.Phase, s.Head,
			orDash(providerOf(s)), orDash(modelOf(s)), n, s.UpdatedAt.Local().Format("2006-01-02 15:04"), short[s.ID], fork, pin)
	}
	return tw.Flush()
}

// feedByID is the caller's sessions feed by session (unread counts,
// pins); nil when it cannot be read (a bot's token, a link's), or not
// within a few seconds: the list is shown without them then.
func feedByID(ctx context.Context, c *client.Client) map[string]wire.FeedItem {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	items, err := c.FeedItems(ctx)
	if err != nil {
		return nil
	}
	out := make(map[string]wire.FeedItem, len(items))
	for _, it := range items {
		out[it.ID] = it
	}
	return out
}

func newSessionsNewCmd(g *globals) *cobra.Command {
	var req wire.SessionCreate
	var set settingFlags
	cmd := &cobra.Command{
		Use:   "new",
		Short: "create a session and print its id on the last line",
		Long: "Create a session with the settings given (albedo sessions set changes them later) and print its\n" +
			"id on the last line. --system - reads the system text from standard input.",
		Args: cobra.NoArgs,
		RunE: g.withClient(func(ctx context.Context, c *client.Client, _ []string) error {
			p, err := set.patch(g)
			if err != nil {
				return err
			}
			req.Title, req.Model, req.Effort, req.System = deref(p.Title), deref(p.Model), deref(p.Effort), deref(p.System)
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
	set.add(cmd, true)
	cmd.Flags().StringVar(&req.Provider, "provider", "", "provider: echo, a profile of config.toml, or bot:NAME")
	cmd.Flags().StringVar(&req.Workspace, "workspace", "", "the session's directory: where a coding agent (an acp profile) works, an existing directory of the daemon's machine; for other providers a label, not interpreted")
	return cmd
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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

// rename sets s's title (patchSession: again on what it is now when it
// changed meanwhile).
func rename(ctx context.Context, c *client.Client, s wire.Session, title string) (wire.Session, error) {
	return patchSession(ctx, c, s, wire.SessionPatch{Title: &title})
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

// modelOf is the model a turn of s would use, as the daemon resolves it
// (its own, else its provider profile's default); a daemon too old to
// say gives the session's own.
func modelOf(s wire.Session) string { return cmp.Or(s.ResolvedModel, s.Model) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
