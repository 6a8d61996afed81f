// Files in the transcript (docs/protocol.md, "Files"): what a message, or
// a tool's result, carries. Images (PNG, JPEG, GIF, WebP) show inline, as
// wide as the column at most, and open full size on a click (Esc, ✕ or a
// click beside it closes them); any other file is a card (name, type,
// size) that downloads on a click.
//
// A blob is read with the page's token in Authorization (GET
// /v1/blobs/{sha256}), never with a token in a URL: what the page shows
// comes from a blob: URL it made of bytes it fetched itself (the
// Content-Security-Policy allows blob: images for that, and nothing a
// message names), and the URL is revoked once nothing on the page shows
// it. Images are fetched as they come near the transcript's view, so a
// long history costs what is looked at, not all it holds.

import { $ } from './dom.js';
import { icon } from './icons.js';

// IMAGE_TYPES are the types shown inline: those every browser draws and
// that run nothing. Any other file is a download.
export const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

const SHA256 = /^[0-9a-f]{64}$/;

// ctx is what the page gives: token() (the bearer of HTTP calls now, ''
// while not connected).
let ctx = { token: () => '' };

// images holds the object URLs of the images shown: sha256 → {url,
// promise, els} (the <img> elements that show it; once none is on the
// page, the URL is revoked).
const images = new Map();
let near = null; // IntersectionObserver: an image is fetched as it comes near the view
const waiting = new Set(); // the images observed, not yet fetched
let sweepTimer = 0;

// wireFiles wires what files need: the lazy loading and the revoking of
// what the transcript no longer shows.
export function wireFiles(c) {
  ctx = c;
  const tr = $('transcript');
  near = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      near.unobserve(e.target);
      waiting.delete(e.target);
      showImage(e.target);
    }
  }, { root: tr, rootMargin: '800px 0px' });
  new MutationObserver((muts) => {
    if (muts.some((m) => m.removedNodes.length)) sweepSoon();
  }).observe(tr, { childList: true, subtree: true });
}

// retryFailed fetches again the images that failed while the page was not
// connected: called once it is again.
export function retryFailed() {
  for (const b of document.querySelectorAll('#transcript .file-image[data-state="failed"][data-retry]')) showImage(b);
}

// humanSize is n bytes as people read it: 812 B, 14.2 KiB, 3.1 MiB.
export function humanSize(n) {
  if (!(n >= 0)) return '';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

// attachmentsElement is the files of a message or a tool's result.
export function attachmentsElement(list) {
  const box = document.createElement('div');
  box.className = 'attachments';
  for (const a of list) {
    if (!a || !SHA256.test(a.sha256 || '')) continue;
    box.append(IMAGE_TYPES.has(baseType(a.mime)) ? imageElement(a) : cardElement(a));
  }
  return box;
}

// baseType is a type without its parameters: text/plain for
// "text/plain; charset=utf-8".
function baseType(mime) {
  return (mime || '').split(';')[0].trim().toLowerCase();
}

// attachmentsText is the files as a line of text, for screen readers and
// the outbox: "2 files: a.png, notes.txt".
export function attachmentsText(list) {
  const names = list.map((a) => a.name || a.sha256.slice(0, 12));
  return `${names.length} file${names.length === 1 ? '' : 's'}: ${names.join(', ')}`;
}

function imageElement(a) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'file-image';
  b.dataset.sha256 = a.sha256;
  b.dataset.state = 'waiting';
  b.title = `${a.name} · ${humanSize(a.size)}: click for full size`;
  b.setAttribute('aria-label', `image ${a.name}, ${humanSize(a.size)}: open full size`);
  b.file = a;
  const img = document.createElement('img');
  img.alt = a.name || 'image';
  img.decoding = 'async';
  const note = Object.assign(document.createElement('span'), { className: 'file-note', textContent: `${a.name} · loading…` });
  b.append(img, note);
  b.addEventListener('click', () => {
    if (b.dataset.state === 'failed') showImage(b);
    else if (b.dataset.state === 'shown') openFull(b);
  });
  waiting.add(b);
  near.observe(b);
  return b;
}

// showImage fetches an image's bytes (once for every element that shows
// them) and shows them.
async function showImage(b) {
  const a = b.file;
  const img = b.querySelector('img');
  const note = b.querySelector('.file-note');
  b.dataset.state = 'loading';
  delete b.dataset.retry;
  note.textContent = `${a.name} · loading…`;
  try {
    const url = await imageURL(a, img);
    await new Promise((resolve, reject) => {
      img.onload = resolve;
      img.onerror = () => reject(new Error('not an image this browser draws'));
      img.src = url;
    });
    b.dataset.state = 'shown';
    note.textContent = '';
  } catch (e) {
    b.dataset.state = 'failed';
    if (e.code === 'unavailable') b.dataset.retry = '1'; // again once connected
    note.textContent = `${a.name}: ${e.message} (click to try again)`;
    img.removeAttribute('src');
    sweepSoon();
  }
}

// imageURL is the object URL of an image's bytes, fetched once for all
// the elements that show it; el is one of them.
function imageURL(a, el) {
  let e = images.get(a.sha256);
  if (!e) {
    e = { url: '', els: new Set() };
    e.promise = fetchBlob(a, baseType(a.mime)).then((blob) => {
      e.url = URL.createObjectURL(blob);
      sweepSoon(); // if nothing shows it by now
      return e.url;
    });
    e.promise.catch(() => {
      if (images.get(a.sha256) === e) images.delete(a.sha256);
    });
    images.set(a.sha256, e);
  }
  e.els.add(el);
  return e.promise;
}

