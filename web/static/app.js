// The page's views over protocol.js: the session list (owner), one
// session's transcript with its streaming reply and tool calls (tools.js),
// what its coding agent is doing (agent.js), presence and settings, and
// the composer (owner), with its files (uploads.js; files.js shows them
// in the transcript), its @ completion (mentions.js) and who answers
// (participants.js). A viewer's link shows its one session, read-only.

import { Api, Client } from './protocol.js';
import { drawer } from './drawer.js';
import { wireNewSession } from './newsession.js';
import { renderMarkdown } from './markdown.js';
import { $ } from './dom.js';
import { following, showEnd, wireFollow } from './follow.js';
import { spoken } from './words.js';
import { askName, guestName, rememberName } from './guest.js';
import { closeShare, wireShare } from './share.js';
import { icon } from './icons.js';
import { wireSearch } from './search.js';
import { originText, wireForks } from './forks.js';
import { listOrder } from './listorder.js';
import { drawVersions, firstAfter, versionsFeed, versionsOpened, wireVersions } from './versions.js';
import { meterEvent, meterOpened, meterText } from './meter.js';
import { blockAt, drawOutput, isPending, noteTool, pruneCalls, redrawCall, redrawCalls, redrawPending, wireTools } from './tools.js';
import { drawPlan, isAgentCall, outputElement, setOutput, setThought, thoughtElement } from './agent.js';
import { attachmentsText, retryFailed, wireFiles } from './files.js';
import * as uploads from './uploads.js';
import { mentionables, wireMentions } from './mentions.js';
import { drawAnswers, settingsEvent, takeSession, wireAnswers } from './participants.js';
import { drawPin, wirePins } from './pins.js';
import { ARCHIVED_MARK, drawArchive, wireArchive } from './archive.js';
import { drawModelField, modelText, offerModels, takeModel } from './models.js';
import { drawContinue, drawContinuing, drawJoined, endContinuing, wireContinue } from './continue.js';
import { eventElement, header, shownAuthor } from './events.js';
import { listItem } from './listitem.js';
const PAGE = 100; // events per history page
const MAX_SHOWN = 1000; // messages kept in the DOM while following the end
// Sessions made or deleted elsewhere reach the list when the daemon says so
// (onSessions); it is also read this often, for a node of a cluster that
// hears no other node (no NATS).
const REFRESH_MS = 30000;

// The token comes in the link's fragment (never sent to a server); it is
// kept for this tab only and taken out of the address bar.
function takeToken() {
  const p = new URLSearchParams(location.hash.slice(1));
  if (p.get('token')) {
    sessionStorage.setItem('albedo.token', p.get('token'));
    if (p.get('session')) sessionStorage.setItem('albedo.session', p.get('session'));
    else sessionStorage.removeItem('albedo.session');
    // A guest's name offered by the link (#name=): said in this tab's
    // hellos, and kept for the link once the daemon takes it (guest.js).
    sessionStorage.setItem('albedo.name', p.get('name') || '');
    if (p.get('k')) sessionStorage.setItem('albedo.key', p.get('k'));
    else sessionStorage.removeItem('albedo.key');
    history.replaceState(null, '', location.pathname);
  }
  return {
    token: sessionStorage.getItem('albedo.token'),
    session: sessionStorage.getItem('albedo.session'),
    key: sessionStorage.getItem('albedo.key') || '',
    name: sessionStorage.getItem('albedo.name') || '',
  };
}

// View is what the page knows of one session.
class View {
  constructor(s) {
    this.id = s.id;
    this.session = s;
    this.events = []; // shown, in order
    this.more = false; // older events exist before events[0]
    this.gen = 0; // grows when events[0] changes but by paging in: a reset, a trim
    this.stream = null; // {turn, text}
    this.status = null;
    this.turnSince = 0; // when the running turn started, as far as the page knows
    this.turnOf = ''; // the turn turnSince is of
    this.presence = [];
    this.unread = 0;
    // The last reset's head: events up to it are the history it brings,
    // later ones are news. Not the first status after it: that may come
    // before the history has all arrived (its head runs ahead).
    this.history = 0;
    this.deleting = false; // deleted from this page: its end is no news
    this.activity = Date.parse(s.updated_at) || 0;
    this.subscribed = false; // its events come (keep); else the feed has its line
    this.readSent = 0; // the read marker this page last set or heard of
    this.last = null; // its newest message, as the feed said
    this.pinned = false; // pinned by this person, as the feed says (pins.js)
    this.calls = new Map(); // its tool calls, by call_id (tools.js)
    this.expires = new Map(); // when its waiting calls expire, by call_id (GET …/approvals)
  }

  get name() {
    return this.session.title || this.id.slice(-8);
  }

  // running: a turn is on (one waiting for decisions on its tool calls
  // too: it holds the queue, and an interrupt ends it).
  get running() {
    return this.status && (this.status.phase === 'running' || this.status.phase === 'waiting' || this.status.phase === 'approval');
  }

  // asking: its turn waits for people to decide tool calls.
  get asking() {
    return !!this.status && this.status.phase === 'approval';
  }
}

const app = {
  api: null,
  client: null,
  role: null,
  views: new Map(),
  current: null,
  wanted: null, // the session the link named
  loadingOlder: false,
  drawer: null, // {close}: the list, folded away on narrow screens
  person: false, // an owner or a member: the list comes from the feed
  feedNext: '', // the cursor of the feed's next page ('' at the end)
  feedPaging: false,
  recent: [], // the sessions opened lately, the last last (keep)
  awaiting: new Set(), // the sessions whose calls wait for this person's decision (drawAttention)
  asked: '', // the notice that said so, cleared once none waits
};

// KEEP_SUBS is how many sessions stay subscribed: the one shown and the
// few opened just before it, for instant switching. The rest of the list
// comes from the sessions feed, whatever the number of sessions.
const KEEP_SUBS = 4;

function notice(text, error = false) {
  const n = $('notice');
  n.textContent = text;
  n.classList.toggle('error', error);
}

function banner(text) {
  $('banner').textContent = text;
  $('banner').hidden = false;
}

// --- connection --------------------------------------------------------

let countdown = null;

// showState says how the page's connection is, and offers "retry now"
// while it is down (the page also finds a daemon that comes back on its
// own, within a fifth of a second: protocol.js's probe).
function showState(s) {
  const el = $('conn');
  clearInterval(countdown);
  el.classList.toggle('down', s.phase !== 'connected');
  el.title = '';
  if (app.client) drawOutbox();
  $('retry').hidden = s.phase !== 'reconnecting' && s.phase !== 'stopped';
  switch (s.phase) {
    case 'connected':
      el.textContent = 'connected';
      retryFailed(); // images that could not be read while it was down
      break;
    case 'stopped':
      el.textContent = 'daemon stopped: waiting for it to start';
      el.title = 'albedo stop, or the daemon shut down on purpose: `albedo` or `albedo open` starts it again';
      break;
    case 'reconnecting': {
      const tick = () => {
        el.textContent = `reconnecting in ${Math.max(0, (s.at - Date.now()) / 1000).toFixed(1)} s (attempt ${s.attempt})`;
      };
      tick();
      countdown = setInterval(tick, 200);
      break;
    }
    case 'revoked':
      el.textContent = 'disconnected';
      banner(/expired/.test(s.error || '') ? 'This link has expired: ask its owner for a new one.' : 'This link was revoked: ask its owner for a new one.');
      $('app').hidden = true;
      break;
    default:
      el.textContent = 'connecting…';
  }
}

