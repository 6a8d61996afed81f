package hub

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"albedo/db"
	"albedo/hub/access"
	"albedo/hub/acphost"
	"albedo/hub/provider"
	"albedo/wire"
)

// Participants (docs/protocol.md, "Participants"): a session's provider
// answers by default; the participants it names answer when a message
// mentions them (@NAME), one turn each, in the order of the mentions,
// each seeing the replies before it. In a session that answers only
// mentions, a message that mentions no one is a message and no more:
// accepted as a post is, with no turn (quiet).
//
// The turns one message starts are steps of its input: the input's row
// holds the step it is at and that step's turn id, so that a restart or
// another node goes on from there (db.Tx.NextStep).

// CheckPatch refuses a change that by may not make to session: any
// change of a coding agent's session, or a coding agent named as a
// participant, by whoever is not an admin; participants that are no
// provider, a bot with no token that may act in the session, or names
// that collide; a respond that is neither always nor mentions.
func (h *Hub) CheckPatch(ctx context.Context, by access.Principal, session string, p wire.SessionPatch) error {
	if err := h.CheckChange(ctx, by, session); err != nil {
		return err
	}
	if p.Respond != nil && *p.Respond != wire.RespondAlways && *p.Respond != wire.RespondMentions {
		return wire.Errorf(wire.CodeBadRequest, "respond is %q or %q, not %q", wire.RespondAlways, wire.RespondMentions, *p.Respond)
	}
	if p.Participants == nil {
		return nil
	}
	list := *p.Participants
	if len(list) > wire.MaxParticipants {
		return wire.Errorf(wire.CodeBadRequest, "participants: %d; a session names at most %d", len(list), wire.MaxParticipants)
	}
	s, err := h.db.Session(ctx, session)
	if err != nil {
		return wireErr(err)
	}
	seen := map[string]bool{strings.ToLower(wire.MentionName(h.resolved(s.Provider))): true}
	for i, name := range list {
		if werr := access.CheckTexts("participant", name); werr != nil {
			return werr
		}
		if bot, ok := strings.CutPrefix(name, provider.BotPrefix); ok {
			if !h.botMayAct(bot, session) {
				return wire.Errorf(wire.CodeBadRequest, "participants[%d]: bot %q has no token that may act in this session", i, bot)
			}
		} else if err := h.checkProvider(name); err != nil || name == "" {
			return wire.Errorf(wire.CodeBadRequest, "participants[%d]: %q is no provider profile of this daemon", i, name)
		} else if h.isAgent(name) {
			if by.Role != "" && by.Role != wire.TokenOwner {
				return wire.Errorf(wire.CodeForbidden, "only an admin may name a coding agent as a participant: the agent acts on the daemon's machine")
			}
			if err := acphost.CheckWorkspace(s.Workspace); err != nil {
				return wire.Errorf(wire.CodeBadRequest, "participants[%d]: a coding agent needs the session's workspace: %v", i, err)
			}
		}
		key := strings.ToLower(wire.MentionName(name))
		if seen[key] {
			return wire.Errorf(wire.CodeBadRequest, "participants[%d]: @%s names the provider or another participant already", i, wire.MentionName(name))
		}
		seen[key] = true
	}
	return nil
}

// resolved is the provider a session named provider runs on.
func (h *Hub) resolved(provider string) string {
	if provider != "" {
		return provider
	}
	if d := h.providers.Default(); d != "" {
		return d
	}
	return "echo"
}

// quiet says whether text, a person's message to session, starts no
// turn: the session answers only mentions, and text mentions no one who
// answers there.
func (h *Hub) quiet(ctx context.Context, session, text string) bool {
	st, ok := h.settingsNow(ctx, session)
	if !ok || st.respond != wire.RespondMentions {
		return false
	}
	names := h.answerers(st.provider, st.participants)
	for _, m := range wire.Mentions(text, 0) {
		if _, ok := names[strings.ToLower(m)]; ok {
			return false
		}
	}
	return true
}

// answerers are who may answer in a session with provider and
// participants, by the name a mention gives them (lower-case): each
// participant, and the provider as "".
func (h *Hub) answerers(provider string, participants []string) map[string]string {
	names := map[string]string{strings.ToLower(wire.MentionName(h.resolved(provider))): ""}
	for _, p := range participants {
		names[strings.ToLower(wire.MentionName(p))] = p
	}
	return names
}

