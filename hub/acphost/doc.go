// Package acphost runs coding agents that speak the Agent Client Protocol
// (ACP, through github.com/coder/acp-go-sdk's client side) as the
// providers of sessions: one process per session, started in the
// session's workspace at its first turn, kept while it is used, stopped
// when idle, resumed with session/load where the agent can.
//
// A turn is one session/prompt. What the agent does goes to the turn's
// Sink, the hub's seam (hub/agent_turns.go), which commits it: its reply
// streamed, its calls as tool_call and tool_result events (tool
// acp:KIND), its permission requests as calls that ask, decided by the
// policy or by people. The daemon serves the agent the workspace's files
// (fs/*) and commands (terminal/*), inside the workspace only, each a
// call in the log that the policy may refuse.
//
// # Files
//
//   - seam.go: Turn, Sink, Call, Result: what a turn is given and where
//     its doings go.
//   - host.go: Host: the agents by session, Prompt, Stop, Close; the
//     workspace's check.
//   - agent.go: one agent: its process and connection, started,
//     initialized, its session opened (new, loaded, or anew with the
//     transcript), stopped.
//   - prompt.go: a turn's prompt: sent, cancelled on an interrupt, its
//     stop reason made the turn's end; the transcript told an agent that
//     starts anew.
//   - turn.go: a turn's calls, by the agent's ids: held while pending,
//     committed when they run or ask, ended with their results.
//   - permission.go: session/request_permission answered from a decision,
//     with the closest option.
//   - client.go: the daemon's side of the connection (acp.Client): updates,
//     permissions, files and commands, each request bounded.
//   - files.go: fs/read_text_file and fs/write_text_file, inside the
//     workspace through an os.Root; a write is a call with its diff.
//   - terminals.go: terminal/*: commands in the workspace, their output
//     bounded and streamed, killed past terminal_timeout and at the turn's
//     end.
//   - content.go: what is kept of the agent's words, bounded: text, plans,
//     locations, diffs (go-udiff), output; the SDK's logger, quieted.
//
// host_test.go runs the fake agent (fakeagent/, the test binary run
// again) through each of these; fuzz_test.go feeds the agent's updates;
// aliases_test.go names SDK types for the tests.
package acphost