async function onHello(r) {
  const first = app.role === null;
  app.role = r.role;
  app.you = r.you || null; // who this page writes as: its own messages are the ones it may edit
  drawYou(r);
  if (first) {
    // An owner (an admin) and a member are people who write; what a member
    // may do in each session is its access (drawComposer).
    const person = r.role === 'owner' || r.role === 'member';
    const writer = person || r.role === 'guest'; // a guest writes in its one session
    document.body.classList.toggle('viewer', !writer);
    $('badge').hidden = person;
    if (r.role === 'guest') $('badge').textContent = 'guest';
    for (const el of document.querySelectorAll('.owner-only')) {
      if (!person && !(writer && el.id === 'composer')) el.remove();
    }
    $('app').hidden = false;
  }
  app.person = r.role === 'owner' || r.role === 'member';
  if (!app.person) await refresh(); // the one session of a link; a person's list is the feed
}

// drawYou says in the header who the page writes as (a link's viewer
// writes as no one: its badge says so).
function drawYou(r) {
  const you = $('you');
  const name = r.you && r.role !== 'viewer' ? r.you.name : '';
  you.hidden = !name;
  you.textContent = name ? `you are ${name}${r.role === 'guest' ? ' (guest)' : ''}` : '';
}

// --- the sessions feed ----------------------------------------------------

// onFeed applies what the feed says: a first page (the list starts again,
// keeping the sessions subscribed), sessions changed or gone, or a read
// marker set elsewhere.
function onFeed(u) {
  if (u.read) {
    const v = app.views.get(u.read.session);
    if (v) {
      v.readSent = Math.max(v.readSent, u.read.offset);
      if (v.id !== app.current) v.unread = u.read.unread;
      drawListSoon();
    }
    return;
  }
  if (u.start) {
    const seen = new Set(u.sessions.map((it) => it.id));
    for (const [id, v] of [...app.views]) if (!seen.has(id) && !v.subscribed) app.views.delete(id);
    app.feedNext = u.next;
  }
  const fresh = feedItems(u.sessions);
  for (const id of u.gone) forget(id, u.revoked.includes(id) ? 'revoked' : 'not_found');
  versionsFeed(fresh, u.gone);
  if (u.start && app.wanted && !app.views.has(app.wanted)) openByID(app.wanted);
  if (!app.current || !app.views.has(app.current)) {
    const pick = app.wanted && app.views.has(app.wanted) ? app.wanted : sorted()[0]?.id;
    if (pick) select(pick);
  }
  drawListSoon();
}

// feedItems puts the feed's items into the list, and returns those new
// to it.
function feedItems(items) {
  const fresh = [];
  for (const it of items) {
    if (it.archived) {
      // Archived, here or elsewhere: it leaves the list (archive.js),
      // but for one the person opened as archived since.
      if (!app.views.get(it.id)?.session.archived) forget(it.id, 'archived');
      continue;
    }
    let v = app.views.get(it.id);
    if (!v) {
      v = new View({ id: it.id, title: it.title, updated_at: it.at });
      app.views.set(it.id, v);
      fresh.push(it);
    }
    const granted = v.session.access !== it.access;
    v.session = { ...v.session, title: it.title, resolved_provider: it.provider, access: it.access, parent: it.parent, archived: false };
    if (v.pinned !== !!it.pinned) {
      v.pinned = !!it.pinned;
      if (v.id === app.current) drawPin(v); // pinned or unpinned elsewhere
    }
    if (granted && v.id === app.current) {
      redrawPending(v); // who may decide changed
      drawMeta(); // and what they may do
    }
    v.activity = Math.max(v.activity, Date.parse(it.at) || 0);
    v.last = it.last || null;
    v.readSent = Math.max(v.readSent, it.read);
    if (!v.subscribed) v.status = { ...(v.status || {}), phase: it.phase, queued: it.queued, last_turn: it.last_turn };
    if (v.id !== app.current) v.unread = it.unread;
    if (v.id === app.current) drawTitle(v);
  }
  return fresh;
}

// morePages reads the feed's next page once the list is scrolled near its
// end.
async function morePages() {
  const ul = $('sessions');
  if (!app.feedNext || app.feedPaging || ul.scrollTop + ul.clientHeight < ul.scrollHeight - 200) return;
  app.feedPaging = true;
  try {
    const p = await app.client.feedPage(app.feedNext);
    app.feedNext = p.next || '';
    feedItems(p.sessions || []);
    drawList();
  } catch {
    // asked again at the next scroll
  } finally {
    app.feedPaging = false;
  }
}

// openByID adds a session the list has not loaded (a link's, a search
// hit's) and opens it.
async function openByID(id) {
  let s;
  try {
    s = await app.api.session(id);
  } catch (e) {
    notice(`${id}: ${spoken(e)}`, true);
    return false;
  }
  if (!app.views.has(id)) app.views.set(id, new View(s));
  select(id);
  return true;
}

// keep subscribes the session shown and the few opened before it, and
// unsubscribes the rest: a session left behind gives its events back,
// and comes again with a reset when it is opened.
function keep(id) {
  app.recent = app.recent.filter((r) => r !== id && app.views.has(r));
  app.recent.push(id);
  const want = new Set(app.recent.slice(-KEEP_SUBS));
  app.recent = app.recent.slice(-2 * KEEP_SUBS);
  for (const v of app.views.values()) {
    if (v.subscribed && !want.has(v.id)) {
      app.client.unsubscribe(v.id);
      v.subscribed = false;
      v.events = [];
      v.more = false;
      v.stream = null;
      v.history = 0;
      v.calls = new Map();
      v.gen++;
      // What its agent does comes with its status, which no longer
      // comes: a plan shown now would be stale.
      if (v.status) v.status = { ...v.status, agent: undefined };
    }
  }
  const v = app.views.get(id);
  if (v && !v.subscribed) {
    v.subscribed = true;
    app.client.subscribe(id, handlerFor(v), { watch: false });
  }
}

