package main

import (
	"os/user"
	"strings"
)

// ownerName is the member name of the person who runs the daemon:
// config.toml's name when set (refused later if it breaks the rule of
// names), else their login name made to fit that rule (lower case, a-z
// 0-9 . _ -, at most 64), else "owner".
func ownerName(configured string) string {
	if configured != "" {
		return configured
	}
	u, err := user.Current()
	if err != nil {
		return "owner"
	}
	return fitName(u.Username)
}

// fitName makes s a member name: lower case, every other character a
// hyphen, starting with a letter or digit, at most 64 bytes; "owner" when
// nothing is left.
func fitName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, s)
	s = strings.TrimLeft(s, "._-")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		return "owner"
	}
	return s
}
