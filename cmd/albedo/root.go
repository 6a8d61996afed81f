package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"albedo/client"
)

// globals are the flags and standard files every subcommand shares.
type globals struct {
	home   string
	url    string // --url: a server instead of a home (target.go)
	token  string // --token
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// inTTY and outTTY say whether stdin and stdout are terminals: a
	// person to ask (sessions rm) and to stream to (send, tail).
	inTTY, outTTY bool
}

func (g *globals) resolveHome() (string, error) {
	if g.home != "" {
		return g.home, nil
	}
	return client.DefaultHome()
}

// client returns a client for the home that starts a daemon when none
// runs, or for the server's URL, which it checks answers (reach).
func (g *globals) client(ctx context.Context) (*client.Client, error) {
	c, err := g.newClient("albedo-cli/1", true)
	if err != nil {
		return nil, err
	}
	return c, reach(ctx, c)
}

// isTerminal says whether f is an *os.File open on a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr, inTTY: isTerminal(stdin), outTTY: isTerminal(stdout)}
	root := &cobra.Command{
		Use:           "albedo",
		Short:         "albedo: persistent sessions shared by people, LLMs and bots",
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTerminal(cmd.Context(), g)
		},
	}
	root.SetVersionTemplate("albedo version {{.Version}}\n")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&g.home, "home", "", "albedo home (default $ALBEDO_HOME, else $XDG_STATE_HOME/albedo, else ~/.local/state/albedo)")
	root.PersistentFlags().StringVar(&g.url, "url", "", "a server's URL, http(s)://HOST[:PORT], instead of a home: no daemon.json, none started (default $ALBEDO_URL unless --home is given)")
	root.PersistentFlags().StringVar(&g.token, "token", "", "the token to use (default: with a URL $ALBEDO_TOKEN, with a home daemon.json's owner token)")
	root.AddCommand(newDaemonCmd(g), newStopCmd(g), newStatusCmd(g), newSessionsCmd(g), newSendCmd(g), newTailCmd(g),
		newBotsCmd(g), newMembersCmd(g), newTokensCmd(g), newMigrateCmd(g), newDrainCmd(g), newShareCmd(g), newAttachCmd(g), newOpenCmd(g), newExportCmd(g), newImportCmd(g), newSearchCmd(g), newUsageCmd(g), newModelsCmd(g), newContinueCmd(g), newForkCmd(g), newForksCmd(g),
		newApprovalsCmd(g), newApproveCmd(g), newMCPCmd(g), newAgentCmd(g))
	// The help and completion commands are cobra's; made now rather than
	// at Execute so that usageRules and readme_test.go see them.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	usageRules(root)
	return root
}

func printf(w io.Writer, format string, args ...any) { fmt.Fprintf(w, format, args...) }

// withClient makes a command's RunE that runs fn with a client for the
// home (which starts a daemon when none runs) or the URL, and the
// command's context.
func (g *globals) withClient(fn func(ctx context.Context, c *client.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := g.client(cmd.Context())
		if err != nil {
			return err
		}
		return fn(cmd.Context(), c, args)
	}
}
