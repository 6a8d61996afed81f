package wire

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
)

// Code is the machine-readable kind of an error, shared by the HTTP API
// (in {"error":{...}}) and websocket error replies.
type Code string

// Error codes.
const (
	CodeBadRequest       Code = "bad_request"        // malformed JSON, wrong types, missing or invalid fields
	CodeUnknownOp        Code = "unknown_op"         // a websocket op the server does not know
	CodeUnauthorized     Code = "unauthorized"       // missing, wrong or revoked token
	CodeForbidden        Code = "forbidden"          // the token's role may not do this
	CodeNotFound         Code = "not_found"          // no such session, input or route
	CodeMethodNotAllowed Code = "method_not_allowed" // a route that exists, with another method
	CodeConflict         Code = "conflict"           // an id reused with a different body
	CodeEtagMismatch     Code = "etag_mismatch"      // If-Match does not name the current version
	CodeEtagRequired     Code = "etag_required"      // PATCH without If-Match, PUT-create without If-None-Match: *
	CodeTooLarge         Code = "too_large"          // input text or request body over the limit
	CodeTooMany          Code = "too_many"           // over the channel limit of a connection
	CodeHelloRequired    Code = "hello_required"     // a command before hello
	CodeDaemonStopping   Code = "daemon_stopping"    // the daemon is shutting down; retry on the next one
	CodeNotServing       Code = "not_serving"        // a reply to a turn this connection does not serve
	CodeUnavailable      Code = "unavailable"        // the store failed for now (unreachable, full): nothing was written; retry in a moment
	CodeInternal         Code = "internal"           // a bug
)

// Error is the error body of the HTTP API and of websocket error replies.
// Retryable is set on websocket replies when trying again later may succeed.
type Error struct {
	Code      Code   `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf makes an Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Retryable: code == CodeDaemonStopping || code == CodeUnavailable}
}

// ErrorBody is the JSON body of an HTTP error reply.
type ErrorBody struct {
	Error *Error `json:"error"`
}

// AsError turns any error into a contract error. An error that is not one
// already is a bug or a storage failure: it is logged here, once, with
// attrs (what was asked: the route or op, the session) and a reference
// that the client's message carries too, so that an operator finds the
// line wherever the daemon logs (daemon.log on a home, stderr on a
// server), and reported as internal without its details. A nil log logs
// nothing, for a caller that only asks the code.
func AsError(log *slog.Logger, err error, attrs ...any) *Error {
	var we *Error
	if errors.As(err, &we) {
		return we
	}
	ref := errorRef()
	if log != nil {
		log.Error("internal error", append([]any{"ref", ref, "err", err}, attrs...)...)
	}
	return &Error{Code: CodeInternal, Message: "internal error " + ref + "; the daemon's log has its cause under ref=" + ref}
}

// errorRef is a short random reference for one internal error.
func errorRef() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
