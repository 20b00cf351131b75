package packs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A step that edits a file its pack names inside a git directory is refused when the pack loads;
// one that only reads it is not an edit.
func TestWorkflowProblemsRefuseAnEditInAGitDirectory(t *testing.T) {
	for _, c := range []struct {
		file, mode string
		refused    bool
	}{
		{".git", "transform", true},
		{".git/config", "transform", true},
		{"./src/../.git/hooks/pre-commit", "transform", true},
		{"sub/.GIT/config", "transform", true},
		{"{{dir}}/.git/config", "transform", true},
		{".gitignore", "transform", false},
		{"{{dir}}/calc.go", "transform", false},
		{".git/config", "summarize", false},
	} {
		wf := Workflow{Params: map[string]Param{"dir": {}}, Steps: []WorkflowStep{{Name: "a", Mode: c.mode, With: map[string]string{"file": c.file}}}}
		if StepEdits(c.mode) {
			wf.Verify = "true"
		}
		problems := workflowProblems("p.json", map[string]Workflow{"w": wf})
		if !c.refused {
			assert.Empty(t, problems, c.file)
			continue
		}
		require.Len(t, problems, 1, c.file)
		assert.Equal(t, "/contributes/workflows/w/steps/0/with/file", problems[0].Pointer)
		assert.Contains(t, problems[0].Message, "is inside a git directory", c.file)
	}
}
