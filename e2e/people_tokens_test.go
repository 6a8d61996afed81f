//go:build !e2e_only || e2e_core

package e2e

import (
	"context"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// A token of its own that the daemon refuses is final for a client of a
// home: the call fails unauthorized at once, where daemon.json's token
// refused after a restart is followed to the next daemon (above).
func TestRefusedTokenOfAHomeClientIsFinal(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	c, err := client.New(client.Options{Home: fx.home, Token: "almem_wrong", CallRetry: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(fx.ctx, 20*time.Second)
	defer cancel()
	if _, err := c.Sessions(ctx); client.Code(err) != wire.CodeUnauthorized {
		t.Fatalf("a wrong token: %v", err)
	}
}
