package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"albedo/client"
)

// openWait is how long albedo open waits for the browser's opener to
// exit. xdg-open and open(1) hand the link to a browser and exit, with a
// failure status when none took it; a $BROWSER that is the browser itself
// keeps running, and is taken to have opened the page.
const openWait = 5 * time.Second

func newOpenCmd(g *globals) *cobra.Command {
	var printOnly bool
	cmd := &cobra.Command{
		Use:   "open [SESSION] [--print]",
		Short: "open the browser client, as you, in the default browser, and print its link",
		Long: "Open the page the daemon serves (every session you may see, as you) in the default browser\n" +
			"($BROWSER, else xdg-open, or open on macOS), on SESSION if one is named. The link is\n" +
			"printed either way, so that it can be opened by hand; standard error says whether a\n" +
			"browser opened it. With --print, only the link is printed. The link holds a personal\n" +
			"token of yours for that browser (in its #fragment, which a browser never sends), made\n" +
			"once and kept in the home's page.tokens, so that open pages reconnect after a restart\n" +
			"although daemon.json's token is new on every boot. Treat the link like the token: the\n" +
			"browser's command line, which other local users can see, holds it too. With --url or\n" +
			"$ALBEDO_URL the page is that server's and the token is the command's (--token or\n" +
			"$ALBEDO_TOKEN).\n\n" + sessionArgHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			snap, err := c.Discover(ctx)
			if err != nil {
				return err
			}
			tok := snap.Token
			if c.URL() == "" {
				// A home's daemon: the page gets a personal token of its
				// own, which outlives this boot's daemon.json token.
				if tok, err = pageToken(ctx, c); err != nil {
					return err
				}
			}
			session := ""
			if len(args) == 1 {
				s, err := c.ResolveSession(ctx, args[0])
				if err != nil {
					return err
				}
				session = s.ID
			}
			link := c.PageLink(session, tok)
			fmt.Fprintln(g.stdout, link)
			if printOnly {
				return nil
			}
			opener, err := openBrowser(ctx, link)
			if err != nil {
				return &exitError{code: exitOther, err: fmt.Errorf("no browser opened: %v; open the link above", err)}
			}
			fmt.Fprintf(g.stderr, "opened the browser client with %s\n", opener)
			return nil
		}),
		ValidArgsFunction: g.completeSessions,
	}
	cmd.Flags().BoolVar(&printOnly, "print", false, "print the link only, without opening a browser")
	return cmd
}

// openBrowser starts the user's browser on link: $BROWSER if set, else the
// system's opener. It returns the opener's name once it has exited well,
// or is still running after openWait; an error when it cannot be started
// or exits with a failure.
func openBrowser(ctx context.Context, link string) (string, error) {
	var argv []string
	switch {
	case os.Getenv("BROWSER") != "":
		argv = []string{os.Getenv("BROWSER"), link}
	case runtime.GOOS == "darwin":
		argv = []string{"open", link}
	default:
		argv = []string{"xdg-open", link}
	}
	name := argv[0]
	if os.Getenv("BROWSER") != "" {
		name = "$BROWSER (" + name + ")"
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return "", fmt.Errorf("%s was not found", name)
	}
	cmd := exec.Command(path, argv[1:]...)
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("%s could not start: %w", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(openWait)
	defer timer.Stop()
	select {
	case err := <-exited:
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return "", fmt.Errorf("%s failed with %s", name, ee.ProcessState)
			}
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return name, nil
	case <-timer.C:
		return name + ", still running", nil
	case <-ctx.Done():
		return "", fmt.Errorf("%s had not exited: %w", name, ctx.Err())
	}
}
