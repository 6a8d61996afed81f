package wire

import "strings"

// Role is who a message of the log is from. It is not a token's role
// (TokenRole), though both have a "bot".
type Role string

// Message roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleBot       Role = "bot"
	RoleSystem    Role = "system"
)

// TokenRole is what a token may do (docs/protocol.md, "Roles, tokens and
// bots"); presence reports it for each person.
type TokenRole string

// Token roles. An owner is an admin: the daemon.json token, an admin
// member's, or an owner token. A member's access to a session is theirs
// by grant (Access); a viewer and a guest hold a link to one session, to
// watch or to write in.
const (
	TokenOwner  TokenRole = "owner"
	TokenMember TokenRole = "member"
	TokenBot    TokenRole = "bot"
	TokenViewer TokenRole = "viewer"
	TokenGuest  TokenRole = "guest"
)

// Access is a member's access to one session (docs/protocol.md, "Members
// and grants").
type Access string

// Accesses. A session's creator holds it as creator, which may also
// rename, delete, share and grant it; read and write are granted.
const (
	AccessRead    Access = "read"
	AccessWrite   Access = "write"
	AccessCreator Access = "creator"
)

// Member is one named person of a home or server (GET /v1/members).
type Member struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Admin     bool   `json:"admin"`
	CreatedAt string `json:"created_at"`
	Online    int    `json:"online"` // their connections now, on this node
}

// MemberCreate is POST /v1/members's body.
type MemberCreate struct {
	Name  string `json:"name"`
	Admin bool   `json:"admin,omitempty"`
}

// MemberCreated is POST /v1/members's reply: the token, once.
type MemberCreated struct {
	Name  string `json:"name"`
	Admin bool   `json:"admin"`
	Token string `json:"token"`
	URL   string `json:"url"` // opens the page as that member
}

// Grant is one member's access to a session (GET /v1/sessions/{id}/grants).
type Grant struct {
	Member string `json:"member"` // the member's name
	Access Access `json:"access"`
	At     string `json:"created_at"`
}

// GrantPut is PUT /v1/sessions/{id}/grants/{member}'s body.
type GrantPut struct {
	Access Access `json:"access"`
}

// LinkCreate is POST /v1/sessions/{id}/shares's body: all optional.
type LinkCreate struct {
	Access    Access `json:"access,omitempty"`     // read (the default) or write
	ExpiresIn string `json:"expires_in,omitempty"` // a Go duration ("24h"); none: it never expires
	Label     string `json:"label,omitempty"`      // unique in the session; none: one is made
}

// Link is one link to a session, as listed: never its token.
type Link struct {
	Session   string `json:"session"`
	Label     string `json:"label"`
	Access    Access `json:"access"`
	ExpiresAt string `json:"expires_at,omitempty"`
	LastUsed  string `json:"last_used,omitempty"`
	CreatedAt string `json:"created_at"`
}

// LinkCreated is POST /v1/sessions/{id}/shares's reply: the link with its
// token, once.
type LinkCreated struct {
	Link
	Token string `json:"token"`
	WSURL string `json:"ws_url"`
}

// MaxGuestName bounds the name a guest picks (hello's name).
const MaxGuestName = 64

// GuestAuthorPrefix begins the author_id of a guest's inputs:
// "guest:TOKEN-ID:NAME". A guest picks their own name, so the clients and
// what a model is sent mark a guest's messages (IsGuestAuthor).
const GuestAuthorPrefix = "guest:"

// BotAuthorPrefix begins the author_id of a bot's inputs: "bot:NAME".
const BotAuthorPrefix = "bot:"

// IsGuestAuthor says whether authorID (Event.AuthorID) is a guest's.
func IsGuestAuthor(authorID string) bool { return strings.HasPrefix(authorID, GuestAuthorPrefix) }
