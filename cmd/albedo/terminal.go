package main

import (
	"context"

	"albedo/client"
	"albedo/term"
)

// runTerminal opens the full-screen terminal client, starting a daemon when
// none answers.
func runTerminal(ctx context.Context, g *globals) error {
	home, err := g.resolveHome()
	if err != nil {
		return err
	}
	c, err := client.New(client.Options{Home: home, AutoStart: true, Name: "albedo-term/1"})
	if err != nil {
		return err
	}
	// Start (or find) the daemon before taking over the screen, so that a
	// failure to start is an ordinary error message.
	if _, err := c.Discover(ctx); err != nil {
		return err
	}
	return term.Run(ctx, term.Options{Client: c})
}
