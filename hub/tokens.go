package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/wire"
)

// Principal is who a token acts as.
type Principal struct {
	Role     wire.TokenRole // owner for an admin member
	Name     string         // the member's, the bot's, the owner token's; "viewer"
	TokenID  string         // "" for the daemon.json token
	Sessions []string       // a bot's, viewer's or guest's sessions; nil means all (a member's are in grants)
	MemberID string         // the member it is a token of (an admin's too); "" for none
	// ExpiresAt is when a link's token stops being accepted; zero for never.
	ExpiresAt time.Time

	grants *tokenTable // where a member's access is looked up (access.go)
}

// AuthorID is the stable id of p as an author (wire.Event.AuthorID): a
// member's id; "bot:NAME" for a bot; "token:NAME" for an owner token of no
// member; "viewer" or "owner" for what has neither.
func (p Principal) AuthorID() string {
	switch {
	case p.MemberID != "":
		return p.MemberID
	case p.Role == wire.TokenBot:
		return "bot:" + p.Name
	case p.Role == wire.TokenOwner && p.TokenID != "":
		return "token:" + p.Name
	case p.Role == wire.TokenGuest:
		return "guest:" + p.TokenID + ":" + p.Name
	}
	return string(p.Role)
}

// Expired says whether p is a link past its end at now.
func (p Principal) Expired(now time.Time) bool {
	return !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt)
}

// Author is p as the author of an input.
func (p Principal) Author() wire.Author { return wire.Author{Name: p.Name, ID: p.AuthorID()} }

// Sees lists the sessions p may see when that is a list (a member's, a
// bot's, a viewer's); nil means all.
func (p Principal) Sees() []string {
	if p.Role == wire.TokenMember {
		if p.grants == nil {
			return []string{}
		}
		return p.grants.sessionsOf(p.MemberID)
	}
	if p.Role == wire.TokenOwner {
		return nil
	}
	return p.Sessions
}

var validBotName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// tokenTable is the in-memory index of stored tokens (owner tokens made
// by a command, bot and viewer tokens), by hash.
type tokenTable struct {
	// ops is read-locked by whoever changes stored tokens, from before the
	// store write to after the table's update, and locked by ReloadTokens,
	// so that a reload neither misses a token just made nor brings back
	// one just revoked.
	ops sync.RWMutex

	mu     sync.RWMutex
	byHash map[string]Principal
	// gen counts the changes to byHash. A lookup in the store (lookupStored,
	// in a cluster) puts what it read only if none came since it began:
	// a revocation or a narrowing that lands meanwhile is not undone.
	gen uint64
	// grants is each member's access to sessions, by member id and
	// session (members.go).
	grants map[string]map[string]wire.Access
	// misses are hashes the store did not have when looked up, at most
	// maxMisses: a token cannot exist before it is made, and is unknown to
	// anyone until then, so a hash that missed never becomes a token, and
	// its repeats cost no read of the store.
	misses map[string]struct{}
}

func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

func (t *tokenTable) put(hash string, p Principal) {
	t.mu.Lock()
	t.putLocked(hash, p)
	t.mu.Unlock()
}

// putLocked is put with mu held.
func (t *tokenTable) putLocked(hash string, p Principal) {
	if t.byHash == nil {
		t.byHash = map[string]Principal{}
	}
	t.byHash[hash] = p
	t.gen++
}

// replace updates the principal of a token still in the table; a token
// dropped meanwhile (revoked by a later commit) stays dropped.
func (t *tokenTable) replace(hash string, p Principal) {
	t.mu.Lock()
	if _, ok := t.byHash[hash]; ok {
		t.byHash[hash] = p
	}
	t.gen++
	t.mu.Unlock()
}

func (t *tokenTable) drop(ids []string) {
	t.mu.Lock()
	for h, p := range t.byHash {
		if slices.Contains(ids, p.TokenID) {
			delete(t.byHash, h)
		}
	}
	t.gen++
	t.mu.Unlock()
}

// dropScoped forgets the tokens scoped to session: it returns the ids of
// those scoped to it alone (revoked with it) and of those scoped to
// others too (narrowed).
func (t *tokenTable) dropScoped(session string) (revoked, narrowed []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for h, p := range t.byHash {
		if p.Sessions == nil || !slices.Contains(p.Sessions, session) {
			continue
		}
		delete(t.byHash, h)
		if len(p.Sessions) == 1 {
			revoked = append(revoked, p.TokenID)
		} else {
			narrowed = append(narrowed, p.TokenID)
		}
	}
	t.gen++
	return revoked, narrowed
}

// loadTokens reads every stored token into memory.
func (h *Hub) loadTokens(ctx context.Context) error {
	ts, err := h.db.Tokens(ctx)
	if err != nil {
		return err
	}
	if err := h.loadGrants(ctx); err != nil {
		return err
	}
	for _, t := range ts {
		h.tokens.put(t.Hash, h.tokens.principalOf(t))
	}
	return nil
}

