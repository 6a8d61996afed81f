//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// A reply's line breaks are line breaks, as in any chat; a fenced block
// in a language highlight.js knows is highlighted under a bar naming it,
// its tabs 4 columns wide; a block with no language is labelled "code"
// and left plain.
func TestWebLineBreaksAndHighlightedCode(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "code", Provider: "fake"}})
	reply := "line one\nline two\n\n```go\nfunc main() {\n\treturn \"hi\" // done\n}\n```\n\n```\nplain\ttext\n```\n"
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{reply}})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "show me"); err != nil {
		t.Fatal(err)
	}
	p := startBrowser(t).open(ownerLink(t, fx.home, "s"))
	const body = `document.querySelector('#transcript article[data-role=assistant] .body')`
	p.wait("the reply", `!!`+body)
	if got := eval[string](p, body+`.querySelector('p').innerText`); got != "line one\nline two" {
		t.Fatalf("the first paragraph reads %q", got)
	}
	if n := eval[int](p, body+`.querySelectorAll('p br').length`); n != 1 {
		t.Fatalf("%d line breaks in the first paragraph", n)
	}
	blocks := eval[[]map[string]any](p, `[...`+body+`.querySelectorAll('.codeblock')].map(b => ({
		lang: b.querySelector('.codebar .lang').textContent,
		copy: !!b.querySelector('.codebar button.copy'),
		keywords: b.querySelectorAll('pre code .hljs-keyword').length,
		strings: b.querySelectorAll('pre code .hljs-string').length,
		comments: b.querySelectorAll('pre code .hljs-comment').length,
		tab: getComputedStyle(b.querySelector('pre')).tabSize,
		text: b.querySelector('pre code').textContent,
	}))`)
	if len(blocks) != 2 {
		t.Fatalf("%d code blocks: %v", len(blocks), blocks)
	}
	goBlock, plain := blocks[0], blocks[1]
	if goBlock["lang"] != "go" || goBlock["copy"] != true || goBlock["keywords"].(float64) < 2 || goBlock["strings"].(float64) != 1 || goBlock["comments"].(float64) != 1 {
		t.Fatalf("the Go block: %v", goBlock)
	}
	if goBlock["text"] != "func main() {\n\treturn \"hi\" // done\n}\n" {
		t.Fatalf("highlighting changed the code's text: %q", goBlock["text"])
	}
	if goBlock["tab"] != "4" || plain["tab"] != "4" {
		t.Fatalf("tabs are %v and %v columns", goBlock["tab"], plain["tab"])
	}
	if plain["lang"] != "code" || plain["keywords"].(float64) != 0 || plain["text"] != "plain\ttext\n" {
		t.Fatalf("the plain block: %v", plain)
	}
	p.screenshot("web-code")
}
