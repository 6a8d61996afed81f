package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Down is daemon.down: why no daemon runs on a home when that is no
// accident. A daemon writes it when it stops on purpose (albedo stop,
// SIGTERM or SIGINT, the shutdown API) or cannot start, and the next
// daemon to listen removes it. A crash writes none, so a client starts a
// daemon on its own after a crash, and only then.
type Down struct {
	PID     int       `json:"pid"`
	At      time.Time `json:"at"`
	Stopped bool      `json:"stopped,omitempty"` // a stop on purpose
	Error   string    `json:"error,omitempty"`   // why the start failed
	// Config is config.toml as the failed start found it: clients try
	// again on their own only once the file has changed.
	Config *ConfigStamp `json:"config,omitempty"`
}

// ConfigStamp identifies a version of config.toml; the zero value is a
// missing file.
type ConfigStamp struct {
	ModNS int64 `json:"mtime_ns,omitempty"`
	Size  int64 `json:"size,omitempty"`
}

// StampConfig returns the stamp of home's config.toml.
func StampConfig(home string) ConfigStamp {
	fi, err := os.Stat(filepath.Join(home, ConfigFile))
	if err != nil {
		return ConfigStamp{}
	}
	return ConfigStamp{ModNS: fi.ModTime().UnixNano(), Size: fi.Size()}
}

// ReadDown reads home/daemon.down. A missing file is os.ErrNotExist.
func ReadDown(home string) (Down, error) {
	var d Down
	b, err := os.ReadFile(filepath.Join(home, DownFile))
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("parse %s: %w", DownFile, err)
	}
	return d, nil
}

// ErrStopped means the daemon was stopped on purpose and none has started
// since. It matches ErrUnavailable.
var ErrStopped = fmt.Errorf("%w: it was stopped", ErrUnavailable)

// StartError is a daemon that could not start. Reason is its own error
// (from daemon.down) or, when it left none, its log's last line. It
// matches ErrUnavailable.
type StartError struct {
	Reason string
}

func (e *StartError) Error() string { return "daemon cannot start: " + e.Reason }
func (e *StartError) Unwrap() error { return ErrUnavailable }

// downErr says why a client should not start a daemon on its own:
// ErrStopped after a stop on purpose, a *StartError when the last start
// failed and config.toml has not changed since (the next start would fail
// the same way). nil means a daemon may be started: nothing is recorded
// (a crash, or a first start), or the config was edited.
func (c *Client) downErr() error {
	if c.remote() {
		return nil // no home: nothing recorded, and nothing to start
	}
	d, err := ReadDown(c.opts.Home)
	switch {
	case err != nil:
		return nil
	case d.Stopped:
		return ErrStopped
	case d.Error != "" && d.Config != nil && *d.Config == StampConfig(c.opts.Home):
		return &StartError{Reason: d.Error}
	}
	return nil
}

// startFailure says why a daemon this client started exited without
// answering: daemon.down if it changed since before (the stamp taken
// before the start; a daemon started at the same time by another client
// may have written it, which is as good a reason), else the log's last
// line.
func (c *Client) startFailure(before stamp, exit error, logPath string) error {
	if fileStamp(filepath.Join(c.opts.Home, DownFile)) != before {
		if d, err := ReadDown(c.opts.Home); err == nil && d.Error != "" {
			return &StartError{Reason: d.Error}
		}
	}
	how := "it exited"
	if exit != nil {
		how += " (" + exit.Error() + ")"
	}
	return &StartError{Reason: how + ": " + lastLine(logPath)}
}

// lastLine is the last line of the file at path, or "" if it has none.
func lastLine(path string) string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// brief is a reason to show in one line: paths inside home are relative
// to it, and white space runs are one space.
func brief(reason, home string) string {
	reason = strings.ReplaceAll(reason, home+string(filepath.Separator), "")
	return strings.Join(strings.Fields(reason), " ")
}

// isStartError says whether err is a *StartError.
func isStartError(err error) bool {
	var se *StartError
	return errors.As(err, &se)
}
