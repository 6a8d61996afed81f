//go:build !e2e_only || e2e_web

package e2e

import (
	"testing"

	"albedo/wire"
)

// countModelReads has the page count its reads of a provider's models,
// in window.modelReads.
const countModelReads = `(() => { const f = albedo.api.models; window.modelReads = 0;
	albedo.api.models = (...a) => { window.modelReads++; return f.apply(albedo.api, a) }; return true })()`

// openSettings opens the session's settings and waits until their model
// field has offered what it will (models.js's data-models).
func openSettings(p *page) {
	p.t.Helper()
	eval[bool](p, `(document.querySelector('#edit').click(), true)`)
	p.wait("the settings, their models read", `!document.querySelector('#editor').hidden && document.querySelector('#model').dataset.models !== 'reading'`)
}

// A session that names no model shows the default its turns go to,
// "(default)", in the meta line and the settings; the settings' model
// field offers the provider's models, the default marked, read once
// however often the settings open; a model picked shows as the session's,
// and cleared, the default shows again.
func TestWebModelPicker(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "a", create: wire.SessionCreate{Title: "alpha", Provider: "fake"}})
	p := startBrowser(t).open(ownerLink(t, fx.home, "a"))
	p.waitOpen("alpha")
	p.wait("the default model in the meta line", `document.querySelector('#settings').textContent.includes('model fake-model (default)')`)
	eval[bool](p, countModelReads)

	openSettings(p)
	p.wait("the models offered", `document.querySelector('#model').getAttribute('list') === 'models' && document.querySelector('#model').value === '' &&
		document.querySelector('#model').placeholder === 'fake-model (default)' &&
		[...document.querySelectorAll('#models option')].map(o => o.value).join() === 'fake-large,fake-model' &&
		[...document.querySelectorAll('#models option')].map(o => o.label).join() === 'fake-large,fake-model (default)' &&
		document.querySelector('#models option[data-default]').value === 'fake-model'`)
	eval[bool](p, `(document.querySelector('#edit').click(), true)`) // closed
	openSettings(p)
	if n := eval[int](p, `window.modelReads`); n != 1 {
		t.Fatalf("the models were read %d times, want once", n)
	}

	eval[bool](p, `(() => { document.querySelector('#model').value = 'fake-large'; document.querySelector('#save').click(); return true })()`)
	p.wait("the model picked", `document.querySelector('#editor').hidden && document.querySelector('#settings').textContent.match(/model fake-large( ·|$)/)`)
	if s, err := fx.c.Session(fx.ctx, "a"); err != nil || s.Model != "fake-large" {
		t.Fatalf("the session's model: %q, %v", s.Model, err)
	}
	openSettings(p)
	p.wait("the model in the field", `document.querySelector('#model').value === 'fake-large'`)
	eval[bool](p, `(() => { document.querySelector('#model').value = ''; document.querySelector('#save').click(); return true })()`)
	p.wait("the default again", `document.querySelector('#editor').hidden && document.querySelector('#settings').textContent.includes('model fake-model (default)')`)

	// Cleared elsewhere, the page reads the default again.
	cli(t, fx.home, "sessions", "set", "a", "--model", "fake-large")
	p.wait("the model set elsewhere", `document.querySelector('#settings').textContent.match(/model fake-large( ·|$)/)`)
	cli(t, fx.home, "sessions", "set", "a", "--model", "")
	p.wait("the default after it is cleared elsewhere", `document.querySelector('#settings').textContent.includes('model fake-model (default)')`)
	if ex := p.exceptions(); len(ex) > 0 {
		t.Fatalf("the page threw: %v", ex)
	}
}

// Where the provider cannot list its models, the model field is a text
// field all the same: a model typed in is the session's.
func TestWebModelPickerWithoutAList(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "a", create: wire.SessionCreate{Title: "alpha", Provider: "fake"}})
	fx.fake.SetModels(nil) // GET /v1/models fails
	p := startBrowser(t).open(ownerLink(t, fx.home, "a"))
	p.waitOpen("alpha")
	openSettings(p)
	p.wait("no models offered", `document.querySelector('#model').dataset.models === 'none' && document.querySelectorAll('#models option').length === 0 &&
		document.querySelector('#model').placeholder === 'fake-model (default)' && !document.querySelector('#notice').classList.contains('error')`)
	eval[bool](p, `(() => { document.querySelector('#model').value = 'typed-model'; document.querySelector('#save').click(); return true })()`)
	p.wait("the model typed", `document.querySelector('#settings').textContent.includes('model typed-model')`)
	if s, err := fx.c.Session(fx.ctx, "a"); err != nil || s.Model != "typed-model" {
		t.Fatalf("the session's model: %q, %v", s.Model, err)
	}
}