// refresh reads the session list: new ones are followed (in the
// background: only the one shown is watched), gone ones leave. Lists read
// at once (a sessions push beside + new's own) may be answered out of
// order: one older than a list already applied is dropped, or it would
// make a session just made look deleted.
let listsAsked = 0;
let listApplied = 0;
async function refresh() {
  const n = ++listsAsked;
  let list;
  try {
    list = await app.api.sessions();
  } catch (e) {
    if (e.status === 401) showState({ phase: 'revoked', error: e.message });
    return;
  }
  if (n < listApplied) return;
  listApplied = n;
  const seen = new Set();
  for (const s of list) {
    seen.add(s.id);
    let v = app.views.get(s.id);
    if (v) {
      v.session = { ...v.session, title: s.title, provider: s.provider, resolved_provider: s.resolved_provider };
      takeSession(v, s);
      if (v.id === app.current) {
        drawTitle(v);
        drawMeta();
      }
      continue;
    }
    v = new View(s);
    app.views.set(s.id, v);
  }
  for (const id of [...app.views.keys()]) if (!seen.has(id)) forget(id);
  if (!app.current || !app.views.has(app.current)) {
    const pick = app.wanted && app.views.has(app.wanted) ? app.wanted : sorted()[0]?.id;
    if (pick) select(pick);
  }
  drawList();
}

// forget drops a session from the page, at once: one deleted (its reset,
// reason deleted, ends its subscription, or the list no longer has it), or
// one whose access was taken back (why: revoked). If it was open, the page
// says which and opens the next one; what was typed stays in the box.
function forget(id, why = 'not_found') {
  const v = app.views.get(id);
  if (!v) return;
  app.views.delete(id);
  app.client.unsubscribe(id);
  if (app.current === id) {
    app.current = null;
    const draft = $('input')?.value.trim() ? ': what you typed is still in the box' : '';
    if (why === 'revoked') notice(`your access to “${v.name}” was removed${draft}`);
    else if (why === 'archived') notice(`“${v.name}” was archived: “archived” under the list shows it${draft}`);
    else notice(v.deleting ? `deleted “${v.name}”` : `“${v.name}” was deleted elsewhere${draft}`);
    const next = sorted()[0];
    if (next) select(next.id);
    else drawSession();
  }
  drawList();
}

function handlerFor(v) {
  return {
    reset(f) {
      v.gen++;
      v.events = [];
      v.more = f.more;
      v.stream = null;
      v.calls = new Map();
      v.history = f.head;
      if (v.id === app.current) drawSession();
    },
    event(ev) {
      v.events.push(ev);
      if (v.id !== app.current && v.events.length > MAX_SHOWN + MAX_SHOWN / 10) {
        v.events = v.events.slice(-MAX_SHOWN); // bounded for sessions not shown too
        v.more = true;
        v.gen++;
      }
      v.activity = Math.max(v.activity, Date.parse(ev.at) || 0);
      noteTool(v, ev);
      if (ev.type === 'message' && ev.role === 'assistant' && v.stream && v.stream.turn === ev.turn_id) v.stream = null;
      // A response that called tools is committed with its first call:
      // its streamed text is that call's now (a partial with none follows).
      // Not a coding agent's: its reply is the whole turn's text, which
      // streams on across its calls and is committed at the turn's end.
      if (ev.type === 'tool_call' && !isAgentCall(ev) && v.stream && v.stream.turn === ev.turn_id) v.stream = null;
      if (ev.type === 'turn' && ev.state !== 'started' && v.stream && v.stream.turn === ev.turn_id) v.stream = null;
      if (ev.type === 'turn' && ev.state === 'started') {
        v.turnSince = Date.parse(ev.at) || Date.now();
        v.turnOf = ev.turn_id;
        v.turnAuthor = { turn: ev.turn_id, name: ev.author || '' }; // who answers, in a session with participants
        v.continuing = ev.continues ? { turn: ev.turn_id, offset: ev.continues } : null; // its reply is a reply's rest (continue.js)
      }
      meterEvent(v, ev);
      if (ev.type === 'settings' && ev.title !== undefined) {
        v.session = { ...v.session, title: ev.title };
        if (v.id === app.current) drawTitle(v);
      }
      if (settingsEvent(v, ev) && v.id === app.current) drawMeta();
      if (ev.type === 'settings' && ev.archived !== undefined && ev.offset > v.history) {
        // Archived elsewhere: it leaves the list at once (brought back,
        // the feed lists it again).
        if (ev.archived) {
          forget(v.id, 'archived');
          return;
        }
        v.session = { ...v.session, archived: false };
        if (v.id === app.current) drawMeta();
      }
      // The default a session without a model uses is the session's to
      // say: read again when its model changes.
      if (ev.type === 'settings' && ev.model !== undefined && ev.offset > v.history && v.id === app.current) readAnswers(v);
      if (ev.type === 'message' && ev.offset > v.history && v.id !== app.current) v.unread++;
      if (v.id === app.current) appendEvent(v, ev);
      drawListSoon();
    },
    partial(f) {
      v.stream = { turn: f.turn_id, text: f.text };
      if (v.id === app.current) drawStreamSoon();
    },
    delta(f) {
      if (!v.stream || v.stream.turn !== f.turn_id) v.stream = { turn: f.turn_id, text: '' };
      v.stream.text += f.text;
      if (v.id === app.current) drawStreamSoon();
    },
    status(f) {
      const was = v.status;
      v.status = f;
      if (v.running && v.turnOf !== f.turn_id) {
        v.turnSince = Date.now(); // its started event, if it comes, is more exact
        v.turnOf = f.turn_id;
      }
      if (v.id === app.current) {
        drawMeta();
        drawAgent(v);
        if (v.asking && (!was || was.phase !== 'approval' || was.pending !== f.pending)) readApprovals(v);
      }
      drawListSoon();
    },
    read(f) {
      // Read up to f.offset, here or on another device.
      v.readSent = Math.max(v.readSent || 0, f.offset);
      if (v.id === app.current) return;
      const after = v.events.filter((e) => e.type === 'message' && e.offset > f.offset && e.offset > v.history).length;
      if (after < v.unread) {
        v.unread = after;
        drawListSoon();
      }
    },
    presence(f) {
      v.presence = f;
      if (v.id === app.current) drawMeta();
    },
    end(err) {
      if (err.code === 'not_found' || err.code === 'revoked') forget(v.id, err.code);
      else notice(`${v.name}: ${spoken(err)}`, true);
    },
  };
}

// paced returns a function that has fn run on an animation frame, once
// for any number of calls before it runs, and at most every ms.
function paced(fn, ms) {
  let queued = false;
  let ran = -Infinity;
  const run = () => {
    queued = false;
    ran = performance.now();
    fn();
  };
  return () => {
    if (queued) return;
    queued = true;
    const wait = ran + ms - performance.now();
    if (wait > 0) setTimeout(() => requestAnimationFrame(run), wait);
    else requestAnimationFrame(run);
  };
}

// --- the list ----------------------------------------------------------

// sorted is the sessions the list shows, newest first: not the archived
// ones, but the one open (from the archived ones, or a search hit).
function sorted() {
  return [...app.views.values()].filter((v) => !v.session.archived || v.id === app.current).sort((a, b) => b.activity - a.activity || (a.id < b.id ? 1 : -1));
}

// The list is drawn whole (a few hundred elements at most), on a frame,
// at most 4 times a second however busy the sessions are.
const drawListSoon = paced(drawList, 250);

