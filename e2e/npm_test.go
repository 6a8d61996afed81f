package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// npmPackages lists the npm packages the tests run (the MCP reference
// servers), at the versions they were written against. .ci/run installs
// them before the suite, with the same command; a test installs them
// itself when they are missing, so that the README's test command runs
// alone too.
const npmPackages = "testdata/npm-packages.txt"

// npmDir is where they are installed: $ALBEDO_E2E_NPM, else the user's
// cache (~/.cache/albedo/e2e-npm), outside the tree.
func npmDir() string {
	if d := os.Getenv("ALBEDO_E2E_NPM"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "albedo", "e2e-npm")
}

var npmOnce struct {
	sync.Once
	err error
	out []byte
}

// mcpServer is the path of the entry point of the reference server
// called name (everything, filesystem), installing the servers first if
// they are missing.
func mcpServer(t *testing.T, name string) string {
	t.Helper()
	skipShort(t, "the MCP reference servers from npm")
	dir := npmDir()
	entry := func(n string) string {
		return filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-"+n, "dist", "index.js")
	}
	npmOnce.Do(func() {
		if _, err := os.Stat(entry("filesystem")); err == nil {
			if _, err := os.Stat(entry("everything")); err == nil {
				return
			}
		}
		list, err := os.ReadFile(npmPackages)
		if err != nil {
			npmOnce.err = err
			return
		}
		cmd := exec.Command("npm", append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, strings.Fields(string(list))...)...)
		npmOnce.out, npmOnce.err = cmd.CombinedOutput()
	})
	if npmOnce.err != nil {
		t.Fatalf("npm install of %s (npm and Node.js are needed): %v\n%s", npmPackages, npmOnce.err, npmOnce.out)
	}
	return entry(name)
}
