// Tool calls on the page (docs/protocol.md, "Tool calls and approvals"):
// each call a model makes is a block in the transcript, after what the
// model said before its calls: the tool, its arguments, who decided it,
// its state and its result, long ones folded. A call that waits for a
// decision offers Allow, Allow for this session and Deny to those who
// may decide (owners, and members who may write in the session); the
// first decision, from anyone anywhere, takes the buttons away everywhere.
//
// What a call has come to is derived from the log alone: its tool_call,
// approval and tool_result events, kept by call in the view (v.calls),
// so that a page opened or reattached while a call waits shows its
// buttons as a page that saw it come does.
//
// A coding agent's call (acp:KIND, agent.js) is headed by the agent's
// own title, and shows the files it touches and its diff; a command it
// runs shows its output live while the session's status carries it.

import { drawDiff, diffStat, filesElement, isAgentCall, kindOf, outputElement, setOutput } from './agent.js';
import { attachmentsElement } from './files.js';
import { icon } from './icons.js';
import { renderMarkdown } from './markdown.js';

// A text longer than these is folded behind its first line: a tool's
// output may run to 256 KiB.
const FOLD_LINES = 8;
const FOLD_CHARS = 600;

// The calls the daemon makes for an agent (a write, a command): the
// policy decides them, as a model's.
const DAEMON_CALLS = new Set(['acp:fs_write', 'acp:terminal']);

// The three decisions, as the buttons offer them.
const DECISIONS = [
  ['allow', 'Allow', 'Run this call once'],
  ['allow_session', 'Allow for this session', 'Run this call, and every later call of this tool in this session without asking'],
  ['deny', 'Deny', 'Do not run it: the model is told it was denied'],
];

// ctx is what the page gives: mayDecide(v), header(role, author, note,
// at), author(ev) (a name as the transcript shows it), approve(v, call,
// decision) (a promise of the approval event), notice(text, error).
let ctx = null;

export function wireTools(c) {
  ctx = c;
}

// noteTool keeps a tool event in its view's calls (call_id → {call,
// approval, result, el}); others are ignored. Events come in any order
// across pages of history (an approval before its call is paged in).
export function noteTool(v, ev) {
  if (ev.type !== 'tool_call' && ev.type !== 'approval' && ev.type !== 'tool_result') return;
  let e = v.calls.get(ev.call_id);
  if (!e) {
    e = { call: null, approval: null, result: null, el: null, asking: '', late: false };
    v.calls.set(ev.call_id, e);
  }
  if (ev.type === 'tool_call') {
    // A coding agent's call it said runs and then asks permission for
    // comes twice: one block, the first's place, drawn from the newest.
    if (!e.call || ev.offset >= e.call.offset) e.call = ev;
    if (e.first === undefined || ev.offset < e.first) e.first = ev.offset;
  } else if (ev.type === 'approval') e.approval = ev;
  else e.result = ev;
}

// pruneCalls forgets the calls the view no longer holds any event of
// (trimmed from before first). One whose later events it holds stays,
// so that its call, paged in again, does not look pending.
export function pruneCalls(v, first) {
  for (const [id, e] of v.calls) {
    if ([e.call, e.approval, e.result].every((x) => !x || x.offset < first)) v.calls.delete(id);
  }
}

// isPending says whether a call waits for people: it asked, and neither
// a decision nor its end has come.
export function isPending(e) {
  return !!e.call && e.call.policy === 'ask' && !e.approval && !e.result;
}

// toolElement is the element of a tool_call event: what the model said
// before its calls (on the first call of a response), then the call's
// block. The words are no message of the log (not data-offset): the
// transcript's messages are the message events.
export function toolElement(v, ev) {
  const e = v.calls.get(ev.call_id);
  if (!e || !e.call) return null;
  if (ev.offset !== e.first) { // the call asked again: its block says so
    redrawCall(v, ev.call_id);
    return null;
  }
  const d = document.createElement('div');
  d.className = 'toolcall';
  if (ev.text) {
    const a = document.createElement('article');
    a.className = 'msg said';
    a.dataset.role = 'assistant';
    a.append(ctx.header('assistant', ev.author, '', ev.at));
    const body = document.createElement('div');
    body.className = 'body';
    renderMarkdown(body, ev.text);
    a.append(body);
    d.append(a);
  }
  e.el = block(v, e);
  d.append(e.el);
  return d;
}

