package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"albedo/api"
	"albedo/client"
	"albedo/db"
	"albedo/gcfloor"
	"albedo/hub"
	"albedo/hub/access"
	"albedo/hub/acphost"
	"albedo/hub/mcphost"
	"albedo/hub/natsbus"
	"albedo/hub/provider"
	"albedo/mcpserve"
	"albedo/wire"
)

// daemonFlags are the knobs of `albedo daemon`; tests use the short ones.
type daemonFlags struct {
	edgeFlags
	heartbeat    time.Duration
	writeTimeout time.Duration
	helloTimeout time.Duration
	perToken     int // --conns-per-token
	debugAddr    string
	node         string // this daemon's name among the nodes of a cluster, in every log line and lease
	db           string // a postgres:// URL; empty: database_url, else the home's SQLite file
	dbFile       string // a file holding db's URL, a secret
	natsFlags
	natsOpts      []nats.Option // natsFlags' (check)
	lease         time.Duration
	maxAttachment int64
	maxMentions   int
	noMigrate     bool // refuse a store that needs migrations rather than run them
	drainWindow   time.Duration
	gcFloor       int64 // the heap the collector lets grow before it runs (gcfloor)
}

// defaultGCFloor is --gc-floor-bytes' default: a busy daemon keeps little
// live, and without a floor it spends a share of its CPU collecting a heap
// of a few MiB many times a second.
const defaultGCFloor = 32 << 20

func newDaemonCmd(g *globals) *cobra.Command {
	var f daemonFlags
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "run the daemon in the foreground",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A daemon runs on a home whatever $ALBEDO_URL says (that is
			// for its clients); the client flags are a mistake here.
			if g.url != "" || g.token != "" {
				return usageErrorf("albedo daemon runs the daemon of a home: --url and --token are for its clients")
			}
			home, err := g.resolveHome()
			if err != nil {
				return err
			}
			if err := applyDaemonConfig(cmd.Flags(), home, os.Getenv); err != nil {
				return err
			}
			if err := f.check(); err != nil {
				return err
			}
			if f.node == "" {
				f.node = hub.DefaultNode()
			}
			log := newLogger(g.stderr, f.logFormat).With("node", f.node)
			return runDaemon(cmd.Context(), home, f, log)
		},
	}
	f.edgeFlags.register(cmd)
	cmd.Flags().DurationVar(&f.heartbeat, "heartbeat", 15*time.Second, "websocket ping interval")
	cmd.Flags().DurationVar(&f.writeTimeout, "write-timeout", 30*time.Second, "close a connection whose write waits this long (no heartbeat ping is sent meanwhile)")
	cmd.Flags().DurationVar(&f.helloTimeout, "hello-timeout", 10*time.Second, "a websocket must say hello within this")
	cmd.Flags().IntVar(&f.perToken, "conns-per-token", 0, "websockets one token other than an owner's may hold (a link with its guests, a bot, a member's personal token); 0: an eighth of the daemon's open-connection bound")
	cmd.Flags().StringVar(&f.debugAddr, "debug-addr", "", "serve Go's /debug/pprof on this address (e.g. 127.0.0.1:6060); off by default")
	cmd.Flags().StringVar(&f.node, "node", "", "this daemon's name among a cluster's nodes, in its log lines and turn leases (default: host name and pid)")
	cmd.Flags().StringVar(&f.db, "db", "", "a postgres:// URL to share with other nodes (default: database_url in config.toml, else the home's SQLite file)")
	cmd.Flags().StringVar(&f.dbFile, "db-file", "", "read --db's URL, a secret, from this file instead")
	f.natsFlags.register(cmd)
	cmd.Flags().DurationVar(&f.drainWindow, "drain-window", 10*time.Second, "on SIGUSR2 (albedo drain), how long the node takes to send its clients elsewhere and let its turns end before it stops")
	cmd.Flags().BoolVar(&f.noMigrate, "no-migrate", false, "refuse to start on a store that needs migrations, rather than run them (albedo migrate runs them)")
	cmd.Flags().Int64Var(&f.maxAttachment, "max-attachment-bytes", wire.DefaultMaxAttachmentBytes, "the largest file the daemon stores (PUT /v1/blobs), in bytes")
	cmd.Flags().IntVar(&f.maxMentions, "max-mention-turns", wire.DefaultMaxMentionTurns, "the turns one message's @mentions may start; the mentions past it start none")
	cmd.Flags().Int64Var(&f.gcFloor, "gc-floor-bytes", defaultGCFloor, "while less is live, let the heap grow to this many bytes before Go's collector runs (it otherwise runs each time the heap doubles); 0: GOGC alone")
	cmd.Flags().DurationVar(&f.lease, "lease", hub.DefaultLease, "PostgreSQL: how long a node's claim on a session's turns lasts without renewal; another node takes over after it")
	return cmd
}

