package main

import (
	"fmt"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"albedo/client"
)

// `albedo drain` is a stop for a node of a cluster: the daemon sends its
// clients elsewhere over its --drain-window, lets its turns end, then
// stops (SIGUSR2 does the same from a service manager).
func newDrainCmd(g *globals) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "drain",
		Short: "take the daemon out of service, then stop it: clients reconnect elsewhere over its --drain-window",
		Long: "Drain the daemon of the home, then stop it. /readyz answers 503 at once, so that a load\n" +
			"balancer sends it nothing new; new websockets are refused; each open one is told to\n" +
			"reconnect (bye, drain, 1012) at a random moment within the daemon's --drain-window; the\n" +
			"node claims no more turns and lets its running ones end within the window; then it stops\n" +
			"as albedo stop does. The command sends the daemon SIGUSR2 and waits for it to exit.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.needHome("albedo drain drains the daemon of a home"); err != nil {
				return err
			}
			home, err := g.resolveHome()
			if err != nil {
				return err
			}
			pid, held := client.LockHolder(home)
			if !held {
				printf(g.stdout, "no daemon is running on %s\n", home)
				return nil
			}
			if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
				return fmt.Errorf("drain daemon pid %d: %w", pid, err)
			}
			printf(g.stdout, "draining daemon pid %d\n", pid)
			if err := waitExit(pid, wait); err != nil {
				return err
			}
			printf(g.stdout, "stopped daemon pid %d\n", pid)
			return nil
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 2*time.Minute, "how long to wait for the daemon to exit")
	return cmd
}
