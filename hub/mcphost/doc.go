// Package mcphost hosts the MCP servers config.toml names ([mcp.NAME]):
// programs that speak the Model Context Protocol on their stdin and
// stdout, started by the daemon, or servers reached over streamable
// HTTP. Their tools are offered to models as mcp:NAME/TOOL and go
// through the same calls, events, approvals and policy as bots' tools
// (../tools, ../tool_turns.go): the hub asks the host for a session's
// offers and hands it the calls the policy and people allow. It uses
// the official Go SDK (github.com/modelcontextprotocol/go-sdk) and knows
// no store and no hub.
//
// A server is started when its tools are first needed (a turn that
// offers them, GET /v1/tools, a call), kept while it is used, and
// stopped when idle; its tools, as last listed, are offered meanwhile,
// and a call starts it again. One that dies fails its calls in flight,
// saying so, and starts again at the next need; one that cannot start
// is named, with why, in the log, GET /v1/tools and /readyz, and is not
// tried again for a while. Its list follows
// notifications/tools/list_changed. Its hints (readOnlyHint) set a
// tool's default policy, which config.toml's rules override.
//
// # Files
//
//   - config.go: ServerConfig (an [mcp.NAME] table), values read from
//     the environment or a file, and the checks of a table.
//   - host.go: Host, the servers by name: Reload, Offers, Status, Close.
//   - server.go: one server's life: start, the tool list, its end,
//     idleness; Tail, the newest bytes a program wrote (its stderr).
//   - call.go: Call, and a tool's result as the model is told it.
package mcphost
