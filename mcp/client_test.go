package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/scripted"
)

// clientDir holds the acceptance tests with the official TypeScript client and the MCP Inspector,
// their package.json and lockfile; .ci/run installs them with npm ci.
const clientDir = "testdata/client"

// nodeClient returns node and a freshly built locum, or skips when node is not installed. Where
// node is, the packages must be too in CI; elsewhere the test says how to install them.
func nodeClient(t *testing.T) (node, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds locum and runs node")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the official-client acceptance tests need node 20 or later (CI has it)")
	}
	if _, err := os.Stat(filepath.Join(clientDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the MCP client packages are not installed: .ci/run runs npm ci --prefix mcp/%s first", clientDir)
		}
		t.Skipf("the MCP client packages are not installed: run npm ci --prefix mcp/%s", clientDir)
	}
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "locum-mcp-test-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		built.bin = filepath.Join(dir, "locum")
		out, err := exec.Command("go", "build", "-o", built.bin, "github.com/locumdev/locum/cmd/locum").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("building locum: %v\n%s", err, out)
		}
	})
	require.NoError(t, built.err)
	return node, built.bin
}

// built is the locum binary the node tests share, built once per test process.
var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// sub is the file the official client's agent task changes: Sub adds until the task is done.
const sub = "package calc\n\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"

// TestOfficialClient drives a built locum mcp over stdio with the official TypeScript MCP client:
// the tools and their schemas, status, a transform kept, red and cancelled, a role refusal,
// progress notifications and runs_show; an agent task committed on its branch, and one refused.
func TestOfficialClient(t *testing.T) {
	node, bin := nodeClient(t)
	tmp := t.TempDir()
	work := filepath.Join(tmp, "work")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "orig"), 0o755))
	gittest.Init(t, work)
	for _, p := range []string{"calc.go", "orig/calc.go"} {
		require.NoError(t, os.WriteFile(filepath.Join(work, p), []byte(calc), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(work, "sub.go"), []byte(sub), 0o644))
	// The agent's branch starts at a commit.
	gittest.CommitAll(t, work)

	llm := scripted.New()
	defer llm.Close()
	require.NoError(t, llm.Mimic("lmstudio"))
	// The agent's turns are told apart by what the conversation holds so far, the latest first;
	// every other request (the transforms, the digest) gets the streamed edit.
	llm.On("POST", "/v1/chat/completions",
		scripted.Reply{When: "edited sub.go at line", Calls: []scripted.Call{{Name: "finish", Arguments: json.RawMessage(`{"summary":"Sub subtracts"}`)}}},
		scripted.Reply{When: "sub.go, lines 1-", Calls: []scripted.Call{{Name: "edit_file", Arguments: json.RawMessage(`{"path":"sub.go","search":"return a + b","replace":"return a - b"}`)}}},
		scripted.Reply{When: "make Sub subtract", Calls: []scripted.Call{{Name: "read_file", Arguments: json.RawMessage(`{"path":"sub.go"}`)}}},
		scripted.Reply{StreamAnswer: &goodEdit})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	script, err := filepath.Abs(filepath.Join(clientDir, "client.test.mjs"))
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", script)
	cmd.Dir = clientDir
	tools, err := json.Marshal(servedTools)
	require.NoError(t, err)
	cmd.Env = append(os.Environ(), "LOCUM_BIN="+bin, "LOCUM_WORK="+work, "LOCUM_BASE_URL="+llm.BaseURL(), "HOME="+tmp, "LOCUM_TOOLS="+string(tools))
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	require.NoError(t, err, "the official MCP client's checks failed")
}

// TestInspectorListsTools runs the MCP Inspector in CLI mode against locum mcp: it lists the tools
// without error. The Inspector's v2 wants node 22.19 or later; this is the CLI of its v1
// (@modelcontextprotocol/inspector-cli), which runs on node 20.
func TestInspectorListsTools(t *testing.T) {
	node, bin := nodeClient(t)
	inspector, err := filepath.Abs(filepath.Join(clientDir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "cli.js"))
	require.NoError(t, err)
	if _, err := os.Stat(inspector); err != nil {
		t.Fatalf("the MCP Inspector is not installed: run npm ci --prefix mcp/%s", clientDir)
	}
	// inspector-cli 1.0.3 finds its own package.json only when ../package.json exists from the
	// directory it runs in, so the repository sits one level below one.
	tmp := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "package.json"), []byte("{}\n"), 0o644))
	work := filepath.Join(tmp, "repo")
	gittest.Init(t, work)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, inspector, "--cli", bin, "mcp", "--method", "tools/list")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HOME="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "the Inspector failed: %s", stderr.String())
	var listed struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(out, &listed), "%s", out)
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
		assert.Equal(t, "object", tool.InputSchema["type"], tool.Name)
	}
	assert.ElementsMatch(t, servedTools, names)
}
