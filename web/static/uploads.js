// The composer's files (docs/protocol.md, "Files"): attached with the
// button (a file picker), by a drop on the page, or by pasting an image
// (a screenshot); each is a chip over the box (a thumbnail for an image,
// else its name and size) with its progress, its error if it failed, and
// a button that takes it off.
//
// A file is uploaded as soon as it is attached: hashed in the browser
// (crypto.subtle, which exists only in a secure context: https, or the
// page on this machine), asked for (HEAD /v1/blobs/{sha256}: the store may
// hold it for us already) and, if not, put (PUT, through XMLHttpRequest,
// the one that tells an upload's progress), with the page's token in
// Authorization. The message then names the files by hash; the page sends
// it once every upload is done (app.js).

import { $ } from './dom.js';
import { humanSize, IMAGE_TYPES, thumbnail } from './files.js';
import { icon } from './icons.js';

// MAX_FILES is how many files a message carries (wire.MaxAttachments).
export const MAX_FILES = 16;
// MAX_NAME is the byte length of an attachment's name (wire.MaxAttachmentName).
const MAX_NAME = 255;
// MAX_HASHED is the largest file the page hashes: hashing holds the whole
// file in memory (crypto.subtle takes no stream). The daemon takes 20 MiB
// unless its operator says otherwise.
const MAX_HASHED = 1 << 30;

// ctx is what the page gives: token() (the bearer of HTTP calls now),
// notice(text, error), changed() (the files or their states changed).
let ctx = null;
const items = []; // the files attached, in order: see attach
let nextID = 1;
let settledWaiters = [];

// wireUploads wires the attach button, the file picker, paste into the
// composer and drops on the page.
export function wireUploads(c) {
  ctx = c;
  const input = $('input');
  const picker = $('files');
  $('attach').prepend(icon('clip'));
  $('attach').addEventListener('click', () => {
    if (!mayAttach()) return;
    picker.click();
  });
  picker.addEventListener('change', () => {
    add([...picker.files]);
    picker.value = ''; // the same file may be picked again
  });
  // A pasted image (a screenshot) is attached; a paste that holds text
  // too (cells of a spreadsheet, a part of a page) pastes that text.
  $('composer').addEventListener('paste', (e) => {
    const dt = e.clipboardData;
    if (!dt || !dt.files || dt.files.length === 0 || [...dt.types].includes('text/plain')) return;
    e.preventDefault();
    add([...dt.files].map(pasted));
  });
  // Files dropped on the transcript or the composer (the session's half
  // of the page) are attached; dropped anywhere else, they are not opened
  // in place of the page.
  const main = $('main');
  const carriesFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
  const dropping = (on) => $('composer').classList.toggle('dropping', on);
  document.addEventListener('dragover', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    const here = main.contains(e.target) && !input.disabled;
    e.dataTransfer.dropEffect = here ? 'copy' : 'none';
    dropping(here);
  });
  document.addEventListener('dragleave', (e) => {
    if (!e.relatedTarget) dropping(false); // out of the window
  });
  document.addEventListener('dragend', () => dropping(false));
  document.addEventListener('drop', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    dropping(false);
    if (main.contains(e.target)) add([...e.dataTransfer.files]);
  });
}

// mayAttach says whether files may be attached now, and why not if not.
function mayAttach() {
  if ($('input').disabled) {
    ctx.notice('read-only: you may watch this session, not write in it', true);
    return false;
  }
  if (!globalThis.crypto || !crypto.subtle) {
    ctx.notice('Attaching files needs https, or this page opened on the daemon\'s own machine (http://127.0.0.1 or localhost): over plain http the browser does not let the page hash files.', true);
    return false;
  }
  return true;
}

