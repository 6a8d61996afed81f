// A message's versions, inline: a message that was edited or regenerated
// shows ‹ i/n › beside it, whose arrows open its other versions in place.
// Versions are forks (docs/protocol.md, "Forks"). For the session S shown
// and a fork point p, the origin is S's parent when S was forked at p,
// else S; the versions at p are the origin, then the origin's forks at p
// in the order the daemon lists them. The switch is on the first message
// after p: an edit's message (a fork at the event before it), a
// regenerated reply (a fork at the input it answers again).
//
// An origin's forks are read when its session opens, and again when the
// feed shows a fork of it the page did not know of (a fork made here
// opens, and the feed shows it too): never once per message.

import { $ } from './dom.js';

// known holds the forks read, by origin ({forks, read, busy, again}):
// only the open session's origins, the session and its parent.
const known = new Map();
let ctx = null; // wireVersions's
let focusNext = null; // {session, p, go}: a switch made from the keyboard keeps the focus on its arrows
const shown = new WeakMap(); // a switch's element → its versions ({p, ids, i})

// origins are the sessions whose forks give v's versions.
function origins(v) {
  const up = v.session.parent;
  return up ? [v.id, up.session] : [v.id];
}

// readForks reads origin's forks, one read at a time: asked while one is
// on, it reads again once that is done. A read that fails leaves the
// forks as they were (a parent the person may not read has none).
async function readForks(origin) {
  let k = known.get(origin);
  if (!k) known.set(origin, (k = { forks: [], read: false, busy: false, again: false }));
  if (k.busy) {
    k.again = true;
    return;
  }
  k.busy = true;
  do {
    k.again = false;
    try {
      k.forks = await ctx.app.api.forks(origin);
      k.read = true;
    } catch {
      // no versions from it
    }
  } while (k.again);
  k.busy = false;
  const v = ctx.app.views.get(ctx.app.current);
  if (v && known.get(origin) === k && origins(v).includes(origin)) {
    v.versions = null;
    drawVersions(v);
  }
}

// versionsOpened reads the versions of the session just opened.
export function versionsOpened(v) {
  if (!ctx || !ctx.app.person) return; // a link's one session has no versions to open
  if (focusNext && focusNext.session !== v.id) focusNext = null;
  const want = origins(v);
  for (const id of [...known.keys()]) if (!want.includes(id)) known.delete(id);
  v.versions = null;
  for (const id of want) readForks(id);
}

// versionsFeed reads an origin's forks again when the feed shows a fork
// of it not among them, or one of them gone.
export function versionsFeed(items, gone) {
  for (const [origin, k] of known) {
    const ids = new Set(k.forks.map((s) => s.id));
    const fresh = items.some((it) => it.parent && it.parent.session === origin && !ids.has(it.id));
    if (fresh || gone.some((id) => ids.has(id))) readForks(origin);
  }
}

// points are v's fork points that have versions: p → the versions' ids.
function points(v) {
  const out = new Map();
  const up = v.session.parent;
  for (const s of known.get(v.id)?.forks || []) {
    const p = s.parent.offset;
    if (up && p === up.offset) continue; // there, the versions are the parent's
    if (!out.has(p)) out.set(p, [v.id]);
    out.get(p).push(s.id);
  }
  const parent = up && known.get(up.session);
  if (parent?.read) {
    const ids = [up.session, ...parent.forks.filter((s) => s.parent.offset === up.offset).map((s) => s.id)];
    if (!ids.includes(v.id)) ids.push(v.id);
    out.set(up.offset, ids);
  }
  for (const [p, ids] of out) if (ids.length < 2) out.delete(p);
  return out;
}

// firstAfter is the offset of v's first message after p, once v's events
// read reach back to p; undefined while they do not, or none is there.
export function firstAfter(v, p) {
  const evs = v?.events || [];
  if (!evs.length || (evs[0].offset > p + 1 && v.more)) return undefined;
  return evs.find((e) => e.offset > p && e.type === 'message')?.offset;
}

