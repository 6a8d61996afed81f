package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"albedo/client"
)

// globals are the flags every subcommand shares.
type globals struct {
	home   string
	stdout io.Writer
	stderr io.Writer
}

func (g *globals) resolveHome() (string, error) {
	if g.home != "" {
		return g.home, nil
	}
	return client.DefaultHome()
}

// client returns a client for the home that starts a daemon when none runs.
func (g *globals) client() (*client.Client, error) {
	home, err := g.resolveHome()
	if err != nil {
		return nil, err
	}
	return client.New(client.Options{Home: home, AutoStart: true, Name: "albedo-cli/1"})
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "albedo",
		Short:         "albedo: persistent sessions shared by people, LLMs and bots",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTerminal(cmd.Context(), g)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&g.home, "home", "", "albedo home (default $ALBEDO_HOME, else $XDG_STATE_HOME/albedo, else ~/.local/state/albedo)")
	root.AddCommand(newDaemonCmd(g), newStopCmd(g), newStatusCmd(g), newSessionsCmd(g), newSendCmd(g), newTailCmd(g), newBotsCmd(g), newShareCmd(g))
	return root
}

func printf(w io.Writer, format string, args ...any) { fmt.Fprintf(w, format, args...) }

// withClient makes a command's RunE that runs fn with a client for the
// home (which starts a daemon when none runs) and the command's context.
func (g *globals) withClient(fn func(ctx context.Context, c *client.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := g.client()
		if err != nil {
			return err
		}
		return fn(cmd.Context(), c, args)
	}
}
