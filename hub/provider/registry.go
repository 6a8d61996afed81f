package provider

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/BurntSushi/toml"

	"albedo/hub/mcphost"
	"albedo/hub/tools"
	"albedo/wire"
)

// Built-in provider names.
const (
	NameEcho  = "echo"
	BotPrefix = "bot:"
)

// Config is $ALBEDO_HOME/config.toml. Besides the providers it names the
// database (the daemon reads it; --db overrides it).
type Config struct {
	DefaultProvider string             `toml:"default_provider"`
	Providers       map[string]Profile `toml:"providers"`
	// DatabaseURL is a postgres:// URL shared with the other nodes of a
	// cluster; empty is the home's SQLite file.
	DatabaseURL string `toml:"database_url"`
	// Name is the member name of the person who runs this daemon, whom its
	// daemon.json token acts as; empty is their login name.
	Name string `toml:"name"`
	// Daemon is the [daemon] table: values of `albedo daemon`'s flags, by
	// flag name, which the command reads itself (cmd/albedo/daemonconfig.go).
	Daemon map[string]any `toml:"daemon"`
	// Tools is the [tools] table: the policy of tool calls.
	Tools ToolsConfig `toml:"tools"`
	// MCP is the [mcp.NAME] tables: the MCP servers the daemon hosts,
	// whose tools its sessions may call (hub/mcphost).
	MCP map[string]mcphost.ServerConfig `toml:"mcp"`
}

// ToolsConfig is the [tools] table.
type ToolsConfig struct {
	// ApprovalTimeout is how long a call waits for a person's decision
	// before it expires (default 1h).
	ApprovalTimeout Duration `toml:"approval_timeout"`
	// Rules, [[tools.rules]], map a glob over a tool's full name to
	// allow, ask or deny; the last that matches decides, ask by default.
	Rules []ToolRule `toml:"rules"`
}

// ToolRule is one [[tools.rules]].
type ToolRule struct {
	Match  string `toml:"match"`
	Policy string `toml:"policy"`
	// Participant limits the rule to one participant's calls (its name).
	Participant string `toml:"participant"`
}

// DefaultApprovalTimeout is how long a call waits for a decision when
// config.toml says nothing.
const DefaultApprovalTimeout = time.Hour

// Tool limits of a profile, when it sets none.
const (
	DefaultToolTimeout  = 5 * time.Minute
	DefaultMaxToolCalls = 32
)

// Profile is one [providers.NAME] table.
type Profile struct {
	Kind         string   `toml:"kind"`     // "openai" (the default), "anthropic" or "acp"
	BaseURL      string   `toml:"base_url"` // e.g. http://127.0.0.1:11434/v1
	APIKeyEnv    string   `toml:"api_key_env"`
	DefaultModel string   `toml:"default_model"`
	IdleTimeout  Duration `toml:"idle_timeout"` // fail a stream silent this long (default 120s)
	// Prices, in USD per million tokens, make each turn's usage carry its
	// cost; without them a turn has tokens and no cost.
	Prices *Prices `toml:"prices"`
	// System is the system text of the profile's sessions that set none.
	System string `toml:"system"`
	// Titles is how its untitled sessions get a title after a turn:
	// TitlesWords (the default), TitlesProvider or TitlesOff.
	Titles string `toml:"titles"`
	// ContextTokens is the model's context window, in tokens: a turn's
	// transcript is compacted to fit it (context.go). 0 takes the model
	// family's (DefaultContext).
	ContextTokens int `toml:"context_tokens"` // 0: the model's family's; else at least MinContextTokens
	// SummaryProvider names the provider that writes compactions'
	// summaries ("": this one).
	SummaryProvider string `toml:"summary_provider"`
	// ToolTimeout fails a tool call that runs longer (default 5m).
	ToolTimeout Duration `toml:"tool_timeout"`
	// MaxToolCalls bounds the calls of one turn (default 32): past it
	// the turn fails, saying why.
	MaxToolCalls int `toml:"max_tool_calls"`
	// MCP names the MCP servers ([mcp.NAME]) whose tools its sessions
	// are offered; absent: every one, [] none.
	MCP []string `toml:"mcp"`

	// The settings of kind "acp", a coding agent (acp.go): the program
	// and its arguments, the environment it gets besides the few of the
	// daemon's, when it is stopped unused, how long its start may take,
	// whether it is served the workspace's files and commands, and how
	// long a command may run.
	Command         []string                 `toml:"command"`
	Env             map[string]mcphost.Value `toml:"env"`
	StopIdle        Duration                 `toml:"stop_idle"`
	StartTimeout    Duration                 `toml:"start_timeout"`
	FS              *bool                    `toml:"fs"`
	Terminal        *bool                    `toml:"terminal"`
	TerminalTimeout Duration                 `toml:"terminal_timeout"`
}

