// Package term is albedo's full-screen terminal client, on tcell v2.
//
// One goroutine (App.loop, started by Run) owns all state. It selects over
// screen events and messages from the client (subscription items,
// connection states, the results of HTTP calls), applies each to the Model
// (update.go), and then redraws: drawing (draw.go) is a pure function of
// the Model. Update never performs I/O; it returns Cmds that the App runs
// on other goroutines, whose results come back as messages into the same
// loop.
//
// Files: model.go (the state), update.go (keys, pastes and pushes),
// fold.go (long pastes folded in the composer), results.go (the results
// of Cmds), keys.go (the key table: dispatch and help) and keyactions.go
// (what its keys run), commands.go (slash commands, Cmds, the y/n
// question), tools.go (tool calls: the calls of a session from its
// events, the decision bar, its keys and /allow, /always, /deny, the
// decisions sent and the notice that one is needed), toolblock.go (a
// tool call's block in the transcript, long arguments and output
// folded), agent.go (a coding agent's calls headed by their titles with
// their files and diffs in colour; its plan, thinking and command output
// below the transcript while it works), slashmenu.go (the commands a /command being typed may become,
// listed above the composer, Tab to complete), participants.go (a
// session's participants and when it answers: the status bar's word,
// its settings events, /respond and /participants), mentions.go (@NAME
// being typed: the names it may become above the composer, Tab to
// complete), forks.go (forks and compaction: f, r and e on a selected
// message, /forks, /parent, /compact), versions.go (a message's versions, ‹ i/n › in its
// header, ← and → on it selected: forks at the point before it, read
// once per origin), pins.go (/pin and /unpin: the pinned first in the
// sidebar, ★), archive.go (/archive, /unarchive, and /archived: the
// archived sessions, one opened), models.go (the model picker after
// /model, and the model in the status bar: the session's, else its
// default), continue.go (/continue: a reply cut off run on, its rest
// drawn joined to it), share.go (sharing the session in front:
// /invite, /grant, /ungrant, /grants, /link, /links, /revoke, offered
// to its creator and admins), attach.go (/attach: files uploaded for a session's next
// message, their chips above the composer, the message sent with them,
// in order with the session's other inputs), files.go (a transcript's
// files: a line each under their message, Ctrl-O's list of them, one
// downloaded and opened or saved), sidebar.go (order: the pinned first,
// each fork under its parent, families by their latest activity; focus
// and drafts; the go-to line),
// feed.go (the sidebar from the sessions feed, and the few sessions kept
// subscribed), read.go (the read marker set for the session in front of
// the person, and read pushes from elsewhere), find.go (search and the
// message pick for copying), hits.go (/search: search across sessions,
// its hits in a box, one opened at its message), clipboard.go (the copy,
// through the terminal: OSC 52), notify.go (bell and desktop notices),
// draw.go, status.go (the status bar, and a notice too long for it on
// rows above it), words.go (what a person is told of an error: no HTTP
// status, no route), gone.go (a session deleted or no longer this
// person's: it leaves the sidebar, the status bar says which, a draft
// written there is kept), meter.go (the status bar's context meter and cost),
// presence.go (the status bar's word on who watches), transcript.go (each
// event rendered once per look), markdown.go (replies' Markdown, through
// goldmark), highlight.go (code blocks coloured by their language,
// through chroma) and wrap.go (width, wrapping, what reaches the
// terminal), app.go (the loop and the Cmd runner).
package term