// blockAt is the block that draws the tool event at offset (a call or
// its result, which a search may find), or null.
export function blockAt(v, offset) {
  const ev = v.events.find((e) => e.offset === offset);
  const el = ev && ev.call_id && v.calls.get(ev.call_id)?.el;
  return el && el.isConnected ? el : null;
}

// redrawCall draws a call's block again in place (its approval or result
// came, a decision was sent or refused), keeping what was unfolded and
// the focus inside it. A block that would show the same is kept: a tap
// on a button must not land on one just replaced (another call decided,
// an expiry read). A call not in the transcript now is left alone.
export function redrawCall(v, id) {
  const e = v.calls.get(id);
  if (!e || !e.call || !e.el || !e.el.isConnected || e.el.dataset.shows === shows(v, e)) return;
  const old = e.el;
  const next = block(v, e);
  for (const d of old.querySelectorAll('details[data-fold]')) {
    const same = next.querySelector(`details[data-fold="${d.dataset.fold}"]`);
    if (same) same.open = d.open;
  }
  const focused = old.contains(document.activeElement);
  // A fold's summary keeps the focus: else Enter, pressed to unfold a
  // diff just as the block is redrawn, would land on Allow.
  const fold = focused ? document.activeElement.closest('details[data-fold]') : null;
  old.replaceWith(next);
  e.el = next;
  if (focused) ((fold && next.querySelector(`details[data-fold="${fold.dataset.fold}"] > summary`)) || next.querySelector('.tool-decide button:not([disabled])') || next).focus();
}

// redrawPending draws the view's waiting calls again: who may decide
// changed (a grant), or their expiry became known.
export function redrawPending(v) {
  for (const [id, e] of v.calls) if (isPending(e)) redrawCall(v, id);
}

// redrawCalls draws every call of the view shown again, as far as its
// block would change: the session's workspace became known, and the
// agent's files are shown relative to it.
export function redrawCalls(v) {
  for (const id of v.calls.keys()) redrawCall(v, id);
}

// drawOutput shows out, the status's agent.output (a running command's
// output so far, with its call_id), or none, in the block of its call,
// and takes the one before away. It says false when that call has no
// block on the page now: the page shows it below the reply then.
export function drawOutput(v, out) {
  const id = out ? out.call_id : '';
  if (v.liveCall && v.liveCall !== id) v.calls.get(v.liveCall)?.el?.querySelector(':scope > .tool-live')?.remove();
  v.liveCall = id;
  if (!out) return true;
  const el = v.calls.get(id)?.el;
  if (!el || !el.isConnected) return false;
  const live = el.querySelector(':scope > .tool-live');
  if (live) setOutput(live, out.text || '');
  else el.append(outputElement('tool-live', out.text || ''));
  return true;
}

// shows is what a call's block depends on, beyond its call (its live
// output is put in place, drawOutput).
function shows(v, e) {
  return JSON.stringify([stateOf(e), e.call.offset, ctx.mayDecide(v), e.approval && e.approval.offset, e.result && e.result.offset,
    e.asking, e.late, v.expires && v.expires.get(e.call.call_id), v.session.workspace || '']);
}

// stateOf is what a call has come to, as its block says it.
function stateOf(e) {
  if (e.result) return e.result.state;
  if (e.approval) return e.approval.decision === 'deny' ? 'denied' : 'running';
  if (e.call.policy === 'ask') return 'pending';
  return e.call.policy === 'deny' ? 'denied' : 'running';
}

