package term

import (
	"fmt"
	"strings"
)

// A long paste is folded in the composer: one placeholder rune stands
// where the paste goes, drawn as "[pasted 204 lines]", and the pasted
// text is kept beside the composer (Model.folds). Enter sends the text
// whole; Backspace over the placeholder takes the paste out in one key;
// Ctrl-O unfolds every paste in the composer, to edit it as text. A
// composer of five rows shows nothing useful of a 200-line paste, and the
// person needs to see what they are about to send around it.
//
// Placeholders are runes of Unicode's Supplementary Private Use Area-B,
// which no text typed or pasted keeps (insertText drops them), so none
// can be forged.

const (
	foldFirst rune = 0x100000
	foldLast  rune = 0x10fffd
	// foldFrom is the fewest lines a paste is folded at: more than the
	// composer's five rows show.
	foldFrom = 6
)

func isFold(r rune) bool { return r >= foldFirst && r <= foldLast }

// fold keeps text beside the composer and returns its placeholder.
func (m *Model) fold(text []rune) rune {
	if m.folds == nil {
		m.folds = map[rune][]rune{}
	}
	r := m.nextFold
	for r < foldFirst || m.folds[r] != nil {
		r++
		if r > foldLast {
			r = foldFirst
		}
	}
	m.nextFold = r + 1
	m.folds[r] = text
	return r
}

// unfolded is rs with each placeholder replaced by its paste.
func (m *Model) unfolded(rs []rune) []rune {
	if !m.hasFolds(rs) {
		return rs
	}
	out := make([]rune, 0, len(rs))
	for _, r := range rs {
		if t, ok := m.folds[r]; ok && isFold(r) {
			out = append(out, t...)
			continue
		}
		out = append(out, r)
	}
	return out
}

func (m *Model) hasFolds(rs []rune) bool {
	for _, r := range rs {
		if isFold(r) {
			return true
		}
	}
	return false
}

// shown is rs as the composer draws it: each placeholder as its label.
func (m *Model) shown(rs []rune) string {
	if !m.hasFolds(rs) {
		return string(rs)
	}
	var b strings.Builder
	for _, r := range rs {
		if t, ok := m.folds[r]; ok && isFold(r) {
			b.WriteString(foldLabel(t))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// foldLabel is what a folded paste shows: its size in lines.
func foldLabel(t []rune) string {
	s := string(t)
	return fmt.Sprintf("[pasted %d lines · Ctrl-O shows]", strings.Count(strings.TrimSuffix(s, "\n"), "\n")+1)
}

// unfold puts every paste of the composer back as text, the cursor where
// it was in that text. With no paste folded, the key is the transcript's:
// it lists its files to open (files.go), or with none shows long tool
// calls whole, or folds them again (toolblock.go).
func (m *Model) unfold() []Cmd {
	if !m.hasFolds(m.Composer) {
		return m.filesOrTools()
	}
	m.Cursor = len(m.unfolded(m.Composer[:m.Cursor]))
	m.Composer = m.unfolded(m.Composer)
	m.dropFolds()
	return nil
}

// dropFolds forgets the pastes that neither the composer nor any
// session's draft holds any more, so that they cost nothing once sent or
// deleted.
func (m *Model) dropFolds() {
	if len(m.folds) == 0 {
		return
	}
	held := map[rune]bool{}
	hold := func(rs []rune) {
		for _, r := range rs {
			if isFold(r) {
				held[r] = true
			}
		}
	}
	hold(m.Composer)
	for _, s := range m.Sessions {
		hold(s.draft)
	}
	for r := range m.folds {
		if !held[r] {
			delete(m.folds, r)
		}
	}
}

// composerBytes is the size of what the composer would send.
func (m *Model) composerBytes() int {
	n := 0
	for _, r := range m.Composer {
		if t, ok := m.folds[r]; ok && isFold(r) {
			n += runesBytes(t)
			continue
		}
		n += runesBytes([]rune{r})
	}
	return n
}