// daemon is a running daemon's parts, in the order they start. Only
// runDaemon's goroutine touches it.
type daemon struct {
	home    string
	log     *slog.Logger
	unlock  func()           // releases daemon.lock
	hub     *hub.Hub         // which owns store: its Close closes it
	store   *db.DB           // the store, for its pool's metrics
	srv     *api.Server      // the API and the websockets
	hs      *http.Server     // serves srv
	dbg     *http.Server     // pprof, when asked for
	metrics *http.Server     // /metrics and /readyz on --metrics-addr, when asked for
	served  chan error       // hs.Serve's end
	stop    chan struct{}    // POST /v1/daemon/shutdown; capacity 1
	keep    func()           // stops keepDaemonFile and waits for it
	pub     published        // daemon.json as written last (its own lock: keepDaemonFile's goroutine)
	nc      *nats.Conn       // the cluster's NATS, with --nats
	cert    *servedCert      // the TLS certificate, with --tls-cert
	owner   access.Principal // the home's own member, whom daemon.json's token acts as
	key     []byte           // daemon.key: what the daemon proves itself to pages with
	unwatch func()           // stops watchConfig and waits for it
	mcp     *mcphost.Host    // the MCP servers config.toml names
	agents  *acphost.Host    // the coding agents of acp profiles' sessions
	mcpHTTP *mcpserve.HTTP   // /v1/mcp: albedo as an MCP server
}

// runDaemon starts the daemon and blocks until ctx ends (SIGTERM, SIGINT) or
// a shutdown request, then stops in the order of docs/protocol.md.
func runDaemon(ctx context.Context, home string, f daemonFlags, log *slog.Logger) error {
	// SIGHUP re-reads the stored tokens (albedo tokens sends it, on
	// PostgreSQL) and the TLS certificate. Caught before the home is
	// locked: a command that finds this daemon through its lock must not
	// kill it with SIGHUP's default action.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// SIGUSR2 drains the node, then stops it (albedo drain sends it; NATS's
	// lame-duck mode is the same signal).
	usr2 := make(chan os.Signal, 1)
	signal.Notify(usr2, syscall.SIGUSR2)
	defer signal.Stop(usr2)
	defer gcfloor.Keep(f.gcFloor)()
	d, err := startDaemon(ctx, home, f, log)
	if err != nil {
		return err
	}
	for stopped := false; !stopped; {
		select {
		case <-hup:
			d.reloadTokens(ctx)
			d.reloadCert()
			continue
		case <-usr2:
			d.stoppedOnPurpose()
			d.drain(f.drainWindow)
		case <-ctx.Done():
			d.stoppedOnPurpose()
		case <-d.stop:
			d.stoppedOnPurpose()
		case err := <-d.served:
			// No record: clients start the next daemon, as after a crash.
			log.Error("http server failed", "err", err)
		}
		stopped = true
	}
	d.shutdown()
	return nil
}

