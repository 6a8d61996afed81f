package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

func newTailCmd(g *globals) *cobra.Command {
	var after int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tail SESSION",
		Short: "follow a session until interrupted (--json: one push frame per line)",
		Long: "Follow a session until Ctrl-C: its last 100 events (or those after --after), then each as it\n" +
			"is committed. On a terminal a reply is shown as it streams; otherwise only committed messages\n" +
			"are printed. --json prints every push frame as received, one per line.\n\n" + sessionArgHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, s, err := g.named(ctx, args[0])
			if err != nil {
				return err
			}
			cur := client.Cursor{}
			if cmd.Flags().Changed("after") {
				cur = client.Cursor{Epoch: s.Epoch, Offset: after}
			}
			st := c.Stream(client.StreamOptions{})
			defer st.Close()
			sub := st.Subscribe(s.ID, cur)
			var p *replyPrinter
			if g.outTTY && !asJSON {
				p = &replyPrinter{w: g.stdout, prefix: "assistant: "}
			}
			for {
				it, err := sub.Next(ctx)
				if errors.Is(err, context.Canceled) {
					p.breakLine()
					return nil // Ctrl-C: done
				}
				if err != nil {
					return err
				}
				if asJSON {
					fmt.Fprintf(g.stdout, "%s\n", it.Raw)
					continue
				}
				printItem(g, p, it)
			}
		},
		ValidArgsFunction: g.completeSessions,
	}
	cmd.Flags().Int64Var(&after, "after", 0, "start after this offset (default: the last 100 events)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each push frame as received, one JSON object per line")
	return cmd
}

// printItem renders a push for people: committed messages and turn ends,
// and, through p (nil when stdout is not a terminal), replies as they
// stream.
func printItem(g *globals, p *replyPrinter, it client.Item) {
	switch it.Op {
	case wire.PushPartial, wire.PushDelta:
		p.text(it.Op, it.Text)
	case wire.PushReset:
		if it.Reset.More {
			p.breakLine()
			fmt.Fprintf(g.stdout, "… %d earlier events\n", it.Reset.Before)
		}
	case wire.PushEvent:
		printEvent(g, p, it.Event)
	}
}

func printEvent(g *globals, p *replyPrinter, ev *wire.Event) {
	switch ev.Type {
	case wire.EventMessage:
		note := ""
		if ev.State != wire.MessageComplete {
			note = " [" + ev.State + "]"
		}
		if ev.Role == wire.RoleAssistant && p.commit(ev, note) {
			return
		}
		p.breakLine()
		who := string(ev.Role)
		if ev.Author != "" && ev.Author != who {
			who += " " + ev.Author
		}
		fmt.Fprintf(g.stdout, "#%d %s%s: %s\n", ev.Offset, who, note, ev.Text)
	case wire.EventTurn:
		if ev.State != wire.TurnStarted && ev.State != wire.TurnCompleted {
			p.breakLine()
			why := ev.Reason + ev.Error
			fmt.Fprintf(g.stdout, "#%d turn %s (%s)\n", ev.Offset, ev.State, why)
		}
	case wire.EventCompaction:
		p.breakLine()
		fmt.Fprintf(g.stdout, "#%d compacted #%d–#%d (by %s): %s\n", ev.Offset, ev.From, ev.To, ev.By, ev.Text)
	case wire.EventSettings:
		p.breakLine()
		b := wire.Encode(struct {
			Title  *string `json:"title,omitempty"`
			Model  *string `json:"model,omitempty"`
			Effort *string `json:"effort,omitempty"`
			Tools  *string `json:"tools,omitempty"`
		}{ev.Title, ev.Model, ev.Effort, ev.Tools})
		fmt.Fprintf(g.stdout, "#%d settings by %s: %s\n", ev.Offset, ev.By, b)
	case wire.EventToolCall, wire.EventApproval, wire.EventToolResult:
		p.breakLine()
		fmt.Fprintln(g.stdout, callLine(ev))
	}
}

// callLine is a tool call's event on one line: the call with its
// arguments and policy (after what the model said before it), a
// decision with who made it, a result with the first line of its output
// or its error.
func callLine(ev *wire.Event) string {
	switch ev.Type {
	case wire.EventToolCall:
		said := ""
		if ev.Text != "" {
			said = fmt.Sprintf("#%d assistant %s: %s\n", ev.Offset, ev.Author, ev.Text)
		}
		return said + fmt.Sprintf("#%d tool call %s %s (%s) [%s]", ev.Offset, ev.Tool, clip(string(ev.Arguments), 200), ev.Policy, ev.CallID)
	case wire.EventApproval:
		return fmt.Sprintf("#%d %s by %s [%s] %s", ev.Offset, ev.Decision, ev.Author, ev.CallID, ev.Reason)
	}
	first, _, _ := strings.Cut(ev.Text, "\n")
	parts := []string{fmt.Sprintf("#%d tool result %s [%s]", ev.Offset, ev.State, ev.CallID)}
	for _, p := range []string{ev.Error, clip(first, 200)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}
