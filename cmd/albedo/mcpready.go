package main

import (
	"context"
	"fmt"
	"strings"

	"albedo/api"
	"albedo/hub/mcphost"
)

// mcpReady is /readyz's advisory check of the MCP servers config.toml
// names: failing, naming those that failed to start or died (their
// errors go to the log, not to /readyz).
func (d *daemon) mcpReady() api.ReadyCheck {
	return api.ReadyCheck{Name: "mcp", Advisory: true, Detail: true, Check: func(context.Context) error {
		var failed []string
		for _, s := range d.mcp.Status("", nil) {
			if s.State == mcphost.StateFailed {
				failed = append(failed, s.Name)
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("failing: %s", strings.Join(failed, ", "))
		}
		return nil
	}}
}
