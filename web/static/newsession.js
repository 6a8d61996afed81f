// "+ new": the owner picks the new session's provider, as the terminal's
// `/new PROVIDER` takes one. Offered are what the daemon runs: echo and
// config.toml's profiles (GET /v1/providers), and bot:NAME for each of its
// bots (GET /v1/bots); any other name can be typed, and empty is the
// daemon's default. A name the daemon cannot run is refused with the
// profiles it has, which the page shows.

const $ = (id) => document.getElementById(id);

// wireNewSession wires the button, the form and its choices. create(body)
// makes the session and opens it; act(what, fn) runs fn, showing its
// error.
export function wireNewSession(api, { create, act }) {
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
    act('providers', () => offer(api));
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

// offer fills the choices: the daemon's providers in its order (echo
// first), the default marked, then its bots by name.
async function offer(api) {
  const [list, bots] = await Promise.all([api.providers(), api.bots()]);
  const options = list.providers.map((p) => {
    const label = [p.name, p.model, p.name === list.default ? 'default' : ''].filter(Boolean).join(' · ');
    return new Option(label, p.name);
  });
  for (const b of [...bots].sort((x, y) => x.name.localeCompare(y.name))) options.push(new Option(`bot:${b.name}`, `bot:${b.name}`));
  $('providers').replaceChildren(...options);
}
