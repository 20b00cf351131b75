package agent

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
)

// TestRealOllama runs a small task against a real Ollama with a tiny model that takes tools. It
// runs only when asked, with LOCUM_TEST_OLLAMA=1 (LOCUM_TEST_OLLAMA_URL, default
// http://127.0.0.1:11434/v1; LOCUM_TEST_OLLAMA_MODEL, default qwen2.5:0.5b): whatever happens
// to answer on a developer's port is no reason to send it work. A tiny model may well not finish
// the task: the test holds the contract, not the model's skill: one closed status, the user's
// tree untouched, and a branch left only when the verify passed. The recorded replies in
// runner/scripted are the hermetic cover.
func TestRealOllama(t *testing.T) {
	if os.Getenv("LOCUM_TEST_OLLAMA") != "1" {
		t.Skip("talks to a real Ollama: set LOCUM_TEST_OLLAMA=1 to run it")
	}
	base := envOr("LOCUM_TEST_OLLAMA_URL", "http://127.0.0.1:11434/v1")
	model := envOr("LOCUM_TEST_OLLAMA_MODEL", "qwen2.5:0.5b")
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	c := &packs.Composition{Packs: []*packs.Pack{p}}
	s, err := c.Resolve("agent", nil, map[string]string{"base-url": base, "max-turns": "8", "effort": "none"})
	require.NoError(t, err)
	probe := client.New(client.Config{BaseURL: mustURL(t, base), Timeout: 10 * time.Second})
	info, err := probe.Probe(context.Background())
	require.NoError(t, err, "LOCUM_TEST_OLLAMA=1 asks for a real Ollama at %s", base)
	require.True(t, info.Has(model), "%s does not serve %s (LOCUM_TEST_OLLAMA_MODEL)", base, model)

	root := gittest.Repo(t, map[string]string{"greet.txt": "hello\n"})

	res := engine.Execute(context.Background(), engine.RunSpec{Mode: "agent", Root: root, Settings: s, Model: model, Routing: "operator",
		JournalPath: filepath.Join(t.TempDir(), "j.jsonl")},
		Steps(Options{Task: "Change the word hello in greet.txt to goodbye.", Verify: "grep -q goodbye greet.txt", Root: root}))
	d := res.Details.(*engine.AgentDetails)
	status := ""
	if d.Status != nil {
		status = *d.Status
	}
	t.Logf("status %s after %d turns: %s", status, d.Turns, res.Receipt())
	assert.True(t, slices.Contains(Statuses, status), "status %q", status)
	data, err := os.ReadFile(filepath.Join(root, "greet.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(data), "the user's tree is never touched")
	if status == StatusCompleted {
		assert.Equal(t, 0, res.ExitCode)
	} else {
		assert.NotEqual(t, 0, res.ExitCode)
		assert.Nil(t, d.Branch)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := rails.ParseEndpoint(raw, false)
	require.NoError(t, err)
	return u
}