// principalOf is who a stored token acts as: for a member's token, the
// member, as owner when they are an admin.
func (t *tokenTable) principalOf(tok db.Token) Principal {
	p := Principal{Role: tok.Kind, Name: tok.Name, TokenID: tok.ID, Sessions: tok.SessionList(), grants: t}
	if tok.ExpiresAt != "" {
		p.ExpiresAt, _ = time.Parse(time.RFC3339Nano, tok.ExpiresAt)
	}
	if tok.Kind == wire.TokenMember {
		p.MemberID, p.Name, p.Sessions = tok.Member, tok.MemberName, nil
		if tok.Admin {
			p.Role = wire.TokenOwner
		}
	}
	return p
}

// Current returns p as its token stands now: the owner as it is, a bot or
// viewer with its current sessions, or false for a token revoked since p
// was read. A connection calls it once it can be found by revocation
// (api's hello), so that a revocation that ran while it was being set up
// is not missed.
func (h *Hub) Current(p Principal) (Principal, bool) {
	if p.TokenID == "" {
		return p, true
	}
	h.tokens.mu.RLock()
	defer h.tokens.mu.RUnlock()
	for _, q := range h.tokens.byHash {
		if q.TokenID == p.TokenID {
			return q, true
		}
	}
	return Principal{}, false
}

// Authenticate resolves a bot or viewer token. Only hashes are kept, and
// the lookup is by the token's SHA-256: what its timing could reveal is
// something about a hash, which says nothing of a token. In a cluster, a
// token this node does not know is looked up in the store
// (cluster_tokens.go).
func (h *Hub) Authenticate(token string) (Principal, bool) {
	if token == "" {
		return Principal{}, false
	}
	hash := hashToken(token)
	h.tokens.mu.RLock()
	p, ok := h.tokens.byHash[hash]
	_, missed := h.tokens.misses[hash]
	gen := h.tokens.gen
	h.tokens.mu.RUnlock()
	if !ok && !missed && h.db.Shared() {
		p, ok = h.lookupStored(hash, gen)
	}
	if ok && p.Expired(time.Now()) {
		return Principal{}, false
	}
	if ok && p.TokenID != "" && (p.Role == wire.TokenViewer || p.Role == wire.TokenGuest) {
		h.touchLink(p.TokenID)
	}
	return p, ok
}

func newToken(prefix string) string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// AddBot makes a bot token, limited to sessions when given. The token is
// returned once and only its hash is stored.
func (h *Hub) AddBot(ctx context.Context, name string, sessions []string) (string, error) {
	if !validBotName.MatchString(name) {
		return "", wire.Errorf(wire.CodeBadRequest, "a bot name is 1-64 of a-z 0-9 . _ -, starting with a letter or digit")
	}
	tok := newToken("albot_")
	h.tokens.ops.RLock()
	defer h.tokens.ops.RUnlock()
	row := db.Token{ID: uuid.Must(uuid.NewV7()).String(), Kind: wire.TokenBot, Name: name, Hash: hashToken(tok), Sessions: strings.Join(sessions, ",")}
	// The sessions are checked in the token's own transaction: a session
	// deleted between a check and the token's commit would leave a token
	// for an id that a new session may take.
	if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		for _, s := range sessions {
			if err := tx.CheckSession(ctx, s); err != nil {
				return err
			}
		}
		return tx.CreateToken(ctx, row)
	}); err != nil {
		return "", wireErr(err)
	}
	h.tokens.put(row.Hash, h.tokens.principalOf(row))
	return tok, nil
}

// RemoveBot revokes a bot's token and returns its token id, whose live
// connections the caller closes.
func (h *Hub) RemoveBot(ctx context.Context, name string) ([]string, error) {
	return h.revoke(ctx, wire.TokenBot, name, "")
}

func (h *Hub) revoke(ctx context.Context, kind wire.TokenRole, name, session string) ([]string, error) {
	h.tokens.ops.RLock()
	defer h.tokens.ops.RUnlock()
	var ids []string
	_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		var err error
		ids, err = tx.DeleteTokens(ctx, kind, name, session)
		return err
	})
	if err != nil {
		return nil, wireErr(err)
	}
	h.tokens.drop(ids)
	h.changed()
	return ids, nil
}

// BotInfo describes a bot for `albedo bots ls`.
type BotInfo struct {
	Name      string   `json:"name"`
	Sessions  []string `json:"sessions"`
	CreatedAt string   `json:"created_at"`
	Serving   int      `json:"serving"` // connections serving its turns now
}

// Bots lists the bots.
func (h *Hub) Bots(ctx context.Context) ([]BotInfo, error) {
	ts, err := h.db.Tokens(ctx)
	if err != nil {
		return nil, wireErr(err)
	}
	out := []BotInfo{}
	for _, t := range ts {
		if t.Kind == wire.TokenBot {
			out = append(out, BotInfo{Name: t.Name, Sessions: t.SessionList(), CreatedAt: t.CreatedAt, Serving: h.serving(t.Name)})
		}
	}
	return out, nil
}

// botExists says whether a bot of that name has a token.
func (h *Hub) botExists(name string) bool {
	h.tokens.mu.RLock()
	defer h.tokens.mu.RUnlock()
	for _, p := range h.tokens.byHash {
		if p.Role == wire.TokenBot && p.Name == name {
			return true
		}
	}
	return false
}
