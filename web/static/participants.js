// Who answers in a session (docs/protocol.md, "Participants"): its
// provider, and the participants a message mentions (@NAME); in a
// session that answers mentions only, a message that mentions no one
// starts no turn. The meta line says which mode the session is in and
// names its participants; whoever may change the session's settings
// switches the mode there (a PATCH with its ETag, app.js's patch).
//
// The sessions feed does not carry them: they come with the session as
// read when it is opened (GET), and from its settings events after.

import { $ } from './dom.js';
import { mentionName } from './mentions.js';

// respondText is what the meta line says of each mode.
const respondText = { always: 'answers every message', mentions: 'answers mentions only' };

// takeSession keeps what s, a session as the daemon sent it (GET, a
// list's item, a PATCH's reply), says of who answers.
export function takeSession(v, s) {
  const keep = {};
  if (Array.isArray(s.participants)) keep.participants = s.participants;
  if (s.respond) keep.respond = s.respond;
  v.session = { ...v.session, ...keep };
}

// settingsEvent applies a settings event's change of who answers, and
// says whether there was one.
export function settingsEvent(v, ev) {
  if (ev.type !== 'settings' || (ev.participants === undefined && ev.respond === undefined)) return false;
  takeSession(v, { participants: ev.participants, respond: ev.respond });
  return true;
}

// settingsText is a settings event's words on who answers, for its line
// in the transcript.
export function settingsText(ev) {
  const out = [];
  if (ev.participants !== undefined) out.push(ev.participants.length ? `participants ${ev.participants.map((p) => `@${mentionName(p)}`).join(' ')}` : 'no participants');
  if (ev.respond !== undefined) out.push(respondText[ev.respond] || `answers ${ev.respond}`);
  return out;
}

// drawAnswers shows v's participants and mode in the meta line: a choice
// for whoever may change them (mayChange), words for the others. A
// session whose mode is not known yet (not read yet, or a daemon too old
// to say) shows none.
export function drawAnswers(v, mayChange) {
  const box = $('answers');
  if (!box) return;
  const respond = v && v.session.respond;
  box.hidden = !respond;
  if (!respond) return;
  const parts = v.session.participants || [];
  $('who').textContent = parts.length ? `with ${parts.map((p) => `@${mentionName(p)}`).join(' ')}` : '';
  $('who').hidden = !parts.length;
  const choice = $('respond'); // gone from a viewer's and a guest's page (owner-only)
  const change = mayChange && !!choice;
  if (choice) {
    if (!v.switching) choice.value = respond; // else what was picked, until the daemon answers
    choice.setAttribute('aria-busy', String(!!v.switching));
    $('respondchoice').hidden = !change;
  }
  $('respondtext').hidden = change;
  $('respondtext').textContent = respondText[respond] || `answers ${respond}`;
}

// wireAnswers switches the open session's mode when the choice changes.
// current() is the open session's view, patch(v, body) changes its
// settings (again with a fresh ETag if its own was stale), act(what, fn)
// shows fn's error, and drawn() draws the meta line again.
export function wireAnswers({ current, patch, act, drawn }) {
  const choice = $('respond');
  if (!choice) return;
  choice.addEventListener('change', () => {
    const v = current();
    if (!v || v.switching || choice.value === v.session.respond) return;
    const respond = choice.value;
    v.switching = true;
    drawn();
    act('answers', async () => {
      try {
        const s = await patch(v, { respond });
        if (s) takeSession(v, s);
      } finally {
        v.switching = false;
        drawn(); // the mode as it is now: the new one, or the old one back
      }
    });
  });
}
