package provider

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"albedo/wire"
)

// Anthropic streams replies from Anthropic's Messages API through its
// official SDK (kind = "anthropic"). The session's effort becomes the
// extended-thinking budget (thinkingBudget), the system messages its
// system prompt, and the stream's usage the turn's.
type Anthropic struct {
	// static after construction
	name         string
	baseURL      string
	client       anthropic.Client
	defaultModel string
	idleTimeout  time.Duration
	prices       *Prices
	system       string
	titles       string
	window       window
	tools        ToolLimits
}

// anthropicBaseURL is the API's when the profile names none.
const anthropicBaseURL = "https://api.anthropic.com"

// NewAnthropic makes the provider of profile name.
func NewAnthropic(name string, p Profile, apiKey string) *Anthropic {
	base := p.BaseURL
	if base == "" {
		base = anthropicBaseURL
	}
	idle := p.IdleTimeout.Duration
	if idle <= 0 {
		idle = 120 * time.Second
	}
	c := anthropic.NewClient(
		option.WithBaseURL(strings.TrimRight(base, "/")+"/"),
		option.WithAPIKey(apiKey),
		option.WithMaxRetries(0), // a failed turn is the user's to send again, as with OpenAI
		option.WithHTTPClient(&http.Client{}),
	)
	return &Anthropic{name: name, baseURL: base, client: c, defaultModel: p.DefaultModel, idleTimeout: idle, prices: p.Prices, system: p.System, titles: cmp.Or(p.Titles, TitlesWords),
		window: window{tokens: p.ContextTokens, summary: p.SummaryProvider}, tools: p.ToolLimits()}
}

// Author implements Provider: the model.
func (a *Anthropic) Author(req Request) string { return cmp.Or(a.Model(req), a.name) }

// Model implements Windowed.
func (a *Anthropic) Model(req Request) string { return cmp.Or(req.Model, a.defaultModel) }

// Titles implements Titler.
func (a *Anthropic) Titles() string { return a.titles }

// System implements SystemPrompter.
func (a *Anthropic) System() string { return a.system }

// Prices implements Pricer.
func (a *Anthropic) Prices() *Prices { return a.prices }

// Context implements Windowed: the profile's context_tokens, else the
// model family's.
func (a *Anthropic) Context(req Request) int { return a.window.of(cmp.Or(req.Model, a.defaultModel)) }

// Summarizer implements Windowed: the profile's summary_provider, or "".
func (a *Anthropic) Summarizer() string { return a.window.summary }

// thinkingBudget is the extended-thinking budget, in tokens, of each
// effort: none for none, minimal and no effort; Anthropic's least (1 024)
// for low, rising to 32 000 for max. The reply may use maxReplyTokens on
// top of it.
var thinkingBudget = map[string]int64{"low": 1024, "medium": 4096, "high": 10000, "xhigh": 20000, "max": 32000}

// maxReplyTokens is the room a reply has besides its thinking.
const maxReplyTokens = 8192

// params builds the request of a turn. A tool's results go back in one
// user message, as the API wants every result of a response together.
func (a *Anthropic) params(req Request, model string) anthropic.MessageNewParams {
	p := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: maxReplyTokens}
	midTools := false // the last assistant message called tools: this asks again
	msgs := req.Messages
	if len(req.Tools) == 0 {
		msgs = callsAsText(msgs) // the API refuses calls of tools not given
	}
	for i, m := range msgs {
		switch m.Role {
		case wire.RoleSystem:
			p.System = append(p.System, anthropic.TextBlockParam{Text: m.Text})
		case wire.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if text := withNotes(m); text != "" || len(m.Calls) == 0 {
				blocks = append(blocks, anthropic.NewTextBlock(text))
			}
			for _, c := range m.Calls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, json.RawMessage(argsObject(c.Arguments)), c.Name))
			}
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
			midTools = len(m.Calls) > 0
		case RoleTool:
			block := anthropic.NewToolResultBlock(m.CallID, withNotes(m), false)
			if i > 0 && msgs[i-1].Role == RoleTool {
				if last := p.Messages[len(p.Messages)-1].OfUser; last != nil {
					last.Content = append(last.Content, block)
					continue
				}
			}
			p.Messages = append(p.Messages, anthropic.NewUserMessage(block))
		case wire.RoleUser:
			text := withNotes(m)
			if name := participantName(m.Author); name != "" {
				text = name + ": " + text // who wrote it: the API has no name field
			}
			p.Messages = append(p.Messages, anthropic.NewUserMessage(userBlocks(text, m.Files)...))
			midTools = false
		default: // a bot's message: context, attributed
			p.Messages = append(p.Messages, anthropic.NewUserMessage(userBlocks(m.Author+": "+withNotes(m), m.Files)...))
		}
	}
	for _, t := range req.Tools {
		schema := toolSchema(t.Schema)
		in := anthropic.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
		for k, v := range schema {
			if k != "properties" && k != "type" {
				in.ExtraFields[k] = v
			}
		}
		tool := anthropic.ToolUnionParamOfTool(in, t.Name)
		tool.OfTool.Description = anthropic.String(t.Description)
		p.Tools = append(p.Tools, tool)
	}
	// With thinking on, the API wants an assistant message that called
	// tools to start with its thinking block, signed; the log does not
	// keep those, so a turn that goes on after its tools goes on without.
	if budget, ok := thinkingBudget[req.Effort]; ok && !midTools {
		p.Thinking = anthropic.ThinkingConfigParamOfEnabled(budget)
		p.MaxTokens = budget + maxReplyTokens
	}
	// No temperature: the SDK's Messages API takes none (req.Temperature
	// is for the APIs that do).
	return p
}

