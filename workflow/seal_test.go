package workflow

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
)

func TestSealHoldsOnlyForWhatWasSealed(t *testing.T) {
	s := newSeal([]byte("0123456789abcdef0123456789abcdef"))
	it := ItemResult{Step: "fix", Index: 2, Item: "calc.go#F2", Status: "OK", Commit: "c0ffee", Outcome: "kept", Output: "digest"}
	got := s.item("RUN", it)
	assert.True(t, s.ok(got, s.itemFields("RUN", it)...))
	tests := []struct {
		name   string
		change func(*ItemResult)
		runID  string
	}{
		{"another run", func(*ItemResult) {}, "OTHER"},
		{"another step", func(i *ItemResult) { i.Step = "other" }, "RUN"},
		{"another index", func(i *ItemResult) { i.Index = 3 }, "RUN"},
		{"another item", func(i *ItemResult) { i.Item = "calc.go#F3" }, "RUN"},
		{"another commit", func(i *ItemResult) { i.Commit = "bad" }, "RUN"},
		{"no commit", func(i *ItemResult) { i.Commit = "" }, "RUN"},
		{"another outcome", func(i *ItemResult) { i.Outcome = "kept \x1b[2J" }, "RUN"},
		{"another output", func(i *ItemResult) { i.Output = "INJECTED" }, "RUN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := it
			tt.change(&changed)
			assert.False(t, s.ok(got, s.itemFields(tt.runID, changed)...))
		})
	}
	other := newSeal([]byte("another key of the same length!!"))
	assert.False(t, other.ok(got, other.itemFields("RUN", it)...), "another operator's key")
	assert.False(t, seal{}.ok("", seal{}.itemFields("RUN", it)...), "no key seals nothing")
	assert.Empty(t, s.item("RUN", ItemResult{Status: "RED"}), "a red item is run again, never sealed")

	params := map[string]string{"dir": "calc"}
	run := s.run("RUN", "fix-all", "def1", "abc", params)
	assert.True(t, s.ok(run, s.runFields("RUN", "fix-all", "def1", "abc", map[string]string{"dir": "calc"})...))
	assert.False(t, s.ok(run, s.runFields("RUN", "fix-all", "def1", "abd", params)...), "another base")
	assert.False(t, s.ok(run, s.runFields("RUN", "fix-all", "def1", "abc", map[string]string{"dir": "calc", "x": ""})...), "another parameter")
	assert.False(t, s.ok(run, s.runFields("RUN", "fix-all", "def2", "abc", params)...), "another definition")
	assert.False(t, s.ok(run, s.runFields("RUN", "fix-all", "", "abc", params)...), "no definition")

	// A seal of the layout before the definition was sealed, over the same key, holds for nothing.
	old := func(fields ...any) string {
		data, err := json.Marshal(append([]any{"locum workflow resume 1"}, fields...))
		require.NoError(t, err)
		m := hmac.New(sha256.New, s.Key)
		m.Write(data)
		return hex.EncodeToString(m.Sum(nil))
	}
	assert.False(t, s.ok(old("workflow", "RUN", "fix-all", "abc", params), s.runFields("RUN", "fix-all", "", "abc", params)...))
	assert.False(t, s.ok(old(s.itemFields("RUN", it)...), s.itemFields("RUN", it)...))
}