// reloadTokens re-reads the stored tokens on SIGHUP: new ones are accepted,
// removed ones have their websockets closed with 4401.
func (d *daemon) reloadTokens(ctx context.Context) {
	n, err := d.srv.ReloadTokens(ctx)
	if err != nil {
		d.log.Error("re-read tokens", "err", err)
		return
	}
	d.log.Info("tokens re-read", "revoked", n)
}

// reloadCert re-reads the TLS certificate on SIGHUP, for a renewal; one
// that cannot be read leaves the one served.
func (d *daemon) reloadCert() {
	if d.cert == nil {
		return
	}
	leaf, err := d.cert.reload()
	if err != nil {
		d.log.Error("re-read the TLS certificate; still serving the one before", "err", err)
		return
	}
	// The home's clients trust the daemon by the certificate daemon.json
	// names: the new one from now.
	d.pub.mu.Lock()
	if d.pub.info.Boot != "" { // else publish, to come, writes it
		d.pub.info.TLSCertSHA256 = d.cert.fingerprint()
		if err := writeDaemonFile(d.home, d.pub.info); err != nil {
			d.log.Error("write daemon.json with the new certificate's fingerprint", "err", err)
		}
	}
	d.pub.mu.Unlock()
	d.log.Info("TLS certificate re-read", "serial", leaf.SerialNumber.String(), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
}

// stoppedOnPurpose records the stop in daemon.down before anyone is told
// (bye), so that a client that sees its connection end already finds it
// and waits instead of starting the next daemon.
func (d *daemon) stoppedOnPurpose() {
	if err := writeDown(d.home, client.Down{Stopped: true}); err != nil {
		d.log.Error("record the stop", "err", err)
	}
}

// startDaemon locks the home, opens the database, repairs what a crash
// left, listens, and publishes daemon.json, in that order. If a step fails
// it undoes the steps before it, once, on the way out.
func startDaemon(ctx context.Context, home string, f daemonFlags, log *slog.Logger) (_ *daemon, err error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("create home %s: %w", home, err)
	}
	d := &daemon{home: home, log: log, served: make(chan error, 1), stop: make(chan struct{}, 1)}
	config := client.StampConfig(home) // before it is read: an edit after is a change
	defer func() {
		if err != nil {
			d.startFailed(ctx, err, config)
			d.abort()
		}
	}()
	if d.unlock, err = lockHome(home); err != nil {
		return nil, err
	}
	// A daemon.json left by a crash names a dead pid; it is ours to replace.
	_ = os.Remove(filepath.Join(home, client.DaemonFile))

	if err := d.openHub(ctx, f); err != nil {
		return nil, err
	}
	if db.KeepsNothing {
		log.Warn("built with -tags benchnostore for bench/run: this daemon commits nothing and keeps nothing")
	}
	// Repair turns a crash left running and queue the inputs still waiting,
	// before anyone can connect.
	if err := d.hub.Start(ctx); err != nil {
		return nil, err
	}
	tlsCfg, err := d.loadTLS(&f)
	if err != nil {
		return nil, err
	}
	ln, info, err := listenStamped(home, f.listen, tlsCfg != nil)
	if err != nil {
		return nil, err
	}
	if d.key, err = loadDaemonKey(home); err != nil {
		ln.Close()
		return nil, err
	}
	d.serve(ln, tlsCfg, info, f)
	if err := d.serveDebug(f); err != nil {
		return nil, err
	}
	if d.cert != nil {
		info.TLSCertSHA256 = d.cert.fingerprint()
	}
	if err := d.publish(info); err != nil {
		return nil, err
	}
	log.Info("daemon listening", "addr", ln.Addr().String(), "tls", tlsCfg != nil, "port", info.Port, "pid", info.PID, "home", home, "version", versionString())
	return d, nil
}

