// A coding agent's doings on the page (a session whose provider is an
// acp profile; wire/agents.go): the files its calls touch and the diffs
// they propose or made, drawn in their blocks (tools.js); the daemon's
// notices, a quiet line each; and what the session's status says the
// agent is doing, which the log does not keep: its plan (a checklist
// over the composer, kept after the turn until the next starts), the
// running turn's thinking (folded, where the reply streams) and the
// output so far of a command it runs (in that call's block, else below
// the reply).
//
// All of it is text, put in with textContent: titles, paths, diffs and
// output come from a program the daemon runs, and none of it is markup.

// An agent's calls are named acp:KIND (read, edit, execute, …), or
// acp:fs_write and acp:terminal for what the daemon did for it.
const PREFIX = 'acp:';

export function isAgentCall(call) {
  return typeof call.tool === 'string' && call.tool.startsWith(PREFIX);
}

// kindOf is an agent call's tool as its block labels it: edit, fs_write.
export function kindOf(call) {
  return call.tool.slice(PREFIX.length) || 'other';
}

// shownPath is path relative to the session's workspace when it is inside
// it (the agent names files absolute; the workspace is where it works).
export function shownPath(path, workspace) {
  const ws = (workspace || '').replace(/\/+$/, '');
  if (ws && path.startsWith(`${ws}/`)) return path.slice(ws.length + 1);
  return path;
}

// filesElement lists the files a call touches, each with its line when
// the agent says, the whole path in its title.
export function filesElement(locations, workspace) {
  const ul = document.createElement('ul');
  ul.className = 'tool-files';
  ul.setAttribute('aria-label', 'files');
  for (const loc of locations) {
    const path = String(loc.path || '');
    const li = document.createElement('li');
    li.className = 'tool-path';
    li.textContent = shownPath(path, workspace) + (Number.isInteger(loc.line) ? `:${loc.line}` : '');
    li.title = path;
    ul.append(li);
  }
  return ul;
}

// diffLines classifies a unified diff's lines: file headers (--- and
// +++), hunk headers (@@), added, removed and context lines, and others
// (a "\ No newline" note, a line the diff does not explain). Inside a
// hunk its counts decide, so that a removed line reading "-- x" is not
// taken for a header.
export function diffLines(text) {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let old = 0;
  let neu = 0;
  return lines.map((l) => {
    if (old > 0 || neu > 0) {
      if (l.startsWith('\\')) return ['meta', l];
      const kind = l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : 'ctx';
      if (kind !== 'add') old--;
      if (kind !== 'del') neu--;
      return [kind, l];
    }
    if (l.startsWith('@@')) {
      // "@@ -1,3 +1,4 @@": a count left out is 1; a header without
      // counts (the daemon's "@@ too large to show … @@") opens no hunk.
      const m = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(l);
      if (m) [old, neu] = [m[1] === undefined ? 1 : +m[1], m[2] === undefined ? 1 : +m[2]];
      return ['hunk', l];
    }
    if (l.startsWith('--- ') || l.startsWith('+++ ')) return ['file', l];
    // Out of any hunk a diff's counts were wrong, or it has none: its
    // lines still read as what they say.
    if (l.startsWith('+')) return ['add', l];
    if (l.startsWith('-')) return ['del', l];
    return ['meta', l];
  });
}

// drawDiff fills pre with the diff, a line each, coloured by its kind
// (the +, - and @@ stay: the colour is not the only sign).
export function drawDiff(pre, text) {
  pre.classList.add('diff');
  pre.replaceChildren(...diffLines(text).map(([kind, l]) => Object.assign(document.createElement('span'), { className: `diff-line diff-${kind}`, textContent: l })));
}

// diffStat is what a diff adds and removes: "+3 −1".
export function diffStat(text) {
  let add = 0;
  let del = 0;
  for (const [kind] of diffLines(text)) {
    if (kind === 'add') add++;
    else if (kind === 'del') del++;
  }
  return `+${add} −${del}`;
}