// settingsNow is what the session's channel knows of its settings, the
// channel loaded (once: its turns need it anyway) if it was not; false
// if there is no such session (the input's write then says so).
func (h *Hub) settingsNow(ctx context.Context, session string) (settings, bool) {
	ch, werr := h.channel(ctx, session)
	if werr != nil {
		return settings{}, false
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.settings, true
}

// sessionSettings and stateSettings are what a channel keeps of a
// session's settings.
func sessionSettings(s db.Session) settings {
	return settings{version: s.Version, model: s.Model, effort: s.Effort, provider: s.Provider,
		participants: s.ParticipantList(), respond: s.Respond}
}

func stateSettings(s db.SessionState) settings {
	return settings{version: s.Version, model: s.Model, effort: s.Effort, provider: s.Provider,
		participants: db.ParseParticipants(s.Participants), respond: s.Respond}
}

// planStep finds who answers q's turn: the session's provider, or, in a
// session with participants, the one q's step of its message's mentions
// names. At the first step it notes in the log the mentions that start
// no turn: past max_mention_turns, or of a bot that may no longer act
// here. It returns the session, read once for the turn.
func (h *Hub) planStep(ctx context.Context, ch *channel, q queued) (db.Session, queued, error) {
	s, err := h.db.Session(ctx, ch.id)
	if err != nil {
		return s, q, err
	}
	parts := s.ParticipantList()
	if len(parts) == 0 {
		return s, q, nil // one turn, the provider's, as ever
	}
	q.named = true
	text, err := h.messageText(ctx, ch, q.offset)
	if err != nil {
		return s, q, err
	}
	byName := h.answerers(s.Provider, parts)
	var targets, gone []string
	over := 0
	for _, m := range wire.Mentions(text, 0) {
		p, ok := byName[strings.ToLower(m)]
		switch {
		case !ok || slices.Contains(targets, p):
		case strings.HasPrefix(p, provider.BotPrefix) && !h.botMayAct(strings.TrimPrefix(p, provider.BotPrefix), ch.id):
			gone = append(gone, "@"+m)
		case len(targets) == h.opts.MaxMentionTurns:
			over++
		default:
			targets = append(targets, p)
		}
	}
	if len(targets) == 0 {
		targets = []string{""}
	}
	if q.step >= len(targets) {
		q.step = len(targets) - 1 // the participants changed meanwhile
	}
	q.participant, q.more = targets[q.step], q.step < len(targets)-1
	q.who = h.resolved(cmp.Or(q.participant, s.Provider))
	if q.step == 0 && !q.resume && (over > 0 || len(gone) > 0) {
		var why []string
		if over > 0 {
			why = append(why, fmt.Sprintf("%d more mentioned participants were not asked: a message starts at most %d turns (max_mention_turns)", over, h.opts.MaxMentionTurns))
		}
		if len(gone) > 0 {
			why = append(why, strings.Join(gone, ", ")+" may no longer answer here: the bot's token is gone or no longer reaches this session")
		}
		_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
			if err := tx.CheckRun(ctx, ch.id, q.lease); err != nil {
				return err
			}
			_, err := tx.Append(ctx, ch.id, wire.Event{Type: wire.EventNotice, InputID: q.inputID, TurnID: q.turnID, Text: strings.Join(why, "; ") + "."})
			return err
		})
		if err != nil {
			return s, q, err
		}
	}
	return s, q, nil
}

// messageText is the text of the message at offset.
func (h *Hub) messageText(ctx context.Context, ch *channel, offset int64) (string, error) {
	sp, err := h.spansOf(ctx, ch)
	if err != nil {
		return "", err
	}
	evs, err := h.db.EventsAfterIn(ctx, sp, offset-1, 1, 1<<30)
	if err != nil || len(evs) == 0 {
		return "", err
	}
	var ev wire.Event
	if err := json.Unmarshal(evs[0].JSON, &ev); err != nil {
		return "", fmt.Errorf("read message %d: %w", offset, err)
	}
	return ev.Text, nil
}

// asParticipant is a transcript as self (a participant's author id) is
// sent it: its own replies as the assistant's, and every other
// participant's as a message of its author's, like a person's; their
// tool calls and results, which self did not make, are left out (their
// replies say what came of them). The provider's replies from before the
// session had participants carry no author id: they are the provider's.
func asParticipant(evs []wire.Event, self string, isDefault bool) []wire.Event {
	mine := func(e wire.Event) bool { return e.AuthorID == self || e.AuthorID == "" && isDefault }
	others := map[string]bool{}
	for _, e := range evs {
		if e.Type == wire.EventMessage && e.Role == wire.RoleAssistant && !mine(e) && e.TurnID != "" {
			others[e.TurnID] = true
		}
	}
	out := make([]wire.Event, 0, len(evs))
	for _, e := range evs {
		switch {
		case (e.Type == wire.EventToolCall || e.Type == wire.EventToolResult) && others[e.TurnID]:
			continue
		case e.Type == wire.EventMessage && e.Role == wire.RoleAssistant && !mine(e):
			e.Role = wire.RoleUser
		}
		out = append(out, e)
	}
	return out
}
