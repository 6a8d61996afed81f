package provider

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

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
}

// Profile is one [providers.NAME] table.
type Profile struct {
	Kind         string   `toml:"kind"`     // "openai"
	BaseURL      string   `toml:"base_url"` // e.g. http://127.0.0.1:11434/v1
	APIKeyEnv    string   `toml:"api_key_env"`
	DefaultModel string   `toml:"default_model"`
	IdleTimeout  Duration `toml:"idle_timeout"` // fail a stream silent this long (default 120s)
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
// from any goroutine. Register and SetBots are for building it: call them
// before the registry is shared (the hub's Open calls SetBots).
type Registry struct {
	def       string
	providers map[string]Provider
	bots      func(name string) (Provider, error) // resolves "bot:NAME"; nil until set
}

// NewRegistry builds the providers of c. getenv reads api_key_env.
func NewRegistry(c Config, getenv func(string) string) (*Registry, error) {
	r := &Registry{def: c.DefaultProvider, providers: map[string]Provider{NameEcho: Echo{}}}
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
		switch p.Kind {
		case "openai", "":
			if p.BaseURL == "" {
				return nil, fmt.Errorf("provider %q: base_url is required", n)
			}
			key := ""
			if p.APIKeyEnv != "" {
				key = getenv(p.APIKeyEnv)
			}
			r.providers[n] = NewOpenAI(n, p, key)
		default:
			return nil, fmt.Errorf("provider %q: unknown kind %q (want \"openai\")", n, p.Kind)
		}
	}
	if r.def == "" {
		r.def = NameEcho
	}
	if _, ok := r.providers[r.def]; !ok && !strings.HasPrefix(r.def, BotPrefix) {
		return nil, fmt.Errorf("default_provider %q is not echo nor a [providers.%s] table", r.def, r.def)
	}
	return r, nil
}

// Default is the provider of sessions that name none.
func (r *Registry) Default() string { return r.def }

// Check says whether name can answer turns, in words for the user.
func (r *Registry) Check(name string) error {
	_, err := r.Get(name)
	return err
}

// Get returns the provider for a session's provider name ("" = default).
func (r *Registry) Get(name string) (Provider, error) {
	if name == "" {
		name = r.def
	}
	if strings.HasPrefix(name, BotPrefix) {
		if r.bots == nil {
			return nil, fmt.Errorf("provider %q: bot providers are not available in this daemon yet", name)
		}
		return r.bots(strings.TrimPrefix(name, BotPrefix))
	}
	if p, ok := r.providers[name]; ok {
		return p, nil
	}
	known := make([]string, 0, len(r.providers))
	for n := range r.providers {
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
	out := wire.Providers{Default: r.def, Providers: []wire.ProviderInfo{{Name: NameEcho, Kind: "echo"}}}
	names := make([]string, 0, len(r.providers))
	for n := range r.providers {
		if n != NameEcho {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		info := wire.ProviderInfo{Name: n, Kind: "custom"}
		if o, ok := r.providers[n].(*OpenAI); ok {
			info.Kind, info.Model = "openai", o.defaultModel
		}
		out.Providers = append(out.Providers, info)
	}
	return out
}

// Register adds (or replaces) a provider under name. For embedding albedo
// and for tests; call it before the registry is shared.
func (r *Registry) Register(name string, p Provider) { r.providers[name] = p }

// SetBots sets how "bot:NAME" resolves; call it before the registry is
// shared.
func (r *Registry) SetBots(resolve func(name string) (Provider, error)) { r.bots = resolve }