// ToolLimits are a profile's tool settings, with their defaults.
func (p Profile) ToolLimits() ToolLimits {
	l := ToolLimits{Timeout: p.ToolTimeout.Duration, MaxCalls: p.MaxToolCalls}
	if l.Timeout <= 0 {
		l.Timeout = DefaultToolTimeout
	}
	if l.MaxCalls <= 0 {
		l.MaxCalls = DefaultMaxToolCalls
	}
	return l
}

// ToolLimits bound a turn's tool calls.
type ToolLimits struct {
	Timeout  time.Duration // of one call
	MaxCalls int           // in one turn
}

// ToolCaller is a provider whose model may call tools, within its
// profile's limits.
type ToolCaller interface {
	ToolLimits() ToolLimits
}

// The ways of Profile.Titles.
const (
	TitlesWords    = "words"    // the first words of the first message
	TitlesProvider = "provider" // a short call to the provider, else the first words
	TitlesOff      = "off"
)

// Titler is a provider that says how its sessions are titled.
type Titler interface {
	Titles() string
}

// Prices are a profile's prices per million tokens. CachedInput is for
// input read from the provider's cache (Input when not set).
type Prices struct {
	Input       float64  `toml:"input"`
	Output      float64  `toml:"output"`
	CachedInput *float64 `toml:"cached_input"`
}

// Cost is what u cost at p, in USD.
func (p Prices) Cost(u wire.Usage) float64 {
	cached := int64(0)
	if u.CachedTokens != nil {
		cached = min(*u.CachedTokens, u.InputTokens)
	}
	cachedPrice := p.Input
	if p.CachedInput != nil {
		cachedPrice = *p.CachedInput
	}
	return (float64(u.InputTokens-cached)*p.Input + float64(cached)*cachedPrice + float64(u.OutputTokens)*p.Output) / 1e6
}

// SystemPrompter is a provider whose profile may give sessions a system
// text.
type SystemPrompter interface {
	System() string
}

// Pricer is a provider whose profile may set prices.
type Pricer interface {
	Prices() *Prices
}

// Duration reads "90s"-style TOML strings.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	d.Duration = v
	return err
}

// LoadConfig reads config.toml; a missing file is the empty config (echo).
func LoadConfig(path string) (Config, error) {
	var c Config
	md, err := toml.DecodeFile(path, &c)
	if errors.Is(err, os.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %w", path, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		keys := make([]string, len(un))
		for i, k := range un {
			keys[i] = k.String()
		}
		return Config{}, fmt.Errorf("read %s: unknown keys %s", path, strings.Join(keys, ", "))
	}
	return c, nil
}

// Registry resolves a session's provider name. Its methods may be called
// from any goroutine, Reload and Register too: they replace the table of
// providers whole, so a reader sees the table before or the one after,
// and a turn that got its provider keeps it whatever happens next.
// SetBots is for building it: call it before the registry is shared (the
// hub's Open calls it).
type Registry struct {
	table atomic.Pointer[table] // never changed in place; replaced under mu

	mu     sync.Mutex
	custom map[string]Provider // registered in code; kept across reloads; guarded by mu

	bots func(name string) (Provider, error) // resolves "bot:NAME"; nil until set
}

