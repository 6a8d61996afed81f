// Replies' Markdown: marked makes HTML, DOMPurify keeps what is safe.
// Images, Markdown's or raw HTML's, become links (the page shows and
// loads no image a message names), and audio, video and their sources go
// (what they held as fallback stays); links open a new tab without
// telling it where they came from. A line break is a line break, as in
// any chat (GFM's breaks), but in code. Each code block is highlighted
// when its fence names a language highlight.js knows, and gets a bar with
// that language and a copy button.

import { marked } from './vendor/marked.esm.js';
import DOMPurify from './vendor/purify.es.mjs';
import hljs from './vendor/highlight.min.js';

marked.use({
  gfm: true,
  breaks: true,
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
  // A message's id and name attributes are prefixed (user-content-), so
  // that none can shadow the page's own elements (document.composer,
  // getElementById('input')): dom.js does not rely on it alone.
  SANITIZE_NAMED_PROPS: true,
  // A fragment of DOMPurify's inert document: its images are not fetched
  // before they are replaced.
  RETURN_DOM_FRAGMENT: true,
};

// renderMarkdown draws text into el, sanitised, its code highlighted.
export function renderMarkdown(el, text) {
  const frag = DOMPurify.sanitize(marked.parse(text), purify);
  for (const img of frag.querySelectorAll('img')) img.replaceWith(imageLink(img));
  el.replaceChildren(frag);
  for (const pre of el.querySelectorAll('pre')) codeBlock(pre);
}

// codeBlock highlights a block whose fence named a language highlight.js
// knows (the rest stay plain: guessing costs a pass per language on every
// frame of a streaming reply), and puts a bar over it with the language
// and a copy button.
function codeBlock(pre) {
  const code = pre.querySelector('code') || pre;
  const lang = (/(?:^|\s)language-(\S+)/.exec(code.className || '') || [])[1] || '';
  if (lang && code !== pre && hljs.getLanguage(lang)) {
    // highlight.js escapes the text it wraps: what it sets is its own
    // spans around the code's text, nothing of the message's markup.
    const { value } = hljs.highlight(code.textContent, { language: lang, ignoreIllegals: true });
    code.innerHTML = value;
    code.classList.add('hljs');
  }
  const bar = document.createElement('div');
  bar.className = 'codebar';
  const label = document.createElement('span');
  label.className = 'lang';
  label.textContent = lang || 'code';
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'copy';
  b.textContent = 'copy';
  b.setAttribute('aria-label', `Copy ${lang || 'code'}`);
  b.addEventListener('click', () => copy(code, b));
  bar.append(label, b);
  // The bar and its block are one box, spaced as one.
  const box = document.createElement('div');
  box.className = 'codeblock';
  pre.replaceWith(box);
  box.append(bar, pre);
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

// copy puts the code (or a link's address: share.js) on the clipboard, as written (marked ends it with a
// newline the fence did not have). The clipboard API exists only in a
// secure context (https, or loopback: a team server on plain http has
// none) and may refuse (a window without the focus); then the code is
// selected instead, for the reader's own Ctrl-C.
export async function copy(code, button) {
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
