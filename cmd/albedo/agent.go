package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"albedo/hub/provider"
)

func newAgentCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "coding agents (ACP) as providers of sessions (add)"}
	cmd.AddCommand(newAgentAddCmd(g))
	return cmd
}

func newAgentAddCmd(g *globals) *cobra.Command {
	var env []string
	var noFS, noTerminal bool
	cmd := &cobra.Command{
		Use:   "add NAME -- COMMAND [ARG...]",
		Short: "add a coding agent's profile (kind acp) to config.toml",
		Long: "Add [providers.NAME] of kind acp to the home's config.toml: a coding agent the daemon starts, in a\n" +
			"session's workspace, with COMMAND (it speaks the Agent Client Protocol on its stdin and stdout).\n" +
			"A running daemon takes it at once. Then: albedo new --provider NAME --workspace DIR (an admin's).\n" +
			"docs/agents.md has profiles for opencode, Gemini CLI, Claude Code and codex.\n\n" +
			"  albedo agent add opencode -- opencode acp\n" +
			"  albedo agent add claude --env ANTHROPIC_API_KEY=env:ANTHROPIC_API_KEY -- npx @zed-industries/claude-code-acp",
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 || len(args) < 2 {
				return fmt.Errorf("give the profile's name, then -- and the agent's command")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := g.resolveHome()
			if err != nil {
				return err
			}
			text, err := agentProfile(args[0], args[1:], env, noFS, noTerminal)
			if err != nil {
				return usageErrorf("%v", err)
			}
			path := filepath.Join(home, "config.toml")
			old, err := os.ReadFile(path)
			if err != nil && !os.IsNotExist(err) {
				return err
			}
			cfg, err := provider.LoadConfig(path)
			if err != nil {
				return err
			}
			if _, ok := cfg.Providers[args[0]]; ok {
				return fmt.Errorf("%s has a profile named %q already: edit it there, or pick another name", path, args[0])
			}
			next := string(old)
			if next != "" && !strings.HasSuffix(next, "\n") {
				next += "\n"
			}
			if next != "" {
				next += "\n"
			}
			next += text
			// What the daemon would make of it, before anything is written.
			var c provider.Config
			if _, err := toml.Decode(next, &c); err != nil {
				return fmt.Errorf("the profile would break %s: %v", path, err)
			}
			if _, err := provider.NewRegistry(c, os.Getenv); err != nil {
				return fmt.Errorf("the profile would break %s: %v", path, err)
			}
			if err := os.MkdirAll(home, 0o700); err != nil {
				return err
			}
			if err := writeAtomic(home, "config.toml", []byte(strings.TrimSuffix(next, "\n"))); err != nil {
				return err
			}
			printf(g.stderr, "added [providers.%s] to %s; make a session: albedo new --provider %s --workspace DIR\n", args[0], path, args[0])
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&env, "env", nil, "NAME=VALUE for the agent's environment; NAME=env:VAR takes the daemon's $VAR (repeatable)")
	cmd.Flags().BoolVar(&noFS, "no-fs", false, "do not serve the agent the workspace's files (fs/*)")
	cmd.Flags().BoolVar(&noTerminal, "no-terminal", false, "do not run commands for the agent (terminal/*)")
	return cmd
}

// agentProfile is the TOML of an acp profile.
func agentProfile(name string, command, env []string, noFS, noTerminal bool) (string, error) {
	if name == "" || strings.ContainsAny(name, "[]. \"'\n") || name == provider.NameEcho || strings.HasPrefix(name, provider.BotPrefix) {
		return "", fmt.Errorf("%q cannot name a profile: use letters, digits, - and _", name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[providers.%s]\nkind = \"acp\"\ncommand = [", name)
	for i, a := range command {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(a))
	}
	b.WriteString("]\n")
	if len(env) > 0 {
		b.WriteString("env = { ")
		for i, kv := range env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return "", fmt.Errorf("--env %q is not NAME=VALUE", kv)
			}
			if i > 0 {
				b.WriteString(", ")
			}
			if from, ok := strings.CutPrefix(v, "env:"); ok {
				fmt.Fprintf(&b, "%s = { env = %s }", strconv.Quote(k), strconv.Quote(from))
			} else {
				fmt.Fprintf(&b, "%s = %s", strconv.Quote(k), strconv.Quote(v))
			}
		}
		b.WriteString(" }\n")
	}
	if noFS {
		b.WriteString("fs = false\n")
	}
	if noTerminal {
		b.WriteString("terminal = false\n")
	}
	return b.String(), nil
}
