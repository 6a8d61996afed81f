package tools

import (
	"fmt"
	"strings"
)

// Decision is what a rule, or a person, says of a call.
type Decision string

const (
	Allow Decision = "allow" // it runs
	Ask   Decision = "ask"   // it waits for a person's decision
	Deny  Decision = "deny"  // it does not run; the model is told
	// AllowSession is a person's decision only: this call runs, and so
	// does every later call of the same tool in the session.
	AllowSession Decision = "allow_session"
)

// Rule maps the full names that Glob matches to a policy.
type Rule struct {
	Glob   string
	Policy Decision
	// Participant, if set, limits the rule to the calls of one of a
	// session's participants, by its name (a profile's, a bot's).
	Participant string
}

// MaxGlobBytes bounds a rule's glob.
const MaxGlobBytes = 256

// Policy is a list of rules: the last that matches a tool's full name
// decides, and a tool no rule matches is asked about.
type Policy struct{ rules []Rule }

// NewPolicy checks rules and makes their policy: each glob non-empty and
// bounded, each policy allow, ask or deny.
func NewPolicy(rules []Rule) (Policy, error) {
	for i, r := range rules {
		if r.Glob == "" || len(r.Glob) > MaxGlobBytes || strings.ContainsAny(r.Glob, "\x00\n") {
			return Policy{}, fmt.Errorf("rule %d: a glob is 1 to %d bytes on one line", i+1, MaxGlobBytes)
		}
		switch r.Policy {
		case Allow, Ask, Deny:
		default:
			return Policy{}, fmt.Errorf("rule %d (%s): policy %q is not allow, ask or deny", i+1, r.Glob, r.Policy)
		}
	}
	return Policy{rules: append([]Rule(nil), rules...)}, nil
}

// For is the policy of participant's calls: the rules that name no
// participant, and those that name it. (The rules that name one count
// only in the policy For makes.)
func (p Policy) For(participant string) Policy {
	out := Policy{rules: make([]Rule, 0, len(p.rules))}
	for _, r := range p.rules {
		if r.Participant == "" || strings.EqualFold(r.Participant, participant) {
			r.Participant = ""
			out.rules = append(out.rules, r)
		}
	}
	return out
}

// Of is the policy of the tool full: the last rule that matches it, else
// ask.
func (p Policy) Of(full string) Decision { return p.OfOr(full, Ask) }

// OfOr is the policy of the tool full: the last rule that matches it,
// else def (Ask when ""): a source's default, which a rule always
// overrides, as an MCP server's hints are a stranger's word.
func (p Policy) OfOr(full string, def Decision) Decision {
	for i := len(p.rules) - 1; i >= 0; i-- {
		if p.rules[i].Participant == "" && Match(p.rules[i].Glob, full) {
			return p.rules[i].Policy
		}
	}
	if def == "" {
		return Ask
	}
	return def
}

// Match says whether glob matches name whole: * matches any run of bytes
// (a slash and a colon too, so that bot:* is every bot's tool), ? any one
// byte, and every other byte itself. Its cost is bounded by the lengths'
// product, whatever the glob.
func Match(glob, name string) bool {
	// The classic two-pointer match with one backtrack point: linear
	// per star, no recursion.
	g, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case g < len(glob) && (glob[g] == '?' || glob[g] == name[n]):
			g++
			n++
		case g < len(glob) && glob[g] == '*':
			star, mark = g, n
			g++
		case star >= 0:
			mark++
			g, n = star+1, mark
		default:
			return false
		}
	}
	for g < len(glob) && glob[g] == '*' {
		g++
	}
	return g == len(glob)
}
