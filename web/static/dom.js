// The page's own elements, looked up by id once, when the module loads:
// before any message is drawn. A message's HTML may carry an id too
// (DOMPurify prefixes them, SANITIZE_NAMED_PROPS, but the page does not
// rely on that alone): document.getElementById would return the first in
// the tree, which for the composer or the notice below the transcript is
// the message's. An element the page removed (a viewer's composer) is
// null.

const own = new Map();
for (const el of document.querySelectorAll('[id]')) own.set(el.id, el);

// $ is the page's element with that id, or null if it has none (or removed it).
export function $(id) {
  const el = own.get(id);
  return el && el.isConnected ? el : null;
}