// drawList draws the session list afresh, a line a session (listitem.js),
// each fork under its parent (listorder.js). A keyboard user's focus on
// one of its buttons stays on that session's new button: the list redraws
// on any activity, and the focus would otherwise fall back to the page.
function drawList() {
  const ul = $('sessions');
  const focused = ul.contains(document.activeElement) ? document.activeElement.closest('li')?.dataset.session : undefined;
  const look = { current: app.current, parentOf: (id) => app.views.get(id), decides: mayDecide };
  const pick = (v) => { select(v.id); app.drawer.close(); $('input')?.focus(); };
  const items = listOrder(sorted()).map(({ v, depth }) => listItem(v, depth, look, pick));
  ul.replaceChildren(...items);
  if (focused) items.find((li) => li.dataset.session === focused)?.querySelector('button').focus();
  drawAttention();
}

// mayDecide says whether this person may decide v's tool calls: an owner
// (an admin), or a member who may write in it. Viewers, guests and
// members who may only read see the calls, not the buttons.
function mayDecide(v) {
  if (app.role === 'owner') return true;
  return app.role === 'member' && (v.session.access === 'write' || v.session.access === 'creator');
}

// drawAttention tells the person that tool calls wait for their decision,
// wherever they look: the list's ☰ (the list is folded away on a phone)
// and the tab's title carry a mark while any session waits, and each
// session that starts waiting is said once, in the notice under the
// transcript and to screen readers.
function drawAttention() {
  const waiting = sorted().filter((v) => v.asking && mayDecide(v));
  const fresh = waiting.filter((v) => !app.awaiting.has(v.id));
  app.awaiting = new Set(waiting.map((v) => v.id));
  const t = $('toggle');
  t.classList.toggle('attention', waiting.length > 0);
  t.title = waiting.length ? `Sessions: ${waiting.length} wait${waiting.length === 1 ? 's' : ''} for your decision` : 'Sessions';
  if (fresh.length) {
    const text = fresh.length === 1 ? `“${fresh[0].name}”: a tool call waits for your decision` : `${fresh.length} sessions have tool calls that wait for your decision`;
    notice(text);
    app.asked = text;
    $('announce').textContent = text;
  } else if (!waiting.length && app.asked) {
    if ($('notice').textContent === app.asked) notice('');
    app.asked = '';
  }
  const v = app.views.get(app.current);
  if (v) drawTitle(v);
}

function select(id) {
  if (app.current && app.current !== id) app.client.watch(app.current, false);
  app.current = id;
  keep(id);
  const v = app.views.get(id);
  v.unread = 0;
  // The tree panel lists the session it was opened on: it goes with it,
  // and so does sharing.
  $('tree').hidden = true;
  $('tree').replaceChildren();
  closeShare();
  app.client.watch(id, true);
  versionsOpened(v);
  drawSession();
  drawList();
  if (v.asking) readApprovals(v);
  mentionList?.close();
  // Who answers comes with the session as read (the feed does not carry
  // it): read with its meter the first time, on its own after, since its
  // settings events did not come while it was not subscribed.
  if (v.meter) readAnswers(v);
  meterOpened(app.api, v, (s) => {
    takeSession(v, s);
    takeModel(v, s);
    // The feed does not carry a session's workspace: its agent's files
    // are shown relative to it once the session is read.
    if (s.workspace !== undefined && s.workspace !== v.session.workspace) {
      v.session = { ...v.session, workspace: s.workspace };
      redrawCalls(v);
    }
    if (app.current === id) drawMeta();
  });
}

// --- the transcript ----------------------------------------------------

// The transcript's own elements beside its messages: the marker of older
// messages (first), then after the events, in this order, the agent's
// thinking, the streaming reply, a command's output that has no block to
// go in, and the outbox of inputs not yet committed (last). Held here,
// never looked up by id: a message may carry the same id.
const parts = { older: null, thought: null, stream: null, output: null, outbox: null };
const LIVE = ['thought', 'stream', 'output', 'outbox'];

// part is that element if the transcript holds it now.
function part(name) {
  const el = parts[name];
  return el && el.parentNode === $('transcript') ? el : null;
}

// after is the element a new one goes before: the first of the parts
// that come after name (after all events for ''), or null (the end).
function after(name) {
  for (const p of LIVE.slice(LIVE.indexOf(name) + 1)) if (part(p)) return part(p);
  return null;
}

// looking is who looks at the transcript, as eventElement asks.
function looking() {
  return { person: app.person, you: app.you, view: app.views.get(app.current) };
}

function drawSession() {
  const v = app.views.get(app.current);
  const tr = $('transcript');
  tr.replaceChildren();
  appendQueue = []; // drawn here from the view's events, or not shown
  if (!v) {
    $('title').textContent = 'albedo';
    document.title = 'albedo';
    tr.append(Object.assign(document.createElement('p'), { className: 'older', textContent: 'No session yet.' }));
    drawPlan($('plan'), []);
    return;
  }
  drawTitle(v);
  if (v.more) tr.append(olderMarker());
  const frag = document.createDocumentFragment();
  const who = looking();
  for (const ev of v.events) {
    const el = eventElement(ev, who);
    if (el) frag.append(el);
  }
  tr.append(frag);
  drawVersions(v);
  drawReplies(v);
  drawStream();
  drawOutbox();
  drawAgent(v);
  drawMeta();
  showEnd();
}

// drawTitle names the open session in the header and the tab's title,
// when it opens and whenever it is renamed (here or elsewhere).
function drawTitle(v) {
  const n = app.awaiting.size;
  document.title = `${n ? `(${n}) decision needed · ` : ''}${v.name} · albedo`;
  $('title').textContent = v.name;
}

function olderMarker() {
  const p = document.createElement('p');
  p.className = 'older';
  p.id = 'older';
  parts.older = p;
  p.textContent = 'older messages: scroll up to load';
  return p;
}

// Events that arrive for the session shown are drawn together, on a
// frame, at most 10 times a second: each drawing lays out and paints the
// whole transcript, so a burst of events costs a few drawings a second,
// not one a frame, while a lone event is drawn on the next frame. Each
// waits with its session's id, and the drawing takes only those of the
// session shown then; drawSession, which draws a session whole from its
// view's events, empties the queue.
// So a session opened meanwhile loses none of its events, shows none
// twice, and shows none of another's.
let appendQueue = []; // {session, ev}, in arrival order
const flushSoon = paced(flushAppends, 100);
function appendEvent(v, ev) {
  appendQueue.push({ session: v.id, ev });
  flushSoon();
}

