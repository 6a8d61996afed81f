package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"albedo/client"
)

func newModelsCmd(g *globals) *cobra.Command {
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "models [PROVIDER]",
		Short: "list the models a provider serves (the default provider's without one), for sessions set --model",
		Args:  cobra.MaximumNArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			ms, err := c.Models(ctx, name)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSONList(g.stdout, ms.Models)
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MODEL\tNAME\tDEFAULT")
			for _, m := range ms.Models {
				def := ""
				if m.ID == ms.Default {
					def = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", m.ID, orDash(m.Name), def)
			}
			return tw.Flush()
		}),
	}
	asJSON = jsonFlag(cmd)
	return cmd
}
