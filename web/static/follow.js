// Following the transcript's end: while the reader is at the end, what
// comes is shown as it comes. Whether they are is what they last did
// (scrolled to the end, or away from it), not where the view happens to
// be: a transcript that shrinks (a phone's keyboard opening, devtools, the
// composer's files) or grows by a redraw leaves the view short of the end
// without the reader having moved, and it keeps following.

let tr = null;
let stuck = true; // the reader is at the end, as far as they said
let lastTop = 0; // scrollTop at the last scroll

// NEAR is how close to the end a scroll must stop to follow it.
const NEAR = 40;

function near() {
  return tr.scrollHeight - tr.scrollTop - tr.clientHeight < NEAR;
}

// wireFollow watches the transcript el: its scrolls say whether the reader
// follows (a scroll to the end does; one up, away from it, does not), and
// a resize while they do shows the end again.
export function wireFollow(el) {
  tr = el;
  tr.addEventListener('scroll', () => {
    if (near()) stuck = true;
    else if (tr.scrollTop < lastTop) stuck = false;
    lastTop = tr.scrollTop;
  });
  new ResizeObserver(() => { if (stuck) tr.scrollTop = tr.scrollHeight; }).observe(tr);
}

// following says whether the transcript follows its end.
export function following() {
  return stuck;
}

// showEnd shows the transcript's end, and follows it from there.
export function showEnd() {
  tr.scrollTop = tr.scrollHeight;
  stuck = true;
}
