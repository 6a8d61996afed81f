// Package e2e holds black-box tests against the built albedo binary: real
// daemon processes on a temporary $ALBEDO_HOME, real restarts, real SQLite
// files and websockets on 127.0.0.1.
package e2e
