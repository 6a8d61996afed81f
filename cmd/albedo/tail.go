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
	var asJSON, follow bool
	var lines string
	cmd := &cobra.Command{
		Use:   "tail SESSION [-n [+]N [-f]]",
		Short: "follow a session until interrupted, or print its last messages (-n)",
		Long: "Follow a session until Ctrl-C: its last 100 events (or those after --after), then each as it\n" +
			"is committed. On a terminal a reply is shown as it streams; otherwise only committed messages\n" +
			"are printed. --json prints every push frame as received, one per line.\n\n" +
			"-n N prints the last N messages (with what tail shows between them: failed turns, tool calls,\n" +
			"settings) and ends, as tail(1) does; -n +N prints from event #N on. With -f it then follows.\n\n" +
			sessionArgHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, from, err := parseLines(lines, cmd.Flags().Changed("lines"))
			if err != nil {
				return err
			}
			withN := cmd.Flags().Changed("lines")
			if withN && (asJSON || cmd.Flags().Changed("after")) {
				return usageErrorf("-n prints for people and says where to start: give it without --json and --after")
			}
			ctx := cmd.Context()
			c, s, err := g.named(ctx, args[0])
			if err != nil {
				return err
			}
			cur := client.Cursor{}
			if cmd.Flags().Changed("after") {
				cur = client.Cursor{Epoch: s.Epoch, Offset: after}
			}
			if withN {
				top, err := printHistory(ctx, g, c, s, n, from)
				if err != nil || !follow {
					return err
				}
				cur = client.Cursor{Epoch: s.Epoch, Offset: top}
			}
			return followSession(ctx, g, c, s, cur, asJSON)
		},
		ValidArgsFunction: g.completeSessions,
	}
	cmd.Flags().Int64Var(&after, "after", 0, "start after this offset (default: the last 100 events)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each push frame as received, one JSON object per line")
	cmd.Flags().StringVarP(&lines, "lines", "n", "", "print the last N messages and end (+N: from event #N on); with -f follow after them")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "with -n: follow the session after what -n prints (without -n tail always follows)")
	return cmd
}

// followSession prints s's pushes from cur until Ctrl-C: for people, or
// with asJSON each frame as received.
func followSession(ctx context.Context, g *globals, c *client.Client, s wire.Session, cur client.Cursor, asJSON bool) error {
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
	if ev.Type == wire.EventMessage && ev.Role == wire.RoleAssistant && p.commit(ev, stateNote(ev)) {
		return
	}
	if line, ok := tailLine(ev); ok {
		p.breakLine()
		fmt.Fprintln(g.stdout, line)
	}
}

// stateNote marks a message that did not complete: " [interrupted]".
func stateNote(ev *wire.Event) string {
	if ev.State != wire.MessageComplete {
		return " [" + ev.State + "]"
	}
	return ""
}

// tailLine is what tail prints of a committed event, and whether it
// prints anything: not for a turn that started or completed, nor for
// the kinds of events it does not show.
func tailLine(ev *wire.Event) (string, bool) {
	switch ev.Type {
	case wire.EventMessage:
		who := string(ev.Role)
		if ev.Author != "" && ev.Author != who {
			who += " " + ev.Author
		}
		return fmt.Sprintf("#%d %s%s: %s", ev.Offset, who, stateNote(ev), ev.Text), true
	case wire.EventTurn:
		if ev.State != wire.TurnStarted && ev.State != wire.TurnCompleted {
			return fmt.Sprintf("#%d turn %s (%s)", ev.Offset, ev.State, ev.Reason+ev.Error), true
		}
	case wire.EventCompaction:
		return fmt.Sprintf("#%d compacted #%d–#%d (by %s): %s", ev.Offset, ev.From, ev.To, ev.By, ev.Text), true
	case wire.EventSettings:
		system := ev.System
		if system != nil {
			clipped := clip(*system, 200)
			system = &clipped
		}
		b := wire.Encode(struct {
			Title        *string   `json:"title,omitempty"`
			Model        *string   `json:"model,omitempty"`
			Effort       *string   `json:"effort,omitempty"`
			Tools        *string   `json:"tools,omitempty"`
			System       *string   `json:"system,omitempty"`
			Participants *[]string `json:"participants,omitempty"`
			Respond      *string   `json:"respond,omitempty"`
		}{ev.Title, ev.Model, ev.Effort, ev.Tools, system, ev.Participants, ev.Respond})
		return fmt.Sprintf("#%d settings by %s: %s", ev.Offset, ev.By, b), true
	case wire.EventToolCall, wire.EventApproval, wire.EventToolResult:
		return callLine(ev), true
	}
	return "", false
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
