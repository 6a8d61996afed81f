package wire

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
// bots"); presence reports it for each viewer.
type TokenRole string

// Token roles.
const (
	TokenOwner  TokenRole = "owner"
	TokenBot    TokenRole = "bot"
	TokenViewer TokenRole = "viewer"
)
