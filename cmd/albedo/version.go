package main

import (
	"runtime/debug"

	"albedo/wire"
)

// version is set at link time by a release build:
//
//	go build -ldflags "-X main.version=1.2.3" ./cmd/albedo
//
// It is a package variable because -X can set nothing else.
var version string

// versionString is what `albedo --version` prints: the linked version, or
// else the protocol's version marked as a development build, with the
// commit Go stamped into the binary when it was built from a checkout.
func versionString() string {
	if version != "" {
		return version
	}
	v := wire.Version + "-dev"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	about := info.GoVersion
	if rev != "" {
		about = "commit " + rev[:min(len(rev), 12)] + dirty + ", " + about
	}
	return v + " (" + about + ")"
}