// table is one version of the registry's providers, read-only once stored.
type table struct {
	def       string
	providers map[string]Provider
	policy    tools.Policy
	approval  time.Duration
	mcp       map[string][]string // a profile's mcp list, where it has one
}

// NewRegistry builds the providers of c. getenv reads api_key_env.
func NewRegistry(c Config, getenv func(string) string) (*Registry, error) {
	r := &Registry{custom: map[string]Provider{}}
	t, err := buildTable(c, getenv, nil)
	if err != nil {
		return nil, err
	}
	r.table.Store(t)
	return r, nil
}

// Reload replaces the providers with those of c, for the next turns (a
// running turn keeps the provider it started with). Providers registered
// in code stay. If c is refused, the providers before stay and the error
// says why.
func (r *Registry) Reload(c Config, getenv func(string) string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, err := buildTable(c, getenv, r.custom)
	if err != nil {
		return err
	}
	r.table.Store(t)
	return nil
}

// buildTable makes the providers of c, echo and custom among them (custom
// replaces a profile of the same name).
func buildTable(c Config, getenv func(string) string, custom map[string]Provider) (*table, error) {
	t := &table{def: c.DefaultProvider, providers: map[string]Provider{NameEcho: Echo{}}, approval: DefaultApprovalTimeout,
		mcp: map[string][]string{}}
	if err := t.setTools(c.Tools); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(c.Providers))
	for n := range c.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := c.Providers[n]
		if n == NameEcho || strings.HasPrefix(n, BotPrefix) {
			return nil, fmt.Errorf("provider name %q is reserved", n)
		}
		if p.ContextTokens != 0 && p.ContextTokens < MinContextTokens {
			return nil, fmt.Errorf("provider %q: context_tokens is %d; leave it out for the model's own window, or give at least %d", n, p.ContextTokens, MinContextTokens)
		}
		if p.ToolTimeout.Duration < 0 || p.MaxToolCalls < 0 || p.MaxToolCalls > MaxToolCallsLimit {
			return nil, fmt.Errorf("provider %q: tool_timeout is a positive duration, max_tool_calls 1 to %d", n, MaxToolCallsLimit)
		}
		if p.MCP != nil {
			for _, m := range p.MCP {
				if _, ok := c.MCP[m]; !ok {
					return nil, fmt.Errorf("provider %q: mcp names %q, which is no [mcp.%s] table", n, m, m)
				}
			}
			t.mcp[n] = slices.Clone(p.MCP)
		}
		switch p.Kind {
		case "openai", "":
			if p.BaseURL == "" {
				return nil, fmt.Errorf("provider %q: base_url is required", n)
			}
			key := ""
			if p.APIKeyEnv != "" {
				key = getenv(p.APIKeyEnv)
			}
			t.providers[n] = NewOpenAI(n, p, key)
		case "anthropic":
			key := ""
			if p.APIKeyEnv != "" {
				key = getenv(p.APIKeyEnv)
			}
			t.providers[n] = NewAnthropic(n, p, key)
		case KindACP:
			a, err := newACP(n, p, getenv)
			if err != nil {
				return nil, err
			}
			t.providers[n] = a
		default:
			return nil, fmt.Errorf("provider %q: unknown kind %q (want \"openai\", \"anthropic\" or \"acp\")", n, p.Kind)
		}
	}
	maps.Copy(t.providers, custom)
	if t.def == "" {
		t.def = NameEcho
	}
	if _, ok := t.providers[t.def]; !ok && !strings.HasPrefix(t.def, BotPrefix) {
		return nil, fmt.Errorf("default_provider %q is not echo nor a [providers.%s] table", t.def, t.def)
	}
	return t, nil
}

// MaxToolCallsLimit is the most max_tool_calls may be.
const MaxToolCallsLimit = 256

