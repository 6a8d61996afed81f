// Command albedo is the albedo daemon and its command-line clients.
//
// albedo (no arguments) opens the terminal client; albedo daemon runs the
// daemon in the foreground; the other subcommands talk to the daemon of
// $ALBEDO_HOME, starting one when none answers. See README.md.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "albedo:", err)
		os.Exit(exitCode(err))
	}
}

// exitError carries a specific exit status (a failed turn, a refused start).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	if e, ok := err.(*exitError); ok {
		return e.code
	}
	return 1
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}
