// Search across sessions on the page: a box over the session list; Enter
// asks the daemon (GET /v1/search), the hits take the list's place, newest
// first, each with its session, author, time and the words around the
// match (marked); choosing one opens its session at that message, reading
// older history back to it. Esc, or emptying the box, brings the list
// back.

import { $ } from './dom.js';

// MATCH_START and MATCH_END mark a match in a hit's text (db.MatchStart).
const MATCH_START = '«';
const MATCH_END = '»';

// wireSearch wires the box. open(session, offset) opens a hit; act(what,
// fn) runs fn, showing its error.
export function wireSearch(api, { open, act }) {
  const input = $('search');
  const list = $('hits');
  const show = (on) => {
    if (on && $('archived') && !$('archived').hidden) $('archivedtoggle').click(); // the hits take the archived view's place too
    list.hidden = !on;
    $('sessions').hidden = on;
  };
  $('searchform').addEventListener('submit', (e) => {
    e.preventDefault();
    const q = input.value.trim();
    if (!q) {
      show(false);
      return;
    }
    act('search', async () => {
      list.replaceChildren(Object.assign(document.createElement('li'), { className: 'note', textContent: 'searching…' }));
      show(true);
      const res = await api.search(q);
      list.replaceChildren(...(res.results.length ? res.results.map((r) => hit(r, open)) : [Object.assign(document.createElement('li'), { className: 'note', textContent: `nothing found for ${q}` })]));
    });
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      input.value = '';
      show(false);
    }
  });
  input.addEventListener('input', () => { if (!input.value) show(false); });
}

// hit is one result as a button: the session's title, the author and
// time, and the text with its matches in <mark> (built as text nodes:
// nothing of a message is parsed as HTML).
function hit(r, open) {
  const li = document.createElement('li');
  li.dataset.session = r.session;
  li.dataset.offset = r.offset;
  const b = document.createElement('button');
  b.type = 'button';
  const head = document.createElement('span');
  head.className = 'head';
  head.textContent = `${r.title || r.session.slice(-8)} · ${r.author || r.role} · ${new Date(r.at).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' })}`;
  const text = document.createElement('span');
  text.className = 'text';
  for (const [i, part] of r.text.split(MATCH_START).entries()) {
    if (i === 0) {
      text.append(part);
      continue;
    }
    const [match, rest = ''] = part.split(MATCH_END);
    text.append(Object.assign(document.createElement('mark'), { textContent: match }), rest);
  }
  b.append(head, text);
  b.addEventListener('click', () => open(r.session, r.offset));
  li.append(b);
  return li;
}
