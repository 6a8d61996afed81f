package wire

import "encoding/json"

// Usage is what a turn cost, in tokens, as its provider reported it
// (docs/protocol.md, "Turns"). CachedTokens (of the input, read from the
// provider's cache) and ReasoningTokens (of the output, spent thinking)
// are set only where the provider reports them.
type Usage struct {
	InputTokens     int64  `json:"input_tokens"`
	OutputTokens    int64  `json:"output_tokens"`
	CachedTokens    *int64 `json:"cached_tokens,omitempty"`
	ReasoningTokens *int64 `json:"reasoning_tokens,omitempty"`
	// Cost is what the turn cost in USD, by its profile's prices (set
	// only where the profile has them).
	Cost *float64 `json:"cost,omitempty"`
}

// nullUsage is the usage of a closing turn event whose provider reported
// none: said as null, never as zeros.
var nullUsage = json.RawMessage("null")

// SetUsage records a closing turn event's usage: u, or null for none.
func (e *Event) SetUsage(u *Usage) {
	if u == nil {
		e.Usage = nullUsage
		return
	}
	e.Usage = Encode(u)
}

// TurnUsage returns a closing turn event's usage: nil when the provider
// reported none, or when the event says nothing of it (an event of a
// daemon that did not record usage).
func (e Event) TurnUsage() *Usage {
	if len(e.Usage) == 0 || string(e.Usage) == "null" {
		return nil
	}
	var u Usage
	if json.Unmarshal(e.Usage, &u) != nil {
		return nil
	}
	return &u
}

// UsageTotal is one group of GET /v1/usage: the turns ended in it, how
// many of them reported no usage, their tokens, and their cost in USD
// (null when none of them was priced; Unpriced counts the turns that
// reported tokens with no prices set).
type UsageTotal struct {
	Key             string   `json:"key"`
	Turns           int64    `json:"turns"`
	Unreported      int64    `json:"unreported"`
	InputTokens     int64    `json:"input_tokens"`
	OutputTokens    int64    `json:"output_tokens"`
	CachedTokens    int64    `json:"cached_tokens"`
	ReasoningTokens int64    `json:"reasoning_tokens"`
	Cost            *float64 `json:"cost"`
	Unpriced        int64    `json:"unpriced"`
}

// UsageReport is the body of GET /v1/usage.
type UsageReport struct {
	By     string       `json:"by"`
	Since  string       `json:"since"`
	Totals []UsageTotal `json:"totals"`
}
