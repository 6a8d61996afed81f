// Command albedo is the albedo daemon and its command-line clients.
//
// albedo (no arguments) opens the terminal client; albedo daemon runs the
// daemon in the foreground; the other subcommands talk to the daemon of
// $ALBEDO_HOME, starting one when none answers. See README.md.
//
// Files: main.go (main and run), root.go (the root command, the flags
// every command takes), target.go (which server a command talks to: a
// home's daemon or a URL), exit.go (exit statuses, and errors as a person
// reads them), terminal.go (albedo with no arguments). A file a command
// or a group of them: attach.go, bots.go (bots and share), export.go,
// open.go, send.go, sessions.go, stop.go (stop and status), tail.go,
// tokens.go, version.go; beside them sessionarg.go (the SESSION argument
// and its completion) and replyprinter.go (a reply printed as it streams,
// for send and tail). The daemon: daemon.go (albedo daemon: its start, its
// loop and its stop), edge.go (the edge: where it listens, with which
// names and TLS), stable.go (daemon.stable, the port and token a daemon
// keeps from the one before it), home.go (the home's lock and the files
// the daemon writes there), metrics.go (/metrics and /readyz), nats.go (a
// cluster's NATS connection).
package main
