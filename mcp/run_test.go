package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/scripted"
)

// workflowPack declares a workflow that edits each function of calc.go.
const workflowPack = `{"portulan":{"pack":"1.2"},"name":"demo","category":"tools","contributes":{"workflows":{"fix":{` +
	`"params":{"file":{"doc":"the file"}},"steps":[{"name":"fix","mode":"transform","for_each":{"symbols":"{{file}}"},` +
	`"with":{"task":"make {{symbol}} return done","verify":"! grep -q todo-{{symbol}} {{file}}"}}],` +
	`"verify":"! grep -q todo calc.go"}}}}`

// The run tool runs a workflow as the CLI does: one call, each item a transform in a worktree of
// its own, a progress notification as each ends, the branch offered once the final verify passes,
// and the user's tree untouched.
func TestRunToolRunsAWorkflow(t *testing.T) {
	f := newFixture(t, true)
	src := "package calc\n\nfunc A() string {\n\treturn \"todo-A\"\n}\n\nfunc B() string {\n\treturn \"todo-B\"\n}\n"
	files := map[string]string{
		"calc.go":                           src,
		".locum/workspace.json":             `{"packs":["tools/local-llm","tools/demo"]}`,
		".locum/packs/tools/demo/pack.json": workflowPack,
	}
	for name, text := range files {
		path := filepath.Join(f.root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	gittest.CommitAll(t, f.root)
	var replies []scripted.Reply
	for _, name := range []string{"A", "B"} {
		answer := fmt.Sprintf("```go\nfunc %s() string {\n\treturn \"done\"\n}\n```", name)
		replies = append(replies, scripted.Reply{When: "declaration of " + name + ",", StreamAnswer: &answer})
	}
	f.llm.On("POST", "/v1/chat/completions", replies...)

	// Two declarations of one file: done directly, one read and one edit; delegated, the call,
	// the review and the accept. Its break-even says it loses, before any request.
	args := map[string]any{"workflow": "fix", "params": map[string]any{"file": "calc.go"}, "model": "qwen3-coder-30b", "host_turns_left": 3}
	res, err := f.call(t, context.Background(), "run", args, "tok-refused")
	require.NoError(t, err)
	require.True(t, res.IsError, text(res))
	assert.Contains(t, text(res), "this workflow is expected to cost you more than doing it yourself: 2 items over 1 file")
	assert.Empty(t, f.llm.RequestsTo("/v1/chat/completions"), "nothing was sent")

	// The operator may delegate it anyway.
	f.env["LOCUM_DELEGATE_WHEN"] = "always"
	res, err = f.call(t, context.Background(), "run", args, "tok-run")
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Regexp(t, `^OK: workflow fix: 2 of 2 items green; the final verify passed on locum/run/\S+ \(2 kept\)`, text(res))
	assert.NotContains(t, text(res), "\n", "one line; the items are the structured content's")
	out := structured(t, res)
	details := out["details"].(map[string]any)
	assert.Equal(t, "completed", details["status"])
	assert.Len(t, details["items"], 2)
	f.waitProgress(t, "fix 1 OK calc.go#A")
	f.waitProgress(t, "fix 2 OK calc.go#B")

	// The host's turns weigh each item's result as the workflow's.
	for _, it := range details["items"].([]any) {
		id := it.(map[string]any)["run_id"].(string)
		journal, err := os.ReadFile(filepath.Join(f.root, ".git", "locum", "runs", id+".jsonl"))
		require.NoError(t, err)
		assert.Contains(t, string(journal), `{"key":"host_turns_left","value":"3","source":"argument host_turns_left"}`)
	}

	branch := details["branch"].(string)
	show, err := exec.Command("git", "-C", f.root, "show", branch+":calc.go").Output()
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(show), `return "done"`))
	assert.Equal(t, src, f.file(t), "the user's tree is as it was")

	// A call names a model only where the operator allowed it; run refuses before any item.
	g := newFixture(t, false)
	res, err = g.call(t, context.Background(), "run", map[string]any{"workflow": "go-tidy", "params": map[string]any{"dir": "."}, "model": "qwen3-coder-30b"}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "never one a call names")
	assert.Empty(t, g.llm.RequestsTo("/v1/chat/completions"))

	// Exactly one of workflow and resume.
	res, err = g.call(t, context.Background(), "run", map[string]any{}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "give workflow (with its params) or resume")
}
