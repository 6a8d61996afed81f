// Package tools is what tool calls are made of, shared by the turn
// runner, bots, MCP servers and ACP agents (../../docs/architecture.md):
// what a tool is called (and what a provider's API calls it), what the
// sources offer now, and the policy that decides whether a call runs,
// asks people or is refused. It knows no store, no hub and no transport:
// the turn runner (hub/tool_turns.go) commits each call, decision and
// result as events of the log and rows of the store, so that nothing
// about a pending call lives only in memory.
//
// # Files
//
//   - names.go: a tool's name, and its full name with its source
//     (bot:BOT/TOOL, mcp:SERVER/TOOL).
//   - spec.go: Spec, a tool as its source declares it, and CheckSpecs,
//     the bounds on a declaration.
//   - sources.go: Sources, what the tool sources offer now (the tools
//     each bot's connection declared), and APIName, a full name as the
//     providers' APIs take it.
//   - policy.go: Policy, the rules that map a glob over a full name to
//     allow, ask or deny; the last match wins, ask by default.
package tools
