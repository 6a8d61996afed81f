package tools

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
)

// Offer is one tool a session may call now.
type Offer struct {
	Full   string // its full name: bot:BOT/TOOL
	Source Source
	Owner  string // the bot, the server
	Spec   Spec
	API    string // the name its model is given (APIName)
	// Default is its policy when no rule matches it: Ask, but Allow for
	// an MCP tool its server says only reads ("" is Ask).
	Default Decision
}

// Sources is what the daemon's tool sources offer now: the tools each
// serving connection of a bot declared (the newest declaration of a bot
// wins while it is connected). Its methods may be called from any
// goroutine.
type Sources struct {
	mu   sync.Mutex
	bots map[string][]botDecl // by bot name, oldest first
}

// botDecl is one connection's declaration: key names the connection;
// may says whether it may act in a session.
type botDecl struct {
	key   any
	specs []Spec
	may   func(session string) bool
}

// SetBot records the tools a bot's connection (key) serves, checked
// already (CheckSpecs); may says which sessions they are offered in.
func (s *Sources) SetBot(bot string, key any, specs []Spec, may func(session string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bots == nil {
		s.bots = map[string][]botDecl{}
	}
	list := slices.DeleteFunc(s.bots[bot], func(d botDecl) bool { return d.key == key })
	s.bots[bot] = append(list, botDecl{key: key, specs: slices.Clone(specs), may: may})
}

// DropBot forgets a connection's declaration.
func (s *Sources) DropBot(bot string, key any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := slices.DeleteFunc(s.bots[bot], func(d botDecl) bool { return d.key == key })
	if len(list) == 0 {
		delete(s.bots, bot)
		return
	}
	s.bots[bot] = list
}

// Declared returns the tools each bot serves from here: the newest
// declaration of its connections.
func (s *Sources) Declared() map[string][]Spec {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]Spec, len(s.bots))
	for bot, list := range s.bots {
		out[bot] = list[len(list)-1].specs
	}
	return out
}

// Offers lists the tools session may call, by full name; "" lists every
// tool, wherever it may be called.
func (s *Sources) Offers(session string) []Offer {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Offer
	for bot, list := range s.bots {
		d := list[len(list)-1]
		if session != "" && !d.may(session) {
			continue
		}
		for _, spec := range d.specs {
			full := FullName(SourceBot, bot, spec.Name)
			out = append(out, Offer{Full: full, Source: SourceBot, Owner: bot, Spec: spec, API: APIName(full)})
		}
	}
	return Unique(out)
}

// Unique sorts offers by full name and leaves out those whose API name
// an earlier one has: two full names that map to one API name, the first
// keeps it.
func Unique(offers []Offer) []Offer {
	slices.SortFunc(offers, func(a, b Offer) int { return cmp.Compare(a.Full, b.Full) })
	seen := make(map[string]bool, len(offers))
	return slices.DeleteFunc(offers, func(o Offer) bool {
		dup := seen[o.API]
		seen[o.API] = true
		return dup
	})
}

// MaxAPIName is the longest tool name the providers' APIs take.
const MaxAPIName = 64

// apiNames writes a full name's ":" and "/" as "__", and an MCP tool's
// "." as "_", which every API takes.
var apiNames = strings.NewReplacer(":", "__", "/", "__", ".", "_")

// APIName is a full name as the providers' APIs take a tool's name
// (1–64 of a-z A-Z 0-9 _ -): bot:weather/forecast is
// bot__weather__forecast. One longer than 64 keeps its start and ends in
// a hash of the whole, so that the same full name always maps to the
// same API name, across restarts too.
func APIName(full string) string {
	name := apiNames.Replace(full)
	if len(name) <= MaxAPIName {
		return name
	}
	sum := sha256.Sum256([]byte(full))
	return name[:MaxAPIName-9] + "_" + hex.EncodeToString(sum[:4])
}