// argsObject is a call's arguments as the API takes them back: the
// object the model wrote, or an empty one if it wrote no object.
func argsObject(args string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil || m == nil {
		return "{}"
	}
	return args
}

// Stream implements Provider.
func (a *Anthropic) Stream(ctx context.Context, req Request, emit func(string)) error {
	model := a.Author(req)
	if req.Model == "" && a.defaultModel == "" {
		return fmt.Errorf("provider %q has no model: set default_model in config.toml or choose one with /model", a.name)
	}
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(a.idleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()

	stream := a.client.Messages.NewStreaming(sctx, a.params(req, model))
	defer stream.Close()
	var usage wire.Usage
	reported := false
	var calls anthropicCalls
	for stream.Next() {
		idle.Reset(a.idleTimeout)
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			cached := u.CacheReadInputTokens
			usage.InputTokens = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
			usage.CachedTokens, reported = &cached, true
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				calls.start(ev.Index, ev.ContentBlock.ID, ev.ContentBlock.Name)
			}
		case "content_block_delta":
			switch {
			case ev.Delta.Type == "text_delta" && ev.Delta.Text != "":
				emit(ev.Delta.Text)
			case ev.Delta.Type == "input_json_delta":
				calls.add(ev.Index, ev.Delta.PartialJSON)
			}
		case "message_delta":
			usage.OutputTokens = ev.Usage.OutputTokens
			if ev.Usage.JSON.OutputTokensDetails.Valid() {
				thinking := ev.Usage.OutputTokensDetails.ThinkingTokens
				usage.ReasoningTokens = &thinking
			}
		}
	}
	err := stream.Err()
	if err == nil && reported && req.Usage != nil {
		req.Usage(usage)
	}
	if err == nil && req.Call != nil {
		calls.report(req.Call)
	}
	e := endpoint{name: a.name, baseURL: a.baseURL, idle: a.idleTimeout}
	return e.failure(ctx, sctx, err, model, func(err error) (int, string, bool) {
		var apiErr *anthropic.Error
		if errors.As(err, &apiErr) {
			return apiErr.StatusCode, apiErr.Message, true
		}
		return 0, "", false
	})
}

// anthropicCalls gathers a response's tool_use blocks: each starts with
// its id and name, and its input comes as pieces of JSON.
type anthropicCalls struct {
	calls []ToolCall
	args  [][]byte
	index map[int64]int // by content block
}

func (c *anthropicCalls) start(block int64, id, name string) {
	if len(c.calls) >= maxStreamedCalls {
		return
	}
	if c.index == nil {
		c.index = map[int64]int{}
	}
	c.index[block] = len(c.calls)
	c.calls = append(c.calls, ToolCall{ID: id, Name: name[:min(len(name), 256)]})
	c.args = append(c.args, nil)
}

func (c *anthropicCalls) add(block int64, piece string) {
	if i, ok := c.index[block]; ok {
		addArgs(&c.args[i], piece)
	}
}

// report calls call with each, its input "{}" when none streamed (a
// tool that takes no arguments).
func (c *anthropicCalls) report(call func(ToolCall)) {
	for i, tc := range c.calls {
		tc.Arguments = string(c.args[i])
		if tc.Arguments == "" {
			tc.Arguments = "{}"
		}
		call(tc)
	}
}

// ToolLimits implements ToolCaller.
func (a *Anthropic) ToolLimits() ToolLimits { return a.tools }

// userBlocks are a user message's content: its text, then each image as
// an image block.
func userBlocks(text string, files []File) []anthropic.ContentBlockParamUnion {
	var blocks []anthropic.ContentBlockParamUnion
	for _, f := range files {
		if f.Image != nil {
			blocks = append(blocks, anthropic.NewImageBlockBase64(f.ImageMIME, base64.StdEncoding.EncodeToString(f.Image)))
		}
	}
	if text != "" || len(blocks) == 0 {
		// The API refuses an empty text block beside an image.
		blocks = append([]anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(text)}, blocks...)
	}
	return blocks
}

// ImageBounds implements Images: Anthropic's API takes images to 5 MB
// in base64, and shrinks any past 1568 pixels on a side, at a cost in
// time.
func (a *Anthropic) ImageBounds() ImageBounds {
	return ImageBounds{MaxEdge: 1568, MaxBytes: 3<<20 + 3<<18}
}

// Prefills implements Prefiller: Anthropic's Messages API continues an
// assistant message given last.
func (a *Anthropic) Prefills() bool { return true }
