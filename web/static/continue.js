// A reply that was cut off, and its rest. A reply whose turn was
// interrupted, or failed after it said something, offers "continue" to
// those who may write, while the session is idle: the daemon runs its
// input again as a new turn whose message carries continues, the offset
// of the reply it goes on from. The transcript shows such a message as
// the rest of that reply: its text joined to the reply's, in the reply's
// element, the message's own element hidden; a page that reads the
// history later shows it the same way. A continuation whose reply is not
// in the transcript (older than what is shown) shows on its own, marked
// as a continuation. While the rest streams (its turn's started event
// carries continues too), the stream shows in the reply's element as well.

import { renderMarkdown } from './markdown.js';

// chains maps each shown message that others continue to the messages
// that go on from it, in order, from the view's events: root offset →
// [the root's event, its continuation, the continuation's, …].
function chains(events) {
  const byOffset = new Map();
  const rootOf = new Map(); // a message's offset → the offset of the reply it belongs to
  const out = new Map();
  for (const ev of events) {
    if (ev.type !== 'message') continue;
    byOffset.set(ev.offset, ev);
    if (!ev.continues || !byOffset.has(ev.continues)) continue;
    const root = rootOf.get(ev.continues) ?? ev.continues;
    rootOf.set(ev.offset, root);
    if (!out.has(root)) out.set(root, [byOffset.get(root)]);
    out.get(root).push(ev);
  }
  return out;
}

// cutNote is the header's note of a message in state.
export function cutNote(state) {
  return state === 'interrupted' ? '[interrupted]' : state === 'failed' ? '[failed]' : '';
}

// drawJoined shows, in the transcript tr, each continuation in v's events
// as the rest of the reply it goes on from.
export function drawJoined(tr, v) {
  // One whose reply left the transcript (trimmed) shows on its own again.
  for (const c of tr.querySelectorAll(':scope > article.msg[hidden][data-continues]')) {
    if (!tr.querySelector(`:scope > article.msg[data-offset="${c.dataset.continues}"]`)) c.hidden = false;
  }
  for (const [root, chain] of chains(v.events)) {
    const a = tr.querySelector(`:scope > article.msg[data-offset="${root}"]`);
    if (!a || a.dataset.streaming) continue; // its stream draws it (drawContinuing)
    const last = chain[chain.length - 1];
    if (a.dataset.joined === String(last.offset)) continue; // drawn so already
    a.dataset.joined = String(last.offset);
    a.dataset.state = last.state || 'complete';
    renderMarkdown(a.querySelector(':scope > .body'), chain.map((e) => e.text || '').join(''));
    setNote(a, cutNote(last.state) || '[continued]');
    for (const ev of chain.slice(1)) {
      const c = tr.querySelector(`:scope > article.msg[data-offset="${ev.offset}"]`);
      if (c) c.hidden = true;
    }
    // The lines that said a turn was cut off say it went on.
    for (const ev of chain.slice(0, -1)) {
      for (const d of tr.querySelectorAll(`:scope > .turn[data-turn-id="${ev.turn_id}"]`)) d.classList.add('continued');
    }
  }
}

// setNote sets the note in message element a's header ('' for none).
function setNote(a, said) {
  const note = a.querySelector(':scope > header > .note');
  if (note) note.textContent = said;
  else if (said) a.querySelector(':scope > header')?.append(Object.assign(document.createElement('span'), { className: 'note', textContent: said }));
}

// rootOf is the offset of the reply whose element shows the message at
// offset in v: the first of its chain of continuations.
function rootOf(v, offset) {
  return [...chains(v.events)].find(([, chain]) => chain.some((e) => e.offset === offset))?.[0] ?? offset;
}

// drawContinuing shows text, the stream of a turn that continues a reply
// (its started event's continues, v.continuing), as that reply's rest in
// the reply's element, as it will show once committed; false when the
// reply is not in the transcript (the stream then shows on its own).
export function drawContinuing(tr, v, text) {
  const root = rootOf(v, v.continuing.offset);
  const a = tr.querySelector(`:scope > article.msg[data-offset="${root}"]`);
  if (!a) return false;
  const chain = chains(v.events).get(root) || v.events.filter((e) => e.offset === root);
  a.dataset.streaming = v.continuing.turn;
  a.dataset.joined = ''; // drawn whole again once its rest is committed
  a.setAttribute('aria-busy', 'true');
  renderMarkdown(a.querySelector(':scope > .body'), chain.map((e) => e.text || '').join('') + text);
  setNote(a, '[continuing]');
  return true;
}

// endContinuing draws again from v's committed messages a reply that
// showed a stream as its rest, once that stream is over.
export function endContinuing(tr, v) {
  for (const a of tr.querySelectorAll(':scope > article.msg[data-streaming]')) {
    delete a.dataset.streaming;
    a.removeAttribute('aria-busy');
    const ev = v?.events.find((e) => e.offset === Number(a.dataset.offset));
    renderMarkdown(a.querySelector(':scope > .body'), ev?.text || '');
    setNote(a, cutNote(ev?.state));
  }
  if (v) drawJoined(tr, v); // the rest committed: the reply and its rest, whole
}

// newestCut is the message "continue" goes on from in v: its newest
// message, when it is a reply cut off that said something and no turn is
// on or queued; else null.
function newestCut(v) {
  const st = v.status || {};
  if (st.phase !== 'idle' || st.queued) return null;
  for (let i = v.events.length - 1; i >= 0; i--) {
    const ev = v.events[i];
    if (ev.type !== 'message') continue;
    const cut = ev.role === 'assistant' && (ev.state === 'interrupted' || ev.state === 'failed') && (ev.text || '').trim() !== '';
    return cut ? ev : null;
  }
  return null;
}

// drawContinue offers "continue" on v's newest reply in tr when it was
// cut off and may (the person may write in v) says so; elsewhere, none.
export function drawContinue(tr, v, may) {
  const ev = v && may ? newestCut(v) : null;
  let a = null;
  if (ev) a = tr.querySelector(`:scope > article.msg[data-offset="${rootOf(v, ev.offset)}"]`);
  for (const b of tr.querySelectorAll('.continue-bar')) if (!ev || b.parentNode !== a || b.dataset.from !== String(ev.offset)) b.remove();
  if (!a || a.querySelector(':scope > .continue-bar')) return;
  const bar = document.createElement('div');
  bar.className = 'continue-bar';
  bar.dataset.from = String(ev.offset);
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'continue';
  b.textContent = 'continue';
  b.title = 'Ask the model for the rest of this reply, which was cut off';
  bar.append(b);
  a.append(bar);
}

// wireContinue has the transcript's "continue" buttons ask the daemon
// for the rest of their reply. ctx: app, act(what, fn).
export function wireContinue(tr, ctx) {
  const { app, act } = ctx;
  tr.addEventListener('click', (e) => {
    const b = e.target.closest?.('.continue-bar button');
    const v = app.views.get(app.current);
    if (!b || !v) return;
    b.disabled = true;
    act('continue', async () => {
      try {
        await app.api.call('POST', `/v1/sessions/${encodeURIComponent(v.id)}/continue`);
      } finally {
        b.disabled = false;
      }
    });
  });
}
