package provider

import (
	"errors"
	"net"
	"syscall"
)

// unreachable says why no connection to the endpoint could be made, in a
// few words ("connection refused", "no such host", "timed out"), when err
// is such a failure; ok is false for any error after a connection was
// made. Only dialing can fail before the endpoint has said anything, so a
// failed dial is told apart from a reply stream that broke: the first
// means base_url points where nothing answers, the second that something
// answered and then stopped.
func unreachable(err error) (why string, ok bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		var dns *net.DNSError // a lookup error the dialer did not wrap
		if errors.As(err, &dns) {
			return dnsWhy(dns), true
		}
		return "", false
	}
	var dns *net.DNSError
	var errno syscall.Errno
	switch {
	case errors.As(op.Err, &dns):
		return dnsWhy(dns), true
	case errors.As(op.Err, &errno):
		return errno.Error(), true
	case op.Timeout():
		return "timed out", true
	}
	return op.Err.Error(), true
}

// dnsWhy is a failed lookup in a few words; the URL beside it names the
// host.
func dnsWhy(e *net.DNSError) string {
	switch {
	case e.IsNotFound:
		return "no such host"
	case e.IsTimeout:
		return "looking up its host timed out"
	}
	return "looking up its host: " + e.Err
}