function flushAppends() {
  const v = app.views.get(app.current);
  const evs = appendQueue.filter((q) => q.session === app.current).map((q) => q.ev);
  appendQueue = [];
  if (!v || evs.length === 0) return;
  const tr = $('transcript');
  const follow = following();
  const frag = document.createDocumentFragment();
  let closes = false;
  let calls = false;
  const decided = [];
  const who = looking();
  for (const ev of evs) {
    const el = eventElement(ev, who);
    if (el) frag.append(el);
    closes = closes || ev.type === 'message' || ev.type === 'turn' || ev.type === 'tool_call';
    calls = calls || ev.type === 'tool_call';
    if (ev.type === 'approval' || ev.type === 'tool_result') decided.push(ev.call_id);
  }
  tr.insertBefore(frag, after(''));
  drawVersions(v);
  drawReplies(v);
  // A decision or a result changes its call's block, wherever it is.
  for (const id of decided) redrawCall(v, id);
  announce(v, evs);
  if (closes) drawStream();
  // A command's output shown below the reply moves into its call's
  // block once that is drawn.
  if (calls) drawAgent(v);
  if (v.asking) showPending(v);
  if (follow) {
    trim(v);
    showEnd();
  }
}

// drawReplies joins each reply that was cut off to its rest, and offers
// "continue" on the newest, if it was cut off and the person may write.
function drawReplies(v) {
  drawJoined($('transcript'), v);
  drawContinue($('transcript'), v, writable(v));
}

// announce tells screen readers of new messages, through a live region of
// its own: the transcript is a log that is redrawn whole when another
// session is opened, which must not be read out.
function announce(v, evs) {
  const said = evs.filter((e) => e.type === 'message' || e.type === 'tool_call' || e.type === 'notice').map((e) => {
    if (e.type === 'notice') return e.text || '';
    if (e.type === 'tool_call') {
      const asks = isPending(v.calls.get(e.call_id) || {}) && mayDecide(v);
      const what = isAgentCall(e) && e.title ? `${e.title} (${e.tool})` : e.tool;
      return `${e.author || 'the model'} calls ${what}${asks ? ': your decision is needed' : ''}`;
    }
    const what = [(e.text || '').slice(0, 200), e.attachments && e.attachments.length ? `(${attachmentsText(e.attachments)})` : ''].filter(Boolean).join(' ');
    return `${e.role}${e.author && e.author !== e.role ? ` ${e.author}` : ''}: ${what}`;
  });
  if (said.length) $('announce').textContent = said.join('\n');
}

// trim keeps the DOM bounded while the reader follows the end: the oldest
// messages leave it (scrolling up pages them in again).
function trim(v) {
  const tr = $('transcript');
  if (tr.getElementsByTagName('article').length <= MAX_SHOWN + MAX_SHOWN / 10) return; // cut in batches
  const shown = tr.querySelectorAll('[data-offset]');
  const cut = shown.length - MAX_SHOWN;
  const first = Number(shown[cut].dataset.offset);
  const range = document.createRange();
  range.setStartBefore(shown[0]);
  range.setEndBefore(shown[cut]);
  range.deleteContents();
  v.events = v.events.filter((e) => e.offset >= first);
  pruneCalls(v, first);
  v.more = true;
  v.gen++;
  if (!part('older')) tr.prepend(olderMarker());
}

// The streaming reply is drawn once a frame at most, whatever the rate of
// deltas; screen readers hear the committed message, not each delta. The
// events waiting to be drawn go first, so that a reply never shows before
// the message it answers.
const drawStreamSoon = paced(() => { flushAppends(); drawStream(); }, 0);

function drawStream() {
  const v = app.views.get(app.current);
  const tr = $('transcript');
  let el = part('stream');
  // An empty reply shows nothing: a response that called tools starts
  // over empty once its calls are committed (the turn may then wait for
  // decisions a long time), and its text so far shows with its calls.
  if (!v || !v.stream || !v.stream.text) {
    if (el) el.remove();
    endContinuing(tr, v);
    return;
  }
  const follow = following();
  // The rest of a reply that was cut off streams in that reply.
  if (v.continuing?.turn === v.stream.turn && drawContinuing(tr, v, v.stream.text)) {
    if (el) el.remove();
    if (follow) showEnd();
    return;
  }
  if (!el) {
    el = document.createElement('article');
    el.id = 'stream';
    el.className = 'msg streaming';
    el.dataset.role = 'assistant';
    el.setAttribute('aria-busy', 'true');
    el.append(document.createElement('header'), Object.assign(document.createElement('div'), { className: 'body' }));
    parts.stream = el;
    tr.insertBefore(el, after('stream'));
  }
  // Named as its reply will be: the participant who answers (its turn's
  // started event says), else the model.
  const who = (v.turnAuthor?.turn === v.stream.turn && v.turnAuthor.name) || v.status?.model || '';
  if (el.dataset.turn !== v.stream.turn || el.dataset.who !== who) {
    el.querySelector('header').replaceWith(header('assistant', who, '', ''));
    el.dataset.who = who;
  }
  el.dataset.turn = v.stream.turn;
  renderMarkdown(el.querySelector('.body'), v.stream.text);
  if (follow) showEnd();
}

// drawAgent shows what the open session's coding agent is doing, as its
// status says (agent.js): its plan over the composer, the running turn's
// thinking before the reply, and a command's output in its call's block,
// else after the reply. Each goes when the status no longer carries it.
function drawAgent(v) {
  const a = (v && v.status && v.status.agent) || {};
  const tr = $('transcript');
  const follow = following();
  drawPlan($('plan'), Array.isArray(a.plan) ? a.plan : []);
  let el = part('thought');
  if (!a.thought) {
    if (el) el.remove();
  } else {
    if (!el) {
      el = parts.thought = thoughtElement();
      tr.insertBefore(el, after('thought'));
    }
    setThought(el, a.thought);
  }
  const out = a.output || null;
  const inBlock = !v || drawOutput(v, out); // true too when there is none
  el = part('output');
  if (inBlock) {
    if (el) el.remove();
  } else if (el) {
    setOutput(el, out.text || '');
  } else {
    parts.output = outputElement('agent-output', out.text || '');
    tr.insertBefore(parts.output, after('output'));
  }
  if (follow) showEnd();
}

// drawOutbox shows the inputs to the open session that the daemon has
// not yet committed (typed while it is down, or on their way), in the
// order sent, after everything committed: each leaves once the daemon
// has it, and its message event takes its place.
function drawOutbox() {
  const tr = $('transcript');
  const waiting = [...app.client.pending.values()].filter((p) => p.session === app.current);
  let box = part('outbox');
  if (waiting.length === 0) {
    if (box) box.remove();
    return;
  }
  const follow = following();
  if (!box) {
    box = document.createElement('div');
    box.className = 'outbox';
    parts.outbox = box;
    tr.append(box);
  }
  box.replaceChildren(...waiting.map((p) => {
    const a = document.createElement('article');
    a.className = 'msg pending';
    a.dataset.role = 'user';
    a.append(header('user', '', app.client.state.phase === 'connected' ? 'sending…' : 'waiting for the daemon: sent when it is back', ''));
    a.append(Object.assign(document.createElement('div'), { className: 'body plain', textContent: p.text }));
    if (p.attachments && p.attachments.length) a.append(Object.assign(document.createElement('p'), { className: 'outbox-files', textContent: attachmentsText(p.attachments) }));
    return a;
  }));
  if (follow) showEnd();
}

