package main

import (
	"context"
	"fmt"
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
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			printf(tw, "%s\tTURNS\tUNREPORTED\tINPUT\tCACHED\tOUTPUT\tREASONING\tCOST (USD)\t\n", r.By)
			for _, t := range r.Totals {
				cost := "—"
				if t.Cost != nil {
					cost = fmt.Sprintf("%.4f", *t.Cost)
				}
				printf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", t.Key, t.Turns, t.Unreported, t.InputTokens, t.CachedTokens, t.OutputTokens, t.ReasoningTokens, cost)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVar(&by, "by", "session", "session, member, provider or day")
	cmd.Flags().StringVar(&since, "since", "", "a day (2026-12-01) or a time (RFC 3339); default: the last 30 days")
	asJSON = jsonFlag(cmd)
	return cmd
}
