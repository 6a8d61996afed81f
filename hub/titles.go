package hub

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"

	"albedo/hub/provider"
	"albedo/wire"
)

// Titles that write themselves: a session still untitled once a turn of
// it completes is named, as its provider's profile says (Profile.Titles):
// from the first words of its first message (the default), by a short
// call to the provider, or not at all (bots' sessions). The title is an
// ordinary settings change, by "albedo": anyone who may rename the
// session renames it, and a rename that came first is never overwritten.

// titleWords and titleRunes bound a title made of first words.
const titleWords, titleRunes = 6, 48

// titleBy is the author of a title albedo wrote.
const titleBy = "albedo"

// titleAsk is what a provider asked for a title is told.
const titleAsk = "Write a title of at most six words for a conversation that begins with the user's message below. Answer with the title alone, without quotes."

// titleTimeout bounds the provider's call for a title.
const titleTimeout = 20 * time.Second

// autoTitle names the session of a completed turn if it has no title,
// from req (the turn's request) and as p's profile says.
func (h *Hub) autoTitle(ctx context.Context, session string, p provider.Provider, req provider.Request) {
	mode := provider.TitlesWords
	if t, ok := p.(provider.Titler); ok {
		mode = t.Titles()
	}
	if mode == provider.TitlesOff {
		return
	}
	first := ""
	for _, m := range req.Messages {
		if m.Role == wire.RoleUser {
			first = m.Text
			break
		}
	}
	s, err := h.db.Session(ctx, session)
	if err != nil || s.Title != "" || strings.TrimSpace(first) == "" {
		return
	}
	title := ""
	if mode == provider.TitlesProvider {
		title = h.askTitle(ctx, p, req, first)
	}
	if title == "" {
		title = firstWords(first)
	}
	if title == "" {
		return
	}
	_, err = h.PatchSession(ctx, session, s.ETag(), wire.SessionPatch{Title: &title}, titleBy)
	// A rename since the read (a stale etag) or a delete is no failure.
	if err != nil && !isCode(err, wire.CodeEtagMismatch) && !isCode(err, wire.CodeNotFound) {
		h.log.Warn("title a session", "session", session, "err", err)
	}
}

// askTitle asks the provider for a title of the conversation that begins
// with first; "" when it gives none in time.
func (h *Hub) askTitle(ctx context.Context, p provider.Provider, req provider.Request, first string) string {
	ctx, cancel := context.WithTimeout(ctx, titleTimeout)
	defer cancel()
	if len(first) > 2048 {
		first = first[:2048]
	}
	ask := provider.Request{Session: req.Session, Model: req.Model, Messages: []provider.Message{
		{Role: wire.RoleSystem, Author: "system", Text: titleAsk}, {Role: wire.RoleUser, Text: first}}}
	var b strings.Builder
	if err := p.Stream(ctx, ask, func(s string) {
		if b.Len() < 256 {
			b.WriteString(s)
		}
	}); err != nil {
		return ""
	}
	return firstWords(strings.Trim(strings.TrimSpace(b.String()), `"'“”`))
}

// firstWords is a title of text's first words: at most titleWords of
// them, cut to titleRunes, without markup around them.
func firstWords(text string) string {
	var words []string
	n := 0
	for _, w := range strings.Fields(text) {
		w = strings.TrimFunc(w, func(r rune) bool { return strings.ContainsRune("#*_`>[](){}", r) })
		if w == "" {
			continue
		}
		if len(words) == titleWords || n+len([]rune(w)) > titleRunes {
			break
		}
		words = append(words, w)
		n += len([]rune(w)) + 1
	}
	return strings.TrimRightFunc(strings.Join(words, " "), func(r rune) bool { return unicode.IsPunct(r) && r != '?' && r != '!' })
}

// isCode says whether err is a wire error of code c.
func isCode(err error, c wire.Code) bool {
	var we *wire.Error
	return errors.As(err, &we) && we.Code == c
}
