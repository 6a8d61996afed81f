// Replies' Markdown: marked makes HTML, DOMPurify keeps what is safe.
// Images, Markdown's or raw HTML's, become links (the page shows and
// loads no image a message names), and audio, video and their sources go
// (what they held as fallback stays); links open a new tab without
// telling it where they came from; each code block gets a copy button.

import { marked } from './vendor/marked.esm.js';
import DOMPurify from './vendor/purify.es.mjs';

marked.use({
  gfm: true,
  renderer: {
    image({ href, text }) {
      return `<a href="${encodeURI(href || '')}">[image: ${escapeHTML(text || href || '')}]</a>`;
    },
  },
});
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

function escapeHTML(s) {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

const purify = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'textarea', 'button', 'picture', 'source', 'audio', 'video', 'track'],
  // A fragment of DOMPurify's inert document: its images are not fetched
  // before they are replaced.
  RETURN_DOM_FRAGMENT: true,
};

// renderMarkdown draws text into el, sanitised, with copy buttons.
export function renderMarkdown(el, text) {
  const frag = DOMPurify.sanitize(marked.parse(text), purify);
  for (const img of frag.querySelectorAll('img')) img.replaceWith(imageLink(img));
  el.replaceChildren(frag);
  for (const pre of el.querySelectorAll('pre')) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'copy';
    b.textContent = 'copy';
    b.setAttribute('aria-label', 'Copy code');
    b.addEventListener('click', () => copy(pre.querySelector('code') || pre, b));
    pre.prepend(b);
  }
}

// imageLink is what a raw <img> becomes, as the renderer's image does: a
// link to it, if its src is one a link may have (not data:, say).
function imageLink(img) {
  const src = img.getAttribute('src') || '';
  const a = document.createElement('a');
  if (src && DOMPurify.isValidAttribute('a', 'href', src)) a.setAttribute('href', src);
  a.setAttribute('target', '_blank');
  a.setAttribute('rel', 'noopener noreferrer');
  a.textContent = `[image: ${img.getAttribute('alt') || src}]`;
  return a;
}

// copy puts the code on the clipboard, as written (marked ends it with a
// newline the fence did not have). The clipboard API exists only in a
// secure context (https, or loopback: a team server on plain http has
// none) and may refuse (a window without the focus); then the code is
// selected instead, for the reader's own Ctrl-C.
async function copy(code, button) {
  const text = code.textContent.replace(/\n$/, '');
  try {
    if (!navigator.clipboard) throw new Error('no clipboard here');
    await navigator.clipboard.writeText(text);
    say(button, 'copied');
  } catch {
    const range = document.createRange();
    range.selectNodeContents(code);
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    say(button, 'selected: press Ctrl-C');
  }
}

function say(button, what) {
  button.textContent = what;
  clearTimeout(button.saying);
  button.saying = setTimeout(() => { button.textContent = 'copy'; }, 2000);
}
