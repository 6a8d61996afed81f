package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"albedo/client"
	"albedo/wire"
)

// lockHome takes an exclusive lock on home/daemon.lock for the daemon's
// lifetime. The kernel drops it when the process dies, so a crash never
// leaves a stale lock.
func lockHome(home string) (func(), error) {
	path := filepath.Join(home, client.LockFile)
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := lockRetrying(fh); err != nil {
		fh.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			msg := fmt.Sprintf("another albedo daemon is already running on %s", home)
			if info, err := client.ReadDaemonFile(home); err == nil {
				msg += fmt.Sprintf(" (pid %d, port %d)", info.PID, info.Port)
			}
			// Exit status 3 says this, and only this (docs/protocol.md).
			return nil, &exitError{code: 3, err: errors.New(msg + "; stop it with `albedo stop` or use another --home")}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = fh.Truncate(0)
	_, _ = fh.WriteString(fmt.Sprintf("%d\n", os.Getpid()))
	return func() { fh.Close() }, nil
}

// lockRetrying takes fh's exclusive lock, trying again for a moment while
// it is busy: client.LockHolder takes a shared lock for an instant to see
// whether a daemon holds the home, and a daemon starting in that instant
// must not take it for another daemon.
func lockRetrying(fh *os.File) error {
	var err error
	for range 10 {
		if err = syscall.Flock(int(fh.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// writeDaemonFile publishes info atomically (temp file, then rename), 0600.
func writeDaemonFile(home string, info wire.DaemonInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(home, client.DaemonFile, b); err != nil {
		return fmt.Errorf("write %s: %w", client.DaemonFile, err)
	}
	return nil
}

// writeDown records in daemon.down why no daemon runs (client.Down):
// clients then start none on their own until a command, a retry or an
// edited config.toml asks for one. The next daemon to listen removes it.
func writeDown(home string, dn client.Down) error {
	dn.PID, dn.At = os.Getpid(), time.Now().UTC()
	b, err := json.MarshalIndent(dn, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(home, client.DownFile, b); err != nil {
		return fmt.Errorf("write %s: %w", client.DownFile, err)
	}
	return nil
}

// writeAtomic writes home/name (temp file, sync, rename), 0600: a reader
// sees the old file or the new one, never a part.
func writeAtomic(home, name string, b []byte) error {
	tmp, err := os.CreateTemp(home, "."+name+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(home, name))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