// Scrolling to the top pages older events in, keeping the view in place.
// A page answered after the view's first event changed otherwise (a
// reset, a trim: the view's generation moved on) is older than the view
// and would leave a gap: it is dropped, and the next scroll asks again.
async function loadOlder() {
  const v = app.views.get(app.current);
  if (!v || !v.more || app.loadingOlder || v.events.length === 0) return;
  app.loadingOlder = true;
  const id = v.id;
  const gen = v.gen;
  try {
    const page = await app.api.history(id, v.events[0].offset, PAGE);
    if (app.current !== id || v.gen !== gen || v.events.length === 0) return;
    const before = page.events.filter((e) => e.offset < v.events[0].offset);
    for (const ev of before) noteTool(v, ev); // before drawing: a call paged in knows its later decision
    const tr = $('transcript');
    const height = tr.scrollHeight;
    const frag = document.createDocumentFragment();
    const who = looking();
    for (const ev of before) {
      const el = eventElement(ev, who);
      if (el) frag.append(el);
    }
    const marker = part('older');
    if (marker) marker.after(frag);
    else tr.prepend(frag);
    v.events = before.concat(v.events);
    v.more = page.more;
    if (!v.more && marker) marker.remove();
    drawVersions(v);
    drawReplies(v);
    tr.scrollTop += tr.scrollHeight - height;
  } catch (e) {
    notice(`history: ${spoken(e)}`, true);
  } finally {
    app.loadingOlder = false;
  }
}

// REVEAL_PAGES is how many pages of older history opening a hit reads.
const REVEAL_PAGES = 50;

// reveal scrolls the open session to its message at offset (after: to
// its first message after offset), reading older history back to it,
// and marks it for a moment. The session's history may still be on its
// way (a hit opened just after the page loaded): it waits for it, a
// frame at a time, for up to 5 s. A session with no message after
// offset yet shows its end.
async function reveal(id, offset, after = false) {
  const waitUntil = Date.now() + 5000;
  for (let pages = 0; app.current === id;) {
    flushAppends(); // events that came are drawn first
    const v = app.views.get(id);
    const at = after ? firstAfter(v, offset) : offset;
    const el = at !== undefined && ($('transcript').querySelector(`article[data-offset="${at}"]`) || blockAt(v, at));
    if (el) {
      el.scrollIntoView({ block: 'center' });
      el.classList.add('hit');
      setTimeout(() => el.classList.remove('hit'), 3000);
      return;
    }
    const first = v.events[0]?.offset;
    if (first === undefined || v.events[v.events.length - 1].offset < v.history || app.loadingOlder) {
      if (Date.now() > waitUntil) {
        if (after) return; // a session with no events yet
        throw new Error('the session did not load');
      }
      await new Promise((r) => requestAnimationFrame(r));
      continue;
    }
    if (after && (first <= offset + 1 || !v.more)) return;
    if (first <= offset || !v.more) throw new Error(`message ${offset} is not in what this session holds now`);
    if (pages++ >= REVEAL_PAGES) throw new Error(`message ${offset} is more than ${REVEAL_PAGES} pages back: scroll up to it`);
    await loadOlder();
  }
}

// readApprovals reads the open session's waiting calls (GET
// …/approvals): when each expires, and where the oldest is, so that one
// older than the history shown is paged in, its buttons with it.
async function readApprovals(v) {
  let list;
  try {
    list = await app.api.approvals(v.id);
  } catch {
    return; // the log still shows the calls it holds
  }
  v.expires = new Map(list.map((a) => [a.call_id, a.expires_at]));
  v.oldestPending = list.length ? Math.min(...list.map((a) => a.offset)) : 0;
  if (app.current !== v.id) return;
  redrawPending(v);
  showPending(v);
}

// showPending pages older history in until the open session's oldest
// waiting call is shown: a page opened or reattached while a call waits
// behind more history than its first page holds. It waits for that
// history to have arrived (flushAppends asks again as it does).
async function showPending(v) {
  const at = v.oldestPending;
  if (!at || app.current !== v.id || v.paging || !v.more || v.events.length === 0 || v.events[0].offset <= at) return;
  if (v.events[v.events.length - 1].offset < v.history) return;
  v.paging = true;
  try {
    for (let pages = 0; app.current === v.id && v.more && v.events.length && v.events[0].offset > at && pages < REVEAL_PAGES; pages++) {
      const first = v.events[0].offset;
      flushAppends();
      await loadOlder();
      if (v.events[0]?.offset === first) break; // paging already, or it failed: asked again at the next event
    }
  } finally {
    v.paging = false;
  }
}

// --- meta: settings, presence --------------------------------------------

function drawMeta() {
  const v = app.views.get(app.current);
  if (!v) return;
  const st = v.status || {};
  // The daemon says which provider the turns use (its default_provider
  // when the session names none); echo is for a daemon too old to say.
  const provider = v.session.resolved_provider || v.session.provider || 'echo';
  const parts = [`provider ${provider}`];
  const origin = originText(app, v);
  const up = $('parent'); // an owner's only
  if (up) Object.assign(up, { hidden: !origin, textContent: origin });
  if (v.session.archived) parts.unshift(ARCHIVED_MARK);
  const model = modelText(v);
  if (model) parts.push(`model ${model}`);
  drawModelField(v);
  if (st.effort) parts.push(`effort ${st.effort}`);
  const meter = meterText(v);
  if (meter) parts.push(meter);
  if (st.queued) parts.push(`${st.queued} queued`);
  if (st.phase === 'waiting' && provider.startsWith('bot:')) parts.push(`waiting for bot ${provider.slice(4)} to connect`);
  else if (v.asking) parts.push(`${st.pending || 'a'} tool call${st.pending > 1 ? 's' : ''} waiting for a decision · ${elapsed(v)}${writable(v) ? ' (Esc interrupts)' : ''}`);
  else if (v.running) parts.push(`${st.phase} ${elapsed(v)}${writable(v) ? ' (Esc interrupts)' : ''}`);
  $('settings').textContent = parts.join(' · ');
  drawAnswers(v, mayChange(v));
  drawActions(v);
  drawContinue($('transcript'), v, writable(v));
  const p = v.presence || { people: [], more: 0, viewers: 0 };
  const who = (p.people || []).map((x) => `${x.name}${x.devices > 1 ? ` ×${x.devices}` : ''}${x.typing ? ' ✎' : ''}`);
  if (p.more > 0) who.push(`+${p.more} more`);
  $('presence').textContent = who.length ? `watching: ${who.join(', ')}` : '';
  $('presence').dataset.viewers = String(p.viewers || 0);
  $('presence').dataset.typing = (p.people || []).filter((x) => x.typing).map((x) => x.name).join(',');
  drawComposer(v);
  // A typing mark lapses on its own unless a later push renews it.
  clearTimeout(v.typingLapse);
  if (who.some((w) => w.endsWith('✎'))) v.typingLapse = setTimeout(() => { for (const x of p.people) x.typing = false; if (v.id === app.current) drawMeta(); }, TYPING_MS);
}

