package provider

import (
	"context"
	"net"
	"strings"
	"testing"

	"albedo/hub/provider/fakeopenai"
)

// closedURL is a base URL on 127.0.0.1 where nothing listens: a port that
// was free a moment ago.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

// A base_url where nothing answers fails the turn saying so, naming the
// profile and the URL and what to check; a stream that started and then
// broke says that instead. The two must not be told the same way: no
// stream ever started at a refused port.
func TestOpenAINothingAnswersIsNotABrokenStream(t *testing.T) {
	t.Parallel()
	f := fake(t)
	refused := closedURL(t)
	cases := []struct {
		name    string
		baseURL string
		reply   *fakeopenai.Reply
		want    []string
		wantNot string
	}{
		{"refused", refused, nil, []string{
			`profile "local": nothing answers at ` + refused + ` (connection refused): check its base_url in config.toml`,
		}, "stream broke"},
		{"no such host", "http://albedo-test.invalid/v1", nil, []string{
			`profile "local": nothing answers at http://albedo-test.invalid/v1 (`, "check its base_url",
		}, "stream broke"},
		{"broken stream", f.URL, &fakeopenai.Reply{Chunks: []string{"part"}, Break: true}, []string{
			`provider "local": the reply stream broke`,
		}, "nothing answers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.reply != nil {
				f.Push(*tc.reply)
			}
			p := NewOpenAI("local", Profile{BaseURL: tc.baseURL, DefaultModel: "m"}, "")
			_, err := collect(t, p, context.Background(), Request{Messages: []Message{{Role: "user", Text: "x"}}})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tc.wantNot) {
				t.Fatalf("error %q says %q", err, tc.wantNot)
			}
		})
	}
}
