package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

func newBotsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "bots", Short: "manage bot tokens (add, ls, rm)"}
	cmd.AddCommand(newBotsAddCmd(g), newBotsLsCmd(g), newBotsRmCmd(g))
	return cmd
}

func newBotsAddCmd(g *globals) *cobra.Command {
	var sessions string
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "make a bot token; it is printed once and stored only as a hash",
		Long: "Make a token for bot NAME, which serves the sessions whose provider is bot:NAME.\n" +
			"--sessions limits it to some sessions, each named as SESSION is below.\n\n" + sessionArgHelp,
		Args: cobra.ExactArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			var ids []string
			for name := range strings.SplitSeq(sessions, ",") {
				if name = strings.TrimSpace(name); name == "" {
					continue
				}
				s, err := c.ResolveSession(ctx, name)
				if err != nil {
					return err
				}
				ids = append(ids, s.ID)
			}
			t, err := c.AddBot(ctx, args[0], ids)
			if client.Code(err) == wire.CodeConflict {
				return fmt.Errorf("a bot named %q already exists (albedo bots rm %s, then add it again, makes a new token)", args[0], args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stderr, "bot %q: keep this token, it is not shown again; websocket %s\n", t.Name, client.WSURL(c.Snapshot().BaseURL))
			fmt.Fprintln(g.stdout, t.Token)
			return nil
		}),
	}
	cmd.Flags().StringVar(&sessions, "sessions", "", "limit the bot to these sessions (comma-separated)")
	_ = cmd.RegisterFlagCompletionFunc("sessions", g.completeSessionList)
	return cmd
}

func newBotsLsCmd(g *globals) *cobra.Command {
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "list bots: the sessions each may serve, its connections, when it was made",
		Args:  cobra.NoArgs,
		RunE: g.withClient(func(ctx context.Context, c *client.Client, _ []string) error {
			bots, err := c.Bots(ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSONList(g.stdout, bots)
			}
			if len(bots) == 0 {
				printf(g.stdout, "no bots yet: albedo bots add NAME\n")
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSESSIONS\tSERVING\tCREATED")
			for _, b := range bots {
				s := strings.Join(b.Sessions, ",")
				if s == "" {
					s = "all"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", b.Name, s, b.Serving, humanTime(b.CreatedAt))
			}
			return tw.Flush()
		}),
	}
	asJSON = jsonFlag(cmd)
	return cmd
}

// humanTime shows an API timestamp (RFC 3339, nanoseconds) to the second,
// in local time; one it cannot read is shown as it came.
func humanTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func newBotsRmCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "revoke a bot's token and close its connections",
		Args:  cobra.ExactArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			err := c.RemoveBot(ctx, args[0])
			if client.Code(err) == wire.CodeNotFound {
				return &exitError{code: exitNotFound, err: fmt.Errorf("no bot named %q (albedo bots ls lists them)", args[0])}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "bot %q removed\n", args[0])
			return nil
		}),
		ValidArgsFunction: g.completeBots,
	}
}

// completeBots completes bots rm's NAME from a running daemon's bots.
func (g *globals) completeBots(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c := g.completionClient()
	if c == nil || len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
	defer cancel()
	bots, _ := c.Bots(ctx)
	var out []cobra.Completion
	for _, b := range bots {
		if strings.HasPrefix(b.Name, toComplete) {
			out = append(out, b.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
