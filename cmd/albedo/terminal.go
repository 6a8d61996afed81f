package main

import (
	"context"

	"albedo/term"
)

// runTerminal opens the full-screen terminal client, starting a daemon when
// none answers (or on a server's URL, where none is started).
func runTerminal(ctx context.Context, g *globals) error {
	c, err := g.newClient("albedo-term/1", true)
	if err != nil {
		return err
	}
	// Start (or find) the daemon before taking over the screen, so that a
	// failure to start, or a URL where nothing answers, is an ordinary
	// error message.
	if _, err := c.Discover(ctx); err != nil {
		return err
	}
	return term.Run(ctx, term.Options{Client: c})
}
