// The transcript's elements for the log's events (docs/protocol.md,
// "Events"): a message with its header, its text (a person's as typed,
// the rest as Markdown) and its files; a turn that failed or was
// interrupted; a tool call (tools.js); an agent's notice (agent.js); a
// compaction, folded; a change of settings. Events the transcript does
// not show (a turn that completed, approvals and results, which their
// call shows) have none.

import { icon } from './icons.js';
import { renderMarkdown } from './markdown.js';
import { actionBar } from './forks.js';
import { noticeElement } from './agent.js';
import { toolElement } from './tools.js';
import { attachmentsElement } from './files.js';
import { settingsText } from './participants.js';
import { cutNote } from './continue.js';

// shownAuthor is who wrote ev as the transcript names them: a guest (a
// write link's, who picked their own name) is marked so, since a guest
// named as someone of the home would otherwise pass for them.
export function shownAuthor(ev) {
  return ev.author && (ev.author_id || '').startsWith('guest:') ? `${ev.author} (guest)` : ev.author;
}

// header is a message's header: its role, its author when not the role
// itself, a note (cut off, sending…) and its time.
export function header(role, author, note, at) {
  const h = document.createElement('header');
  h.textContent = author && author !== role ? `${role} · ${author}` : role;
  if (note) h.append(Object.assign(document.createElement('span'), { className: 'note', textContent: note }));
  if (at) {
    const t = document.createElement('time');
    t.dateTime = at;
    t.textContent = new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    h.append(t);
  }
  return h;
}

// eventElement is ev's element, or null. page says who looks: person
// (an owner or a member, who gets a message's actions), you (who the page
// writes as: their own messages may be edited) and view (the open
// session's, which a tool call's block reads).
export function eventElement(ev, page) {
  switch (ev.type) {
    case 'message': {
      const a = document.createElement('article');
      a.className = 'msg';
      a.dataset.offset = ev.offset;
      a.dataset.role = ev.role;
      a.dataset.state = ev.state || 'complete';
      if (ev.continues) a.dataset.continues = ev.continues; // shown as its reply's rest (continue.js)
      const note = cutNote(ev.state) || (ev.continues ? '[continuation]' : '');
      a.append(header(ev.role, shownAuthor(ev), note, ev.at));
      if (page.person) a.querySelector('header').append(actionBar(ev, !!page.you && ev.author_id === page.you.id));
      const body = document.createElement('div');
      body.className = 'body';
      if (ev.role === 'user') {
        body.classList.add('plain');
        body.textContent = ev.text; // what a person typed, as typed
      } else {
        renderMarkdown(body, ev.text || '');
      }
      a.append(body);
      if (ev.attachments && ev.attachments.length) a.append(attachmentsElement(ev.attachments));
      return a;
    }
    case 'turn':
      if (ev.state === 'failed' || ev.state === 'interrupted') {
        const d = document.createElement('div');
        d.className = `turn ${ev.state}`;
        d.dataset.turnOffset = ev.offset;
        d.dataset.turnId = ev.turn_id || '';
        d.append(icon(ev.state === 'failed' ? 'warn' : 'stop'), ev.state === 'failed' ? ` turn failed: ${ev.error || ''}` : ` interrupted (${(ev.reason || '').replaceAll('_', ' ')})`);
        return d;
      }
      return null;
    case 'tool_call':
      return toolElement(page.view, ev);
    case 'notice':
      return noticeElement(ev);
    case 'compaction': {
      // The summary a provider is sent in place of messages from..to,
      // which stay above; opened, it shows the summary.
      const d = document.createElement('details');
      d.className = 'compaction';
      d.dataset.compactionOffset = ev.offset;
      const s = document.createElement('summary');
      s.textContent = `⧉ messages #${ev.from}–#${ev.to} compacted for the model (by ${ev.by || '?'}, summary by ${ev.author || '?'})`;
      const body = document.createElement('div');
      body.className = 'body plain';
      body.textContent = ev.text || '';
      d.append(s, body);
      return d;
    }
    case 'settings': {
      const parts = [];
      if (ev.title !== undefined) parts.push(`title “${ev.title}”`);
      if (ev.model !== undefined) parts.push(`model ${ev.model || 'none'}`);
      if (ev.effort !== undefined) parts.push(`effort ${ev.effort || 'none'}`);
      parts.push(...settingsText(ev));
      if (ev.system !== undefined) parts.push(ev.system ? `system text “${ev.system.split('\n')[0].slice(0, 60)}${ev.system.length > 60 || ev.system.includes('\n') ? '…' : ''}”` : 'system text: the profile\'s');
      const d = document.createElement('div');
      d.className = 'settings';
      // A change the daemon made itself (a session shared with a member
      // who writes answers mentions only) is by no one.
      d.textContent = `· ${parts.join(', ')}${ev.by ? ` (by ${ev.by})` : ''}`;
      return d;
    }
  }
  return null;
}
