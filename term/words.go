package term

import (
	"errors"
	"regexp"
	"strings"

	"albedo/client"
	"albedo/wire"
)

// What the terminal says of a refusal or a failure: words for the person
// in front of it. The daemon's messages are written for every client:
// some name the API's routes ("may not call DELETE /v1/sessions/:id"),
// the client's errors carry the HTTP status ("forbidden (HTTP 403): …")
// or the route they called, and a person reads none of these. The page
// says the same words (web/static/words.js).

// routeWords is a route as the daemon's messages name one: a method and
// a path.
var routeWords = regexp.MustCompile(`\b(?:call )?(?:GET|HEAD|PUT|POST|PATCH|DELETE) /\S*`)

// spoken is what to tell a person of err.
func spoken(err error) string {
	if err == nil {
		return ""
	}
	msg := daemonWords(err)
	switch client.Code(err) {
	case wire.CodeForbidden:
		return forbiddenWords(msg)
	case wire.CodeUnauthorized:
		if strings.Contains(msg, "expired") {
			return "this link has expired"
		}
		return "your access was removed"
	case wire.CodeNotFound:
		return "it is gone, or you no longer have access to it"
	case wire.CodeUnavailable, wire.CodeDaemonStopping, client.CodeUnavailable:
		return "the daemon cannot answer just now: try again in a moment"
	case wire.CodeTooMany:
		return "too many requests at once: try again in a moment"
	}
	if msg = strings.TrimSpace(routeWords.ReplaceAllString(msg, "do that")); msg == "" {
		return "something went wrong: try again"
	}
	return msg
}

// forbiddenWords says what a refusal of the token's rights means.
func forbiddenWords(msg string) string {
	switch {
	case strings.Contains(msg, "creator"):
		return "only the session's creator or an admin may do that"
	case strings.Contains(msg, "no access") || strings.Contains(msg, "not for session"):
		return "you no longer have access to this session"
	case strings.HasPrefix(msg, "read access"):
		return "you may only read this session"
	case strings.HasPrefix(msg, "write access"):
		return "your access to this session does not let you do that"
	case strings.HasPrefix(msg, "only an admin"):
		return msg // says who may, and why
	}
	return "you may not do that"
}

// daemonWords is the daemon's message in err, without its code and HTTP
// status, or else err's text without the route the client called.
func daemonWords(err error) string {
	if m := client.Message(err); m != "" {
		return m
	}
	msg := err.Error()
	if errors.Is(err, client.ErrUnavailable) {
		return "no albedo daemon answers"
	}
	return msg
}
