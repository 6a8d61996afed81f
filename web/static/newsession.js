// "+ new": the owner picks the new session's provider, as the terminal's
// `/new PROVIDER` takes one. The choices offered are what the page can
// know the daemon runs: echo (built in), the providers of its sessions,
// and bot:NAME for each of its bots (GET /v1/bots); any other name can be
// typed (a profile of config.toml no session uses yet), and empty is the
// daemon's default. A name the daemon cannot run is refused with the
// profiles it has, which the page shows.

const $ = (id) => document.getElementById(id);

// wireNewSession wires the button, the form and its choices. seen() lists
// the providers of the sessions shown; create(body) makes the session
// and opens it; act(what, fn) runs fn, showing its error.
export function wireNewSession(api, { seen, create, act }) {
  const button = $('new');
  const form = $('newform');
  const input = $('provider');
  const show = (open) => {
    form.hidden = !open;
    button.setAttribute('aria-expanded', String(open));
  };
  button.addEventListener('click', () => {
    show(form.hidden);
    if (form.hidden) return;
    input.value = '';
    input.focus();
    act('providers', () => offer(api, seen()));
  });
  const submit = () => act('new session', async () => {
    const provider = input.value.trim();
    await create(provider ? { provider } : {});
    show(false);
  });
  $('create').addEventListener('click', submit);
  form.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.isComposing) {
      e.preventDefault();
      submit();
    } else if (e.key === 'Escape') {
      show(false);
      button.focus();
    }
  });
  show(false);
}

// offer fills the choices: echo first, then the rest in order.
async function offer(api, seen) {
  const names = new Set(seen.filter(Boolean));
  for (const b of await api.bots()) names.add(`bot:${b.name}`);
  names.delete('echo');
  $('providers').replaceChildren(...['echo', ...[...names].sort()].map((n) => new Option(n, n)));
}
