package mcpserve

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"albedo/client"
)

// New is albedo as an MCP server, acting through c with c's token: it
// can do what that token can (an owner's, a member's, a bot's), no more.
func New(c *client.Client, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "albedo", Title: "albedo: a team's sessions", Version: version},
		&mcp.ServerOptions{Instructions: instructions})
	add(s, c)
	return s
}

// instructions tell an agent what the server is for.
const instructions = `albedo holds a team's sessions: people, models and bots talk in them, and every message is kept. list_sessions shows the sessions you may read; read_session reads one (by id, short id or title); send_message writes to one, which runs its model, and returns the reply; ask_people posts a question to a session's people and waits for one of them to answer.`
