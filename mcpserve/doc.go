// Package mcpserve is albedo as an MCP server: an agent that speaks the
// Model Context Protocol (Claude Code, codex, opencode) lists a team's
// sessions, reads them, writes to them and asks their people, with one
// token's rights (../docs/mcp.md). It acts through albedo/client, so
// that every check the API makes applies: `albedo mcp` serves it on
// stdio with the home's owner token or --token.
//
// # Files
//
//   - server.go: New, the server and what it tells an agent it is for.
//   - tools.go: its tools, list_sessions, read_session, send_message and
//     ask_people, their bounds, and their answers.
package mcpserve
