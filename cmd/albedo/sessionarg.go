package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

// Every command that names a session takes what client.ResolveSession
// does: the full id, the short id the terminal shows, a unique prefix or
// suffix of the id, or an exact title. The help of such a command says so
// with this.
const sessionArgHelp = "SESSION is a session's id, the short id the terminal shows (its last 8 characters), a unique prefix or suffix of the id, or its exact title."

// named returns a client for the home (which starts a daemon when none
// runs) or the URL, and the session that name names (ResolveSession's
// rules).
func (g *globals) named(ctx context.Context, name string) (*client.Client, wire.Session, error) {
	c, err := g.client(ctx)
	if err != nil {
		return nil, wire.Session{}, err
	}
	s, err := c.ResolveSession(ctx, name)
	return c, s, err
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
