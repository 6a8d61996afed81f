// Pinned sessions (docs/protocol.md, "Pinned and archived sessions"): a
// person pins a session for themselves, on every device; the list shows
// what they pinned first, marked ★. The feed says which are pinned (its
// items' pinned, its first page holding them all), pushes included, so
// a pin made on another device shows here as it is made.

import { $ } from './dom.js';

// PIN_MARK marks a pinned session, in the list and on its pin button.
export const PIN_MARK = '★';

// pinMark is the list's mark of a pinned session, or nothing.
export function pinMark(v) {
  if (!v.pinned) return [];
  const el = document.createElement('span');
  el.className = 'pin';
  el.textContent = PIN_MARK;
  el.title = 'pinned: listed first';
  el.setAttribute('aria-label', 'pinned');
  return [el];
}

// drawPin says on the header's button whether v is pinned.
export function drawPin(v) {
  const b = $('pinbutton');
  if (!b) return; // a link's page: no one to pin for
  b.textContent = v.pinned ? `${PIN_MARK} unpin` : 'pin';
  b.title = v.pinned ? 'Unpin: list this session by its activity again' : 'Pin: list this session first, on all your devices';
  b.setAttribute('aria-pressed', String(!!v.pinned));
}

// wirePins pins or unpins the open session from its button. current() is
// the open session's view, act(what, fn) shows fn's error, and changed()
// redraws the list and the header.
export function wirePins({ api, act, current, changed }) {
  const b = $('pinbutton');
  if (!b) return;
  b.addEventListener('click', () => {
    const v = current();
    if (!v || v.pinning) return;
    const on = !v.pinned;
    v.pinning = true;
    act(on ? 'pin' : 'unpin', async () => {
      try {
        await (on ? api.pin(v.id) : api.unpin(v.id));
        v.pinned = on; // the feed's push says so too, here and elsewhere
      } catch (e) {
        if (e.code === 'too_many') throw new Error('you have pinned as many sessions as there may be: unpin one first');
        throw e;
      } finally {
        v.pinning = false;
        changed();
      }
    });
  });
}
