package main

import (
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveMetrics serves Prometheus' /metrics and /readyz on --metrics-addr,
// without a token (api/metrics.go says why it is a listener of its own).
// The registry holds Go's and the process's collectors, the store's pool
// (go_sql_*: connections in use and idle, and the waits for one), the
// API's, and the build's.
func (d *daemon) serveMetrics(ln net.Listener) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), d.srv.Collector())
	b := daemonBuild()
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "albedo_build_info",
		Help:        "1, labelled with the binary's version and the commit it was built from.",
		ConstLabels: prometheus.Labels{"version": b.Version, "commit": b.Commit}}, func() float64 { return 1 }))
	reg.MustRegister(collectors.NewDBStatsCollector(d.store.SQL(), "albedo"))
	if d.nc != nil {
		nc := d.nc
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "albedo_nats_connected",
			Help: "1 while this node is connected to the cluster's NATS, else 0."}, func() float64 {
			if nc.IsConnected() {
				return 1
			}
			return 0
		}))
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slogPrinter{d}, MaxRequestsInFlight: 4}))
	mux.Handle("GET /readyz", d.srv.ReadyHandler())
	d.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	d.log.Info("metrics listening", "addr", ln.Addr().String())
	go func() {
		if err := d.metrics.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("metrics listener failed", "err", err)
		}
	}()
}

// slogPrinter is promhttp's error log, on the daemon's logger.
type slogPrinter struct{ d *daemon }

func (p slogPrinter) Println(v ...any) { p.d.log.Error("serve /metrics", "err", v) }
