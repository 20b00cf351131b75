//go:build realmodel

package realmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/bench"
	"github.com/locumdev/locum/internal/gittest"
)

// smallModel is the name the second llama-server serves SmolLM2-135M-Instruct under (--alias).
const smallModel = "smollm2-135m-instruct"

// benchTasks is a bench folder's bench.json over workflowSrc at the repository's one commit: each
// function fixed as its doc comment says, judged by the formatter and a text match, so a cell
// judges the model's edit rather than a compile in a cold sandbox cache.
const benchTasks = `{"bench": "1", "tasks": [
  {"id": "double", "commit": "@HEAD@", "file": "calc.go", "symbol": "Double", "task": "Make Double do what its doc comment says. Keep its name and signature.", "verify": "test -z \"$(gofmt -l calc.go)\" && bash check.sh Double"},
  {"id": "square", "commit": "@HEAD@", "file": "calc.go", "symbol": "Square", "task": "Make Square do what its doc comment says. Keep its name and signature.", "verify": "test -z \"$(gofmt -l calc.go)\" && bash check.sh Square"},
  {"id": "negate", "commit": "@HEAD@", "file": "calc.go", "symbol": "Negate", "task": "Make Negate do what its doc comment says. Keep its name and signature.", "verify": "test -z \"$(gofmt -l calc.go)\" && bash check.sh Negate"}
]}`

// TestBenchSeparatesTheRealModels runs locum bench over a bench folder of three small tasks on
// both real models, each served by a llama-server of its own on another loopback port: every cell
// ends in an outcome, each row names the weights its server describes, Qwen2.5-Coder-1.5B keeps
// more than SmolLM2-135M, and the person's tree is as it was. It prints the table and its time.
func TestBenchSeparatesTheRealModels(t *testing.T) {
	s := shared
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	small, err := startLlamaServer(ctx, s.man.LlamaServer.Path, filepath.Join(s.logs, "llama-server-small.log"),
		"--model", s.man.SmallChatModel.Path, "--jinja", "--ctx-size", "4096", "--parallel", "1", "--alias", smallModel)
	require.NoError(t, err)
	defer small.Stop()
	t.Logf("realmodel: %s ready in %s on %s (%s)", s.man.SmallChatModel.Name, time.Since(start).Round(time.Millisecond), small.Direct, s.man.SmallChatModel.Path)

	dir, home := t.TempDir(), t.TempDir()
	for name, text := range map[string]string{"calc.go": workflowSrc, "check.sh": workflowCheck} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	gittest.Init(t, dir)
	gittest.CommitAll(t, dir)
	head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	folder := filepath.Join(t.TempDir(), "tasks")
	require.NoError(t, os.MkdirAll(folder, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(folder, bench.FolderFile), []byte(strings.ReplaceAll(benchTasks, "@HEAD@", head)), 0o644))

	// Replies and time bounded: a function body is a few lines, and a model that rambles past
	// them has failed its task whatever it says next.
	env := append(s.env(home), "LOCUM_MAX_OUTPUT_TOKENS=256", "LOCUM_TIMEOUT=2m", "LOCUM_MAX_ATTEMPTS=2")
	start = time.Now()
	r := s.locumEnv(t, 12*time.Minute, dir, env, "bench", "--models", s.model+","+smallModel, "--tasks", folder,
		"--servers", s.chat.BaseURL()+","+small.BaseURL(), "--json")
	elapsed := time.Since(start)
	require.Equal(t, 0, r.exit, "a bench whose cells all ended exits 0; stderr:\n%s", r.stderr)
	require.NotNil(t, r.result, "no result object; stderr:\n%s", r.stderr)
	raw, err := json.Marshal(r.result["details"])
	require.NoError(t, err)
	var d bench.Details
	require.NoError(t, json.Unmarshal(raw, &d))
	require.Equal(t, bench.StatusCompleted, d.Status)
	require.Len(t, d.Cells, 6, "three tasks on two models")
	require.Len(t, d.Rows, 2)

	var table bytes.Buffer
	require.NoError(t, bench.WriteTable(&table, d.Rows, true))
	t.Logf("realmodel: locum bench --models %s,%s --tasks DIR --servers QWEN,SMOL in %s on %d cores:", s.model, smallModel, elapsed.Round(time.Second), runtime.NumCPU())
	for _, line := range strings.Split(strings.TrimSpace(table.String()), "\n") {
		t.Logf("realmodel: %s", line)
	}
	for _, c := range d.Cells {
		t.Logf("realmodel: cell %s on %s: %s %s (%d ms)", c.Task, c.Model, c.Status, c.Outcome, c.WallMs)
		assert.Contains(t, []string{"OK", "RED", "REFUSED", "ERROR"}, c.Status)
	}
	qwen, smol := d.Rows[0], d.Rows[1]
	require.Equal(t, s.model, qwen.Model)
	require.Equal(t, smallModel, smol.Model)
	for _, row := range d.Rows {
		assert.Contains(t, row.Weights, ".gguf", "the row names the weights as llama-server describes them")
		assert.Equal(t, 3, row.Cells)
		assert.NotNil(t, row.Rate, "llama-server reports its decode timings")
	}
	assert.Contains(t, qwen.Weights, filepath.Base(s.man.ChatModel.Path))
	assert.Contains(t, smol.Weights, filepath.Base(s.man.SmallChatModel.Path))
	assert.Greater(t, qwen.Kept, smol.Kept, "Qwen2.5-Coder-1.5B keeps more of the tasks than SmolLM2-135M")
	assert.Equal(t, workflowSrc, readFile(t, filepath.Join(dir, "calc.go")), "the bench touched the person's tree")
	assert.NotContains(t, gittest.Git(t, dir, "worktree", "list"), "locum", "a worktree was left")
}
