package main

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The edge of a team server (docs/server.md, "A team server"): where the
// daemon listens and with which names, TLS, and the log's format. These
// flags are checked before the daemon takes its home, so that a mistake is
// a usage error (exit 2) and leaves no daemon.down behind.

// edgeFlags are the daemon's flags about its edge.
type edgeFlags struct {
	listen        string   // --listen (--addr is a hidden alias)
	tlsCert       string   // PEM certificate chain
	tlsKey        string   // PEM private key
	insecureNoTLS bool     // plain HTTP beyond loopback, on the operator's word
	hosts         []string // names clients use besides the certificate's
	metricsAddr   string   // /metrics and /readyz without a token (metrics.go)
	logFormat     string   // text or json
}

func (f *edgeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", defaultAddr, "listen address (the default takes the port of the daemon before when free, else any); beyond loopback it needs --tls-cert and --tls-key, or --insecure-no-tls")
	// --addr, the flag's old name, keeps working but is no longer shown.
	fl.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "addr" {
			name = "listen"
		}
		return pflag.NormalizedName(name)
	})
	fl.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain); with --tls-key")
	fl.StringVar(&f.tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	fl.BoolVar(&f.insecureNoTLS, "insecure-no-tls", false, "serve plain HTTP beyond loopback (TLS ends before the daemon, at a load balancer or a proxy)")
	fl.StringSliceVar(&f.hosts, "host", nil, "a name clients reach the daemon by (Host header), on loopback too, besides loopback names, the certificate's names and (beyond loopback) IP addresses; repeatable, *.example.com matches one label")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /readyz on this address without a token (e.g. 10.0.0.5:9090); off by default")
	fl.StringVar(&f.logFormat, "log-format", "text", "log lines as text (key=value) or json (one object a line)")
}

// check says what is wrong with the flags, as a usage error.
func (f *edgeFlags) check() error {
	if f.logFormat != "text" && f.logFormat != "json" {
		return usageErrorf("--log-format %q: text or json", f.logFormat)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usageErrorf("--tls-cert and --tls-key go together: give both or neither")
	}
	if f.insecureNoTLS && f.tlsCert != "" {
		return usageErrorf("--insecure-no-tls and --tls-cert contradict each other: give one")
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return usageErrorf("--listen %q: want HOST:PORT (e.g. 127.0.0.1:7780, 0.0.0.0:8443, [::]:8443): %v", f.listen, err)
	}
	if !loopbackAddr(host) && f.tlsCert == "" && !f.insecureNoTLS {
		return usageErrorf("--listen %s is beyond loopback: serve TLS with --tls-cert and --tls-key, or say --insecure-no-tls "+
			"when TLS ends before the daemon (a load balancer, a proxy on this machine); tokens must not cross a network in clear", f.listen)
	}
	for _, h := range f.hosts {
		if !validHostPattern(h) {
			return usageErrorf("--host %q: a DNS name (a-z 0-9 - and dots), or *.NAME for one label", h)
		}
	}
	if f.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(f.metricsAddr); err != nil {
			return usageErrorf("--metrics-addr %q: want HOST:PORT: %v", f.metricsAddr, err)
		}
	}
	return nil
}

// loopbackAddr says whether the host part of a listen address stays on
// this machine: localhost or a loopback IP. An empty host, 0.0.0.0, ::
// and any other name listen beyond it.
func loopbackAddr(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validHostPattern says whether h is a DNS name or a one-label wildcard.
func validHostPattern(h string) bool {
	h = strings.TrimPrefix(strings.TrimSuffix(h, "."), "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range strings.ToLower(label) {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// tlsConfig loads the key pair of --tls-cert and --tls-key and returns the
// server's TLS configuration, the certificate's DNS names (names the
// daemon answers to), and the certificate it serves, which reload
// replaces. HTTP/1.1 only: websockets upgrade over it, not h2.
func (f *edgeFlags) tlsConfig() (*tls.Config, []string, *servedCert, error) {
	sc := &servedCert{certFile: f.tlsCert, keyFile: f.tlsKey}
	leaf, err := sc.reload()
	if err != nil {
		return nil, nil, nil, err
	}
	cfg := &tls.Config{GetCertificate: sc.get, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	return cfg, slices.Clone(leaf.DNSNames), sc, nil
}

// servedCert is the certificate the daemon serves, read from its files at
// start and again on SIGHUP, so that a renewed certificate is served to
// new connections without a restart. Connections made before keep theirs.
type servedCert struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

func (c *servedCert) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.cur.Load(), nil
}

// fingerprint is the SHA-256 of the served certificate's leaf, in hex:
// daemon.json's tls_cert_sha256, by which the home's clients trust it.
func (c *servedCert) fingerprint() string {
	sum := sha256.Sum256(c.cur.Load().Certificate[0])
	return hex.EncodeToString(sum[:])
}

// reload reads the key pair and, if it is whole and valid, serves it; if
// not, the one served stays. It returns the new certificate's leaf.
func (c *servedCert) reload() (*x509.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", c.certFile, c.keyFile, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s: %w", c.certFile, err)
	}
	cert.Leaf = leaf
	c.cur.Store(&cert)
	return leaf, nil
}

// newLogger makes the daemon's logger: text (slog's key=value) or JSON,
// one record a line, at info.
func newLogger(w io.Writer, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
