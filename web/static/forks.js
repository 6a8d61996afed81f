// Forks and compaction on the page. Each message offers, on hover or
// focus, fork (a new session holding the history up to it: up to the end
// of its turn, for a reply), regenerate (a fork whose first turn runs the
// message's input again) and, on a user's message, edit (a fork just
// before it, its text and files in the composer to change and send); the original
// is left as it is. A fork's meta line says where it came from, with a
// jump there; "tree" lists its parent, its siblings at the fork point and
// its own forks. "compact" summarizes the older messages for the model.

import { $ } from './dom.js';
import * as uploads from './uploads.js';

// actionBar is the buttons of a message's element; mine says it is the
// page's own person's (edit is for your own messages only).
export function actionBar(ev, mine) {
  const bar = document.createElement('span');
  bar.className = 'msg-actions';
  const button = (act, label, title) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.act = act;
    b.textContent = label;
    b.title = title;
    bar.append(b);
  };
  button('fork', 'fork', 'A new session with the history up to here; this one stays as it is');
  if (ev.input_id && (ev.role === 'user' || ev.role === 'assistant')) {
    button('regenerate', 'regenerate', 'A fork whose model answers this input again');
  }
  if (ev.role === 'user' && mine) button('edit', 'edit', 'A fork just before this message, its text in the composer');
  return bar;
}

// wholeTurn is where a fork at ev goes: at a reply, the close of its turn
// when the view holds it, so that the fork keeps the turn whole.
function wholeTurn(v, ev) {
  if (ev.role !== 'assistant' || !ev.turn_id) return ev.offset;
  const end = v.events.find((e) => e.offset > ev.offset && e.type === 'turn' && e.turn_id === ev.turn_id && e.state !== 'started');
  return end ? end.offset : ev.offset;
}

// wireForks wires the transcript's message actions and the tree and
// compact buttons. ctx gives what the page's views hold: app, act,
// open(id, offset?), notice.
export function wireForks(ctx) {
  const { app, act, open } = ctx;
  const fork = (v, body, draft) => act('fork', async () => {
    const s = await app.api.call('POST', `/v1/sessions/${encodeURIComponent(v.id)}/fork`, { body }).then((r) => r.data);
    await open(s.id);
    if (draft !== undefined) {
      const input = $('input');
      input.value = draft.text || '';
      input.focus();
      if (draft.attachments && draft.attachments.length) await uploads.carry(draft.attachments);
    }
    ctx.notice(`a fork of “${v.name}” at #${s.parent.offset}: the original is as it was`);
  });
  $('transcript').addEventListener('click', (e) => {
    const b = e.target.closest?.('.msg-actions button');
    if (!b) return;
    const v = app.views.get(app.current);
    const offset = Number(b.closest('article').dataset.offset);
    const ev = v?.events.find((x) => x.offset === offset);
    if (!ev) return;
    if (b.dataset.act === 'fork') fork(v, { at: wholeTurn(v, ev) });
    else if (b.dataset.act === 'regenerate') fork(v, { at: ev.offset, rerun: true });
    else fork(v, { at: ev.offset - 1 }, ev);
  });
  $('parent').addEventListener('click', () => {
    const p = app.views.get(app.current)?.session.parent;
    if (p) act('parent', () => open(p.session, p.offset));
  });
  $('compact').addEventListener('click', () => {
    const v = app.views.get(app.current);
    if (v) act('compact', async () => {
      const ev = await app.api.call('POST', `/v1/sessions/${encodeURIComponent(v.id)}/compact`).then((r) => r.data);
      ctx.notice(`compacted messages #${ev.from}–#${ev.to} into a summary for the model`);
    });
  });
  const list = $('tree');
  $('treebutton').addEventListener('click', () => {
    if (!list.hidden) {
      list.hidden = true;
      return;
    }
    const v = app.views.get(app.current);
    if (v) act('tree', () => drawTree(app, v, list, open));
  });
}

// drawTree lists the session's parent at its fork point, its siblings
// there, and its own forks, each a button that opens it.
async function drawTree(app, v, list, open) {
  const get = (id) => app.api.call('GET', `/v1/sessions/${encodeURIComponent(id)}`).then((r) => r.data);
  const forks = (id) => app.api.call('GET', `/v1/sessions/${encodeURIComponent(id)}/forks`).then((r) => r.data.forks);
  const items = [];
  const p = v.session.parent;
  if (p) {
    const parent = await get(p.session).catch(() => null);
    items.push([parent ? parent.title || parent.id : `${p.session} (deleted)`, `parent, at #${p.offset}`, parent && p.session, p.offset]);
    for (const s of await forks(p.session).catch(() => [])) {
      if (s.id !== v.id && s.parent.offset === p.offset) items.push([s.title || s.id, `sibling at #${p.offset}`, s.id]);
    }
  }
  for (const s of await forks(v.id)) items.push([s.title || s.id, `fork at #${s.parent.offset}`, s.id, s.parent.offset]);
  if (app.current !== v.id) return; // another session was opened meanwhile
  list.replaceChildren();
  if (!items.length) list.append(Object.assign(document.createElement('li'), { textContent: 'no parent and no forks' }));
  for (const [name, what, id, offset] of items) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = `${name} · ${what}`;
    b.disabled = !id;
    b.addEventListener('click', () => { list.hidden = true; open(id, offset); });
    li.append(b);
    list.append(li);
  }
  list.hidden = false;
}

// originText is a fork's word on where it came from, for the meta line.
export function originText(app, v) {
  const p = v.session.parent;
  if (!p) return '';
  const parent = app.views.get(p.session);
  return `← ${parent ? parent.name : p.session.slice(-8)} #${p.offset}`;
}
