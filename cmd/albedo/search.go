package main

import (
	"cmp"
	"context"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

func newSearchCmd(g *globals) *cobra.Command {
	var session string
	var limit int
	var all bool
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "search TEXT",
		Short: "find messages in every session you may read, newest first",
		Long: "Find the messages holding TEXT in every session the token may read (or in --session), newest\n" +
			"first, each with its session, offset, author, time and the words around the match, between « ».\n" +
			"TEXT takes words (any case), \"a phrase\", pre* for a prefix, a OR b, and -word to leave one out.\n" +
			"The first --limit hits are printed; --all pages through every one.",
		Args: cobra.MinimumNArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			id := ""
			if session != "" {
				s, err := c.ResolveSession(ctx, session)
				if err != nil {
					return err
				}
				id = s.ID
			}
			var found []wire.SearchResult
			after := ""
			for {
				page, err := c.Search(ctx, strings.Join(args, " "), id, after, limit)
				if err != nil {
					return err
				}
				found = append(found, page.Results...)
				if after = page.Next; after == "" || !all {
					break
				}
			}
			if *asJSON {
				return printJSONList(g.stdout, found)
			}
			if len(found) == 0 {
				printf(g.stdout, "nothing found\n")
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			printf(tw, "SESSION\tOFFSET\tAUTHOR\tAT\tTEXT\n")
			for _, r := range found {
				printf(tw, "%s\t%d\t%s\t%s\t%s\n", cmp.Or(r.Title, r.Session), r.Offset, cmp.Or(r.Author, string(r.Role)), r.At.Local().Format("2006-01-02 15:04"),
					strings.Join(strings.Fields(r.Text), " "))
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVar(&session, "session", "", "search this session only (an id, or a title)")
	cmd.Flags().IntVar(&limit, "limit", 20, "hits per page, 1 to 100")
	cmd.Flags().BoolVar(&all, "all", false, "page through every hit, not only the first page")
	asJSON = jsonFlag(cmd)
	return cmd
}
