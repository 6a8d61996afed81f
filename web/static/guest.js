// The name a write link's holder (an alguest_ token) goes by: asked for
// in the page, once per link, and remembered for that link on this
// browser (localStorage, under a hash of the link's token, never the
// token itself). The daemon may refuse a name (a member's, say): the
// page asks again, with its reason.

import { $ } from './dom.js';

const PREFIX = 'albedo.guest.';

// isGuest says whether token is a write link's.
export function isGuest(token) {
  return token.startsWith('alguest_');
}

// keyOf is where the name for token's link is kept: SHA-256 where the
// page may hash (https, or the daemon's own machine), else a short
// FNV-1a, which tells as little of the token.
async function keyOf(token) {
  const bytes = new TextEncoder().encode(token);
  if (crypto.subtle) {
    const sum = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    return PREFIX + [...sum.slice(0, 16)].map((b) => b.toString(16).padStart(2, '0')).join('');
  }
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return `${PREFIX}fnv-${h.toString(16)}`;
}

// guestName is the name to say hello with: offered (a link's #name=),
// else the one remembered for the link, else asked for in the page. ''
// for a token that is no guest's: others' names are their tokens'.
export async function guestName(token, offered = '') {
  if (!isGuest(token)) return '';
  return offered || localStorage.getItem(await keyOf(token)) || askName('');
}

// rememberName keeps name for token's link, once the daemon took it.
export async function rememberName(token, name) {
  if (isGuest(token) && name) localStorage.setItem(await keyOf(token), name);
}

// askName shows the form, saying why (the daemon's refusal of the name
// before, or nothing), and resolves with the name typed.
export function askName(why) {
  const form = $('guestform');
  const input = $('guestname');
  $('guesterror').textContent = why;
  form.hidden = false;
  input.focus();
  input.select();
  return new Promise((resolve) => {
    form.onsubmit = (e) => {
      e.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      form.hidden = true;
      form.onsubmit = null;
      resolve(name);
    };
  });
}
