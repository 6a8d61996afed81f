// Package e2e holds black-box tests against the built albedo binary: real
// daemon processes on a temporary $ALBEDO_HOME, real restarts, real SQLite
// files and websockets on 127.0.0.1, the terminal in tmux
// (tmux_test.go), the page in headless Chromium (browser_test.go), and
// clusters: several daemons on the package's private PostgreSQL
// (db/pgtest) with NATS embedded in the test process, behind a TCP proxy
// that plays the load balancer and cuts connections (cluster_test.go,
// nats_test.go). What an operator runs is run too (balancer_test.go):
// Debian's nats-server and haproxy with deploy/haproxy.cfg, for rolling
// restarts (rolling_test.go) and the cluster soak (cluster_soak_test.go);
// and a bot on the machine's Node.js (jsbot_test.go).
//
// # Groups
//
// Each test file belongs to one group, by what its tests need, and says so
// in its build constraint (//go:build !e2e_only || e2e_GROUP); files with
// none hold the harness every group shares:
//
//	core     the binary, SQLite, websockets, the CLI, bots (and Node.js for one)
//	web      Chromium: the page
//	term     tmux: the terminal client in a real terminal
//	cluster  PostgreSQL, NATS (embedded and Debian's nats-server), haproxy
//	soak     the one-daemon soak (a minute)
//
// A file whose tests need two groups' parts names both (team_tools_test.go:
// //go:build !e2e_only || (e2e_web && e2e_term)), and runs when both are
// chosen. With no tags every group runs, as .ci/run does. One group alone, or a
// few: go test -race -tags 'e2e_only e2e_term' ./e2e. Under -short the
// tests of web, term, cluster and soak skip, each saying what it needs.
// The package's own parallel gate (parallel_test.go) still decides which
// tests run at once within a run, long and heavy ones first.
//
// # The binaries under test
//
// The daemon, the CLI and the bot are built once for the run, plain,
// whether or not the test binary has the race detector: the daemon's code
// runs under it in the packages' own tests, which start its parts in
// process. ALBEDO_E2E_RACE=1 builds them with it as well (daemonRace),
// as the long soaks do (README.md).
package e2e
