package mcphost

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPCall is the daemon's side of one call of an MCP server's
// tool that answers at once, from Host.Call to its result, the server a
// program on stdio (this test binary) or a server over streamable HTTP
// on 127.0.0.1: the JSON-RPC round trip, the SDK's encoding and the
// host's bookkeeping. A turn's call adds the commits a bot's call makes
// (BenchmarkToolCall in hub).
func BenchmarkMCPCall(b *testing.B) {
	for _, transport := range []string{"stdio", "http"} {
		b.Run("transport="+transport, func(b *testing.B) {
			cfg := goServer("go")
			if transport == "http" {
				srv := testServer()
				hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
				b.Cleanup(hs.Close)
				cfg = ServerConfig{URL: hs.URL}
			}
			h := New(discard(), nil)
			b.Cleanup(h.Close)
			if err := h.Reload(map[string]ServerConfig{"s": cfg}); err != nil {
				b.Fatal(err)
			}
			if r := h.Call(b.Context(), "s", "echo", []byte(`{"text":"warm"}`)); r.Output != "echo: warm" {
				b.Fatalf("%q %q", r.Output, r.Error)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if r := h.Call(b.Context(), "s", "echo", []byte(`{"text":"hi"}`)); r.Output != "echo: hi" {
					b.Fatalf("%q %q", r.Output, r.Error)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
