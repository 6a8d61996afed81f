// Replies' Markdown: marked makes HTML, DOMPurify keeps what is safe.
// Images become links (the page loads nothing from elsewhere); links open
// a new tab without telling it where they came from; each code block gets
// a copy button.

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

// renderMarkdown draws text into el, sanitised, with copy buttons.
export function renderMarkdown(el, text) {
  el.innerHTML = DOMPurify.sanitize(marked.parse(text), { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input', 'textarea', 'button'] });
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
