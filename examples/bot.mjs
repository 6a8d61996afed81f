// A bot in plain JavaScript, with nothing but the WebSocket built into
// Node (22 and up; Node 20 with --experimental-websocket) or a browser:
// it serves the turns of sessions whose provider is bot:NAME and answers
// each with the length of the question. docs/bots.md walks through it.
//
//   ALBEDO_WS=ws://127.0.0.1:PORT/v1/ws ALBEDO_BOT_TOKEN=albot_… node bot.mjs
//
// It reconnects on error as well as on close, once per socket: when a
// balancer answers the upgrade with 503 (a node draining, none up), Node's
// WebSocket fires error and never close, and a bot that waits for close
// waits for ever.

const url = process.env.ALBEDO_WS;
const token = process.env.ALBEDO_BOT_TOKEN;
let attempt = 0;

function connect() {
  const ws = new WebSocket(url, 'albedo.v1');
  let over = false;
  const again = (why) => {
    if (over) return; // error and close may both come: one reconnect
    over = true;
    // Full jitter: the first delay at most 250 ms, the cap 5 s.
    const delay = Math.random() * Math.min(5000, 250 * 2 ** attempt++);
    console.error(`albedo: ${why}; again in ${Math.round(delay)} ms`);
    setTimeout(connect, delay);
  };
  ws.onerror = () => again('connection failed');
  ws.onclose = (e) => {
    if (e.code === 4401) {
      over = true; // a revoked token: trying again will not help
      console.error('albedo: token refused');
      return;
    }
    again(`closed (${e.code})`);
  };
  ws.onopen = () => {
    ws.send(JSON.stringify({ id: 1, op: 'hello', token, client: 'bot.mjs/1' }));
    ws.send(JSON.stringify({ id: 2, op: 'serve' }));
  };
  let id = 2;
  const replies = new Map(); // id → a reply not answered yet, to send again
  const reply = (r, tries = 0) => {
    const rid = ++id;
    replies.set(rid, { r, tries });
    ws.send(JSON.stringify({ id: rid, op: 'reply', ...r }));
  };
  ws.onmessage = (m) => {
    for (const line of String(m.data).split('\n')) {
      if (!line) continue;
      const f = JSON.parse(line);
      if (f.id === 2 && f.ok) {
        attempt = 0; // serving: the next drop starts the backoff over
        console.error('albedo: serving');
      }
      const sent = replies.get(f.id);
      if (sent) {
        replies.delete(f.id);
        // The daemon's store failed for now, and nothing was written:
        // send the reply again after a backoff, on this socket.
        if (f.error?.code === 'unavailable' && !over) {
          setTimeout(() => !over && reply(sent.r, sent.tries + 1), Math.min(3000, 100 * 2 ** sent.tries));
        }
      }
      if (f.op !== 'turn') continue;
      const question = f.messages.at(-1)?.text ?? '';
      const text = `Your message has ${question.length} characters.`;
      reply({ turn_id: f.turn_id, text, done: true });
    }
  };
}

connect();
