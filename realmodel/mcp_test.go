//go:build realmodel

package realmodel

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
)

// TestFirstDelegationOverMCPOnARealModel plays the first delegation with the host on the other
// side of `locum mcp`, through the official TypeScript client the hermetic suite uses: the
// person runs init; the host's transform with no model is refused with the command that fixes it;
// the person accepts the role (its screen is TestFirstDelegationOnARealModel's, so it is skipped
// here); the host's same call runs on the real model with routing=operator, and a kept edit
// passes the verify again on the final file.
func TestFirstDelegationOverMCPOnARealModel(t *testing.T) {
	s := shared
	node, err := exec.LookPath("node")
	require.NoError(t, err, "the MCP road needs node 20 or later")
	client, err := filepath.Abs(filepath.Join("..", "mcp", "testdata", "client"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(client, "node_modules", "@modelcontextprotocol", "sdk"))
	require.NoError(t, err, "install the official client first: npm ci --prefix mcp/testdata/client")

	tk := taskNamed(t, "go-add")
	dir := tk.materialize(t)
	home := t.TempDir()
	gittest.Init(t, dir)
	r := s.locumIn(t, dir, home, "init")
	require.Equal(t, 0, r.exit, "init:\n%s", r.stderr)
	mcpJSON, err := os.ReadFile(filepath.Join(dir, ".mcp.json"))
	require.NoError(t, err)
	assert.Contains(t, string(mcpJSON), `"mcp"`, "init wrote the host's MCP server")

	taskJSON, err := json.Marshal(map[string]string{"file": tk.File, "symbol": tk.Symbol, "verify": tk.Verify, "task": tk.Task})
	require.NoError(t, err)
	host := func(step string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", filepath.Join(client, "realmodel-road.test.mjs"))
		cmd.Dir = client
		cmd.Env = append(s.env(home), "LOCUM_BIN="+s.locum, "LOCUM_WORK="+dir, "LOCUM_TASK="+string(taskJSON),
			"LOCUM_STEP="+step, "LOCUM_MODEL="+s.model)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "the host's %s step failed:\n%s", step, out)
		return string(out)
	}
	t.Logf("%s", host("refused"))

	r = s.locumIn(t, dir, home, "roles", "accept", "code", s.model, "--yes", "--no-screen")
	require.Equal(t, 0, r.exit, "roles accept:\n%s", r.stderr)

	before := s.chat.rec.Len()
	log := host("kept")
	t.Logf("%s", log)
	kept := strings.Contains(log, `"status":"OK"`)
	ok, vout := tk.verify(t, dir)
	assert.Equal(t, kept, ok, "the verify on the final file disagrees with the outcome:\n%s", vout)
	assert.Greater(t, s.chat.rec.Len(), before, "the call reached the real server")
	t.Logf("first delegation over MCP: kept=%v", kept)
}
