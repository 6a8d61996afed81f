package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"albedo/wire"
)

// A home's client trusts a daemon serving TLS by the certificate
// daemon.json names: one for a public name only (no 127.0.0.1, which the
// URL names) and signed by no root is trusted when named; another one, or
// none named, is refused, the latter by the system's roots.
func TestAHomeTrustsTheCertificateDaemonJSONNames(t *testing.T) {
	t.Parallel()
	cert := selfSignedFor(t, "albedo.example.com")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"boot":"b1","version":"test"}`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	sum := sha256.Sum256(cert.Certificate[0])

	for _, tc := range []struct {
		name, pin, want string
	}{
		{"named", hex.EncodeToString(sum[:]), ""},
		{"another", strings.Repeat("ab", 32), "is not the one daemon.json names"},
		{"none named", "", "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			writeDaemonFileForTest(t, home, wire.DaemonInfo{PID: os.Getpid(), Port: port, URL: srv.URL, Token: "t", Boot: "b1", TLSCertSHA256: tc.pin})
			c, err := New(Options{Home: home})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = c.Discover(ctx)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("discover: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("discover: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// selfSignedFor is a certificate for name alone, signed by itself.
func selfSignedFor(t *testing.T, name string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
