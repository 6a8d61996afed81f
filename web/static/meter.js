// The context meter and the cost so far, in the meta line: how full the
// model's context window was at the last turn (its closing event's
// context, the daemon's count, which compaction goes by, against the
// window) and what the session's turns and
// compactions cost. The window and the cost to date come with the session
// (GET, once it is opened); each turn's end and compaction adds its own.

// meterOpened reads the session's window and cost to date, once; then
// calls drawn with the session as read (what else of it the page wants,
// its workspace, comes with it).
export async function meterOpened(api, v, drawn) {
  if (v.meter) return;
  // countedTo: the newest event whose cost is counted, in the session's
  // total or since (a replayed one is not again). Nothing is counted
  // until the total is read: the history may come before it or after.
  v.meter = { window: 0, fill: 0, cost: 0, priced: false, countedTo: Infinity };
  try {
    const s = await api.session(v.id);
    v.meter.window = s.context_tokens || 0;
    if (s.usage && s.usage.cost != null) Object.assign(v.meter, { cost: s.usage.cost, priced: true });
    // The total holds every event up to the session's head as the GET
    // read it; what came since, it does not.
    v.meter.countedTo = s.head || 0;
    for (const ev of v.events) if (ev.offset > v.meter.countedTo) meterEvent(v, ev);
    for (let i = v.events.length - 1; i >= 0; i--) {
      const ev = v.events[i];
      if (ev.type === 'turn' && ev.context) {
        v.meter.fill = ev.context;
        break;
      }
    }
    drawn(s);
  } catch {
    v.meter = null; // asked again when the session is opened again
  }
}

// meterEvent counts a turn's end or a compaction that came after the
// session's totals were read.
export function meterEvent(v, ev) {
  if (!v.meter) return;
  if (ev.type === 'turn' && ev.context) v.meter.fill = ev.context;
  if (!ev.usage || (ev.type !== 'turn' && ev.type !== 'compaction')) return;
  if (ev.usage.cost != null && ev.offset > v.meter.countedTo) {
    v.meter.countedTo = ev.offset;
    v.meter.cost += ev.usage.cost;
    v.meter.priced = true;
  }
}

// meterText is the meta line's word on the meter: "ctx 12.3k/200k (6%) ·
// $0.0123", what of it is known.
export function meterText(v) {
  const m = v.meter;
  if (!m) return '';
  const out = [];
  if (m.window > 0 && m.fill > 0) out.push(`ctx ${tokens(m.fill)}/${tokens(m.window)} (${Math.floor((m.fill * 100) / m.window)}%)`);
  if (m.priced) out.push(`$${m.cost.toFixed(4)}`);
  return out.join(' · ');
}

function tokens(n) {
  if (n >= 999500) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 100000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}
