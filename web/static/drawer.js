// The session list as a drawer on narrow screens (style.css folds it off
// the left edge below 640 px). Closed, it is inert as well as out of
// sight: Tab never lands on a button nobody can see, and screen readers
// skip it. The toggle's aria-expanded says whether it is open. Wide, the
// list is always shown and never inert.

const NARROW = '(max-width: 640px)'; // as style.css's @media

// drawer wires the toggle to the sidebar and returns {close}.
export function drawer(sidebar, toggle) {
  const narrow = matchMedia(NARROW);
  const set = (open) => {
    sidebar.classList.toggle('open', open);
    toggle.setAttribute('aria-expanded', String(open));
    sidebar.inert = narrow.matches && !open;
  };
  toggle.addEventListener('click', () => {
    const open = !sidebar.classList.contains('open');
    set(open);
    // Opened from the keyboard or not, the focus goes where the list is.
    if (open) (sidebar.querySelector('li.current button') || sidebar.querySelector('button'))?.focus();
  });
  sidebar.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && narrow.matches && sidebar.classList.contains('open')) {
      set(false);
      toggle.focus();
    }
  });
  narrow.addEventListener('change', () => set(false));
  set(false);
  return { close: () => set(false) };
}
