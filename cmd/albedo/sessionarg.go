package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

// Every command that names a session takes what client.ResolveSession
// does: the full id, the short id the terminal shows, a unique prefix or
// suffix of the id, or an exact title. The help of such a command says so
// with this.
const sessionArgHelp = "SESSION is a session's id, its short id (albedo sessions' SHORT ID: the id's last 8 characters, as the terminal shows), a unique prefix or suffix of the id, or its exact title."

// named returns a client for the home (which starts a daemon when none
// runs) or the URL, and the session that name names (ResolveSession's
// rules).
func (g *globals) named(ctx context.Context, name string) (*client.Client, wire.Session, error) {
	c, err := g.client(ctx)
	if err != nil {
		return nil, wire.Session{}, err
	}
	s, err := resolveSession(ctx, c, name)
	return c, s, err
}

// resolveSession is c.ResolveSession, but a name that fits several
// sessions is an *ambiguousName: their table, for a person to choose.
func resolveSession(ctx context.Context, c *client.Client, name string) (wire.Session, error) {
	s, err := c.ResolveSession(ctx, name)
	var amb *client.AmbiguousError
	if errors.As(err, &amb) {
		all, lerr := c.Sessions(ctx)
		if lerr != nil {
			all = amb.Candidates
		}
		return s, &ambiguousName{AmbiguousError: amb, short: shortIDs(all)}
	}
	return s, err
}

// ambiguousName is a SESSION that fits several sessions, as a person
// reads it: a table of them (short id, id, title, the session a fork came
// from, last activity) and how to pick one. It is a usage error (exit
// status 2) as the client's AmbiguousError is.
type ambiguousName struct {
	*client.AmbiguousError
	short map[string]string // shortIDs of the sessions listed
}

func (e *ambiguousName) Unwrap() error { return e.AmbiguousError }

func (e *ambiguousName) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q names %d sessions; name the one you mean by its short id (the first column):\n", e.Name, len(e.Candidates))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  SHORT ID\tID\tTITLE\tFORK OF\tLAST ACTIVE")
	for _, s := range e.Candidates {
		fork := "-"
		if p := s.Parent; p != nil {
			fork = fmt.Sprintf("⑂ %s #%d", cmp.Or(e.short[p.Session], client.ShortID(p.Session)), p.Offset)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", cmp.Or(e.short[s.ID], client.ShortID(s.ID)), s.ID,
			orDash(s.Title), fork, s.UpdatedAt.Local().Format("2006-01-02 15:04"))
	}
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}

// completeSessions completes a command's first argument with sessions
// (later arguments are free text: no completion).
func (g *globals) completeSessions(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return g.sessionCompletions(cmd.Context(), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeSessionList completes a comma-separated list of sessions (bots
// add --sessions): the ones given are kept, the last one is completed.
func (g *globals) completeSessionList(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []cobra.Completion
	for _, c := range g.sessionCompletions(cmd.Context(), last) {
		out = append(out, done+c)
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// sessionCompletions are the names of sessions that begin with
// toComplete: short ids described by their titles, titles described by
// their short ids, and full ids once toComplete is the start of one.
func (g *globals) sessionCompletions(ctx context.Context, toComplete string) []cobra.Completion {
	c := g.completionClient()
	if c == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ss, err := c.Sessions(ctx)
	if err != nil {
		return nil
	}
	return sessionNames(ss, toComplete)
}

// completionClient is a client for completing words: it starts no daemon
// and gives up on one that does not answer within a second, because a
// shell waits for it at every Tab. Nil when there is no home (or URL).
func (g *globals) completionClient() *client.Client {
	o, err := g.options("albedo-cli/1", false)
	if err != nil {
		return nil
	}
	o.CallRetry = time.Second
	c, err := client.New(o)
	if err != nil {
		return nil
	}
	// With no daemon running, say so at once rather than after the
	// client's retries.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := c.Discover(ctx); err != nil {
		return nil
	}
	return c
}

// sessionNames is sessionCompletions' choice among ss, in their order
// (most recently active first), each name once.
func sessionNames(ss []wire.Session, toComplete string) []cobra.Completion {
	seen := map[string]bool{}
	var out []cobra.Completion
	add := func(name, desc string) {
		if name == "" || seen[name] || !strings.HasPrefix(name, toComplete) {
			return
		}
		seen[name] = true
		out = append(out, cobra.CompletionWithDesc(name, desc))
	}
	for _, s := range ss {
		short, title := client.ShortID(s.ID), s.Title
		if title == "" {
			title = "(untitled)"
		}
		add(short, title)
		add(s.Title, short)
		if toComplete != "" {
			add(s.ID, title)
		}
	}
	return out
}
