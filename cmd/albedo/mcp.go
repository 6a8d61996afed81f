package main

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/mcpserve"
)

func newMCPCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "serve albedo to an agent as an MCP server, on stdin and stdout",
		Long: "Serve the Model Context Protocol on stdin and stdout, for an agent that starts albedo as a\n" +
			"program (Claude Code, codex, opencode): its tools list_sessions, read_session, send_message and\n" +
			"ask_people act with the home's owner token, or --token (a member's or a bot's: it can do what\n" +
			"that token can, no more), on the home's daemon or --url. docs/mcp.md shows each agent's setup.",
		Args: cobra.NoArgs,
		RunE: g.withClient(func(ctx context.Context, c *client.Client, _ []string) error {
			ver, _ := build()
			return mcpserve.New(c, ver).Run(ctx, &mcp.StdioTransport{})
		}),
	}
}