// openHub reads config.toml's providers, picks the store (storeTarget),
// joins the cluster's NATS with --nats, opens the hub on them, and
// watches config.toml for edits of its providers (liveconfig.go).
func (d *daemon) openHub(ctx context.Context, f daemonFlags) error {
	text := readConfigText(filepath.Join(d.home, client.ConfigFile)) // before it is read: an edit after is a change
	reg, cfg, err := loadProviders(d.home)
	if err != nil {
		return err
	}
	target, err := storeTarget(d.home, f.db, cfg)
	if err != nil {
		return err
	}
	d.mcp = mcphost.New(d.log, os.Getenv)
	d.agents = acphost.New(d.log, os.Getenv)
	if err := d.mcp.Reload(cfg.MCP); err != nil {
		return fmt.Errorf("%s: %w", client.ConfigFile, err)
	}
	hopts := hub.Options{Providers: reg, MCP: d.mcp, Agents: d.agents, Node: f.node, Lease: f.lease, MaxAttachmentBytes: f.maxAttachment,
		MaxMentionTurns: f.maxMentions}
	if f.nats != "" {
		if !db.IsPostgres(target) {
			return fmt.Errorf("--nats joins the nodes of a cluster, which share a PostgreSQL database: give --db postgres://… too")
		}
		if d.nc, err = connectNATS(f.nats, f.node, f.natsOpts, d.log); err != nil {
			return err
		}
	}
	if d.store, err = db.Open(ctx, target, db.Options{Node: f.node, NoMigrate: f.noMigrate, Log: d.log}); err != nil {
		return err
	}
	if d.nc != nil {
		// The cluster's id in every subject: clusters that share a NATS
		// hear only their own nodes.
		id, err := d.store.ClusterID(ctx)
		if err != nil {
			d.store.Close(ctx)
			return err
		}
		hopts.Bus = natsbus.New(d.nc, f.node, id)
	}
	if d.hub, err = hub.New(ctx, d.store, hopts, d.log); err != nil {
		d.store.Close(ctx)
		return err
	}
	d.unwatch = d.watchConfig(reg, d.mcp, cfg, text)
	if d.owner, err = d.hub.EnsureMember(ctx, hub.Runner{Name: ownerName(cfg.Name), Named: cfg.Name != "", Home: f.nats == ""}); err != nil {
		return fmt.Errorf("%s name %q: %w", client.ConfigFile, cfg.Name, err)
	}
	if db.IsPostgres(target) {
		d.log.Info("store", "db", db.RedactURL(target))
	}
	return nil
}

// loadTLS reads --tls-cert and --tls-key into the listener's TLS config
// (nil without --tls-cert) and adds the certificate's names to the hosts
// the API accepts.
func (d *daemon) loadTLS(f *daemonFlags) (*tls.Config, error) {
	if f.tlsCert == "" {
		return nil, nil
	}
	tlsCfg, names, cert, err := f.tlsConfig()
	if err != nil {
		return nil, err
	}
	d.cert = cert
	f.hosts = append(f.hosts, names...)
	return tlsCfg, nil
}

// listenStamped listens on addr (the port of the daemon before when it is
// free, stable.go) and returns the daemon.json this boot will publish,
// after daemon.stable has recorded its port.
func listenStamped(home, addr string, tls bool) (net.Listener, wire.DaemonInfo, error) {
	st := loadStable(home)
	ln, err := listenStable(addr, st)
	if err != nil {
		return nil, wire.DaemonInfo{}, fmt.Errorf("listen on %s: %w", addr, err)
	}
	info := wire.DaemonInfo{
		PID: os.Getpid(), Port: ln.Addr().(*net.TCPAddr).Port, Token: randomHex(32), Boot: randomHex(8),
		Version: daemonBuild().Version, StartedAt: time.Now().UTC().Truncate(time.Second), URL: localURL(ln.Addr().(*net.TCPAddr), tls),
	}
	st.Port = info.Port
	if err := saveStable(home, st); err != nil {
		ln.Close()
		return nil, wire.DaemonInfo{}, err
	}
	return ln, info, nil
}

