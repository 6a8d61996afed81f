// Package mcpserve is albedo as an MCP server: an agent that speaks the
// Model Context Protocol (Claude Code, codex, opencode) lists a team's
// sessions, reads them, writes to them and asks their people, with one
// token's rights (../docs/mcp.md). It acts through albedo/client, so
// that every check the API makes applies: `albedo mcp` serves it on
// stdio with the home's owner token or --token, and the daemon at
// /v1/mcp with each request's token.
//
// # Files
//
//   - server.go: New, the server and what it tells an agent it is for.
//   - tools.go: its tools, list_sessions, read_session, send_message and
//     ask_people, their bounds, and their answers.
//   - http.go: HTTP, the server over streamable HTTP for the daemon's
//     /v1/mcp, its clients on in-memory connections to the API.
package mcpserve
