package client

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// startDaemon runs `albedo daemon --home H` detached from this process (its
// own session, output to daemon.log) and waits until it answers. A daemon
// that cannot start is a *StartError saying why.
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
	before := fileStamp(filepath.Join(c.opts.Home, DownFile))
	cmd := exec.Command(exe, "daemon", "--home", c.opts.Home)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return Snapshot{}, fmt.Errorf("start daemon: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reap it whenever it ends
	return c.awaitStart(ctx, cmd.Process.Pid, exited, before, logPath)
}

// awaitStart probes until a daemon answers. The one started (pid child)
// may lose the race for the home's lock to another daemon, which then
// answers, or which holds the home without a daemon.json for a moment (it
// writes it again within a second): so the start has failed only once
// the child has exited and no daemon holds the lock. When another daemon
// answers, it waits for the child to exit too (it does as soon as it
// finds the lock taken): a child still starting when this returns could
// find the lock free after a stop and run on, unasked.
func (c *Client) awaitStart(ctx context.Context, child int, exited <-chan error, before stamp, logPath string) (Snapshot, error) {
	deadline := time.NewTimer(c.opts.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var exit error
	gone := false
	for {
		snap, err := c.probe(ctx)
		if err == nil && (snap.PID == child || gone) {
			return snap, nil
		}
		if err != nil && gone && !lockHeld(c.opts.Home) {
			return Snapshot{}, c.startFailure(before, exit, logPath)
		}
		select {
		case exit = <-exited:
			gone, exited = true, nil
		case <-deadline.C:
			if err == nil {
				return snap, nil // the child hangs, but a daemon answers
			}
			return Snapshot{}, &StartError{Reason: fmt.Sprintf("it did not answer within %s; see %s", c.opts.StartTimeout, logPath)}
		case <-ctx.Done():
			return Snapshot{}, ctx.Err()
		case <-tick.C:
		}
	}
}

func lockHeld(home string) bool {
	_, held := LockHolder(home)
	return held
}
