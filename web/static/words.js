// What the page says of a refusal or a failure: words for the person in
// front of it. The daemon's messages are written for every client, and
// some name the API's routes ("may not call DELETE /v1/sessions/:id") or
// come with no words but an HTTP status: a person reads neither.

// ROUTE is a route as the daemon's messages name one: a method and a path.
const ROUTE = /\b(?:call )?(?:GET|HEAD|PUT|POST|PATCH|DELETE) \/\S*/g;

// spoken is what to tell a person of e, an Error from protocol.js (its
// code the daemon's, its status HTTP's; status 0 or none: no answer).
export function spoken(e) {
  const message = String((e && e.message) || '');
  switch (e && e.code) {
    case 'forbidden':
      if (/creator/.test(message)) return 'only the session’s creator or an admin may do that';
      if (/no access|not for session/.test(message)) return 'you no longer have access to this session';
      if (/^(read|write) access/.test(message)) return 'you may only read this session';
      return 'you may not do that';
    case 'unauthorized':
      return /expired/.test(message) ? 'this link has expired' : 'your access was removed';
    case 'not_found':
      return 'it is gone, or you no longer have access to it';
    case 'unavailable':
    case 'daemon_stopping':
      return 'the daemon cannot answer just now: try again in a moment';
    case 'too_many':
      return 'too many requests at once: try again in a moment';
  }
  if (e instanceof TypeError) return 'the daemon cannot be reached: try again once it is back';
  // The daemon's words, unless they are a bare HTTP status.
  if (!message || /^\d+$/.test(String(e.code || ''))) return 'something went wrong: try again';
  return message.replace(ROUTE, 'do that').trim();
}