// elapsed is how long v's turn has run: "5 s", "2 m 05 s". A provider
// that says nothing for a while otherwise looks like a frozen page.
function elapsed(v) {
  const d = Math.max(0, Math.floor((Date.now() - v.turnSince) / 1000));
  return d < 60 ? `${d} s` : `${Math.floor(d / 60)} m ${String(d % 60).padStart(2, '0')} s`;
}

// TYPING_MS is how long a typing mark lasts (wire.TypingMS).
const TYPING_MS = 5000;

// drawComposer makes the composer inert, and says why, in a session the
// person may only watch.
function drawComposer(v) {
  const input = $('input');
  if (!input) return;
  const readOnly = v.session.access === 'read';
  input.disabled = readOnly;
  // In a session that answers mentions only, a message with none gets no
  // reply: the box says how to ask for one.
  const mentions = v.session.respond === 'mentions' ? 'Message · @name asks for a reply · Enter sends · Shift-Enter new line' : '';
  input.placeholder = readOnly ? 'read-only: you may watch this session, not write in it' : mentions || input.dataset.placeholder || input.placeholder;
  if ($('send')) $('send').disabled = readOnly;
  uploads.setDisabled(readOnly);
  if ($('stop')) $('stop').hidden = !(v.running && writable(v));
}

// typed tells the session's other watchers that its person is writing, at
// most every TYPED_EVERY_MS while the draft changes.
const TYPED_EVERY_MS = 2000;
let typedAt = 0;
let typedIn = '';
function typed() {
  const text = $('input').value;
  if (!app.current || !text || text.startsWith('/')) return;
  const now = Date.now();
  if (app.current === typedIn && now - typedAt < TYPED_EVERY_MS) return;
  typedAt = now;
  typedIn = app.current;
  app.client.typing(app.current);
}

// READ_EVERY_MS is how often at most the page sets a read marker.
const READ_EVERY_MS = 1000;

// markRead sets the person's read marker in the open session to its end,
// while the page has the focus and its transcript follows the end: their
// other devices then count nothing before it as unread. A viewer (a
// link's) has no marker.
function markRead() {
  const v = app.views.get(app.current);
  if (!v || !document.hasFocus() || !following() || app.role === 'viewer' || app.client.state.phase !== 'connected') return;
  const last = v.events[v.events.length - 1]?.offset || 0;
  if (last <= (v.readSent || 0) || last < v.history) return;
  v.readSent = last;
  app.api.setRead(v.id, last).catch(() => { v.readSent = 0; });
}

// --- the owner's actions ------------------------------------------------

// waitsForUploads is the session a send waits to go to until the
// composer's files are uploaded ('' when none waits).
let waitsForUploads = '';

async function send() {
  const input = $('input');
  if (!app.current || (!input.value.trim() && !uploads.count())) return;
  if (uploads.busy()) {
    // Sent once every file is uploaded: what the box holds then.
    if (waitsForUploads) return;
    const session = (waitsForUploads = app.current);
    drawPending();
    const ok = await uploads.settled();
    waitsForUploads = '';
    drawPending();
    if (app.current !== session) notice('not sent: another session was opened while the files uploaded', true);
    else if (!ok) notice('not sent: a file did not upload (its chip says why): remove it, or try it again', true);
    else send();
    return;
  }
  if (uploads.failed()) {
    notice('not sent: a file did not upload (its chip says why): remove it, or try it again', true);
    return;
  }
  const text = input.value.trim() ? input.value : ''; // files alone: no text
  const { attachments, taken } = uploads.take();
  input.value = '';
  const sent = app.client.send(app.current, text, attachments); // pending from here on
  drawPending();
  drawOutbox();
  showEnd(); // what you sent, and the reply to it, wherever you had scrolled
  try {
    await sent;
    uploads.forget(taken);
  } catch (e) {
    input.value = input.value || text; // nothing typed is lost
    uploads.restore(taken); // nor anything attached
    notice(`not sent: ${spoken(e)}`, true);
  } finally {
    drawPending();
    drawOutbox();
  }
}

// drawPending says, beside Send, what is on its way.
function drawPending() {
  const pending = $('pending');
  if (!pending) return;
  const n = app.client.pending.size;
  pending.textContent = waitsForUploads ? 'sends once the files are uploaded…' : n ? `${n} sending…` : '';
}

// interrupt stops the open session's turn, if one runs and the person
// may write in it: the Stop button, and Esc from anywhere on the page.
function interrupt() {
  const v = app.views.get(app.current);
  if (v && v.running && writable(v)) act('interrupt', () => app.api.interrupt(v.id));
}

function writable(v) {
  return v.session.access !== 'read' && !!$('input');
}

// mayChange says whether this person may change v's settings (PATCH): an
// owner (an admin), or the session's creator (the daemon's rule).
function mayChange(v) {
  return app.person && (app.role === 'owner' || v.session.access === 'creator');
}

// mayCompact says whether this person may compact v: an owner, or a
// member who may write in it.
function mayCompact(v) {
  return app.person && (app.role === 'owner' || v.session.access === 'write' || v.session.access === 'creator');
}

// drawActions offers in the meta line what this person may do in v, as
// the daemon's rules say (api/auth.go): rename, settings, share and
// delete to its creator and admins, compact to those who may write, the
// tree to all. The settings and sharing close where they are not theirs.
function drawActions(v) {
  const change = mayChange(v);
  for (const id of ['rename', 'edit', 'delete', 'sharebutton']) if ($(id)) $(id).hidden = !change;
  if (!change && $('editor')) $('editor').hidden = true;
  if (!change) closeShare();
  if ($('compact')) $('compact').hidden = !mayCompact(v);
  drawPin(v);
  drawArchive(v, change);
}

// readAnswers reads who answers in v afresh (participants.js).
async function readAnswers(v) {
  try {
    const s = await app.api.session(v.id);
    takeSession(v, s);
    takeModel(v, s);
  } catch {
    return; // what the page knew stays; its settings events still come
  }
  if (app.current === v.id) drawMeta();
}

// act runs an owner's action; an error is the notice, and what the
// action says itself (forget's "deleted …") stays.
async function act(what, fn) {
  notice('');
  try {
    await fn();
  } catch (e) {
    notice(`${what}: ${spoken(e)}`, true);
  }
}

// mentionList is the composer's @ completion ({close}).
let mentionList = null;

