package hub

import (
	"errors"
	"log/slog"
	"strings"

	"albedo/db"
	"albedo/wire"
)

// wireErr maps storage errors to the contract's codes; anything else is
// returned as it is, for the edge to log and report as internal.
func wireErr(err error) error {
	var we *wire.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &we):
		return we
	case errors.Is(err, db.ErrNotFound):
		return &wire.Error{Code: wire.CodeNotFound, Message: err.Error()}
	case errors.Is(err, db.ErrConflict):
		return &wire.Error{Code: wire.CodeConflict, Message: err.Error()}
	case errors.Is(err, db.ErrStale):
		return &wire.Error{Code: wire.CodeEtagMismatch, Message: err.Error()}
	case errors.Is(err, db.ErrClosed):
		return &wire.Error{Code: wire.CodeDaemonStopping, Message: "the daemon is stopping", Retryable: true}
	case db.Unavailable(err):
		return &wire.Error{Code: wire.CodeUnavailable, Message: "the store is unavailable for now (" + storeFault(err) + "); nothing was written: try again in a moment", Retryable: true}
	}
	return err
}

// storeFault is what a store's fault was, in a few words for a client
// (the daemon's log has the whole error).
func storeFault(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return strings.ToValidUTF8(msg, "")
}

// AsError is wire.AsError that first maps the store's errors to the
// contract's codes (wireErr): a fault of the store that may pass is
// unavailable, logged as a warning, not internal.
func AsError(log *slog.Logger, err error, attrs ...any) *wire.Error {
	we := wire.AsError(log, wireErr(err), attrs...)
	if we.Code == wire.CodeUnavailable && log != nil {
		log.Warn("store unavailable", append([]any{"err", err}, attrs...)...)
	}
	return we
}
