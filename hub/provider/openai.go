package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"albedo/wire"
)

// OpenAI streams chat completions from any OpenAI-compatible endpoint.
type OpenAI struct {
	// static after construction
	name         string
	baseURL      string
	client       openai.Client
	defaultModel string
	idleTimeout  time.Duration
	prices       *Prices
	system       string
	titles       string
	window       window
	tools        ToolLimits
}

// NewOpenAI makes the provider of profile name.
func NewOpenAI(name string, p Profile, apiKey string) *OpenAI {
	if apiKey == "" {
		apiKey = "none" // local servers often need no key; the SDK wants one
	}
	idle := p.IdleTimeout.Duration
	if idle <= 0 {
		idle = 120 * time.Second
	}
	c := openai.NewClient(
		option.WithBaseURL(strings.TrimRight(p.BaseURL, "/")+"/"),
		option.WithAPIKey(apiKey),
		// A failed turn is shown to the user, who decides to send again;
		// silent retries would only make a broken endpoint look slow.
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{}),
	)
	return &OpenAI{name: name, baseURL: p.BaseURL, client: c, defaultModel: p.DefaultModel, idleTimeout: idle, prices: p.Prices, system: p.System, titles: cmp.Or(p.Titles, TitlesWords),
		window: window{tokens: p.ContextTokens, summary: p.SummaryProvider}, tools: p.ToolLimits()}
}

// Model implements Windowed.
func (o *OpenAI) Model(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return o.defaultModel
}

// Author implements Provider.
func (o *OpenAI) Author(req Request) string {
	if m := o.Model(req); m != "" {
		return m
	}
	return o.name
}

var errIdle = errors.New("idle timeout")

// participantName is an author as the OpenAI format's name of a message
// allows it (1-64 of a-z A-Z 0-9 _ -): other characters become _; "" for
// no author.
func participantName(author string) string {
	if len(author) > 64 {
		author = author[:64]
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, author)
}

// usageOf is an OpenAI usage report as a turn records it: the cached and
// reasoning tokens only where the report has them.
func usageOf(u openai.CompletionUsage) wire.Usage {
	out := wire.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.JSON.PromptTokensDetails.Valid() && u.PromptTokensDetails.JSON.CachedTokens.Valid() {
		out.CachedTokens = &u.PromptTokensDetails.CachedTokens
	}
	if u.JSON.CompletionTokensDetails.Valid() && u.CompletionTokensDetails.JSON.ReasoningTokens.Valid() {
		out.ReasoningTokens = &u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

// Titles implements Titler.
func (o *OpenAI) Titles() string { return o.titles }

// System implements SystemPrompter: the profile's, or "".
func (o *OpenAI) System() string { return o.system }

// Prices implements Pricer: the profile's, or nil.
func (o *OpenAI) Prices() *Prices { return o.prices }

// Context implements Windowed: the profile's context_tokens, else the
// model family's.
func (o *OpenAI) Context(req Request) int { return o.window.of(o.Model(req)) }

// Summarizer implements Windowed: the profile's summary_provider, or "".
func (o *OpenAI) Summarizer() string { return o.window.summary }

// messagesOf is the transcript as chat messages; earlier calls are told
// as text when the request offers no tools.
func messagesOf(req Request) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	msgs := req.Messages
	if len(req.Tools) == 0 {
		msgs = callsAsText(msgs)
	}
	for _, m := range msgs {
		switch m.Role {
		case wire.RoleUser:
			msg := userMessage(withNotes(m), m.Files)
			if name := participantName(m.Author); name != "" {
				// Who wrote each input, so that a model can tell the
				// people of a shared session apart.
				msg.OfUser.Name = openai.String(name)
			}
			out = append(out, msg)
		case wire.RoleAssistant:
			if len(m.Calls) == 0 {
				out = append(out, openai.AssistantMessage(withNotes(m)))
				continue
			}
			var a openai.ChatCompletionAssistantMessageParam
			if m.Text != "" {
				a.Content.OfString = openai.String(m.Text)
			}
			for _, c := range m.Calls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments}}})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			out = append(out, openai.ToolMessage(withNotes(m), m.CallID))
		case wire.RoleSystem:
			out = append(out, openai.SystemMessage(m.Text))
		default: // a bot's message: context, attributed
			out = append(out, userMessage(m.Author+": "+withNotes(m), m.Files))
		}
	}
	return out
}

