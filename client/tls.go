package client

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
)

// A daemon on a team server serves TLS with the certificate of its public
// name, and daemon.json names it at 127.0.0.1, which no such certificate
// holds; a self-signed one is trusted by nothing. So a client of the home
// trusts the daemon by the certificate daemon.json names
// (tls_cert_sha256): the daemon wrote it there, in a file only its user
// may read. A daemon.json without one (an older daemon's) leaves the
// usual check: the system's roots and the URL's host.

// homeTLS is the TLS configuration of a home's client: the peer's
// certificate is checked by verifyDaemon rather than by crypto/tls's
// own check, which would refuse it for its names.
func homeTLS(home string) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // verifyDaemon checks the certificate instead
		VerifyConnection:   func(cs tls.ConnectionState) error { return verifyDaemon(home, cs) },
	}
}

// verifyDaemon accepts the connection if its certificate is the one the
// home's daemon.json names, read afresh (a daemon restarted or its
// certificate renewed names another); with none named, if the system's
// roots trust it for the host dialled.
func verifyDaemon(home string, cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the daemon sent no certificate")
	}
	leaf := cs.PeerCertificates[0]
	if info, err := ReadDaemonFile(home); err == nil && info.TLSCertSHA256 != "" {
		sum := sha256.Sum256(leaf.Raw)
		if hex.EncodeToString(sum[:]) == info.TLSCertSHA256 {
			return nil
		}
		return fmt.Errorf("the certificate served at %s is not the one %s names (tls_cert_sha256)", cs.ServerName, DaemonFile)
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{DNSName: cs.ServerName, Intermediates: inter})
	return err
}
