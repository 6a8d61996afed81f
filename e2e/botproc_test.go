// The example bot as a process (runBot, startBot).

package e2e

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// botProc is an example bot process a test started: it is killed, and
// waited for, when the test ends, or by kill.
type botProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *logLines // what it wrote to stderr: its log
}

// runBot starts the example bot with args, in env (nil: this process's).
func runBot(t *testing.T, env []string, args ...string) *botProc {
	t.Helper()
	b := &botProc{cmd: exec.Command(botBin, args...), done: make(chan struct{}), log: &logLines{}}
	b.cmd.Env, b.cmd.Stderr = env, b.log
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.cmd.Wait(); close(b.done) }()
	t.Cleanup(b.kill)
	return b
}

// kill ends the bot and waits for it; safe to call twice.
func (b *botProc) kill() {
	b.cmd.Process.Kill()
	<-b.done
}

// startBot runs the example bot process with token on home, pausing pace
// between the pieces of an answer.
func startBot(t *testing.T, home, token string, pace time.Duration) *botProc {
	t.Helper()
	return runBot(t, append(os.Environ(), "ALBEDO_BOT_TOKEN="+token), "--home", home, "--pace", pace.String())
}
