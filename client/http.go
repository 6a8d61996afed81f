package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"albedo/wire"
)

// Error is an error reply of the daemon: its HTTP status and the contract's
// error body.
type Error struct {
	Status  int
	Code    wire.Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message) }

// CodeUnavailable is Code's answer for ErrUnavailable: no daemon answers.
// It is the client's, never a daemon's.
const CodeUnavailable wire.Code = "daemon_unavailable"

// Code returns the contract error code of err, CodeUnavailable when no
// daemon answers, or "" when err is neither.
func Code(err error) wire.Code {
	if code, _, ok := refusal(err); ok {
		return code
	}
	if errors.Is(err, ErrUnavailable) {
		return CodeUnavailable
	}
	return ""
}

// Message is the daemon's words in err, without its code and HTTP status:
// a refusal's message (*Error, *wire.Error), or "" when err is not one.
func Message(err error) string {
	_, msg, _ := refusal(err)
	return msg
}

// refusal is the daemon's refusal in err, its code and its words: an HTTP
// reply's (*Error), or a websocket reply's (*wire.Error).
func refusal(err error) (wire.Code, string, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, e.Message, true
	}
	var we *wire.Error
	if errors.As(err, &we) {
		return we.Code, we.Message, true
	}
	return "", "", false
}

// ErrStaleETag matches (with errors.Is) a refused PATCH whose ETag was not
// the session's current one. Read the session again and retry.
var ErrStaleETag = &Error{Status: http.StatusPreconditionFailed, Code: wire.CodeEtagMismatch}

// Is makes errors.Is(err, ErrStaleETag) match on the code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// rawJSON makes one request to snap's daemon. out may be nil.
func (c *Client) rawJSON(ctx context.Context, snap Snapshot, method, path string, hdr http.Header, body, out any) error {
	_, err := c.once(ctx, snap, method, path, hdr, body, out)
	return err
}

func (c *Client) once(ctx context.Context, snap Snapshot, method, path string, hdr http.Header, body, out any) (http.Header, error) {
	var rd io.Reader
	ctype, size := "application/json", int64(-1)
	if raw, ok := body.(rawBody); ok {
		var err error
		if rd, err = raw.open(); err != nil {
			return nil, err
		}
		ctype, size = raw.ctype, raw.size
	} else if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd, size = bytes.NewReader(b), int64(len(b))
	}
	req, err := http.NewRequestWithContext(ctx, method, snap.BaseURL+path, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
		req.ContentLength = size
	}
	req.Header.Set("Authorization", "Bearer "+snap.Token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		var eb wire.ErrorBody
		if json.Unmarshal(b, &eb) != nil || eb.Error == nil {
			return resp.Header, &Error{Status: resp.StatusCode, Code: wire.CodeInternal, Message: string(b)}
		}
		return resp.Header, &Error{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.Header, fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	return resp.Header, nil
}

// notSent says whether a failed request certainly never reached the daemon.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// call makes a request, following the daemon across restarts: a request
// that never left is retried after re-discovering the daemon; one that may
// have arrived is retried only when idempotent. It gives up after
// Options.CallRetry.
func (c *Client) call(ctx context.Context, method, path string, hdr http.Header, body, out any, idempotent bool) (http.Header, error) {
	deadline := time.Now().Add(c.opts.CallRetry)
	b := NewBackoff(c.opts.Backoff)
	var refused *Error // a 401, and the token it refused
	var refusedToken string
	for {
		snap, err := c.current(ctx)
		if err == nil && refused != nil && snap.Token == refusedToken {
			// The daemon found again still gives the token refused (or
			// the client has a token of its own): it is revoked, not old.
			return nil, refused
		}
		if err == nil {
			var h http.Header
			h, err = c.once(ctx, snap, method, path, hdr, body, out)
			retry := false
			var e *Error
			switch {
			case err == nil:
				return h, nil
			case errors.As(err, &e):
				// A 401 after a restart is an old token; daemon_stopping is
				// a daemon on its way out. Both mean: find the next one. A
				// client of a URL has the one token, which a next node
				// would refuse as well.
				retry = e.Status == http.StatusUnauthorized && !c.remote() || e.Code == wire.CodeDaemonStopping
				if retry {
					c.invalidate(snap)
				}
				if e.Status == http.StatusUnauthorized {
					refused, refusedToken = e, snap.Token
				}
				if e.Code == wire.CodeUnavailable {
					retry = true // the daemon's store failed for now: the same daemon, after a backoff
				}
			case ctx.Err() != nil:
				return nil, ctx.Err()
			default:
				c.invalidate(snap)
				retry = idempotent || notSent(err)
			}
			if !retry {
				return h, err
			}
		} else if c.opts.AutoStart && isStartError(err) {
			// This client started a daemon and it could not start: another
			// try would fail the same way, and log it again.
			return nil, err
		}
		d := b.Next()
		if time.Now().Add(d).After(deadline) {
			if err == nil {
				err = ErrUnavailable
			}
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
