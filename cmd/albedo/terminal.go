package main

import (
	"context"
	"errors"
)

// runTerminal opens the full-screen terminal client (the term issue).
func runTerminal(ctx context.Context, g *globals) error {
	return errors.New("the terminal client is not built yet; try `albedo sessions` or `albedo --help`")
}
