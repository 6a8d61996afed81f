// albedo's websocket protocol for the browser (docs/protocol.md), with no
// knowledge of the page: one socket for every session it follows; hello
// reattaches each subscription from its own epoch and offset after any
// loss; full-jitter backoff between attempts; each event handed on once,
// in order, with no gap; inputs carry an input_id and are sent again, in
// order, until the daemon receipts them.

const SUBPROTOCOL = 'albedo.v1';
const BACKOFF_BASE_MS = 250;
// The cap of every client's backoff (docs/protocol.md; client/backoff.go).
const BACKOFF_CAP_MS = 5000;
const CLOSE_BAD_TOKEN = 4401;
// While the socket is down the daemon's /healthz is asked this often, one
// request at a time: a daemon that comes back is reached within it, not
// at the end of a backoff of up to BACKOFF_CAP_MS.
const PROBE_MS = 200;

// uuidv7 is a time-ordered UUID, the form input ids take.
export function uuidv7() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  let ms = Date.now();
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// Client is one connection to a daemon, kept up until close().
//
//   onState({phase, attempt, inMs, error}): phase is 'connecting',
//     'connected', 'reconnecting' (inMs until the next attempt),
//     'stopped' (the daemon said it was stopped on purpose, bye
//     shutdown: it is waited for as in reconnecting), 'naming' (a guest's
//     name was refused: onNameRefused), or 'revoked' (the token was
//     refused: nothing more will happen).
//   onHello(reply): each time a hello is answered (role, conn, boot).
//   onSessions(): the daemon says the list of sessions changed (one made
//     or deleted, anywhere): list them again. Asked for in every hello;
//     only an owner's connection is told.
//   onNameRefused(message): the daemon refused a guest's name (taken,
//     or not printable text): nothing more happens until setGuest
//     gives another.
//   onFeed({start, sessions, gone, revoked, next, read}): the sessions
//     feed (docs/protocol.md), asked for after every hello when given,
//     from where the last socket's left off: a first page (start: drop
//     what was held), sessions changed, sessions gone (revoked: those of
//     them whose access was taken back; the rest were deleted), or a read
//     marker set somewhere (read: the read push). Refused to tokens that list no
//     sessions: then nothing comes.
//
// A subscription's handler gets the session's pushes: reset (drop what is
// shown), event (each once, in offset order), partial, delta, status,
// presence; and end(error) when the daemon refuses or ends it (code
// not_found when the session was deleted, here or elsewhere; revoked when
// the person's access to it was removed).
export class Client {
  constructor({ url, token, key = '', name = 'albedo-web/1', guest = '', onState = () => {}, onHello = () => {}, onNameRefused = null, onSessions = () => {}, onFeed = null, feedPage = 200 }) {
    this.url = url;
    this.token = token;
    this.key = key; // the daemon's key, from the link: it proves itself before hello (prove)
    this.sessionToken = ''; // the bearer of HTTP calls, from this boot's hello
    this.name = name;
    this.guest = guest; // a write link's holder's name
    this.onState = onState;
    this.onHello = onHello;
    this.onNameRefused = onNameRefused;
    this.onSessions = onSessions;
    this.onFeed = onFeed;
    this.feedPageSize = feedPage;
    this.feedPos = ''; // the feed's newest position: a new socket resumes from it
    this.subs = new Map(); // session → {epoch, offset, watch, handler}
    this.pending = new Map(); // input_id → {session, text, attachments, resolve, reject}, in send order
    this.replies = new Map(); // command id → callback(reply)
    this.nextId = 2;
    this.ws = null;
    this.ready = false; // hello answered on the current socket
    this.attempt = 0;
    this.timer = null;
    this.closed = false;
    this.stopped = false; // the daemon said bye (shutdown): down on purpose
    this.probing = false;
    // probeDown: a probe saw the daemon refuse since the probe last cut a
    // backoff short (or a socket last connected). It outlives one run of
    // probes: a run that starts once the daemon is back already must still
    // cut the wait short.
    this.probeDown = false;
    this.probeURL = url.replace(/^ws/, 'http').replace(/\/v1\/ws$/, '/healthz');
    this.state = { phase: 'connecting' };
    this.connect();
  }

  setState(s) {
    this.state = s;
    this.onState(s);
  }

