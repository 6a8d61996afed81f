// Package provider holds what answers a turn: the built-in echo provider,
// OpenAI-compatible chat-completions endpoints (through the official OpenAI
// Go SDK), Anthropic's Messages API (through its official Go SDK), and the
// registry that maps a session's provider name to one of them, read from
// $ALBEDO_HOME/config.toml (and again, by Reload, when a running daemon
// sees the file change).
//
// A Provider streams a reply for a transcript by calling emit with each
// piece of text, and stops when ctx ends. It returns nil only when the reply
// is complete; any error fails (or, when ctx was cancelled, interrupts) the
// turn. Errors are written for the person reading them in the transcript.
//
// # Files
//
//   - provider.go: the Provider interface; Request and Message, what a
//     turn asks of one; HistoryLimiter.
//   - registry.go: Config (config.toml), its profiles and prices, the
//     interfaces a profile's settings reach through (Titler,
//     SystemPrompter, Pricer), and the Registry, with Reload.
//   - context.go: Windowed, a provider whose model has a context window;
//     the windows of known model families, and the estimate of a text's
//     tokens.
//   - echo.go: Echo, the built-in provider: the last user message echoed,
//     a word at a time.
//   - files.go: File, the files a message carries as a provider gets
//     them (images, text, or their names), Images and its bounds.
//   - tools.go: Tool, ToolCall and the tool role: what a provider offers
//     its model and the calls it reports (Request.Tools, Request.Call).
//   - openai.go: OpenAI, any OpenAI-compatible chat-completions endpoint.
//   - models.go: Lister, a provider whose API lists its models (OpenAI's
//     and Anthropic's), for a model picker.
//   - anthropic.go: Anthropic, Anthropic's Messages API, the session's
//     effort as its extended-thinking budget.
//   - failure.go: a stream's failure in words for the transcript: the
//     provider's HTTP status and what to check, its silence, or a broken
//     stream.
//   - acp.go: ACP, a profile of kind acp: a coding agent's command and
//     settings (AgentConfig), run by the daemon's agent host, not Stream.
//   - unreachable.go: why no connection to an endpoint could be made (a
//     refusal, an unknown host, a timeout), told apart from a reply stream
//     that broke.
package provider
