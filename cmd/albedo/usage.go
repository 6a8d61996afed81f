package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"albedo/client"
)

func newUsageCmd(g *globals) *cobra.Command {
	var by, since string
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "what the turns cost: tokens and money, by session, member, provider or day",
		Long: "Sum what the turns reported since --since (a day, 2026-12-01, or a time; the last 30 days by\n" +
			"default), grouped --by session, member, provider or day, the most costly first. Cost is in USD,\n" +
			"by the prices of each provider's profile in config.toml; a turn whose provider reported no usage\n" +
			"is counted as unreported, not as zero. Admins only.",
		Args: cobra.NoArgs,
		RunE: g.withClient(func(ctx context.Context, c *client.Client, _ []string) error {
			r, err := c.Usage(ctx, by, since)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSONList(g.stdout, r.Totals)
			}
			if len(r.Totals) == 0 {
				printf(g.stdout, "no turns since %s\n", r.Since)
				return nil
			}
			label := usageLabels(ctx, c, r.By)
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			printf(tw, "%s\tTURNS\tUNREPORTED\tINPUT\tCACHED\tOUTPUT\tREASONING\tCOST (USD)\t\n", strings.ToUpper(r.By))
			for _, t := range r.Totals {
				cost := "—"
				if t.Cost != nil {
					cost = fmt.Sprintf("%.4f", *t.Cost)
				}
				printf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", label(t.Key), t.Turns, t.Unreported, t.InputTokens, t.CachedTokens, t.OutputTokens, t.ReasoningTokens, cost)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVar(&by, "by", "session", "session, member, provider, participant or day")
	cmd.Flags().StringVar(&since, "since", "", "a day (2026-12-01) or a time (RFC 3339); default: the last 30 days")
	asJSON = jsonFlag(cmd)
	return cmd
}

// usageLabels names a usage group's key for people: a session by its
// title, a member by name, the daemon's own calls (titles and
// compactions, which no one asked for) as such; an id it cannot name
// (a session deleted, a member removed) as it is. --json keeps the ids.
func usageLabels(ctx context.Context, c *client.Client, by string) func(string) string {
	names := map[string]string{"": "(albedo: titles, compactions)", "owner": "owner"}
	switch by {
	case "session":
		if ss, err := c.Sessions(ctx); err == nil {
			for _, s := range ss {
				if s.Title != "" {
					names[s.ID] = s.Title + " (" + shortID(s.ID) + ")"
				}
			}
		}
	case "member":
		if ms, err := c.Members(ctx); err == nil {
			for _, m := range ms {
				names[m.ID] = m.Name
			}
		}
	}
	return func(key string) string {
		if n, ok := names[key]; ok {
			return n
		}
		return key
	}
}

// shortID is the end of a long session id (a UUID's last 8 digits, which
// tell sessions made the same millisecond apart), or the id.
func shortID(id string) string {
	if len(id) > 12 {
		return "…" + id[len(id)-8:]
	}
	return id
}
