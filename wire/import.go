package wire

// SessionImport is the body of POST /v1/sessions/{id}/import: the next
// events of a session being restored from an export (albedo import), in
// offset order, the first at most one past the session's head. Each keeps
// its type, role, author, text, turn and time; offsets the session holds
// already are skipped, so a chunk sent again after a lost reply is
// harmless.
type SessionImport struct {
	Events []Event `json:"events"`
	// Done marks the export's last chunk: a turn it left started (the
	// export was made while it ran) is closed as interrupted, reason
	// ReasonImport, so that it does not stay open for ever.
	Done bool `json:"done,omitempty"`
}

// SessionImported is its reply: the session's head after it.
type SessionImported struct {
	Head int64 `json:"head"`
}

// MaxImportEvents is the most events one import request carries.
const MaxImportEvents = 1000