const STATE_TEXT = {
  running: 'running…',
  completed: 'completed',
  failed: 'failed',
  denied: 'denied',
  cancelled: 'cancelled',
  expired: 'expired: no one decided in time',
};

// block is a call's block, drawn afresh from what its view knows.
function block(v, e) {
  const { call, approval, result } = e;
  const state = stateOf(e);
  const decides = state === 'pending' && ctx.mayDecide(v);
  const agent = isAgentCall(call);
  const sec = document.createElement('section');
  sec.className = agent ? 'tool agent' : 'tool';
  sec.tabIndex = -1; // the focus lands here when its buttons go
  sec.dataset.state = state;
  sec.dataset.tool = call.tool || '';
  sec.dataset.call = call.call_id;
  sec.dataset.shows = shows(v, e);
  sec.setAttribute('aria-label', agent ? `${call.title || kindOf(call)} (${call.tool})` : `tool call ${call.tool || ''}`);

  const h = document.createElement('header');
  const said = state === 'pending' ? (decides ? 'needs your decision' : 'waits for a decision') : STATE_TEXT[state] || state;
  const st = Object.assign(document.createElement('span'), { className: 'tool-state', textContent: said });
  if (agent) {
    // The agent's title says what the call does ("Edit a.txt"); its kind
    // is a label beside it.
    const kind = Object.assign(document.createElement('span'), { className: 'tool-name tool-kind', textContent: kindOf(call), title: call.tool });
    const title = Object.assign(document.createElement('span'), { className: 'tool-title', textContent: call.title || call.tool });
    h.append(icon('tool'), title, kind, st);
  } else {
    const name = Object.assign(document.createElement('span'), { className: 'tool-name', textContent: call.tool || '(no tool)' });
    h.append(icon('tool'), name, st);
  }
  if (call.at) h.append(clock(call.at));
  sec.append(h);

  if (agent && Array.isArray(call.locations) && call.locations.length) sec.append(filesElement(call.locations, v.session.workspace));
  if (agent && call.diff) sec.append(diffFold('diff', 'diff', call.diff));

  // An agent's call may come with no arguments, or {}: that says nothing.
  const args = call.arguments;
  const none = args === undefined || args === null || (agent && typeof args === 'object' && !Array.isArray(args) && Object.keys(args).length === 0);
  if (!none) {
    // Folded, the arguments show compact (pretty, their first line is
    // "{"). An agent's are its raw input, which its title, files and
    // diff say better: folded whatever their length.
    sec.append(fold('arguments', 'args', JSON.stringify(args, null, 2), { preview: JSON.stringify(args), folded: agent }));
  } else if (!agent) {
    // The daemon keeps none of a call it refused at once (no such tool,
    // no JSON object): its result says which.
    sec.append(line('tool-who', 'no arguments kept'));
  }

  const who = decidedBy(e);
  if (who) sec.append(line('tool-who', who));
  if (state === 'pending') {
    const exp = v.expires && v.expires.get(call.call_id);
    if (!decides) sec.append(line('tool-who', 'waits for the session\'s owner, or a member who may write in it, to decide'));
    if (exp) sec.append(line('tool-who', `expires at ${new Date(exp).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })} if no one decides`));
  }
  if (decides) sec.append(buttons(v, e));
  if (e.late) sec.append(line('tool-note', `already decided${approval ? ` by ${ctx.author(approval)}` : result ? ': the call has ended' : ''}`));

  if (result) {
    if (result.text) sec.append(fold(`result`, 'result', result.text));
    if (result.attachments && result.attachments.length) sec.append(attachmentsElement(result.attachments));
    // The change a call made, unless its call showed that very diff
    // already (a write the daemon made: proposed and made alike).
    if (result.diff && result.diff !== call.diff) sec.append(diffFold('change made', 'result-diff', result.diff));
    // A person's deny is said by the decision line already.
    const byPerson = result.state === 'denied' && approval && approval.decision === 'deny';
    if (result.error && !byPerson) sec.append(line('tool-error', result.error));
  }
  const out = v.status && v.status.agent && v.status.agent.output;
  if (out && out.call_id === call.call_id) sec.append(outputElement('tool-live', out.text || ''));
  return sec;
}

