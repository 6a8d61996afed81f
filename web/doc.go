// Package web is the browser client the daemon serves at /: a page, its
// scripts and styles, and the libraries it uses (marked for Markdown,
// DOMPurify to sanitise what marked makes), vendored as ES modules with
// their licences by vendor.sh. The files are embedded, so `go build` needs
// no Node; api serves them (api/page.go) under a strict
// Content-Security-Policy.
//
// The page's scripts are ES modules: static/protocol.js, albedo's
// websocket protocol (hello with each subscription's epoch and offset,
// reattach with full-jitter backoff, inputs re-sent until receipted), which
// knows nothing of the page; static/app.js, the views over it; and the
// pieces of the page app.js uses, each in a file of its own
// (static/markdown.js: replies' Markdown, sanitised, with copy buttons;
// static/drawer.js: the session list as a drawer on narrow screens;
// static/newsession.js: "+ new" and its choice of provider;
// static/search.js: search across sessions; static/forks.js: a message's
// fork, regenerate and edit, a fork's parent, the tree, and compaction;
// static/versions.js: a message's versions (‹ i/n ›), from the forks at
// the point before it; static/listorder.js: the list's order, each fork
// under its parent; static/listitem.js: a session's line in the list;
// static/events.js: the transcript's element for each kind of event;
// static/tools.js: tool calls as blocks, and the decisions on those that
// wait; static/agent.js: a coding agent's files, diffs and notices, and
// its plan, thinking and commands' output from the session's status;
// static/uploads.js: files attached to the composer by button, drop or
// paste, hashed and uploaded with their progress; static/files.js: the
// files messages carry, images inline from blob: URLs fetched with the
// page's token, others as cards that download; static/follow.js:
// whether the transcript follows its end, through resizes;
// static/words.js: refusals and failures in a person's words;
// static/guest.js: a write link's holder's name, asked for in the page
// and remembered for that link; static/share.js: a session's grants,
// links and invites, from the page; static/pins.js: sessions pinned
// first, and pinning from the page; static/archive.js: archiving, and
// the archived sessions under the list; static/models.js: the model a
// session's turns go to, and the settings' model picker;
// static/continue.js: continue on a reply that was cut off, and its
// rest shown joined to it).
package web
