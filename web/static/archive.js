// Archived sessions (docs/protocol.md, "Pinned and archived sessions"):
// the session's creator or an admin archives it, and it leaves every
// list at once (this page's, and the others' by the feed, whose push
// names it once as archived); search still finds it. The "archived"
// button at the foot of the list shows the archived sessions instead
// (GET /v1/sessions?archived=true), each to open, and, for
// whoever may, to bring back.

import { $ } from './dom.js';

// ARCHIVED_MARK is what the list and the meta line say of an archived
// session that is open.
export const ARCHIVED_MARK = 'archived';

// archivedMark marks, in the list, an archived session opened from the
// archived ones or a search hit.
export function archivedMark(v) {
  if (!v.session.archived) return [];
  return [Object.assign(document.createElement('span'), { className: 'archived', textContent: ARCHIVED_MARK })];
}

// drawArchive offers archive or unarchive for v to whoever may change it
// (may: its creator, an admin).
export function drawArchive(v, may) {
  const b = $('archivebutton');
  if (!b) return;
  b.hidden = !may;
  b.textContent = v.session.archived ? 'unarchive' : 'archive';
  b.title = v.session.archived ? 'Bring this session back to the list' : 'Take this session off the list (search still finds it; “archived” under the list shows it)';
}

// wireArchive wires the header's button and the archived view.
// current() is the open session's view; setArchived(s, on) archives or
// brings back s (a view, or a session as listed) and resolves once the
// daemon did; act(what, fn) shows fn's error; open(id) opens a session;
// may(s) says whether this person may archive s; archivedSessions() reads
// the list of the archived (GET /v1/sessions?archived=true).
export function wireArchive({ current, setArchived, act, open, may, archivedSessions }) {
  const toggle = $('archivedtoggle');
  const list = $('archived');
  const b = $('archivebutton');
  if (b) {
    b.addEventListener('click', () => {
      const v = current();
      if (!v) return;
      act(v.session.archived ? 'unarchive' : 'archive', async () => {
        await setArchived(v, !v.session.archived);
        if (list && !list.hidden) await fill(); // the archived view, open, as it is now
      });
    });
  }
  if (!toggle) return;
  const show = (on) => {
    list.hidden = !on;
    $('sessions').hidden = on;
    $('hits').hidden = true;
    toggle.textContent = on ? '← sessions' : 'archived';
    toggle.setAttribute('aria-expanded', String(on));
  };
  async function fill() {
    list.replaceChildren(note('reading…'));
    const all = (await archivedSessions()).filter((s) => s.archived); // a daemon without the filter lists them all
    const items = all.map((s) => item(s, { open, may, unarchive: (li) => act('unarchive', async () => { await setArchived(s, false); li.remove(); if (!list.children.length) list.append(note('no archived session')); }) }));
    list.replaceChildren(...(items.length ? items : [note('no archived session')]));
  }
  toggle.addEventListener('click', () => {
    const on = list.hidden;
    show(on);
    if (on) act('archived sessions', fill);
  });
}

function note(text) {
  return Object.assign(document.createElement('li'), { className: 'note', textContent: text });
}

// item is one archived session: a button that opens it, and unarchive
// for whoever may.
function item(s, { open, may, unarchive }) {
  const li = document.createElement('li');
  li.dataset.session = s.id;
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'open';
  b.append(Object.assign(document.createElement('span'), { className: 'name', textContent: s.title || s.id.slice(-8) }));
  const at = Date.parse(s.updated_at);
  if (at) b.append(Object.assign(document.createElement('time'), { textContent: new Date(at).toLocaleDateString() }));
  b.addEventListener('click', () => open(s.id));
  li.append(b);
  if (may(s)) {
    const u = Object.assign(document.createElement('button'), { type: 'button', className: 'unarchive', textContent: 'unarchive' });
    u.title = `Bring “${s.title || s.id.slice(-8)}” back to the list`;
    u.addEventListener('click', () => unarchive(li));
    li.append(u);
  }
  return li;
}
