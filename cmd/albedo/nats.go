package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"albedo/api"
)

// connectNATS joins the cluster's NATS at url. The daemon starts even when
// NATS is not up yet, and keeps reconnecting for as long as it runs:
// nothing depends on a notice arriving (the store has it all), so NATS
// down only delays what other nodes' viewers see, by at most a heartbeat.
// The hub handles reconnections (it looks at the store at once).
func connectNATS(url, node string, log *slog.Logger) (*nats.Conn, error) {
	nc, err := nats.Connect(url,
		nats.Name("albedo "+node),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.ReconnectJitter(250*time.Millisecond, time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("NATS disconnected; notices wait, the store has everything", "err", err)
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
	}
	return nc, nil
}

// natsReady is /readyz's look at NATS, with --nats: a node that cannot
// hear the others still serves everything, late, so it says so rather
// than hiding it from a load balancer that may prefer another node.
func (d *daemon) natsReady() []api.ReadyCheck {
	if d.nc == nil {
		return nil
	}
	return []api.ReadyCheck{{Name: "nats", Advisory: true, Check: func(context.Context) error {
		if st := d.nc.Status(); st != nats.CONNECTED {
			return fmt.Errorf("NATS is %s", st)
		}
		return nil
	}}}
}
