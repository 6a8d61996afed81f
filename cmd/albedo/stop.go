package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"albedo/client"
)

func newStopCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "stop the daemon gracefully (running turns are interrupted and kept)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.needHome("albedo stop stops the daemon of a home"); err != nil {
				return err
			}
			home, err := g.resolveHome()
			if err != nil {
				return err
			}
			c, err := client.New(client.Options{Home: home})
			if err != nil {
				return err
			}
			snap, err := c.Shutdown(cmd.Context())
			if errors.Is(err, client.ErrUnavailable) {
				// No daemon.json, or none that answers; the lock says
				// whether a daemon holds the home all the same.
				pid, held := client.LockHolder(home)
				if !held {
					printf(g.stdout, "no daemon is running on %s\n", home)
					return nil
				}
				snap, err = shutdownByLock(cmd.Context(), c, pid)
			}
			if err != nil {
				return err
			}
			// Wait for the process to go: the next command must not find it.
			if err := waitExit(snap.PID, 30*time.Second); err != nil {
				return err
			}
			printf(g.stdout, "stopped daemon pid %d\n", snap.PID)
			return nil
		},
	}
}

// waitExit waits until the process pid has exited, at most wait.
func waitExit(pid int, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for client.ProcessAlive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("daemon pid %d did not exit within %v", pid, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// shutdownByLock stops the daemon pid, which holds the home but whose
// daemon.json is missing: it writes the file again within a second, and
// is then asked to stop like any other; one that does not is sent SIGTERM,
// which stops it the same graceful way.
func shutdownByLock(ctx context.Context, c *client.Client, pid int) (client.Snapshot, error) {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if snap, err := c.Shutdown(ctx); err == nil {
			return snap, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return client.Snapshot{}, fmt.Errorf("stop daemon pid %d: %w", pid, err)
	}
	return client.Snapshot{PID: pid}, nil
}

func newStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "show the daemon (starting one if none runs), or the server of --url",
		Args:  cobra.NoArgs,
		RunE: g.withClient(func(ctx context.Context, c *client.Client, _ []string) error {
			ss, err := c.Sessions(ctx)
			if err != nil {
				return err
			}
			snap := c.Snapshot()
			if c.URL() != "" {
				// No pid and no home: what answered at the URL.
				printf(g.stdout, "server %s (version %s)\n%s\n", snap.BaseURL, snap.Version, plural(len(ss), "session"))
				return nil
			}
			info, _ := client.ReadDaemonFile(c.Home())
			printf(g.stdout, "daemon pid %d on %s (version %s, started %s)\nhome %s\n%s\n",
				snap.PID, snap.BaseURL, info.Version, info.StartedAt.Local().Format(time.RFC3339), c.Home(), plural(len(ss), "session"))
			return nil
		}),
	}
}

// plural is n of noun, in words: "1 session", "2 sessions".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
