package main

import (
	"runtime"
	"runtime/debug"
	"strings"

	"albedo/api"
	"albedo/wire"
)

// version is set at link time by a release build:
//
//	go build -ldflags "-X main.version=1.2.3" ./cmd/albedo
//
// It is a package variable because -X can set nothing else.
var version string

// build is what this binary is: its version (the linked one, else the
// protocol's marked -dev) and the commit Go stamped into it when it was
// built from a checkout ("" when it was not; "+modified" when the
// checkout had changes).
func build() (ver, commit string) {
	ver = version
	if ver == "" {
		ver = wire.Version + "-dev"
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ver, ""
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value[:min(len(s.Value), 12)] + commit
		case "vcs.modified":
			if s.Value == "true" {
				commit += "+modified"
			}
		}
	}
	if strings.HasPrefix(commit, "+") { // modified, of no known commit
		commit = ""
	}
	return ver, commit
}

// daemonBuild is build as the API reports it.
func daemonBuild() api.Build {
	ver, commit := build()
	return api.Build{Version: ver, Commit: commit}
}

// versionString is what `albedo --version` prints: the version, with the
// commit and Go's version.
func versionString() string {
	ver, commit := build()
	about := runtime.Version()
	if commit != "" {
		about = "commit " + commit + ", " + about
	}
	return ver + " (" + about + ")"
}