// setTools reads the [tools] table.
func (t *table) setTools(c ToolsConfig) error {
	if c.ApprovalTimeout.Duration < 0 {
		return fmt.Errorf("[tools] approval_timeout is a positive duration")
	}
	if c.ApprovalTimeout.Duration > 0 {
		t.approval = c.ApprovalTimeout.Duration
	}
	rules := make([]tools.Rule, len(c.Rules))
	for i, r := range c.Rules {
		rules[i] = tools.Rule{Glob: r.Match, Policy: tools.Decision(r.Policy), Participant: r.Participant}
	}
	p, err := tools.NewPolicy(rules)
	if err != nil {
		return fmt.Errorf("[[tools.rules]] %w", err)
	}
	t.policy = p
	return nil
}

// Tools returns the policy of tool calls and how long a call waits for a
// decision, as config.toml says now.
func (r *Registry) Tools() (tools.Policy, time.Duration) {
	t := r.table.Load()
	return t.policy, t.approval
}

// MCPServers says which MCP servers the sessions of provider name may
// use: those its profile's mcp list names, or every one (nil) when it
// names none.
func (r *Registry) MCPServers(name string) func(server string) bool {
	list, ok := r.table.Load().mcp[cmp.Or(name, r.Default())]
	if !ok {
		return nil
	}
	return func(server string) bool { return slices.Contains(list, server) }
}

// Default is the provider of sessions that name none.
func (r *Registry) Default() string { return r.table.Load().def }

// Check says whether name can answer turns, in words for the user.
func (r *Registry) Check(name string) error {
	_, err := r.Get(name)
	return err
}

// Get returns the provider for a session's provider name ("" = default).
func (r *Registry) Get(name string) (Provider, error) {
	t := r.table.Load()
	if name == "" {
		name = t.def
	}
	if strings.HasPrefix(name, BotPrefix) {
		if r.bots == nil {
			return nil, fmt.Errorf("provider %q: bot providers are not available in this daemon yet", name)
		}
		return r.bots(strings.TrimPrefix(name, BotPrefix))
	}
	if p, ok := t.providers[name]; ok {
		return p, nil
	}
	known := make([]string, 0, len(t.providers))
	for n := range t.providers {
		known = append(known, n)
	}
	sort.Strings(known)
	return nil, fmt.Errorf("unknown provider %q; known: %s (add profiles in config.toml)", name, strings.Join(known, ", "))
}

// List is what GET /v1/providers says: the default and every provider by
// name (echo first, then config.toml's profiles in name order), without
// their URLs or keys. Providers registered in code (tests) are listed by
// name, as kind "custom".
func (r *Registry) List() wire.Providers {
	t := r.table.Load()
	out := wire.Providers{Default: t.def, Providers: []wire.ProviderInfo{{Name: NameEcho, Kind: "echo"}}}
	names := make([]string, 0, len(t.providers))
	for n := range t.providers {
		if n != NameEcho {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		info := wire.ProviderInfo{Name: n, Kind: "custom"}
		switch p := t.providers[n].(type) {
		case *OpenAI:
			info.Kind, info.Model = "openai", p.defaultModel
		case *Anthropic:
			info.Kind, info.Model = "anthropic", p.defaultModel
		case *ACP:
			info.Kind = KindACP
		}
		out.Providers = append(out.Providers, info)
	}
	return out
}

// Register adds (or replaces) a provider under name, which reloads keep.
// For embedding albedo and for tests.
func (r *Registry) Register(name string, p Provider) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.custom[name] = p
	old := r.table.Load()
	t := &table{def: old.def, providers: maps.Clone(old.providers), policy: old.policy, approval: old.approval}
	t.providers[name] = p
	r.table.Store(t)
}

// SetBots sets how "bot:NAME" resolves; call it before the registry is
// shared.
func (r *Registry) SetBots(resolve func(name string) (Provider, error)) { r.bots = resolve }
