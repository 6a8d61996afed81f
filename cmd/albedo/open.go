package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"runtime"

	"github.com/spf13/cobra"

	"albedo/client"
)

func newOpenCmd(g *globals) *cobra.Command {
	var printOnly bool
	cmd := &cobra.Command{
		Use:   "open [SESSION] [--print]",
		Short: "open the browser client, as the owner, in the default browser (or print its link)",
		Long: "Open the page the daemon serves (all sessions, as their owner) in the default browser,\n" +
			"on SESSION if one is named. With --print, or when no browser can be started, print the link\n" +
			"instead: it holds the owner's token (in its #fragment, which a browser never sends), so\n" +
			"treat it like the token. With --url or $ALBEDO_URL the page is that server's and the token\n" +
			"is the command's (--token or $ALBEDO_TOKEN).\n\n" + sessionArgHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: g.withClient(func(ctx context.Context, c *client.Client, args []string) error {
			snap, err := c.Discover(ctx)
			if err != nil {
				return err
			}
			frag := url.Values{"token": {snap.Token}}
			if len(args) == 1 {
				s, err := c.ResolveSession(ctx, args[0])
				if err != nil {
					return err
				}
				frag.Set("session", s.ID)
			}
			link := snap.BaseURL + "/#" + frag.Encode()
			if printOnly || openBrowser(link) != nil {
				fmt.Fprintln(g.stdout, link)
				return nil
			}
			fmt.Fprintf(g.stderr, "opened the browser client on %s\n", snap.BaseURL)
			return nil
		}),
		ValidArgsFunction: g.completeSessions,
	}
	cmd.Flags().BoolVar(&printOnly, "print", false, "print the link instead of opening a browser")
	return cmd
}

// openBrowser starts the user's browser on link: $BROWSER if set, else the
// system's opener. It does not wait for the browser.
func openBrowser(link string) error {
	var argv []string
	switch {
	case os.Getenv("BROWSER") != "":
		argv = []string{os.Getenv("BROWSER"), link}
	case runtime.GOOS == "darwin":
		argv = []string{"open", link}
	default:
		argv = []string{"xdg-open", link}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	cmd := exec.Command(path, argv[1:]...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaped whenever the opener exits
	return nil
}