// pasted is a pasted image, named as a screenshot (a browser calls each
// one image.png), once in the composer.
function pasted(f) {
  if (!f.type.startsWith('image/')) return f;
  const ext = { 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' }[f.type] || 'png';
  let name = `screenshot.${ext}`;
  for (let n = 2; items.some((it) => it.name === name); n++) name = `screenshot-${n}.${ext}`;
  return new File([f], name, { type: f.type, lastModified: f.lastModified });
}

// add attaches files, up to MAX_FILES in all, and starts their uploads.
function add(files) {
  if (files.length === 0 || !mayAttach()) return;
  const room = MAX_FILES - items.length;
  if (files.length > room) {
    ctx.notice(`A message carries at most ${MAX_FILES} files: ${files.length - Math.max(room, 0)} not attached.`, true);
  }
  for (const file of files.slice(0, Math.max(room, 0))) {
    const it = {
      id: nextID++,
      file,
      name: cleanName(file.name),
      size: file.size,
      thumb: IMAGE_TYPES.has(file.type) ? URL.createObjectURL(file) : '',
      state: 'hashing', // then uploading, done, failed
      sha256: '',
      loaded: 0,
      error: '',
      xhr: null,
      el: null,
      gone: false,
    };
    items.push(it);
    draw();
    upload(it);
  }
}

// carry attaches files a message carries already (an edited message's,
// in its fork): the store holds them, so there is nothing to upload; an
// image gets its thumbnail from the store.
export async function carry(list) {
  const thumbs = await Promise.all(list.map(thumbnail));
  list.forEach((a, i) => {
    if (items.length >= MAX_FILES || items.some((o) => o.sha256 === a.sha256)) {
      if (thumbs[i]) URL.revokeObjectURL(thumbs[i]);
      return;
    }
    items.push({
      id: nextID++, file: null, name: a.name, size: a.size, thumb: thumbs[i], state: 'done', sha256: a.sha256,
      loaded: a.size, error: '', xhr: null, el: null, gone: false,
    });
  });
  draw();
  settle();
}

// upload hashes a file, asks whether the store holds it for us and, if
// not, puts it.
async function upload(it) {
  it.state = 'hashing';
  it.error = '';
  it.loaded = 0;
  paint(it);
  try {
    if (it.size > MAX_HASHED) throw new Error(`${humanSize(it.size)}: larger than the page can hash (${humanSize(MAX_HASHED)})`);
    if (!it.sha256) {
      const sum = await crypto.subtle.digest('SHA-256', await it.file.arrayBuffer());
      it.sha256 = [...new Uint8Array(sum)].map((b) => b.toString(16).padStart(2, '0')).join('');
    }
    if (it.gone) return;
    if (items.some((o) => o !== it && o.sha256 === it.sha256)) {
      ctx.notice(`${it.name} is attached already`);
      remove(it);
      return;
    }
    it.state = 'uploading';
    paint(it);
    const token = ctx.token();
    if (!token) throw new Error('not connected to the daemon: try again once it is back');
    const head = await fetch(`/v1/blobs/${it.sha256}`, { method: 'HEAD', headers: { Authorization: `Bearer ${token}` } });
    if (head.status === 401) throw new Error('the daemon refused the page\'s token: try again');
    if (!head.ok && head.status !== 404) throw new Error(`the daemon answered ${head.status}`);
    if (!head.ok) await put(it, token);
    if (it.gone) return;
    it.state = 'done';
    it.loaded = it.size;
  } catch (e) {
    if (it.gone) return;
    it.state = 'failed';
    it.error = e.message || String(e);
  }
  paint(it);
  settle();
}

// put uploads a file's bytes, with its progress.
function put(it, token) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    it.xhr = xhr;
    xhr.open('PUT', `/v1/blobs/${it.sha256}`);
    xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (e) => {
      it.loaded = e.loaded;
      paint(it);
    };
    xhr.onload = () => {
      it.xhr = null;
      if (xhr.status === 200 || xhr.status === 201) {
        resolve();
        return;
      }
      let message = `the daemon answered ${xhr.status}`;
      try {
        const d = JSON.parse(xhr.responseText);
        if (d && d.error && d.error.message) message = d.error.message;
      } catch {
        // no JSON: the status says it
      }
      reject(new Error(message));
    };
    xhr.onerror = () => {
      it.xhr = null;
      reject(new Error('the upload was cut off: the daemon went away, or refused a file this large'));
    };
    xhr.onabort = () => {
      it.xhr = null;
      reject(new Error('cancelled'));
    };
    xhr.send(it.file);
  });
}

function remove(it) {
  it.gone = true;
  if (it.xhr) it.xhr.abort();
  if (it.thumb) URL.revokeObjectURL(it.thumb);
  const i = items.indexOf(it);
  if (i >= 0) items.splice(i, 1);
  draw();
  settle();
}

// settle tells those who wait for the uploads once none runs.
function settle() {
  if (busy()) return;
  const ok = !failed();
  const w = settledWaiters;
  settledWaiters = [];
  for (const resolve of w) resolve(ok);
  ctx.changed();
}

// count is how many files are attached.
export function count() {
  return items.length;
}

// busy says whether a file is being hashed or uploaded.
export function busy() {
  return items.some((it) => it.state === 'hashing' || it.state === 'uploading');
}

