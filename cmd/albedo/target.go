package main

import (
	"context"
	"os"

	"albedo/client"
)

// Where a client command goes: the daemon of a home (the default), or a
// server's URL (cluster mode: --url or $ALBEDO_URL, with --token or
// $ALBEDO_TOKEN). The rules:
//
//   - --url and --home together are a usage error;
//   - --url, else --home, else $ALBEDO_URL, else the default home: a
//     --home given says "this home" even with $ALBEDO_URL set;
//   - --token is the token in either mode (on a home, instead of
//     daemon.json's owner token); $ALBEDO_TOKEN only goes with a URL.
//
// A command that needs a home (daemon, stop) refuses a URL (g.needHome).

// serverURL is the URL a client command goes to, "" for a home.
func (g *globals) serverURL() (string, error) {
	if g.url != "" && g.home != "" {
		return "", usageErrorf("--url and --home exclude each other: a command goes to a server or to the daemon of a home")
	}
	if g.url != "" || g.home != "" {
		return g.url, nil
	}
	return os.Getenv(client.EnvURL), nil
}

// options are the client options of a command, for the URL or the home:
// autoStart applies to a home only (nothing is started for a URL).
func (g *globals) options(name string, autoStart bool) (client.Options, error) {
	u, err := g.serverURL()
	if err != nil {
		return client.Options{}, err
	}
	if u != "" {
		tok := g.token
		if tok == "" {
			tok = os.Getenv(client.EnvToken)
		}
		if tok == "" {
			return client.Options{}, usageErrorf("no token for %s: set %s or --token", u, client.EnvToken)
		}
		return client.Options{URL: u, Token: tok, Name: name}, nil
	}
	home, err := g.resolveHome()
	if err != nil {
		return client.Options{}, err
	}
	return client.Options{Home: home, Token: g.token, AutoStart: autoStart, Name: name}, nil
}

// newClient makes the client of options.
func (g *globals) newClient(name string, autoStart bool) (*client.Client, error) {
	o, err := g.options(name, autoStart)
	if err != nil {
		return nil, err
	}
	return client.New(o)
}

// reach makes sure a client of a URL has a server to talk to: a command
// that finds none fails at once with what the URL answered, instead of
// retrying for the client's CallRetry. A client of a home starts or finds
// its daemon with its first call, as it always has.
func reach(ctx context.Context, c *client.Client) error {
	if c.URL() == "" {
		return nil
	}
	_, err := c.Discover(ctx)
	return err
}

// needHome refuses a command that only makes sense for the daemon of a
// home (what) when the command goes to a URL.
func (g *globals) needHome(what string) error {
	u, err := g.serverURL()
	if err != nil {
		return err
	}
	if u == "" {
		return nil
	}
	how := "--url"
	if g.url == "" {
		how = "$" + client.EnvURL
	}
	return usageErrorf("%s: %s points this command at the server %s, which is run and stopped where it runs; give --home to use a daemon of this machine", what, how, u)
}