func TestDefinitionCoversTheWholeWorkflow(t *testing.T) {
	def := func(s string) *string { return &s }
	base := func() packs.Workflow {
		return packs.Workflow{
			Params: map[string]packs.Param{"dir": {Doc: "the package"}, "check": {Default: def("go test ./...")}},
			Steps: []packs.WorkflowStep{
				{Name: "sum", Mode: "summarize", With: map[string]string{"file": "README.md"}},
				{Name: "fix", Mode: "transform", ForEach: &packs.ForEach{Symbols: "{{dir}}/*.go"},
					With: map[string]string{"task": "use {{steps.sum.output}}", "verify": "grep -q done {{file}}"}},
			},
			Verify: "{{check}}",
		}
	}
	want, err := definition(base())
	require.NoError(t, err)
	for range 20 {
		again, err := definition(base())
		require.NoError(t, err)
		require.Equal(t, want, again, "the same definition, whatever the maps' order")
	}
	for _, c := range []struct {
		name   string
		change func(*packs.Workflow)
	}{
		{"the final verify", func(w *packs.Workflow) { w.Verify = "{{check}} && true" }},
		{"a step's verify", func(w *packs.Workflow) { w.Steps[1].With["verify"] = "true" }},
		{"a step's task", func(w *packs.Workflow) { w.Steps[1].With["task"] = "other" }},
		{"a step's input added", func(w *packs.Workflow) { w.Steps[0].With["lines"] = "1-9" }},
		{"a step's list", func(w *packs.Workflow) { w.Steps[1].ForEach = &packs.ForEach{Files: "{{dir}}/*.go"} }},
		{"a step's mode", func(w *packs.Workflow) { w.Steps[0].Mode = "dedup" }},
		{"a step's name", func(w *packs.Workflow) { w.Steps[0].Name = "digest" }},
		{"the steps' order", func(w *packs.Workflow) { w.Steps[0], w.Steps[1] = w.Steps[1], w.Steps[0] }},
		{"a step added", func(w *packs.Workflow) { w.Steps = append(w.Steps, packs.WorkflowStep{Name: "more", Mode: "dedup"}) }},
		{"a parameter's default", func(w *packs.Workflow) { w.Params["check"] = packs.Param{Default: def("true")} }},
		{"a default given to a parameter", func(w *packs.Workflow) { w.Params["dir"] = packs.Param{Doc: "the package", Default: def("")} }},
		{"a parameter declared", func(w *packs.Workflow) { w.Params["extra"] = packs.Param{} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			wf := base()
			c.change(&wf)
			got, err := definition(wf)
			require.NoError(t, err)
			assert.NotEqual(t, want, got)
		})
	}
}

func TestItemInputsFingerprint(t *testing.T) {
	newRun := func() *run {
		return &run{params: map[string]string{"dir": "calc", "check": "go test ./..."}, headTree: "tree1",
			wf: packs.Workflow{Verify: "{{check}} && grep -q done {{file}}"}}
	}
	w := newRun()
	st := packs.WorkflowStep{Name: "fix", Mode: "transform", With: map[string]string{"task": "use {{steps.sum.output}}"}}
	it := Item{Key: "calc/a.go#A", Vars: map[string]string{"file": "calc/a.go", "symbol": "A"}}
	vars := map[string]string{"dir": "calc", "check": "go test ./...", "steps.sum.output": "digest one"}
	in, err := w.inputs(st, it, vars)
	require.NoError(t, err)
	// The parameter goes in as the caller wrote it, the item's file as one quoted word.
	assert.Equal(t, "go test ./... && grep -q done 'calc/a.go'", in.verify)

	tests := []struct {
		name   string
		change func(w *run, st *packs.WorkflowStep, vars map[string]string)
	}{
		{"an earlier step's output", func(_ *run, _ *packs.WorkflowStep, v map[string]string) { v["steps.sum.output"] = "digest two" }},
		{"the tree the item starts at", func(w *run, _ *packs.WorkflowStep, _ map[string]string) { w.headTree = "tree2" }},
		{"the step's task", func(_ *run, st *packs.WorkflowStep, _ map[string]string) {
			st.With = map[string]string{"task": "other"}
		}},
		{"the workflow's verify", func(w *run, _ *packs.WorkflowStep, _ map[string]string) { w.wf.Verify = "true" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w2, st2, v2 := newRun(), st, maps.Clone(vars)
			tt.change(w2, &st2, v2)
			other, err := w2.inputs(st2, it, v2)
			require.NoError(t, err)
			assert.NotEqual(t, in.fingerprint, other.fingerprint)
		})
	}
	again, err := w.inputs(st, it, maps.Clone(vars))
	require.NoError(t, err)
	assert.Equal(t, in.fingerprint, again.fingerprint)

	// A model's digest in a verify is one quoted word, never shell.
	st.With = map[string]string{"verify": "grep -qF {{steps.sum.output}} {{file}}"}
	vars["steps.sum.output"] = "x' $(id >> pwned) '"
	in, err = w.inputs(st, it, vars)
	require.NoError(t, err)
	assert.Equal(t, `grep -qF 'x'\'' $(id >> pwned) '\''' 'calc/a.go'`, in.with["verify"])
}
