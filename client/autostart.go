package client

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// startDaemon runs `albedo daemon --home H` detached from this process (its
// own session, output to daemon.log) and waits until it answers.
func (c *Client) startDaemon(ctx context.Context) (Snapshot, error) {
	exe, err := c.exe()
	if err != nil {
		return Snapshot{}, fmt.Errorf("find albedo binary: %w", err)
	}
	if err := os.MkdirAll(c.opts.Home, 0o700); err != nil {
		return Snapshot{}, fmt.Errorf("create home: %w", err)
	}
	logPath := filepath.Join(c.opts.Home, LogFile)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return Snapshot{}, fmt.Errorf("open %s: %w", logPath, err)
	}
	defer logf.Close()
	cmd := exec.Command(exe, "daemon", "--home", c.opts.Home)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return Snapshot{}, fmt.Errorf("start daemon: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reap it whenever it ends

	deadline := time.NewTimer(c.opts.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if snap, err := c.probe(ctx); err == nil {
			return snap, nil
		}
		select {
		case err := <-exited:
			// It may have lost a race to another daemon that now answers.
			if snap, perr := c.probe(ctx); perr == nil {
				return snap, nil
			}
			if _, held := LockHolder(c.opts.Home); held {
				// A daemon runs whose daemon.json was removed: it writes
				// it again within a second; keep probing.
				exited = nil
				continue
			}
			return Snapshot{}, fmt.Errorf("%w: the daemon exited (%v): %s", ErrUnavailable, err, lastLines(logPath, 5))
		case <-deadline.C:
			return Snapshot{}, fmt.Errorf("%w: the daemon did not answer within %s; see %s", ErrUnavailable, c.opts.StartTimeout, logPath)
		case <-ctx.Done():
			return Snapshot{}, ctx.Err()
		case <-tick.C:
		}
	}
}

func lastLines(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
