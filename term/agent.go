package term

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"
)

// A coding agent's doings (a session whose provider is an acp profile):
// its calls' titles, files and diffs in their blocks (toolblock.go), and,
// below the transcript while its turn runs, its plan, its thinking folded
// to its last line, and the output of the command it runs:
//
//	▤ plan
//	  ◐ say hello
//	  ○ stop
//	✻ thinking: it over… (Ctrl-O shows all)
//	  $ go test ./...
//	  │ ok  albedo/wire 0.2s

// Styles of diffs.
var (
	stAdded   = stBase.Foreground(tcell.ColorGreen)
	stRemoved = stBase.Foreground(tcell.ColorRed)
	stHunk    = stBase.Foreground(tcell.ColorTeal)
)

// agentLines is what the session's agent is doing, for o: nothing when
// no turn runs or the agent says nothing.
func (s *SessionView) agentLines(o look) []line {
	a := s.Agent
	if a == nil || !s.running() {
		return nil
	}
	var out []line
	if len(a.Plan) > 0 {
		out = append(out, line{text: "▤ plan", style: stDim})
		for _, e := range a.Plan {
			mark, st := "○ ", stDim
			switch e.Status {
			case "in_progress":
				mark, st = "◐ ", stBase
			case "completed":
				mark, st = "● ", stDone
			}
			for i, l := range wrap(e.Content, o.width-4) {
				if i > 0 {
					mark = "  "
				}
				out = append(out, line{text: "  " + mark + l, style: st})
			}
		}
	}
	if t := strings.TrimSpace(a.Thought); t != "" {
		if o.whole {
			out = appendText(out, "✻ thinking: "+t, o.width, stDim)
		} else {
			last := t[strings.LastIndexByte(t, '\n')+1:]
			out = append(out, line{text: truncate("✻ thinking: "+last+" … (Ctrl-O shows all)", o.width), style: stDim})
		}
	}
	if a.Output != nil && a.Output.Text != "" {
		lines := strings.Split(strings.TrimRight(a.Output.Text, "\n"), "\n")
		if !o.whole && len(lines) > toolFoldShow {
			lines = lines[len(lines)-toolFoldShow:]
		}
		for _, l := range lines {
			out = append(out, spanLine([]span{{"  │ ", stDim}, {truncate(l, o.width-4), stBase}}, stBase))
		}
	}
	return out
}

// agentHead is an agent's call's heading: its title, and the tool as a
// label (acp:edit); false for other calls.
func agentHead(c *toolCall) (string, bool) {
	if c.call == nil || c.call.Title == nil || *c.call.Title == "" || !strings.HasPrefix(c.call.Tool, "acp:") {
		return "", false
	}
	return *c.call.Title, true
}

// locationLines are the files an agent's call touches.
func locationLines(c *toolCall, o look) []line {
	if c.call == nil || len(c.call.Locations) == 0 {
		return nil
	}
	var out []line
	for i, l := range c.call.Locations {
		if i == maxLocationsShown && !o.whole {
			out = append(out, line{text: fmt.Sprintf("  ▸ %d more files", len(c.call.Locations)-i), style: stDim})
			break
		}
		p := l.Path
		if l.Line != nil {
			p += fmt.Sprintf(":%d", *l.Line)
		}
		out = append(out, line{text: truncate("  ▸ "+p, o.width), style: stDim})
	}
	return out
}

// maxLocationsShown is how many of a call's files show, folded.
const maxLocationsShown = 4

// diffLines is a unified diff, each line in its colour, folded as a
// tool's output is.
func diffLines(diff string, o look) []line {
	diff = strings.TrimRight(diff, "\n")
	if diff == "" {
		return nil
	}
	return foldText(diff, o.width-2, o.whole, func(l string) line {
		st := stDim
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			st = stTool
		case strings.HasPrefix(l, "@@"):
			st = stHunk
		case strings.HasPrefix(l, "+"):
			st = stAdded
		case strings.HasPrefix(l, "-"):
			st = stRemoved
		}
		return line{text: "  " + l, style: st}
	})
}

// showsDiff says whether a call's block shows a diff: the result's, or
// the call's while it has none.
func showsDiff(c *toolCall) string {
	if c.result != nil && c.result.Diff != "" {
		return c.result.Diff
	}
	if c.call != nil {
		return c.call.Diff
	}
	return ""
}