// thumbnail is an object URL of an attachment's image, for a chip: ""
// for another type, or when it cannot be read. The caller revokes it.
export async function thumbnail(a) {
  if (!IMAGE_TYPES.has(baseType(a.mime))) return '';
  try {
    return URL.createObjectURL(await fetchBlob(a, baseType(a.mime)));
  } catch {
    return '';
  }
}

// fetchBlob reads a blob with the page's token, as a Blob of type (the
// page says what it is: an image of a type it shows, or bytes to save).
async function fetchBlob(a, type) {
  const token = ctx.token();
  const unavailable = (message) => Object.assign(new Error(message), { code: 'unavailable' });
  if (!token) throw unavailable('not connected to the daemon');
  const q = a.name ? `?name=${encodeURIComponent(a.name)}` : '';
  let r;
  try {
    r = await fetch(`/v1/blobs/${a.sha256}${q}`, { headers: { Authorization: `Bearer ${token}` } });
  } catch {
    throw unavailable('the daemon did not answer');
  }
  if (!r.ok) {
    let message = r.statusText || `status ${r.status}`;
    try {
      const d = await r.json();
      if (d && d.error && d.error.message) message = d.error.message;
    } catch {
      // no JSON: the status says it
    }
    const e = new Error(message);
    if (r.status === 401 || r.status >= 500) e.code = 'unavailable'; // a token of a daemon gone, a store down
    throw e;
  }
  const blob = await r.blob();
  return blob.slice(0, blob.size, type);
}

// sweepSoon revokes, a second from now, the URLs of images nothing on
// the page shows any more (a session closed, old messages trimmed).
function sweepSoon() {
  if (!sweepTimer) sweepTimer = setTimeout(sweep, 1000);
}

function sweep() {
  sweepTimer = 0;
  for (const [sum, e] of images) {
    for (const el of e.els) if (!el.isConnected) e.els.delete(el);
    if (e.els.size === 0 && e.url) {
      URL.revokeObjectURL(e.url);
      images.delete(sum);
    }
  }
  for (const b of waiting) {
    if (!b.isConnected) {
      near.unobserve(b);
      waiting.delete(b);
    }
  }
}

// openFull shows an image full size over the page, fitted to the window
// if larger; Esc, ✕ or a click beside it closes it.
function openFull(b) {
  const a = b.file;
  const e = images.get(a.sha256);
  if (!e || !e.url) return;
  const d = document.createElement('dialog');
  d.className = 'lightbox';
  d.setAttribute('aria-label', a.name);
  const img = document.createElement('img');
  img.src = e.url;
  img.alt = a.name;
  e.els.add(img);
  // A click on an image drawn smaller than it is shows its every pixel
  // (and back); on one drawn whole, it closes it.
  const scaled = () => img.naturalWidth > img.clientWidth + 1 || img.naturalHeight > img.clientHeight + 1;
  img.addEventListener('load', () => d.classList.toggle('scaled', scaled()));
  img.addEventListener('click', () => {
    if (d.classList.contains('natural') || scaled()) d.classList.toggle('natural');
    else d.close();
  });
  const bar = document.createElement('div');
  bar.className = 'lightbox-bar';
  const name = Object.assign(document.createElement('span'), { className: 'file-name', textContent: `${a.name} · ${humanSize(a.size)}` });
  const tab = Object.assign(document.createElement('a'), { href: e.url, target: '_blank', rel: 'noopener', textContent: 'open in a new tab' });
  const save = Object.assign(document.createElement('a'), { href: e.url, download: a.name || 'image', textContent: 'download' });
  const close = Object.assign(document.createElement('button'), { type: 'button', className: 'close', textContent: '✕', title: 'Close (Esc)' });
  close.setAttribute('aria-label', 'Close the image');
  close.addEventListener('click', () => d.close());
  bar.append(name, tab, save, close);
  d.append(bar, img);
  // Esc closes the image, and goes no further: on the page it would stop
  // the running reply.
  d.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape') return;
    ev.preventDefault();
    ev.stopPropagation();
    d.close();
  });
  d.addEventListener('click', (ev) => {
    if (ev.target === d) d.close(); // the backdrop
  });
  d.addEventListener('close', () => {
    d.remove();
    sweepSoon();
    if (b.isConnected) b.focus();
  });
  document.body.append(d);
  d.showModal();
  close.focus();
}

function cardElement(a) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'file-card';
  b.dataset.sha256 = a.sha256;
  b.title = `Download ${a.name}`;
  const text = document.createElement('span');
  text.className = 'file-text';
  const name = Object.assign(document.createElement('span'), { className: 'file-name', textContent: a.name || a.sha256.slice(0, 12) });
  const type = baseType(a.mime) || 'unknown type';
  const meta = Object.assign(document.createElement('span'), { className: 'file-meta', textContent: `${type} · ${humanSize(a.size)}` });
  const note = Object.assign(document.createElement('span'), { className: 'file-note' });
  text.append(name, meta, note);
  b.append(icon('file'), text);
  b.setAttribute('aria-label', `file ${a.name}, ${type}, ${humanSize(a.size)}: download`);
  b.addEventListener('click', () => download(a, b));
  return b;
}

// download saves a file: its bytes fetched with the token, handed to the
// browser through a temporary link.
async function download(a, b) {
  if (b.dataset.state === 'loading') return;
  const note = b.querySelector('.file-note');
  b.dataset.state = 'loading';
  note.textContent = 'downloading…';
  try {
    saveBlob(await fetchBlob(a, 'application/octet-stream'), a.name || a.sha256.slice(0, 12));
    delete b.dataset.state;
    note.textContent = '';
  } catch (e) {
    b.dataset.state = 'failed';
    note.textContent = `download failed: ${e.message}`;
  }
}

function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = Object.assign(document.createElement('a'), { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its bytes by then; the URL is no use to anything else.
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}
