package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
)

// runs holds result values: target → metric → one value per run.
type runs map[string]map[string][]float64

// report reads result lines (one JSON object each, as -json prints) and
// writes a markdown table per scenario: the median of each value per
// target, and albedo's ratio to each peer.
func report(in io.Reader, out io.Writer) error {
	type key struct{ scenario, params string }
	vals := map[key]runs{}
	var order []key
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r result
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		k := key{r.Scenario, r.Params}
		if vals[k] == nil {
			vals[k] = runs{}
			order = append(order, k)
		}
		if vals[k][r.Target] == nil {
			vals[k][r.Target] = map[string][]float64{}
		}
		for m, v := range r.Values {
			vals[k][r.Target][m] = append(vals[k][r.Target][m], v)
		}
	}
	for _, k := range order {
		writeTable(out, k.scenario, k.params, vals[k])
	}
	return sc.Err()
}

// writeTable writes one scenario's table: a row per metric, a column per
// target (albedo first), then albedo's ratio to each peer.
func writeTable(out io.Writer, scenario, params string, vals runs) {
	targets := []string{}
	for t := range vals {
		targets = append(targets, t)
	}
	sort.Slice(targets, func(i, j int) bool {
		ri, rj := rank(targets[i]), rank(targets[j])
		return ri < rj || ri == rj && targets[i] < targets[j]
	})
	metrics := map[string]bool{}
	n := 0
	for _, t := range targets {
		for m, v := range vals[t] {
			metrics[m] = true
			n = max(n, len(v))
		}
	}
	fmt.Fprintf(out, "\n**%s** (%s; median of %d runs)\n\n", scenario, params, n)
	head := "| metric |"
	sep := "| --- |"
	for _, t := range targets {
		head += " " + t + " |"
		sep += " ---: |"
	}
	for _, t := range targets[1:] {
		head += " albedo / " + t + " |"
		sep += " ---: |"
	}
	fmt.Fprintln(out, head)
	fmt.Fprintln(out, sep)
	ms := make([]string, 0, len(metrics))
	for m := range metrics {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	for _, m := range ms {
		fmt.Fprintln(out, tableRow(m, targets, vals))
	}
}

// tableRow is metric m's row: each target's median, then the ratios.
func tableRow(m string, targets []string, vals runs) string {
	row := "| " + m + " |"
	med := map[string]float64{}
	for _, t := range targets {
		v, ok := vals[t][m]
		if !ok {
			row += " – |"
			continue
		}
		med[t] = median(v)
		row += " " + num(med[t]) + " |"
	}
	for _, t := range targets[1:] {
		a, okA := med["albedo"]
		p, okP := med[t]
		if !okA || !okP || p == 0 {
			row += " – |"
			continue
		}
		row += fmt.Sprintf(" %.2f× |", a/p)
	}
	return row
}

// rank orders a table's columns: albedo first (the ratios are its), then
// albedo-nostore (albedo with its store taken out: the bound of any store
// on its path), its peers, any other target last. A peer missing here once
// ranked with albedo, and a table could put it first (jetstream, in one
// bench/run).
func rank(t string) int {
	if r, ok := map[string]int{"albedo": 0, "albedo-nostore": 1, "jetstream": 2, "centrifuge": 3, "ws": 4}[t]; ok {
		return r
	}
	return 5
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func num(v float64) string {
	switch {
	case v >= 1000:
		return strings.TrimSuffix(fmt.Sprintf("%.0f", v), ".0")
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// reportMain is `albedo-bench -report FILE`.
func reportMain(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return report(f, os.Stdout)
}
