package packs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandTemplates(t *testing.T) {
	vars := map[string]string{"dir": "pkg", "steps.d.output": "- x\n"}
	for _, c := range []struct {
		in, want, missing string
	}{
		{"{{dir}}/*.go", "pkg/*.go", ""},
		{"{{ dir }}", "pkg", ""},
		{"use: {{steps.d.output}}", "use: - x\n", ""},
		{"no template", "no template", ""},
		{"{{nope}}", "", "nope"},
		{"{{dir}} and {{nope}}", "", "nope"},
	} {
		got, err := Expand(c.in, vars)
		if c.missing != "" {
			var te *TemplateError
			require.ErrorAs(t, err, &te, c.in)
			assert.Equal(t, c.missing, te.Name)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

func TestWorkflowProblems(t *testing.T) {
	// A setting input a template fills is judged when the item runs, with the value given.
	ok := Workflow{Params: map[string]Param{"dir": {}, "guard": {}}, Verify: "go test ./{{dir}}", Steps: []WorkflowStep{
		{Name: "d", Mode: "summarize", ForEach: &ForEach{Files: "{{dir}}/*.md"}, With: map[string]string{"file": "{{file}}"}},
		{Name: "t", Mode: "transform", ForEach: &ForEach{Symbols: "{{dir}}/*.go"}, With: map[string]string{"task": "{{symbol}}: {{steps.d.output}}", "edit_guard": "{{guard}}"}},
	}}
	assert.Empty(t, workflowProblems("p.json", map[string]Workflow{"w": ok}))
	// A parameter may sit in quotes; an escaped quote opens none.
	quotedParam := Workflow{Params: map[string]Param{"pat": {}}, Verify: `grep -q "{{pat}}" x && grep -q \' {{file}} y`, Steps: []WorkflowStep{
		{Name: "t", Mode: "transform", ForEach: &ForEach{Files: "*.go"}, With: map[string]string{"verify": `grep -q "{{pat}}" {{file}}`}}}}
	problems := workflowProblems("p.json", map[string]Workflow{"w": quotedParam})
	require.Len(t, problems, 1, "%v", problems)
	assert.Contains(t, problems[0].Message, "{{file}} is not a parameter", "only the final verify's item, which it cannot have")

	ptr := func(s string) *string { return &s }
	for _, c := range []struct {
		name string
		wf   Workflow
		want string
	}{
		{"a step named twice", Workflow{Steps: []WorkflowStep{{Name: "a", Mode: "dedup"}, {Name: "a", Mode: "dedup"}}},
			`/contributes/workflows/w/steps/1/name: step name "a" is used twice`},
		{"an unknown parameter", Workflow{Steps: []WorkflowStep{{Name: "a", Mode: "dedup", With: map[string]string{"dir": "{{folder}}"}}}},
			`/contributes/workflows/w/steps/0/with/dir: {{folder}} is not a parameter`},
		{"an item outside a for_each", Workflow{Steps: []WorkflowStep{{Name: "a", Mode: "transform", With: map[string]string{"task": "{{symbol}}"}}}},
			"{{symbol}} is not"},
		{"a later step's output", Workflow{Steps: []WorkflowStep{
			{Name: "a", Mode: "transform", With: map[string]string{"task": "{{steps.b.output}}"}}, {Name: "b", Mode: "summarize"}}},
			"{{steps.b.output}} is not"},
		{"a line in a symbols step", Workflow{Steps: []WorkflowStep{{Name: "a", Mode: "transform", ForEach: &ForEach{Symbols: "*.go"}, With: map[string]string{"task": "{{line}}"}}}},
			"{{line}} is not"},
		{"the item in the final verify", Workflow{Verify: "{{file}}", Steps: []WorkflowStep{{Name: "a", Mode: "transform", ForEach: &ForEach{Files: "*.go"}}}},
			"/contributes/workflows/w/verify: {{file}} is not"},
		{"an output inside double quotes in a verify", Workflow{Verify: "true", Steps: []WorkflowStep{{Name: "d", Mode: "summarize"},
			{Name: "a", Mode: "transform", With: map[string]string{"verify": `echo "note: {{steps.d.output}}"; true`}}}},
			"/contributes/workflows/w/steps/1/with/verify: {{steps.d.output}} is inside double quotes"},
		{"a file inside single quotes in a verify", Workflow{Verify: "grep -q x '{{file}}'", Steps: []WorkflowStep{{Name: "a", Mode: "transform", ForEach: &ForEach{Files: "*.go"}, With: map[string]string{"verify": "grep -q x '{{file}}'"}}}},
			"/contributes/workflows/w/steps/0/with/verify: {{file}} is inside single quotes"},
		{"an output in a here-document of a step's verify", Workflow{Verify: "true", Steps: []WorkflowStep{{Name: "d", Mode: "summarize"},
			{Name: "a", Mode: "transform", With: map[string]string{"verify": "cat <<EOF >notes\n{{steps.d.output}}\nEOF\ntrue"}}}},
			"/contributes/workflows/w/steps/1/with/verify: {{steps.d.output}} is in a here-document"},
		{"an output in a here-document of the final verify", Workflow{Verify: "cat <<EOF >notes\n{{steps.d.output}}\nEOF\ntrue", Steps: []WorkflowStep{{Name: "d", Mode: "summarize"},
			{Name: "a", Mode: "transform", With: map[string]string{"verify": "true"}}}},
			"/contributes/workflows/w/verify: {{steps.d.output}} is in a here-document"},
		{"an apostrophe in a comment before an output", Workflow{Verify: "true", Steps: []WorkflowStep{{Name: "d", Mode: "summarize"},
			{Name: "a", Mode: "transform", With: map[string]string{"verify": "# it's checked\ngrep -q x notes' {{steps.d.output}}'"}}}},
			"/contributes/workflows/w/steps/1/with/verify: {{steps.d.output}} is inside single quotes"},
		{"an item that the parameter's default puts inside quotes", Workflow{Params: map[string]Param{"open": {Default: ptr("grep -q '")}}, Verify: "true",
			Steps: []WorkflowStep{{Name: "a", Mode: "transform", ForEach: &ForEach{Files: "*.go"}, With: map[string]string{"verify": "{{open}} x {{file}}'"}}}},
			"/contributes/workflows/w/steps/0/with/verify: {{file}} is inside single quotes"},
		{"an edit with no verify", Workflow{Steps: []WorkflowStep{{Name: "a", Mode: "transform", ForEach: &ForEach{Files: "*.go"}}}},
			"/contributes/workflows/w: workflow w edits files (a transform step) but declares no verify"},
		{"a verify with no edit", Workflow{Verify: "false", Steps: []WorkflowStep{{Name: "a", Mode: "summarize", ForEach: &ForEach{Files: "*.md"}}}},
			"/contributes/workflows/w/verify: workflow w edits no file"},
		{"a key the step's mode does not declare", Workflow{Steps: []WorkflowStep{{Name: "a", Mode: "dedup", With: map[string]string{"dir": "notes", "task": "x"}}}},
			`/contributes/workflows/w/steps/0/with/task: "task" is not an input of mode dedup, which takes dir and glob`},
		{"a setting input's value written out", Workflow{Verify: "true", Steps: []WorkflowStep{{Name: "a", Mode: "transform", With: map[string]string{"edit_guard": "comment"}}}},
			`/contributes/workflows/w/steps/0/with/edit_guard: want one of span, signature, comments`},
		{"a path input of an edit inside a git directory", Workflow{Verify: "true", Steps: []WorkflowStep{{Name: "a", Mode: "transform", With: map[string]string{"file": ".git/config"}}}},
			`/contributes/workflows/w/steps/0/with/file: ".git/config" is inside a git directory`},
		{"a step's own output in the verify its items run", Workflow{Verify: "grep -q {{steps.a.output}} x", Steps: []WorkflowStep{{Name: "a", Mode: "transform", ForEach: &ForEach{Files: "*.go"}}}},
			"/contributes/workflows/w/verify: step a's items are judged by this verify"},
	} {
		t.Run(c.name, func(t *testing.T) {
			problems := workflowProblems("p.json", map[string]Workflow{"w": c.wf})
			require.NotEmpty(t, problems)
			assert.Contains(t, problems[0].Pointer+": "+problems[0].Message, c.want)
		})
	}
}
