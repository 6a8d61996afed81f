package access

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
)

// HashToken is what the store and the Table keep of a token: its
// SHA-256. A lookup by it reveals, by its timing, something of a hash,
// which says nothing of a token.
func HashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// NewToken makes a token: prefix (which says its kind: "albot_",
// "almem_", …) and 24 random bytes in hex.
func NewToken(prefix string) string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// ValidName is the rule for the names of bots, members and owner tokens:
// 1-64 of a-z 0-9 . _ -, starting with a letter or digit.
var ValidName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ValidLabel is the rule for links' and personal tokens' labels.
var ValidLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
