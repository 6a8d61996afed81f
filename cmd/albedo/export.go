package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

func newExportCmd(g *globals) *cobra.Command {
	var format, blobs, all string
	cmd := &cobra.Command{
		Use:   "export SESSION [--format md|json] [--blobs DIR] | export --all DIR [--format md|json]",
		Short: "print a session's whole transcript: Markdown (md) or the API's events (json); --all: every session into files",
		Long: "Print a session's whole history to standard output.\n\n" +
			"--format md (the default) is a transcript to read: a heading per message with its role,\n" +
			"author and time, the text as written, and turn failures and setting changes as notes.\n" +
			"--format json is one JSON object: {\"session\": …, \"events\": [ … ]}, the session and every\n" +
			"event exactly as the API gives them (GET /v1/sessions/{id}/events, paged to the end).\n" +
			"--blobs DIR writes the files its messages carry into DIR, each named by its sha256, for\n" +
			"albedo import --blobs DIR (which looks for FILE.blobs beside FILE by default).\n\n" +
			"--all DIR writes every session you may read into DIR instead, a file each, named by its title\n" +
			"and short id (plans-0039d669.md, or .json), and the files its messages carry into NAME.blobs\n" +
			"beside it (where albedo import looks), or all into --blobs DIR.\n\n" +
			sessionArgHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("all") {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "md" && format != "json" {
				return usageErrorf("--format is md or json, not %q", format)
			}
			if cmd.Flags().Changed("all") {
				if all == "" {
					return usageErrorf("--all takes the directory to write the sessions into")
				}
				return exportAll(cmd.Context(), g, all, format, blobs)
			}
			c, s, err := g.named(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			w := bufio.NewWriter(g.stdout)
			if err := exportOne(cmd.Context(), c, s, format, w); err != nil {
				return err
			}
			if blobs != "" {
				if err := os.MkdirAll(blobs, 0o700); err != nil {
					return err
				}
				if err := exportBlobs(cmd.Context(), c, s, blobs); err != nil {
					return err
				}
			}
			return w.Flush()
		},
		ValidArgsFunction: g.completeSessions,
	}
	cmd.Flags().StringVar(&format, "format", "md", "md (a readable transcript) or json (the API's events)")
	cmd.Flags().StringVar(&blobs, "blobs", "", "write the files the session's messages carry into this directory, each named by its sha256")
	cmd.Flags().StringVar(&all, "all", "", "write every session you may read into this directory, a file each (no SESSION then)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]cobra.Completion{"md", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// exportOne writes s in format (md or json) to w.
func exportOne(ctx context.Context, c *client.Client, s wire.Session, format string, w io.Writer) error {
	if format == "json" {
		return exportJSON(ctx, c, s, w)
	}
	return exportMarkdown(ctx, c, s, w)
}

// exportJSON writes {"session": s, "events": [...]}, each event as the
// daemon sent it, one per line so that a long history diffs and greps well.
func exportJSON(ctx context.Context, c *client.Client, s wire.Session, w io.Writer) error {
	head, err := json.Marshal(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "{\"session\": %s,\n\"events\": [", head)
	sep := "\n"
	err = c.AllEvents(ctx, s.ID, func(raw json.RawMessage, _ wire.Event) error {
		_, err := fmt.Fprintf(w, "%s%s", sep, raw)
		sep = ",\n"
		return err
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(w, "\n]}\n")
	return err
}

// exportMarkdown writes the transcript for people to read.
func exportMarkdown(ctx context.Context, c *client.Client, s wire.Session, w io.Writer) error {
	title := s.Title
	if title == "" {
		title = "Session " + client.ShortID(s.ID)
	}
	fmt.Fprintf(w, "# %s\n\n", title)
	provider := orDash(providerOf(s))
	if s.Provider == "" && s.ResolvedProvider != "" {
		provider += " (the daemon's default)"
	}
	fmt.Fprintf(w, "- id: `%s`\n- provider: %s\n", s.ID, provider)
	if s.Model != "" {
		fmt.Fprintf(w, "- model: %s\n", s.Model)
	}
	fmt.Fprintf(w, "- created: %s\n", s.CreatedAt.UTC().Format(time.RFC3339))
	if p := s.Parent; p != nil {
		fmt.Fprintf(w, "- forked from: `%s` at #%d (its events 1–%d are the parent's)\n", p.Session, p.Offset, p.Offset)
	}
	return c.AllEvents(ctx, s.ID, func(_ json.RawMessage, ev wire.Event) error {
		_, err := io.WriteString(w, markdownEvent(ev))
		return err
	})
}

// markdownEvent is one event of a Markdown transcript; "" for the ones a
// reader does not need (a turn that started, one that completed).
func markdownEvent(ev wire.Event) string {
	at := ev.At.UTC().Format("2006-01-02 15:04:05Z")
	switch ev.Type {
	case wire.EventMessage:
		who := string(ev.Role)
		if ev.Author != "" && ev.Author != who {
			who += " (" + ev.Author + ")"
		}
		note := ""
		if ev.State != "" && ev.State != wire.MessageComplete {
			note = " — " + ev.State
		}
		return fmt.Sprintf("\n## %s%s\n\n<sub>#%d · %s</sub>\n\n%s\n", who, note, ev.Offset, at, strings.TrimRight(ev.Text, "\n"))
	case wire.EventTurn:
		switch ev.State {
		case wire.TurnFailed:
			return fmt.Sprintf("\n> **The turn failed** (%s): %s\n", at, ev.Error)
		case wire.TurnInterrupted:
			return fmt.Sprintf("\n> **The turn was interrupted** (%s): %s\n", at, ev.Reason)
		}
	case wire.EventCompaction:
		return fmt.Sprintf("\n> *Messages #%d–#%d compacted for the model* (by %s, summary by %s, %s):\n>\n> %s\n",
			ev.From, ev.To, orDash(ev.By), orDash(ev.Author), at, strings.ReplaceAll(strings.TrimRight(ev.Text, "\n"), "\n", "\n> "))
	case wire.EventSettings:
		var set []string
		for _, f := range []struct {
			name string
			v    *string
		}{{"title", ev.Title}, {"model", ev.Model}, {"effort", ev.Effort}, {"tools", ev.Tools}} {
			if f.v != nil {
				set = append(set, fmt.Sprintf("%s %q", f.name, *f.v))
			}
		}
		return fmt.Sprintf("\n> *%s set %s* (%s)\n", orDash(ev.By), strings.Join(set, ", "), at)
	case wire.EventToolCall, wire.EventApproval, wire.EventToolResult:
		return markdownCall(ev, at)
	}
	return ""
}

// markdownCall is a tool call's event in a Markdown transcript: the call
// (after what the model said before it) with its arguments, a person's
// decision, and the result with its output.
func markdownCall(ev wire.Event, at string) string {
	switch ev.Type {
	case wire.EventToolCall:
		said := ""
		if ev.Text != "" {
			said = fmt.Sprintf("\n## assistant (%s)\n\n<sub>#%d · %s</sub>\n\n%s\n", orDash(ev.Author), ev.Offset, at, strings.TrimRight(ev.Text, "\n"))
		}
		return said + fmt.Sprintf("\n> **Tool call** `%s` (%s, %s, call %s):\n>\n> ```json\n> %s\n> ```\n", ev.Tool, ev.Policy, at, ev.CallID, orDash(string(ev.Arguments)))
	case wire.EventApproval:
		reason := ""
		if ev.Reason != "" {
			reason = ": " + ev.Reason
		}
		return fmt.Sprintf("\n> *%s decided %s* on call %s (%s)%s\n", orDash(ev.Author), ev.Decision, ev.CallID, at, reason)
	}
	out := fmt.Sprintf("\n> **Tool result** (%s, call %s, %s)", ev.State, ev.CallID, at)
	if ev.Error != "" {
		out += ": " + ev.Error
	}
	if ev.Text == "" {
		return out + "\n"
	}
	return out + ":\n>\n> ```\n> " + strings.ReplaceAll(strings.TrimRight(ev.Text, "\n"), "\n", "\n> ") + "\n> ```\n"
}
