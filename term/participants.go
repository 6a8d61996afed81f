package term

import (
	"strings"

	"albedo/wire"
)

// Participants (docs/protocol.md, "Participants"): a session's provider
// answers, and the participants it names answer when a message mentions
// them (@NAME). The terminal keeps who they are and when anyone answers
// (Session.Respond) from the session as the daemon reads it and from
// the settings events after, shows both in the status bar, changes them
// with /respond and /participants, and completes a mention being typed
// with Tab (mentions.go).

// takeSettings keeps a session's participants and respond (and its
// provider, and its default model, models.go) as the daemon gave them (a GET, a PATCH's answer), unless a settings event
// newer than what it read has been applied already: replies and pushes
// race, and the newest word wins.
func (s *SessionView) takeSettings(ws wire.Session) {
	if ws.Head < s.settingsAt {
		return
	}
	s.settingsAt = ws.Head
	s.Participants, s.Respond = ws.Participants, ws.Respond
	if ws.ResolvedProvider != "" {
		s.Provider = ws.ResolvedProvider
	}
	if d := defaultOf(ws); d != "" {
		s.defModel = d // the default is known only while it names no model
	}
}

// settingsEvent applies a settings event's participants and respond.
func (s *SessionView) settingsEvent(ev wire.Event) {
	if ev.Offset < s.settingsAt || ev.Participants == nil && ev.Respond == nil {
		return
	}
	s.settingsAt = ev.Offset
	if ev.Participants != nil {
		s.Participants = *ev.Participants
	}
	if ev.Respond != nil {
		s.Respond = *ev.Respond
	}
}

// mentionable is who a message in s may mention, by the name it is
// mentioned by: the session's provider first, then its participants.
func (s *SessionView) mentionable() []string {
	var out []string
	add := func(p string) {
		n := wire.MentionName(p)
		for _, o := range out {
			if strings.EqualFold(o, n) {
				return
			}
		}
		if n != "" {
			out = append(out, n)
		}
	}
	add(s.Provider)
	for _, p := range s.Participants {
		add(p)
	}
	return out
}

// mentioning says whether mentions mean anything in s: it has
// participants, or answers only a message that mentions its provider.
func (s *SessionView) mentioning() bool {
	return len(s.Participants) > 0 || s.Respond == wire.RespondMentions
}

// respondWords is how the terminal says when a session answers.
func respondWords(respond string) string {
	if respond == wire.RespondMentions {
		return "mentions only"
	}
	return "answers all"
}

// participantsText is the status bar's word on a session with
// participants: when it answers and who may be mentioned ("mentions
// only · @first @second"); nothing for a session as sessions were
// before participants (its provider answers every message).
func (s *SessionView) participantsText() string {
	if !s.mentioning() {
		return ""
	}
	return respondWords(s.Respond) + " · " + strings.Join(atNames(s.mentionable()), " ")
}

// settingsWords is how a settings event's participants and respond read
// in the transcript, beside its other changes.
func settingsWords(ev wire.Event) []string {
	var parts []string
	if ev.Respond != nil {
		parts = append(parts, respondWords(*ev.Respond))
	}
	if ev.Participants != nil {
		parts = append(parts, "participants "+orNone(strings.Join(*ev.Participants, ", ")))
	}
	if ev.Archived != nil && *ev.Archived {
		parts = append(parts, "archived")
	} else if ev.Archived != nil {
		parts = append(parts, "back from the archive")
	}
	return parts
}

// participantCommands are /respond and /participants. Their usages fit
// the help's keys column (helpKeyWidth): the words say the rest.
var participantCommands = []slashCommand{
	{"/respond MODE", "always: the provider answers all; mentions: only @NAME", (*Model).respondCommand},
	{"/participants …", "who else answers when @mentioned: NAME…; none clears", (*Model).participantsCommand},
}

// respondCommand is /respond always|mentions.
func (m *Model) respondCommand(arg string) []Cmd {
	if arg != wire.RespondAlways && arg != wire.RespondMentions {
		now := ""
		if s := m.Focused(); s != nil {
			now = "this session: " + respondWords(s.Respond) + " · "
		}
		m.notify(arg != "", now+"usage: /respond always|mentions")
		return nil
	}
	return m.patchFocused(wire.SessionPatch{Respond: &arg})
}

// participantsCommand is /participants NAME…: the names replace the
// session's participants (each a provider's profile or bot:NAME; an @
// before one, as it is mentioned, is taken off). With none it clears
// them, once the person confirms: a command cut short by Enter (/part
// runs /participants) must not drop them unasked.
func (m *Model) participantsCommand(arg string) []Cmd {
	s := m.Focused()
	if s == nil {
		m.notify(true, "no session: Ctrl-N creates one")
		return nil
	}
	names := []string{}
	for _, f := range strings.FieldsFunc(arg, func(r rune) bool { return r == ' ' || r == ',' }) {
		if f = strings.TrimPrefix(f, "@"); f != "" {
			names = append(names, f)
		}
	}
	if len(names) > 0 {
		return m.patchFocused(wire.SessionPatch{Participants: &names})
	}
	if len(s.Participants) == 0 {
		m.notify(false, "no participants: /participants NAME… names them (/providers lists the names)")
		return nil
	}
	id, etag := s.ID, s.ETag
	m.ask("clear the participants ("+strings.Join(s.Participants, ", ")+")? y/n", func(m *Model) []Cmd {
		return []Cmd{cmdPatch{Session: id, ETag: etag, Patch: wire.SessionPatch{Participants: &names}}}
	})
	return nil
}

// quietNote says, of a message just sent to s, that no one will answer
// it: s answers only mentions, and it mentions no one who answers here
// (the daemon's own test, hub.quiet).
func (m *Model) quietNote(s *SessionView, text string) {
	if s.Respond != wire.RespondMentions {
		return
	}
	for _, n := range wire.Mentions(text, 0) {
		for _, p := range s.mentionable() {
			if strings.EqualFold(n, p) {
				return
			}
		}
	}
	m.notify(false, "no turn: this session answers only @mentions")
}
