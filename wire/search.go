package wire

import "time"

// SearchResult is one message a search found (GET /v1/search): where it
// is, who wrote it and when, and its text, or a snippet of it, with each
// match between « and ».
type SearchResult struct {
	Session string    `json:"session"`
	Title   string    `json:"title"`
	Offset  int64     `json:"offset"`
	Type    EventType `json:"type"`
	Role    Role      `json:"role"`
	Author  string    `json:"author,omitempty"`
	Text    string    `json:"text"`
	At      time.Time `json:"at"`
}

// SearchResults is a page of a search, newest first; Next, when set, is
// the after of the page that follows.
type SearchResults struct {
	Results []SearchResult `json:"results"`
	Next    string         `json:"next,omitempty"`
}