// noticeElement is a notice event: the daemon's word to readers (how an
// agent's request was answered, that it started anew), a quiet line. One
// about a call follows that call's block: it comes after its decision.
export function noticeElement(ev) {
  const p = document.createElement('p');
  p.className = 'notice-line';
  p.dataset.noticeOffset = ev.offset;
  if (ev.call_id) p.dataset.call = ev.call_id;
  p.textContent = ev.text || '';
  return p;
}

// The plan's entries' states, as words for screen readers (the marks are
// drawn by the style sheet: no font needed).
const PLAN_WORDS = { pending: 'to do', in_progress: 'in progress', completed: 'done' };

// shownPlan is the plan drawn last, as JSON: a status push says it again
// with every other change.
let shownPlan = '';

// drawPlan shows plan (the status's agent.plan) in el, the <details id=plan>
// over the composer, or hides it when there is none. It is filled in
// place: whether it is folded stays as the reader left it.
export function drawPlan(el, plan) {
  el.hidden = plan.length === 0;
  const key = JSON.stringify(plan);
  if (!plan.length || key === shownPlan) return;
  shownPlan = key;
  const done = plan.filter((p) => p.status === 'completed').length;
  const now = plan.find((p) => p.status === 'in_progress');
  const summary = el.querySelector('summary');
  summary.replaceChildren(Object.assign(document.createElement('strong'), { textContent: 'Plan' }), ` · ${done} of ${plan.length} done`);
  if (now) summary.append(' · ', Object.assign(document.createElement('span'), { className: 'plan-now', textContent: now.content }));
  el.querySelector('ol').replaceChildren(...plan.map((p) => {
    const status = PLAN_WORDS[p.status] ? p.status : 'pending';
    const li = document.createElement('li');
    li.dataset.status = status;
    if (p.priority) li.dataset.priority = p.priority;
    li.title = `${PLAN_WORDS[status]}${p.priority ? ` · priority ${p.priority}` : ''}`;
    const mark = Object.assign(document.createElement('span'), { className: 'plan-mark' });
    mark.setAttribute('aria-hidden', 'true');
    li.append(mark, Object.assign(document.createElement('span'), { className: 'sr-only', textContent: `${PLAN_WORDS[status]}: ` }),
      Object.assign(document.createElement('span'), { className: 'plan-text', textContent: p.content || '' }));
    return li;
  }));
}

// thoughtElement is the running turn's thinking: a "Thinking…" line that
// opens (a click, or Enter on it) to the text. Folded at first: it is
// the agent's aside, and it streams.
export function thoughtElement() {
  const d = document.createElement('details');
  d.className = 'thinking';
  const s = document.createElement('summary');
  s.textContent = 'Thinking…';
  d.append(s, Object.assign(document.createElement('div'), { className: 'thought' }));
  return d;
}

// setThought puts the thinking so far in el, in place (its newest 4 KiB:
// the box follows its end unless the reader scrolled up in it).
export function setThought(el, text) {
  setTail(el.querySelector('.thought'), text);
}

// outputElement is a running command's output so far, under a label.
// cls says where it is: tool-live in its call's block, agent-output
// below the reply.
export function outputElement(cls, text) {
  const d = document.createElement('div');
  d.className = cls;
  const pre = document.createElement('pre');
  pre.setAttribute('aria-label', 'output so far');
  d.append(Object.assign(document.createElement('p'), { className: 'live-label', textContent: 'output so far' }), pre);
  setOutput(d, text);
  return d;
}

// setOutput puts the output so far in el, an outputElement.
export function setOutput(el, text) {
  setTail(el.querySelector('pre'), text);
}

// setTail sets a box's text, which grows at its end, keeping it scrolled
// to its end if it was there.
function setTail(box, text) {
  if (box.textContent === text) return;
  const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 8;
  box.textContent = text;
  if (atEnd) box.scrollTop = box.scrollHeight;
}
