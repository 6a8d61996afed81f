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
	"albedo/wire"
)

func newAttachCmd(g *globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "attach LINK|TOKEN [--name N]",
		Short: "open a shared session (a link or token from albedo share) in the terminal",
		Long: "Open the session of a link in the full-screen terminal: its transcript live. A read link\n" +
			"watches, nothing sent or changed; a write link (albedo share --write) also writes, as a\n" +
			"guest named --name (else the login name). The argument is the link albedo share prints\n" +
			"(http://HOST:PORT/#session=ID&token=TOKEN), or the one albedo members add prints (#token=…),\n" +
			"which holds the daemon's address: it is\n" +
			"opened wherever this command runs, whatever the home, and no daemon is started. A bare\n" +
			"token goes to this machine's daemon (the one of --home), or, with --url or $ALBEDO_URL,\n" +
			"to that server; the link's token is used, not --token or $ALBEDO_TOKEN.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			link, err := parseShare(args[0])
			if err != nil {
				return usageErrorf("%v", err)
			}
			if name == "" {
				name = ownerName("")
			}
			var c *client.Client
			if link.base != "" {
				c, err = client.New(client.Options{URL: link.base, Token: link.token, Name: "albedo-term/1", Guest: name})
			} else {
				g.token = link.token
				var o client.Options
				if o, err = g.options("albedo-term/1", true); err == nil {
					o.Guest = name
					c, err = client.New(o)
				}
			}
			if err != nil {
				return err
			}
			return attach(cmd.Context(), c, link)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the name a guest of a write link goes by (default: the login name)")
	return cmd
}

// attach checks the link's token against the daemon (or server) and opens
// the terminal: read-only for a read link.
func attach(ctx context.Context, c *client.Client, link shareLink) error {
	if err := reach(ctx, c); err != nil {
		return fmt.Errorf("the link's daemon does not answer at %s: %w", c.URL(), err)
	}
	ss, err := c.Sessions(ctx)
	if code := client.Code(err); code == wire.CodeUnauthorized {
		return fmt.Errorf("the link was refused: %s", unauthorizedWords(err))
	}
	if err != nil {
		return err
	}
	if link.session != "" && (len(ss) != 1 || ss[0].ID != link.session) {
		return fmt.Errorf("the token is not for session %s", link.session)
	}
	readOnly := len(ss) == 1 && ss[0].Access == wire.AccessRead
	return term.Run(ctx, term.Options{Client: c, ReadOnly: readOnly})
}

// unauthorizedWords says why a link's token was refused.
func unauthorizedWords(err error) string {
	if strings.Contains(err.Error(), "expired") {
		return "this link has expired; ask for a new one"
	}
	return "it was revoked, or is not this daemon's; ask for a new one"
}

// shareLink is what a share link or token says.
type shareLink struct {
	token, session string
	base           string // the server's URL (client.ServerURL); "" for a bare token: any daemon
	port           int    // the port the link names; 0 if none (or a bare token)
}

// parseShare reads a link http(s)://HOST[:PORT][/PATH]/#session=ID&token=TOKEN
// (the token in the fragment, so it never reaches a server log), a
// member's invite link (#token=TOKEN, naming no session), or a bare
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
	if err != nil || q.Get("token") == "" {
		return shareLink{}, fmt.Errorf("the link has no #token=… part (a share link's #session=…&token=…, a member's #token=…)")
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
