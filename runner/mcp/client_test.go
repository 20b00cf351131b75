package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/scripted"
)

// clientDir holds the TypeScript client test, its package.json and lockfile; .ci/run installs it
// with npm ci.
const clientDir = "testdata/client"

// TestOfficialClient drives a built locum mcp over stdio with the official TypeScript MCP client:
// the tools and their schemas, status, a transform kept, red and cancelled, a role refusal, and
// progress notifications.
func TestOfficialClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds locum and runs node")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the official-client acceptance test needs node 20 or later (CI has it)")
	}
	if _, err := os.Stat(filepath.Join(clientDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the MCP client package is not installed: .ci/run runs npm ci --prefix runner/mcp/%s first", clientDir)
		}
		t.Skipf("the MCP client package is not installed: run npm ci --prefix runner/mcp/%s", clientDir)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "locum")
	build := exec.Command("go", "build", "-o", bin, "github.com/locumdev/locum/cmd/locum")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building locum: %s", out)

	work := filepath.Join(tmp, "work")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "orig"), 0o755))
	require.NoError(t, exec.Command("git", "init", "-q", work).Run())
	for _, p := range []string{"calc.go", "orig/calc.go"} {
		require.NoError(t, os.WriteFile(filepath.Join(work, p), []byte(calc), 0o644))
	}

	llm := scripted.New()
	defer llm.Close()
	require.NoError(t, llm.Mimic("lmstudio"))
	llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &goodEdit})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	script, err := filepath.Abs(filepath.Join(clientDir, "client.test.mjs"))
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", script)
	cmd.Dir = clientDir
	cmd.Env = append(os.Environ(), "LOCUM_BIN="+bin, "LOCUM_WORK="+work, "LOCUM_BASE_URL="+llm.BaseURL(), "HOME="+tmp)
	out, err = cmd.CombinedOutput()
	t.Logf("%s", out)
	require.NoError(t, err, "the official MCP client's checks failed")
}
