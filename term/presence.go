package term

import (
	"fmt"
	"strings"
)

// presenceText is who watches the focused session, for the status bar:
// the people presence lists (a mark on those typing, ×N for several
// devices), how many more, else the count of viewers.
func presenceText(s *SessionView) string {
	if len(s.People) == 0 {
		return fmt.Sprintf("%d viewer%s", s.Viewers, map[bool]string{true: "", false: "s"}[s.Viewers == 1])
	}
	names := make([]string, 0, len(s.People)+1)
	for _, p := range s.People {
		n := p.Name
		if p.Devices > 1 {
			n += fmt.Sprintf(" ×%d", p.Devices)
		}
		if p.Typing {
			n += " ✎"
		}
		names = append(names, n)
	}
	if s.MorePeople > 0 {
		names = append(names, fmt.Sprintf("+%d more", s.MorePeople))
	}
	return "watching: " + strings.Join(names, ", ")
}
