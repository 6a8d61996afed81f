package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"albedo/api"
)

// natsFlags are how a node reaches the cluster's NATS as operators run
// it: several servers, one way of authenticating, TLS.
type natsFlags struct {
	nats         string // nats:// URLs, comma-separated; empty: no NATS
	creds        string // a .creds file (JWT and nkey seed)
	nkey         string // a file holding an nkey seed
	user         string
	passwordFile string // with user
	tokenFile    string
	ca           string // PEM roots that sign the servers' certificates
	cert, key    string // a client certificate, for servers that ask one
}

func (f *natsFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.nats, "nats", "", "the cluster's NATS: nats:// or tls:// URLs, comma-separated (needs --db); the other nodes hear this one's events, viewers and turns there")
	fl.StringVar(&f.creds, "nats-creds", "", "NATS: authenticate with this credentials file (a user's JWT and nkey seed)")
	fl.StringVar(&f.nkey, "nats-nkey", "", "NATS: authenticate with the nkey seed in this file")
	fl.StringVar(&f.user, "nats-user", "", "NATS: authenticate as this user, with --nats-password-file")
	fl.StringVar(&f.passwordFile, "nats-password-file", "", "NATS: the password of --nats-user, read from this file")
	fl.StringVar(&f.tokenFile, "nats-token-file", "", "NATS: authenticate with the token in this file")
	fl.StringVar(&f.ca, "nats-ca", "", "NATS: trust the servers whose certificates these PEM roots sign (TLS)")
	fl.StringVar(&f.cert, "nats-cert", "", "NATS: a PEM client certificate, with --nats-key, for servers that verify clients (TLS)")
	fl.StringVar(&f.key, "nats-key", "", "NATS: the PEM private key of --nats-cert")
}

// options checks the flags and returns what they add to the connection.
func (f *natsFlags) options() ([]nats.Option, error) {
	var opts []nats.Option
	ways := 0
	if f.creds != "" {
		ways++
		opts = append(opts, nats.UserCredentials(f.creds))
	}
	if f.nkey != "" {
		ways++
		o, err := nats.NkeyOptionFromSeed(f.nkey)
		if err != nil {
			return nil, usageErrorf("--nats-nkey: %v", err)
		}
		opts = append(opts, o)
	}
	if (f.user == "") != (f.passwordFile == "") {
		return nil, usageErrorf("--nats-user and --nats-password-file go together")
	}
	if f.user != "" {
		ways++
		pw, err := readSecret("nats-password-file", f.passwordFile)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		opts = append(opts, nats.UserInfo(f.user, pw))
	}
	if f.tokenFile != "" {
		ways++
		tok, err := readSecret("nats-token-file", f.tokenFile)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		opts = append(opts, nats.Token(tok))
	}
	if ways > 1 {
		return nil, usageErrorf("NATS takes one way of authenticating: --nats-creds, --nats-nkey, --nats-user or --nats-token-file")
	}
	if f.ca != "" {
		opts = append(opts, nats.RootCAs(f.ca))
	}
	if (f.cert == "") != (f.key == "") {
		return nil, usageErrorf("--nats-cert and --nats-key go together")
	}
	if f.cert != "" {
		opts = append(opts, nats.ClientCert(f.cert, f.key))
	}
	if f.nats == "" && (ways > 0 || f.ca != "" || f.cert != "") {
		return nil, usageErrorf("the --nats-* flags need --nats")
	}
	return opts, nil
}

// connectNATS joins the cluster's NATS at urls (comma-separated; the
// client tries them in turn, and those the servers announce). The daemon
// starts even when NATS is not up yet, and keeps reconnecting for as
// long as it runs: nothing depends on a notice arriving (the store has it
// all), so NATS down only delays what other nodes' viewers see, by at
// most a heartbeat. The hub handles reconnections (it looks at the store
// at once).
func connectNATS(urls, node string, extra []nats.Option, log *slog.Logger) (*nats.Conn, error) {
	connected := make(chan struct{}, 1)
	refused := make(chan error, 1)
	opts := append([]nats.Option{
		nats.Name("albedo " + node),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		// Credentials refused later (rotated on the servers first) are
		// tried again, not given up for good.
		nats.IgnoreAuthErrorAbort(),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(250*time.Millisecond, time.Second),
		nats.ConnectHandler(func(*nats.Conn) { notify(connected, struct{}{}) }),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			if isNATSAuthError(err) {
				notify(refused, err)
			}
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("NATS disconnected; notices wait, the store has everything", "err", err)
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Warn("NATS", "err", err)
		}),
	}, extra...)
	nc, err := nats.Connect(urls, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", redactURLs(urls), err)
	}
	if nc.IsConnected() {
		return nc, nil
	}
	if err := nc.LastError(); isNATSAuthError(err) { // refused in Connect's own first round
		nc.Close()
		return nil, refusedBy(urls, err)
	}
	// Not connected yet: NATS may be down, which the node rides out, or
	// it may refuse this node's credentials, which is a mistake to say
	// now rather than run without NATS.
	select {
	case <-connected:
	case err := <-refused:
		nc.Close()
		return nil, refusedBy(urls, err)
	case <-time.After(natsFirstWait):
		log.Warn("NATS does not answer yet; the node starts and keeps trying", "nats", redactURLs(urls))
	}
	return nc, nil
}

// refusedBy is the start's error when NATS at urls refuses this node's
// credentials.
func refusedBy(urls string, err error) error {
	return fmt.Errorf("NATS at %s refused this node's credentials (--nats-creds, --nats-nkey, --nats-user, --nats-token-file): %w", redactURLs(urls), err)
}

// natsFirstWait is how long a start waits for NATS to answer before it
// goes on without.
const natsFirstWait = 3 * time.Second

// notify sends v on c unless c is full.
func notify[T any](c chan T, v T) {
	select {
	case c <- v:
	default:
	}
}

// isNATSAuthError says whether err is a NATS server's refusal of the
// credentials.
func isNATSAuthError(err error) bool {
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked) ||
		err != nil && strings.Contains(strings.ToLower(err.Error()), "authorization violation")
}

// redactURLs is a comma-separated list of URLs with their passwords
// replaced, for a message.
func redactURLs(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// natsReady is /readyz's look at NATS, with --nats: a node that cannot
// hear the others still serves everything, late, so it says so rather
// than hiding it from a load balancer that may prefer another node.
func (d *daemon) natsReady() []api.ReadyCheck {
	if d.nc == nil {
		return nil
	}
	return []api.ReadyCheck{{Name: "nats", Advisory: true, Check: func(context.Context) error {
		if st := d.nc.Status(); st != nats.CONNECTED {
			return fmt.Errorf("NATS is %s", st)
		}
		return nil
	}}}
}