// decidedBy says who let the call run or not: a person (with their
// reason), or the daemon's policy when no one was asked. A call refused
// at once says why in its result's error.
function decidedBy(e) {
  const a = e.approval;
  if (a) {
    const what = a.decision === 'allow_session' ? 'allowed for this session' : a.decision === 'deny' ? 'denied' : 'allowed';
    return `${what} by ${ctx.author(a)}${a.reason ? `: “${a.reason}”` : ''}`;
  }
  // A coding agent's call it ran on its own: it asked no permission.
  if (e.call.policy === 'agent') return 'run by the agent without asking';
  if (e.call.policy === 'allow') return 'allowed without asking (the policy, or an earlier “allow for this session”)';
  return '';
}

// buttons are the three decisions of a waiting call. Each has its own
// listener (a message's markup can hold no button, and none of it is
// asked which call a button is of).
function buttons(v, e) {
  const bar = document.createElement('div');
  bar.className = 'tool-decide';
  bar.setAttribute('role', 'group');
  bar.setAttribute('aria-label', 'Decide this call');
  for (const [decision, label, title] of DECISIONS) {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.decision = decision;
    b.textContent = e.asking === decision ? `${label}…` : label;
    b.title = title;
    b.disabled = !!e.asking;
    b.addEventListener('click', () => decide(v, e, decision));
    bar.append(b);
  }
  return bar;
}

// decide sends a decision. The approval event that comes back (and to
// every other page) takes the buttons away; one decided first elsewhere
// (conflict) is no error: the block says who did.
async function decide(v, e, decision) {
  if (e.asking) return;
  e.asking = decision;
  redrawCall(v, e.call.call_id);
  try {
    const ev = await ctx.approve(v, e.call, decision);
    if (ev && !e.approval) e.approval = ev;
  } catch (err) {
    if (err.code === 'conflict') e.late = true;
    else ctx.notice(`decide ${e.call.tool}: ${err.message}`, true);
  } finally {
    e.asking = '';
    redrawCall(v, e.call.call_id);
  }
}

// fold is text in a pre, under a summary that opens and closes it: open
// when short, folded (the start of preview, else of its first line,
// shown) when long, or when asked to be. draw fills the pre (its text
// as it is, else).
function fold(label, key, text, { preview = '', folded = false, draw = null } = {}) {
  const d = document.createElement('details');
  d.className = `tool-fold ${key}`;
  d.dataset.fold = key;
  const lines = text.replace(/\n$/, '').split('\n').length; // a last newline ends a line, it starts none
  const long = lines > FOLD_LINES || text.length > FOLD_CHARS;
  d.open = !long && !folded;
  const s = document.createElement('summary');
  if (long || folded) {
    const first = (preview || text.split('\n', 1)[0]).slice(0, 80);
    s.append(`${label} · ${lines} line${lines === 1 ? '' : 's'}, ${size(text.length)}: `);
    s.append(Object.assign(document.createElement('span'), { className: 'tool-first', textContent: first }));
  } else {
    s.textContent = label;
  }
  const pre = document.createElement('pre');
  if (draw) draw(pre, text);
  else pre.textContent = text;
  d.append(s, pre);
  return d;
}

// diffFold is a diff, folded as any long text, its lines coloured; its
// summary says what it adds and removes.
function diffFold(label, key, diff) {
  return fold(`${label} ${diffStat(diff)}`, key, diff, { draw: drawDiff });
}

function size(n) {
  return n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} characters`;
}

function line(cls, text) {
  return Object.assign(document.createElement('p'), { className: cls, textContent: text });
}

function clock(at) {
  const t = document.createElement('time');
  t.dateTime = at;
  t.textContent = new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return t;
}