// userMessage is a user's message: its text alone, or, with images, its
// text and each image as an image_url part with a data: URL.
func userMessage(text string, files []File) openai.ChatCompletionMessageParamUnion {
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, f := range files {
		if f.Image != nil {
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: f.DataURL()}))
		}
	}
	if len(parts) == 0 {
		return openai.UserMessage(text)
	}
	if text != "" {
		parts = append([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(text)}, parts...)
	}
	return openai.UserMessage(parts)
}

// ImageBounds implements Images: OpenAI's vision takes images to 20 MB,
// and scales any past 2048 pixels down itself; the daemon sends at most
// 4 MiB of each, to bound a request's size.
func (o *OpenAI) ImageBounds() ImageBounds { return ImageBounds{MaxEdge: 2048, MaxBytes: 4 << 20} }

// Stream implements Provider.
func (o *OpenAI) Stream(ctx context.Context, req Request, emit func(string)) error {
	model := o.Model(req)
	if model == "" {
		return fmt.Errorf("provider %q has no model: set default_model in config.toml or choose one with /model", o.name)
	}
	// Usage comes in a last chunk, with no choices, when asked for.
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
	params.Messages = messagesOf(req)
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: shared.FunctionParameters(toolSchema(t.Schema))}))
	}
	if req.Effort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.Effort)
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}

	// The stream may legitimately last long; what must not last is silence.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(o.idleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()

	stream := o.client.Chat.Completions.NewStreaming(sctx, params)
	defer stream.Close()
	var calls openAICalls
	for stream.Next() {
		idle.Reset(o.idleTimeout)
		chunk := stream.Current()
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue // n is never asked for: one choice
			}
			if ch.Delta.Content != "" {
				emit(ch.Delta.Content)
			}
			calls.add(ch.Delta.ToolCalls)
		}
		if chunk.JSON.Usage.Valid() && req.Usage != nil {
			req.Usage(usageOf(chunk.Usage))
		}
	}
	if stream.Err() == nil && req.Call != nil {
		calls.report(req.Call)
	}
	e := endpoint{name: o.name, baseURL: o.baseURL, idle: o.idleTimeout}
	return e.failure(ctx, sctx, stream.Err(), model, func(err error) (int, string, bool) {
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			return apiErr.StatusCode, apiErr.Message, true
		}
		return 0, "", false
	})
}

// openAICalls gathers a response's streamed tool calls: each starts with
// its index, id and name, and its arguments come in pieces.
type openAICalls struct {
	calls []ToolCall
	args  [][]byte
	index map[int64]int
}

// maxStreamedCalls bounds the calls one response may make; past it they
// are dropped (the turn runner's own bound is lower).
const maxStreamedCalls = 256

func (c *openAICalls) add(deltas []openai.ChatCompletionChunkChoiceDeltaToolCall) {
	for _, d := range deltas {
		i, ok := c.index[d.Index]
		if !ok {
			if len(c.calls) >= maxStreamedCalls {
				continue
			}
			if c.index == nil {
				c.index = map[int64]int{}
			}
			i = len(c.calls)
			c.index[d.Index] = i
			c.calls = append(c.calls, ToolCall{})
			c.args = append(c.args, nil)
		}
		if d.ID != "" {
			c.calls[i].ID = d.ID
		}
		if d.Function.Name != "" && len(c.calls[i].Name) < 256 {
			c.calls[i].Name += d.Function.Name
		}
		addArgs(&c.args[i], d.Function.Arguments)
	}
}

func (c *openAICalls) report(call func(ToolCall)) {
	for i, tc := range c.calls {
		tc.Arguments = string(c.args[i])
		call(tc)
	}
}

// ToolLimits implements ToolCaller.
func (o *OpenAI) ToolLimits() ToolLimits { return o.tools }
