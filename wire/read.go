package wire

// ReadMark is a person's read marker in a session: the offset they have
// read up to (PUT and GET /v1/sessions/{id}/read).
type ReadMark struct {
	Offset int64 `json:"offset"`
}

// ReadPush tells a person's connections that follow a session where
// their read marker is now, set on this device or another: their unread
// count there starts after it.
type ReadPush struct {
	Op      Op     `json:"op"` // "read"
	Session string `json:"session"`
	Offset  int64  `json:"offset"`
	// Unread is how many messages came after it (at most MaxUnread).
	Unread int `json:"unread"`
}
