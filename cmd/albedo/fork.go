package main

import (
	"text/tabwriter"

	"github.com/spf13/cobra"

	"albedo/wire"
)

func newForkCmd(g *globals) *cobra.Command {
	var req wire.ForkRequest
	cmd := &cobra.Command{
		Use:   "fork SESSION --at N [--title T] [--rerun]",
		Short: "make a new session from a session's history up to an event",
		Long: "Make a fork: a new session whose history is SESSION's events 1..N, exactly as they are,\n" +
			"followed by its own. The original is left as it is. The fork has SESSION's provider, model,\n" +
			"effort and system text, and its title unless --title gives one. It prints the fork's id alone,\n" +
			"for a script to take.\n\n" +
			"--rerun runs a turn again in the fork: N is then a user's message (its input runs again) or an\n" +
			"assistant's reply (the input it answered runs again, and the fork ends at that input). To edit\n" +
			"a message and send it again, fork at the event before it and send the new text to the fork.\n\n" +
			sessionArgHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if req.At < 1 {
				return usageErrorf("--at is the offset of an event of the session, 1 or more")
			}
			c, s, err := g.named(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			f, err := c.Fork(cmd.Context(), s.ID, req)
			if err != nil {
				return err
			}
			printf(g.stdout, "%s\n", f.ID)
			return nil
		},
		ValidArgsFunction: g.completeSessions,
	}
	cmd.Flags().Int64Var(&req.At, "at", 0, "the offset of the last event of SESSION the fork holds")
	cmd.Flags().StringVar(&req.Title, "title", "", "the fork's title (default: the session's)")
	cmd.Flags().BoolVar(&req.Rerun, "rerun", false, "run the input at --at (or the one the reply there answered) again in the fork")
	return cmd
}

func newForksCmd(g *globals) *cobra.Command {
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "forks SESSION",
		Short: "list the forks of a session, by the point they were made at",
		Long:  "List the forks of SESSION that you may read: each with the offset it was forked at.\n\n" + sessionArgHelp,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, s, err := g.named(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			forks, err := c.Forks(cmd.Context(), s.ID)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSONList(g.stdout, forks)
			}
			if len(forks) == 0 {
				printf(g.stdout, "%s has no forks\n", s.ID)
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			printf(tw, "AT\tID\tTITLE\tEVENTS\n")
			for _, f := range forks {
				printf(tw, "%d\t%s\t%s\t%d\n", f.Parent.Offset, f.ID, f.Title, f.Head)
			}
			return tw.Flush()
		},
		ValidArgsFunction: g.completeSessions,
	}
	asJSON = jsonFlag(cmd)
	return cmd
}
