package wire

import (
	"strings"
	"unicode/utf8"
)

// Participants (docs/protocol.md, "Participants"): a session's provider
// answers by default, and the participants it names answer when a
// message mentions them (@NAME).

// When a session's participants answer (Session.Respond).
const (
	// RespondAlways runs the session's provider on a message that
	// mentions no one, and the mentioned participants on one that does.
	RespondAlways = "always"
	// RespondMentions runs a turn only for a message that mentions a
	// participant: people talk among themselves without waking a model.
	RespondMentions = "mentions"
)

// Bounds of participants.
const (
	// MaxParticipants is how many participants a session names.
	MaxParticipants = 16
	// DefaultMaxMentionTurns is the default of the setting
	// max_mention_turns: the turns one message may start.
	DefaultMaxMentionTurns = 8
)

// ParticipantID is the stable author id of a participant's replies:
// "bot:NAME" for a bot, "provider:NAME" for a provider's profile.
func ParticipantID(participant string) string {
	if strings.HasPrefix(participant, "bot:") {
		return participant
	}
	return "provider:" + participant
}

// MentionName is how a message mentions a participant: a profile's name,
// or a bot's name without its "bot:".
func MentionName(participant string) string { return strings.TrimPrefix(participant, "bot:") }

// Mentions returns the names text mentions, in order, each once: every
// "@NAME" at the start of the text or after a character that is no
// letter, digit or one of "._-" (so an e-mail address mentions no one),
// NAME being letters, digits and "._-", a trailing "." or "-" left out.
// It stops at max names (0: no bound).
func Mentions(text string, max int) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || (i > 0 && nameByte(text[i-1])) {
			continue
		}
		j := i + 1
		for j < len(text) && nameByte(text[j]) {
			j++
		}
		name := strings.TrimRight(text[i+1:j], ".-")
		i = j - 1
		if name == "" || containsFold(out, name) {
			continue
		}
		out = append(out, name)
		if max > 0 && len(out) == max {
			break
		}
	}
	return out
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c >= utf8.RuneSelf
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
