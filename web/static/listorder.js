// The session list's order: what the person pinned first (a pinned
// fork too, out from under its parent), each fork under its parent, where
// the list holds the parent, the rest at the top level. Families go by their
// latest activity (a fork's new message brings its parent's family up
// with it), and so do the forks under a session.

// DEEPEST is the deepest indentation shown: forks of forks further down
// are indented no more.
export const DEEPEST = 4;

// listOrder returns the views, given newest first, as the list shows
// them: [{v, depth}], each fork right after its parent, depth 1 deeper.
export function listOrder(views) {
  const byId = new Map(views.map((v) => [v.id, v]));
  const under = new Map(); // id → its forks in the list
  const top = [];
  for (const v of views) {
    const p = v.session.parent?.session;
    if (p && p !== v.id && byId.has(p) && !v.pinned) {
      if (!under.has(p)) under.set(p, []);
      under.get(p).push(v);
    } else {
      top.push(v);
    }
  }
  const latest = new Map(); // id → the latest activity of it and its forks
  const late = (v) => {
    if (!latest.has(v.id)) {
      latest.set(v.id, v.activity); // first: a loop of parents ends here
      latest.set(v.id, Math.max(v.activity, ...(under.get(v.id) || []).map(late)));
    }
    return latest.get(v.id);
  };
  const byLatest = (list) => list.map((v) => [late(v), v]).sort((a, b) => b[0] - a[0]).map(([, v]) => v);
  const out = [];
  const placed = new Set();
  const walk = (v, depth) => {
    if (placed.has(v.id)) return;
    placed.add(v.id);
    out.push({ v, depth });
    for (const f of byLatest(under.get(v.id) || [])) walk(f, depth + 1);
  };
  // What the person pinned comes first, each with its forks under it.
  const tops = byLatest(top);
  for (const v of [...tops.filter((t) => t.pinned), ...tops.filter((t) => !t.pinned)]) walk(v, 0);
  // Sessions whose parents make a loop (never from the daemon) reach the
  // top level rather than go missing.
  for (const v of views) walk(v, 0);
  return out;
}
