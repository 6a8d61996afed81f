package tools

import "strings"

// MaxNameBytes bounds a tool's own name, and a bot's or server's.
const MaxNameBytes = 64

// ValidName says whether name is a tool's (or a source's) name: 1–64 of
// a-z 0-9 _ -.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameBytes {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ValidMCPName says whether name is an MCP server's tool's name as the
// daemon offers it: 1–64 of A-Z a-z 0-9 _ - . (MCP allows these, up to
// 128; a provider's API takes 64 at most, and no dot: APIName maps it).
func ValidMCPName(name string) bool {
	if name == "" || len(name) > MaxNameBytes {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Source is where a tool comes from: what runs its calls.
type Source string

const (
	SourceBot Source = "bot" // a bot's connection serves it
	SourceMCP Source = "mcp" // an MCP server the daemon hosts
)

// FullName is the name a tool is known by in sessions, policies and
// events: SOURCE:OWNER/TOOL, as bot:weather/forecast.
func FullName(src Source, owner, tool string) string {
	return string(src) + ":" + owner + "/" + tool
}

// ParseFull splits a full name; ok is false for one that is not
// SOURCE:OWNER/TOOL with a known source and valid names (an MCP tool's
// by ValidMCPName).
func ParseFull(full string) (src Source, owner, tool string, ok bool) {
	s, rest, found := strings.Cut(full, ":")
	if !found || Source(s) != SourceBot && Source(s) != SourceMCP {
		return "", "", "", false
	}
	owner, tool, found = strings.Cut(rest, "/")
	valid := ValidName
	if Source(s) == SourceMCP {
		valid = ValidMCPName
	}
	if !found || !ValidName(owner) || !valid(tool) {
		return "", "", "", false
	}
	return Source(s), owner, tool, true
}
