package main

import (
	"context"
	"fmt"
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
			"one of this machine's daemon (the one of --home), or, with --url or $ALBEDO_URL, one of\n" +
			"that server; the link's token is used, not --token or $ALBEDO_TOKEN.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			link, err := parseShare(args[0])
			if err != nil {
				return usageErrorf("%v", err)
			}
			g.token = link.token
			c, err := g.newClient("albedo-term/1", true)
			if err != nil {
				return err
			}
			return attach(cmd.Context(), c, link)
		},
	}
}

// attach checks the link against the daemon (or server) it finds and
// opens the terminal read-only.
func attach(ctx context.Context, c *client.Client, link shareLink) error {
	snap, err := c.Discover(ctx)
	if err != nil {
		return err
	}
	switch {
	case link.base == "":
	case c.URL() != "" && link.base != c.URL():
		return fmt.Errorf("this link is for %s, not for the server of this command (%s)", link.base, c.URL())
	case c.URL() == "" && link.port != snap.Port:
		return fmt.Errorf("this link is for %s; the daemon of %s listens on port %d: "+
			"albedo attach opens links of this machine's daemon (or, with --url, of that server)", link.base, c.Home(), snap.Port)
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
	base           string // the server's URL (client.ServerURL); "" for a bare token: any daemon
	port           int    // the port the link names; 0 if none (or a bare token)
}

// parseShare reads a link http(s)://HOST[:PORT][/PATH]/#session=ID&token=TOKEN
// (the token in the fragment, so it never reaches a server log) or a bare
// token.
func parseShare(arg string) (shareLink, error) {
	arg = strings.TrimSpace(arg)
	if !strings.Contains(arg, "://") {
		if arg == "" || strings.ContainsAny(arg, " /#&=") {
			return shareLink{}, fmt.Errorf("%q is neither a share link nor a token", arg)
		}
		return shareLink{token: arg}, nil
	}
	u, err := url.Parse(arg)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return shareLink{}, fmt.Errorf("%q is not an http link", arg)
	}
	q, err := url.ParseQuery(u.EscapedFragment())
	if err != nil || q.Get("token") == "" || q.Get("session") == "" {
		return shareLink{}, fmt.Errorf("the link has no #session=…&token=… part")
	}
	l := shareLink{token: q.Get("token"), session: q.Get("session")}
	u.Fragment, u.RawFragment = "", ""
	if l.base, err = client.ServerURL(u.String()); err != nil {
		return shareLink{}, err
	}
	if p := u.Port(); p != "" {
		if l.port, err = strconv.Atoi(p); err != nil {
			return shareLink{}, fmt.Errorf("the link's port %q is not a number", p)
		}
	}
	return l, nil
}

// shareURL is the link of a viewer token: the daemon's page (base is the
// URL the client uses: http://127.0.0.1:PORT for the daemon of a home, the
// server's for --url) with the session and the token in the fragment.
func shareURL(base, session, token string) string {
	return fmt.Sprintf("%s/#session=%s&token=%s", base, url.QueryEscape(session), url.QueryEscape(token))
}
