package provider

import (
	"strings"
	"unicode/utf8"
)

// Windowed is a provider whose model has a context window: the daemon
// fits every turn's transcript in it, compacting the oldest messages into
// a summary when they would not fit (hub's compaction.go), rather than
// leaving any out unsaid.
type Windowed interface {
	// Context is the window of the model req names, in tokens.
	Context(req Request) int
	// Model is the model a turn of req goes to: req's own, else the
	// profile's default_model ("" where neither says).
	Model(req Request) string
	// Summarizer names the provider that writes summaries, "" for this
	// one.
	Summarizer() string
}

// MinContextTokens is the smallest context_tokens a profile may set: a
// window whose three quarters, less a message's overhead, still hold a
// few short messages (tests set small windows to see compaction soon). A smaller one (or a
// negative one) is a typo, refused when config.toml is read rather than
// failing every turn with a budget below zero.
const MinContextTokens = 256

// window is a profile's context_tokens and summary_provider.
type window struct {
	tokens  int
	summary string
}

// of is the window for model: the profile's, else DefaultContext's.
func (w window) of(model string) int {
	if w.tokens > 0 {
		return w.tokens
	}
	return DefaultContext(model)
}

// contextByFamily is the context window of the model families albedo
// knows, by the start of a model's name (the first that matches; longer
// names first where they share a start).
var contextByFamily = []struct {
	prefix string
	tokens int
}{
	{"claude", 200_000},
	{"gpt-4.1", 1_047_576},
	{"gpt-5", 400_000},
	{"gpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4", 8_192},
	{"gpt-3.5", 16_385},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4", 200_000},
	{"gemini", 1_048_576},
	{"llama3", 8_192},
	{"llama-3", 8_192},
	{"mistral", 32_768},
	{"qwen", 32_768},
}

// UnknownContext is the window of a model albedo does not know: small
// enough for most served models, so that a turn fits rather than fails;
// a profile sets context_tokens for more.
const UnknownContext = 32_768

// DefaultContext is the context window of model by its family
// (contextByFamily), UnknownContext for one it does not know.
func DefaultContext(model string) int {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // "openai/gpt-4o", as routers name them
	}
	for _, f := range contextByFamily {
		if strings.HasPrefix(m, f.prefix) {
			return f.tokens
		}
	}
	return UnknownContext
}

// MessageOverhead is what a message costs beyond its text: its role and
// the format's framing, as OpenAI's and Anthropic's formats count them
// (3 to 4 tokens; 4 here, to err on the side of fitting).
const MessageOverhead = 4

// Tokens estimates the tokens of a text: one per 4 bytes of ASCII, and
// one per other character (CJK text is about a token a character; an
// accented letter is counted high). There is no tokenizer here:
// none in Go covers both OpenAI's vocabularies and Anthropic's, which is
// not published, and a wrong vocabulary is no better than this estimate.
// It errs high for English prose (about 4.5 bytes a token) and fits
// code (3.5 to 4). Providers report what a turn really took (usage).
func Tokens(text string) int {
	ascii, other := 0, 0
	for i := 0; i < len(text); i++ {
		switch b := text[i]; {
		case b < utf8.RuneSelf:
			ascii++
		case utf8.RuneStart(b):
			other++
		}
	}
	return (ascii+3)/4 + other
}
