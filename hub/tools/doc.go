// Package tools is the machinery of tool calls that the turn runner, bots,
// MCP servers and ACP agents share (../../docs/architecture.md): what a
// tool is called, the policy that decides whether a call runs, asks
// people or is refused, and the approval state machine of a session's
// calls. It knows no store, no hub and no transport: the turn runner
// commits what it decides as events of the log (tool_call, approval,
// tool_result), and rebuilds a session's machine from them after a
// restart (Replay), so that nothing about a pending call lives only in
// memory.
//
// # Files
//
//   - names.go: a tool's name, and its full name with its source
//     (bot:BOT/TOOL, mcp:SERVER/TOOL).
//   - spec.go: Spec, a tool as its source declares it, and CheckSpecs,
//     the bounds on a declaration.
//   - policy.go: Policy, the rules that map a glob over a full name to
//     allow, ask or deny; the last match wins, ask by default.
//   - calls.go: Calls, one session's calls and their states: requested,
//     pending a decision, decided (the first decision wins), and ended
//     (completed, failed, denied, cancelled, expired); and Replay.
package tools