// targets maps the offset of each message that has versions to them:
// {p, ids, i}. Points and events are walked together, in order: a point's
// first message is never before an earlier point's.
function targets(v) {
  if (!v.versions) v.versions = points(v);
  const out = new Map();
  const evs = v.events;
  let j = 0;
  for (const p of [...v.versions.keys()].sort((a, b) => a - b)) {
    if (!evs.length || (evs[0].offset > p + 1 && v.more)) continue; // what follows p is not read yet
    while (j < evs.length && (evs[j].offset <= p || evs[j].type !== 'message')) j++;
    if (j === evs.length) break;
    const ids = v.versions.get(p);
    if (!out.has(evs[j].offset)) out.set(evs[j].offset, { p, ids, i: ids.indexOf(v.id) });
  }
  return out;
}

// drawVersions puts the switches on the open session's messages that
// have versions, and takes them off those that no longer do.
export function drawVersions(v) {
  if (!ctx || !v || v.id !== ctx.app.current) return;
  const at = targets(v);
  const tr = $('transcript');
  for (const el of tr.querySelectorAll(':scope > article > header > .versions')) {
    const w = at.get(Number(el.closest('article').dataset.offset));
    if (!w || el.dataset.key !== key(w)) el.remove();
  }
  for (const [offset, w] of at) {
    const a = tr.querySelector(`:scope > article.msg[data-offset="${offset}"]`);
    const h = a?.querySelector(':scope > header');
    if (!h || h.querySelector(':scope > .versions')) continue;
    const el = switcher(w);
    h.insertBefore(el, h.querySelector(':scope > .msg-actions'));
    // The arrow pressed went with the transcript it was in: the focus
    // goes to its like here, unless the person has moved it since.
    if (focusNext && focusNext.session === v.id && focusNext.p === w.p) {
      const b = el.querySelector(`[data-go=${focusNext.go}]`);
      const free = !document.activeElement || document.activeElement === document.body;
      if (free) (b.disabled ? el.querySelector('button:not([disabled])') : b)?.focus({ preventScroll: true });
      focusNext = null;
    }
  }
}

function key(w) {
  return `${w.p}:${w.i}:${w.ids.join(',')}`;
}

// switcher is ‹ i/n ›: the arrows open the version before and after.
function switcher(w) {
  const n = w.ids.length;
  const g = document.createElement('span');
  g.className = 'versions';
  g.setAttribute('role', 'group');
  g.setAttribute('aria-label', `version ${w.i + 1} of ${n}`);
  g.dataset.key = key(w);
  shown.set(g, w);
  const arrow = (go, text, label, to) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.go = go;
    b.textContent = text;
    b.title = label;
    b.setAttribute('aria-label', label);
    b.disabled = to < 0 || to >= n;
    return b;
  };
  const of = Object.assign(document.createElement('span'), { className: 'of', textContent: `${w.i + 1}/${n}` });
  of.setAttribute('aria-hidden', 'true'); // the group's label says it
  g.append(arrow('prev', '‹', 'previous version', w.i - 1), of, arrow('next', '›', 'next version', w.i + 1));
  return g;
}

// wireVersions wires the switches. c gives app, act, open(id) and
// reveal(id, p): show the first message after p.
export function wireVersions(c) {
  ctx = c;
  $('transcript').addEventListener('click', (e) => {
    const b = e.target.closest?.('.versions button');
    if (!b || b.disabled) return;
    const w = shown.get(b.closest('.versions'));
    const id = w?.ids[w.i + (b.dataset.go === 'next' ? 1 : -1)];
    if (!id) return;
    const { p } = w;
    if (document.activeElement === b) focusNext = { session: id, p, go: b.dataset.go };
    c.act('open the version', async () => {
      await c.open(id);
      await c.reveal(id, p);
    });
  });
}
