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
// servers, opencode), at the versions they were written against. .ci/run installs
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
// called name (everything, filesystem), installing the packages first if
// they are missing.
func mcpServer(t *testing.T, name string) string {
	t.Helper()
	skipShort(t, "the MCP reference servers from npm")
	npmInstalled(t)
	return filepath.Join(npmDir(), "node_modules", "@modelcontextprotocol", "server-"+name, "dist", "index.js")
}

// opencodeBin is the path of opencode's binary for this machine (the
// baseline build where the CPU lacks AVX2), installing the packages first
// if they are missing.
func opencodeBin(t *testing.T) string {
	t.Helper()
	skipShort(t, "opencode from npm")
	npmInstalled(t)
	pkg := "opencode-linux-x64"
	if cpu, err := os.ReadFile("/proc/cpuinfo"); err == nil && !strings.Contains(string(cpu), " avx2") {
		pkg += "-baseline"
	}
	return filepath.Join(npmDir(), "node_modules", pkg, "bin", "opencode")
}

// npmInstalled installs the packages of npmPackages unless each is there.
func npmInstalled(t *testing.T) {
	t.Helper()
	dir := npmDir()
	npmOnce.Do(func() {
		list, err := os.ReadFile(npmPackages)
		if err != nil {
			npmOnce.err = err
			return
		}
		missing := false
		for _, p := range strings.Fields(string(list)) {
			name := p[:strings.LastIndex(p, "@")]
			if _, err := os.Stat(filepath.Join(dir, "node_modules", name, "package.json")); err != nil {
				missing = true
			}
		}
		if !missing {
			return
		}
		cmd := exec.Command("npm", append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, strings.Fields(string(list))...)...)
		npmOnce.out, npmOnce.err = cmd.CombinedOutput()
	})
	if npmOnce.err != nil {
		t.Fatalf("npm install of %s (npm and Node.js are needed): %v\n%s", npmPackages, npmOnce.err, npmOnce.out)
	}
}