// localURL is the base URL a client on this machine reaches a listener
// on addr by: its own address, or 127.0.0.1 when it listens on every
// address.
func localURL(addr *net.TCPAddr, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	host := "127.0.0.1"
	if !addr.IP.IsUnspecified() {
		host = addr.IP.String()
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(addr.Port))
}

// serveDebug serves /metrics and /readyz with --metrics-addr and Go's
// profiles with --debug-addr.
func (d *daemon) serveDebug(f daemonFlags) error {
	if f.metricsAddr != "" {
		mln, err := net.Listen("tcp", f.metricsAddr)
		if err != nil {
			return fmt.Errorf("listen on --metrics-addr %s: %w", f.metricsAddr, err)
		}
		d.serveMetrics(mln)
	}
	if f.debugAddr != "" {
		d.servePprof(f.debugAddr)
	}
	return nil
}

// publish writes daemon.json, keeps it written (keepDaemonFile), and
// removes daemon.down: this daemon listens, so a stop or a failed start
// recorded before is over.
func (d *daemon) publish(info wire.DaemonInfo) error {
	d.pub.mu.Lock()
	d.pub.info = info
	err := writeDaemonFile(d.home, info)
	d.pub.mu.Unlock()
	if err != nil {
		return err
	}
	d.keep = d.keepDaemonFile()
	if err := os.Remove(filepath.Join(d.home, client.DownFile)); err != nil && !os.IsNotExist(err) {
		d.log.Warn("remove daemon.down", "err", err)
	}
	return nil
}

// storeTarget is the store of a daemon on home: --db, else config.toml's
// database_url, else the home's SQLite file.
func storeTarget(home, flagDB string, cfg provider.Config) (string, error) {
	target := filepath.Join(home, client.DBFile)
	switch {
	case flagDB != "":
		target = flagDB
	case cfg.DatabaseURL != "":
		target = cfg.DatabaseURL
	}
	if !db.IsPostgres(target) && target != filepath.Join(home, client.DBFile) {
		return "", fmt.Errorf("--db and database_url take a postgres:// URL; the SQLite file is always %s", filepath.Join(home, client.DBFile))
	}
	return target, nil
}

// defaultAddr is --listen's default: a loopback port, the one of the daemon
// before when it is free (stable.go).
const defaultAddr = "127.0.0.1:0"

// startFailed records in daemon.down why the start failed, while the home
// is still locked (no other daemon can have started): clients show the
// reason and do not start another daemon until config.toml changes or a
// user asks. A start cut short by SIGTERM or SIGINT is a stop on purpose.
func (d *daemon) startFailed(ctx context.Context, err error, config client.ConfigStamp) {
	if d.unlock == nil {
		return // the home is another daemon's, or could not be locked
	}
	dn := client.Down{Error: err.Error(), Config: &config}
	if ctx.Err() != nil {
		dn = client.Down{Stopped: true}
	}
	if werr := writeDown(d.home, dn); werr != nil {
		d.log.Error("record the failed start", "err", werr)
	}
}

// loadProviders reads config.toml into the providers turns may use.
func loadProviders(home string) (*provider.Registry, provider.Config, error) {
	cfg, err := loadConfig(home)
	if err != nil {
		return nil, cfg, err
	}
	reg, err := provider.NewRegistry(cfg, os.Getenv)
	if err != nil {
		return nil, cfg, fmt.Errorf("%s: %w", client.ConfigFile, err)
	}
	return reg, cfg, nil
}

// loadConfig reads the home's config.toml.
func loadConfig(home string) (provider.Config, error) {
	path := filepath.Join(home, client.ConfigFile)
	cfg, err := provider.LoadConfig(path)
	var pe toml.ParseError
	if errors.As(err, &pe) {
		// "PATH line 3: what" rather than LoadConfig's "read PATH: toml:
		// line 3: what": clients show it in a status bar.
		return cfg, fmt.Errorf("%s line %d: %s", path, pe.Position.Line, pe.Message)
	}
	return cfg, err
}

