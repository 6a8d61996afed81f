package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"albedo/wire"
)

// File names inside $ALBEDO_HOME.
const (
	DaemonFile = "daemon.json"
	DBFile     = "albedo.db"
	LogFile    = "daemon.log"
	LockFile   = "daemon.lock"
	DownFile   = "daemon.down"
	StableFile = "daemon.stable" // what a daemon keeps from the one before it (cmd/albedo/stable.go)
	ConfigFile = "config.toml"
)

// DefaultHome is $ALBEDO_HOME, else $XDG_STATE_HOME/albedo, else
// ~/.local/state/albedo.
func DefaultHome() (string, error) {
	if h := os.Getenv("ALBEDO_HOME"); h != "" {
		return h, nil
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "albedo"), nil
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find home directory: %w", err)
	}
	return filepath.Join(u, ".local", "state", "albedo"), nil
}

// ReadDaemonFile reads home/daemon.json. A missing file is os.ErrNotExist.
func ReadDaemonFile(home string) (wire.DaemonInfo, error) {
	var info wire.DaemonInfo
	b, err := os.ReadFile(filepath.Join(home, DaemonFile))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("parse %s: %w", DaemonFile, err)
	}
	return info, nil
}

// LockHolder returns the pid of the daemon that holds home's lock, and
// whether one does: the lock file names the pid of the daemon that took
// it, and the lock itself says whether that daemon still runs (the kernel
// drops it with the process). It finds a daemon whose daemon.json was
// removed; a running daemon writes its file again within a second.
func LockHolder(home string) (int, bool) {
	path := filepath.Join(home, LockFile)
	fh, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer fh.Close()
	// A shared lock taken and dropped at once: it fails only while the
	// daemon holds its exclusive one.
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = syscall.Flock(int(fh.Fd()), syscall.LOCK_UN)
		return 0, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || !ProcessAlive(pid) {
		return 0, false
	}
	return pid, true
}

// ProcessAlive says whether pid names a live process. A zombie — exited,
// not yet reaped by its parent — is not: it holds no lock and serves
// nothing, and in a container whose first process reaps lazily it can
// linger for seconds, which `albedo stop` would spend waiting for it.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// zombie reads the process state from /proc (Linux); elsewhere it says no.
// The state is the main thread's: it turns Z while other threads may still
// be exiting and holding the process's files (the daemon's lock among
// them), so only a zombie with no other thread left counts.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state …: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) || b[i+2] != 'Z' {
		return false
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	return err == nil && len(tasks) <= 1
}
