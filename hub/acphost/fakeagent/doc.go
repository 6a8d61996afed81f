// Package fakeagent is a coding agent for tests, written with the ACP
// SDK's agent side: a real process (the test binary run again, or the
// e2e binary) that the daemon starts and speaks ACP with on stdio. Its
// brain is a script: the last paragraph of each prompt is a command.
//
//	hello                 streams a reply in pieces, with a thought and a plan
//	edit PATH TEXT        an edit call that asks for permission, then writes TEXT to PATH (absolute, or the workspace's)
//	edit_running PATH TEXT  the same, the call said to run before it asks (as opencode does)
//	edit_started PATH TEXT  the same, the call announced as running in its first update
//	write PATH TEXT       writes without asking (fs/write_text_file alone)
//	read PATH             reads PATH and replies with its text
//	run PROGRAM ARGS…     runs a command (terminal/*) and replies with its output
//	own                   a read call it runs without asking
//	wait                  streams until cancelled
//	crash                 exits mid-turn
//	refuse, max_tokens    ends with that stopReason
//	flood N               streams N pieces as fast as it can
//	huge N                sends one piece of N bytes
//	garbage               writes lines that are no JSON, and much to stderr, then replies
//	calls N               announces N calls that it runs on its own
//	recall                replies with what it knows: its prompts in this session, whether it was told a transcript, a note
//
// Each session's prompts are counted in a file under the workspace's
// .fakeagent directory, so that session/load finds them again. With
// ALBEDO_FAKE_AGENT=silent it never answers initialize; with
// ALBEDO_FAKE_AGENT=noload it offers no loadSession.
//
// # Files
//
//   - fakeagent.go: Main, the agent's side of the connection, its
//     sessions kept in the workspace.
//   - script.go: the commands a prompt may hold.
package fakeagent
