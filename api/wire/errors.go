package wire

import "fmt"

// Error codes shared by the HTTP API (in {"error":{...}}) and websocket
// error replies.
const (
	CodeBadRequest     = "bad_request"     // malformed JSON, wrong types, missing or invalid fields
	CodeUnknownOp      = "unknown_op"      // a websocket op the server does not know
	CodeUnauthorized   = "unauthorized"    // missing, wrong or revoked token
	CodeForbidden      = "forbidden"       // the token's role may not do this
	CodeNotFound       = "not_found"       // no such session, input or route
	CodeConflict       = "conflict"        // an id reused with a different body
	CodeEtagMismatch   = "etag_mismatch"   // If-Match does not name the current version
	CodeEtagRequired   = "etag_required"   // PATCH without If-Match, PUT-create without If-None-Match: *
	CodeTooLarge       = "too_large"       // input text or request body over the limit
	CodeTooMany        = "too_many"        // over the channel limit of a connection
	CodeHelloRequired  = "hello_required"  // a command before hello
	CodeDaemonStopping = "daemon_stopping" // the daemon is shutting down; retry on the next one
	CodeNotServing     = "not_serving"     // a reply to a turn this connection does not serve
	CodeInternal       = "internal"        // a bug or a storage failure
)

// Error is the error body of the HTTP API and of websocket error replies.
// Retryable is set on websocket replies when trying again later may succeed.
type Error struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf makes an Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Retryable: code == CodeDaemonStopping}
}

// ErrorBody is the JSON body of an HTTP error reply.
type ErrorBody struct {
	Error *Error `json:"error"`
}
