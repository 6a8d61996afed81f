// The model a session's turns go to, and a picker for it in the
// settings. The session object says both the session's own `model` and
// `resolved_model`, what its turns go to (its own, else its profile's
// default): a session that names none shows the default, marked
// "(default)", never a blank. The settings' model field offers what the
// provider's API lists (GET /v1/providers/{name}/models, read once per
// provider while the page is open), the default marked; any other name
// may still be typed, and where the provider cannot list its models the
// field is a plain text field.

import { $ } from './dom.js';

// lists holds each provider's models as read (a promise of the reply, or
// of null where there is none to offer).
const lists = new Map();

// takeModel keeps what s, a session as the daemon sent it, says of its
// model.
export function takeModel(v, s) {
  if (s.model === undefined) return;
  v.session = { ...v.session, model: s.model, resolved_model: s.resolved_model || '' };
}

// modelText is v's model as the page shows it: its own, else the default
// its turns go to, "(default)"; '' where the page knows of none.
export function modelText(v) {
  const own = v.status && typeof v.status.model === 'string' ? v.status.model : v.session.model;
  if (own) return own;
  // The session's own model, as last read, agrees: its resolved_model is
  // the default (a model cleared since is read again: modelChanged).
  return !v.session.model && v.session.resolved_model ? `${v.session.resolved_model} (default)` : '';
}

// modelsOf reads the provider's models once; a provider that lists none
// (echo, bots, coding agents) or a failure gives null, a failure being
// asked again the next time.
export function modelsOf(api, provider) {
  if (!provider || provider === 'echo' || provider.startsWith('bot:')) return Promise.resolve(null);
  if (!lists.has(provider)) {
    lists.set(provider, api.models(provider).catch((e) => {
      if (e.code !== 'bad_request' && e.code !== 'not_found') lists.delete(provider);
      return null;
    }));
  }
  return lists.get(provider);
}

// offerModels fills the settings' model field for v: what to show when
// it is left empty (the default), and the provider's models to pick
// from, once they are read (if v's settings are still the ones open).
export async function offerModels(api, v, stillOpen) {
  const input = $('model');
  const datalist = $('models');
  drawModelField(v);
  datalist.replaceChildren();
  input.dataset.models = 'reading';
  const provider = v.session.resolved_provider || v.session.provider || '';
  const list = await modelsOf(api, provider);
  if (!stillOpen()) return;
  input.dataset.models = list ? String((list.models || []).length) : 'none';
  if (!list) return;
  const options = (list.models || []).map((m) => {
    const label = `${m.name && m.name !== m.id ? m.name : m.id}${m.id === list.default ? ' (default)' : ''}`;
    const o = new Option(label, m.id);
    if (m.id === list.default) o.dataset.default = 'true';
    return o;
  });
  datalist.replaceChildren(...options);
}

// drawModelField says in the settings' model field, left empty, what the
// session's turns go to then: its default, once the session is read.
export function drawModelField(v) {
  const input = $('model');
  if (!input) return;
  input.placeholder = v.session.resolved_model && !v.session.model ? `${v.session.resolved_model} (default)` : 'the profile’s default';
}
