// Sharing the open session from the page, as `albedo sessions grant`,
// `albedo share` and `albedo members add` do (docs/protocol.md, "Members
// and grants"): the members who may read or write in it (give, change,
// take back), its links (make a read or a write link, revoke one), and,
// for admins, inviting a new member, who is given the session at once. A
// link or an invite holds a token that is shown once, when it is made:
// the panel shows it with a copy button while the page is open. Offered to
// the session's creator and admins (app.js: mayShare).

import { $ } from './dom.js';
import { copy } from './markdown.js';

const enc = encodeURIComponent;

// made holds, by session, the links and invites made on this page, with
// their addresses: {kind, label, access, url}.
const made = new Map();

// linkTo is the address of the page with token, opening session, as
// albedo share prints it: with the daemon's key when this page's link had
// it (a home's page proves the daemon before it hands it a token).
function linkTo(session, token) {
  const p = new URLSearchParams({ session, token });
  const key = sessionStorage.getItem('albedo.key');
  if (key) p.set('k', key);
  return `${location.origin}/#${p}`;
}

function el(tag, props = {}, ...children) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

// wireShare wires the share button and its panel. ctx: api, act(what,
// fn), current() (the open view), admin() (whether this person may invite).
export function wireShare(ctx) {
  const panel = $('share');
  $('sharebutton').addEventListener('click', () => {
    panel.hidden = !panel.hidden;
    $('sharebutton').setAttribute('aria-expanded', String(!panel.hidden));
    if (!panel.hidden) refresh(ctx);
  });
  const submit = (form, what, fn) => form.addEventListener('submit', (e) => {
    e.preventDefault();
    const v = ctx.current();
    if (v) ctx.act(what, () => fn(v).then(() => refresh(ctx)));
  });
  submit($('grantform'), 'grant', (v) => {
    const name = $('grantname').value.trim();
    if (!name) return Promise.reject(new Error('name the member to give the session to'));
    return grant(ctx, v, name, $('grantaccess').value).then(() => { $('grantname').value = ''; });
  });
  submit($('linkform'), 'link', (v) => makeLink(ctx, v, $('linkaccess').value, $('linklabel').value.trim()));
  submit($('inviteform'), 'invite', (v) => invite(ctx, v, $('invitename').value.trim(), $('inviteaccess').value));
}

// closeShare folds the panel away (another session was opened, or this
// person may not share it).
export function closeShare() {
  if (!$('share')) return; // a link's page: no sharing
  $('share').hidden = true;
  $('sharebutton').setAttribute('aria-expanded', 'false');
}

function grant(ctx, v, member, access) {
  return ctx.api.call('PUT', `/v1/sessions/${enc(v.id)}/grants/${enc(member)}`, { body: { access } });
}

async function makeLink(ctx, v, access, label) {
  const l = (await ctx.api.call('POST', `/v1/sessions/${enc(v.id)}/shares`, { body: { access, ...(label ? { label } : {}) } })).data;
  remember(v.id, { kind: 'link', label: l.label, access: l.access, url: linkTo(v.id, l.token) });
  $('linklabel').value = '';
}

// invite adds a member and gives them the session.
async function invite(ctx, v, name, access) {
  if (!name) throw new Error('name the person to invite');
  const m = (await ctx.api.call('POST', '/v1/members', { body: { name } })).data;
  remember(v.id, { kind: 'invite', label: m.name, access, url: linkTo(v.id, m.token) });
  $('invitename').value = '';
  await grant(ctx, v, m.name, access);
}

function remember(session, item) {
  made.set(session, [...(made.get(session) || []), item]);
}

// refresh reads the open session's grants and links, and the members
// (admins only), and draws them.
async function refresh(ctx) {
  const v = ctx.current();
  if (!v || $('share').hidden) return;
  const admin = ctx.admin();
  $('inviteform').hidden = !admin;
  await ctx.act('share', async () => {
    const [grants, links, members] = await Promise.all([
      ctx.api.call('GET', `/v1/sessions/${enc(v.id)}/grants`).then((r) => r.data.grants || []),
      ctx.api.call('GET', `/v1/sessions/${enc(v.id)}/shares`).then((r) => r.data.links || []),
      admin ? ctx.api.call('GET', '/v1/members').then((r) => r.data.members || []) : [],
    ]);
    if (ctx.current() !== v) return;
    drawGrants(ctx, v, grants);
    drawLinks(ctx, v, links);
    $('memberlist').replaceChildren(...members.filter((m) => !grants.some((g) => g.member === m.name)).map((m) => new Option(m.name)));
  });
}

function drawGrants(ctx, v, grants) {
  $('grants').replaceChildren(...grants.map((g) => {
    const li = el('li', {}, el('span', { className: 'who', textContent: g.member }));
    li.dataset.member = g.member;
    if (g.access === 'creator') {
      li.append(el('span', { className: 'access', textContent: 'creator' }));
      return li;
    }
    const pick = el('select', { ariaLabel: `${g.member}'s access` }, new Option('write', 'write'), new Option('read', 'read'));
    pick.value = g.access;
    pick.addEventListener('change', () => ctx.act('grant', () => grant(ctx, v, g.member, pick.value).then(() => refresh(ctx))));
    const remove = el('button', { type: 'button', textContent: 'remove', title: `Take ${g.member}'s access to this session back` });
    remove.addEventListener('click', () => ctx.act('remove', () => ctx.api.call('DELETE', `/v1/sessions/${enc(v.id)}/grants/${enc(g.member)}`).then(() => refresh(ctx))));
    li.append(pick, remove);
    return li;
  }));
}

function drawLinks(ctx, v, links) {
  const fresh = made.get(v.id) || [];
  const rows = links.map((l) => {
    const li = el('li', {}, el('span', { className: 'who', textContent: l.label }), el('span', { className: 'access', textContent: l.access === 'write' ? 'write (guests)' : 'read' }));
    li.dataset.label = l.label;
    if (l.expires_at) li.append(el('span', { className: 'note', textContent: `until ${new Date(l.expires_at).toLocaleString()}` }));
    const revoke = el('button', { type: 'button', textContent: 'revoke', title: 'End this link: pages open with it close' });
    revoke.addEventListener('click', () => ctx.act('revoke', async () => {
      await ctx.api.call('DELETE', `/v1/sessions/${enc(v.id)}/shares/${enc(l.label)}`);
      made.set(v.id, (made.get(v.id) || []).filter((m) => m.kind !== 'link' || m.label !== l.label));
      await refresh(ctx);
    }));
    li.append(revoke);
    const m = fresh.find((f) => f.kind === 'link' && f.label === l.label);
    if (m) li.append(address(m.url));
    return li;
  });
  $('links').replaceChildren(...rows);
  $('invites').replaceChildren(...fresh.filter((f) => f.kind === 'invite').map((f) => {
    const li = el('li', {}, el('span', { className: 'who', textContent: f.label }), el('span', { className: 'note', textContent: `invited (${f.access}): their link, shown this once` }), address(f.url));
    li.dataset.member = f.label;
    return li;
  }));
}

// address is a link's address with its copy button.
function address(url) {
  const code = el('code', { className: 'url', textContent: url });
  const b = el('button', { type: 'button', className: 'copy', textContent: 'copy', title: 'Copy the link: it holds its token, hand it over as you would a password' });
  b.addEventListener('click', () => copy(code, b));
  return el('span', { className: 'address' }, code, b);
}
