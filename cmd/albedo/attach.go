package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/term"
)

func newAttachCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "attach URL|TOKEN",
		Short: "open a shared session (a link or token from albedo share) in the terminal, read-only",
		Long: "Open the session a viewer token reads in the full-screen terminal, read-only: its transcript\n" +
			"live, nothing sent or changed. The argument is the link albedo share prints\n" +
			"(http://127.0.0.1:PORT/#session=ID&token=TOKEN) or the token alone. The link must be\n" +
			"one of this machine's daemon (the one of --home).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			link, err := parseShare(args[0])
			if err != nil {
				return usageErrorf("%v", err)
			}
			home, err := g.resolveHome()
			if err != nil {
				return err
			}
			c, err := client.New(client.Options{Home: home, AutoStart: true, Token: link.token, Name: "albedo-term/1"})
			if err != nil {
				return err
			}
			return attach(cmd.Context(), c, link, home)
		},
	}
}

// attach checks the link against the daemon it finds and opens the
// terminal read-only.
func attach(ctx context.Context, c *client.Client, link shareLink, home string) error {
	snap, err := c.Discover(ctx)
	if err != nil {
		return err
	}
	if link.port != 0 && link.port != snap.Port {
		return fmt.Errorf("this link is for the daemon on port %d; the daemon of %s listens on %d: "+
			"albedo attach opens links of this machine's daemon", link.port, home, snap.Port)
	}
	ss, err := c.Sessions(ctx)
	if err != nil {
		return fmt.Errorf("the token was refused (revoked, or not this daemon's): %w", err)
	}
	if link.session != "" && (len(ss) != 1 || ss[0].ID != link.session) {
		return fmt.Errorf("the token is not for session %s", link.session)
	}
	return term.Run(ctx, term.Options{Client: c, ReadOnly: true})
}

// shareLink is what a share link or token says.
type shareLink struct {
	token, session string
	port           int // 0: a bare token, any daemon of this home
}

// parseShare reads a link http://HOST:PORT/#session=ID&token=TOKEN (the
// token in the fragment, so it never reaches a server log) or a bare token.
func parseShare(arg string) (shareLink, error) {
	arg = strings.TrimSpace(arg)
	if !strings.Contains(arg, "://") {
		if arg == "" || strings.ContainsAny(arg, " /#&=") {
			return shareLink{}, fmt.Errorf("%q is neither a share link nor a token", arg)
		}
		return shareLink{token: arg}, nil
	}
	u, err := url.Parse(arg)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return shareLink{}, fmt.Errorf("%q is not an http link", arg)
	}
	q, err := url.ParseQuery(u.EscapedFragment())
	if err != nil || q.Get("token") == "" || q.Get("session") == "" {
		return shareLink{}, fmt.Errorf("the link has no #session=…&token=… part")
	}
	l := shareLink{token: q.Get("token"), session: q.Get("session")}
	_, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return shareLink{}, fmt.Errorf("the link names no port: %q", u.Host)
	}
	if l.port, err = strconv.Atoi(port); err != nil {
		return shareLink{}, fmt.Errorf("the link's port %q is not a number", port)
	}
	return l, nil
}

// shareURL is the link of a viewer token: the daemon's page with the
// session and the token in the fragment.
func shareURL(port int, session, token string) string {
	return fmt.Sprintf("http://127.0.0.1:%d/#session=%s&token=%s", port, url.QueryEscape(session), url.QueryEscape(token))
}
