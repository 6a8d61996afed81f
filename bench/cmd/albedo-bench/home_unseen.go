package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"albedo/wire"
)

// homeUnseen measures the daemon's CPU while -rate posts a second go into
// sessions a client does not show: with no client, with one that follows
// the feed and shows the newest session, and with one subscribed to every
// session in the background (up to wire.MaxChannels), as clients were
// before the feed; and the real terminal's own CPU (this process's, less
// what it spends without the terminal). Each is measured twice,
// interleaved.
func homeUnseen(ctx context.Context, c config, a *albedoTarget, ids []string, out map[string]float64) error {
	others := ids[:min(100, len(ids)-1)]
	rate := max(c.rate, 1)
	pub, closePub, err := a.publisher(ctx)
	if err != nil {
		return err
	}
	defer closePub()
	self := os.Getpid()
	var selfCore float64
	load := func(d time.Duration) (float64, error) {
		cpu0, own0 := procCPU(a.snap.PID), procCPU(self)
		defer func() { selfCore = (procCPU(self) - own0) / float64(d.Microseconds()) }()
		t0 := time.Now()
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for i := 0; time.Since(t0) < d; i++ {
			<-tick.C
			if err := pub(ctx, others[i%len(others)], stamp()); err != nil {
				return 0, err
			}
		}
		return (procCPU(a.snap.PID) - cpu0) / float64(time.Since(t0).Microseconds()), nil
	}
	clients := map[string]func() (func(), error){
		"none": func() (func(), error) { return func() {}, nil },
		"feed": func() (func(), error) {
			rc, err := dialAlbedo(ctx, a.snap, a.snap.Token, func([]byte) {})
			if err != nil {
				return nil, err
			}
			if _, err := rc.call(ctx, wire.Command{Op: wire.OpHello, Client: "albedo-bench/1"}); err != nil {
				return nil, err
			}
			if _, err := rc.call(ctx, wire.Command{Op: wire.OpFeed, Limit: 200}); err != nil {
				return nil, err
			}
			_, err = rc.call(ctx, wire.Command{Op: wire.OpSub, Session: ids[len(ids)-1]})
			return func() { rc.ws.CloseNow() }, err
		},
		"subscribe-all": func() (func(), error) {
			rc, err := dialAlbedo(ctx, a.snap, a.snap.Token, func([]byte) {})
			if err != nil {
				return nil, err
			}
			off, window := false, 0
			subs := make([]wire.Sub, 0, min(len(ids), wire.MaxChannels))
			for _, id := range ids[:min(len(ids), wire.MaxChannels)] {
				subs = append(subs, wire.Sub{Session: id, Window: &window, Watch: &off})
			}
			_, err = rc.call(ctx, wire.Command{Op: wire.OpHello, Client: "albedo-bench/1", Subs: subs})
			return func() { rc.ws.CloseNow() }, err
		},
		"terminal": func() (func(), error) { return runTerminal(ctx, a) },
	}
	cores, own := map[string][]float64{}, map[string][]float64{}
	for range 2 {
		for _, name := range []string{"none", "feed", "subscribe-all", "terminal"} {
			stop, err := clients[name]()
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			core, err := load(c.duration)
			stop()
			if err != nil {
				return err
			}
			cores[name] = append(cores[name], core)
			own[name] = append(own[name], selfCore)
		}
	}
	none := median(cores["none"])
	out["unseen feed core"] = median(cores["feed"]) - none
	out["unseen subscribe-all core"] = median(cores["subscribe-all"]) - none
	out["unseen none core"] = none
	out["unseen terminal core"] = median(cores["terminal"]) - none
	out["terminal own core"] = median(own["terminal"]) - median(own["none"])
	return nil
}
