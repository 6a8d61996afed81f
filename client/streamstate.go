package client

import (
	"errors"
	"time"

	"albedo/wire"
)

// Phase of a stream's connection.
type Phase int

// Connection phases.
const (
	Connecting Phase = iota
	Connected
	Reconnecting
	// Unavailable: the stream has ended (budget spent, token refused).
	Unavailable
	// Stopped: the daemon was stopped on purpose. The stream starts none;
	// it waits until one starts (a command, a retry) and connects to it.
	Stopped
	// StartFailed: the daemon cannot start; State.Reason says why. The
	// stream waits until config.toml changes or a daemon starts.
	StartFailed
)

func (p Phase) String() string {
	return [...]string{"connecting", "connected", "reconnecting", "unavailable", "stopped", "start failed"}[p]
}

// WaitsForUser says whether only a user's action brings a daemon back: a
// stream that has ended (Unavailable) or one that starts none on its own
// (Stopped, StartFailed). A user interface offers a retry then.
func (p Phase) WaitsForUser() bool {
	return p == Unavailable || p == Stopped || p == StartFailed
}

// State is what a user interface shows about the connection.
type State struct {
	Phase   Phase
	Attempt int           // reconnect attempt, from 1 (Reconnecting)
	Next    time.Duration // delay before that attempt (Reconnecting)
	Err     error         // why the last connection ended or failed
	Snap    Snapshot      // the daemon when Connected
	// Role is the token's role as hello answered it (Connected): what
	// the client may offer (a guest may write, and may not decide).
	Role wire.TokenRole
	// Reason is why the daemon cannot start (StartFailed), in one line,
	// with paths inside the home relative to it: "config.toml line 3: …".
	Reason string
}

// downState is the state of a stream that found the daemon down on
// purpose (err from discover), and whether it did.
func (st *Stream) downState(err error) (State, bool) {
	var se *StartError
	switch {
	case errors.Is(err, ErrStopped):
		return State{Phase: Stopped, Err: err}, true
	case errors.As(err, &se):
		return State{Phase: StartFailed, Err: err, Reason: brief(se.Reason, st.c.opts.Home)}, true
	}
	return State{}, false
}
