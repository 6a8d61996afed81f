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
package e2e
