package wire

import "time"

// The sessions feed: one subscription that carries what a sidebar shows
// of every session a token may see, so that a client follows ten
// thousand sessions without a sub for each (docs/protocol.md, "The
// sessions feed").

// Commands of the feed.
const (
	OpFeed     Op = "feed"      // start (or resume) the connection's feed; the reply has its first page
	OpFeedPage Op = "feed_page" // a later page of the feed, by activity
)

// PushFeed carries the sessions that changed since the last.
const PushFeed Op = "feed"

// Feed bounds.
const (
	DefaultFeedPage = 100  // sessions in a page when the command names no limit
	MaxFeedPage     = 1000 // the most sessions one page holds
	MaxFeedPush     = 64   // the most sessions (and gone ids) one feed push holds
	MaxUnread       = 100  // unread counts stop here: 100 means 100 or more
	MaxFeedLine     = 160  // bytes of the newest message's first line
	FeedEveryMS     = 500  // the least time between two feed pushes to a connection
)

// FeedItem is one session as the feed shows it.
type FeedItem struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Provider string `json:"provider"` // what its turns go to (resolved_provider)
	Head     int64  `json:"head"`
	// At is its last activity: the time of its newest event.
	At       time.Time `json:"at"`
	Phase    Phase     `json:"phase"`
	Queued   int       `json:"queued"`
	Pending  int       `json:"pending,omitempty"`   // tool calls waiting for a decision (phase approval)
	LastTurn string    `json:"last_turn,omitempty"` // the newest turn's state
	// Last is its newest message: who wrote it and its first line.
	Last *FeedLast `json:"last,omitempty"`
	// Read is this person's read marker, and Unread how many messages
	// came after it (at most MaxUnread).
	Read   int64 `json:"read"`
	Unread int   `json:"unread"`
	// Access is what the token may do in it, as in the session object.
	Access Access `json:"access,omitempty"`
	// Parent is where a fork came from, as in the session object.
	Parent *ForkPoint `json:"parent,omitempty"`
	// Pinned says this person pinned it (they see it first); Archived
	// that it left the feed (a push says so once; pages hold none).
	Pinned   bool `json:"pinned,omitempty"`
	Archived bool `json:"archived,omitempty"`
}

// Pins is the reply of GET /v1/me/pins: the sessions a person pinned,
// the first pinned first.
type Pins struct {
	Sessions []string `json:"sessions"`
}

// MaxPins bounds the sessions one person pins.
const MaxPins = 50

// FeedLast is a session's newest message, shortened.
type FeedLast struct {
	Offset int64  `json:"offset"`
	Author string `json:"author"`
	Role   Role   `json:"role"`
	Text   string `json:"text"` // its first line, at most MaxFeedLine bytes
}

// FeedReply is the body of the replies to feed and feed_page.
type FeedReply struct {
	// Pos is where the feed stands after this reply: a resume from it
	// (feed's pos) misses nothing said after it. Absent in feed_page's.
	Pos string `json:"pos,omitempty"`
	// Resumed says the feed goes on from the pos asked for: what changed
	// since comes in pushes, and the reply holds no page. False: this is
	// a new start, Sessions is the first page, and a client drops what
	// it held before.
	Resumed  bool       `json:"resumed"`
	Sessions []FeedItem `json:"sessions"`
	// Next reads the page after this one (feed_page's after); absent
	// at the end of the list.
	Next string `json:"next,omitempty"`
}

// FeedPush names the sessions that changed, each as it is now, and those
// gone (deleted, or no longer visible to the token); Revoked names those
// of Gone that the token may no longer see, so that a client can say
// why each went. Pos is where a resume would go on from.
type FeedPush struct {
	Op       Op         `json:"op"` // "feed"
	Pos      string     `json:"pos"`
	Sessions []FeedItem `json:"sessions,omitempty"`
	Gone     []string   `json:"gone,omitempty"`
	Revoked  []string   `json:"revoked,omitempty"`
}