// homeStore resolves the home and its store as the daemon would (--db's
// dbURL, else database_url, else the home's SQLite file), creating the
// home if needed: for the commands that write the store themselves.
func (g *globals) homeStore(dbURL string) (home, target string, _ error) {
	home, err := g.resolveHome()
	if err != nil {
		return "", "", err
	}
	cfg, err := loadConfig(home)
	if err != nil {
		return "", "", err
	}
	if target, err = storeTarget(home, dbURL, cfg); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", "", fmt.Errorf("create home %s: %w", home, err)
	}
	return home, target, nil
}

// serve starts the API on ln, over TLS when tlsCfg is set.
func (d *daemon) serve(ln net.Listener, tlsCfg *tls.Config, info wire.DaemonInfo, f daemonFlags) {
	unauth := unauthenticatedBound()
	ver, _ := build()
	d.mcpHTTP = mcpserve.NewHTTP(ver)
	d.srv = api.New(d.hub, api.Options{
		MCP:   d.mcpHTTP,
		Token: info.Token, Owner: d.owner, ProofKey: d.key, Boot: info.Boot, Heartbeat: f.heartbeat, WriteTimeout: f.writeTimeout, HelloTimeout: f.helloTimeout,
		ConnsPerToken: f.perToken,
		MaxFresh:      unauth, MaxPreHello: unauth, Public: !ln.Addr().(*net.TCPAddr).IP.IsLoopback(), Hosts: f.hosts,
		ReadyChecks: append(d.natsReady(), d.mcpReady()), Build: daemonBuild(),
		OnShutdown: func() {
			select {
			case d.stop <- struct{}{}:
			default:
			}
		},
	}, d.log)
	d.mcpHTTP.Serve(d.srv.Handler())
	d.hs = d.srv.HTTPServer()
	ln = d.srv.Listener(ln, tlsCfg)
	go func() { d.served <- d.hs.Serve(ln) }()
}

// unauthenticatedBound is how many connections may wait without a token,
// of each kind (api.Options.MaxFresh, MaxPreHello): an eighth of the file
// descriptors this process may open, between 8 and 1 024, so that a flood
// of them leaves most descriptors to the owner, bots and viewers.
//
// Every new connection counts as fresh until its request is read, the
// owner's and bots' too, and after a restart all of a daemon's clients
// connect within the first backoff delay. At the bound the daemon stops
// accepting for a while (api.Server.Listener), and the rest of such a
// storm waits in the kernel's listen queue, in order, rather than being
// closed. Each waiting connection holds net/http's buffers and a
// goroutine, so the bound caps the memory a flood or a storm can take.
func unauthenticatedBound() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 1024
	}
	return int(min(max(lim.Cur/8, 8), 1024))
}

// servePprof serves Go's profiles, for measuring; never on by default, as
// they need no token.
func (d *daemon) servePprof(addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	// An execution trace shows what a CPU profile cannot: goroutines
	// waiting for a P, the scheduler's and GC's pauses (latency tails).
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/albedo/writer", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(d.hub.WriterStats())
	})
	d.dbg = &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { d.log.Info("pprof listening", "addr", addr, "err", d.dbg.ListenAndServe()) }()
}

// daemonFileCheck is how often the daemon looks for its daemon.json.
const daemonFileCheck = time.Second

// published is daemon.json as the daemon wrote it last, which
// keepDaemonFile's goroutine writes again and a certificate's reload
// changes.
type published struct {
	mu   sync.Mutex
	info wire.DaemonInfo
}

