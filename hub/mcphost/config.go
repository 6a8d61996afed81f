package mcphost

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"albedo/hub/tools"
)

// ServerConfig is one [mcp.NAME] table of config.toml: a server started
// as a program that speaks MCP on its stdin and stdout (Command, with
// Env and Cwd), or one reached over streamable HTTP (URL, with Headers).
type ServerConfig struct {
	Command []string         `toml:"command"`
	Env     map[string]Value `toml:"env"`
	Cwd     string           `toml:"cwd"`
	URL     string           `toml:"url"`
	Headers map[string]Value `toml:"headers"`
	// Sessions are the ids of the sessions its tools are offered in;
	// none: every session (a profile's mcp list may narrow it).
	Sessions []string `toml:"sessions"`
	// IdleTimeout stops a program unused this long (default 10m); the
	// next call, or the next turn that offers its tools, starts it again.
	IdleTimeout Duration `toml:"idle_timeout"`
	// StartTimeout bounds a start: the program's launch (or the first
	// request) and MCP's handshake and its list of tools (default 30s).
	StartTimeout Duration `toml:"start_timeout"`
}

// Defaults of a server's settings.
const (
	DefaultIdleTimeout  = 10 * time.Minute
	DefaultStartTimeout = 30 * time.Second
)

// Bounds on a server's settings.
const (
	MaxServers     = 64
	maxArgs        = 256
	maxArgBytes    = 4 << 10
	maxValues      = 64
	maxValueBytes  = 8 << 10
	maxSessions    = 1000
	maxSecretBytes = 64 << 10 // a value read from a file
)

// Value is a string of config.toml that may come from elsewhere, so that
// no secret need sit in the file: "text" is itself, {env = "NAME"} the
// daemon's environment variable NAME, {file = "/path"} the file's
// contents, without a last newline.
type Value struct {
	Text, Env, File string
}

// UnmarshalTOML reads a string or an inline table of one key, env or
// file.
func (v *Value) UnmarshalTOML(data any) error {
	switch d := data.(type) {
	case string:
		*v = Value{Text: d}
		return nil
	case map[string]any:
		if len(d) != 1 {
			return fmt.Errorf("a value is a string, {env = \"NAME\"} or {file = \"/path\"}")
		}
		for k, x := range d {
			s, ok := x.(string)
			switch {
			case !ok || s == "":
				return fmt.Errorf("%s: a non-empty string", k)
			case k == "env":
				*v = Value{Env: s}
			case k == "file":
				*v = Value{File: s}
			default:
				return fmt.Errorf("%s: a value is a string, {env = \"NAME\"} or {file = \"/path\"}", k)
			}
		}
		return nil
	}
	return fmt.Errorf("a value is a string, {env = \"NAME\"} or {file = \"/path\"}")
}

// Resolve is v's text, read from where it says.
func (v Value) Resolve(getenv func(string) string) (string, error) {
	switch {
	case v.Env != "":
		s := getenv(v.Env)
		if s == "" {
			return "", fmt.Errorf("environment variable %s is not set", v.Env)
		}
		return s, nil
	case v.File != "":
		b, err := os.ReadFile(v.File)
		if err != nil {
			return "", err
		}
		if len(b) > maxSecretBytes {
			return "", fmt.Errorf("%s: over %d bytes", v.File, maxSecretBytes)
		}
		return strings.TrimSuffix(string(b), "\n"), nil
	}
	return v.Text, nil
}

// ResolveEnv is a table's env as a program's environment, NAME=value in
// name order, each value read from where it says.
func ResolveEnv(env map[string]Value, getenv func(string) string) ([]string, error) {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, fmt.Errorf("env: %q is no variable's name", k)
		}
		v, err := env[k].Resolve(getenv)
		if err != nil {
			return nil, fmt.Errorf("env %s: %v", k, err)
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}