  connect() {
    this.ready = false;
    let ws;
    try {
      ws = new WebSocket(this.url, [SUBPROTOCOL]);
    } catch (e) {
      this.retry(e);
      return;
    }
    this.ws = ws;
    ws.onopen = () => (this.key ? this.prove() : this.hello());
    ws.onmessage = (m) => {
      if (ws === this.ws) this.receive(String(m.data));
    };
    ws.onclose = (e) => {
      if (ws !== this.ws || this.closed) return;
      this.ws = null;
      this.sessionToken = ''; // this boot's: the next daemon's hello gives another
      this.failReplies();
      if (e.code === CLOSE_BAD_TOKEN) {
        this.closed = true;
        this.setState({ phase: 'revoked', error: e.reason || 'the token was refused' });
        for (const p of this.pending.values()) p.reject(new Error('the token was revoked'));
        this.pending.clear();
        return;
      }
      this.retry(new Error(e.reason || `closed (${e.code})`));
    };
  }

  // retry waits a random time up to the backoff ceiling, then connects.
  retry(error, atLeastMs = 0) {
    if (this.closed) return;
    // The first attempt waits up to BACKOFF_BASE_MS, as the Go client's.
    const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(this.attempt, 16));
    this.attempt++;
    const inMs = Math.max(atLeastMs, Math.floor(Math.random() * ceiling));
    const phase = this.stopped ? 'stopped' : 'reconnecting';
    this.setState({ phase, attempt: this.attempt, inMs, at: Date.now() + inMs, error: String(error && error.message || error) });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), inMs);
    this.probe();
  }

  // setGuest connects again as a guest who goes by name, after the
  // daemon refused the one before (onNameRefused).
  setGuest(name) {
    this.guest = name;
    this.retryNow();
  }

  // retryNow connects at once, if no socket is up or on its way.
  retryNow() {
    if (this.closed || this.ws) return;
    clearTimeout(this.timer);
    this.connect();
  }

  // probe asks the daemon's /healthz every PROBE_MS while no socket is
  // up or on its way. Only an answer after a refusal (the daemon was down
  // and is back) cuts the backoff short: a daemon that answers HTTP while
  // it refuses sockets (stopping, or too busy) is waited for with the
  // backoff, not hammered. The request carries no token.
  probe() {
    if (this.probing || this.closed) return;
    this.probing = true;
    const idle = () => this.closed || this.ws;
    const tick = async () => {
      if (idle()) { this.probing = false; return; }
      let up = false;
      try {
        up = (await fetch(this.probeURL, { cache: 'no-store' })).ok;
      } catch {
        up = false;
      }
      if (idle()) { this.probing = false; return; }
      if (!up) this.probeDown = true;
      else if (this.probeDown) {
        this.probeDown = false; // the attempt this makes needs a refusal seen again to be cut short
        this.probing = false;
        this.retryNow();
        return;
      }
      setTimeout(tick, PROBE_MS);
    };
    setTimeout(tick, PROBE_MS);
  }

  // prove asks the daemon to prove it holds the link's key, with a fresh
  // nonce, before the page hands it its token: a process that took the
  // port while the daemon was down cannot, and learns nothing.
  prove() {
    const nonce = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
    const sent = this.ws;
    this.command({ op: 'prove', nonce }, async (r) => {
      let ok = false;
      try {
        ok = r.ok && (await proofOf(this.key, nonce)) === r.proof;
      } catch (e) {
        ok = false;
      }
      if (sent !== this.ws) return;
      if (ok) {
        this.hello();
        return;
      }
      this.stopped = false; // something answers now, and it is not our daemon
      this.drop();
      this.retry(new Error('what answers at this address is not your daemon: it did not prove itself'));
    }, true);
  }

  hello() {
    const subs = [...this.subs.entries()].map(([session, s]) => this.subBody(session, s));
    this.command({ op: 'hello', token: this.token, client: this.name, ...(this.guest ? { name: this.guest } : {}), subs, sessions: true }, (r) => {
      if (!r.ok) {
        // The daemon keeps a socket whose hello it refused open (only a
        // bad token closes it): close it before trying on a new one.
        this.drop();
        if (this.guest && r.error && r.error.code === 'bad_request' && this.onNameRefused) {
          // The same name would be refused again: the person picks another.
          this.setState({ phase: 'naming', error: r.error.message });
          this.onNameRefused(r.error.message);
          return;
        }
        this.retry(new Error(r.error ? r.error.message : 'hello refused'));
        return;
      }
      this.ready = true;
      this.attempt = 0;
      this.probeDown = false;
      this.stopped = false;
      this.sessionToken = r.session_token || '';
      (r.subs || []).forEach((sr, i) => this.subReplied(subs[i].session, sr));
      this.onHello(r);
      if (this.onFeed && (r.role === 'owner' || r.role === 'member')) this.startFeed();
      this.setState({ phase: 'connected' });
      for (const [id, p] of this.pending) this.sendInput(id, p);
    }, true);
  }

  // startFeed asks for the sessions feed, resuming from feedPos.
  startFeed() {
    this.command({ op: 'feed', ...(this.feedPos ? { pos: this.feedPos } : {}), limit: this.feedPageSize }, (r) => {
      if (!r.ok || !r.feed) return;
      if (r.feed.pos) this.feedPos = r.feed.pos;
      if (!r.feed.resumed) this.onFeed({ start: true, sessions: r.feed.sessions || [], gone: [], revoked: [], next: r.feed.next || '' });
    });
  }

  // feedPage reads the page of the feed after cursor (a page's next).
  feedPage(cursor) {
    return new Promise((resolve, reject) => {
      const sent = this.command({ op: 'feed_page', cursor, limit: this.feedPageSize }, (r) => {
        if (r.ok && r.feed) resolve(r.feed);
        else reject(new Error(r.error ? r.error.message : 'no page'));
      });
      if (!sent) reject(new Error('not connected'));
    });
  }

  subBody(session, s) {
    const b = { session };
    if (s.epoch) {
      b.epoch = s.epoch;
      b.after = s.offset;
    }
    if (!s.watch) b.watch = false;
    return b;
  }

  // command sends one frame with a fresh id; force sends before hello.
  command(body, onReply, force = false) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || (!this.ready && !force)) return false;
    const id = body.op === 'hello' ? 1 : this.nextId++;
    if (onReply) this.replies.set(id, onReply);
    this.ws.send(JSON.stringify({ id, ...body }));
    return true;
  }

  failReplies() {
    // Replies of a lost socket never come. Inputs stay pending and are
    // sent again; subscriptions are in the next hello; a command that
    // waits for its answer otherwise (approve) is told (its lost).
    const lost = [...this.replies.values()];
    this.replies.clear();
    for (const cb of lost) if (cb.lost) cb.lost();
  }

  // drop closes the current socket on purpose: its close is no news.
  drop() {
    const ws = this.ws;
    this.ws = null;
    this.ready = false;
    if (ws) ws.close();
    this.failReplies();
  }

  receive(data) {
    for (const line of data.split('\n')) {
      if (!line) continue;
      let f;
      try {
        f = JSON.parse(line);
      } catch {
        continue;
      }
      if (f.id !== undefined && f.op === undefined) {
        const cb = this.replies.get(f.id);
        this.replies.delete(f.id);
        if (cb) cb(f);
        continue;
      }
      this.push(f);
    }
  }

  push(f) {
    if (f.op === 'sessions') {
      this.onSessions();
      return;
    }
    if (f.op === 'feed') {
      if (f.pos) this.feedPos = f.pos;
      if (this.onFeed) this.onFeed({ start: false, sessions: f.sessions || [], gone: f.gone || [], revoked: f.revoked || [], next: '' });
      return;
    }
    if (f.op === 'read' && this.onFeed) this.onFeed({ start: false, sessions: [], gone: [], revoked: [], next: '', read: f });
    if (f.op === 'bye') {
      // The daemon stops: reconnect no sooner than it says. A stop on
      // purpose (albedo stop) is said as such until a daemon is back.
      this.stopped = f.reason === 'shutdown';
      this.drop();
      this.retry(new Error(f.reason || 'daemon stopping'), f.retry_after_ms || 0);
      return;
    }
    const s = this.subs.get(f.session);
    if (!s) return;
    switch (f.op) {
      case 'reset':
        if (f.reason === 'deleted' || f.reason === 'revoked') {
          // The session is gone, or this person's access to it was taken
          // back, and the daemon has dropped this subscription
          // (docs/protocol.md, "Pushes"): it ends here, as a refused one
          // does.
          this.subs.delete(f.session);
          s.handler.end(f.reason === 'deleted' ? { code: 'not_found', message: 'the session was deleted' } : { code: 'revoked', message: 'your access to the session was removed' });
          return;
        }
        s.epoch = f.epoch;
        s.offset = f.before;
        s.handler.reset(f);
        return;
      case 'event': {
        const off = f.event.offset;
        if (off <= s.offset) return; // already handed on: never twice
        if (off !== s.offset + 1) {
          // Never expected (pushes are contiguous); if it happens, ask
          // again from what was handed on, rather than leave a gap.
          this.resubscribe(f.session);
          return;
        }
        s.offset = off;
        s.handler.event(f.event);
        return;
      }
      default:
        if (s.handler[f.op]) s.handler[f.op](f);
    }
  }

  subReplied(session, r) {
    const s = this.subs.get(session);
    if (!s) return;
    if (!r.ok) {
      this.subs.delete(session);
      s.handler.end(r.error || { code: 'unknown', message: 'subscription refused' });
    }
  }

  // subscribe follows a session; watch false keeps this client out of the
  // session's viewers (a list that follows many sessions watches one).
  subscribe(session, handler, { watch = true } = {}) {
    const s = { epoch: '', offset: 0, watch, handler };
    this.subs.set(session, s);
    this.command({ op: 'sub', ...this.subBody(session, s) }, (r) => this.subReplied(session, r));
  }

  resubscribe(session) {
    const s = this.subs.get(session);
    if (s) this.command({ op: 'sub', ...this.subBody(session, s) }, (r) => this.subReplied(session, r));
  }

  watch(session, on) {
    const s = this.subs.get(session);
    if (!s || s.watch === on) return;
    s.watch = on;
    this.command({ op: 'watch', session, watch: on });
  }

  // typing says the person is writing in a session (presence shows it);
  // dropped while not connected.
  typing(session) {
    if (this.subs.has(session)) this.command({ op: 'typing', session });
  }

  // approve decides a tool call that waits for people (docs/protocol.md,
  // "Approvals"): it resolves with the committed approval event, and
  // rejects with the daemon's code (conflict: decided already; forbidden)
  // or unavailable when no socket carried it to an answer. A decision
  // is not sent again: whether one cut short was made, the approval event
  // (or its absence) says.
  approve(session, callID, decision, reason = '') {
    return new Promise((resolve, reject) => {
      const fail = (message, code) => reject(Object.assign(new Error(message), { code }));
      const cb = (r) => {
        if (r.ok) resolve(r.event);
        else fail(r.error ? r.error.message : 'refused', r.error && r.error.code);
      };
      cb.lost = () => fail('the connection was lost before the daemon answered: if the call still waits, decide again', 'unavailable');
      if (!this.command({ op: 'approve', session, call_id: callID, decision, ...(reason ? { reason } : {}) }, cb)) {
        fail('not connected to the daemon: decide again once it is back', 'unavailable');
      }
    });
  }

  unsubscribe(session) {
    if (this.subs.delete(session)) this.command({ op: 'unsub', session });
  }

  // send submits an input; it resolves with the receipt once the daemon
  // has committed it, across reconnections (the same input_id each time).
  // attachments are files uploaded first ([{sha256, name}], at most 16):
  // text may then be empty.
  send(session, text, attachments = []) {
    const id = uuidv7();
    return new Promise((resolve, reject) => {
      const p = { session, text, attachments, resolve, reject };
      this.pending.set(id, p);
      if (this.ready) this.sendInput(id, p);
    });
  }

  sendInput(id, p) {
    const ws = this.ws;
    const files = p.attachments && p.attachments.length ? { attachments: p.attachments } : {};
    this.command({ op: 'send', session: p.session, input_id: id, text: p.text, ...files }, (r) => {
      if (!r.ok && r.error && r.error.code === 'unavailable') {
        // The daemon's store failed for now and nothing was written: the
        // same connection sends it again after a backoff.
        p.tries = (p.tries || 0) + 1;
        setTimeout(() => {
          if (this.ws === ws && this.ready && this.pending.get(id) === p) this.sendInput(id, p);
        }, Math.min(100 * 2 ** (p.tries - 1), 3000));
        return;
      }
      if (!r.ok && r.error && r.error.retryable) return; // the next connection sends it again
      this.pending.delete(id);
      if (r.ok) p.resolve(r.receipt);
      else p.reject(Object.assign(new Error(r.error ? r.error.message : 'refused'), { code: r.error && r.error.code }));
    });
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close();
  }
}

