package newmode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/mcp"
	"github.com/locumdev/locum/mcp/mcptest"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
	locumschema "github.com/locumdev/locum/schema"
)

// linesMode is a mode of this test's own, as a mode's package would declare it: its settings, the
// inputs a workflow step gives it and how the step builds its job from them, and its tool.
// Nothing else in the tree names it.
var linesMode = engine.Mode{Name: "test-lines", Model: engine.NoModel, Settings: []packs.Key{packs.MaxAttempts},
	Outcome: func(r *engine.Result) string {
		d, ok := r.Details.(*linesDetails)
		if !ok {
			return ""
		}
		return fmt.Sprintf("%s: %d lines in %s", r.Mode, d.Lines, d.File)
	},
	StepInputs: []packs.StepInput{
		{Name: "file", Doc: "the file to count, from the repository root", Item: "file", Kind: packs.InputPath},
		{Name: "label", Doc: "what the output calls the count"},
	},
	Step: func(it engine.StepItem) (engine.StepJob, error) {
		j := &linesJob{file: it.Input("file")}
		label := it.Input("label")
		return engine.StepJob{Job: j, Output: func() string { return fmt.Sprintf("%s: %d lines", label, j.lines) }}, nil
	},
	Tool: &engine.Tool{
		Description: "Count the lines of a file.",
		Args:        []engine.ToolArg{{Name: "file", Required: true}},
		Job: func(a engine.ToolArgs) (engine.ToolJob, error) {
			j := &linesJob{file: a.String("file")}
			return engine.ToolJob{Job: j, File: j.file}, nil
		},
	},
}

func init() { engine.RegisterMode(linesMode) }

// linesDetails are the mode's part of a run's result, as a mode's package declares them.
type linesDetails struct {
	File        string `json:"file"`
	Lines       int    `json:"lines"`
	MaxAttempts int64  `json:"max_attempts"`
}

// linesJob counts a file's lines.
type linesJob struct {
	file  string
	lines int
}

func (*linesJob) Mode() engine.Mode { return linesMode }

// Paths holds a call's file inside the repository, as the job layer does for every mode.
func (j *linesJob) Paths() []engine.NamedPath { return []engine.NamedPath{{Arg: "file", Path: j.file}} }

func (j *linesJob) Steps(p engine.Place) []engine.Step {
	return []engine.Step{{Name: "count", Run: func(_ context.Context, r *engine.Run) error {
		data, err := os.ReadFile(filepath.Join(p.Cwd, j.file))
		if err != nil {
			return engine.BadInputf("{file}: %v", err)
		}
		j.lines = bytes.Count(data, []byte("\n"))
		r.SetDetails(&linesDetails{File: j.file, Lines: j.lines, MaxAttempts: r.Spec.Settings.Int(packs.MaxAttempts)})
		return nil
	}}}
}

func TestAModeIsServedAsAToolAndRunAsAStep(t *testing.T) {
	llm := scripted.New()
	t.Cleanup(llm.Close)
	require.NoError(t, llm.Mimic("lmstudio"))
	root := t.TempDir()
	gittest.Init(t, root)
	files := map[string]string{
		"a.txt":                 "one\ntwo\nthree\n",
		"b.txt":                 "one\n",
		".locum/workspace.json": `{"packs":["tools/local-llm","tools/lines"]}`,
		".locum/packs/tools/lines/pack.json": `{"portulan":{"pack":"1.2"},"name":"lines","category":"tools","contributes":{` +
			`"modes":{"test-lines":{"max_attempts":3}},` +
			`"workflows":{"count":{"steps":[{"name":"count","mode":"test-lines","for_each":{"files":"*.txt"},"with":{"label":"{{item}}"}}]}}}}`,
	}
	for name, text := range files {
		path := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	gittest.CommitAll(t, root)
	env := map[string]string{"LOCUM_BASE_URL": llm.BaseURL(), "HOME": t.TempDir()}
	session, ctx := mcptest.Connect(t, mcp.Options{Dir: root, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Version: "test"}, nil)

	// Listed, its input schema its own argument and the setting it registered, as declared.
	list, err := session.ListTools(ctx, nil)
	require.NoError(t, err)
	var tool *sdk.Tool
	for _, lt := range list.Tools {
		if lt.Name == "test_lines" {
			tool = lt
		}
	}
	require.NotNil(t, tool, "the server lists the mode's tool")
	assert.Equal(t, "Count the lines of a file.", tool.Description)
	assert.True(t, tool.Annotations.ReadOnlyHint)
	schema := tool.InputSchema.(map[string]any)
	assert.Equal(t, map[string]any{
		"file":         map[string]any{"type": "string"},
		"max_attempts": map[string]any{"type": "integer", "description": "1 to 20"},
	}, schema["properties"], "its own argument and its setting; no endpoint for a mode that asks no model")
	assert.Equal(t, []any{"file"}, schema["required"])

	call := func(name string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
		t.Helper()
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		var out map[string]any
		if res.StructuredContent != nil {
			data, err := json.Marshal(res.StructuredContent)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &out))
		}
		return res, out
	}
	textOf := func(res *sdk.CallToolResult) string { return res.Content[0].(*sdk.TextContent).Text }

	// Callable, its setting resolved through the cascade with the call's argument on top.
	res, out := call("test_lines", map[string]any{"file": "a.txt", "max_attempts": 2})
	require.False(t, res.IsError, textOf(res))
	assert.Regexp(t, `^OK: test-lines: 3 lines in a\.txt`, textOf(res))
	assert.Equal(t, map[string]any{"file": "a.txt", "lines": 3.0, "max_attempts": 2.0}, out["details"])

	// A call may only narrow a rail: the pack's 3 attempts are the most it may ask.
	res, _ = call("test_lines", map[string]any{"file": "a.txt", "max_attempts": 5})
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(res), "a tool call may lower it, never raise it")
	// And its paths stay in the repository.
	res, _ = call("test_lines", map[string]any{"file": "../outside.txt"})
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(res), "outside the repository")

	// A workflow runs it as a step, each file an item of its own, with the inputs it declares.
	res, out = call("run", map[string]any{"workflow": "count"})
	require.False(t, res.IsError, textOf(res))
	items := out["details"].(map[string]any)["items"].([]any)
	require.Len(t, items, 2)
	var outputs []any
	for _, it := range items {
		assert.Equal(t, "OK", it.(map[string]any)["status"])
		outputs = append(outputs, it.(map[string]any)["output"])
	}
	assert.ElementsMatch(t, []any{"a.txt: 3 lines", "b.txt: 1 lines"}, outputs)

	// A step giving it a key it does not declare is refused as its pack loads, naming those it
	// takes.
	bad := filepath.Join(t.TempDir(), "tools", "lines", "pack.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(bad), 0o755))
	require.NoError(t, os.WriteFile(bad, []byte(`{"portulan":{"pack":"1.2"},"name":"lines","category":"tools","contributes":{`+
		`"workflows":{"count":{"steps":[{"name":"count","mode":"test-lines","with":{"lable":"x"}}]}}}}`), 0o644))
	v, err := locumschema.New()
	require.NoError(t, err)
	_, err = packs.LoadFile(v, bad, "pack.json")
	var invalid *locumschema.InvalidError
	require.ErrorAs(t, err, &invalid)
	assert.Equal(t, `pack.json: /contributes/workflows/count/steps/0/with/lable: "lable" is not an input of mode test-lines, which takes file and label`, invalid.Problems[0].String())
}
