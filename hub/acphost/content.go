package acphost

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	acp "github.com/coder/acp-go-sdk"

	"albedo/wire"
)

// What of the agent's words the daemon keeps, each bounded: the text of
// a content block, a plan, a call's files, its diff and its output.

// blockText is a content block's text; other blocks (images, resources)
// are named, not kept.
func blockText(b acp.ContentBlock) string {
	switch {
	case b.Text != nil:
		return b.Text.Text
	case b.ResourceLink != nil:
		return fmt.Sprintf("[%s]", wire.CutUTF8(b.ResourceLink.Name, 256))
	case b.Image != nil:
		return "[an image]"
	case b.Audio != nil:
		return "[a sound]"
	case b.Resource != nil:
		return "[a resource]"
	}
	return ""
}

// planOf is the agent's plan, bounded.
func planOf(entries []acp.PlanEntry) []wire.PlanEntry {
	out := make([]wire.PlanEntry, 0, min(len(entries), wire.MaxPlanEntries))
	for _, e := range entries[:min(len(entries), wire.MaxPlanEntries)] {
		out = append(out, wire.PlanEntry{Content: wire.CutUTF8(e.Content, wire.MaxPlanEntryBytes), Priority: wire.CutUTF8(string(e.Priority), 32),
			Status: wire.CutUTF8(string(e.Status), 32)})
	}
	return out
}

// locationsOf is a call's files, bounded.
func locationsOf(ls []acp.ToolCallLocation) []wire.ToolLocation {
	if len(ls) == 0 {
		return nil
	}
	out := make([]wire.ToolLocation, 0, min(len(ls), wire.MaxToolLocations))
	for _, l := range ls[:min(len(ls), wire.MaxToolLocations)] {
		out = append(out, wire.ToolLocation{Path: wire.CutUTF8(l.Path, wire.MaxLocationPathLen), Line: l.Line})
	}
	return out
}

// toolKind is the agent's kind of a call as its tool's name says it:
// one of ACP's kinds, else other.
func toolKind(k string) string {
	switch acp.ToolKind(k) {
	case acp.ToolKindRead, acp.ToolKindEdit, acp.ToolKindDelete, acp.ToolKindMove, acp.ToolKindSearch, acp.ToolKindExecute,
		acp.ToolKindThink, acp.ToolKindFetch, acp.ToolKindSwitchMode:
		return k
	}
	return string(acp.ToolKindOther)
}

// maxDiffInput bounds a file's text that is diffed: past it the diff
// says the sizes only.
const maxDiffInput = 1 << 20

// diffOf is the unified diff of a call's diff content, bounded
// (wire.MaxToolDiffBytes), with paths relative to the workspace.
func diffOf(content []acp.ToolCallContent, workspace string) string {
	var b strings.Builder
	for _, c := range content {
		if c.Diff == nil {
			continue
		}
		old := ""
		if c.Diff.OldText != nil {
			old = *c.Diff.OldText
		}
		b.WriteString(unified(relPath(c.Diff.Path, workspace), old, c.Diff.NewText, c.Diff.OldText == nil))
		if b.Len() > wire.MaxToolDiffBytes {
			break
		}
	}
	return wire.CutNote(b.String(), wire.MaxToolDiffBytes, "diff")
}

// unified is the diff of one file; created says it did not exist.
func unified(path, old, new string, created bool) string {
	from := "a/" + path
	if created {
		from = "/dev/null"
	}
	if len(old) > maxDiffInput || len(new) > maxDiffInput {
		return fmt.Sprintf("--- %s\n+++ b/%s\n@@ too large to show: %d bytes, then %d @@\n", from, path, len(old), len(new))
	}
	if old == new {
		return ""
	}
	return udiff.Unified(from, "b/"+path, old, new)
}

// relPath is p relative to the workspace when it is inside it.
func relPath(p, workspace string) string {
	p = wire.CutUTF8(p, wire.MaxLocationPathLen)
	if rel, err := filepath.Rel(workspace, p); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return strings.TrimPrefix(p, "/")
}

// outputOf is a call's content as its output: its text blocks, and the
// output of the commands it ran.
func (a *agent) outputOf(content []acp.ToolCallContent) string {
	var b strings.Builder
	for _, c := range content {
		switch {
		case c.Content != nil:
			b.WriteString(blockText(c.Content.Content))
			b.WriteString("\n")
		case c.Terminal != nil:
			if t, err := a.terminals.get(c.Terminal.TerminalId); err == nil {
				b.WriteString(t.output().Output)
			}
		}
		if b.Len() > wire.MaxToolOutput {
			break
		}
	}
	return wire.CutNote(strings.TrimSuffix(b.String(), "\n"), wire.MaxToolOutput, "output")
}

// maxStderr bounds what is kept of an agent's stderr.
const maxStderr = 64 << 10

// quietLogger is the SDK's logger for a connection: its errors (a line
// that is no JSON, a notification it could not handle) at debug level,
// each attribute cut short, so that an agent that writes garbage without
// end fills no log.
func quietLogger(l *slog.Logger) *slog.Logger { return slog.New(quiet{l.Handler()}) }

type quiet struct{ h slog.Handler }

func (q quiet) Enabled(ctx context.Context, _ slog.Level) bool {
	return q.h.Enabled(ctx, slog.LevelDebug)
}

func (q quiet) Handle(ctx context.Context, r slog.Record) error {
	n := slog.NewRecord(r.Time, slog.LevelDebug, "acp: "+r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		n.AddAttrs(slog.String(a.Key, wire.CutUTF8(a.Value.String(), 256)))
		return true
	})
	return q.h.Handle(ctx, n)
}

func (q quiet) WithAttrs(as []slog.Attr) slog.Handler { return quiet{q.h.WithAttrs(as)} }
func (q quiet) WithGroup(name string) slog.Handler    { return quiet{q.h.WithGroup(name)} }