// Duration reads "90s"-style TOML strings.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err == nil && v < 0 {
		err = fmt.Errorf("%s is negative", b)
	}
	d.Duration = v
	return err
}

// resolved is a server's configuration with its values read.
type resolved struct {
	command  []string
	env      []string // NAME=value, beside the few of the daemon's (BaseEnv)
	cwd      string
	url      string
	headers  map[string]string
	sessions map[string]bool // nil: every session
	idle     time.Duration
	start    time.Duration
}

// check validates the server NAME's table and reads its values.
func (c ServerConfig) check(name string, getenv func(string) string) (resolved, error) {
	r := resolved{cwd: c.Cwd, idle: c.IdleTimeout.Duration, start: c.StartTimeout.Duration}
	if !tools.ValidName(name) {
		return r, fmt.Errorf("mcp.%s: a server's name is 1–64 of a-z 0-9 _ -", name)
	}
	at := func(format string, a ...any) error {
		return fmt.Errorf("mcp.%s: "+format, append([]any{name}, a...)...)
	}
	switch {
	case len(c.Command) > 0 == (c.URL != ""):
		return r, at("set command (a program speaking MCP on stdio) or url (streamable HTTP), one of them")
	case len(c.Command) > maxArgs || slices.ContainsFunc(c.Command, func(a string) bool { return len(a) > maxArgBytes }):
		return r, at("command: at most %d arguments of %d bytes", maxArgs, maxArgBytes)
	case len(c.Command) > 0 && c.Command[0] == "":
		return r, at("command: the program is empty")
	case c.URL != "" && (len(c.Env) > 0 || c.Cwd != ""):
		return r, at("env and cwd are a command's; a url server takes headers")
	case len(c.Command) > 0 && len(c.Headers) > 0:
		return r, at("headers are a url server's; a command takes env")
	case len(c.Env) > maxValues || len(c.Headers) > maxValues:
		return r, at("at most %d env values or headers", maxValues)
	case len(c.Sessions) > maxSessions:
		return r, at("sessions: at most %d", maxSessions)
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return r, at("url %q is not an http(s) URL", c.URL)
		}
		r.url = c.URL
	}
	r.command = slices.Clone(c.Command)
	env, err := ResolveEnv(c.Env, getenv)
	if err != nil {
		return r, at("%v", err)
	}
	r.env = env
	if len(c.Headers) > 0 {
		r.headers = map[string]string{}
		for k, hv := range c.Headers {
			v, err := hv.Resolve(getenv)
			if err != nil {
				return r, at("header %s: %v", k, err)
			}
			if k == "" || len(v) > maxValueBytes || strings.ContainsAny(k+v, "\r\n\x00") {
				return r, at("header %q: a name and a value of at most %d bytes on one line", k, maxValueBytes)
			}
			r.headers[k] = v
		}
	}
	if len(c.Sessions) > 0 {
		r.sessions = map[string]bool{}
		for _, s := range c.Sessions {
			r.sessions[s] = true
		}
	}
	if r.idle == 0 {
		r.idle = DefaultIdleTimeout
	}
	if r.start == 0 {
		r.start = DefaultStartTimeout
	}
	return r, nil
}

// BaseEnv is what a server's program gets of the daemon's environment:
// where programs and its home are, and the locale. Nothing else, so that
// no secret of the daemon's (a provider's API key) reaches a program
// that did not ask for it; env adds what a server needs, from the
// daemon's environment or a file ({env = …}, {file = …}).
func BaseEnv(getenv func(string) string) []string {
	var out []string
	for _, k := range []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ"} {
		if v := getenv(k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// equal says whether two resolved configurations start the same server.
func (r resolved) equal(o resolved) bool {
	return slices.Equal(r.command, o.command) && slices.Equal(r.env, o.env) && r.cwd == o.cwd && r.url == o.url &&
		maps.Equal(r.headers, o.headers) && maps.Equal(r.sessions, o.sessions) && r.idle == o.idle && r.start == o.start
}