// failed says whether a file failed to upload (its chip says why).
export function failed() {
  return items.some((it) => it.state === 'failed');
}

// settled resolves once no upload runs: true if every file is uploaded.
export function settled() {
  if (!busy()) return Promise.resolve(!failed());
  return new Promise((resolve) => settledWaiters.push(resolve));
}

// take empties the composer's files, all uploaded, and returns them: the
// message's attachments and what restore puts back.
export function take() {
  const taken = items.splice(0, items.length);
  draw();
  return { attachments: taken.map((it) => ({ sha256: it.sha256, name: it.name })), taken };
}

// restore puts back files taken for a message that was not sent.
export function restore(taken) {
  for (const it of taken) if (items.length < MAX_FILES && !items.some((o) => o.sha256 === it.sha256)) items.push(it);
  draw();
}

// forget lets go of files sent: their thumbnails are no longer shown.
export function forget(taken) {
  for (const it of taken) if (it.thumb) URL.revokeObjectURL(it.thumb);
}

// setDisabled makes the attach button inert (a session the person may
// only watch).
export function setDisabled(off) {
  const b = $('attach');
  if (b) b.disabled = off;
}

// cleanName is a file's name as an attachment's may be: no path, no
// control character, at most MAX_NAME bytes (the extension kept).
function cleanName(name) {
  let n = (name || '').replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim();
  if (!n || n === '.' || n === '..') n = 'file';
  const enc = new TextEncoder();
  if (enc.encode(n).length <= MAX_NAME) return n;
  const dot = n.lastIndexOf('.');
  const ext = dot > 0 && n.length - dot <= 16 ? n.slice(dot) : '';
  let stem = [...n.slice(0, n.length - ext.length)];
  while (stem.length && enc.encode(stem.join('') + '…' + ext).length > MAX_NAME) stem.pop();
  return `${stem.join('')}…${ext}`;
}

// draw puts the chips in the composer, in order, each drawn once and
// painted as its file's state changes.
function draw() {
  const ul = $('attachments');
  ul.hidden = items.length === 0;
  ul.replaceChildren(...items.map((it) => {
    if (!it.el) it.el = chip(it);
    paint(it);
    return it.el;
  }));
  ctx.changed();
}

function chip(it) {
  const li = document.createElement('li');
  li.className = 'chip';
  li.dataset.id = String(it.id);
  if (it.thumb) {
    const img = document.createElement('img');
    img.className = 'thumb';
    img.src = it.thumb;
    img.alt = '';
    li.append(img);
  } else {
    li.append(icon('file'));
  }
  const text = document.createElement('span');
  text.className = 'chip-text';
  text.append(
    Object.assign(document.createElement('span'), { className: 'chip-name', textContent: it.name, title: it.name }),
    Object.assign(document.createElement('span'), { className: 'chip-note' }),
  );
  const progress = document.createElement('progress');
  progress.max = Math.max(it.size, 1);
  text.append(progress);
  const retry = Object.assign(document.createElement('button'), { type: 'button', className: 'retry', textContent: 'retry' });
  retry.setAttribute('aria-label', `Try uploading ${it.name} again`);
  retry.addEventListener('click', () => upload(it));
  const rm = Object.assign(document.createElement('button'), { type: 'button', className: 'remove', textContent: '✕', title: 'Remove' });
  rm.setAttribute('aria-label', `Remove ${it.name}`);
  rm.addEventListener('click', () => {
    remove(it);
    $('input').focus();
  });
  li.append(text, retry, rm);
  return li;
}

// paint shows a file's state on its chip.
function paint(it) {
  const li = it.el;
  if (!li) return;
  li.dataset.state = it.state;
  const note = li.querySelector('.chip-note');
  const progress = li.querySelector('progress');
  const size = humanSize(it.size);
  progress.hidden = it.state !== 'uploading';
  progress.value = it.loaded;
  li.querySelector('.retry').hidden = it.state !== 'failed';
  switch (it.state) {
    case 'hashing':
      note.textContent = `${size} · reading…`;
      break;
    case 'uploading':
      note.textContent = `${size} · uploading ${it.size ? Math.floor((100 * it.loaded) / it.size) : 0}%`;
      break;
    case 'done':
      note.textContent = size;
      break;
    default:
      note.textContent = it.error;
  }
  li.title = it.state === 'failed' ? `${it.name}: ${it.error}` : `${it.name} · ${size}`;
}
