package client

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// DaemonKeyFile is the file of a home that holds its daemon key: the
// daemon proves itself with it to a page before the page hands it a
// token. A server reached by a URL is proved by TLS instead.
const DaemonKeyFile = "daemon.key"

// LinkKey is the home's daemon key as a page link carries it (#k=), or ""
// when the client goes to a URL, or its home has no key.
func (c *Client) LinkKey() string {
	if c.URL() != "" || c.Home() == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(c.Home(), DaemonKeyFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// PageLink is the address of the daemon's page opening session ("": the
// list of sessions) with token: where this client reaches the daemon
// (127.0.0.1 and its port for a home's, the server's origin for a URL),
// the session and the token in the fragment, and the home's key (LinkKey)
// when there is one.
func (c *Client) PageLink(session, token string) string {
	var b strings.Builder
	b.WriteString(c.Snapshot().BaseURL + "/#")
	if session != "" {
		b.WriteString("session=" + url.QueryEscape(session) + "&")
	}
	b.WriteString("token=" + url.QueryEscape(token))
	if k := c.LinkKey(); k != "" {
		b.WriteString("&k=" + url.QueryEscape(k))
	}
	return b.String()
}

// KeyedLink is a page link the daemon made (a member's invite) with the
// home's key added to its fragment, as PageLink's links carry it, so that
// the page it opens talks only to this daemon: the daemon never hands its
// key out, the home's files hold it. A link with a key already, one that
// is no page link, or a client of a URL's server, is left as it is.
func (c *Client) KeyedLink(link string) string {
	k := c.LinkKey()
	base, frag, ok := strings.Cut(link, "#")
	if k == "" || !ok {
		return link
	}
	if v, err := url.ParseQuery(frag); err != nil || v.Get("k") != "" {
		return link
	}
	return base + "#" + frag + "&" + url.Values{"k": {k}}.Encode()
}
