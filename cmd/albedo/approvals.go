package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

// pendingCall is one call waiting for a decision, with its session.
type pendingCall struct {
	Session string `json:"session"`
	Title   string `json:"title"`
	wire.Approval
}

func newApprovalsCmd(g *globals) *cobra.Command {
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "approvals [SESSION]",
		Short: "the tool calls waiting for a decision, in one session or in every session you may see",
		Long: "List the tool calls that wait for a person's decision: in SESSION, or in every session you may\n" +
			"see. Decide one with `albedo approve SESSION CALL`. " + sessionArgHelp,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: g.completeSessions,
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			calls, err := pendingCalls(ctx, c, args)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSONList(g.stdout, calls)
			}
			if len(calls) == 0 {
				printf(g.stdout, "no tool calls wait for a decision\n")
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			printf(tw, "SESSION\tCALL\tTOOL\tARGUMENTS\tEXPIRES\n")
			for _, p := range calls {
				printf(tw, "%s\t%s\t%s\t%s\t%s\n", client.ShortID(p.Session), p.CallID, p.Tool, clip(string(p.Arguments), 60),
					time.Until(p.ExpiresAt).Round(time.Second))
			}
			return tw.Flush()
		}),
	}
	asJSON = jsonFlag(cmd)
	return cmd
}

// pendingCalls lists the calls waiting in the session args names, or in
// every session in phase approval.
func pendingCalls(ctx context.Context, c *client.Client, args []string) ([]pendingCall, error) {
	var sessions []wire.Session
	if len(args) == 1 {
		s, err := c.ResolveSession(ctx, args[0])
		if err != nil {
			return nil, err
		}
		sessions = []wire.Session{s}
	} else {
		all, err := c.Sessions(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range all {
			if s.Phase == wire.PhaseApproval {
				sessions = append(sessions, s)
			}
		}
	}
	out := []pendingCall{}
	for _, s := range sessions {
		a, err := c.Approvals(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		for _, ap := range a.Approvals {
			out = append(out, pendingCall{Session: s.ID, Title: s.Title, Approval: ap})
		}
	}
	return out, nil
}

func newApproveCmd(g *globals) *cobra.Command {
	var forSession, deny bool
	var reason string
	cmd := &cobra.Command{
		Use:   "approve SESSION CALL",
		Short: "allow a tool call that waits for a decision (--session: and its tool for the rest of the session; --deny: refuse it)",
		Long: "Decide a tool call that waits (`albedo approvals` lists them): allow it, allow it and every later\n" +
			"call of its tool in the session (--session), or refuse it (--deny). The first decision wins; one\n" +
			"made after it fails. " + sessionArgHelp,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: g.completeSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if forSession && deny {
				return usageErrorf("--session and --deny exclude each other")
			}
			d := wire.Decision{Decision: wire.DecisionAllow, Reason: reason}
			switch {
			case forSession:
				d.Decision = wire.DecisionAllowSession
			case deny:
				d.Decision = wire.DecisionDeny
			}
			ctx := cmd.Context()
			c, s, err := g.named(ctx, args[0])
			if err != nil {
				return err
			}
			ev, err := c.Decide(ctx, s.ID, args[1], d)
			if err != nil {
				return err
			}
			printf(g.stdout, "%s: %s (event %d)\n", ev.CallID, ev.Decision, ev.Offset)
			return nil
		},
	}
	cmd.Flags().BoolVar(&forSession, "session", false, "allow the call's tool for the rest of the session too")
	cmd.Flags().BoolVar(&deny, "deny", false, "refuse the call")
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the log and the model")
	return cmd
}

// clip cuts s to n bytes or fewer, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return fmt.Sprint(s[:n], "…")
}
