package client

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
