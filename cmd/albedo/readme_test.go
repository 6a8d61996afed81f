package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The pages that document the commands, from this package's directory:
// docs/cli.md has the commands, their table and the exit statuses;
// docs/server.md has the daemon's flags.
const (
	cliDoc    = "../../docs/cli.md"
	serverDoc = "../../docs/server.md"
)

// The Commands table of docs/cli.md and the command tree agree: every
// command that `albedo --help` lists (at any depth) has a row, save those
// that only group others (bots, completion), every row names commands
// that exist, and every --flag a row shows is a flag of its command.
func TestDocCommandsTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows := commandRows(t, string(b))
	root := newRoot(strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
	root.InitDefaultVersionFlag()

	documented := map[string]bool{}
	for _, r := range rows {
		for _, span := range r.spans {
			for _, path := range spanPaths(span) {
				documented[path] = true
				cmd, rest, err := root.Find(strings.Fields(path))
				if err != nil || len(rest) > 0 || cmd.CommandPath() != strings.TrimSpace("albedo "+path) {
					t.Errorf("docs/cli.md row %q: no command %q", r.cell, "albedo "+path)
					continue
				}
				for _, f := range spanFlags(span) {
					if cmd.Flag(f) == nil {
						t.Errorf("docs/cli.md row %q: %q has no flag --%s", r.cell, cmd.CommandPath(), f)
					}
				}
			}
		}
	}
	walk(root, func(cmd *cobra.Command) {
		path := strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), "albedo"), " ")
		if !documented[path] && cmd.Annotations[groupOnly] == "" {
			t.Errorf("docs/cli.md's Commands table has no row for %q", cmd.CommandPath())
		}
	})
}

// walk calls fn with cmd and every command under it that its help lists.
func walk(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			walk(sub, fn)
		}
	}
}

type commandRow struct {
	cell  string   // the first cell, as written
	spans []string // its code spans, \| unescaped
}

// commandRows reads the table of the "## Commands" section of docs/cli.md.
func commandRows(t *testing.T, doc string) []commandRow {
	t.Helper()
	_, sec, ok := strings.Cut(doc, "\n## Commands\n")
	if !ok {
		t.Fatal(`docs/cli.md has no "## Commands" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	// A cell ends at a | that is not escaped (\| is a | inside a cell).
	cellEnd := regexp.MustCompile(`[^\\]\|`)
	spanRE := regexp.MustCompile("`([^`]+)`")
	var rows []commandRow
	for line := range strings.SplitSeq(sec, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue // not a row, or the header
		}
		loc := cellEnd.FindStringIndex(line[1:])
		if loc == nil {
			t.Fatalf("docs/cli.md row without cells: %q", line)
		}
		cell := strings.TrimSpace(line[1 : loc[0]+2])
		r := commandRow{cell: cell}
		for _, m := range spanRE.FindAllStringSubmatch(cell, -1) {
			r.spans = append(r.spans, strings.ReplaceAll(m[1], `\|`, "|"))
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal("docs/cli.md's Commands section has no table rows")
	}
	return rows
}

var commandWord = regexp.MustCompile(`^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)*$`)

// spanPaths are the command paths a code span names, under albedo: its
// leading lower-case words ("albedo" dropped), with a|b giving one path
// each. Arguments (upper case) and flags end them.
func spanPaths(span string) []string {
	words := strings.Fields(span)
	if len(words) > 0 && words[0] == "albedo" {
		words = words[1:]
	}
	paths := []string{""}
	for _, w := range words {
		if !commandWord.MatchString(w) {
			break
		}
		var next []string
		for _, p := range paths {
			for alt := range strings.SplitSeq(w, "|") {
				next = append(next, strings.TrimSpace(p+" "+alt))
			}
		}
		paths = next
	}
	return slices.Compact(paths)
}

// spanFlags are the long flags a code span shows, without their dashes.
func spanFlags(span string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(span, -1) {
		out = append(out, m[1])
	}
	return out
}

// Every flag a user can see (not hidden, not help) is named somewhere as
// --flag in docs/cli.md (the Commands table, the flags of every command)
// or in docs/server.md (the daemon's flags), which the table points to.
// The table test checks the other way round only: that what the docs
// name exists, not that what exists is named.
func TestDocNamesEveryFlag(t *testing.T) {
	t.Parallel()
	var docs string
	for _, p := range []string{cliDoc, serverDoc} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs += string(b)
	}
	root := newRoot(strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
	root.InitDefaultVersionFlag()
	walk(root, func(cmd *cobra.Command) {
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			if !regexp.MustCompile(`--` + regexp.QuoteMeta(f.Name) + `\b`).MatchString(docs) {
				t.Errorf("neither docs/cli.md nor docs/server.md names %s's flag --%s", cmd.CommandPath(), f.Name)
			}
		})
	})
}

// The exit statuses the table of docs/cli.md lists are exactly the ones
// the code has, and `send --help` lists each one send can end with.
func TestDocExitStatuses(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n| status | means |\n")
	if !ok {
		t.Fatal("docs/cli.md has no exit status table")
	}
	var listed []int
	for line := range strings.SplitSeq(table, "\n") {
		m := regexp.MustCompile(`^\| (\d+) \|`).FindStringSubmatch(line)
		if m == nil {
			if strings.HasPrefix(line, "| ---") {
				continue
			}
			break
		}
		n, _ := strconv.Atoi(m[1])
		listed = append(listed, n)
	}
	all := []int{0, exitOther, exitUsage, exitHomeLocked, exitNotFound, exitTurnFailed, exitInterrupted, exitGaveUp}
	if !slices.Equal(listed, all) {
		t.Errorf("docs/cli.md's exit statuses %v, the code's %v", listed, all)
	}
	for _, n := range []int{0, exitOther, exitUsage, exitNotFound, exitTurnFailed, exitInterrupted, exitGaveUp} {
		if !strings.Contains(sendHelp, fmt.Sprintf("\n  %d  ", n)) {
			t.Errorf("send --help does not list exit status %d", n)
		}
	}
}
