package client

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// newDaemonPoll is how often a reconnecting stream looks at daemon.json.
const newDaemonPoll = 50 * time.Millisecond

// wait sleeps d before the next attempt, or less when a new daemon
// appears: the backoff grows while the daemon is down, and a stream that
// failed a few times would otherwise sleep for seconds after it is back.
// A daemon.json naming another boot of a live process is a new daemon: the
// schedule starts over and the wait shrinks to a first delay (full jitter,
// ≤ 250 ms), so streams come back spread over that window, not at once.
// seen is the boot daemon.json named when the wait began ("" for none).
// It returns false when the stream is closed. The poll is a stat; the file
// is read only when it has changed.
//
// In cluster mode there is no daemon.json: it sleeps d.
func (st *Stream) wait(d time.Duration, b *Backoff, lastErr error, seen string) bool {
	if st.c.remote() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-st.ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	path := filepath.Join(st.c.opts.Home, DaemonFile)
	var version stamp // the first poll reads the file, whatever its stamp
	t := time.NewTimer(d)
	defer t.Stop()
	poll := time.NewTicker(newDaemonPoll)
	defer poll.Stop()
	for {
		select {
		case <-st.ctx.Done():
			return false
		case <-t.C:
			return true
		case <-poll.C:
			if v := fileStamp(path); v == version {
				continue
			} else {
				version = v
			}
			info, err := ReadDaemonFile(st.c.opts.Home)
			if err != nil || info.Boot == seen || !ProcessAlive(info.PID) {
				continue
			}
			seen = info.Boot
			b.Reset()
			d := b.Next()
			t.Reset(d)
			st.setState(State{Phase: Reconnecting, Attempt: b.Attempt(), Next: d, Err: lastErr})
		}
	}
}

// homeMarks are the stamps of the files whose change may end a stream's
// wait for a daemon that is down on purpose: daemon.json (a daemon
// started), daemon.down (a stop or a failed start recorded, or cleared),
// config.toml (edited after a failed start).
type homeMarks [3]stamp

func (c *Client) homeMarks() homeMarks {
	if c.remote() {
		return homeMarks{} // no home; nothing waits on it (no downErr)
	}
	h := c.opts.Home
	return homeMarks{
		fileStamp(filepath.Join(h, DaemonFile)),
		fileStamp(filepath.Join(h, DownFile)),
		fileStamp(filepath.Join(h, ConfigFile)),
	}
}

// waitHome waits until those files differ from marks, taken before the
// attempt that found the daemon down, so that a change made while the
// attempt ran is not missed. It returns false when the stream is closed.
// Like wait, it polls (a stat of three files every 50 ms); a daemon
// starting is seen within that, with no backoff to sit out.
func (st *Stream) waitHome(marks homeMarks) bool {
	poll := time.NewTicker(newDaemonPoll)
	defer poll.Stop()
	for st.c.homeMarks() == marks {
		select {
		case <-st.ctx.Done():
			return false
		case <-poll.C:
		}
	}
	return true
}

// WaitHomeChange returns once daemon.json, daemon.down or config.toml of
// the home changes (a daemon started or stopped, the config edited), or
// with ctx's error. In cluster mode there is no home: it returns once the
// server answers /healthz.
func (c *Client) WaitHomeChange(ctx context.Context) error {
	return c.waitHomeSince(ctx, c.homeMarks())
}

// WaitHomeChange is Client.WaitHomeChange counted from the stream's last
// attempt to connect rather than from now. A user interface whose stream
// has ended (Unavailable) waits here to try again by itself when a daemon
// comes back: one that started after the attempt failed, while the stream
// gave up or before the interface got to wait, ends the wait at once
// instead of being missed.
func (st *Stream) WaitHomeChange(ctx context.Context) error {
	st.mu.Lock()
	marks := st.marks
	st.mu.Unlock()
	return st.c.waitHomeSince(ctx, marks)
}

// waitHomeSince returns once the home's files differ from marks.
func (c *Client) waitHomeSince(ctx context.Context, marks homeMarks) error {
	if c.remote() {
		return c.waitRemote(ctx)
	}
	poll := time.NewTicker(newDaemonPoll)
	defer poll.Stop()
	for c.homeMarks() == marks {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-poll.C:
		}
	}
	return nil
}

// daemonBoot is the boot daemon.json names now, or "" if there is none.
func (c *Client) daemonBoot() string {
	if c.remote() {
		return ""
	}
	if info, err := ReadDaemonFile(c.opts.Home); err == nil {
		return info.Boot
	}
	return ""
}

// stamp identifies a version of a file (missing: the zero stamp).
type stamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

func fileStamp(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	s := stamp{mod: fi.ModTime(), size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino // daemon.json is replaced by a rename: a new inode
	}
	return s
}