// keepDaemonFile writes daemon.json again whenever it is gone or names
// another boot or certificate, until the func it returns is called: a daemon whose file
// was removed is otherwise unreachable, though it holds the home (stop and
// status find it through the lock meanwhile; client.LockHolder).
func (d *daemon) keepDaemonFile() func() {
	return every(daemonFileCheck, func() {
		d.pub.mu.Lock()
		defer d.pub.mu.Unlock()
		info := d.pub.info
		if cur, err := client.ReadDaemonFile(d.home); err == nil && cur.Boot == info.Boot && cur.TLSCertSHA256 == info.TLSCertSHA256 {
			return
		}
		if err := writeDaemonFile(d.home, info); err != nil {
			d.log.Error("restore daemon.json", "err", err)
			return
		}
		d.log.Warn("daemon.json was gone or replaced; written again", "home", d.home)
	})
}

// every runs fn every period on a goroutine of its own until the func it
// returns is called; that func waits for a run under way to end.
func every(period time.Duration, fn func()) func() {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			fn()
		}
	}()
	return func() { close(stop); <-done }
}

// abort undoes a start that failed part-way: whatever started is closed,
// newest first. Nothing was published, so there is no stop order to keep.
func (d *daemon) abort() {
	ctx := context.Background()
	if d.keep != nil {
		d.keep()
	}
	if d.unwatch != nil {
		d.unwatch()
	}
	if d.dbg != nil {
		d.dbg.Close()
	}
	if d.metrics != nil {
		d.metrics.Close()
	}
	if d.hs != nil {
		d.hs.Close()
	}
	if d.srv != nil {
		d.srv.Close()
	}
	if d.mcpHTTP != nil {
		d.mcpHTTP.Close()
	}
	if d.hub != nil {
		_ = d.hub.Close(ctx)
	}
	if d.mcp != nil {
		d.mcp.Close()
	}
	if d.agents != nil {
		d.agents.Close()
	}
	if d.nc != nil {
		d.nc.Close()
	}
	if d.unlock != nil {
		d.unlock()
	}
}

// drain takes the node out of service before it stops (shutdown, next):
// /readyz turns 503 and new websockets are refused; the open ones are
// asked to reconnect elsewhere over window, with jitter; the node claims
// no more turns, and waits for those running to end, within window.
// Inputs are still accepted meanwhile; the other nodes run them.
func (d *daemon) drain(window time.Duration) {
	d.log.Info("daemon draining", "window", window)
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	d.hub.Drain()
	var wg sync.WaitGroup
	wg.Go(func() { d.srv.Drain(ctx, window) })
	wg.Go(func() { d.hub.WaitTurns(ctx) })
	wg.Wait()
}

// shutdown stops a running daemon in the order of docs/protocol.md.
func (d *daemon) shutdown() {
	log := d.log
	log.Info("daemon stopping")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d.unwatch()                                            // edits of config.toml no longer apply
	d.hub.Stopping()                                       // 1. refuse new inputs
	d.hub.InterruptAll(ctx, wire.ReasonDaemonShutdown)     // 2. interrupt and commit running turns
	d.srv.Bye(ctx, wire.ByeShutdown, 250*time.Millisecond) // 3. bye, then close every socket
	if err := d.hs.Shutdown(ctx); err != nil {             // 4. stop listening
		log.Warn("http shutdown", "err", err)
	}
	if d.dbg != nil {
		d.dbg.Close()
	}
	if d.metrics != nil {
		d.metrics.Close()
	}
	d.srv.Close()
	d.mcpHTTP.Close()
	if err := d.hub.Close(ctx); err != nil { // the last commits, then the database
		log.Error("close database", "err", err)
	}
	d.mcp.Close()    // its servers' programs, once no turn calls them
	d.agents.Close() // the coding agents' programs, their turns ended
	if d.nc != nil {
		d.nc.Close() // after the hub: its last commits' notices go out
	}
	d.keep()
	_ = os.Remove(filepath.Join(d.home, client.DaemonFile)) // 5. remove daemon.json
	d.unlock()
	log.Info("daemon stopped")
}
