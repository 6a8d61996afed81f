// The session list as a drawer on narrow screens (style.css folds it off
// the left edge below 640 px). Closed, it is inert as well as out of
// sight: Tab never lands on a button nobody can see, and screen readers
// skip it. The toggle's aria-expanded says whether it is open. Open, it
// covers the toggle, so it closes from its own ✕, with Esc, or with a tap
// anywhere outside it (on the transcript it leaves in view). Wide, the
// list is always shown and never inert.

const NARROW = '(max-width: 640px)'; // as style.css's @media

// drawer wires the toggle and the close button to the sidebar and returns
// {close}.
export function drawer(sidebar, toggle, closer) {
  const narrow = matchMedia(NARROW);
  const isOpen = () => sidebar.classList.contains('open');
  const set = (open) => {
    sidebar.classList.toggle('open', open);
    toggle.setAttribute('aria-expanded', String(open));
    sidebar.inert = narrow.matches && !open;
  };
  toggle.addEventListener('click', () => {
    const open = !isOpen();
    set(open);
    // Opened from the keyboard or not, the focus goes where the list is.
    if (open) (sidebar.querySelector('li.current button') || sidebar.querySelector('#sessions button') || closer)?.focus();
  });
  const shut = () => {
    set(false);
    toggle.focus();
  };
  closer.addEventListener('click', shut);
  sidebar.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && narrow.matches && isOpen()) {
      e.preventDefault();
      shut();
    }
  });
  // A tap outside the open drawer closes it (the toggle's own click
  // toggles it).
  document.addEventListener('pointerdown', (e) => {
    if (narrow.matches && isOpen() && !sidebar.contains(e.target) && !toggle.contains(e.target)) set(false);
  });
  narrow.addEventListener('change', () => set(false));
  set(false);
  return { close: () => set(false) };
}
