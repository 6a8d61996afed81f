//go:build !e2e_only || e2e_core

package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// appendConfig adds text at the end of home's config.toml, as an editor
// would save it.
func appendConfig(t *testing.T, home, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(home, client.ConfigFile), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// listsProvider says whether GET /v1/providers names name.
func listsProvider(t *testing.T, c *client.Client, name string) bool {
	t.Helper()
	ps, err := c.Providers(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(ps.Providers, func(p wire.ProviderInfo) bool { return p.Name == name })
}

// A profile added to config.toml while the daemon runs is listed and
// answers turns without a restart; once removed it is gone for new
// sessions, and a turn already running on it ends as it would have.
func TestProfileAddedToRunningDaemon(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	writeConfig(t, home, "default_provider = \"echo\"\n")
	startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	if listsProvider(t, c, "late") {
		t.Fatal("profile late listed before it was added")
	}
	fake, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })

	appendConfig(t, home, fmt.Sprintf("\n[providers.late]\nkind = \"openai\"\nbase_url = %q\ndefault_model = \"late-model\"\n", fake.URL))
	for deadline := time.Now().Add(30 * time.Second); !listsProvider(t, c, "late"); {
		if time.Now().After(deadline) {
			t.Fatal("GET /v1/providers did not list the added profile within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := c.CreateSession(ctx, "s", wire.SessionCreate{Provider: "late"}); err != nil {
		t.Fatalf("a session on the added profile: %v", err)
	}
	r, err := c.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "hello late")
	if err != nil {
		t.Fatal(err)
	}
	if ev := waitTurn(t, c, "s", 0, r.TurnID); ev.State != wire.TurnCompleted {
		t.Fatalf("turn on the added profile: %+v", ev)
	}
	page, err := c.History(ctx, "s", 0, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(page.Events, func(e wire.Event) bool {
		return e.Role == wire.RoleAssistant && e.Text == "fake: hello late" && e.Author == "late-model"
	}) {
		t.Fatalf("no reply from the added profile: %+v", page.Events)
	}

	<-fake.Arrived() // the first turn's request

	// A turn running when its profile is removed keeps its provider.
	block := make(chan struct{})
	fake.Push(fakeopenai.Reply{Chunks: []string{"still ", "here"}, Block: block})
	r, err = c.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "second")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-fake.Arrived():
	case <-time.After(30 * time.Second):
		t.Fatal("the second turn never reached the provider")
	}
	writeConfig(t, home, "default_provider = \"echo\"\n")
	for deadline := time.Now().Add(30 * time.Second); listsProvider(t, c, "late"); {
		if time.Now().After(deadline) {
			t.Fatal("GET /v1/providers still lists the removed profile after 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := c.CreateSession(ctx, "t", wire.SessionCreate{Provider: "late"}); err == nil {
		t.Fatal("a session on the removed profile was created")
	}
	close(block)
	if ev := waitTurn(t, c, "s", 0, r.TurnID); ev.State != wire.TurnCompleted {
		t.Fatalf("the turn running while its profile was removed: %+v", ev)
	}
}

// A profile whose base_url has nothing listening fails the turn saying
// that nothing answers there and to check base_url, not that a reply
// stream broke: none ever started.
func TestProfileAtClosedPortSaysNothingAnswers(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	writeConfig(t, home, fmt.Sprintf("[providers.local]\nkind = \"openai\"\nbase_url = %q\ndefault_model = \"m\"\n", url))
	startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, "s", wire.SessionCreate{Provider: "local"}); err != nil {
		t.Fatal(err)
	}
	r, err := c.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "anyone?")
	if err != nil {
		t.Fatal(err)
	}
	ev := waitTurn(t, c, "s", 0, r.TurnID)
	want := fmt.Sprintf("profile \"local\": nothing answers at %s (connection refused): check its base_url in config.toml", url)
	if ev.State != wire.TurnFailed || !strings.Contains(ev.Error, want) || strings.Contains(ev.Error, "stream broke") {
		t.Fatalf("failed event %+v, want its error to say %q", ev, want)
	}
}
