//go:build race

package e2e

// raceBuild says whether the test binary has the race detector: the
// daemon and the bot it runs are built the same way.
const raceBuild = true