function wireOwner() {
  const input = $('input');
  // Before the keydown that sends: Enter picks a name while its list is
  // open, and is then handled (defaultPrevented).
  mentionList = wireMentions(input, $('mentions'), () => {
    const v = app.views.get(app.current);
    return v ? mentionables(v.session) : [];
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && !e.defaultPrevented) {
      e.preventDefault();
      send();
    }
  });
  $('send').addEventListener('click', send);
  uploads.wireUploads({ token: () => app.api.token(), notice, changed: drawPending });
  $('stop').prepend(icon('stop'));
  $('stop').addEventListener('click', interrupt);
  // Esc interrupts from anywhere on the page but the list and the
  // settings, where it closes what is open.
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !e.defaultPrevented && !e.isComposing && !e.target.closest?.('#sidebar, #editor')) interrupt();
  });
  input.dataset.placeholder = input.placeholder;
  input.addEventListener('input', typed);
  wireNewSession(app.api, {
    create: async (body) => {
      const s = await app.api.create(body);
      app.wanted = s.id;
      await refresh();
      select(s.id);
      input.focus();
    },
    act,
  });
  const open = async (id, offset) => {
    if (!app.views.has(id) && !(await openByID(id))) return;
    select(id);
    if (offset) await reveal(id, offset);
  };
  wireForks({ app, act, notice, open });
  wireContinue($('transcript'), { app, act });
  wireVersions({ app, act, open, reveal: (id, p) => reveal(id, p, true) });
  wireKeeping(open);
  $('rename').addEventListener('click', () => {
    const v = app.views.get(app.current);
    const title = v && prompt('New title', v.session.title);
    if (title && title.trim()) act('rename', () => patch(v, { title: title.trim() }));
  });
  $('delete').addEventListener('click', () => {
    const v = app.views.get(app.current);
    if (!v || !confirm(`Delete “${v.name}” and all its messages?`)) return;
    v.deleting = true; // its reset may come before the reply: not "elsewhere"
    act('delete', () => app.api.remove(v.id).then(() => forget(v.id), (e) => { v.deleting = false; throw e; }));
  });
  const effort = $('effort');
  for (const level of ['', 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']) {
    effort.append(new Option(level || '(not set)', level));
  }
  $('edit').addEventListener('click', () => {
    const v = app.views.get(app.current);
    const ed = $('editor');
    ed.hidden = !ed.hidden;
    if (v && !ed.hidden) {
      $('model').value = v.status?.model ?? v.session.model ?? '';
      offerModels(app.api, v, () => !ed.hidden && app.current === v.id);
      effort.value = v.status?.effort || '';
      // The system text is the session's, which the list does not carry:
      // read first, and written in only once it is.
      const sys = $('system');
      sys.value = '';
      sys.disabled = true;
      act('settings', async () => {
        sys.value = (await app.api.session(v.id)).system || '';
        sys.disabled = false;
      });
    }
  });
  wireAnswers({ current: () => app.views.get(app.current), patch, act, drawn: drawMeta });
  wireShare({ api: app.api, act, current: () => app.views.get(app.current), admin: () => app.role === 'owner' });
  $('save').addEventListener('click', () => {
    const v = app.views.get(app.current);
    const body = { model: $('model').value.trim(), effort: effort.value };
    if (!$('system').disabled) body.system = $('system').value; // not read yet: left as it is
    if (v) act('settings', () => patch(v, body).then((s) => { takeModel(v, s); $('editor').hidden = true; drawMeta(); }));
  });
}

// wireKeeping wires pinning and archiving: the header's buttons, and the
// archived sessions under the list, each opened with open(id).
function wireKeeping(open) {
  const current = () => app.views.get(app.current);
  wirePins({ api: app.api, act, current, changed: () => { drawList(); drawMeta(); } });
  wireArchive({
    current,
    setArchived,
    act,
    open: (id) => { app.drawer.close(); return open(id); },
    may: (s) => app.role === 'owner' || s.access === 'creator',
    archivedSessions: () => app.api.sessions({ archived: true }),
  });
}

// setArchived archives s (a view, or a session as listed) or brings it
// back. Archived, it leaves the list at once, as the feed's push says
// to the person's other pages; brought back, the feed brings it back.
async function setArchived(s, on) {
  const v = app.views.get(s.id);
  await patch(v || { id: s.id, status: { etag: s.etag } }, { archived: on });
  if (on) {
    forget(s.id, 'archived');
    return;
  }
  const w = app.views.get(s.id);
  if (!w) return;
  w.session = { ...w.session, archived: false };
  drawList();
  if (w.id === app.current) drawMeta();
}

// patch changes settings with the session's ETag, once more with a fresh
// one if it was stale.
async function patch(v, body) {
  try {
    return await app.api.patch(v.id, v.status?.etag || '"0"', body);
  } catch (e) {
    if (e.code !== 'etag_mismatch') throw e;
    const s = await app.api.session(v.id);
    return app.api.patch(v.id, s.etag, body);
  }
}

// --- start ----------------------------------------------------------------

async function start() {
  // Another link pasted into this tab changes only the fragment, which
  // loads nothing: the page starts again with it (takeToken takes it
  // out of the address bar).
  window.addEventListener('hashchange', () => {
    if (new URLSearchParams(location.hash.slice(1)).get('token')) location.reload();
  });
  const { token, session, key, name } = takeToken();
  if (!token) {
    banner('Open this page with a link: `albedo open` for your sessions, or one made by `albedo share`.');
    return;
  }
  app.wanted = session;
  // With the daemon's key, HTTP calls carry the session token of this
  // boot's hello, never the page's own token (docs/security.md).
  app.api = new Api(key ? () => app.client.sessionToken : token);
  app.client = new Client({
    url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/ws`,
    token,
    key,
    guest: await guestName(token, name),
    onState: showState,
    onHello: (r) => {
      rememberName(token, app.client.guest);
      onHello(r);
    },
    onNameRefused: (why) => askName(why).then((n) => app.client.setGuest(n)),
    onSessions: () => { if (!app.person) refresh(); },
    onFeed,
  });
  window.albedo = app; // for tests and the curious: the page's state
  wireFiles({ token: () => app.api.token() });
  wireTools({
    mayDecide,
    header,
    author: shownAuthor,
    approve: (v, call, decision) => app.client.approve(v.id, call.call_id, decision),
    notice,
  });
  $('transcript').addEventListener('scroll', () => { if ($('transcript').scrollTop < 60) loadOlder(); });
  wireFollow($('transcript'));
  app.drawer = drawer($('sidebar'), $('toggle'), $('closelist'));
  $('retry').addEventListener('click', () => app.client.retryNow());
  wireSearch(app.api, {
    open: async (id, offset) => {
      if (!app.views.has(id) && !(await openByID(id))) return;
      select(id);
      app.drawer.close();
      act('open the hit', () => reveal(id, offset));
    },
    act,
  });
  if ($('input')) wireOwner();
  setInterval(() => { if (app.client.state.phase === 'connected' && !app.person) refresh(); }, REFRESH_MS);
  $('sessions').addEventListener('scroll', morePages);
  // The open session's read marker follows what the person sees.
  setInterval(markRead, READ_EVERY_MS);
  // A running turn's time, in the meta line, goes on by the second.
  setInterval(() => { if (app.views.get(app.current)?.running) drawMeta(); }, 1000);
}

start();
