package hub

import (
	"errors"

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
	}
	return err
}
