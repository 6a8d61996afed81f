package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

// Exit statuses. docs/cli.md ("Exit statuses") and `albedo send --help`
// list them; scripts depend on them, so a number never changes its
// meaning.
const (
	exitOther       = 1 // anything else: no daemon, a refused request …
	exitUsage       = 2 // bad arguments or flags, empty text, an ambiguous name
	exitHomeLocked  = 3 // albedo daemon: another daemon holds the home (home.go)
	exitNotFound    = 4 // no such session (or bot)
	exitTurnFailed  = 5 // send: the turn failed
	exitInterrupted = 6 // send: the turn was interrupted
	exitGaveUp      = 7 // send: stopped waiting (Ctrl-C, --timeout); the input stays queued
)

// exitError carries a specific exit status (a failed turn, a refused start).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is a usage error: exit status 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func exitCode(err error) int {
	var e *exitError
	var amb *client.AmbiguousError
	switch {
	case errors.As(err, &e):
		return e.code
	case errors.As(err, &amb):
		return exitUsage
	case client.Code(err) == wire.CodeNotFound:
		return exitNotFound
	case client.Code(err) == wire.CodeBadRequest:
		// The daemon refused what the command was given (a provider it
		// does not have, an effort it does not know): a usage error too.
		return exitUsage
	}
	return exitOther
}

// describe is the message printed for err: a daemon's not_found or
// bad_request says what is wrong in its message; its code and HTTP status
// add nothing for a person (the exit status keeps them apart). A context
// canceled is the user's Ctrl-C.
func describe(err error) string {
	if errors.Is(err, context.Canceled) {
		return "interrupted"
	}
	inner := err
	for {
		x, ok := inner.(*exitError)
		if !ok {
			break
		}
		inner = x.err
	}
	if e, ok := inner.(*client.Error); ok && (e.Code == wire.CodeNotFound || e.Code == wire.CodeBadRequest) {
		return e.Message
	}
	return err.Error()
}

// groupOnly marks (in Annotations) a command that only groups others and
// prints its help: docs/cli.md documents its subcommands instead.
const groupOnly = "albedo/group-only"

// usageRules makes every command's argument and flag errors usage errors
// (exit status 2) that say where help is, and makes a grouping command
// (bots) refuse an unknown subcommand instead of printing help and
// succeeding. Commands without argument rules (cobra's help and
// __complete) keep cobra's.
func usageRules(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErrorf("%v\nsee: %s --help", err, c.CommandPath())
	})
	if !cmd.Runnable() {
		cmd.Args = cobra.NoArgs
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		cmd.Annotations = map[string]string{groupOnly: "true"}
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			err := check(c, args)
			var e *exitError
			if err == nil || errors.As(err, &e) {
				return err
			}
			return usageErrorf("%v\nsee: %s --help", err, c.CommandPath())
		}
	}
	for _, sub := range cmd.Commands() {
		usageRules(sub)
	}
}
