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
// or a group of them: attach.go, bots.go, share.go (share, its ls and
// rm), members.go (members, and sessions grant, ungrant and grants),
// export.go, export_all.go (export --all: every session into a file of
// its own), import.go (an export restored, its events sent a chunk at a
// time), export_blobs.go (the files of an export: written to a directory,
// uploaded again before the events that carry them), fork.go (fork and forks), open.go, search.go, send.go,
// sessions.go (sessions, its ls, new, rm and rename), sessionspin.go
// (sessions pin, unpin, archive and unarchive), sessionsset.go
// (sessions set, and the settings sessions new takes too), stop.go (stop and status), drain.go (a node's stop that
// sends its clients elsewhere first), migrate.go (the store's schema
// brought to this build's), tail.go, tailhistory.go (tail -n: the last
// messages read from the history), tokens.go, usage.go, models.go (models: a provider's models), continue.go (continue: a cut-off reply run on), version.go, approvals.go (approvals and
// approve: tool calls waiting for a decision, and a decision), mcp.go
// (albedo mcp: albedo as an MCP server on stdio), agent.go (albedo
// agent add: a coding agent's profile written to config.toml);
// beside them sessionarg.go (the SESSION argument, its completion, and
// the table of the sessions an ambiguous one fits), shortids.go (the
// short ids a list shows: the shortest unique end of each id),
// jsonout.go (the --json of the commands that list), pagetoken.go
// (page.tokens, the personal tokens albedo open puts in a page's link,
// one per browser) and replyprinter.go (a reply printed as it streams,
// for send and tail). The daemon: daemon.go (albedo daemon: its start, its
// loop and its stop), daemonconfig.go (its flags from the environment or
// config.toml's [daemon] table, and secrets read from files),
// liveconfig.go (edits of config.toml applied while it runs), edge.go
// (the edge: where it listens, with which names and TLS), daemonkey.go
// (daemon.key, with which the daemon proves itself to a page), stable.go
// (daemon.stable, the port and token a daemon keeps from the one before
// it), home.go (the home's lock and the files the daemon writes there),
// owner.go (the member name of the person who runs the daemon),
// metrics.go (/metrics and /readyz), nats.go (a cluster's NATS
// connection), mcpready.go (/readyz's check of the MCP servers it hosts).
package main