// PROOF_CONTEXT is what the daemon's proof covers besides the nonce
// (wire.ProofContext).
const PROOF_CONTEXT = 'albedo-prove-v1:';

// proofOf is the proof a daemon holding key (hex) gives for nonce:
// hex(HMAC-SHA256(key, PROOF_CONTEXT + nonce)).
async function proofOf(key, nonce) {
  const raw = new Uint8Array(key.match(/../g).map((h) => parseInt(h, 16)));
  const k = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', k, new TextEncoder().encode(PROOF_CONTEXT + nonce));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

// Api is the daemon's HTTP API with a token: token() says which, at each
// call (a page whose daemon proves itself sends this boot's session token,
// never its own).
export class Api {
  // pageSize is how many sessions sessions() asks for a page.
  static pageSize = 1000;

  constructor(token) {
    this.token = typeof token === 'function' ? token : () => token;
  }

  async call(method, path, { body, headers = {} } = {}) {
    const token = this.token();
    if (!token) throw Object.assign(new Error('not connected to the daemon yet'), { code: 'unavailable', status: 0 });
    const init = { method, headers: { Authorization: `Bearer ${token}`, ...headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers['Content-Type'] = 'application/json';
    }
    const r = await fetch(path, init);
    const text = await r.text();
    const data = text ? JSON.parse(text) : null;
    if (!r.ok) {
      const e = (data && data.error) || { code: String(r.status), message: r.statusText };
      throw Object.assign(new Error(e.message), { code: e.code, status: r.status });
    }
    return { data, etag: r.headers.get('ETag') };
  }

  // sessions reads the whole list a page at a time (the daemon answers at
  // most 1 000 a page), in the order of the sessions' ids, which activity
  // does not change: a session that exists throughout is read once.
  // filter is the list's own: {archived: true} for the archived alone.
  async sessions(filter = {}) {
    const all = [];
    const seen = new Set();
    let after = '';
    for (;;) {
      const q = new URLSearchParams({ limit: String(Api.pageSize) });
      if (after) q.set('after', after);
      if (filter.archived !== undefined) q.set('archived', String(filter.archived));
      const { data } = await this.call('GET', `/v1/sessions?${q}`);
      // A page of nothing new ends the walk: a server that ignores after
      // (one older than pages) answers the first page again.
      let fresh = 0;
      for (const s of data.sessions) {
        if (seen.has(s.id)) continue;
        seen.add(s.id);
        all.push(s);
        fresh++;
      }
      if (!data.next || fresh === 0) return all;
      after = data.next;
    }
  }
  session(id) { return this.call('GET', `/v1/sessions/${encodeURIComponent(id)}`).then((r) => r.data); }
  create(body) { return this.call('POST', '/v1/sessions', { body }).then((r) => r.data); }
  patch(id, etag, body) { return this.call('PATCH', `/v1/sessions/${encodeURIComponent(id)}`, { body, headers: { 'If-Match': etag } }).then((r) => r.data); }
  remove(id) { return this.call('DELETE', `/v1/sessions/${encodeURIComponent(id)}`); }
  providers() { return this.call('GET', '/v1/providers').then((r) => r.data); }
  // models are what the provider's API lists, for a model picker:
  // {provider, default?, models: [{id, name?}]}.
  models(provider) { return this.call('GET', `/v1/providers/${encodeURIComponent(provider)}/models`).then((r) => r.data); }
  // pin and unpin mark a session for this person, on every device.
  pin(id) { return this.call('PUT', `/v1/sessions/${encodeURIComponent(id)}/pin`); }
  unpin(id) { return this.call('DELETE', `/v1/sessions/${encodeURIComponent(id)}/pin`); }
  search(q, { session = '', after = '', limit = 50 } = {}) {
    const p = new URLSearchParams({ q, limit: String(limit) });
    if (session) p.set('session', session);
    if (after) p.set('after', after);
    return this.call('GET', `/v1/search?${p}`).then((r) => r.data);
  }
  // approvals are the session's calls that wait for a decision (with
  // their offsets and expiry), oldest first.
  approvals(id) { return this.call('GET', `/v1/sessions/${encodeURIComponent(id)}/approvals`).then((r) => r.data.approvals || []); }
  bots() { return this.call('GET', '/v1/bots').then((r) => r.data.bots); }
  // forks are the sessions forked from id that the token may read, by
  // fork point and then age.
  forks(id) { return this.call('GET', `/v1/sessions/${encodeURIComponent(id)}/forks`).then((r) => r.data.forks || []); }
  setRead(id, offset) { return this.call('PUT', `/v1/sessions/${encodeURIComponent(id)}/read`, { body: { offset } }); }
  interrupt(id) { return this.call('POST', `/v1/sessions/${encodeURIComponent(id)}/interrupt`).then((r) => r.data); }
  // before: a page of events older than that offset.
  history(id, before, limit = 100) {
    return this.call('GET', `/v1/sessions/${encodeURIComponent(id)}/events?before=${before}&limit=${limit}`).then((r) => r.data);
  }
}
