package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"albedo/api"
	"albedo/api/wire"
	"albedo/client"
	"albedo/db"
	"albedo/hub"
	"albedo/hub/provider"
)

// daemonFlags are the knobs of `albedo daemon`; tests use the short ones.
type daemonFlags struct {
	addr         string
	heartbeat    time.Duration
	writeTimeout time.Duration
	helloTimeout time.Duration
	debugAddr    string
}

func newDaemonCmd(g *globals) *cobra.Command {
	var f daemonFlags
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "run the daemon in the foreground",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := g.resolveHome()
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
			return runDaemon(cmd.Context(), home, f, log)
		},
	}
	cmd.Flags().StringVar(&f.addr, "addr", "127.0.0.1:0", "listen address (port 0: any free port)")
	cmd.Flags().DurationVar(&f.heartbeat, "heartbeat", 15*time.Second, "websocket ping interval")
	cmd.Flags().DurationVar(&f.writeTimeout, "write-timeout", 30*time.Second, "close a connection that accepts nothing this long")
	cmd.Flags().DurationVar(&f.helloTimeout, "hello-timeout", 10*time.Second, "a websocket must say hello within this")
	cmd.Flags().StringVar(&f.debugAddr, "debug-addr", "", "serve Go's /debug/pprof on this address (e.g. 127.0.0.1:6060); off by default")
	return cmd
}

// runDaemon starts the daemon and blocks until ctx ends (SIGTERM, SIGINT) or
// a shutdown request, then stops in the order of PROTOCOL.md.
func runDaemon(ctx context.Context, home string, f daemonFlags, log *slog.Logger) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("create home %s: %w", home, err)
	}
	unlock, err := lockHome(home)
	if err != nil {
		return &exitError{code: 3, err: err}
	}
	defer unlock()
	// A daemon.json left by a crash names a dead pid; it is ours to replace.
	_ = os.Remove(filepath.Join(home, client.DaemonFile))

	cfg, err := provider.LoadConfig(filepath.Join(home, client.ConfigFile))
	if err != nil {
		return err
	}
	reg, err := provider.NewRegistry(cfg, os.Getenv)
	if err != nil {
		return fmt.Errorf("%s: %w", client.ConfigFile, err)
	}

	var h *hub.Hub
	d, err := db.Open(ctx, filepath.Join(home, client.DBFile), db.Options{
		OnCommit: func(cs []db.Committed) { h.OnCommit(cs) },
	})
	if err != nil {
		return err
	}
	h = hub.New(d, hub.Options{Providers: reg}, log)
	// Repair turns a crash left running and queue the inputs still waiting,
	// before anyone can connect.
	if err := h.Start(ctx); err != nil {
		h.Close(context.Background())
		d.Close(context.Background())
		return err
	}

	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		h.Close(context.Background())
		d.Close(context.Background())
		return fmt.Errorf("listen on %s: %w", f.addr, err)
	}
	info := wire.DaemonInfo{
		PID: os.Getpid(), Port: ln.Addr().(*net.TCPAddr).Port, Token: randomHex(32), Boot: randomHex(8),
		Version: wire.Version, StartedAt: time.Now().UTC().Truncate(time.Second),
	}
	stopReq := make(chan struct{}, 1)
	srv := api.New(h, api.Options{
		Token: info.Token, Boot: info.Boot, Heartbeat: f.heartbeat, WriteTimeout: f.writeTimeout, HelloTimeout: f.helloTimeout,
		OnShutdown: func() {
			select {
			case stopReq <- struct{}{}:
			default:
			}
		},
	}, log)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	if f.debugAddr != "" {
		// Profiles for measuring, never on by default: they need no token.
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		dbg := &http.Server{Addr: f.debugAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { log.Info("pprof listening", "addr", f.debugAddr, "err", dbg.ListenAndServe()) }()
		defer dbg.Close()
	}
	if err := writeDaemonFile(home, info); err != nil {
		hs.Close()
		srv.Close()
		h.Close(context.Background())
		d.Close(context.Background())
		return err
	}
	log.Info("daemon listening", "port", info.Port, "pid", info.PID, "home", home, "version", wire.Version)

	select {
	case <-ctx.Done():
	case <-stopReq:
	case err := <-served:
		log.Error("http server failed", "err", err)
	}

	// The stop order of PROTOCOL.md.
	log.Info("daemon stopping")
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h.Stopping()                                          // 1. refuse new inputs
	h.InterruptAll(sctx, wire.ReasonDaemonShutdown)       // 2. interrupt and commit running turns
	srv.Bye(sctx, wire.ByeShutdown, 250*time.Millisecond) // 3. bye, then close every socket
	if err := hs.Shutdown(sctx); err != nil {             // 4. stop listening
		log.Warn("http shutdown", "err", err)
	}
	srv.Close()
	h.Close(sctx)
	_ = os.Remove(filepath.Join(home, client.DaemonFile)) // 5. remove daemon.json
	if err := d.Close(sctx); err != nil {
		log.Error("close database", "err", err)
	}
	log.Info("daemon stopped")
	return nil
}

// lockHome takes an exclusive lock on home/daemon.lock for the daemon's
// lifetime. The kernel drops it when the process dies, so a crash never
// leaves a stale lock.
func lockHome(home string) (func(), error) {
	path := filepath.Join(home, client.LockFile)
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fh.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			msg := fmt.Sprintf("another albedo daemon is already running on %s", home)
			if info, err := client.ReadDaemonFile(home); err == nil {
				msg += fmt.Sprintf(" (pid %d, port %d)", info.PID, info.Port)
			}
			return nil, errors.New(msg + "; stop it with `albedo stop` or use another --home")
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = fh.Truncate(0)
	_, _ = fh.WriteString(fmt.Sprintf("%d\n", os.Getpid()))
	return func() { fh.Close() }, nil
}

// writeDaemonFile publishes info atomically (temp file, then rename), 0600.
func writeDaemonFile(home string, info wire.DaemonInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(home, ".daemon-*.json")
	if err != nil {
		return fmt.Errorf("write daemon.json: %w", err)
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
	return os.Rename(tmp.Name(), filepath.Join(home, client.DaemonFile))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
