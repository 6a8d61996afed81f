//go:build !e2e_only || e2e_web

package e2e

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"albedo/hub/provider"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// The page's meta line shows the session's context fill (the last turn's
// context, as compaction counts it, against the profile's
// context_tokens; not the tokens the provider reported) and its cost so
// far, from the session when it opens and from each turn as it ends.
func TestWebContextMeterAndCost(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	f := withFakeAnd(t, home, "context_tokens = 1000\n[providers.fake.prices]\ninput = 1\noutput = 2\n")
	startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, "m", wire.SessionCreate{Title: "m", Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	f.Push(fakeopenai.Reply{Chunks: []string{"one"}, Usage: &fakeopenai.Usage{PromptTokens: 100, CompletionTokens: 20}},
		fakeopenai.Reply{Chunks: []string{"two"}, Usage: &fakeopenai.Usage{PromptTokens: 300, CompletionTokens: 50}})
	if _, err := c.PutInput(ctx, "m", uuid.NewString(), "first"); err != nil {
		t.Fatal(err)
	}
	waitTurnsClosed(t, ctx, c, "m", 1)
	b := startBrowser(t)
	p := b.open(ownerLink(t, home, "m"))
	p.waitOpen("m")
	msg := func(text string) int { return provider.Tokens(text) + provider.MessageOverhead }
	one := msg("first") + msg("one")
	p.wait("the meter from the session", fmt.Sprintf(`document.querySelector('#settings').textContent.includes('ctx %d/1.0k (%d%%) · $0.0001')`, one, one/10))
	if _, err := c.PutInput(ctx, "m", uuid.NewString(), "second"); err != nil {
		t.Fatal(err)
	}
	two := one + msg("second") + msg("two")
	p.wait("the meter after a turn", fmt.Sprintf(`document.querySelector('#settings').textContent.includes('ctx %d/1.0k (%d%%) · $0.0005')`, two, two/10))
}

// The meter counts each turn's cost once, whichever comes first, the
// session's total or the history it covers: the total stands for every
// event up to the head it was read at, and only later events add to it.
// A page under load met the history after the total and counted the
// first turn twice. meter.js, in the browser, with a session whose GET
// is held.
func TestWebMeterCountsEachCostOnce(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "m", create: wire.SessionCreate{Title: "m"}})
	b := startBrowser(t)
	p := b.open(ownerLink(t, fx.home, "m"))
	p.waitOpen("m")
	p.wait("each cost once, history before or after the total", `(async () => {
		const m = await import('/assets/meter.js');
		const turn = (offset, cost) => ({offset, type: 'turn', context: 15, usage: {input_tokens: 100, output_tokens: 50, cost}});
		const run = async (historyFirst) => {
			let answer;
			const api = {session: () => new Promise(r => { answer = r; })};
			const v = {id: 'x', events: []};
			const opened = m.meterOpened(api, v, () => {});
			const history = [turn(2, 0.25), turn(4, 0.25)];
			const arrive = (evs) => { for (const ev of evs) { v.events.push(ev); m.meterEvent(v, ev); } };
			if (historyFirst) arrive(history);
			answer({head: 4, context_tokens: 1000, usage: {cost: 0.5}});
			await opened;
			if (!historyFirst) arrive(history);
			arrive([turn(6, 0.25)]);
			return m.meterText(v);
		};
		const a = await run(true), b = await run(false);
		return a === b && a === 'ctx 15/1.0k (1%) · $0.7500';
	})()`)
}
