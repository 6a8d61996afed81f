package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// runCLI runs albedo in-process with stdin (not a terminal) on a home of
// its own, and returns what it printed and its exit status. Only for
// commands that end before they need a daemon: a test binary cannot start
// one.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb strings.Builder
	root := newRoot(strings.NewReader(stdin), &out, &errb)
	root.SetArgs(append([]string{"--home", t.TempDir()}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		errb.WriteString(describe(err) + "\n")
		code = exitCode(err)
	}
	return out.String(), errb.String(), code
}

// Bad arguments exit 2 with a message saying what is wrong, before any
// daemon is asked.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args  []string
		stdin string
		want  string // in the message
	}{
		{[]string{"send"}, "", "requires at least 1 arg(s)"},
		{[]string{"send", "s"}, "", "the text is empty"},
		{[]string{"send", "s", "  ", "\t"}, "", "the text is empty"},
		{[]string{"send", "s", "-"}, " \n\n", "the text is empty"},
		{[]string{"send", "s", "hi", "--timeout", "soon"}, "", "invalid argument"},
		{[]string{"bogus"}, "", `unknown command "bogus"`},
		{[]string{"bots", "bogus"}, "", `unknown command "bogus" for "albedo bots"`},
		{[]string{"sessions", "--nope"}, "", "unknown flag: --nope"},
		{[]string{"sessions", "rm", "s"}, "", "give --yes"},
		{[]string{"sessions", "rename", "s"}, "", "requires at least 2 arg(s)"},
		{[]string{"sessions", "rename", "s", " "}, "", "the title is empty"},
		{[]string{"export", "s", "--format", "xml"}, "", `--format is md or json, not "xml"`},
		{[]string{"tail"}, "", "accepts 1 arg(s)"},
		{[]string{"tail", "s", "-n", "ten"}, "", `-n takes how many messages to print`},
		{[]string{"tail", "s", "-n", "+0"}, "", `-n +N starts at event #N`},
		{[]string{"tail", "s", "-n", "3", "--json"}, "", "without --json and --after"},
		{[]string{"sessions", "set", "s"}, "", "nothing to set: give --title, --model, --effort, --system or --temperature"},
		{[]string{"sessions", "set", "s", "--effort", "huge"}, "", `--effort is one of none, minimal, low, medium, high, xhigh, max (or "" for none), not "huge"`},
		{[]string{"sessions", "new", "--effort", "huge"}, "", `not "huge"`},
		{[]string{"sessions", "new", "--system", strings.Repeat("x", 32<<10+1)}, "", "the system text is 32769 bytes long; it may be 32768 at most"},
		{[]string{"sessions", "set", "s", "--title", strings.Repeat("t", 513)}, "", "the title is 513 bytes long; it may be 512 at most"},
		{[]string{"sessions", "set", "s", "--system", "-"}, strings.Repeat("x", 32<<10+1), "the system text is 32769 bytes long"},
		{[]string{"import", "f.json", "--title", " "}, "", "the title is blank"},
		{[]string{"export", "--all", ""}, "", "--all takes the directory"},
		{[]string{"export", "s", "--all", "d"}, "", "unknown command"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			_, stderr, code := runCLI(t, tt.stdin, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tt.want)
			}
		})
	}
}

func TestInputText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		words []string
		stdin string
		want  string
	}{
		{[]string{"hello", "world"}, "", "hello world"},
		{[]string{"two  spaces"}, "", "two  spaces"},
		{[]string{"-"}, "from\nstdin\n\n", "from\nstdin"},
		{[]string{"-", "x"}, "ignored", "- x"}, // "-" reads stdin only alone
	}
	for _, tt := range tests {
		got, err := inputText(tt.words, strings.NewReader(tt.stdin))
		if err != nil || got != tt.want {
			t.Errorf("inputText(%q) = %q, %v; want %q", tt.words, got, err, tt.want)
		}
	}
}

// Not parallel: it sets the package's version, which every command reads.
func TestVersion(t *testing.T) {
	stdout, _, code := runCLI(t, "", "--version")
	if code != 0 || !strings.HasPrefix(stdout, "albedo version "+wire.Version+"-dev (") {
		t.Fatalf("exit %d, printed %q", code, stdout)
	}
	defer func(v string) { version = v }(version)
	version = "9.9.9"
	if stdout, _, _ := runCLI(t, "", "--version"); !strings.HasPrefix(stdout, "albedo version 9.9.9 (") {
		t.Fatalf("with -X main.version=9.9.9: %q", stdout)
	}
}

// Completion offers short ids (described by titles) and titles (by short
// ids), and full ids once they are being typed.
func TestSessionNames(t *testing.T) {
	t.Parallel()
	ss := []wire.Session{
		{ID: "019ad2f1-7c00-7000-8000-00000039d669", Title: "notes"},
		{ID: "019ad2f1-7c00-7000-8000-0000aaaa1111"},
	}
	tests := []struct {
		toComplete string
		want       []string
	}{
		{"", []string{"0039d669\tnotes", "notes\t0039d669", "aaaa1111\t(untitled)"}},
		{"no", []string{"notes\t0039d669"}},
		{"aa", []string{"aaaa1111\t(untitled)"}},
		{"019ad2f1-7c00-7000-8000-0000a", []string{"019ad2f1-7c00-7000-8000-0000aaaa1111\t(untitled)"}},
		{"zz", nil},
	}
	for _, tt := range tests {
		got := sessionNames(ss, tt.toComplete)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("sessionNames(%q) = %q, want %q", tt.toComplete, got, tt.want)
		}
	}
}

func TestHumanTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 6, 45, 24, 123456789, time.UTC)
	if got, want := humanTime(at.Format(time.RFC3339Nano)), at.Local().Format("2006-01-02 15:04:05"); got != want {
		t.Fatalf("humanTime = %q, want %q", got, want)
	}
	if got := humanTime("yesterday"); got != "yesterday" {
		t.Fatalf("an unreadable time: %q", got)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
		code int
	}{
		{&client.Error{Status: 404, Code: wire.CodeNotFound, Message: `session "x" not found`}, `session "x" not found`, exitNotFound},
		{fmt.Errorf("put input: %w", context.Canceled), "interrupted", exitOther},
		{&client.Error{Status: 500, Code: wire.CodeInternal, Message: "disk full"}, "internal (HTTP 500): disk full", exitOther},
		{&client.AmbiguousError{Name: "x"}, `"x" names 0 sessions; give more of the id:`, exitUsage},
	}
	for _, tt := range tests {
		if got, code := describe(tt.err), exitCode(tt.err); got != tt.want || code != tt.code {
			t.Errorf("%v: describe %q, exit %d; want %q, %d", tt.err, got, code, tt.want, tt.code)
		}
	}
}
