// @ completion in the composer. A message mentions a participant with
// @NAME (docs/protocol.md, "Participants"); typing "@" and the start of a
// name at a mention position offers the open session's mentionable names
// in a list over the composer: its provider (so that even a session with
// no participants shows the syntax) and its participants. ArrowUp and
// ArrowDown move, Enter or Tab (or a click) puts "@name " in place of what
// was typed, Esc closes the list. While the list is open, Enter does not
// send: the composer's own keydown sees it handled (defaultPrevented).

// nameChar is a character a name is made of, as wire.Mentions reads
// them: letters, digits, "._-", and anything beyond ASCII (Go's bytes of
// a multibyte character are all ≥ 0x80, as a UTF-16 unit beyond ASCII is).
function nameChar(c) {
  return /[A-Za-z0-9_.-]/.test(c) || c.charCodeAt(0) >= 0x80;
}

// mentionAt finds the mention the caret is in: an "@" at the start of text
// or after a character that is no name's, then name characters up to the
// caret. It returns where the mention starts (its "@") and ends (past the
// name characters after the caret too), and what of the name is typed
// before the caret; null when the caret is in none.
export function mentionAt(text, caret) {
  let i = caret;
  while (i > 0 && nameChar(text[i - 1])) i--;
  if (i === 0 || text[i - 1] !== '@') return null;
  const at = i - 1;
  if (at > 0 && nameChar(text[at - 1])) return null; // an e-mail address, say
  let end = caret;
  while (end < text.length && nameChar(text[end])) end++;
  return { start: at, end, partial: text.slice(i, caret) };
}

// mentionName is how a message mentions a participant: a bot's name
// without its "bot:" (wire.MentionName).
export function mentionName(p) {
  return p.startsWith('bot:') ? p.slice(4) : p;
}

// mentionables are the names a message in session s may mention: its
// provider's first, then its participants', each once.
export function mentionables(s) {
  const all = [s.resolved_provider || s.provider || 'echo', ...(s.participants || [])].map(mentionName);
  return all.filter((n, i) => n && all.findIndex((m) => m.toLowerCase() === n.toLowerCase()) === i);
}

// wireMentions wires the completion to the textarea input and the listbox
// list; names() is the open session's mentionables. It must be wired
// before the composer's own keydown (which sends on Enter), so that its
// keys are handled first.
export function wireMentions(input, list, names) {
  let shown = []; // the names listed
  let active = 0; // the one Enter takes
  let at = null; // the mention being completed
  let dismissed = -1; // where the mention Esc closed the list on starts

  const close = () => {
    shown = [];
    at = null;
    list.hidden = true;
    list.replaceChildren();
    input.removeAttribute('aria-activedescendant');
  };

  const draw = () => {
    list.replaceChildren(...shown.map((name, i) => {
      const li = document.createElement('li');
      li.id = `mention-${i}`;
      li.setAttribute('role', 'option');
      li.setAttribute('aria-selected', String(i === active));
      li.dataset.name = name;
      li.textContent = `@${name}`;
      return li;
    }));
    list.hidden = false;
    // Over the box itself (the composer, its offset parent, holds the
    // paperclip before it), never wider than the box.
    list.style.left = `${input.offsetLeft}px`;
    list.style.maxWidth = `${input.offsetWidth}px`;
    input.setAttribute('aria-activedescendant', `mention-${active}`);
    list.children[active]?.scrollIntoView({ block: 'nearest' });
  };

  // update opens, narrows or closes the list for where the caret is now.
  const update = () => {
    const m = input.selectionStart === input.selectionEnd ? mentionAt(input.value, input.selectionStart) : null;
    if (!m || m.start === dismissed) return close();
    const typed = m.partial.toLowerCase();
    const match = names().filter((n) => n.toLowerCase().startsWith(typed));
    if (!match.length) return close();
    const was = shown[active];
    at = m;
    shown = match;
    active = Math.max(0, match.indexOf(was)); // the choice stays while it still matches
    draw();
  };

  // take puts "@name " in place of the mention, its caret after the space
  // (an existing space after it is kept, not doubled).
  const take = (name) => {
    if (!at) return;
    const { start, end } = at;
    const spaced = /\s/.test(input.value[end] || '');
    input.setRangeText(`@${name}${spaced ? '' : ' '}`, start, end, 'end');
    if (spaced) input.selectionStart = input.selectionEnd = input.selectionStart + 1;
    close();
    dismissed = -1;
    input.focus();
    // Others listen to the draft (the typing mark); this is typing too.
    input.dispatchEvent(new Event('input', { bubbles: true }));
  };

  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-controls', list.id);
  input.addEventListener('input', () => {
    dismissed = -1; // typing again asks again
    update();
  });
  // The caret moved without typing: a click, Home, End, the arrows when
  // the list is closed.
  input.addEventListener('click', update);
  input.addEventListener('keyup', (e) => {
    if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key) || (list.hidden && (e.key === 'ArrowUp' || e.key === 'ArrowDown'))) update();
  });
  input.addEventListener('blur', close);
  input.addEventListener('keydown', (e) => {
    if (list.hidden || e.isComposing || e.altKey || e.ctrlKey || e.metaKey) return;
    const move = (d) => {
      e.preventDefault();
      active = (active + d + shown.length) % shown.length;
      draw();
    };
    if (e.key === 'ArrowDown') move(1);
    else if (e.key === 'ArrowUp') move(-1);
    else if ((e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey) {
      e.preventDefault();
      take(shown[active]);
    } else if (e.key === 'Escape') {
      e.preventDefault(); // not the page's Esc, which stops a turn
      dismissed = at ? at.start : -1;
      close();
    }
  });
  // A press on an item keeps the focus (and so the caret) in the box.
  list.addEventListener('mousedown', (e) => e.preventDefault());
  list.addEventListener('click', (e) => {
    const li = e.target.closest?.('li[role=option]');
    if (li) take(li.dataset.name);
  });
  close();
  return { close };
}
