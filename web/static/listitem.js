// A session's line in the list: its marks (running, waiting for a
// decision, failed; pinned, a fork, archived), its name, whether it waits
// for this person's decision, its unread count and the time of its last
// activity. app.js draws the list from these lines, each fork under its
// parent (listorder.js), and keeps what the list as a whole says.

import { pinMark } from './pins.js';
import { archivedMark } from './archive.js';
import { DEEPEST } from './listorder.js';

// listItem is v's line, at depth under its parent. look says what the
// page knows: current (the open session's id), parentOf(id) (a session's
// view, if the page has it) and decides(v) (whether this person may
// decide v's tool calls); pick(v) opens v.
export function listItem(v, depth, look, pick) {
  const li = document.createElement('li');
  li.dataset.session = v.id;
  if (depth) li.dataset.depth = String(Math.min(depth, DEEPEST));
  li.classList.toggle('current', v.id === look.current);
  li.classList.toggle('unread', v.unread > 0);
  li.classList.toggle('approval', v.asking);
  li.classList.toggle('pinned', v.pinned);
  const b = document.createElement('button');
  b.type = 'button';
  const mark = document.createElement('span');
  mark.className = 'mark';
  mark.textContent = v.asking ? '?' : v.running ? '●' : v.status && v.status.last_turn === 'failed' ? '!' : '';
  mark.title = v.asking ? 'a tool call waits for a decision' : v.running ? 'a turn is running' : '';
  const name = document.createElement('span');
  name.className = 'name';
  name.textContent = v.name;
  b.append(mark, ...pinMark(v), ...forkMark(v, 'fork', look), name, ...forkMark(v, 'from', look), ...archivedMark(v));
  if (v.asking) {
    // Said in words, not by the mark alone: on a phone this is what
    // shows that a session waits for someone.
    const d = document.createElement('span');
    d.className = 'decide';
    d.textContent = look.decides(v) ? 'decide' : 'approval';
    d.title = look.decides(v) ? 'A tool call waits for your decision' : 'A tool call waits for a decision';
    b.append(d);
  }
  if (v.unread > 0) {
    const c = document.createElement('span');
    c.className = 'count';
    c.textContent = v.unread >= 100 ? '99+' : String(v.unread); // the feed counts no further
    c.setAttribute('aria-label', `${v.unread} unread`);
    b.append(c);
  }
  const t = document.createElement('time');
  t.textContent = v.activity ? ago(v.activity) : '';
  b.append(t);
  if (v.id === look.current) b.setAttribute('aria-current', 'true');
  b.addEventListener('click', () => pick(v));
  li.append(b);
  return li;
}

// FORK_MARK marks a fork in the list.
const FORK_MARK = '↳';

// forkMark is what the list says of a fork, as part (fork: its mark;
// from: its parent's title, where the page knows it), or nothing for a
// session that is no fork.
function forkMark(v, part, look) {
  const p = v.session.parent;
  if (!p) return [];
  const parent = look.parentOf(p.session);
  const el = document.createElement('span');
  el.className = part;
  if (part === 'fork') {
    el.textContent = FORK_MARK;
    el.title = `a fork of “${parent ? parent.name : p.session}” at #${p.offset}`;
    el.setAttribute('aria-label', 'fork');
    return [el];
  }
  if (!parent) return [];
  el.textContent = `← ${parent.name}`;
  return [el];
}

// ago is how long ago ms was, in the list's few characters.
function ago(ms) {
  const d = (Date.now() - ms) / 1000;
  if (d < 60) return 'now';
  if (d < 3600) return `${Math.floor(d / 60)}m`;
  if (d < 86400) return `${Math.floor(d / 3600)}h`;
  return `${Math.floor(d / 86400)}d`;
}
