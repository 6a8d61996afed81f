package main

import (
	"strings"
	"testing"
)

// A table's first column is albedo's, then albedo-nostore's, whatever
// other targets it has and in whatever order the map hands them over: the
// ratios are albedo's to each.
func TestReportPutsAlbedoFirst(t *testing.T) {
	in := `{"target":"jetstream","scenario":"persist","params":"p","values":{"inputs/s":60000}}
{"target":"albedo","scenario":"persist","params":"p","values":{"inputs/s":30000}}
{"target":"other","scenario":"persist","params":"p","values":{"inputs/s":10000}}
{"target":"albedo-nostore","scenario":"persist","params":"p","values":{"inputs/s":60000}}
`
	for range 50 { // map order is random: a tie broken by it shows within a few
		var out strings.Builder
		if err := report(strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		want := "| metric | albedo | albedo-nostore | jetstream | other | albedo / albedo-nostore | albedo / jetstream | albedo / other |\n" +
			"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n| inputs/s | 30000 | 60000 | 60000 | 10000 | 0.50× | 0.50× | 3.00× |"
		if got := out.String(); !strings.Contains(got, want) {
			t.Fatalf("table:\n%s", got)
		}
	}
}
